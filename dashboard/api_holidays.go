package dashboard

// Municipal holidays (docs/holidays.md):
//
//	GET    /api/v1/holidays?municipality=lapa     every role: the decreed days ("" = every municipality)
//	GET    /api/v1/holidays/history?municipality= every role: the register's change log, oldest first
//	POST   /api/v1/admin/holidays                 admin: {"municipality","date"|"month_day","since","name","act","kind"}
//	DELETE /api/v1/admin/holidays/{id}?reason=…   admin: removes a decreed day (logged with the reason)
//
// A change is applied to the calendar every consumer reads (OnChange)
// before the answer; refusals answer in pt-BR through apiError: 400 with
// "problemas" (every problem at once), 403 for a role that may not, 404 for
// an unknown entry or municipality.

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/holidays"
)

// HolidayStore is what the holiday routes need; *holidaysdb.Store implements it.
type HolidayStore interface {
	List(ctx context.Context, municipality string) ([]holidays.Entry, error)
	Add(ctx context.Context, set holidays.Codes, e holidays.Entry, by string, now time.Time) (holidays.Entry, error)
	Remove(ctx context.Context, municipality string, id int64, by, reason string, now time.Time) (holidays.Entry, error)
	History(ctx context.Context, municipality string) ([]holidays.Change, error)
}

// HolidaysOptions configure the holiday routes.
type HolidaysOptions struct {
	Store HolidayStore
	Codes *codes.Set
	// OnChange applies the register to the calendar after a change
	// (holidays.Apply on Codes); an error is logged, the change stays
	// stored and the service's watch applies it later.
	OnChange func(ctx context.Context) error
	Now      func() time.Time
	Log      *slog.Logger
}

// HolidaysAPI serves the holiday routes.
type HolidaysAPI struct{ o HolidaysOptions }

// NewHolidaysAPI returns the routes.
func NewHolidaysAPI(o HolidaysOptions) *HolidaysAPI {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &HolidaysAPI{o: o}
}

// HolidayView is an entry with its pt-BR texts.
type HolidayView struct {
	holidays.Entry
	When      string `json:"when"`       // "todo ano em 19/03, desde 02/05/2019", "07/12/2026"
	KindLabel string `json:"kind_label"` // "feriado", "ponto facultativo"
	Title     string `json:"municipality_title"`
}

func (h *HolidaysAPI) view(e holidays.Entry) HolidayView {
	v := HolidayView{Entry: e, When: e.When(), KindLabel: holidays.KindLabel(e.Kind), Title: e.Municipality}
	if c, ok := h.o.Codes.Code(e.Municipality); ok {
		v.Title = c.Municipality + "/" + c.State
	}
	return v
}

func (h *HolidaysAPI) ready(w http.ResponseWriter) bool {
	if h.o.Store == nil || h.o.Codes == nil {
		apiError(w, http.StatusServiceUnavailable, "o cadastro de feriados municipais não está disponível neste servidor")
		return false
	}
	return true
}

// municipality reads ?municipality= ("" = all); false (answered 404) when
// the set does not know it.
func (h *HolidaysAPI) municipality(w http.ResponseWriter, r *http.Request) (string, bool) {
	m := r.URL.Query().Get("municipality")
	if m == "" {
		return "", true
	}
	c, err := h.o.Codes.Resolve(m)
	if err != nil {
		apiError(w, http.StatusNotFound, err.Error())
		return "", false
	}
	return c.ID, true
}

func (h *HolidaysAPI) internal(w http.ResponseWriter, err error) {
	serverError(w, h.o.Log, "feriados municipais", err)
}

func (h *HolidaysAPI) list(w http.ResponseWriter, r *http.Request) {
	if !h.ready(w) {
		return
	}
	m, ok := h.municipality(w, r)
	if !ok {
		return
	}
	es, err := h.o.Store.List(r.Context(), m)
	if err != nil {
		h.internal(w, err)
		return
	}
	out := make([]HolidayView, len(es))
	for i, e := range es {
		out[i] = h.view(e)
	}
	apiJSON(w, http.StatusOK, map[string]any{"holidays": out, "municipalities": h.o.Codes.IDs()})
}

func (h *HolidaysAPI) history(w http.ResponseWriter, r *http.Request) {
	if !h.ready(w) {
		return
	}
	m, ok := h.municipality(w, r)
	if !ok {
		return
	}
	hs, err := h.o.Store.History(r.Context(), m)
	if err != nil {
		h.internal(w, err)
		return
	}
	apiJSON(w, http.StatusOK, map[string]any{"history": hs})
}

type addHolidayBody struct {
	Municipality string `json:"municipality"`
	Date         string `json:"date"`
	MonthDay     string `json:"month_day"`
	Since        string `json:"since"`
	Name         string `json:"name"`
	Act          string `json:"act"`
	Kind         string `json:"kind"`
}

func (h *HolidaysAPI) add(w http.ResponseWriter, r *http.Request) {
	if !h.ready(w) {
		return
	}
	var b addHolidayBody
	if err := readJSON(w, r, 16<<10, jsonBody, &b); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	by := sessionUser(r).Name
	e, err := h.o.Store.Add(r.Context(), h.o.Codes, holidays.Entry{Municipality: b.Municipality, Date: b.Date, MonthDay: b.MonthDay,
		Since: b.Since, Name: b.Name, Act: b.Act, Kind: b.Kind}, by, h.o.Now())
	var ve *holidays.ValidationError
	switch {
	case errors.As(err, &ve):
		problems(w, ve.Problems)
		return
	case err != nil:
		h.internal(w, err)
		return
	}
	h.o.Log.Info("feriados municipais: dia cadastrado", "id", e.ID, "municipio", e.Municipality, "dia", e.When(),
		"nome", e.Name, "tipo", holidays.KindLabel(e.Kind), "ato", e.Act, "por", by)
	h.changed(r.Context())
	apiJSON(w, http.StatusCreated, h.view(e))
}

func (h *HolidaysAPI) remove(w http.ResponseWriter, r *http.Request) {
	if !h.ready(w) {
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		apiError(w, http.StatusBadRequest, "número do feriado inválido: "+r.PathValue("id")+" (use o id da lista)")
		return
	}
	by := sessionUser(r).Name
	e, err := h.o.Store.Remove(r.Context(), "", id, by, r.URL.Query().Get("reason"), h.o.Now())
	switch {
	case holidays.IsNotFound(err):
		apiError(w, http.StatusNotFound, "feriado nº "+strconv.FormatInt(id, 10)+" não está cadastrado")
		return
	case err != nil:
		h.internal(w, err)
		return
	}
	h.o.Log.Info("feriados municipais: dia removido", "id", e.ID, "municipio", e.Municipality, "dia", e.When(),
		"nome", e.Name, "motivo", r.URL.Query().Get("reason"), "por", by)
	h.changed(r.Context())
	apiJSON(w, http.StatusOK, h.view(e))
}

func (h *HolidaysAPI) changed(ctx context.Context) {
	if h.o.OnChange == nil {
		return
	}
	if err := h.o.OnChange(ctx); err != nil {
		h.o.Log.Error("feriados municipais: a alteração está gravada mas não foi aplicada ao calendário; nova tentativa em instantes", "erro", err)
	}
}

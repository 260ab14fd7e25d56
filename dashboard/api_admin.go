package dashboard

// Administration routes (docs/users.md):
//
//	GET   /api/v1/admin/users              admin: every user with their profile
//	POST  /api/v1/admin/users              admin: {"name","role","password","full_name","matricula","email","phone"}
//	PATCH /api/v1/admin/users/{name}       admin: any of {"role","full_name","matricula","email","phone","disabled","password"}
//	GET   /api/v1/units                    every role: each code's monetary units, their periods and the value in force today
//	GET   /api/v1/units/{code}/history     every role: the change log of a code's units (?unit=VRM for one)
//	POST  /api/v1/admin/units              admin: {"code","unit","from","to","value_brl","act"}: a new period of validity
//
// Refusals answer in pt-BR through apiError: 400 with "problemas" (every
// problem of the form), 403 for a role that may not, 404 for an unknown
// user, 409 for a login already taken or the last active admin.

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/monetary"
	"github.com/sossego/sossego/internal/tz"
	"github.com/sossego/sossego/internal/users"
)

// AdminUsers is what the user routes need; *usersdb.Store implements it.
type AdminUsers interface {
	List(ctx context.Context) ([]users.User, error)
	Create(ctx context.Context, n users.NewUser, now time.Time) (users.User, error)
	Update(ctx context.Context, name string, ch users.Change) (users.User, error)
}

// UnitStore is what the monetary unit routes need; *monetarydb.Store implements it.
type UnitStore interface {
	Periods(ctx context.Context, codeID string) ([]monetary.Period, error)
	Set(ctx context.Context, set monetary.Codes, p monetary.Period, by string, now time.Time) (monetary.Period, error)
	History(ctx context.Context, codeID, unit string) ([]monetary.Change, error)
}

// AdminOptions configure the administration routes.
type AdminOptions struct {
	Users AdminUsers // nil: the user routes answer 503
	Units UnitStore  // nil: the unit routes answer 503
	Codes *codes.Set
	Now   func() time.Time
	Log   *slog.Logger
}

// AdminAPI serves the administration routes.
type AdminAPI struct{ o AdminOptions }

// NewAdminAPI returns the routes.
func NewAdminAPI(o AdminOptions) *AdminAPI {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &AdminAPI{o: o}
}

func (a *AdminAPI) internal(w http.ResponseWriter, err error) {
	serverError(w, a.o.Log, "administração", err)
}

func problems(w http.ResponseWriter, list []string) {
	apiJSON(w, http.StatusBadRequest, map[string]any{"erro": "corrija: " + strings.Join(list, "; "), "problemas": list})
}

// userError answers a users store error; false when err is nil.
func (a *AdminAPI) userError(w http.ResponseWriter, name string, err error) bool {
	var ve *users.ValidationError
	switch {
	case err == nil:
		return false
	case errors.As(err, &ve):
		problems(w, ve.Problems)
	case errors.Is(err, users.ErrExists):
		apiError(w, http.StatusConflict, "o usuário "+name+" já existe: escolha outro nome de login ou edite o existente")
	case errors.Is(err, users.ErrNotFound):
		apiError(w, http.StatusNotFound, "usuário desconhecido: "+name)
	case errors.Is(err, users.ErrLastAdmin):
		apiError(w, http.StatusConflict, name+" é o último administrador ativo: crie ou reative outro administrador antes de desativá-lo ou mudar seu papel")
	case errors.Is(err, users.ErrBusy):
		w.Header().Set("Retry-After", "2")
		apiError(w, http.StatusServiceUnavailable, "servidor ocupado verificando senhas: tente de novo em alguns segundos")
	default:
		a.internal(w, err)
	}
	return true
}

func (a *AdminAPI) listUsers(w http.ResponseWriter, r *http.Request) {
	if a.o.Users == nil {
		apiError(w, http.StatusServiceUnavailable, "o cadastro de usuários não está disponível neste servidor")
		return
	}
	list, err := a.o.Users.List(r.Context())
	if err != nil {
		a.internal(w, err)
		return
	}
	if list == nil {
		list = []users.User{}
	}
	apiJSON(w, http.StatusOK, map[string]any{"users": list, "roles": users.Roles})
}

type createUserBody struct {
	Name     string     `json:"name"`
	Role     users.Role `json:"role"`
	Password string     `json:"password"`
	users.Profile
}

func (a *AdminAPI) createUser(w http.ResponseWriter, r *http.Request) {
	if a.o.Users == nil {
		apiError(w, http.StatusServiceUnavailable, "o cadastro de usuários não está disponível neste servidor")
		return
	}
	var b createUserBody
	if err := readJSON(w, r, 16<<10, jsonBody, &b); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	b.Name = strings.TrimSpace(b.Name)
	u, err := a.o.Users.Create(r.Context(), users.NewUser{Name: b.Name, Role: b.Role, Password: b.Password, Profile: b.Profile}, a.o.Now())
	if a.userError(w, b.Name, err) {
		return
	}
	a.o.Log.Info("administração: usuário criado", "usuario", u.Name, "papel", u.Role, "por", sessionUser(r).Name)
	apiJSON(w, http.StatusCreated, u)
}

type updateUserBody struct {
	Role      *users.Role `json:"role"`
	FullName  *string     `json:"full_name"`
	Matricula *string     `json:"matricula"`
	Email     *string     `json:"email"`
	Phone     *string     `json:"phone"`
	Disabled  *bool       `json:"disabled"`
	Password  *string     `json:"password"`
}

func (a *AdminAPI) updateUser(w http.ResponseWriter, r *http.Request) {
	if a.o.Users == nil {
		apiError(w, http.StatusServiceUnavailable, "o cadastro de usuários não está disponível neste servidor")
		return
	}
	name := r.PathValue("name")
	var b updateUserBody
	if err := readJSON(w, r, 16<<10, jsonBody, &b); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	ch := users.Change{Role: b.Role, FullName: b.FullName, Matricula: b.Matricula, Email: b.Email, Phone: b.Phone,
		Disabled: b.Disabled, Password: b.Password}
	if ch == (users.Change{}) {
		apiError(w, http.StatusBadRequest, "nada a alterar: envie role, full_name, matricula, email, phone, disabled ou password")
		return
	}
	u, err := a.o.Users.Update(r.Context(), name, ch)
	if a.userError(w, name, err) {
		return
	}
	a.o.Log.Info("administração: usuário alterado", "usuario", u.Name, "papel", u.Role, "desativado", u.Disabled, "por", sessionUser(r).Name)
	apiJSON(w, http.StatusOK, u)
}

// UnitView is one monetary unit of a code with its periods.
type UnitView struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Article    string `json:"article,omitempty"`
	Indexation string `json:"indexation,omitempty"`
	Obsolete   bool   `json:"obsolete,omitempty"`
	// DefaultBRL is the code file's value_brl: the fallback used only when
	// no period is stored for the unit.
	DefaultBRL *float64          `json:"default_value_brl,omitempty"`
	Current    *monetary.Period  `json:"current"` // the period in force today, or null
	Periods    []monetary.Period `json:"periods"`
}

// CodeUnits is a code with its monetary units.
type CodeUnits struct {
	Code         string     `json:"code"`
	Title        string     `json:"title"`
	Municipality string     `json:"municipality"`
	Units        []UnitView `json:"units"`
}

func (a *AdminAPI) units(w http.ResponseWriter, r *http.Request) {
	if a.o.Units == nil || a.o.Codes == nil {
		apiError(w, http.StatusServiceUnavailable, "o cadastro de unidades monetárias não está disponível neste servidor")
		return
	}
	ps, err := a.o.Units.Periods(r.Context(), "")
	if err != nil {
		a.internal(w, err)
		return
	}
	today := a.o.Now().In(tz.Brasilia()).Format(time.DateOnly)
	out := []CodeUnits{}
	for _, id := range a.o.Codes.IDs() {
		c, _ := a.o.Codes.Code(id)
		cu := CodeUnits{Code: c.ID, Title: c.Title(), Municipality: c.Municipality, Units: []UnitView{}}
		for _, u := range c.Units {
			v := UnitView{ID: u.ID, Name: u.Name, Article: u.Article, Indexation: u.Indexation, Obsolete: u.Obsolete,
				DefaultBRL: u.ValueBRL, Periods: []monetary.Period{}}
			for _, p := range ps {
				if p.CodeID == c.ID && p.Unit == u.ID {
					v.Periods = append(v.Periods, p)
				}
			}
			if p, ok := monetary.ValueAt(v.Periods, c.ID, u.ID, today); ok {
				v.Current = &p
			}
			cu.Units = append(cu.Units, v)
		}
		out = append(out, cu)
	}
	apiJSON(w, http.StatusOK, map[string]any{"today": today, "codes": out})
}

func (a *AdminAPI) unitHistory(w http.ResponseWriter, r *http.Request) {
	if a.o.Units == nil || a.o.Codes == nil {
		apiError(w, http.StatusServiceUnavailable, "o cadastro de unidades monetárias não está disponível neste servidor")
		return
	}
	code := r.PathValue("code")
	if _, ok := a.o.Codes.Code(code); !ok {
		apiError(w, http.StatusNotFound, "código municipal desconhecido: "+code)
		return
	}
	h, err := a.o.Units.History(r.Context(), code, r.URL.Query().Get("unit"))
	if err != nil {
		a.internal(w, err)
		return
	}
	apiJSON(w, http.StatusOK, map[string]any{"history": h})
}

type setUnitBody struct {
	Code     string          `json:"code"`
	Unit     string          `json:"unit"`
	From     string          `json:"from"`
	To       string          `json:"to"`
	ValueBRL monetary.Amount `json:"value_brl"`
	Act      string          `json:"act"`
}

func (a *AdminAPI) setUnit(w http.ResponseWriter, r *http.Request) {
	if a.o.Units == nil || a.o.Codes == nil {
		apiError(w, http.StatusServiceUnavailable, "o cadastro de unidades monetárias não está disponível neste servidor")
		return
	}
	var b setUnitBody
	if err := readJSON(w, r, 16<<10, jsonBody, &b); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	p, err := a.o.Units.Set(r.Context(), a.o.Codes, monetary.Period{CodeID: b.Code, Unit: b.Unit, From: b.From, To: b.To,
		Value: b.ValueBRL, Act: b.Act}, sessionUser(r).Name, a.o.Now())
	var ve *monetary.ValidationError
	switch {
	case errors.As(err, &ve):
		problems(w, ve.Problems)
		return
	case err != nil:
		a.internal(w, err)
		return
	}
	a.o.Log.Info("administração: valor de unidade monetária cadastrado", "codigo", p.CodeID, "unidade", p.Unit,
		"de", p.From, "ate", p.To, "valor", p.Value.String(), "por", p.SetBy)
	apiJSON(w, http.StatusCreated, p)
}

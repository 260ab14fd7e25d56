package dashboard

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/sossego/sossego/internal/store"
)

// APIEnv answers environmental-record queries (*sqlitestore.Store).
type APIEnv interface {
	EnvRecords(ctx context.Context, sensor string, from, to time.Time, limit int) ([]store.EnvRecord, error)
}

// Bounds of GET /api/v1/sensors/{id}/env.
const (
	envDefaultWindow = 24 * time.Hour
	envDefaultLimit  = 10000
	envMaxLimit      = 100000
)

// env serves GET /api/v1/sensors/{id}/env?from=&to=&limit=: the sensor's
// stored environmental records in [from, to) in time order (default the
// last 24 h, at most limit; truncated says the window held more).
func (a *API) env(w http.ResponseWriter, r *http.Request) {
	if a.o.Env == nil {
		apiError(w, http.StatusServiceUnavailable, "consulta de leituras ambientais indisponível")
		return
	}
	id := r.PathValue("id")
	if _, ok := a.o.Registry.Current().Sensor(id); !ok {
		apiError(w, http.StatusNotFound, "sensor "+strconv.Quote(id)+" não está cadastrado")
		return
	}
	q := r.URL.Query()
	to := a.o.Now()
	var err error
	if s := q.Get("to"); s != "" {
		if to, err = parseTime(s); err != nil {
			apiError(w, http.StatusBadRequest, "to inválido: "+err.Error())
			return
		}
	}
	from := to.Add(-envDefaultWindow)
	if s := q.Get("from"); s != "" {
		if from, err = parseTime(s); err != nil {
			apiError(w, http.StatusBadRequest, "from inválido: "+err.Error())
			return
		}
	}
	if !from.Before(to) {
		apiError(w, http.StatusBadRequest, "from deve ser anterior a to")
		return
	}
	if to.Sub(from) > 366*24*time.Hour {
		apiError(w, http.StatusBadRequest, "janela maior que um ano; divida a consulta")
		return
	}
	limit, ok := intParam(w, q.Get("limit"), "limit", 1, envMaxLimit)
	if !ok {
		return
	}
	if limit == 0 {
		limit = envDefaultLimit
	}
	recs, err := a.o.Env.EnvRecords(r.Context(), id, from, to, limit+1)
	if err != nil {
		a.internal(w, err)
		return
	}
	truncated := len(recs) > limit
	if truncated {
		recs = recs[:limit]
	}
	if recs == nil {
		recs = []store.EnvRecord{}
	}
	apiJSON(w, http.StatusOK, map[string]any{"sensor": id, "from": from.UTC(), "to": to.UTC(), "limit": limit,
		"truncated": truncated, "records": recs})
}

package dashboard

import (
	"context"
	"net/http"
	"strconv"

	"github.com/sossego/sossego/internal/store"
)

// APIConflicts answers what ingest kept instead of applying: seconds a
// sensor sent twice with other values (both records kept) and seq ranges
// the ack moved over.
type APIConflicts interface {
	RecordConflicts(ctx context.Context, sensor string, beforeID int64, limit int) ([]store.RecordConflict, error)
	SeqSkips(ctx context.Context, gateway string) ([]store.SeqSkipRecord, error)
}

func (a *API) conflicts(w http.ResponseWriter) (APIConflicts, bool) {
	c, ok := a.o.Store.(APIConflicts)
	if !ok {
		apiError(w, http.StatusServiceUnavailable, "este serviço não guarda conflitos de registros")
	}
	return c, ok
}

// recordConflicts lists record conflicts, newest first (?sensor=, ?before=
// id, ?limit= 1–1000): the record kept and the one that came again, each
// with the batch (gateway, seq) it came in.
func (a *API) recordConflicts(w http.ResponseWriter, r *http.Request) {
	c, ok := a.conflicts(w)
	if !ok {
		return
	}
	q := r.URL.Query()
	limit, ok := intParam(w, q.Get("limit"), "limit", 1, 1000)
	if !ok {
		return
	}
	if limit == 0 {
		limit = 100
	}
	var before int64
	if s := q.Get("before"); s != "" {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id <= 0 {
			apiError(w, http.StatusBadRequest, "before deve ser o id (inteiro positivo) de um conflito da lista")
			return
		}
		before = id
	}
	sensor := q.Get("sensor")
	if sensor != "" {
		if _, known := a.o.Registry.Current().Sensor(sensor); !known {
			apiError(w, http.StatusNotFound, "sensor "+strconv.Quote(sensor)+" não está no cadastro")
			return
		}
	}
	list, err := c.RecordConflicts(r.Context(), sensor, before, limit)
	if err != nil {
		a.internal(w, err)
		return
	}
	if list == nil {
		list = []store.RecordConflict{}
	}
	resp := map[string]any{"conflicts": list}
	if len(list) == limit {
		resp["next_before"] = list[len(list)-1].ID
	}
	apiJSON(w, http.StatusOK, resp)
}

// seqSkips lists the seq ranges the ack moved over (?gateway=), oldest first.
func (a *API) seqSkips(w http.ResponseWriter, r *http.Request) {
	c, ok := a.conflicts(w)
	if !ok {
		return
	}
	gw := r.URL.Query().Get("gateway")
	if gw != "" {
		if _, known := a.o.Registry.Current().Gateway(gw); !known {
			apiError(w, http.StatusNotFound, "gateway "+strconv.Quote(gw)+" não está no cadastro")
			return
		}
	}
	list, err := c.SeqSkips(r.Context(), gw)
	if err != nil {
		a.internal(w, err)
		return
	}
	if list == nil {
		list = []store.SeqSkipRecord{}
	}
	apiJSON(w, http.StatusOK, map[string]any{"seq_skips": list})
}

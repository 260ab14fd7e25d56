package dashboard

import (
	"net/http"

	"github.com/sossego/sossego/codes"
)

// labels serves GET /api/v1/labels: the pt-BR label of every value of the
// codes vocabularies (zone, source, mechanism, establishment, day, rule_kind,
// period, poi, verdict), so that the UI never shows an enum value.
func (a *API) labels(w http.ResponseWriter, r *http.Request) {
	apiJSON(w, http.StatusOK, codes.Labels())
}

package dashboard

import (
	"net/http"
	"strings"
	"testing"
)

// TestRoutesMountTogether: every part's routes share one mux without a
// conflict, each under /api/v1/, each route with roles saying which.
func TestRoutesMountTogether(t *testing.T) {
	rs := Routes(Deps{Auth: &Auth{}, Web: &Web{}, API: &API{}, Reports: &Reports{}, Workflow: &WorkflowAPI{}, Cases: &CasesAPI{},
		Registry: &RegistryAPI{}, Admin: &AdminAPI{}, Holidays: &HolidaysAPI{}, Notify: &NotifyAPI{}, Calibration: &CalibrationAPI{},
		EvidenceKey: http.NotFoundHandler()})
	if len(rs) < 70 {
		t.Fatalf("%d routes; expected every /api/v1 route", len(rs))
	}
	seen := map[string]bool{}
	for _, r := range rs {
		key := r.Method + " " + r.Path
		if seen[key] {
			t.Errorf("%s listed twice", key)
		}
		seen[key] = true
		if !strings.HasPrefix(r.Path, "/api/v1/") {
			t.Errorf("%s is not under /api/v1/", key)
		}
		if r.Access == Roles && len(r.Roles) == 0 {
			t.Errorf("%s needs a role but names none", key)
		}
		if r.Handler == nil {
			t.Errorf("%s has no handler", key)
		}
	}
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("mounting every route on one mux: %v", p)
		}
	}()
	Mount(http.NewServeMux(), nil, rs)
}

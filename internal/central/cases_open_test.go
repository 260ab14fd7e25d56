package central

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/alertstore"
	"github.com/sossego/sossego/internal/cases"
	"github.com/sossego/sossego/internal/registry"
)

// fakeFired answers ListAlerts from a fixed list, filtered as the alerts
// store filters, and records the filters it was asked.
type fakeFired struct {
	list []alerts.Alert
	asks []alertstore.Filter
	err  error
}

func (f *fakeFired) ListAlerts(_ context.Context, flt alertstore.Filter) ([]alerts.Alert, error) {
	f.asks = append(f.asks, flt)
	var out []alerts.Alert
	for _, a := range f.list {
		if a.State == flt.State && a.Kind == flt.Kind {
			out = append(out, a)
		}
	}
	return out, f.err
}

// TestOpenAlerts: the case list's alerts are the exceedances that fired
// (firing and resolved), named with the code's municipality and the
// establishment and address the register gives their sensor.
func TestOpenAlerts(t *testing.T) {
	reg, err := registry.Parse(registry.DemoYAML())
	if err != nil {
		t.Fatal(err)
	}
	set, err := codes.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	fired := time.Date(2026, 3, 11, 23, 10, 0, 0, time.UTC)
	f := &fakeFired{list: []alerts.Alert{
		{ID: "lapa-bar-01/1", Kind: alerts.KindExceedance, State: alerts.StateFiring, SensorInfo: alerts.SensorInfo{Sensor: "lapa-bar-01", Municipality: "lapa"},
			CodeID: "lapa", FiringAt: fired, PendingAt: fired.Add(-time.Minute)},
		{ID: "lapa-bar-01/2", Kind: alerts.KindExceedance, State: alerts.StateResolved, SensorInfo: alerts.SensorInfo{Sensor: "lapa-bar-01", Municipality: "lapa", Code: "lapa"},
			PendingAt: fired.Add(-time.Hour)}, // no firing instant kept: the pending one
		{ID: "lapa-bar-01/3", Kind: alerts.KindExceedance, State: alerts.StatePending, SensorInfo: alerts.SensorInfo{Sensor: "lapa-bar-01", Municipality: "lapa"}},
		{ID: "lapa-bar-01/4", Kind: alerts.KindNoData, State: alerts.StateFiring, SensorInfo: alerts.SensorInfo{Sensor: "lapa-bar-01", Municipality: "lapa"}},
		{ID: "fora/1", Kind: alerts.KindExceedance, State: alerts.StateFiring, SensorInfo: alerts.SensorInfo{Sensor: "fora-do-cadastro", Municipality: "lapa"}, FiringAt: fired},
	}}
	list, err := openAlerts(f, func() *registry.Registry { return reg }, set)(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	bar := cases.PartyRef{Document: "12.345.678/0001-95", Name: "Bar Exemplo da Lapa Ltda (fictício)", Address: "Rua XV de Novembro, 98, Centro, Lapa - PR"}
	site := "Rua XV de Novembro, 100, Centro, Lapa - PR"
	want := []cases.OpenAlert{
		{ID: "lapa-bar-01/1", CodeID: "lapa", Municipality: "Lapa", Party: bar, SiteAddress: site, At: fired},
		{ID: "fora/1", CodeID: "lapa", Municipality: "Lapa", At: fired},
		{ID: "lapa-bar-01/2", CodeID: "lapa", Municipality: "Lapa", Party: bar, SiteAddress: site, At: fired.Add(-time.Hour)},
	}
	if d := cmp.Diff(want, list); d != "" {
		t.Errorf("open alerts (-want +got):\n%s", d)
	}
	for _, a := range f.asks {
		if a.Limit != 1000 {
			t.Errorf("asked %+v: want the newest 1000", a)
		}
	}
	f.err = errors.New("disco cheio")
	if _, err := openAlerts(f, func() *registry.Registry { return reg }, set)(context.Background()); err == nil {
		t.Error("a failing alerts store gave a list")
	}
}

package dashboard_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/alerts/notice/noticetest"
	"github.com/sossego/sossego/internal/workflow"
)

// TestDraftCarriesFine: the draft of an alert carries the fine it
// announces, valued with the service's unit values on the day it is
// prepared; without a value the draft says what to set and where.
func TestDraftCarriesFine(t *testing.T) {
	lapa := noticetest.Lapa(set)
	e := newEnv(t, fakeAlerts{lapa.Alert.ID: *lapa.Alert})
	path := "/api/v1/alerts/" + url.PathEscape(lapa.Alert.ID) + "/notice"

	d := e.ok(t, "otto", "GET", path, nil, 200)["draft"].(map[string]any)
	fine := d["fine"].(map[string]any)
	if _, ok := fine["amount_brl"]; ok || !strings.Contains(fine["warning"].(string), "Administração → Unidades monetárias") {
		t.Fatalf("fine without values: %v", fine)
	}
	notes, _ := d["notes"].([]any)
	found := false
	for _, n := range notes {
		found = found || strings.Contains(n.(string), "multa sem valor em R$")
	}
	if !found {
		t.Errorf("no warning among the notes: %v", notes)
	}

	e.set(func(c *workflow.Config) {
		c.UnitValues = func(context.Context) ([]notice.UnitValue, error) {
			return []notice.UnitValue{{CodeID: "lapa", Unit: "VRM", From: "2026-01-01", ValueBRL: 4938.24, Act: "Decreto nº 20/2025"}}, nil
		}
	})
	d = e.ok(t, "otto", "GET", path, nil, 200)["draft"].(map[string]any)
	fine = d["fine"].(map[string]any)
	if fine["amount_brl"] != 1234.56 || fine["amount_text"] != "R$ 1.234,56" || fine["unit"] != "VRM" || fine["unit_value_brl"] != 4938.24 ||
		fine["law"] != "Decreto nº 20/2025" || fine["valid_from"] != "2026-01-01" || fine["date"] != "2026-03-09" {
		t.Fatalf("fine %v", fine)
	}
	var pen string
	for _, f := range d["fields"].([]any) {
		if m := f.(map[string]any); m["id"] == "penalidade" {
			pen = m["value"].(string)
		}
	}
	if !strings.Contains(pen, "= R$ 1.234,56 (VRM de R$ 4.938,24 vigente desde 01/01/2026, Decreto nº 20/2025") {
		t.Errorf("penalidade %q", pen)
	}
}

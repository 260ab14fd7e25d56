package casesdb_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/alerts/notice/noticetest"
)

// TestIssueRevaluesFine: a draft's fine is valued when it is prepared; at
// issue it is valued again on the date of the act, before the PDF is
// rendered, and the audit trail records the change when the value moved.
func TestIssueRevaluesFine(t *testing.T) {
	ctx := context.Background()
	sc := noticetest.Lapa(set)
	until := notice.UnitValue{CodeID: "lapa", Unit: "VRM", From: "2026-01-01", To: "2026-03-09", ValueBRL: 4938.24, Act: "Decreto nº 20/2025"}
	from := notice.UnitValue{CodeID: "lapa", Unit: "VRM", From: "2026-03-10", ValueBRL: 5200, Act: "Decreto nº 3/2026"}
	open1 := notice.UnitValue{CodeID: "lapa", Unit: "VRM", From: "2026-01-01", ValueBRL: 4938.24, Act: "Decreto nº 20/2025"}
	tests := []struct {
		name    string
		values  []notice.UnitValue // the register, unchanged between draft (09/03) and issue (10/03)
		drafted string             // amount of the draft
		issued  string             // amount of the act ("" = none)
		warning string             // of the act
		entry   bool               // a revalue_fine audit entry
	}{
		{"new value between draft and issue", []notice.UnitValue{until, from}, "R$ 1.234,56", "R$ 1.300,00", "", true},
		{"unchanged", []notice.UnitValue{open1}, "R$ 1.234,56", "R$ 1.234,56", "", false},
		{"no value in force at issue", []notice.UnitValue{until}, "R$ 1.234,56", "", "multa sem valor em R$: não há valor do VRM vigente em 10/03/2026", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := open(t)
			s.UnitValues = func(context.Context) ([]notice.UnitValue, error) { return tc.values, nil }
			d := grounded(t, sc, nil, at(3, 9, 22, 0))
			notice.ApplyFine(&d, sc.Code, tc.values, d.Prepared)
			if d.Fine == nil || d.Fine.Amount != tc.drafted {
				t.Fatalf("draft fine %+v, want %s", d.Fine, tc.drafted)
			}
			np, err := s.Create(ctx, d, system, d.Prepared)
			if err != nil {
				t.Fatal(err)
			}
			var rendered notice.Document
			issue := notice.Action{Kind: notice.ActIssue, Actor: fiscal, At: at(3, 10, 10, 0), Agent: agent, PrazoDays: 5}
			doc, _, err := s.ApplyRender(ctx, sc.Code, np.ID, issue, func(d notice.Document) ([]byte, error) { rendered = d; return []byte("%PDF-1.4"), nil })
			if err != nil {
				t.Fatal(err)
			}
			for what, f := range map[string]*notice.Fine{"rendered": rendered.Draft.Fine, "stored": doc.Draft.Fine} {
				if f == nil || f.Amount != tc.issued || f.Date != "2026-03-10" || !strings.Contains(f.Warning, tc.warning) || (tc.warning == "") != (f.Warning == "") {
					t.Errorf("%s fine %+v, want %q on 2026-03-10, warning %q", what, f, tc.issued, tc.warning)
				}
			}
			pen := rendered.Draft.Field("penalidade").Value
			if tc.issued != "" && !strings.Contains(pen, "= "+tc.issued) || tc.issued != tc.drafted && strings.Contains(pen, tc.drafted) {
				t.Errorf("rendered penalty field %q, want %s and not %s", pen, tc.issued, tc.drafted)
			}
			got, _ := s.Get(ctx, np.ID)
			if got.Draft.Fine == nil || got.Draft.Fine.Amount != tc.issued {
				t.Errorf("stored act's fine %+v", got.Draft.Fine)
			}
			trail, err := s.Audit(ctx, np.ID)
			if err != nil {
				t.Fatal(err)
			}
			var entries []string
			for i, e := range trail {
				if e.Action != "revalue_fine" {
					continue
				}
				entries = append(entries, string(e.Detail))
				var det map[string]string
				if err := json.Unmarshal(e.Detail, &det); err != nil {
					t.Fatal(err)
				}
				if det["before_amount"] != tc.drafted || det["after_amount"] != tc.issued || e.Actor.ID != fiscal.ID || !e.At.Equal(issue.At) ||
					i+1 >= len(trail) || trail[i+1].Action != "issue" {
					t.Errorf("entry %d %+v %s, want %s → %s just before the issue", i, e, e.Detail, tc.drafted, tc.issued)
				}
			}
			if (len(entries) == 1) != tc.entry || len(entries) > 1 {
				t.Errorf("revalue_fine entries %q, want %v", entries, tc.entry)
			}
			if err := s.VerifyAudit(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

package casesdb

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/alerts/notice/noticetest"
)

// TestApplyFineHook: the auto's fine is valued with the table UnitValues
// gives, on the date of the act; a failing table is an error, not a
// document without its fine.
func TestApplyFineHook(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "cases.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sc := noticetest.Lapa(noticetest.Codes())
	at := time.Date(2026, 3, 16, 9, 0, 0, 0, noticetest.SaoPaulo)
	d, err := notice.Build(sc.Code, sc.Finding, sc.Party, sc.Site, nil, at)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		values func(context.Context) ([]notice.UnitValue, error)
		amount float64 // 0: none
		err    bool
	}{
		{"no table", nil, 0, false},
		{"table", func(context.Context) ([]notice.UnitValue, error) {
			return []notice.UnitValue{{CodeID: "lapa", Unit: "VRM", From: "2026-01-01", ValueBRL: 4938.24, Act: "Decreto nº 20/2025"}}, nil
		}, 1234.56, false},
		{"failing table", func(context.Context) ([]notice.UnitValue, error) { return nil, errors.New("disco cheio") }, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s.UnitValues = tc.values
			dd := d
			dd.Fields = append([]notice.Field(nil), d.Fields...)
			err := s.applyFine(ctx, &dd, sc.Code, at)
			if (err != nil) != tc.err {
				t.Fatalf("applyFine error %v", err)
			}
			if tc.err {
				return
			}
			if dd.Fine == nil {
				t.Fatal("no fine")
			}
			switch {
			case tc.amount == 0 && (dd.Fine.AmountBRL != nil || dd.Fine.Warning == ""):
				t.Errorf("fine without a table: %+v", dd.Fine)
			case tc.amount != 0 && (dd.Fine.AmountBRL == nil || *dd.Fine.AmountBRL != tc.amount || dd.Fine.Date != "2026-03-16"):
				t.Errorf("fine %+v", dd.Fine)
			}
		})
	}
}

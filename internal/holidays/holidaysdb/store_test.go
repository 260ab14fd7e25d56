package holidaysdb

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/holidays"
	"github.com/sossego/sossego/internal/sqlitedb"
)

func builtin(t testing.TB) *codes.Set {
	t.Helper()
	set, err := codes.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestStore(t *testing.T) {
	ctx := context.Background()
	set := builtin(t)
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)
	a, err := s.Add(ctx, set, holidays.Entry{Municipality: "lapa", MonthDay: "19/03", Since: "02/05/2019", Name: "São José", Act: "Lei Municipal nº 1.234/2019"}, "admin", now)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Add(ctx, set, holidays.Entry{Municipality: "lapa", Date: "07/12/2026", Name: "Ponto facultativo", Act: "Decreto nº 45/2026", Kind: "ponto_facultativo"}, "admin", now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(ctx, set, holidays.Entry{Municipality: "lapa", Date: "2027-03-19", Name: "x", Act: "y"}, "admin", now); !errors.Is(err, holidays.ErrInvalid) {
		t.Fatalf("a duplicate was stored: %v", err)
	}
	if _, err := s.Add(ctx, set, holidays.Entry{Municipality: "curitiba", Date: "2027-03-19", Name: "x", Act: "y"}, "admin", now); err == nil || !strings.Contains(err.Error(), "use campina-grande-do-sul") {
		t.Fatalf("unknown municipality: %v", err)
	}
	got, err := s.List(ctx, "lapa")
	if err != nil || len(got) != 2 || got[0].ID != a.ID || got[1].ID != b.ID || got[0].Since != "2019-05-02" || !got[0].SetAt.Equal(now) {
		t.Fatalf("list %+v %v", got, err)
	}
	if _, err := s.Remove(ctx, "campos-altos", b.ID, "admin", "", now); !holidays.IsNotFound(err) {
		t.Fatalf("removing another municipality's entry: %v", err)
	}
	if _, err := s.Remove(ctx, "lapa", b.ID, "admin", "decreto revogado", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.List(ctx, ""); len(got) != 1 {
		t.Fatalf("after remove: %+v", got)
	}
	h, err := s.History(ctx, "lapa")
	if err != nil || len(h) != 3 || h[0].Action != "added" || h[2].Action != "removed" || h[2].Reason != "decreto revogado" ||
		h[2].Entry.Act != "Decreto nº 45/2026" || h[2].By != "admin" {
		t.Fatalf("history %+v %v", h, err)
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM holidays_log`); err == nil {
		t.Error("the log accepted a delete")
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE holidays_log SET by = 'x'`); err == nil {
		t.Error("the log accepted an update")
	}
	// holidays.Apply hands the register to the set: the codes carry the holiday.
	if n, err := holidays.Apply(ctx, s, set, nil); err != nil || n != 1 {
		t.Fatalf("apply: %d %v", n, err)
	}
	lapa, _ := set.Code("lapa")
	if name, ok := lapa.Holiday(codes.Date{Y: 2026, M: 3, D: 19}); !ok || name != "São José" {
		t.Errorf("19/03/2026 after Apply: %q %v", name, ok)
	}
	if _, ok := lapa.Holiday(codes.Date{Y: 2019, M: 3, D: 19}); ok {
		t.Error("19/03/2019 is before the law")
	}
}

// TestMigrate: a register written by this release reopens with its entries
// and log; a file from a newer release is refused, not altered.
func TestMigrate(t *testing.T) {
	ctx := context.Background()
	set := builtin(t)
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(ctx, set, holidays.Entry{Municipality: "lapa", Date: "2026-12-07", Name: "Ponto facultativo", Act: "Decreto nº 45/2026"}, "admin", time.Now()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.List(ctx, ""); len(got) != 1 {
		t.Fatalf("reopened: %+v", got)
	}
	if seq, err := s.Seq(ctx); err != nil || seq != 1 {
		t.Fatalf("seq %d %v", seq, err)
	}
	var v int
	if err := s.db.QueryRowContext(ctx, `SELECT max(version) FROM holidays_migrations`).Scan(&v); err != nil || v != len(migrations) {
		t.Fatalf("version %d %v", v, err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO holidays_migrations (version, name, applied_at) VALUES (?, 'future', 0)`, len(migrations)+1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(ctx, path); !errors.Is(err, sqlitedb.ErrNewerSchema) {
		t.Fatalf("a newer file opened: %v", err)
	}
}

// TestWatch: a change written by another process (the CLI's own handle)
// reaches the set the service holds.
func TestWatch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	set := builtin(t)
	path := filepath.Join(t.TempDir(), FileName)
	svc, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	w := holidays.NewWatch(svc, set, 20*time.Millisecond, nil)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	cli, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.Add(ctx, set, holidays.Entry{Municipality: "campos-altos", Date: "2026-12-08", Name: "Ponto facultativo", Act: "Decreto nº 1/2026", Kind: "ponto_facultativo"}, "cli", time.Now()); err != nil {
		t.Fatal(err)
	}
	d := codes.Date{Y: 2026, M: 12, D: 8} // a Tuesday
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, _ := set.Code("campos-altos")
		if !c.BusinessDay(d) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the decreed day never reached the set")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

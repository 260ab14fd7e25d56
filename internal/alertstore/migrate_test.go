package alertstore

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts"
)

// TestMigrateFromV1: a case store written before alerts.detected_at and
// unsynced_records existed opens, gains the columns, keeps its alerts
// (unset) and stores new ones with them.
func TestMigrateFromV1(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "cases.db")
	old, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`,
		migrations[0].SQL,
		`INSERT INTO schema_migrations VALUES (1, 'v1', 0)`,
		`INSERT INTO alerts (id, kind, state, state_rank, sensor, municipality, grade, screening, firing_at, created_at, updated_at)
		 VALUES ('s/old', 'exceedance', 'firing', 2, 's', 'lapa', 'class1', 0, 1741993320000, 0, 0)`,
	} {
		if _, err := old.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	old.Close()

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, err := s.GetAlert(ctx, "s/old")
	if err != nil {
		t.Fatal(err)
	}
	if a.FiringAt.UnixMilli() != 1741993320000 || !a.DetectedAt.IsZero() || a.UnsyncedRecords != 0 {
		t.Errorf("migrated alert: firing %v detected %v", a.FiringAt, a.DetectedAt)
	}
	at := time.Date(2025, 3, 15, 1, 47, 0, 0, time.UTC)
	n := alerts.Alert{ID: "s/new", Kind: alerts.KindExceedance, State: alerts.StateFiring,
		SensorInfo: alerts.SensorInfo{Sensor: "s", Municipality: "lapa", Grade: "class1"},
		PendingAt:  at.Add(-45 * time.Minute), FiringAt: at.Add(-43 * time.Minute), DetectedAt: at, UnsyncedRecords: 3}
	if err := s.SaveStates(ctx, []alerts.Change{{Events: []alerts.Event{{Kind: alerts.EventFiring, At: n.FiringAt, Alert: n}}}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetAlert(ctx, "s/new")
	if err != nil {
		t.Fatal(err)
	}
	if !got.DetectedAt.Equal(at) || got.UnsyncedRecords != 3 {
		t.Errorf("detected_at %v, unsynced %d; want %v, 3", got.DetectedAt, got.UnsyncedRecords, at)
	}
}

package casesdb_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/internal/cases"
	"github.com/sossego/sossego/internal/cases/casesdb"
)

func TestTriageAckAndAssign(t *testing.T) {
	ctx := context.Background()
	s, path := open(t)
	const alert = "lapa-bar-01/20260309T014200.000Z"
	joao := notice.Actor{ID: "joao", Name: "joao", Role: notice.RoleFiscal}
	t0 := at(3, 9, 22, 50)

	got, err := s.Triage(ctx, alert)
	if err != nil || got.AlertID != alert || got.Acked() || got.Assignee != "" {
		t.Fatalf("untouched alert: %+v %v", got, err)
	}
	steps := []struct {
		name        string
		do          func() (cases.Triage, bool, error)
		wantChanged bool
		wantErr     error
		check       func(t *testing.T, tr cases.Triage)
	}{
		{"ack", func() (cases.Triage, bool, error) { return s.Ack(ctx, alert, fiscal, t0) }, true, nil,
			func(t *testing.T, tr cases.Triage) {
				if !tr.AckedAt.Equal(t0) || tr.AckedBy != fiscal.ID || tr.AckedName != fiscal.Name {
					t.Errorf("ack = %+v", tr)
				}
			}},
		{"second ack keeps the first", func() (cases.Triage, bool, error) { return s.Ack(ctx, alert, joao, t0.Add(time.Minute)) }, false, nil,
			func(t *testing.T, tr cases.Triage) {
				if tr.AckedBy != fiscal.ID || !tr.AckedAt.Equal(t0) {
					t.Errorf("second ack replaced the first: %+v", tr)
				}
			}},
		{"assign", func() (cases.Triage, bool, error) {
			return s.Assign(ctx, alert, " joao ", fiscal, t0.Add(2*time.Minute))
		}, true, nil,
			func(t *testing.T, tr cases.Triage) {
				if tr.Assignee != "joao" || tr.AssignedBy != fiscal.ID || !tr.AssignedAt.Equal(t0.Add(2*time.Minute)) || !tr.Acked() {
					t.Errorf("assign = %+v", tr)
				}
			}},
		{"same assignee again", func() (cases.Triage, bool, error) { return s.Assign(ctx, alert, "joao", joao, t0.Add(3*time.Minute)) }, false, nil,
			func(t *testing.T, tr cases.Triage) {
				if tr.AssignedBy != fiscal.ID {
					t.Errorf("no-op assign changed the record: %+v", tr)
				}
			}},
		{"reassign", func() (cases.Triage, bool, error) { return s.Assign(ctx, alert, "u-ana", joao, t0.Add(4*time.Minute)) }, true, nil,
			func(t *testing.T, tr cases.Triage) {
				if tr.Assignee != "u-ana" || tr.AssignedBy != "joao" {
					t.Errorf("reassign = %+v", tr)
				}
			}},
		{"empty assignee", func() (cases.Triage, bool, error) { return s.Assign(ctx, alert, "  ", joao, t0) }, false, notice.ErrInput, nil},
		{"long assignee", func() (cases.Triage, bool, error) {
			return s.Assign(ctx, alert, string(make([]byte, cases.MaxAssigneeLen+1)), joao, t0)
		}, false, notice.ErrInput, nil},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			tr, changed, err := st.do()
			if st.wantErr != nil {
				if !errors.Is(err, st.wantErr) {
					t.Fatalf("err = %v, want %v", err, st.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if changed != st.wantChanged {
				t.Errorf("changed = %v, want %v", changed, st.wantChanged)
			}
			st.check(t, tr)
		})
	}

	// The audit trail has exactly the three changes, chained with the rest.
	es, err := s.Audit(ctx, alert)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range es {
		actions = append(actions, e.Action+":"+e.Actor.ID)
	}
	if want := "ack:u-ana assign:u-ana assign:joao"; strings.Join(actions, " ") != want {
		t.Errorf("audit = %q, want %q", strings.Join(actions, " "), want)
	}
	var last map[string]string
	if err := json.Unmarshal(es[len(es)-1].Detail, &last); err != nil || last["previous"] != "joao" || last["assignee"] != "u-ana" {
		t.Errorf("reassign detail = %s (%v)", es[len(es)-1].Detail, err)
	}
	if err := s.VerifyAudit(ctx); err != nil {
		t.Fatal(err)
	}

	// Persisted across a reopen (the migration runs once).
	other := "macabu-praca-01/20260310T030000.000Z"
	if _, _, err := s.Ack(ctx, other, joao, t0.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, err := casesdb.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	list, err := s2.Triages(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].AlertID != other || list[1].AlertID != alert || list[1].Assignee != "u-ana" {
		t.Errorf("triages after reopen = %+v", list)
	}
	if list, _ := s2.Triages(ctx, 1); len(list) != 1 {
		t.Errorf("limit 1 gave %d", len(list))
	}
	db := rawDB(t, path)
	defer db.Close()
	var v int
	if err := db.QueryRow(`SELECT max(version) FROM cases_migrations`).Scan(&v); err != nil || v != casesdb.SchemaVersion {
		t.Errorf("schema version %d (%v), want %d", v, err, casesdb.SchemaVersion)
	}
}

func TestTriageAuditIsTamperEvident(t *testing.T) {
	ctx := context.Background()
	s, path := open(t)
	if _, _, err := s.Ack(ctx, "a/1", fiscal, at(3, 9, 22, 0)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Assign(ctx, "a/1", "joao", fiscal, at(3, 9, 22, 1)); err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, path)
	defer db.Close()
	if _, err := db.Exec(`UPDATE cases_audit SET actor_id = 'x' WHERE action = 'ack'`); err == nil {
		t.Fatal("audit row updated")
	}
	if _, _, err := s.Ack(ctx, "", fiscal, at(3, 9, 22, 2)); err == nil {
		t.Error("empty alert id accepted")
	}
}

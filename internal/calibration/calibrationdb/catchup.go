package calibrationdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/sossego/sossego/internal/ingest"
)

// CheckStore is the readings store as the register catches up from it
// (*sqlitestore.Store): its field-check batches by position, and the
// position of its last batch.
type CheckStore interface {
	ingest.StoredChecks
	LastBatchPos(ctx context.Context) (int64, error)
}

// cursorChecks names the readings-store position up to which the register
// holds every stored field check.
const cursorChecks = "readings_checks"

// CatchUp gives the register the field checks the readings store holds
// above the register's cursor, through the observer's own ObserveCheck
// (ingest.ReplayChecks), then moves the cursor to the store's last batch.
// Ingest stores a check, then hands it to the observer: a process that
// died in between left the check in the readings store only, and the next
// start recovers it here. A check the register has already is not stored
// again (checks are unique by gateway and seq), so a repeated catch-up adds
// nothing. Run it before ingest starts (central does, at open). A readings
// store whose last position is below the cursor (replaced, or emptied and
// refilled) is replayed from its start. It returns how many checks it
// added.
func (r *Register) CatchUp(ctx context.Context, src CheckStore) (int, error) {
	last, err := src.LastBatchPos(ctx)
	if err != nil {
		return 0, fmt.Errorf("calibration: catch up: %w", err)
	}
	from, err := r.cursor(ctx, cursorChecks)
	if err != nil {
		return 0, err
	}
	if last < from {
		r.o.Log.Warn("o banco de leituras recomeçou abaixo da posição já vista pelo registro de calibração; reprocessando todas as verificações de campo",
			"posicao_registro", from, "ultima_posicao_leituras", last)
		from = 0
	}
	before, err := r.countChecks(ctx)
	if err != nil {
		return 0, err
	}
	if _, err := ingest.ReplayChecks(ctx, src, from, last, r.Observer(), r.o.Log); err != nil {
		return 0, fmt.Errorf("calibration: catch up: %w", err)
	}
	after, err := r.countChecks(ctx)
	if err != nil {
		return 0, err
	}
	if _, err := r.db.ExecContext(ctx, `INSERT INTO cursors(name, position) VALUES (?, ?)
		ON CONFLICT(name) DO UPDATE SET position = excluded.position`, cursorChecks, last); err != nil {
		return 0, fmt.Errorf("calibration: catch up: cursor: %w", err)
	}
	if added := after - before; added > 0 {
		r.o.Log.Warn("verificações de campo recuperadas do banco de leituras (o serviço parou antes de registrá-las)", "quantas", added,
			"de_posicao", from, "ate_posicao", last)
	}
	return after - before, nil
}

// cursor is a named position (0: never set).
func (r *Register) cursor(ctx context.Context, name string) (int64, error) {
	var pos int64
	err := r.db.QueryRowContext(ctx, `SELECT position FROM cursors WHERE name = ?`, name).Scan(&pos)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("calibration: cursor %s: %w", name, err)
	}
	return pos, nil
}

func (r *Register) countChecks(ctx context.Context) (int, error) {
	var n int
	if err := r.db.QueryRowContext(ctx, `SELECT count(*) FROM checks`).Scan(&n); err != nil {
		return 0, fmt.Errorf("calibration: count checks: %w", err)
	}
	return n, nil
}

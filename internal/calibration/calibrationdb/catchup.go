package calibrationdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/sossego/sossego/internal/ingest"
)

// CatchUpStore is the readings store as the register catches up from it
// (*sqlitestore.Store): its field-check and levels batches by position,
// the position of a batch, and its last batch.
type CatchUpStore interface {
	ingest.StoredChecks
	ingest.StoredLevels
	LastBatchPos(ctx context.Context) (int64, error)
	LastBatch(ctx context.Context) (pos int64, gateway string, seq uint64, err error)
	BatchPos(ctx context.Context, gateway string, seq uint64) (int64, error)
}

// cursorChecks names the readings-store position up to which the register
// holds every stored field check.
const cursorChecks = "readings_checks"

// CatchUp gives the register what the readings store holds and the
// observer never handled: ingest stores a batch, then hands it to the
// observer, so a process that died in between (or a sighting that could
// not be written) left it in the readings store only. Run it before ingest
// starts (central does, at open). It returns how many field checks it
// added; the devices it recovers are logged.
//
//   - Field checks above the register's cursor go through the observer's
//     own ObserveCheck (ingest.ReplayChecks), then the cursor moves to the
//     store's last batch. A check the register has already is not stored
//     again (checks are unique by gateway and seq), so a repeated catch-up
//     adds nothing. A readings store whose last position is below the
//     cursor (replaced, or emptied and refilled) is replayed from its
//     start.
//   - The devices of the levels batches stored after the last batch the
//     observer handled (table observed, saved every observedEvery and at
//     Close) are read again (ingest.ReplayLevels), so a change of meter is
//     recorded from the batch that first reported it. A sighting is
//     written only when the device in force at its instant differs, so a
//     batch handled before the stop adds nothing.
//
// A failure of either part is returned; a failure of the second keeps what
// observed holds until the next start.
func (r *Register) CatchUp(ctx context.Context, src CatchUpStore) (int, error) {
	n, err := r.catchUpChecks(ctx, src)
	if derr := r.catchUpDevices(ctx, src); derr != nil {
		r.seenMu.Lock()
		r.seen.frozen = true
		r.seenMu.Unlock()
		err = errors.Join(err, derr)
	}
	return n, err
}

func (r *Register) catchUpChecks(ctx context.Context, src CatchUpStore) (int, error) {
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

// catchUpDevices reads again the devices of the levels batches stored
// after the last one the observer handled, then records the store's last
// batch as handled. A register without that record (new, or from before
// it was kept) starts from the store's last batch: there is nothing it
// handled to catch up after.
func (r *Register) catchUpDevices(ctx context.Context, src CatchUpStore) error {
	last, gateway, seq, err := src.LastBatch(ctx)
	if err != nil {
		return fmt.Errorf("calibration: catch up devices: %w", err)
	}
	var sgw string
	var sseq int64
	err = r.db.QueryRowContext(ctx, `SELECT gateway, seq FROM observed WHERE id = 1`).Scan(&sgw, &sseq)
	from := int64(-1)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fmt.Errorf("calibration: catch up devices: %w", err)
	default:
		if from, err = src.BatchPos(ctx, sgw, uint64(sseq)); err != nil {
			return fmt.Errorf("calibration: catch up devices: %w", err)
		}
		if from == 0 {
			r.o.Log.Warn("o último lote visto pelo registro de calibração não está mais no banco de leituras; os medidores dos lotes guardados depois dele não foram relidos",
				"gateway", sgw, "seq", sseq)
			from = -1
		}
	}
	added := 0
	if from >= 0 && last > from {
		_, err := ingest.ReplayLevels(ctx, src, from, last, func(rs []ingest.Reading) error {
			if len(rs) == 0 || !rs[0].Verified {
				return nil
			}
			s := sightingOf(rs[0])
			changed, err := r.sawAt(ctx, s)
			if err != nil {
				return err
			}
			if changed {
				added++
				r.warnMismatch(ctx, s)
			}
			return nil
		}, r.o.Log)
		if err != nil {
			return fmt.Errorf("calibration: catch up devices: %w", err)
		}
	}
	r.mu.Lock()
	err = r.loadDevices(ctx)
	r.mu.Unlock()
	if err != nil {
		return err
	}
	if last > 0 {
		if err := r.saveObserved(ctx, gateway, seq); err != nil {
			return err
		}
		r.seenMu.Lock()
		r.seen = seenBatch{gateway: gateway, seq: seq, savedAt: r.o.Now()}
		r.seenMu.Unlock()
	}
	if added > 0 {
		r.o.Log.Warn("medidores informados por lotes assinados recuperados do banco de leituras (o serviço parou antes de registrá-los)",
			"quantos", added, "depois_de", fmt.Sprintf("%s/%d", sgw, sseq))
	}
	return nil
}

package sqlitestore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

// Apply stores a group of batches, dead letters and statuses in one
// transaction. Batches already stored (same gateway and seq) are reported
// as not new and change nothing. The ack watermark of each gateway moves
// to the highest contiguous seq settled, in the same transaction: a seq is
// settled by a stored batch or by a dead letter with Settles (a batch
// rejected after it authenticated, kept with its reason).
//
// Idempotence on (gateway, seq): a settling dead letter whose seq is
// already settled changes nothing; it is not stored again when the dead
// letter that settled the seq has the same payload (a replay), and is
// stored (rejected data is never dropped) when the payload differs. An
// accepted batch whose seq was settled by a rejection is stored: its
// records are valid (the verdict may change, e.g. a sensor registered
// since or a clock corrected), and the watermark has already counted it.
func (s *Store) Apply(ctx context.Context, w store.Write) (store.Result, error) {
	if s.closed.Load() {
		return store.Result{}, store.ErrClosed
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return store.Result{}, fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	a := newApplyTx(ctx, s, tx, w)
	for _, step := range []func() error{
		a.skips,          // first: the group's batches then advance from the new watermark
		a.insertBatches,  // which of the batches are new
		a.seqConflicts,   // the not new ones with another body
		a.records,        // the new batches' level and env records
		a.gatewaysSeen,   // municipality, clock, last seen of the batches' gateways
		a.deadLetters,    // dead letters, and the seqs they settle
		a.saveWatermarks, // the watermarks and the seqs above a gap
		a.statuses,       // the status topic's reports
	} {
		if err := step(); err != nil {
			return store.Result{}, err
		}
	}
	if err := tx.Commit(); err != nil {
		return store.Result{}, fmt.Errorf("store: commit: %w", err)
	}
	return a.committed(), nil
}

// gwSeq names one batch.
type gwSeq struct {
	gw  string
	seq uint64
}

// gatewaySeen is what a group's batches tell of their gateway: its
// municipality and clock follow the last batch of the group; last_seen and
// last_seq only grow.
type gatewaySeen struct {
	municipality string
	clock        wire.Clock // encoded once, at the end
	clockOf      uint64     // the batch it came with
	at           int64
	seq          uint64
}

// applyTx is one Apply's transaction: the write, what it has learnt so far
// and the result it builds. Its steps run in the order Apply lists them.
type applyTx struct {
	ctx context.Context
	s   *Store
	tx  *sql.Tx
	w   store.Write
	res store.Result
	// marks holds, per gateway, loaded once per transaction, the watermark
	// and the settled seqs above it (seq_above, normally empty).
	marks map[string]*seqWindow
	// packs collects the level packs of the new batches, inserted together
	// after them.
	packs *packWriter
	// inserted holds the batches the insert stored; firstOf the index of
	// the first copy of each (gateway, seq) in the group.
	inserted map[gwSeq]bool
	firstOf  map[gwSeq]int
	seenBy   map[string]*gatewaySeen
	seenGWs  []string // the keys of seenBy, in the order first seen
}

func newApplyTx(ctx context.Context, s *Store, tx *sql.Tx, w store.Write) *applyTx {
	return &applyTx{
		ctx: ctx, s: s, tx: tx, w: w,
		res: store.Result{New: make([]bool, len(w.Batches)), DeadLetterNew: make([]bool, len(w.DeadLetters)),
			SeqConflict: make([]bool, len(w.Batches)), Watermarks: map[string]uint64{}},
		marks:    map[string]*seqWindow{},
		packs:    &packWriter{ctx: ctx, tx: tx, st: &s.st, sensors: map[string]*sensorTx{}, recent: s.recent, nextID: s.nextLevelID},
		inserted: make(map[gwSeq]bool, len(w.Batches)),
		firstOf:  make(map[gwSeq]int, len(w.Batches)),
		seenBy:   map[string]*gatewaySeen{},
	}
}

// stmt binds a prepared statement to the transaction.
func (a *applyTx) stmt(st *sql.Stmt) *sql.Stmt { return a.tx.StmtContext(a.ctx, st) }

// mark returns gw's window, loading it (and creating the gateways row of a
// gateway never seen) on first use.
func (a *applyTx) mark(gw string) (*seqWindow, error) {
	if m, ok := a.marks[gw]; ok {
		return m, nil
	}
	var v int64
	err := a.stmt(a.s.st.getWM).QueryRowContext(a.ctx, gw).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := a.stmt(a.s.st.insGateway).ExecContext(a.ctx, gw); err != nil {
			return nil, err
		}
		v = 0
	} else if err != nil {
		return nil, err
	}
	rows, err := a.stmt(a.s.st.aboveList).QueryContext(a.ctx, gw)
	if err != nil {
		return nil, err
	}
	var above []uint64
	for rows.Next() {
		var q int64
		if err := rows.Scan(&q); err != nil {
			rows.Close()
			return nil, err
		}
		above = append(above, uint64(q))
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	m := newSeqWindow(uint64(v), above)
	a.marks[gw] = m
	return m, nil
}

// skips moves watermarks over the seqs that will not arrive, recording each
// skip in seq_skips and the gateway's count of skipped seqs.
func (a *applyTx) skips() error {
	for _, sk := range a.w.Skips {
		m, err := a.mark(sk.Gateway)
		if err != nil {
			return fmt.Errorf("store: watermark %s: %w", sk.Gateway, err)
		}
		r, skipped, ok := m.skip(sk.Upto)
		if !ok {
			continue
		}
		if _, err := a.tx.ExecContext(a.ctx, `INSERT INTO seq_skips (gateway, first, last, at, reason) VALUES (?, ?, ?, ?, ?)`,
			sk.Gateway, int64(r.First), int64(r.Last), time.Now().UnixMilli(), sk.Reason); err != nil {
			return fmt.Errorf("store: skip %s/%d..%d: %w", sk.Gateway, r.First, r.Last, err)
		}
		if _, err := a.tx.ExecContext(a.ctx, `UPDATE gateways SET skipped_seqs = skipped_seqs + ? WHERE gateway = ?`,
			int64(skipped), sk.Gateway); err != nil {
			return fmt.Errorf("store: skip %s: %w", sk.Gateway, err)
		}
		if a.res.Skipped == nil {
			a.res.Skipped = map[string]store.SeqRange{}
		}
		a.res.Skipped[sk.Gateway] = r
	}
	return nil
}

// insertBatches inserts the batches, skipping those already stored, and
// learns which it stored.
//
// The batches go in power-of-two chunks, largest first (one statement per
// batch cost ~8 µs in database/sql and the driver). Of two copies in this
// group, the first counts. (RETURNING would answer directly but cost
// ~1.4 µs more per batch.)
func (a *applyTx) insertBatches() error {
	bs := a.w.Batches
	args := make([]any, 0, len(bs)*batchParams)
	for _, b := range bs {
		if _, err := a.mark(b.Gateway); err != nil {
			return fmt.Errorf("store: watermark %s: %w", b.Gateway, err)
		}
		args = append(args, b.Gateway, int64(b.Seq), b.Kind, b.Municipality, b.Sensor, b.Topic,
			b.Body, b.Sig, b.Verified, b.ReceivedAt.UnixMilli(), len(b.Records)+len(b.Env))
	}
	for done := 0; done < len(bs); {
		k := batchChunkLog
		for 1<<k > len(bs)-done {
			k--
		}
		n := 1 << k
		if err := a.insertChunk(k, bs[done:done+n], args[done*batchParams:(done+n)*batchParams]); err != nil {
			first := bs[done]
			return fmt.Errorf("store: insert %d batches from %s/%d: %w", n, first.Gateway, first.Seq, err)
		}
		done += n
	}
	return nil
}

// insertChunk inserts the 2^k batches bs (args their columns). A chunk
// that stored all its batches (the usual case) needs nothing more; one
// that skipped some (already stored, or twice in the group) stored the
// others under consecutive rowids ending at its last insert rowid (SQLite
// gives each new row max(rowid)+1), which are read back to learn which.
func (a *applyTx) insertChunk(k int, bs []store.Batch, args []any) error {
	r, err := a.stmt(a.s.st.insBatches[k]).ExecContext(a.ctx, args...)
	if err != nil {
		return err
	}
	stored, err := r.RowsAffected()
	if err != nil {
		return err
	}
	if stored == int64(len(bs)) {
		for _, b := range bs {
			a.inserted[gwSeq{b.Gateway, b.Seq}] = true
		}
		return nil
	}
	if stored == 0 {
		return nil
	}
	last, err := r.LastInsertId()
	if err != nil {
		return err
	}
	rows, err := a.stmt(a.s.st.batchesIn).QueryContext(a.ctx, last-stored, last)
	if err != nil {
		return err
	}
	defer rows.Close()
	got := int64(0)
	for rows.Next() {
		var gw string
		var seq int64
		if err := rows.Scan(&gw, &seq); err != nil {
			return err
		}
		a.inserted[gwSeq{gw, uint64(seq)}] = true
		got++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if got != stored {
		return fmt.Errorf("stored %d batches but found %d under rowids %d..%d", stored, got, last-stored+1, last)
	}
	return nil
}

// seqConflicts keeps as dead letters the batches not stored whose body
// differs from the stored one (or an earlier copy in this group). The same
// body again is a plain duplicate.
func (a *applyTx) seqConflicts() error {
	for i, b := range a.w.Batches {
		k := gwSeq{b.Gateway, b.Seq}
		j, seen := a.firstOf[k]
		if !seen {
			a.firstOf[k] = i
		}
		if a.inserted[k] && !seen {
			continue
		}
		var stored []byte
		if seen {
			stored = a.w.Batches[j].Body
		} else if err := a.stmt(a.s.st.getBody).QueryRowContext(a.ctx, b.Gateway, int64(b.Seq)).Scan(&stored); err != nil {
			return fmt.Errorf("store: stored body of %s/%d: %w", b.Gateway, b.Seq, err)
		}
		if bytes.Equal(stored, b.Body) {
			continue
		}
		raw := b.Raw
		if raw == nil {
			raw, _ = json.Marshal(wire.Envelope{V: wire.Version, Kid: b.Gateway, Body: b.Body, Sig: b.Sig})
		}
		if _, err := a.tx.ExecContext(a.ctx, `INSERT INTO dead_letters
			(received_at, topic, reason, message, gateway, seq, payload, truncated) VALUES (?,?,?,?,?,?,?,0)`,
			b.ReceivedAt.UnixMilli(), b.Topic, wire.ReasonSeqConflict, seqConflictMessage(b.Gateway, b.Seq),
			b.Gateway, int64(b.Seq), nonNil(raw)); err != nil {
			return fmt.Errorf("store: seq conflict %s/%d: %w", b.Gateway, b.Seq, err)
		}
		if err := countConflicts(a.ctx, a.tx, map[string]int{b.Gateway: 1}); err != nil {
			return fmt.Errorf("store: %w", err)
		}
		a.res.SeqConflict[i] = true
	}
	return nil
}

// records stores the level and env records of the new batches, settles
// their seqs, and keeps the records that conflict with stored ones.
func (a *applyTx) records() error {
	var envConflicts []pendingConflict
	insEnv := a.stmt(a.s.st.insEnv)
	for i, b := range a.w.Batches {
		k := gwSeq{b.Gateway, b.Seq}
		if !a.inserted[k] || a.firstOf[k] != i {
			continue // duplicate (gateway, seq)
		}
		a.res.New[i] = true
		ignored, err := a.packs.add(&b)
		if err != nil {
			return fmt.Errorf("store: levels of %s/%d: %w", b.Gateway, b.Seq, err)
		}
		a.res.RecordsIgnored += ignored
		cs, err := a.envRecords(insEnv, &b)
		if err != nil {
			return err
		}
		envConflicts = append(envConflicts, cs...)
		a.marks[b.Gateway].settle(b.Seq)
		a.seen(&b)
	}
	if err := a.packs.flush(); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return a.recordConflicts(append(a.packs.conflicts, envConflicts...))
}

// envRecords inserts b's env records, counting those skipped and returning
// those that differ from the record stored at the same time.
func (a *applyTx) envRecords(insEnv *sql.Stmt, b *store.Batch) ([]pendingConflict, error) {
	var conflicts []pendingConflict
	for _, e := range b.Env {
		r, err := insEnv.ExecContext(a.ctx, b.Sensor, e.T.UnixMilli(), e.TemperatureC, e.HumidityPct, e.PressureHPa, b.Gateway, int64(b.Seq))
		if err != nil {
			return nil, fmt.Errorf("store: insert env: %w", err)
		}
		if k, _ := r.RowsAffected(); k != 0 {
			continue
		}
		a.res.RecordsIgnored++
		held, differs, err := envHeld(a.ctx, a.tx, b.Sensor, e)
		if err != nil {
			return nil, fmt.Errorf("store: env of %s at %d: %w", b.Sensor, e.T.UnixMilli(), err)
		}
		if differs {
			conflicts = append(conflicts, pendingConflict{kind: wire.KindEnv, sensor: b.Sensor, t: e.T.UnixMilli(),
				kept: held, new: store.ConflictRecord{Gateway: b.Gateway, Seq: b.Seq, Record: recordJSON(e)}})
		}
	}
	return conflicts, nil
}

// seen notes what the new batch b tells of its gateway.
func (a *applyTx) seen(b *store.Batch) {
	sn := a.seenBy[b.Gateway]
	if sn == nil {
		sn = &gatewaySeen{}
		a.seenBy[b.Gateway] = sn
		a.seenGWs = append(a.seenGWs, b.Gateway)
	}
	sn.municipality, sn.clock, sn.clockOf = b.Municipality, b.Clock, b.Seq
	sn.at, sn.seq = max(sn.at, b.ReceivedAt.UnixMilli()), max(sn.seq, b.Seq)
}

// recordConflicts stores the records skipped because their sensor had a
// different one at the same start, received when the group's last batch
// was, and reports them.
func (a *applyTx) recordConflicts(conflicts []pendingConflict) error {
	if len(conflicts) == 0 {
		return nil
	}
	at := time.Now().UnixMilli()
	for _, b := range a.w.Batches {
		at = b.ReceivedAt.UnixMilli()
	}
	if err := insertConflicts(a.ctx, a.tx, conflicts, at); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	for _, c := range conflicts {
		a.res.RecordConflicts = append(a.res.RecordConflicts, store.RecordConflict{ReceivedAt: fromMilli(at), Kind: c.kind,
			Sensor: c.sensor, T: time.UnixMilli(c.t).UTC(), Kept: c.kept, New: c.new})
	}
	return nil
}

// gatewaysSeen writes what the new batches told of their gateways.
func (a *applyTx) gatewaysSeen() error {
	if len(a.seenGWs) == 0 {
		return nil
	}
	gwSeen := a.stmt(a.s.st.gwSeen)
	for _, gw := range a.seenGWs {
		sn := a.seenBy[gw]
		clock, err := json.Marshal(sn.clock)
		if err != nil {
			return fmt.Errorf("store: clock of %s/%d: %w", gw, sn.clockOf, err)
		}
		if _, err := gwSeen.ExecContext(a.ctx, sn.municipality, string(clock), sn.at, int64(sn.seq), gw); err != nil {
			return fmt.Errorf("store: gateway %s: %w", gw, err)
		}
	}
	return nil
}

// deadLetters stores the dead letters; a settling one settles its seq
// unless the seq is settled already (see Apply).
func (a *applyTx) deadLetters() error {
	for i, d := range a.w.DeadLetters {
		settles := d.Settles && d.Gateway != "" && d.Seq > 0
		settled := false
		if settles {
			// Reported in Watermarks even for a replay, so it is acked again.
			if _, err := a.mark(d.Gateway); err != nil {
				return fmt.Errorf("store: watermark %s: %w", d.Gateway, err)
			}
			var replay bool
			var err error
			if settled, replay, err = a.settledBefore(&d); err != nil {
				return err
			}
			if replay {
				continue
			}
		}
		r, err := a.tx.ExecContext(a.ctx, `INSERT INTO dead_letters
			(received_at, topic, reason, message, gateway, seq, payload, truncated) VALUES (?,?,?,?,?,?,?,?)`,
			d.ReceivedAt.UnixMilli(), d.Topic, d.Reason, d.Message, d.Gateway, int64(d.Seq), nonNil(d.Payload), d.Truncated)
		if err != nil {
			return fmt.Errorf("store: insert dead letter: %w", err)
		}
		a.res.DeadLetterNew[i] = true
		if !settles || settled {
			continue
		}
		id, err := r.LastInsertId()
		if err != nil {
			return fmt.Errorf("store: dead letter id: %w", err)
		}
		if _, err := a.tx.ExecContext(a.ctx, `INSERT INTO settled (gateway, seq, dead_letter) VALUES (?, ?, ?)`,
			d.Gateway, int64(d.Seq), id); err != nil {
			return fmt.Errorf("store: settle %s/%d: %w", d.Gateway, d.Seq, err)
		}
		a.marks[d.Gateway].settle(d.Seq)
	}
	return nil
}

// settledBefore reports whether the settling dead letter d's seq is
// settled already, by a dead letter or a stored batch, and whether d is a
// replay of the dead letter that settled it (same payload).
func (a *applyTx) settledBefore(d *store.DeadLetter) (settled, replay bool, err error) {
	var payload []byte
	var trunc bool
	err = a.tx.QueryRowContext(a.ctx, `SELECT d.payload, d.truncated FROM settled s JOIN dead_letters d ON d.id = s.dead_letter
		WHERE s.gateway = ? AND s.seq = ?`, d.Gateway, int64(d.Seq)).Scan(&payload, &trunc)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return false, false, fmt.Errorf("store: settled %s/%d: %w", d.Gateway, d.Seq, err)
	case trunc == d.Truncated && bytes.Equal(payload, nonNil(d.Payload)):
		return true, true, nil
	default:
		return true, false, nil
	}
	err = a.tx.QueryRowContext(a.ctx, `SELECT 1 FROM batches WHERE gateway = ? AND seq = ?`, d.Gateway, int64(d.Seq)).Scan(new(int))
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, false, fmt.Errorf("store: batch %s/%d: %w", d.Gateway, d.Seq, err)
	}
	return err == nil, false, nil
}

// saveWatermarks writes the watermarks that moved and the difference in
// each gateway's settled seqs above a gap.
func (a *applyTx) saveWatermarks() error {
	var gwWatermark *sql.Stmt
	for gw, m := range a.marks {
		if !m.moved {
			continue
		}
		if gwWatermark == nil {
			gwWatermark = a.stmt(a.s.st.gwWatermark)
		}
		if _, err := gwWatermark.ExecContext(a.ctx, int64(m.mark), gw); err != nil {
			return fmt.Errorf("store: watermark %s: %w", gw, err)
		}
	}
	for gw, m := range a.marks {
		removed, added := m.changes()
		for _, q := range removed {
			if _, err := a.stmt(a.s.st.aboveDel).ExecContext(a.ctx, gw, int64(q)); err != nil {
				return fmt.Errorf("store: watermark %s: %w", gw, err)
			}
		}
		for _, q := range added {
			if _, err := a.stmt(a.s.st.aboveIns).ExecContext(a.ctx, gw, int64(q)); err != nil {
				return fmt.Errorf("store: watermark %s: %w", gw, err)
			}
		}
	}
	return nil
}

// statuses writes the status topic's reports to the gateways' rows.
func (a *applyTx) statuses() error {
	for _, st := range a.w.Statuses {
		if _, err := a.mark(st.Gateway); err != nil {
			return fmt.Errorf("store: gateway %s: %w", st.Gateway, err)
		}
		var clock, outbox any
		if st.Clock != nil {
			b, _ := json.Marshal(st.Clock)
			clock = string(b)
		}
		if st.Outbox != nil {
			b, _ := json.Marshal(st.Outbox)
			outbox = string(b)
		}
		if _, err := a.tx.ExecContext(a.ctx, `UPDATE gateways SET municipality = ?, state = ?, at = ?, received_at = ?,
			clock = COALESCE(?, clock), outbox = COALESCE(?, outbox), version = ? WHERE gateway = ?`,
			st.Municipality, st.State, unixMilli(st.At), unixMilli(st.ReceivedAt), clock, outbox, st.Version, st.Gateway); err != nil {
			return fmt.Errorf("store: status %s: %w", st.Gateway, err)
		}
	}
	return nil
}

// committed updates what the store keeps between transactions, wakes the
// readers waiting for records, and returns the result.
func (a *applyTx) committed() store.Result {
	a.packs.committed()
	a.s.nextLevelID = a.packs.nextID
	for gw, m := range a.marks {
		a.res.Watermarks[gw] = m.mark
		if low, ok := m.lowestAbove(); ok {
			if a.res.LowestAbove == nil {
				a.res.LowestAbove = map[string]uint64{}
			}
			a.res.LowestAbove[gw] = low
		}
	}
	if a.packs.stored {
		select {
		case a.s.notify <- struct{}{}:
		default:
		}
	}
	return a.res
}

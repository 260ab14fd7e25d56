package sqlitestore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sossego/sossego/internal/level"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

// Level records are stored in packs: one row of level_packs per accepted
// batch (two or more when its records span packSpan or more), holding the
// records in a compact binary form (encodePack). One 14-column row and one
// index entry per 1-s record was most of the ingest's CPU with the
// gateway's 10-record batches; a pack costs about one row per batch, and a
// quarter of the bytes.
//
// Every record still has its own id: a pack's id is its last record's,
// and its records are id−n+1 … id in time order. Ids are given by Apply
// from sqlite_sequence (the table is AUTOINCREMENT), so they only grow,
// even after retention deleted the newest packs, and the InfluxDB mirror's
// cursor (a record id) keeps its meaning. A database from before packs has
// a levels table with one row per record; Open moves each row into a
// one-record pack under the same id (migrateLevels).
//
// (sensor, t) stays unique: Apply skips a record whose sensor already has
// one with the same start time, as the unique index of the levels table
// did. Batches mostly arrive in time order per sensor, so Apply first asks
// whether a batch starts after everything the sensor has; the store
// remembers the spans of each sensor's last packs between transactions
// (sensorRecent) and asks SQLite only about a batch that overlaps one of
// them or is older than all of them.

const (
	// packSpan bounds t1 − t0 of a pack: the packs holding records that
	// start in [from, to) have t1 in [from, to + packSpan), which the index
	// on (sensor, t1, t0) finds. The gateway's batches span 10 s.
	packSpan     = 10 * time.Minute
	packFormat   = 1 // first byte of a pack's data
	packParams   = 10
	packChunkLog = 6 // up to 64 packs per INSERT

	flagOverload = 1
	flagLCpeak   = 2
	flagHist     = 4
)

const packsSchema = `
CREATE TABLE IF NOT EXISTS level_packs (
	id      INTEGER PRIMARY KEY AUTOINCREMENT, -- id of the pack's last record
	sensor  TEXT    NOT NULL,
	t0      INTEGER NOT NULL, -- earliest record start, Unix ms
	t1      INTEGER NOT NULL, -- latest record start, Unix ms (t1 - t0 < packSpan)
	n       INTEGER NOT NULL, -- records; their ids are id - n + 1 … id
	gateway TEXT    NOT NULL,
	seq     INTEGER NOT NULL,
	grade   TEXT    NOT NULL,
	synced  INTEGER NOT NULL,
	data    BLOB    NOT NULL  -- the records (encodePack)
);
CREATE INDEX IF NOT EXISTS level_packs_sensor_t1 ON level_packs (sensor, t1, t0);
`

func insertPacksSQL(rows int) string {
	row := "(" + strings.Repeat("?,", packParams-1) + "?)"
	return `INSERT INTO level_packs (id, sensor, t0, t1, n, gateway, seq, grade, synced, data)
		VALUES ` + strings.Repeat(row+",", rows-1) + row
}

// encodePack appends the records (sorted by T, distinct) to dst, each as:
// uvarint start − t0 (ms), uvarint dur_ms, LAeq, LAFmax and LAFmin as
// float64 bits (little endian), a flags byte, then LCpeak's bits if
// flagLCpeak, then the histogram's JSON with a uvarint length if flagHist.
func encodePack(dst []byte, recs []wire.Record, t0 int64) ([]byte, error) {
	dst = append(dst, packFormat)
	for _, r := range recs {
		dt := r.T.UnixMilli() - t0
		if dt < 0 || r.DurMs < 0 {
			return nil, fmt.Errorf("pack: record at %s before the pack's start or with dur_ms %d", r.T, r.DurMs)
		}
		dst = binary.AppendUvarint(dst, uint64(dt))
		dst = binary.AppendUvarint(dst, uint64(r.DurMs))
		for _, v := range []float64{r.LAeq, r.LAFmax, r.LAFmin} {
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
		}
		var flags byte
		if r.Overload {
			flags |= flagOverload
		}
		if r.LCpeak != nil {
			flags |= flagLCpeak
		}
		if r.Hist != nil {
			flags |= flagHist
		}
		dst = append(dst, flags)
		if r.LCpeak != nil {
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(*r.LCpeak))
		}
		if r.Hist != nil {
			h, err := json.Marshal(r.Hist)
			if err != nil {
				return nil, fmt.Errorf("pack: histogram: %w", err)
			}
			dst = binary.AppendUvarint(dst, uint64(len(h)))
			dst = append(dst, h...)
		}
	}
	return dst, nil
}

var errPack = errors.New("malformed level pack")

// packMeta is a pack row without its data.
type packMeta struct {
	id, t0, n    int64
	sensor, gw   string
	seq          uint64
	grade        string
	synced       bool
	withoutHists bool // skip decoding histograms (only times wanted)
}

// decodePack appends the pack's records to out, with their ids. It checks
// the format and that the data holds exactly m.n records.
func decodePack(out []store.Record, m packMeta, data []byte) ([]store.Record, error) {
	if len(data) == 0 || data[0] != packFormat {
		return out, fmt.Errorf("store: level pack %d: %w: unknown format", m.id, errPack)
	}
	p := data[1:]
	uvarint := func() (uint64, bool) {
		v, k := binary.Uvarint(p)
		if k <= 0 {
			return 0, false
		}
		p = p[k:]
		return v, true
	}
	f64 := func() (float64, bool) {
		if len(p) < 8 {
			return 0, false
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64(p))
		p = p[8:]
		return v, true
	}
	bad := func(i int64, what string) error {
		return fmt.Errorf("store: level pack %d, record %d: %w: %s", m.id, i, errPack, what)
	}
	for i := range m.n {
		r := store.Record{ID: m.id - m.n + 1 + i, Sensor: m.sensor, Gateway: m.gw, Seq: m.seq, Grade: m.grade, Synced: m.synced}
		dt, ok1 := uvarint()
		dur, ok2 := uvarint()
		if !ok1 || !ok2 || dt > math.MaxInt64/2 || dur > math.MaxInt64/2 {
			return out, bad(i, "time or duration")
		}
		r.T, r.DurMs = time.UnixMilli(m.t0+int64(dt)).UTC(), int64(dur)
		var ok3, ok4, ok5 bool
		r.LAeq, ok3 = f64()
		r.LAFmax, ok4 = f64()
		r.LAFmin, ok5 = f64()
		if !ok3 || !ok4 || !ok5 || len(p) == 0 {
			return out, bad(i, "levels")
		}
		flags := p[0]
		p = p[1:]
		if flags&^(flagOverload|flagLCpeak|flagHist) != 0 {
			return out, bad(i, "flags")
		}
		r.Overload = flags&flagOverload != 0
		if flags&flagLCpeak != 0 {
			v, ok := f64()
			if !ok {
				return out, bad(i, "LCpeak")
			}
			r.LCpeak = &v
		}
		if flags&flagHist != 0 {
			k, ok := uvarint()
			if !ok || k > uint64(len(p)) {
				return out, bad(i, "histogram length")
			}
			if !m.withoutHists {
				h, err := decodeHist(p[:k])
				if err != nil {
					return out, bad(i, "histogram: "+err.Error())
				}
				r.Hist = &h
			}
			p = p[k:]
		}
		out = append(out, r)
	}
	if len(p) != 0 {
		return out, fmt.Errorf("store: level pack %d: %w: %d bytes after %d records", m.id, errPack, len(p), m.n)
	}
	return out, nil
}

// packCols are the columns scanPacks reads, in its order.
const packCols = `id, sensor, gateway, seq, grade, synced, t0, n, data`

// scanPacks decodes every pack of rows, in row order.
func scanPacks(rows *sql.Rows, withoutHists bool) ([]store.Record, error) {
	defer rows.Close()
	var out []store.Record
	for rows.Next() {
		var m packMeta
		var seq int64
		var data []byte
		if err := rows.Scan(&m.id, &m.sensor, &m.gw, &seq, &m.grade, &m.synced, &m.t0, &m.n, &data); err != nil {
			return nil, fmt.Errorf("store: scan level pack: %w", err)
		}
		m.seq, m.withoutHists = uint64(seq), withoutHists
		var err error
		if out, err = decodePack(out, m, data); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: read level packs: %w", err)
	}
	return out, nil
}

// packWriter builds the packs of one Apply transaction.
type packWriter struct {
	ctx     context.Context
	tx      *sql.Tx
	st      *writeStmts
	sensors map[string]*sensorTx
	recent  map[string]*sensorRecent // Store.recent, updated by committed
	nextID  int64                    // id of the next record; 0 until read
	pending []any                    // arguments of packs not inserted yet
	npend   int
	stored  bool // some pack was inserted
	scratch []wire.Record
	// conflicts are the records skipped because their sensor had a
	// different one at the same start (conflicts.go).
	conflicts []pendingConflict
}

// sensorTx is what a transaction knows of one sensor's records.
type sensorTx struct {
	latest int64    // latest start stored before the transaction (math.MinInt64: none)
	top    int64    // latest start packed in the transaction (math.MinInt64: none)
	packs  []txPack // the transaction's packs, for the rare batch that overlaps one
	// floor and before come from SQLite.recent: every pack stored before
	// the transaction has its span in before or t1 <= floor.
	floor  int64
	before *sensorRecent // nil: nothing remembered
}

type txPack struct {
	t0, t1, n int64
	data      []byte
	gw        string
	seq       uint64
}

// span is a stored pack's first and last record start.
type span struct{ t0, t1 int64 }

// sensorRecent is what the store remembers of a sensor between
// transactions: the spans of its last recentPacks packs, in a ring (no
// pointers, so the garbage collector does not scan it). Batches reach the
// writer a little out of order (two workers), so a batch often starts
// before the sensor's latest stored record without overlapping any; that
// is told here instead of by SQLite, which is asked only when a span
// overlaps. Every other stored pack has t1 <= floor.
type sensorRecent struct {
	floor  int64
	latest int64 // the greatest t1 of floor and the spans
	spans  [recentPacks]span
	n      int // spans in use
	next   int // where the next span goes
}

// recentPacks is ~1 s of full-rate ingest per sensor (4 sensors, 20k
// batches/s); 4 KiB per sensor.
const recentPacks = 256

func (r *sensorRecent) push(sp span) {
	if r.n == recentPacks {
		r.floor = max(r.floor, r.spans[r.next].t1)
	} else {
		r.n++
	}
	r.spans[r.next] = sp
	r.next = (r.next + 1) % recentPacks
	r.latest = max(r.latest, sp.t1)
}

func (r *sensorRecent) overlaps(first, last int64) bool {
	for _, sp := range r.spans[:r.n] {
		if sp.t1 >= first && sp.t0 <= last {
			return true
		}
	}
	return false
}

// add packs the records of an accepted levels batch that its sensor has no
// record for yet, and returns how many it skipped. A skipped record that
// differs from the one stored is a conflict (w.conflicts); an identical
// one is a plain duplicate.
func (w *packWriter) add(b *store.Batch) (ignored int, err error) {
	if len(b.Records) == 0 {
		return 0, nil
	}
	recs := b.Records
	if !sortedDistinct(recs) {
		recs = append(w.scratch[:0], recs...)
		slices.SortStableFunc(recs, func(x, y wire.Record) int { return x.T.Compare(y.T) })
		// Of records with the same start, the first in the batch counts.
		recs = slices.CompactFunc(recs, func(x, y wire.Record) bool { return x.T.Equal(y.T) })
		w.scratch = recs[:0]
		ignored = len(b.Records) - len(recs)
	}
	st, err := w.sensor(b.Sensor)
	if err != nil {
		return 0, err
	}
	// Usually the records are later than any stored or packed before
	// (batches reach the writer in about the order they were sent).
	first, last := recs[0].T.UnixMilli(), recs[len(recs)-1].T.UnixMilli()
	if first <= st.latest || first <= st.top {
		have := map[int64]heldRecord{}
		switch {
		case first <= st.floor:
			if err := w.storedStarts(have, b.Sensor, first, last); err != nil {
				return 0, err
			}
		case first <= st.latest && st.before != nil && st.before.overlaps(first, last):
			// A remembered pack overlaps: its records are in SQLite.
			if err := w.storedStarts(have, b.Sensor, first, last); err != nil {
				return 0, err
			}
		}
		if err := packedStarts(have, st.packs, first, last); err != nil {
			return 0, err
		}
		if &recs[0] == &b.Records[0] {
			recs = append(w.scratch[:0], recs...) // about to filter: not the batch's own slice
			w.scratch = recs[:0]
		}
		n := len(recs)
		recs = slices.DeleteFunc(recs, func(r wire.Record) bool {
			held, ok := have[r.T.UnixMilli()]
			if ok && !sameRecord(held.rec, r) {
				w.conflicts = append(w.conflicts, levelConflict(b.Sensor, held, b, r))
			}
			return ok
		})
		ignored += n - len(recs)
	}
	for len(recs) > 0 {
		t0 := recs[0].T.UnixMilli()
		k := 1
		for k < len(recs) && recs[k].T.UnixMilli()-t0 < packSpan.Milliseconds() {
			k++
		}
		if err := w.pack(b, st, recs[:k]); err != nil {
			return 0, err
		}
		recs = recs[k:]
	}
	return ignored, nil
}

// packedStarts adds to have the records starting in [first, last] of packs.
func packedStarts(have map[int64]heldRecord, packs []txPack, first, last int64) error {
	for _, p := range packs {
		if p.t1 < first || p.t0 > last {
			continue
		}
		packed, err := decodePack(nil, packMeta{n: p.n, t0: p.t0}, p.data)
		if err != nil {
			return err
		}
		for _, r := range packed {
			if ms := r.T.UnixMilli(); ms >= first && ms <= last {
				have[ms] = heldRecord{gw: p.gw, seq: p.seq, rec: wireRecord(r)}
			}
		}
	}
	return nil
}

// sortedDistinct reports whether the records' starts strictly increase.
func sortedDistinct(recs []wire.Record) bool {
	for i := 1; i < len(recs); i++ {
		if !recs[i-1].T.Before(recs[i].T) {
			return false
		}
	}
	return true
}

func (w *packWriter) pack(b *store.Batch, st *sensorTx, recs []wire.Record) error {
	if w.nextID == 0 {
		var seq sql.NullInt64
		err := w.tx.StmtContext(w.ctx, w.st.levelSeq).QueryRowContext(w.ctx).Scan(&seq)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("level ids: %w", err)
		}
		w.nextID = seq.Int64 + 1
	}
	t0, t1 := recs[0].T.UnixMilli(), recs[len(recs)-1].T.UnixMilli()
	data, err := encodePack(make([]byte, 0, 1+32*len(recs)), recs, t0)
	if err != nil {
		return err
	}
	id := w.nextID + int64(len(recs)) - 1
	w.nextID = id + 1
	w.pending = append(w.pending, id, b.Sensor, t0, t1, len(recs), b.Gateway, int64(b.Seq), b.Device.Grade, b.Clock.Synced, data)
	w.npend++
	st.top = max(st.top, t1)
	st.packs = append(st.packs, txPack{t0: t0, t1: t1, n: int64(len(recs)), data: data, gw: b.Gateway, seq: b.Seq})
	return nil
}

// sensor returns the transaction's view of a sensor: from the store's
// memory of its recent packs, or, the first time, the latest record start
// it has in SQLite.
func (w *packWriter) sensor(sensor string) (*sensorTx, error) {
	if st, ok := w.sensors[sensor]; ok {
		return st, nil
	}
	if r, ok := w.recent[sensor]; ok {
		st := &sensorTx{latest: r.latest, top: math.MinInt64, floor: r.floor, before: r}
		w.sensors[sensor] = st
		return st, nil
	}
	var v sql.NullInt64
	err := w.tx.StmtContext(w.ctx, w.st.levelLatest).QueryRowContext(w.ctx, sensor).Scan(&v)
	if err != nil {
		return nil, fmt.Errorf("latest record of %s: %w", sensor, err)
	}
	st := &sensorTx{latest: math.MinInt64, top: math.MinInt64}
	if v.Valid {
		st.latest = v.Int64
	}
	st.floor = st.latest
	w.sensors[sensor] = st
	return st, nil
}

// committed moves the spans of the transaction's packs into the store's
// memory of recent packs; call it once the transaction is committed.
func (w *packWriter) committed() {
	for sensor, st := range w.sensors {
		r := st.before
		if r == nil {
			r = &sensorRecent{floor: st.floor, latest: st.floor}
			w.recent[sensor] = r
		}
		for _, p := range st.packs {
			r.push(span{p.t0, p.t1})
		}
	}
}

// storedStarts adds to have the records starting in [first, last] that
// sensor had before this transaction.
func (w *packWriter) storedStarts(have map[int64]heldRecord, sensor string, first, last int64) error {
	rows, err := w.tx.StmtContext(w.ctx, w.st.levelStarts).QueryContext(w.ctx, sensor, first, last+packSpan.Milliseconds(), last)
	if err != nil {
		return fmt.Errorf("stored records of %s: %w", sensor, err)
	}
	recs, err := scanPacks(rows, false)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if ms := r.T.UnixMilli(); ms >= first && ms <= last {
			have[ms] = heldRecord{gw: r.Gateway, seq: r.Seq, rec: wireRecord(r)}
		}
	}
	return nil
}

// flush inserts the pending packs in power-of-two chunks, largest first.
func (w *packWriter) flush() error {
	for done := 0; done < w.npend; {
		k := packChunkLog
		for 1<<k > w.npend-done {
			k--
		}
		n := 1 << k
		if _, err := w.tx.StmtContext(w.ctx, w.st.insPacks[k]).ExecContext(w.ctx, w.pending[done*packParams:(done+n)*packParams]...); err != nil {
			return fmt.Errorf("insert %d level packs: %w", n, err)
		}
		done += n
		w.stored = true
	}
	w.pending, w.npend = w.pending[:0], 0
	return nil
}

// migrateLevels moves the rows of a levels table (one row per record,
// before packs) into one-record packs under the same ids, and drops the
// table. It does nothing on a current database. It logs its start (with
// the rows to move), its progress every 10 s and its end: on a large table
// the service's first start waits for it.
func migrateLevels(ctx context.Context, tx *sql.Tx, log *slog.Logger) error {
	var name string
	err := tx.QueryRowContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'levels'`).Scan(&name)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("look for a levels table: %w", err)
	}
	var total int64
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM levels`).Scan(&total); err != nil {
		return fmt.Errorf("migrate levels: count rows: %w", err)
	}
	began := time.Now()
	log.Info("convertendo leituras para o formato compacto; o serviço inicia ao terminar", "leituras", total)
	ins, err := tx.PrepareContext(ctx, insertPacksSQL(1))
	if err != nil {
		return fmt.Errorf("migrate levels: %w", err)
	}
	defer ins.Close()
	const chunk = 10000
	var after int64
	moved, lastLog := 0, began
	for {
		got, err := readLevelRows(ctx, tx, after, chunk)
		if err != nil {
			return fmt.Errorf("migrate levels: read: %w", err)
		}
		for _, r := range got {
			data, err := encodePack(nil, []wire.Record{r.rec}, r.t)
			if err != nil {
				return fmt.Errorf("migrate levels: row %d: %w", r.id, err)
			}
			if _, err := ins.ExecContext(ctx, r.id, r.sensor, r.t, r.t, 1, r.gw, r.seq, r.grade, r.synced, data); err != nil {
				return fmt.Errorf("migrate levels: row %d: %w", r.id, err)
			}
			after = r.id
		}
		moved += len(got)
		if len(got) < chunk {
			break
		}
		if time.Since(lastLog) >= 10*time.Second {
			lastLog = time.Now()
			log.Info("convertendo leituras", "convertidas", moved, "de", total)
		}
	}
	if _, err := tx.ExecContext(ctx, `DROP TABLE levels`); err != nil {
		return fmt.Errorf("migrate levels: drop the old table: %w", err)
	}
	log.Info("leituras convertidas", "leituras", moved, "duracao", time.Since(began).Round(time.Millisecond).String())
	return nil
}

// levelRow is one row of the levels table of the release before packs.
type levelRow struct {
	id, seq, t        int64
	sensor, gw, grade string
	synced            bool
	rec               wire.Record
}

// readLevelRows reads up to limit rows of the levels table with id > after,
// in id order.
func readLevelRows(ctx context.Context, tx *sql.Tx, after int64, limit int) ([]levelRow, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, sensor, gateway, seq, t, dur_ms, laeq, lafmax, lafmin, lcpeak, overload, grade, synced, hist
		FROM levels WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var got []levelRow
	for rows.Next() {
		var r levelRow
		var lcpeak sql.NullFloat64
		var hist []byte
		if err := rows.Scan(&r.id, &r.sensor, &r.gw, &r.seq, &r.t, &r.rec.DurMs, &r.rec.LAeq, &r.rec.LAFmax, &r.rec.LAFmin,
			&lcpeak, &r.rec.Overload, &r.grade, &r.synced, &hist); err != nil {
			return nil, err
		}
		r.rec.T = time.UnixMilli(r.t)
		if lcpeak.Valid {
			v := lcpeak.Float64
			r.rec.LCpeak = &v
		}
		if len(hist) > 0 {
			var h level.Histogram
			if json.Unmarshal(hist, &h) == nil { // as the levels table's reader did
				r.rec.Hist = &h
			}
		}
		got = append(got, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return got, rows.Close()
}

// decodeHist is json.Unmarshal of a stored histogram, with the form
// encodePack writes ({"bins":{"612":100,"613":250.5}}: bins as decimal
// digits, values as plain decimals) read in one pass; anything else goes
// to json.Unmarshal. Either way the result is the same (FuzzDecodeHist).
func decodeHist(b []byte) (level.Histogram, error) {
	if h, ok := plainHist(b); ok {
		return h, nil
	}
	var h level.Histogram
	err := json.Unmarshal(b, &h)
	return h, err
}

func plainHist(b []byte) (level.Histogram, bool) {
	const head, tail = `{"bins":{`, `}}`
	if !bytes.HasPrefix(b, []byte(head)) || !bytes.HasSuffix(b, []byte(tail)) {
		return level.Histogram{}, false
	}
	body := b[len(head) : len(b)-len(tail)]
	h := level.Histogram{Bins: make(map[int]float64, bytes.Count(body, []byte(":")))}
	for len(body) > 0 {
		// "digits":value then a comma unless last
		if body[0] != '"' {
			return level.Histogram{}, false
		}
		j := 1
		bin := 0
		for j < len(body) && j <= 7 && body[j] >= '0' && body[j] <= '9' {
			bin = bin*10 + int(body[j]-'0')
			j++
		}
		if j == 1 || j+1 >= len(body) || body[j] != '"' || body[j+1] != ':' {
			return level.Histogram{}, false
		}
		body = body[j+2:]
		end := bytes.IndexByte(body, ',')
		if end < 0 {
			end = len(body)
		}
		v, ok := plainNumber(body[:end])
		if !ok {
			return level.Histogram{}, false
		}
		h.Bins[bin] = v
		body = body[end:]
		if len(body) > 0 {
			body = body[1:] // the comma
			if len(body) == 0 {
				return level.Histogram{}, false // a trailing comma
			}
		}
	}
	return h, true
}

// plainNumber reads a JSON number of the plain kinds: an integer of up to
// 15 digits (exact in a float64) or digits '.' digits (ParseFloat).
func plainNumber(s []byte) (float64, bool) {
	if len(s) == 0 || len(s) > 24 || (s[0] == '0' && len(s) > 1 && s[1] != '.') {
		return 0, false
	}
	var n uint64
	for i, c := range s {
		switch {
		case c >= '0' && c <= '9':
			n = n*10 + uint64(c-'0')
		case c == '.' && i > 0 && i < len(s)-1:
			for _, d := range s[i+1:] {
				if d < '0' || d > '9' {
					return 0, false
				}
			}
			v, err := strconv.ParseFloat(string(s), 64)
			return v, err == nil
		default:
			return 0, false
		}
	}
	if len(s) > 15 {
		return 0, false
	}
	return float64(n), true
}

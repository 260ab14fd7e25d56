// Package evidence writes and verifies the evidence package of an alert: a
// zipped BagIt bag (RFC 8493) that an independent perito can check alone,
// with the sossego CLI or with standard tools (sha256sum, openssl).
//
// Layout (everything under one top directory, evidencia-<alert>/):
//
//	bagit.txt                   BagIt-Version 1.0, UTF-8
//	bag-info.txt                who, what, when; the chain of custody; the signing key and its fingerprint;
//	                            the margin; the hash of the earlier bag of the same case, if any
//	manifest-sha256.txt         SHA-256 of every payload file
//	tagmanifest-sha256.txt      SHA-256 of every tag file (bagit.txt, bag-info.txt, manifest-sha256.txt, VERIFICAR.txt)
//	tagmanifest-sha256.txt.sig  ed25519 signature (base64) over tagmanifest-sha256.txt
//	VERIFICAR.txt               how to check the bag, with the exact commands (pt-BR)
//	data/LEIAME.txt             what each file is (pt-BR)
//	data/METODO.txt             how the measurement was made and what it does and does not establish (pt-BR)
//	data/readings.csv           every 1-s record of the window ± the margin
//	data/env.csv                temperature, humidity and pressure readings of the same span
//	data/summary.json           energy-correct summary: LAeq, LAFmax, L10, L90, limit, margin, exceedance
//	data/rule.json              the rule: code version, article, quoted text, limit
//	data/device.json            measuring point; the meter (model, serial, grade, calibration, field check)
//	                            as registered and as the signed batches report it; clock-sync state
//	data/batches.ndjson         one line per signed batch: received_at, key, verdicts, device, clock
//	data/batches.txt            "gateway seq received_at key-file signature-base64 body", one per batch (the body as signed, or "base64:" and its base64)
//	data/keys/service.json      the service's public key, fingerprint and key history
//	data/keys/service.pem       the service's public key for openssl
//	data/keys/gateways.json     every gateway key as registered when the batches were received, with validity
//	data/keys/<gateway>-<n>.pem each gateway key for openssl
//	data/verificar-lotes.sh     re-checks every batch signature with openssl (POSIX sh, ≤ 20 lines)
//	data/custody.json           the audit trail of the case (who, when, what)
//	data/acts/index.json        the acts of the case as issued (id, kind, issue time, SHA-256)
//	data/acts/<name>.pdf        each act's stored PDF, byte for byte
//	data/constatacoes/<id>.json each constatação record
//	data/calibration/<file>     the calibration certificate, when uploaded
//	data/notice.pdf             only when the case has no stored act: the draft as rendered (marked so)
//	data/chart.png              the readings around the event with the limit line
//
// The signature covers the tag manifest, which covers bag-info.txt and the
// payload manifest, which covers every payload byte. The zip is
// deterministic: members in a fixed order, every time the bag's date (the
// case's last act), no zip comment; the same case state gives the same bytes.
package evidence

import (
	"archive/zip"
	"bufio"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	kflate "github.com/klauspost/compress/flate"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/internal/level"
	"github.com/sossego/sossego/internal/tz"
)

// Record is one stored 1-s level record.
type Record struct {
	T        time.Time
	DurMs    int64
	LAeq     float64
	LAFmax   float64
	LAFmin   float64
	LCpeak   *float64
	Overload bool
	Gateway  string
	Seq      uint64 // the batch that carried it
	Grade    string
	Synced   bool // gateway clock synchronised when the batch was built
	Hist     *level.Histogram
}

// EnvReading is one stored environmental reading; nil: not measured.
type EnvReading struct {
	T            time.Time
	Gateway      string
	Seq          uint64
	TemperatureC *float64
	HumidityPct  *float64
	PressureHPa  *float64
}

// Batch is one raw signed batch as received.
type Batch struct {
	Gateway          string
	Seq              uint64
	Body             []byte // exact signed bytes
	Sig              []byte
	VerifiedAtIngest bool
	ReceivedAt       time.Time // picks the gateway key in force (Package.GatewayKeys)
}

// BatchKey names a batch.
type BatchKey struct {
	Gateway string
	Seq     uint64
}

// GatewayKey is one of a gateway's keys with the time it was in force,
// [ValidFrom, ValidUntil); a zero bound is open.
type GatewayKey struct {
	Gateway    string
	PublicKey  ed25519.PublicKey
	ValidFrom  time.Time
	ValidUntil time.Time
	Revoked    bool
	Reason     string
}

func (k GatewayKey) covers(t time.Time) bool {
	return (k.ValidFrom.IsZero() || !t.Before(k.ValidFrom)) && (k.ValidUntil.IsZero() || t.Before(k.ValidUntil))
}

// Meter is the instrument behind the readings, as the register of meters
// keeps it.
type Meter struct {
	Model       string       `json:"model,omitempty"`
	Serial      string       `json:"serial,omitempty"`
	Grade       string       `json:"grade"`
	Calibration *Calibration `json:"calibration,omitempty"`
	FieldCheck  *FieldCheck  `json:"field_check,omitempty"`
	// Checks are the signed field-check messages (wire kind "check") the
	// bag carries, as received: the last one made by the window's start
	// and the first one after it. They go in data/checks.txt.
	Checks []Batch `json:"-"`
	// Source says where these data come from (e.g. "cadastro de sensores").
	Source string `json:"source,omitempty"`
	// Indicative is set when the register says the readings cannot ground
	// an act (expired calibration, serial mismatch…), with why.
	Indicative    bool   `json:"indicative,omitempty"`
	IndicativeWhy string `json:"indicative_why,omitempty"`
}

// Calibration is the meter's calibration certificate.
type Calibration struct {
	Certificate   string   `json:"certificate,omitempty"`
	Laboratory    string   `json:"laboratory,omitempty"`
	Date          string   `json:"date,omitempty"`   // YYYY-MM-DD
	Expiry        string   `json:"expiry,omitempty"` // YYYY-MM-DD
	UncertaintyDB *float64 `json:"uncertainty_db,omitempty"`
	FileName      string   `json:"file,omitempty"` // data/calibration/<FileName>, when File is set
	File          []byte   `json:"-"`
}

// FieldCheck is the last check of the meter with an acoustic calibrator.
type FieldCheck struct {
	At          time.Time `json:"at"`
	ReferenceDB float64   `json:"reference_db"`
	MeasuredDB  float64   `json:"measured_db"`
	FrequencyHz float64   `json:"frequency_hz,omitempty"`
}

// Act is one act of the case as issued: its stored PDF, byte for byte.
type Act struct {
	ID       string
	Kind     string // e.g. notificacao_preliminar, auto_de_infracao
	Name     string // file name under data/acts/ (sanitised; default <ID>.pdf)
	IssuedAt time.Time
	PDF      []byte
	// SHA256 is the digest the case store kept when the act was issued
	// (hex); Export refuses an act whose bytes no longer match it.
	SHA256 string
}

// Constatacao is one constatação record of the case (JSON as stored).
type Constatacao struct {
	ID   string
	At   time.Time
	JSON []byte
}

// Custody is one event of the chain of custody.
type Custody struct {
	At     time.Time `json:"at"`
	Actor  string    `json:"actor"`
	Role   string    `json:"role,omitempty"`
	Action string    `json:"action"`
	Detail string    `json:"detail,omitempty"`
}

// Previous names the earlier bag of the same case.
type Previous struct {
	SHA256 string    // of the earlier zip
	Date   time.Time // its bag date
}

// Package is everything the bag holds.
type Package struct {
	AlertID      string
	Organization string // e.g. "Prefeitura Municipal de Lapa"
	CodeTitle    string // "Lei nº 1783/2004 (Lapa/PR)"
	Finding      notice.Finding
	Party        notice.Party
	Site         notice.Site
	Meter        Meter
	From, To     time.Time     // exported range: the window ± Margin
	Margin       time.Duration // stated in bag-info.txt and METODO.txt
	// Records in time order; or Stream, which yields them in time order
	// without holding them (the store's rows).
	Records []Record
	Stream  func(yield func(Record) bool) error
	Env     []EnvReading
	// Batches, or LoadBatches, which is given the batches the records and
	// env readings name (in first-seen order) and yields each.
	Batches     []Batch
	LoadBatches func(keys []BatchKey, yield func(Batch) error) error
	GatewayKeys []GatewayKey
	// GatewayKeysFor, when set, gives the keys of a gateway the batches name
	// that GatewayKeys lacks.
	GatewayKeysFor func(gateway string) []GatewayKey
	ServiceKeys    []PublicKeyInfo // the signing key's history; empty: the signing key alone
	Acts           []Act
	Constatacoes   []Constatacao
	// NoticePDF is a draft rendering, included only when Acts is empty.
	NoticePDF []byte
	NoticeID  string
	Chart     []byte // PNG
	// ChartFn, when set, draws the chart after the readings were streamed.
	ChartFn  func() ([]byte, error)
	Custody  []Custody
	Software string // e.g. "sossego v0.3.0 (commit abc123)"
	// Created is the bag's date: the case's last act, never the time of the
	// export, so the same case state exports the same bytes.
	Created  time.Time
	Previous *Previous
}

// Summary is the energy-correct summary of the event window.
type Summary struct {
	AlertID       string    `json:"alert_id"`
	WindowStart   time.Time `json:"window_start"`
	WindowEnd     time.Time `json:"window_end"`
	ExportedFrom  time.Time `json:"exported_from"`
	ExportedTo    time.Time `json:"exported_to"`
	MarginS       float64   `json:"margin_s"`
	Records       int       `json:"records_in_window"`
	RecordsTotal  int       `json:"records_exported"`
	CoveragePct   float64   `json:"coverage_pct"` // time covered by records / window length
	Gaps          int       `json:"gaps"`         // holes longer than 1.5 record durations inside the window
	LAeqDB        *float64  `json:"laeq_db"`
	LAFmaxDB      *float64  `json:"lafmax_db"`
	L10DB         *float64  `json:"l10_db"`
	L90DB         *float64  `json:"l90_db"`
	LnMethod      string    `json:"ln_method"`
	LimitDB       *float64  `json:"limit_db"`
	MarginDB      *float64  `json:"margin_db"` // LAeq − limit
	UncertaintyDB float64   `json:"meter_uncertainty_db"`
	ExceedanceS   float64   `json:"exceedance_s"` // time of records whose LAeq > limit, in the window
	Unsynced      int       `json:"records_clock_unsynced"`
	Rule          string    `json:"rule"`
	Article       string    `json:"article"`
	CodeVersion   string    `json:"code_version"`
	EnvReadings   int       `json:"env_readings"`
}

// summarizer folds records into a Summary one at a time.
type summarizer struct {
	s                Summary
	f                notice.Finding
	acc              level.Accumulator
	hist, laeqHist   level.Histogram
	allHist          bool
	prevEnd          time.Time
	covered          float64
	synced, unsynced int
}

func newSummarizer(p *Package) *summarizer {
	f := p.Finding
	return &summarizer{f: f, allHist: true, s: Summary{AlertID: p.AlertID, WindowStart: f.WindowStart, WindowEnd: f.WindowEnd,
		ExportedFrom: p.From, ExportedTo: p.To, MarginS: p.Margin.Seconds(), LimitDB: f.LimitDB, UncertaintyDB: f.MarginDB,
		Rule: f.RuleID, Article: f.Article, CodeVersion: f.CodeVersion, EnvReadings: len(p.Env)}}
}

func (z *summarizer) add(r *Record) {
	z.s.RecordsTotal++
	if r.Synced {
		z.synced++
	} else {
		z.unsynced++
	}
	if r.T.Before(z.f.WindowStart) || !r.T.Before(z.f.WindowEnd) {
		return
	}
	d := float64(r.DurMs)
	s := &z.s
	s.Records++
	z.acc.Add(r.LAeq, d)
	z.covered += d
	if s.LAFmaxDB == nil || r.LAFmax > *s.LAFmaxDB {
		v := r.LAFmax
		s.LAFmaxDB = &v
	}
	if r.Hist != nil {
		z.hist.Merge(*r.Hist)
	} else {
		z.allHist = false
	}
	z.laeqHist.Add(r.LAeq, d)
	if z.f.LimitDB != nil && r.LAeq > *z.f.LimitDB {
		s.ExceedanceS += d / 1000
	}
	if !r.Synced {
		s.Unsynced++
	}
	if !z.prevEnd.IsZero() && r.T.Sub(z.prevEnd) > time.Duration(d*0.5)*time.Millisecond {
		s.Gaps++
	}
	z.prevEnd = r.T.Add(time.Duration(r.DurMs) * time.Millisecond)
}

func (z *summarizer) done() Summary {
	s := z.s
	if leq, ok := z.acc.Leq(); ok {
		s.LAeqDB = &leq
		if z.f.LimitDB != nil {
			m := leq - *z.f.LimitDB
			s.MarginDB = &m
		}
	}
	hist := z.hist
	if !z.allHist || s.Records == 0 {
		hist = z.laeqHist
		s.LnMethod = "distribuição dos LAeq de 1 s (os registros não trazem histograma LAF completo)"
	} else {
		s.LnMethod = "histograma LAF de 0,1 dB dos registros"
	}
	if v, ok := hist.Percentile(10); ok {
		s.L10DB = &v
	}
	if v, ok := hist.Percentile(90); ok {
		s.L90DB = &v
	}
	if w := z.f.WindowEnd.Sub(z.f.WindowStart); w > 0 {
		s.CoveragePct = math.Round(z.covered/float64(w.Milliseconds())*1000) / 10
	}
	return s
}

// Summarize computes the summary over the finding's window of p.Records.
func Summarize(p *Package) Summary {
	z := newSummarizer(p)
	for i := range p.Records {
		z.add(&p.Records[i])
	}
	return z.done()
}

const (
	bagitTxt     = "BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n"
	sigName      = "tagmanifest-sha256.txt.sig"
	verificarTxt = "VERIFICAR.txt"
)

var unsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func safeName(s string) string { return strings.Trim(unsafe.ReplaceAllString(s, "_"), "_.") }

// BagName is the top directory of the bag for an alert.
func BagName(alertID string) string { return "evidencia-" + safeName(alertID) }

type writer struct {
	zw      *zip.Writer
	root    string
	mtime   time.Time
	payload []entry
	bytes   int64
}

type entry struct {
	name string
	sum  string
}

func (w *writer) create(name string) (io.Writer, hash.Hash, error) {
	fw, err := w.zw.CreateHeader(&zip.FileHeader{Name: w.root + "/" + name, Method: zip.Deflate, Modified: w.mtime})
	if err != nil {
		return nil, nil, fmt.Errorf("evidence: %s: %w", name, err)
	}
	h := sha256.New()
	return io.MultiWriter(fw, h), h, nil
}

func (w *writer) file(name string, data []byte) (string, error) {
	fw, h, err := w.create(name)
	if err != nil {
		return "", err
	}
	if _, err := fw.Write(data); err != nil {
		return "", fmt.Errorf("evidence: %s: %w", name, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if strings.HasPrefix(name, "data/") {
		w.payload = append(w.payload, entry{name, sum})
		w.bytes += int64(len(data))
	}
	return sum, nil
}

func (w *writer) json(name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("evidence: %s: %w", name, err)
	}
	_, err = w.file(name, append(b, '\n'))
	return err
}

// Export writes the zipped bag to out, signed with key. progress, when not
// nil, is called as the readings are written (done, expected records: the
// exported span in seconds when the records are streamed).
func Export(out io.Writer, p *Package, key ed25519.PrivateKey, progress func(done, total int)) (Summary, error) {
	if len(key) != ed25519.PrivateKeySize {
		return Summary{}, errors.New("evidence: chave de assinatura ausente ou inválida")
	}
	if p.AlertID == "" {
		return Summary{}, errors.New("evidence: pacote sem alerta")
	}
	pub := key.Public().(ed25519.PublicKey)
	zw := zip.NewWriter(out)
	// Level 3: a 24-hour bag compresses in about the time level 1 takes
	// (a fraction of the default's), ~15 % smaller, and inflates faster
	// (longer matches); deterministic like any level.
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return kflate.NewWriter(w, 3) })
	w := &writer{zw: zw, root: BagName(p.AlertID), mtime: p.Created.UTC().Truncate(2 * time.Second)}

	// Readings first: the summary and the batches to include come from them.
	z := newSummarizer(p)
	keys, err := w.readings(p, z, progress)
	if err != nil {
		return Summary{}, err
	}
	if z.s.RecordsTotal == 0 {
		return Summary{}, fmt.Errorf("evidence: o alerta %q não tem leituras no período exportado", p.AlertID)
	}
	sum := z.done()
	keys = withEnvBatches(p, keys)
	gk := newGatewayKeys(packageKeys(p, keys))
	var st signedStats
	if st.batches, err = w.signed("batches", gk, batchSource(p, keys)); err != nil {
		return sum, err
	}
	if len(p.Meter.Checks) > 0 {
		if st.checks, err = w.signed("checks", gk, checkSource(p)); err != nil {
			return sum, err
		}
	}
	acts, err := w.records(p, pub, gk)
	if err != nil {
		return sum, err
	}
	if err := w.about(p, z, &sum, st, acts); err != nil {
		return sum, err
	}
	if err := w.tags(p, key, &sum, st, len(acts)); err != nil {
		return sum, err
	}
	if err := w.zw.Close(); err != nil {
		return sum, fmt.Errorf("evidence: zip: %w", err)
	}
	return sum, nil
}

// signedStats are the verdicts of the bag's signed messages.
type signedStats struct{ batches, checks batchStats }

// withEnvBatches adds to keys (the batches the records name) the batches
// the env readings name, in first-seen order.
func withEnvBatches(p *Package, keys []BatchKey) []BatchKey {
	seen := make(map[BatchKey]bool, len(keys))
	for _, k := range keys {
		seen[k] = true
	}
	for _, e := range p.Env {
		if k := (BatchKey{e.Gateway, e.Seq}); !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return keys
}

// records writes what the case and the register hold: env readings, keys,
// acts and constatações, the calibration certificate, the chart, the
// custody trail.
func (w *writer) records(p *Package, pub ed25519.PublicKey, gk *gatewayKeys) ([]actDoc, error) {
	if err := w.env(p); err != nil {
		return nil, err
	}
	if err := w.keyFiles(p, pub, gk); err != nil {
		return nil, err
	}
	acts, err := w.acts(p)
	if err != nil {
		return nil, err
	}
	if len(p.Meter.Calibration.file()) > 0 {
		if _, err := w.file("data/calibration/"+safeName(p.Meter.Calibration.FileName), p.Meter.Calibration.File); err != nil {
			return nil, err
		}
	}
	chart := p.Chart
	if p.ChartFn != nil {
		if chart, err = p.ChartFn(); err != nil {
			return nil, fmt.Errorf("evidence: gráfico: %w", err)
		}
	}
	if len(chart) > 0 {
		if _, err := w.file("data/chart.png", chart); err != nil {
			return nil, err
		}
	}
	return acts, w.json("data/custody.json", p.Custody)
}

// about writes what the bag says of itself: the device, the texts, the
// rule and the summary.
func (w *writer) about(p *Package, z *summarizer, sum *Summary, st signedStats, acts []actDoc) error {
	if err := w.json("data/device.json", deviceDoc(p, z, st)); err != nil {
		return err
	}
	for _, t := range [][2]string{{"data/LEIAME.txt", readme(p, acts)}, {"data/METODO.txt", method(p)}, {"data/verificar-lotes.sh", batchScript}} {
		if _, err := w.file(t[0], []byte(t[1])); err != nil {
			return err
		}
	}
	if err := w.json("data/rule.json", map[string]any{"code_id": p.Finding.CodeID, "code_version": p.Finding.CodeVersion, "code_title": p.CodeTitle,
		"rule_id": p.Finding.RuleID, "article": p.Finding.Article, "quote": p.Finding.Quote, "label": p.Finding.RuleLabel,
		"period": p.Finding.PeriodLabel, "limit_db": p.Finding.LimitDB, "comparison": "violação somente acima do limite (estritamente maior)"}); err != nil {
		return err
	}
	return w.json("data/summary.json", sum)
}

// tags writes the payload manifest, the tag files, the tag manifest and
// its signature.
func (w *writer) tags(p *Package, key ed25519.PrivateKey, sum *Summary, st signedStats, acts int) error {
	pub := key.Public().(ed25519.PublicKey)
	sort.Slice(w.payload, func(i, j int) bool { return w.payload[i].name < w.payload[j].name })
	var manifest strings.Builder
	for _, e := range w.payload {
		fmt.Fprintf(&manifest, "%s  %s\n", e.sum, e.name)
	}
	info := bagInfo(p, sum, pub, len(w.payload), w.bytes, st, acts)
	var tags strings.Builder
	for _, t := range [][2]string{{verificarTxt, verifyText(p, pub)}, {"bag-info.txt", info}, {"bagit.txt", bagitTxt}, {"manifest-sha256.txt", manifest.String()}} {
		s, err := w.file(t[0], []byte(t[1]))
		if err != nil {
			return err
		}
		fmt.Fprintf(&tags, "%s  %s\n", s, t[0])
	}
	tm := []byte(tags.String())
	if _, err := w.file("tagmanifest-sha256.txt", tm); err != nil {
		return err
	}
	_, err := w.file(sigName, []byte(base64.StdEncoding.EncodeToString(ed25519.Sign(key, tm))+"\n"))
	return err
}

func (c *Calibration) file() []byte {
	if c == nil || c.FileName == "" {
		return nil
	}
	return c.File
}

const readingsHeader = "t_utc,t_brasilia,dur_ms,laeq_db,lafmax_db,lafmin_db,lcpeak_db,overload,gateway,batch_seq,grade,clock_synced,in_window,above_limit\n"

// readings streams data/readings.csv and returns the batches the records
// name, in first-seen order.
func (w *writer) readings(p *Package, z *summarizer, progress func(done, total int)) ([]BatchKey, error) {
	fw, h, err := w.create("data/readings.csv")
	if err != nil {
		return nil, err
	}
	cw := &countWriter{w: fw}
	bw := bufio.NewWriterSize(cw, 64<<10)
	bw.WriteString(readingsHeader)
	f := p.Finding
	buf := make([]byte, 0, 256)
	total := len(p.Records)
	if p.Stream != nil {
		total = int(p.To.Sub(p.From) / time.Second)
	}
	var keys []BatchKey
	seen := map[BatchKey]bool{}
	var werr error
	i := 0
	emit := func(r Record) bool {
		z.add(&r)
		if k := (BatchKey{r.Gateway, r.Seq}); !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
		buf = appendReading(buf[:0], &r, &f)
		if _, werr = bw.Write(buf); werr != nil {
			return false
		}
		i++
		if progress != nil && i%4096 == 0 {
			progress(min(i, total), max(total, i))
		}
		return true
	}
	if p.Stream != nil {
		if err := p.Stream(emit); err != nil {
			return nil, fmt.Errorf("evidence: readings: %w", err)
		}
	} else {
		for _, r := range p.Records {
			if !emit(r) {
				break
			}
		}
	}
	if werr != nil {
		return nil, fmt.Errorf("evidence: readings: %w", werr)
	}
	if progress != nil && i > 0 {
		progress(i, i)
	}
	if err := bw.Flush(); err != nil {
		return nil, fmt.Errorf("evidence: readings: %w", err)
	}
	w.payload = append(w.payload, entry{"data/readings.csv", hex.EncodeToString(h.Sum(nil))})
	w.bytes += cw.n
	return keys, nil
}

func appendReading(buf []byte, r *Record, f *notice.Finding) []byte {
	buf = appendUTCMillis(buf, r.T)
	buf = append(buf, ',')
	buf = appendLocalMillis(buf, r.T.In(saoPaulo))
	buf = append(buf, ',')
	buf = strconv.AppendInt(buf, r.DurMs, 10)
	for _, v := range []float64{r.LAeq, r.LAFmax, r.LAFmin} {
		buf = append(buf, ',')
		buf = strconv.AppendFloat(buf, v, 'f', 2, 64)
	}
	buf = append(buf, ',')
	if r.LCpeak != nil {
		buf = strconv.AppendFloat(buf, *r.LCpeak, 'f', 2, 64)
	}
	buf = append(buf, ',')
	buf = strconv.AppendBool(buf, r.Overload)
	buf = append(buf, ',')
	buf = append(buf, csvSafe(r.Gateway)...)
	buf = append(buf, ',')
	buf = strconv.AppendUint(buf, r.Seq, 10)
	buf = append(buf, ',')
	buf = append(buf, csvSafe(r.Grade)...)
	buf = append(buf, ',')
	buf = strconv.AppendBool(buf, r.Synced)
	in := !r.T.Before(f.WindowStart) && r.T.Before(f.WindowEnd)
	buf = append(buf, ',')
	buf = strconv.AppendBool(buf, in)
	buf = append(buf, ',')
	buf = strconv.AppendBool(buf, f.LimitDB != nil && r.LAeq > *f.LimitDB)
	return append(buf, '\n')
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

var csvReplacer = strings.NewReplacer(",", "_", "\n", "_", "\r", "_", "\"", "_", " ", "_")

// csvSafe keeps a name from breaking a CSV field or a batches.txt column.
func csvSafe(s string) string {
	if !strings.ContainsAny(s, ",\n\r\" ") {
		return s
	}
	return csvReplacer.Replace(s)
}

func fmtOpt(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', 2, 64)
}

func (w *writer) env(p *Package) error {
	var b strings.Builder
	b.WriteString("t_utc,t_brasilia,temperature_c,humidity_pct,pressure_hpa,gateway,batch_seq\n")
	for _, e := range p.Env {
		fmt.Fprintf(&b, "%s,%s,%s,%s,%s,%s,%d\n", e.T.UTC().Format("2006-01-02T15:04:05.000Z"), e.T.In(saoPaulo).Format("2006-01-02 15:04:05.000"),
			fmtOpt(e.TemperatureC), fmtOpt(e.HumidityPct), fmtOpt(e.PressureHPa), csvSafe(e.Gateway), e.Seq)
	}
	_, err := w.file("data/env.csv", []byte(b.String()))
	return err
}

type keyDoc struct {
	Gateway     string    `json:"gateway,omitempty"`
	PublicKey   string    `json:"public_key"`
	Fingerprint string    `json:"fingerprint"`
	File        string    `json:"file"`
	ValidFrom   time.Time `json:"valid_from,omitzero"`
	ValidUntil  time.Time `json:"valid_until,omitzero"`
	Revoked     bool      `json:"revoked,omitempty"`
	Reason      string    `json:"reason,omitempty"`
}

func (w *writer) keyFiles(p *Package, pub ed25519.PublicKey, gk *gatewayKeys) error {
	hist := p.ServiceKeys
	if len(hist) == 0 {
		hist = []PublicKeyInfo{NewPublicKeyInfo(pub, time.Time{}, time.Time{})}
	}
	if err := w.json("data/keys/service.json", map[string]any{"algorithm": "ed25519", "public_key": base64.StdEncoding.EncodeToString(pub),
		"fingerprint": Fingerprint(pub), "file": "data/keys/service.pem", "history": hist}); err != nil {
		return err
	}
	if _, err := w.file("data/keys/service.pem", PublicKeyPEM(pub)); err != nil {
		return err
	}
	docs := make([]keyDoc, 0, len(gk.keys))
	for i, k := range gk.keys {
		docs = append(docs, keyDoc{Gateway: k.Gateway, PublicKey: base64.StdEncoding.EncodeToString(k.PublicKey), Fingerprint: Fingerprint(k.PublicKey),
			File: "data/keys/" + gk.files[i], ValidFrom: k.ValidFrom.UTC(), ValidUntil: k.ValidUntil.UTC(), Revoked: k.Revoked, Reason: k.Reason})
		if pem := PublicKeyPEM(k.PublicKey); pem != nil {
			if _, err := w.file("data/keys/"+gk.files[i], pem); err != nil {
				return err
			}
		}
	}
	return w.json("data/keys/gateways.json", docs)
}

type actDoc struct {
	ID       string    `json:"id"`
	Kind     string    `json:"kind,omitempty"`
	File     string    `json:"file"`
	IssuedAt time.Time `json:"issued_at,omitzero"`
	SHA256   string    `json:"sha256"`
	Bytes    int       `json:"bytes"`
}

func (w *writer) acts(p *Package) ([]actDoc, error) {
	var docs []actDoc
	names := map[string]bool{}
	for _, a := range p.Acts {
		s := sha256.Sum256(a.PDF)
		sum := hex.EncodeToString(s[:])
		if a.SHA256 != "" && !strings.EqualFold(a.SHA256, sum) {
			return nil, fmt.Errorf("evidence: o PDF guardado do ato %s não confere com o SHA-256 registrado na emissão (%s…): o arquivo foi alterado", a.ID, a.SHA256[:min(16, len(a.SHA256))])
		}
		name := safeName(a.Name)
		if name == "" {
			name = safeName(a.ID) + ".pdf"
		}
		if names[name] {
			return nil, fmt.Errorf("evidence: dois atos com o nome de arquivo %s", name)
		}
		names[name] = true
		if _, err := w.file("data/acts/"+name, a.PDF); err != nil {
			return nil, err
		}
		docs = append(docs, actDoc{ID: a.ID, Kind: a.Kind, File: "data/acts/" + name, IssuedAt: a.IssuedAt.UTC(), SHA256: sum, Bytes: len(a.PDF)})
	}
	if len(docs) > 0 {
		if err := w.json("data/acts/index.json", docs); err != nil {
			return nil, err
		}
	} else if len(p.NoticePDF) > 0 {
		if _, err := w.file("data/notice.pdf", p.NoticePDF); err != nil {
			return nil, err
		}
	}
	for _, c := range p.Constatacoes {
		if !json.Valid(c.JSON) {
			return nil, fmt.Errorf("evidence: a constatação %s não é JSON válido", c.ID)
		}
		if _, err := w.file("data/constatacoes/"+safeName(c.ID)+".json", c.JSON); err != nil {
			return nil, err
		}
	}
	return docs, nil
}

func deviceDoc(p *Package, z *summarizer, st signedStats) map[string]any {
	bs := st.batches
	reported := make([]map[string]any, 0, len(bs.devices))
	var mismatch []string
	ks := make([]string, 0, len(bs.devices))
	for k := range bs.devices {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		parts := strings.SplitN(k, "|", 3)
		reported = append(reported, map[string]any{"model": parts[0], "serial": parts[1], "grade": parts[2], "batches": bs.devices[k]})
		if p.Meter.Serial != "" && parts[1] != p.Meter.Serial && !strings.Contains(strings.ToLower(parts[0]), "bme") {
			mismatch = append(mismatch, parts[1])
		}
	}
	d := map[string]any{
		"site": p.Site, "establishment": p.Party, "meter": p.Meter, "screening": p.Finding.Screening,
		"meter_in_signed_batches": reported,
		"clock": map[string]any{"records": z.s.RecordsTotal, "records_synced": z.synced, "records_unsynced": z.unsynced,
			"note": "estado de sincronização do relógio do gateway informado em cada lote; offset e fonte em batches.ndjson"},
		"signatures": map[string]int{"batches": bs.n, "verified_now": bs.verified, "failed_now": bs.failed, "unsigned": bs.unsigned, "key_unknown": bs.noKey},
	}
	if cs := st.checks; cs.n > 0 {
		d["signed_field_checks"] = map[string]any{"file": "data/checks.txt", "verdicts": "data/checks.ndjson", "checks": cs.n,
			"verified_now": cs.verified, "failed_now": cs.failed, "unsigned": cs.unsigned, "key_unknown": cs.noKey}
	}
	if len(mismatch) > 0 {
		d["serial_mismatch"] = fmt.Sprintf("os lotes assinados informam o número de série %s, e o cadastro informa %s", strings.Join(mismatch, ", "), p.Meter.Serial)
	}
	return d
}

func bagInfo(p *Package, s *Summary, pub ed25519.PublicKey, files int, n int64, st signedStats, acts int) string {
	bs := st.batches
	var b strings.Builder
	line := func(k, v string) {
		v = strings.Join(strings.Fields(v), " ")
		fmt.Fprintf(&b, "%s: %s\n", k, v)
	}
	created := p.Created.UTC()
	line("Source-Organization", p.Organization)
	line("External-Identifier", p.AlertID)
	line("External-Description", fmt.Sprintf("Pacote de evidências do alerta %s: leituras de 1 s do sensor %s de %s a %s (janela do alerta ± %s), %s (%s).",
		p.AlertID, p.Site.Sensor, p.From.UTC().Format(time.RFC3339), p.To.UTC().Format(time.RFC3339), p.Margin, p.Finding.Article, p.CodeTitle))
	line("Bagging-Date", created.In(saoPaulo).Format("2006-01-02"))
	line("Bag-Software-Agent", p.Software)
	line("Payload-Oxum", fmt.Sprintf("%d.%d", n, files))
	line("Sossego-Case-State-Time", created.Format(time.RFC3339))
	line("Sossego-Code-Version", p.Finding.CodeVersion)
	line("Sossego-Rule", fmt.Sprintf("%s %s", p.Finding.RuleID, p.Finding.Article))
	line("Sossego-Sensor", p.Site.Sensor)
	line("Sossego-Meter", fmt.Sprintf("%s %s grade=%s", p.Meter.Model, p.Meter.Serial, p.Meter.Grade))
	if c := p.Meter.Calibration; c != nil {
		line("Sossego-Calibration", fmt.Sprintf("certificado %s, %s, %s, validade %s", c.Certificate, c.Laboratory, c.Date, c.Expiry))
	}
	line("Sossego-Window", fmt.Sprintf("%s/%s", p.Finding.WindowStart.UTC().Format(time.RFC3339), p.Finding.WindowEnd.UTC().Format(time.RFC3339)))
	line("Sossego-Margin", p.Margin.String())
	line("Sossego-Records", strconv.Itoa(s.RecordsTotal))
	line("Sossego-Gateway-Signatures", fmt.Sprintf("%d lotes: %d verificados, %d falharam, %d sem assinatura, %d sem chave", bs.n, bs.verified, bs.failed, bs.unsigned, bs.noKey))
	if cs := st.checks; cs.n > 0 {
		line("Sossego-Field-Checks", fmt.Sprintf("%d verificações de campo assinadas: %d verificadas, %d falharam, %d sem assinatura, %d sem chave",
			cs.n, cs.verified, cs.failed, cs.unsigned, cs.noKey))
	}
	line("Sossego-Acts", strconv.Itoa(acts))
	if p.NoticeID != "" {
		line("Sossego-Notice", p.NoticeID)
	}
	if p.Previous != nil {
		line("Sossego-Previous-Bag-SHA256", p.Previous.SHA256)
		line("Sossego-Previous-Bag-Date", p.Previous.Date.UTC().Format(time.RFC3339))
	}
	line("Sossego-Signing-Key", base64.StdEncoding.EncodeToString(pub))
	line("Sossego-Signing-Key-Fingerprint", Fingerprint(pub))
	for _, c := range p.Custody {
		line("Custody-Event", fmt.Sprintf("%s | %s (%s) | %s | %s", c.At.UTC().Format(time.RFC3339), c.Actor, c.Role, c.Action, c.Detail))
	}
	return b.String()
}

var saoPaulo = tz.Brasilia()

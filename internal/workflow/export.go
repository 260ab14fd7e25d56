package workflow

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime/debug"
	"slices"
	"sort"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/sossego/sossego/alerts/evidence"
	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/internal/calibration"
	"github.com/sossego/sossego/internal/cases"
	"github.com/sossego/sossego/internal/pdf"
	"github.com/sossego/sossego/internal/store"
)

// EvidenceSources are the evidence export's optional sources; each nil
// one falls back as its comment says.
type EvidenceSources struct {
	// Keys is the service's signing key with its history (nil: Config.Key
	// alone, without history).
	Keys *evidence.KeyRing
	// Meters gives the meter behind a sensor as the calibration register
	// keeps it (nil: the sensor's meter in the register of sensors).
	Meters Meters
	// Acts gives the case's acts as issued (their stored PDFs) and its
	// constatações (nil: the case store's, CaseActs). Without a stored act
	// the case's document is rendered at export, and the bag says so.
	Acts Acts
	// Ledger remembers the bags exported per alert, so that a later export
	// after new acts names the earlier bag's hash (nil: no previous bag
	// named).
	Ledger Ledger
	// Env returns the environmental readings of a sensor (nil: none).
	Env EnvReadings
}

// Meters is the register of meters (the metrology register satisfies it).
type Meters interface {
	// Meter is the sensor's meter as the register knew it at t, with its
	// field checks; ok false when the register holds no certificate of the
	// sensor.
	Meter(ctx context.Context, sensor string, at time.Time) (m evidence.Meter, ok bool, err error)
	// FieldChecks are the sensor's calibrator checks around t, whatever the
	// register holds of certificates: the latest made by t (nil: none) and
	// the signed ones the bag carries (the latest made by t and the first
	// after it). They travel with the register of sensors' meter data when
	// Meter answers ok false.
	FieldChecks(ctx context.Context, sensor string, at time.Time) (last *evidence.FieldCheck, signed []evidence.Batch, err error)
}

// Acts gives a case's acts and constatações as stored (the case store).
type Acts interface {
	EvidenceActs(ctx context.Context, alertID string) ([]evidence.Act, []evidence.Constatacao, error)
}

// Ledger is where exported bags are remembered (*evidence.FileLedger).
type Ledger interface {
	Entries(alertID string) ([]evidence.LedgerEntry, error)
	Record(alertID string, e evidence.LedgerEntry) error
}

// EnvReadings returns a sensor's env records in [from, to) (*sqlitestore.Store).
type EnvReadings interface {
	EnvRecords(ctx context.Context, sensor string, from, to time.Time, limit int) ([]store.EnvRecord, error)
}

// BatchRange streams stored batches by seq range (*sqlitestore.Store); the
// export uses it when Config.Batches has it, so that each batch carries
// when it was received (which picks the gateway key in force).
type BatchRange interface {
	BatchesRange(ctx context.Context, gateway string, from, to uint64, fn func(store.StoredBatch) error) error
}

// readChunk is how much of the window the export reads from the store at
// a time: the records are streamed into the bag, never held.
const readChunk = time.Hour

func (s *Service) signer() (ed25519.PrivateKey, []evidence.PublicKeyInfo) {
	if k := s.evidence.Keys; k != nil {
		return k.Signer, k.History
	}
	return s.key, nil
}

// KeyFingerprint is the fingerprint of the service's evidence signing key
// ("SHA256:" + 64 hex digits), for the notices to print; "" without a key.
func (s *Service) KeyFingerprint() string {
	k, _ := s.signer()
	if len(k) != ed25519.PrivateKeySize {
		return ""
	}
	return evidence.Fingerprint(k.Public().(ed25519.PublicKey))
}

// Export writes the evidence bag of an alert to w. progress may be nil.
// The window is exactly the alert's ± the margin; the bag's date is the
// case's last act, so the same case state gives the same bytes.
func (s *Service) Export(ctx context.Context, alertID string, w io.Writer, progress func(done, total int)) (evidence.Summary, error) {
	key, hist := s.signer()
	if len(key) != ed25519.PrivateKeySize {
		return evidence.Summary{}, errors.New("chave de assinatura do serviço não configurada")
	}
	cs, err := s.Load(ctx, alertID)
	if err != nil {
		return evidence.Summary{}, err
	}
	a := cs.Alert
	from, to := a.WindowStart.Add(-s.margin), a.WindowEnd.Add(s.margin)
	p := &evidence.Package{AlertID: a.ID, Organization: "Prefeitura Municipal de " + cs.Code.Municipality, CodeTitle: cs.Code.Title(),
		Finding: notice.FromAlert(a), Party: cs.Party, Site: cs.Site, From: from, To: to, Margin: s.margin, Software: software(),
		ServiceKeys: hist}
	if p.Meter, err = s.meter(ctx, cs); err != nil {
		return evidence.Summary{}, err
	}
	p.GatewayKeysFor = s.gatewayKeys
	if err := s.caseRecords(ctx, cs, p); err != nil {
		return evidence.Summary{}, err
	}
	if p.Env, err = s.envReadings(ctx, a.Sensor, from, to); err != nil {
		return evidence.Summary{}, err
	}
	// Readings, streamed from the store an hour at a time, and a chart of
	// them at most ~1,500 points wide built on the way.
	ds := newDownsampler(from, to, 1500)
	p.Stream = s.stream(ctx, a.Sensor, from, to, ds)
	p.LoadBatches = func(keys []evidence.BatchKey, yield func(evidence.Batch) error) error {
		return s.loadBatches(ctx, keys, yield)
	}
	p.ChartFn = func() ([]byte, error) { return chartPoints(cs, ds.points()) }

	// The earlier bag of the case, from the ledger.
	state := caseState(p, key)
	var entries []evidence.LedgerEntry
	if l := s.evidence.Ledger; l != nil {
		if entries, err = l.Entries(a.ID); err != nil {
			return evidence.Summary{}, err
		}
		p.Previous = evidence.PreviousFor(entries, state)
	}
	h := sha256.New()
	sum, err := evidence.Export(io.MultiWriter(w, h), p, key, progress)
	if err != nil {
		return sum, err
	}
	if l := s.evidence.Ledger; l != nil {
		if err := l.Record(a.ID, evidence.LedgerEntry{State: state, SHA256: hex.EncodeToString(h.Sum(nil)), Date: p.Created, Previous: p.Previous}); err != nil {
			return sum, err
		}
	}
	return sum, nil
}

// envReadings are the sensor's environmental readings in [from, to)
// (none without Evidence.Env).
func (s *Service) envReadings(ctx context.Context, sensor string, from, to time.Time) ([]evidence.EnvReading, error) {
	if s.evidence.Env == nil {
		return nil, nil
	}
	es, err := s.evidence.Env.EnvRecords(ctx, sensor, from, to, 0)
	if err != nil {
		return nil, fmt.Errorf("leituras ambientais do sensor %s: %w", sensor, err)
	}
	var out []evidence.EnvReading
	for _, e := range es {
		out = append(out, evidence.EnvReading{T: e.T, Gateway: e.Gateway, Seq: e.Seq, TemperatureC: e.TemperatureC, HumidityPct: e.HumidityPct, PressureHPa: e.PressureHPa})
	}
	return out, nil
}

// stream yields the sensor's readings in [from, to), read from the store
// an hour at a time, folding each into ds for the chart.
func (s *Service) stream(ctx context.Context, sensor string, from, to time.Time, ds *downsampler) func(yield func(evidence.Record) bool) error {
	return func(yield func(evidence.Record) bool) error {
		for t := from; t.Before(to); t = t.Add(readChunk) {
			rs, err := s.readings.Records(ctx, sensor, t, minTime(t.Add(readChunk), to), 0)
			if err != nil {
				return fmt.Errorf("leituras do sensor %s: %w", sensor, err)
			}
			for _, r := range rs {
				ds.add(r.T, r.DurMs, r.LAeq, r.LAFmax)
				if !yield(evidence.Record{T: r.T, DurMs: r.DurMs, LAeq: r.LAeq, LAFmax: r.LAFmax, LAFmin: r.LAFmin, LCpeak: r.LCpeak,
					Overload: r.Overload, Gateway: r.Gateway, Seq: r.Seq, Grade: r.Grade, Synced: r.Synced, Hist: r.Hist}) {
					return nil
				}
			}
		}
		return nil
	}
}

// CaseActs gives the acts and constatações the case store keeps: every PDF
// stored for each of the alert's documents (at issue, then at the ciente or
// recusa), byte for byte with the SHA-256 kept with it, and every
// constatação record.
type CaseActs struct{ Cases CaseActsStore }

// CaseActsStore is what CaseActs reads of the case store
// (*casesdb.Store).
type CaseActsStore interface {
	ForAlert(ctx context.Context, alertID string) (notice.Document, error)
	Children(ctx context.Context, id string) ([]notice.Document, error)
	PDFVersion(ctx context.Context, id string, seq int) ([]byte, notice.StoredPDF, error)
	Constatacoes(ctx context.Context, alertID string) ([]notice.Constatacao, error)
}

// caseActs is a CaseActsStore made of the service's case stores.
type caseActs struct {
	Documents
	PDFStore
	ConstatacaoStore
}

// EvidenceActs implements Acts.
func (c CaseActs) EvidenceActs(ctx context.Context, alertID string) ([]evidence.Act, []evidence.Constatacao, error) {
	var acts []evidence.Act
	doc, err := c.Cases.ForAlert(ctx, alertID)
	switch {
	case errors.Is(err, cases.ErrNotFound):
	case err != nil:
		return nil, nil, err
	default:
		docs := []notice.Document{doc}
		kids, err := c.Cases.Children(ctx, doc.ID)
		if err != nil {
			return nil, nil, err
		}
		for _, d := range append(docs, kids...) {
			for seq := 1; ; seq++ {
				b, m, err := c.Cases.PDFVersion(ctx, d.ID, seq)
				if errors.Is(err, cases.ErrNoPDF) {
					break
				}
				if err != nil {
					return nil, nil, err
				}
				acts = append(acts, evidence.Act{ID: d.ID, Kind: string(d.Draft.Kind), Name: fmt.Sprintf("%s-%d-%s.pdf", d.ID, m.Seq, m.Stage),
					IssuedAt: m.StoredAt, PDF: b, SHA256: m.SHA256})
			}
		}
	}
	ks, err := c.Cases.Constatacoes(ctx, alertID)
	if err != nil {
		return nil, nil, err
	}
	var cons []evidence.Constatacao
	for _, k := range ks {
		b, err := json.MarshalIndent(k, "", "  ")
		if err != nil {
			return nil, nil, err
		}
		cons = append(cons, evidence.Constatacao{ID: k.ID, At: k.At, JSON: append(b, '\n')})
	}
	return acts, cons, nil
}

// gatewayKeys is every key of a gateway in the register, with validity.
func (s *Service) gatewayKeys(id string) []evidence.GatewayKey {
	g, ok := s.registry.Gateway(id)
	if !ok {
		return nil
	}
	var out []evidence.GatewayKey
	for _, k := range g.Keys() {
		out = append(out, evidence.GatewayKey{Gateway: g.ID, PublicKey: k.Key, ValidFrom: k.From, ValidUntil: k.Until, Revoked: k.Revoked, Reason: k.Reason})
	}
	return out
}

// software is the Bag-Software-Agent: the build, not who asked (the CLI
// and the service export the same bytes).
func software() string {
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	return "sossego " + v
}

// meter is the register of meters' entry, or the sensor register's meter
// with the register's field checks, if any.
func (s *Service) meter(ctx context.Context, cs *AlertCase) (evidence.Meter, error) {
	sensor, at := cs.Alert.Sensor, cs.Alert.WindowStart
	if s.evidence.Meters != nil {
		m, ok, err := s.evidence.Meters.Meter(ctx, sensor, at)
		if err != nil {
			return evidence.Meter{}, fmt.Errorf("medidor do sensor %s: %w", sensor, err)
		}
		if ok {
			return m, nil
		}
	}
	m := evidence.Meter{Model: cs.Site.MeterModel, Serial: cs.Site.MeterSerial, Grade: cs.Site.Grade, Source: calibration.SourceSensors}
	if cs.Site.Certificate != "" || cs.Site.CalibratedAt != "" {
		m.Calibration = &evidence.Calibration{Certificate: cs.Site.Certificate, Date: cs.Site.CalibratedAt}
	}
	if s.evidence.Meters != nil {
		last, signed, err := s.evidence.Meters.FieldChecks(ctx, sensor, at)
		if err != nil {
			return evidence.Meter{}, fmt.Errorf("verificações de campo do sensor %s: %w", sensor, err)
		}
		m.FieldCheck, m.Checks = last, signed
		if len(signed) > 0 {
			m.Source += "; verificações de campo do registro de calibrações"
		}
	}
	return m, nil
}

// custodyActions names the audit trail's actions in Portuguese, as
// custody.json and bag-info.txt show them to a perito.
var custodyActions = map[string]string{
	"ack": "alerta reconhecido", "assign": "alerta atribuído", "create": "documento preparado",
	string(notice.ActIssue): "documento emitido", string(notice.ActAcknowledge): "ciente registrado",
	string(notice.ActRefuse): "recusa registrada", string(notice.ActRegularise): "regularização registrada",
	string(notice.ActEscalate): "auto de infração lavrado", string(notice.ActCancel): "minuta descartada",
	string(notice.ActDecide): "julgamento registrado", "edit": "minuta editada", "constatacao": "constatação registrada",
	"correct": "ato corrigido por um novo ato", "revalue_fine": "multa atualizada",
}

// custodyOf is an audit entry as custody.json shows it, in Portuguese:
// what was done to the alert itself, or a document's change of state (its
// states agreeing with kind).
func custodyOf(e cases.Entry, kind notice.Kind) evidence.Custody {
	action, ok := custodyActions[e.Action]
	if !ok {
		action = e.Action
	}
	c := evidence.Custody{At: e.At, Actor: e.Actor.ID + " " + e.Actor.Name, Role: e.Actor.Role, Action: action, Detail: e.DocumentID}
	switch {
	case e.Action == "ack":
		c.Detail = "alerta " + e.DocumentID + " reconhecido"
	case e.Action == "assign":
		var d struct{ Assignee, Previous string }
		_ = json.Unmarshal(e.Detail, &d)
		c.Detail = "alerta " + e.DocumentID + " atribuído a " + d.Assignee
		if d.Previous != "" {
			c.Detail += " (antes, a " + d.Previous + ")"
		}
	case e.From == "" && e.To != "", e.From == e.To && e.To != "":
		c.Detail += ": " + e.To.LabelFor(kind)
	case e.From != e.To:
		c.Detail += ": " + e.From.LabelFor(kind) + " → " + e.To.LabelFor(kind)
	}
	return c
}

// caseRecords fills the acts, constatações, custody, notice and the bag's
// date (the case's last act; without acts, the alert's last event).
func (s *Service) caseRecords(ctx context.Context, cs *AlertCase, p *evidence.Package) error {
	a := cs.Alert
	created := a.WindowEnd
	for _, t := range []time.Time{a.FiringAt, a.ResolvedAt} {
		if t.After(created) {
			created = t
		}
	}
	created, err := s.caseActs(ctx, a.ID, p, created)
	if err != nil {
		return err
	}
	doc, created, err := s.custody(ctx, cs, p, created)
	if err != nil {
		return err
	}
	p.Created = created
	slices.SortStableFunc(p.Custody, func(x, y evidence.Custody) int { return x.At.Compare(y.At) })
	if len(p.Acts) == 0 {
		// Wiring point: until the case store gives the stored PDFs (Acts),
		// the document is rendered from its record, as of the bag's date.
		at := doc.Draft.Prepared
		if !doc.IssuedAt.IsZero() {
			at = doc.IssuedAt
		}
		if p.NoticePDF, err = pdf.Render(pdf.Input{Doc: doc, Deadlines: notice.Deadlines(cs.Code, &doc, created), Generated: at}); err != nil {
			return err
		}
	}
	return nil
}

// caseActs fills the acts and constatações of the alert's case; created
// is the bag's date so far, moved to the latest of them.
func (s *Service) caseActs(ctx context.Context, alertID string, p *evidence.Package, created time.Time) (time.Time, error) {
	src := s.evidence.Acts
	if src == nil && s.cases.Documents != nil {
		src = CaseActs{caseActs{s.cases.Documents, s.cases.PDFs, s.cases.Constatacoes}}
	}
	if src == nil {
		return created, nil
	}
	acts, cons, err := src.EvidenceActs(ctx, alertID)
	if err != nil {
		return created, fmt.Errorf("atos do caso %s: %w", alertID, err)
	}
	p.Acts, p.Constatacoes = acts, cons
	for _, x := range acts {
		created = maxTime(created, x.IssuedAt)
	}
	for _, c := range cons {
		created = maxTime(created, c.At)
	}
	return created, nil
}

// custody fills the custody chain: the alert's own trail (acknowledged,
// assigned), then its documents'. It returns the case's document (the
// auto when there is one; without a document, a draft prepared as of the
// bag's date) and the bag's date moved to the latest entry.
func (s *Service) custody(ctx context.Context, cs *AlertCase, p *evidence.Package, created time.Time) (notice.Document, time.Time, error) {
	a := cs.Alert
	trail, err := s.cases.Documents.Audit(ctx, a.ID)
	if err != nil {
		return notice.Document{}, created, fmt.Errorf("trilha de auditoria do alerta %s: %w", a.ID, err)
	}
	for _, e := range trail {
		p.Custody = append(p.Custody, custodyOf(e, ""))
		created = maxTime(created, e.At)
	}
	doc, err := s.cases.Documents.ForAlert(ctx, a.ID)
	switch {
	case err == nil:
		if kids, err := s.cases.Documents.Children(ctx, doc.ID); err == nil && len(kids) > 0 {
			doc = kids[len(kids)-1] // the auto, when there is one
		}
		p.NoticeID = doc.ID
		created, err = s.documentTrails(ctx, doc, p, created)
		return doc, created, err
	case errors.Is(err, cases.ErrNotFound):
		// No document yet: a draft, prepared as of the bag's date.
		d := *s
		d.clock = func() time.Time { return created }
		dr, err := d.Draft(ctx, cs)
		if err != nil {
			return doc, created, err
		}
		return notice.Document{Draft: dr, State: notice.StateDraft}, created, nil
	}
	return doc, created, err
}

// documentTrails adds the audit trails of doc and of the act it refers
// to, each entry's states named for its document's kind.
func (s *Service) documentTrails(ctx context.Context, doc notice.Document, p *evidence.Package, created time.Time) (time.Time, error) {
	type trail struct {
		id   string
		kind notice.Kind
	}
	trails := []trail{{doc.ID, doc.Draft.Kind}}
	if r := doc.Draft.RefersTo; r != nil && r.ID != "" {
		trails = append([]trail{{r.ID, r.Kind}}, trails...)
	}
	for _, tr := range trails {
		es, err := s.cases.Documents.Audit(ctx, tr.id)
		if err != nil {
			return created, err
		}
		for _, e := range es {
			p.Custody = append(p.Custody, custodyOf(e, tr.kind))
			created = maxTime(created, e.At)
		}
	}
	return created, nil
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// caseState digests what the bag shows of the case (besides the readings,
// which a window does not change): the alert, the acts, the constatações,
// the custody chain, the meter and the signing key.
func caseState(p *evidence.Package, key ed25519.PrivateKey) string {
	type act struct {
		ID, SHA string
		At      time.Time
	}
	var acts []act
	for _, a := range p.Acts {
		s := sha256.Sum256(a.PDF)
		acts = append(acts, act{a.ID, hex.EncodeToString(s[:]), a.IssuedAt})
	}
	var cons []string
	for _, c := range p.Constatacoes {
		s := sha256.Sum256(c.JSON)
		cons = append(cons, c.ID+":"+hex.EncodeToString(s[:]))
	}
	sort.Strings(cons)
	ns := sha256.Sum256(p.NoticePDF)
	b, _ := json.Marshal(map[string]any{"finding": p.Finding, "from": p.From, "to": p.To, "acts": acts, "constatacoes": cons,
		"custody": p.Custody, "meter": p.Meter, "notice": hex.EncodeToString(ns[:]), "created": p.Created,
		"key": evidence.Fingerprint(key.Public().(ed25519.PublicKey)), "software": p.Software})
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// loadBatches yields the named batches, gateway by gateway in seq order,
// streamed from the store when it can (BatchRange).
func (s *Service) loadBatches(ctx context.Context, keys []evidence.BatchKey, yield func(evidence.Batch) error) error {
	if s.batches == nil {
		return nil
	}
	by := map[string][]uint64{}
	var gws []string
	for _, k := range keys {
		if _, ok := by[k.Gateway]; !ok {
			gws = append(gws, k.Gateway)
		}
		by[k.Gateway] = append(by[k.Gateway], k.Seq)
	}
	sort.Strings(gws)
	br, ranged := s.batches.(BatchRange)
	for _, gw := range gws {
		seqs := by[gw]
		slices.Sort(seqs)
		if !ranged {
			for _, seq := range seqs {
				body, sig, ok, err := s.batches.RawBatch(ctx, gw, seq)
				if err != nil {
					return fmt.Errorf("lote %s/%d: %w", gw, seq, err)
				}
				if err := yield(evidence.Batch{Gateway: gw, Seq: seq, Body: body, Sig: sig, VerifiedAtIngest: ok}); err != nil {
					return err
				}
			}
			continue
		}
		want := make(map[uint64]bool, len(seqs))
		for _, q := range seqs {
			want[q] = true
		}
		found := 0
		err := br.BatchesRange(ctx, gw, seqs[0], seqs[len(seqs)-1], func(b store.StoredBatch) error {
			if !want[b.Seq] {
				return nil
			}
			found++
			return yield(evidence.Batch{Gateway: gw, Seq: b.Seq, Body: b.Body, Sig: b.Sig, VerifiedAtIngest: b.Verified, ReceivedAt: b.ReceivedAt})
		})
		if err != nil {
			return fmt.Errorf("lotes do gateway %s: %w", gw, err)
		}
		if found != len(seqs) {
			return fmt.Errorf("lotes do gateway %s: %d dos %d lotes das leituras não estão no banco (apagados pela retenção?)", gw, len(seqs)-found, len(seqs))
		}
	}
	return nil
}

// downsampler folds the readings into at most n buckets for the chart:
// energy mean of LAeq and max of LAFmax per bucket.
type downsampler struct {
	from time.Time
	step time.Duration
	b    []bucket
}

type bucket struct {
	e    float64 // Σ dur·10^(L/10)
	max  float64
	dur  int64
	used bool
}

func newDownsampler(from, to time.Time, n int) *downsampler {
	step := max(time.Second, (to.Sub(from) / time.Duration(n)).Truncate(time.Second))
	return &downsampler{from: from, step: step, b: make([]bucket, int(to.Sub(from)/step)+1)}
}

func (d *downsampler) add(t time.Time, dur int64, laeq, lafmax float64) {
	i := int(t.Sub(d.from) / d.step)
	if i < 0 || i >= len(d.b) {
		return
	}
	b := &d.b[i]
	b.e += float64(dur) * math.Pow(10, laeq/10)
	if !b.used || lafmax > b.max {
		b.max = lafmax
	}
	b.dur += dur
	b.used = true
}

func (d *downsampler) points() []pdf.Point {
	var out []pdf.Point
	for i := range d.b {
		b := &d.b[i]
		if !b.used {
			continue
		}
		l := 0.0
		if b.dur > 0 {
			l = 10 * math.Log10(b.e/float64(b.dur))
		}
		out = append(out, pdf.Point{T: d.from.Add(time.Duration(i) * d.step), DurMs: min(b.dur, d.step.Milliseconds()), LAeq: l, LAFmax: b.max})
	}
	return out
}

func chartPoints(cs *AlertCase, pts []pdf.Point) ([]byte, error) {
	var lim *float64
	if cs.Alert.LimitDB > 0 {
		l := cs.Alert.LimitDB
		lim = &l
	}
	return pdf.Chart(pdf.ChartSpec{Title: "Sensor " + cs.Alert.Sensor + " — " + cs.Party.Name, Points: pts, LimitDB: lim,
		EventStart: cs.Alert.WindowStart, EventEnd: cs.Alert.WindowEnd}, 18*vg.Centimeter, 7.5*vg.Centimeter, 150)
}

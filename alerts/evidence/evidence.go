// Package evidence writes and verifies the evidence package of an alert: a
// zipped BagIt bag (RFC 8493) that a defence lawyer cannot fault.
//
// Layout (everything under one top directory, evidencia-<alert>/):
//
//	bagit.txt                   BagIt-Version 1.0, UTF-8
//	bag-info.txt                who, what, when; the chain of custody; the signing key
//	manifest-sha256.txt         SHA-256 of every payload file
//	tagmanifest-sha256.txt      SHA-256 of bagit.txt, bag-info.txt, manifest-sha256.txt
//	tagmanifest-sha256.txt.sig  ed25519 signature (base64) over tagmanifest-sha256.txt
//	data/LEIAME.txt             how to check the package (pt-BR)
//	data/readings.csv           every 1-s record of the window with margins
//	data/summary.json           energy-correct summary: LAeq, LAFmax, L10, L90, limit, margin, exceedance
//	data/rule.json              the rule: code version, article, quoted text, limit
//	data/device.json            measuring point, meter grade and calibration, clock-sync state
//	data/batches.ndjson         the gateways' signed batches, byte for byte, and whether each verified
//	data/custody.json           the audit trail of the case (who, when, what)
//	data/notice.pdf             the notice or auto de infração
//	data/chart.png              the readings around the event with the limit line
//
// The signature covers the tag manifest, which covers bag-info.txt (with the
// public key and the custody chain) and the payload manifest, which covers
// every payload byte: changing any byte of any member is detected by Verify.
// The zip is deterministic (sorted members, fixed times).
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

// Batch is one raw signed batch as received.
type Batch struct {
	Gateway          string
	Seq              uint64
	Body             []byte // exact signed bytes
	Sig              []byte
	VerifiedAtIngest bool
	// PublicKey is the gateway's registered key now; nil when unknown. The
	// signature is verified again with it while packaging.
	PublicKey ed25519.PublicKey
}

// Custody is one event of the chain of custody.
type Custody struct {
	At     time.Time `json:"at"`
	Actor  string    `json:"actor"`
	Role   string    `json:"role,omitempty"`
	Action string    `json:"action"`
	Detail string    `json:"detail,omitempty"`
}

// Package is everything the bag holds.
type Package struct {
	AlertID      string
	Organization string // e.g. "Prefeitura Municipal de Lapa"
	CodeTitle    string // "Lei nº 1783/2004 (Lapa/PR)"
	Finding      notice.Finding
	Party        notice.Party
	Site         notice.Site
	From, To     time.Time // exported range: the window with margins
	Records      []Record  // time order
	Batches      []Batch
	NoticePDF    []byte
	NoticeID     string
	Chart        []byte // PNG
	Custody      []Custody
	Software     string // e.g. "sossego v0.3.0 (commit abc123)"
	Created      time.Time
}

// Summary is the energy-correct summary of the event window.
type Summary struct {
	AlertID       string    `json:"alert_id"`
	WindowStart   time.Time `json:"window_start"`
	WindowEnd     time.Time `json:"window_end"`
	ExportedFrom  time.Time `json:"exported_from"`
	ExportedTo    time.Time `json:"exported_to"`
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
}

// Summarize computes the summary over the finding's window.
func Summarize(p *Package) Summary {
	f := p.Finding
	s := Summary{AlertID: p.AlertID, WindowStart: f.WindowStart, WindowEnd: f.WindowEnd, ExportedFrom: p.From, ExportedTo: p.To,
		RecordsTotal: len(p.Records), LimitDB: f.LimitDB, UncertaintyDB: f.MarginDB, Rule: f.RuleID, Article: f.Article, CodeVersion: f.CodeVersion}
	var acc level.Accumulator
	var hist level.Histogram
	allHist := true
	var prevEnd time.Time
	var covered float64
	for _, r := range p.Records {
		if r.T.Before(f.WindowStart) || !r.T.Before(f.WindowEnd) {
			continue
		}
		d := float64(r.DurMs)
		s.Records++
		acc.Add(r.LAeq, d)
		covered += d
		if s.LAFmaxDB == nil || r.LAFmax > *s.LAFmaxDB {
			v := r.LAFmax
			s.LAFmaxDB = &v
		}
		if r.Hist != nil {
			hist.Merge(*r.Hist)
		} else {
			allHist = false
		}
		if f.LimitDB != nil && r.LAeq > *f.LimitDB {
			s.ExceedanceS += d / 1000
		}
		if !r.Synced {
			s.Unsynced++
		}
		if !prevEnd.IsZero() && r.T.Sub(prevEnd) > time.Duration(d*0.5)*time.Millisecond {
			s.Gaps++
		}
		prevEnd = r.T.Add(time.Duration(r.DurMs) * time.Millisecond)
	}
	if leq, ok := acc.Leq(); ok {
		s.LAeqDB = &leq
		if f.LimitDB != nil {
			m := leq - *f.LimitDB
			s.MarginDB = &m
		}
	}
	if !allHist || s.Records == 0 {
		hist = level.Histogram{}
		for _, r := range p.Records {
			if !r.T.Before(f.WindowStart) && r.T.Before(f.WindowEnd) {
				hist.Add(r.LAeq, float64(r.DurMs))
			}
		}
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
	if w := f.WindowEnd.Sub(f.WindowStart); w > 0 {
		s.CoveragePct = math.Round(covered/float64(w.Milliseconds())*1000) / 10
	}
	return s
}

const (
	bagitTxt = "BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n"
	sigName  = "tagmanifest-sha256.txt.sig"
)

var unsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// BagName is the top directory of the bag for an alert.
func BagName(alertID string) string {
	return "evidencia-" + strings.Trim(unsafe.ReplaceAllString(alertID, "_"), "_")
}

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

// Export writes the zipped bag to out, signed with key. progress, when not
// nil, is called as the readings are written (done, total records).
func Export(out io.Writer, p *Package, key ed25519.PrivateKey, progress func(done, total int)) (Summary, error) {
	if len(key) != ed25519.PrivateKeySize {
		return Summary{}, errors.New("evidence: chave de assinatura ausente ou inválida")
	}
	if p.AlertID == "" || len(p.Records) == 0 {
		return Summary{}, fmt.Errorf("evidence: o alerta %q não tem leituras no período exportado", p.AlertID)
	}
	sum := Summarize(p)
	w := &writer{zw: zip.NewWriter(out), root: BagName(p.AlertID), mtime: p.Created.UTC().Truncate(2 * time.Second)}

	// Payload, in name order (the zip is sorted: deterministic bytes).
	pub := key.Public().(ed25519.PublicKey)
	verified, failed, unknown := 0, 0, 0
	var batchLines []byte
	for _, b := range p.Batches {
		rec := batchJSON(b)
		switch {
		case rec.VerifiedNow == nil:
			unknown++
		case *rec.VerifiedNow:
			verified++
		default:
			failed++
		}
		line, err := json.Marshal(rec)
		if err != nil {
			return sum, fmt.Errorf("evidence: batch: %w", err)
		}
		batchLines = append(batchLines, line...)
		batchLines = append(batchLines, '\n')
	}
	if _, err := w.file("data/LEIAME.txt", []byte(readme(p))); err != nil {
		return sum, err
	}
	if _, err := w.file("data/batches.ndjson", batchLines); err != nil {
		return sum, err
	}
	if len(p.Chart) > 0 {
		if _, err := w.file("data/chart.png", p.Chart); err != nil {
			return sum, err
		}
	}
	custody, _ := json.MarshalIndent(p.Custody, "", "  ")
	if _, err := w.file("data/custody.json", custody); err != nil {
		return sum, err
	}
	dev := deviceJSON(p, verified, failed, unknown)
	if _, err := w.file("data/device.json", dev); err != nil {
		return sum, err
	}
	if len(p.NoticePDF) > 0 {
		if _, err := w.file("data/notice.pdf", p.NoticePDF); err != nil {
			return sum, err
		}
	}
	if err := w.readings(p, progress); err != nil {
		return sum, err
	}
	rule, _ := json.MarshalIndent(map[string]any{"code_id": p.Finding.CodeID, "code_version": p.Finding.CodeVersion, "code_title": p.CodeTitle,
		"rule_id": p.Finding.RuleID, "article": p.Finding.Article, "quote": p.Finding.Quote, "label": p.Finding.RuleLabel,
		"period": p.Finding.PeriodLabel, "limit_db": p.Finding.LimitDB, "comparison": "violação somente acima do limite (estritamente maior)"}, "", "  ")
	if _, err := w.file("data/rule.json", rule); err != nil {
		return sum, err
	}
	sj, _ := json.MarshalIndent(sum, "", "  ")
	if _, err := w.file("data/summary.json", sj); err != nil {
		return sum, err
	}
	sort.Slice(w.payload, func(i, j int) bool { return w.payload[i].name < w.payload[j].name })

	// Tag files.
	var manifest strings.Builder
	for _, e := range w.payload {
		fmt.Fprintf(&manifest, "%s  %s\n", e.sum, e.name)
	}
	info := bagInfo(p, &sum, pub, len(w.payload), w.bytes, verified, failed, unknown)
	var tags strings.Builder
	for _, t := range [][2]string{{"bag-info.txt", info}, {"bagit.txt", bagitTxt}, {"manifest-sha256.txt", manifest.String()}} {
		s, err := w.file(t[0], []byte(t[1]))
		if err != nil {
			return sum, err
		}
		fmt.Fprintf(&tags, "%s  %s\n", s, t[0])
	}
	tm := []byte(tags.String())
	if _, err := w.file("tagmanifest-sha256.txt", tm); err != nil {
		return sum, err
	}
	if _, err := w.file(sigName, []byte(base64.StdEncoding.EncodeToString(ed25519.Sign(key, tm))+"\n")); err != nil {
		return sum, err
	}
	if err := w.zw.Close(); err != nil {
		return sum, fmt.Errorf("evidence: zip: %w", err)
	}
	return sum, nil
}

func (w *writer) readings(p *Package, progress func(done, total int)) error {
	fw, h, err := w.create("data/readings.csv")
	if err != nil {
		return err
	}
	cw := &countWriter{w: fw}
	bw := bufio.NewWriterSize(cw, 64<<10)
	bw.WriteString("t_utc,t_brasilia,dur_ms,laeq_db,lafmax_db,lafmin_db,lcpeak_db,overload,gateway,batch_seq,grade,clock_synced,in_window,above_limit\n")
	f := p.Finding
	buf := make([]byte, 0, 256)
	total := len(p.Records)
	for i, r := range p.Records {
		buf = buf[:0]
		buf = r.T.UTC().AppendFormat(buf, "2006-01-02T15:04:05.000Z")
		buf = append(buf, ',')
		buf = r.T.In(saoPaulo).AppendFormat(buf, "2006-01-02 15:04:05.000")
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
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return fmt.Errorf("evidence: readings: %w", err)
		}
		if progress != nil && (i%4096 == 0 || i == total-1) {
			progress(i+1, total)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("evidence: readings: %w", err)
	}
	w.payload = append(w.payload, entry{"data/readings.csv", hex.EncodeToString(h.Sum(nil))})
	w.bytes += cw.n
	return nil
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

func csvSafe(s string) string {
	return strings.NewReplacer(",", "_", "\n", "_", "\r", "_", "\"", "_").Replace(s)
}

type batchRecord struct {
	Gateway          string          `json:"gateway"`
	Seq              uint64          `json:"seq"`
	BodyB64          string          `json:"body_b64"` // exact signed bytes
	SigB64           string          `json:"sig_b64,omitempty"`
	BodySHA256       string          `json:"body_sha256"`
	VerifiedAtIngest bool            `json:"verified_at_ingest"`
	VerifiedNow      *bool           `json:"verified_now"` // null: gateway key unknown now
	Clock            json.RawMessage `json:"clock,omitempty"`
	Device           json.RawMessage `json:"device,omitempty"`
}

func batchJSON(b Batch) batchRecord {
	s := sha256.Sum256(b.Body)
	r := batchRecord{Gateway: b.Gateway, Seq: b.Seq, BodyB64: base64.StdEncoding.EncodeToString(b.Body),
		BodySHA256: hex.EncodeToString(s[:]), VerifiedAtIngest: b.VerifiedAtIngest}
	if len(b.Sig) > 0 {
		r.SigB64 = base64.StdEncoding.EncodeToString(b.Sig)
	}
	if len(b.PublicKey) == ed25519.PublicKeySize {
		ok := len(b.Sig) == ed25519.SignatureSize && ed25519.Verify(b.PublicKey, b.Body, b.Sig)
		r.VerifiedNow = &ok
	}
	var meta struct {
		Clock  json.RawMessage `json:"clock"`
		Device json.RawMessage `json:"device"`
	}
	if json.Unmarshal(b.Body, &meta) == nil {
		r.Clock, r.Device = meta.Clock, meta.Device
	}
	return r
}

func deviceJSON(p *Package, verified, failed, unknown int) []byte {
	synced := 0
	for _, r := range p.Records {
		if r.Synced {
			synced++
		}
	}
	b, _ := json.MarshalIndent(map[string]any{
		"site": p.Site, "establishment": p.Party, "grade": p.Site.Grade, "screening": p.Finding.Screening,
		"calibrated_at": p.Site.CalibratedAt, "calibration_certificate": p.Site.Certificate,
		"clock": map[string]any{"records": len(p.Records), "records_synced": synced, "records_unsynced": len(p.Records) - synced,
			"note": "estado de sincronização do relógio do gateway informado em cada lote; offset e fonte em batches.ndjson"},
		"signatures": map[string]int{"batches": len(p.Batches), "verified_now": verified, "failed_now": failed, "key_unknown": unknown},
	}, "", "  ")
	return b
}

func bagInfo(p *Package, s *Summary, pub ed25519.PublicKey, files int, n int64, verified, failed, unknown int) string {
	fp := sha256.Sum256(pub)
	var b strings.Builder
	line := func(k, v string) {
		v = strings.Join(strings.Fields(v), " ")
		fmt.Fprintf(&b, "%s: %s\n", k, v)
	}
	line("Source-Organization", p.Organization)
	line("External-Identifier", p.AlertID)
	line("External-Description", fmt.Sprintf("Pacote de evidências do alerta %s: leituras de 1 s do sensor %s de %s a %s, %s (%s).",
		p.AlertID, p.Site.Sensor, p.From.UTC().Format(time.RFC3339), p.To.UTC().Format(time.RFC3339), p.Finding.Article, p.CodeTitle))
	line("Bagging-Date", p.Created.In(saoPaulo).Format("2006-01-02"))
	line("Bagging-Time", p.Created.UTC().Format(time.RFC3339))
	line("Bag-Software-Agent", p.Software)
	line("Payload-Oxum", fmt.Sprintf("%d.%d", n, files))
	line("Sossego-Code-Version", p.Finding.CodeVersion)
	line("Sossego-Rule", fmt.Sprintf("%s %s", p.Finding.RuleID, p.Finding.Article))
	line("Sossego-Sensor", p.Site.Sensor)
	line("Sossego-Meter", fmt.Sprintf("%s %s grade=%s", p.Site.MeterModel, p.Site.MeterSerial, p.Site.Grade))
	line("Sossego-Calibration", fmt.Sprintf("%s %s", p.Site.CalibratedAt, p.Site.Certificate))
	line("Sossego-Window", fmt.Sprintf("%s/%s", p.Finding.WindowStart.UTC().Format(time.RFC3339), p.Finding.WindowEnd.UTC().Format(time.RFC3339)))
	line("Sossego-Records", strconv.Itoa(s.RecordsTotal))
	line("Sossego-Gateway-Signatures", fmt.Sprintf("%d lotes: %d verificados, %d falharam, %d sem chave", len(p.Batches), verified, failed, unknown))
	if p.NoticeID != "" {
		line("Sossego-Notice", p.NoticeID)
	}
	line("Sossego-Signing-Key", base64.StdEncoding.EncodeToString(pub))
	line("Sossego-Signing-Key-Id", "sha256:"+hex.EncodeToString(fp[:8]))
	for _, c := range p.Custody {
		line("Custody-Event", fmt.Sprintf("%s | %s (%s) | %s | %s", c.At.UTC().Format(time.RFC3339), c.Actor, c.Role, c.Action, c.Detail))
	}
	line("Custody-Event", fmt.Sprintf("%s | sossego (sistema) | pacote gerado e assinado | chave sha256:%s", p.Created.UTC().Format(time.RFC3339), hex.EncodeToString(fp[:8])))
	return b.String()
}

func readme(p *Package) string {
	return fmt.Sprintf(`Pacote de evidências — alerta %s
%s

Este é um pacote BagIt (RFC 8493). Para conferir a integridade:

  sossego evidence verify ARQUIVO.zip

A conferência recalcula o SHA-256 de cada arquivo de data/ (manifest-sha256.txt),
de cada arquivo de controle (tagmanifest-sha256.txt) e confere a assinatura ed25519
do serviço sobre tagmanifest-sha256.txt (tagmanifest-sha256.txt.sig), com a chave
pública em bag-info.txt (Sossego-Signing-Key). Qualquer byte alterado é detectado.

readings.csv   todos os registros de 1 s do período exportado (UTC e horário de Brasília)
summary.json   resumo energético da janela do evento (LAeq, LAFmax, L10, L90, limite, margem)
rule.json      a regra aplicada, com versão do código, artigo e texto citado
device.json    ponto de medição, classe e calibração do medidor, sincronização do relógio
batches.ndjson os lotes assinados pelos gateways, byte a byte, e se cada assinatura confere
custody.json   a trilha de auditoria do caso (quem, quando, o quê)
notice.pdf     o documento da fiscalização
chart.png      gráfico das leituras com a linha do limite
`, p.AlertID, p.CodeTitle)
}

var saoPaulo = tz.Brasilia()

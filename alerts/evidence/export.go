package evidence

import (
	"archive/zip"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"sort"
	"strings"
	"time"

	kflate "github.com/klauspost/compress/flate"
)

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

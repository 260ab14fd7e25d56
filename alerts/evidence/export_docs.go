package evidence

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

func (c *Calibration) file() []byte {
	if c == nil || c.FileName == "" {
		return nil
	}
	return c.File
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

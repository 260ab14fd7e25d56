package main

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/sossego/sossego/alerts/evidence"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/alertstore"
	"github.com/sossego/sossego/internal/calibration"
	"github.com/sossego/sossego/internal/calibration/calibrationdb"
	"github.com/sossego/sossego/internal/cases/casesdb"
	"github.com/sossego/sossego/internal/central"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/workflow"
)

func init() {
	register("evidence", "exporta e confere pacotes de evidências (BagIt assinado)", runEvidence)
}

const evidenceUsage = `uso:
  sossego evidence export --alert ID [-o ARQUIVO.zip] [--data-dir DIR] [--registry ARQUIVO] [--codes-dir DIR] [--margem 10m]
  sossego evidence verify ARQUIVO.zip|PASTA [--impressao SHA256:…] [--chave-publica ARQUIVO|BASE64] [--data-dir DIR]
  sossego evidence key show [--data-dir DIR] [--json]
  sossego evidence key rotate [--data-dir DIR] [--revogar --motivo TEXTO]

export  gera o pacote BagIt (RFC 8493) do alerta: as leituras de 1 s da janela do alerta ± a
        margem, leituras ambientais, resumo, regra citada, medidor e calibração (do registro
        de calibrações DIR/` + calibration.FileName + `, com as verificações de campo assinadas,
        como no painel), método (METODO.txt), lotes assinados pelos gateways com as chaves em
        vigor quando foram recebidos, chave do serviço, atos do caso, gráfico, cadeia de
        custódia e VERIFICAR.txt;
        assina com a chave do serviço (DIR/` + evidence.KeyFile + `, criada no primeiro uso).
        O mesmo estado do caso gera os mesmos bytes; um pacote posterior a novos atos
        cita o SHA-256 do anterior.
verify  confere um zip ou uma pasta descompactada: estrutura, cada hash, o Payload-Oxum, a
        assinatura de cada lote dos gateways, as leituras contra os lotes assinados e a
        assinatura do serviço. Só diz "íntegro" se a chave que assinou for confiável:
        --impressao (a impressão digital impressa na notificação), --chave-publica (a chave
        publicada em GET /api/v1/evidence/key, em arquivo ou base64) ou --data-dir (as chaves
        deste serviço, com o histórico).
key     mostra a chave de evidências do serviço e o histórico, ou a substitui por uma nova
        (rotate): a anterior fica no histórico, com a data; com --revogar, pacotes assinados
        por ela deixam de ser aceitos.
`

func runEvidence(ctx context.Context, args []string, io stdio) int {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprint(io.err, evidenceUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	switch args[0] {
	case "export":
		return evidenceExport(ctx, args[1:], io)
	case "verify":
		return evidenceVerify(args[1:], io)
	case "key", "chave":
		return evidenceKey(args[1:], io)
	}
	fmt.Fprintf(io.err, "sossego evidence: subcomando desconhecido %q\n\n%s", args[0], evidenceUsage)
	return 2
}

// exportCmd is one run of sossego evidence export once its options are read.
type exportCmd struct {
	io                  stdio
	alert, out, dataDir string
	regPath, codesDir   string
	margin              time.Duration
	quiet               bool
}

func evidenceExport(ctx context.Context, args []string, io stdio) int {
	c := &exportCmd{io: io}
	fl := newFlags("evidence export", evidenceUsage, io)
	fl.StringVar(&c.alert, "alert", "", "id do alerta (obrigatório)")
	fl.StringVar(&c.out, "o", "", "arquivo zip de saída (padrão: evidencia-<alerta>.zip)")
	fl.StringVar(&c.dataDir, "data-dir", "./var/sossego", "diretório de dados do serviço central")
	fl.StringVar(&c.regPath, "registry", "", "cadastro (padrão: DIR/registry.yaml)")
	fl.StringVar(&c.codesDir, "codes-dir", "", "diretório com códigos YAML adicionais")
	fl.DurationVar(&c.margin, "margem", 10*time.Minute, "margem antes e depois da janela do alerta")
	fl.BoolVar(&c.quiet, "q", false, "sem barra de progresso")
	if code, ok := fl.parse(args); !ok {
		return code
	}
	if c.alert == "" || fl.NArg() > 0 {
		fmt.Fprint(io.err, "sossego evidence export: informe --alert ID\n\n"+evidenceUsage)
		return 2
	}
	for _, f := range []string{"readings.db", "cases.db"} {
		if _, err := os.Stat(filepath.Join(c.dataDir, f)); err != nil {
			return c.fail("não encontrei %s em %s: informe --data-dir com o diretório de dados do serviço central", f, c.dataDir)
		}
	}
	if c.regPath == "" {
		c.regPath = filepath.Join(c.dataDir, "registry.yaml")
	}
	if c.out == "" {
		c.out = evidence.BagName(c.alert) + ".zip"
	}
	svc, kr, closeAll, err := c.open(ctx)
	if err != nil {
		return c.fail("%v", err)
	}
	defer closeAll()
	sum, err := c.write(ctx, svc)
	if err != nil {
		return c.fail("%v", err)
	}
	fmt.Fprintf(io.out, "pacote de evidências gravado em %s\n", c.out)
	fmt.Fprintf(io.out, "  %d registros de 1 s (%d na janela do alerta), LAeq %s dB, limite %s dB\n", sum.RecordsTotal, sum.Records, num(sum.LAeqDB), num(sum.LimitDB))
	fmt.Fprintf(io.out, "  assinado com a chave do serviço %s\n", kr.Fingerprint())
	return 0
}

// fail prints a pt-BR error (errors described for users) and returns 1.
func (c *exportCmd) fail(format string, a ...any) int {
	for i, v := range a {
		if err, ok := v.(error); ok {
			a[i] = describe(err)
		}
	}
	fmt.Fprintf(c.io.err, "sossego evidence export: "+format+"\n", a...)
	return 1
}

// open reads the register and the codes and opens the data folder's
// stores and the service key; closeAll closes what was opened.
func (c *exportCmd) open(ctx context.Context) (svc *workflow.Service, kr *evidence.KeyRing, closeAll func(), err error) {
	var closers []func()
	closeOpened := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			closeOpened()
		}
	}()
	rb, err := os.ReadFile(c.regPath)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("cadastro: %w", err)
	}
	reg, err := registry.Parse(rb)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("cadastro %s: %w", c.regPath, err)
	}
	set, err := codes.LoadDir(c.codesDir)
	if err != nil {
		return nil, nil, nil, err
	}
	st, err := sqlitestore.Open(filepath.Join(c.dataDir, "readings.db"), sqlitestore.Options{})
	if err != nil {
		return nil, nil, nil, err
	}
	closers = append(closers, func() { st.Close() })
	al, err := alertstore.Open(ctx, filepath.Join(c.dataDir, "cases.db"))
	if err != nil {
		return nil, nil, nil, err
	}
	closers = append(closers, func() { al.Close() })
	cs, err := casesdb.Open(ctx, filepath.Join(c.dataDir, "cases.db"))
	if err != nil {
		return nil, nil, nil, err
	}
	closers = append(closers, func() { cs.Close() })
	if kr, err = evidence.LoadOrCreateKeyRing(c.dataDir, time.Now()); err != nil {
		return nil, nil, nil, err
	}
	cfg := workflow.Config{Cases: workflow.CaseStores{Documents: cs, Steps: cs, Constatacoes: cs, PDFs: cs, Triage: cs},
		Alerts: al, Registry: reg, Readings: st, Batches: st, Codes: set, Key: kr.Signer, Margin: c.margin,
		Evidence: workflow.EvidenceSources{Keys: kr, Env: st, Ledger: &evidence.FileLedger{Dir: filepath.Join(c.dataDir, evidence.LedgerDir)}}}
	cal, err := c.openCalibration(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	if cal != nil {
		closers = append(closers, func() { cal.Close() })
		cfg.Calibrations = cal
		cfg.Evidence.Meters = central.EvidenceMeters{Register: cal, Registry: func() *registry.Registry { return reg }}
	}
	return workflow.New(cfg), kr, closeOpened, nil
}

// openCalibration opens the data folder's calibration register for reading,
// as the service's export reads it; a folder without one (nil, no error)
// exports the register of sensors' meter data and says so on stderr.
func (c *exportCmd) openCalibration(ctx context.Context) (*calibrationdb.Register, error) {
	path := filepath.Join(c.dataDir, calibration.FileName)
	cal, err := calibrationdb.OpenReadOnly(ctx, path, calibrationdb.Options{})
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(c.io.err, "sem registro de calibrações (%s não existe): o medidor vem do cadastro de sensores, sem verificações de campo\n", path)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("registro de calibrações: %w", err)
	}
	return cal, nil
}

// write exports the bag to a temporary file next to the target and renames
// it: an interrupted export never leaves a truncated package under the name.
func (c *exportCmd) write(ctx context.Context, svc *workflow.Service) (evidence.Summary, error) {
	var progress func(done, total int)
	if !c.quiet {
		progress = progressBar(c.io.err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.out), ".evidencia-*.zip")
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		err = &fs.PathError{Op: "create", Path: c.out, Err: pe.Err} // the user's name, not the temporary one
	}
	if err != nil {
		return evidence.Summary{}, err
	}
	defer os.Remove(tmp.Name())
	sum, err := svc.Export(ctx, c.alert, tmp, progress)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return evidence.Summary{}, err
	}
	return sum, os.Rename(tmp.Name(), c.out)
}

func num(v *float64) string {
	if v == nil {
		return "—"
	}
	return strings.Replace(fmt.Sprintf("%.1f", *v), ".", ",", 1)
}

// progressBar draws "empacotando leituras [#####.....] 43.210/86.400 (50%)"
// on w, redrawing in place; it stays silent for short windows.
func progressBar(w io.Writer) func(done, total int) {
	last := -1
	return func(done, total int) {
		if total < 3600 {
			return
		}
		pct := done * 100 / total
		if pct == last && done != total {
			return
		}
		last = pct
		const width = 30
		n := pct * width / 100
		fmt.Fprintf(w, "\rempacotando leituras [%s%s] %d/%d (%d%%)", strings.Repeat("#", n), strings.Repeat(".", width-n), done, total, pct)
		if done == total {
			fmt.Fprintln(w)
		}
	}
}

func evidenceVerify(args []string, io stdio) int {
	fl := newFlags("evidence verify", evidenceUsage, io)
	dataDir := fl.String("data-dir", "", "diretório de dados: confia nas chaves deste serviço (com o histórico)")
	pubKey := fl.String("chave-publica", "", "chave pública do serviço: arquivo (PEM, base64 ou o JSON de GET /api/v1/evidence/key) ou base64")
	keyPath := fl.String("chave", "", "arquivo da chave privada do serviço (confia na chave pública dela)")
	fp := fl.String("impressao", "", "impressão digital da chave do serviço (SHA256:…, como impressa na notificação)")
	file, rest := "", args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		file, rest = args[0], args[1:]
	}
	if code, ok := fl.parse(rest); !ok {
		return code
	}
	if file == "" && fl.NArg() == 1 {
		file = fl.Arg(0)
	} else if fl.NArg() > 0 || file == "" {
		fmt.Fprint(io.err, "sossego evidence verify: informe um arquivo ou uma pasta\n\n"+evidenceUsage)
		return 2
	}
	fail := func(format string, a ...any) int {
		for i, v := range a {
			if err, ok := v.(error); ok {
				a[i] = describe(err)
			}
		}
		fmt.Fprintf(io.err, "sossego evidence verify: "+format+"\n", a...)
		return 1
	}
	trust, err := verifyTrust(*fp, *pubKey, *keyPath, *dataDir)
	if err != nil {
		return fail("%v", err)
	}
	defer quietCollector()()
	rep, err := evidence.VerifyPath(file, trust)
	if err != nil {
		return fail("%v", err)
	}
	return printVerifyReport(io.out, file, rep)
}

// verifyHeapLimit is the heap at which the collector runs again during a
// verification (quietCollector).
const verifyHeapLimit = 512 << 20

// quietCollector turns the garbage collector off until the heap nears
// verifyHeapLimit and returns what puts it back. A verification is one
// burst of allocation the command ends right after; collecting along the
// way frees little (the 24-hour bag peaks about 3 MB higher without it)
// and costs about a twentieth of its time (BENCHMARKS.md).
func quietCollector() (restore func()) {
	gc := debug.SetGCPercent(-1)
	limit := debug.SetMemoryLimit(verifyHeapLimit)
	return func() {
		debug.SetMemoryLimit(limit)
		debug.SetGCPercent(gc)
	}
}

// verifyTrust gathers the keys evidence verify trusts: a fingerprint
// (--impressao), public keys (--chave-publica), a private key's public
// half (--chave) and a data directory's key history (--data-dir), each
// when given.
func verifyTrust(fp, pubKey, keyPath, dataDir string) (evidence.Trust, error) {
	var trust evidence.Trust
	if fp != "" {
		f, err := evidence.NormalizeFingerprint(fp)
		if err != nil {
			return trust, err
		}
		trust.Fingerprints = append(trust.Fingerprints, f)
	}
	if pubKey != "" {
		ks, err := readPublicKeys(pubKey)
		if err != nil {
			return trust, fmt.Errorf("--chave-publica: %w", err)
		}
		trust.Keys = append(trust.Keys, ks...)
	}
	if keyPath != "" {
		k, err := evidence.LoadKey(keyPath)
		if err != nil {
			return trust, err
		}
		trust.Keys = append(trust.Keys, evidence.NewPublicKeyInfo(k.Public().(ed25519.PublicKey), time.Time{}, time.Time{}))
	}
	if dataDir != "" {
		hist, err := dataDirKeys(dataDir)
		if err != nil {
			return trust, err
		}
		trust.Keys = append(trust.Keys, hist...)
	}
	return trust, nil
}

// dataDirKeys is a data directory's key history, or, in an older data
// directory without one, its key alone.
func dataDirKeys(dataDir string) ([]evidence.PublicKeyInfo, error) {
	hist, err := evidence.LoadKeyHistory(dataDir)
	if !errors.Is(err, fs.ErrNotExist) {
		return hist, err
	}
	k, err := evidence.LoadKey(filepath.Join(dataDir, evidence.KeyFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s não tem chave de evidências (%s)", dataDir, evidence.KeyFile)
	}
	if err != nil {
		return nil, err
	}
	return []evidence.PublicKeyInfo{evidence.NewPublicKeyInfo(k.Public().(ed25519.PublicKey), time.Time{}, time.Time{})}, nil
}

// printVerifyReport prints the verdict and returns the exit code: 0 for
// an intact bag, 1 otherwise.
func printVerifyReport(out io.Writer, file string, rep *evidence.Report) int {
	if !rep.OK {
		fmt.Fprintf(out, "PACOTE INVÁLIDO: %s\n", file)
		for _, p := range rep.Problems {
			fmt.Fprintf(out, "  - %s\n", p)
		}
		for _, w := range rep.Warnings {
			fmt.Fprintf(out, "  aviso: %s\n", w)
		}
		return 1
	}
	fmt.Fprintf(out, "pacote íntegro: %s\n  alerta %s; %d arquivos de dados (%d bytes) conferidos\n", file, rep.AlertID, rep.PayloadFiles, rep.PayloadBytes)
	fmt.Fprintf(out, "  %d de %d lotes dos gateways com assinatura conferida; %d leituras iguais às dos lotes assinados\n",
		rep.BatchesVerified, rep.Batches, rep.ReadingsChecked)
	if rep.Checks > 0 {
		fmt.Fprintf(out, "  %d de %d verificações de campo com calibrador com assinatura conferida\n", rep.ChecksVerified, rep.Checks)
	}
	fmt.Fprintf(out, "  assinado pela chave confiável %s (%s)\n", rep.KeyFingerprint, rep.TrustNote)
	for _, w := range rep.Warnings {
		fmt.Fprintf(out, "  aviso: %s\n", w)
	}
	return 0
}

// readPublicKeys reads --chave-publica: base64 of the key, or a file with
// it (base64, PEM, or the key history JSON the service publishes).
func readPublicKeys(v string) ([]evidence.PublicKeyInfo, error) {
	b, err := os.ReadFile(v)
	if err != nil {
		if k, derr := base64.StdEncoding.DecodeString(strings.TrimSpace(v)); derr == nil && len(k) == ed25519.PublicKeySize {
			return []evidence.PublicKeyInfo{evidence.NewPublicKeyInfo(k, time.Time{}, time.Time{})}, nil
		}
		return nil, fmt.Errorf("não é um arquivo legível nem uma chave ed25519 em base64: %w", err)
	}
	t := strings.TrimSpace(string(b))
	switch {
	case strings.HasPrefix(t, "{") || strings.HasPrefix(t, "["):
		return evidence.ParseKeyHistory(b)
	case strings.HasPrefix(t, "-----BEGIN"):
		blk, _ := pem.Decode(b)
		if blk == nil {
			return nil, errors.New("PEM ilegível")
		}
		k, err := x509.ParsePKIXPublicKey(blk.Bytes)
		pk, ok := k.(ed25519.PublicKey)
		if err != nil || !ok {
			return nil, errors.New("o PEM não é uma chave pública ed25519")
		}
		return []evidence.PublicKeyInfo{evidence.NewPublicKeyInfo(pk, time.Time{}, time.Time{})}, nil
	}
	k, err := base64.StdEncoding.DecodeString(t)
	if err != nil || len(k) != ed25519.PublicKeySize {
		return nil, errors.New("o arquivo não traz uma chave ed25519 (base64, PEM ou JSON de GET /api/v1/evidence/key)")
	}
	return []evidence.PublicKeyInfo{evidence.NewPublicKeyInfo(k, time.Time{}, time.Time{})}, nil
}

func evidenceKey(args []string, io stdio) int {
	if len(args) == 0 || (args[0] != "show" && args[0] != "rotate") {
		fmt.Fprint(io.err, "sossego evidence key: use show ou rotate\n\n"+evidenceUsage)
		return 2
	}
	fl := newFlags("evidence key "+args[0], evidenceUsage, io)
	dataDir := fl.String("data-dir", "./var/sossego", "diretório de dados do serviço central")
	asJSON := fl.Bool("json", false, "saída em JSON (como GET /api/v1/evidence/key)")
	revoke := fl.Bool("revogar", false, "a chave atual foi comprometida: pacotes assinados por ela deixam de ser aceitos")
	reason := fl.String("motivo", "", "motivo da revogação (com --revogar)")
	if code, ok := fl.parse(args[1:]); !ok {
		return code
	}
	if *revoke && strings.TrimSpace(*reason) == "" {
		fmt.Fprint(io.err, "sossego evidence key rotate: com --revogar, informe --motivo\n")
		return 2
	}
	var kr *evidence.KeyRing
	var err error
	if args[0] == "rotate" {
		kr, err = evidence.RotateKey(*dataDir, time.Now(), *revoke, *reason)
	} else {
		kr, err = evidence.LoadOrCreateKeyRing(*dataDir, time.Now())
	}
	if err != nil {
		fmt.Fprintf(io.err, "sossego evidence key: %s\n", describe(err))
		return 1
	}
	if *asJSON {
		b, _ := json.MarshalIndent(evidence.PublishedKey(kr), "", "  ")
		fmt.Fprintf(io.out, "%s\n", b)
		return 0
	}
	if args[0] == "rotate" {
		fmt.Fprintln(io.out, "nova chave de evidências criada; a anterior ficou no histórico")
	}
	fmt.Fprintf(io.out, "chave de evidências do serviço (ed25519)\n  impressão digital: %s\n  chave pública:     %s\n  histórico:\n",
		evidence.GroupedFingerprint(kr.Fingerprint()), kr.Current().PublicKey)
	for _, h := range kr.History {
		state := "em vigor"
		switch {
		case h.Revoked:
			state = "REVOGADA em " + h.ValidUntil.Local().Format("02/01/2006 15:04") + ": " + h.Reason
		case !h.ValidUntil.IsZero():
			state = "substituída em " + h.ValidUntil.Local().Format("02/01/2006 15:04")
		}
		from := "—"
		if !h.ValidFrom.IsZero() {
			from = h.ValidFrom.Local().Format("02/01/2006 15:04")
		}
		fmt.Fprintf(io.out, "    %s  desde %s, %s\n", h.Fingerprint, from, state)
	}
	return 0
}

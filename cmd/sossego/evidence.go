package main

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sossego/sossego/alerts/evidence"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/cases"
	"github.com/sossego/sossego/internal/casestore"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/workflowapi"
)

func init() {
	register("evidence", "exporta e confere pacotes de evidências (BagIt assinado)", runEvidence)
}

const evidenceUsage = `uso:
  sossego evidence export --alert ID [-o ARQUIVO.zip] [--data-dir DIR] [--registry ARQUIVO] [--codes-dir DIR]
  sossego evidence verify ARQUIVO.zip [--data-dir DIR | --chave ARQUIVO]

export  gera o pacote BagIt (RFC 8493) do alerta: todas as leituras de 1 s da janela com
        margens, resumo, regra citada, medidor e calibração, relógio, lotes assinados pelos
        gateways, documento da fiscalização em PDF, gráfico, cadeia de custódia; assina com a
        chave do serviço (DIR/` + evidence.KeyFile + `, criada no primeiro uso).
verify  confere a estrutura, cada hash e a assinatura, e diz exatamente o que está errado;
        com --data-dir ou --chave exige que o pacote tenha sido assinado por este serviço.
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
	}
	fmt.Fprintf(io.err, "sossego evidence: subcomando desconhecido %q\n\n%s", args[0], evidenceUsage)
	return 2
}

func evidenceExport(ctx context.Context, args []string, io stdio) int {
	fl := newFlags("evidence export", evidenceUsage, io)
	alert := fl.String("alert", "", "id do alerta (obrigatório)")
	out := fl.String("o", "", "arquivo zip de saída (padrão: evidencia-<alerta>.zip)")
	dataDir := fl.String("data-dir", "./var/sossego", "diretório de dados do serviço central")
	regPath := fl.String("registry", "", "cadastro (padrão: DIR/registry.yaml)")
	codesDir := fl.String("codes-dir", "", "diretório com códigos YAML adicionais")
	margin := fl.Duration("margem", 10*time.Minute, "margem antes e depois da janela do alerta")
	quiet := fl.Bool("q", false, "sem barra de progresso")
	if code, ok := fl.parse(args); !ok {
		return code
	}
	if *alert == "" || fl.NArg() > 0 {
		fmt.Fprint(io.err, "sossego evidence export: informe --alert ID\n\n"+evidenceUsage)
		return 2
	}
	fail := func(format string, a ...any) int {
		for i, v := range a {
			if err, ok := v.(error); ok {
				a[i] = describe(err)
			}
		}
		fmt.Fprintf(io.err, "sossego evidence export: "+format+"\n", a...)
		return 1
	}
	for _, f := range []string{"readings.db", "cases.db"} {
		if _, err := os.Stat(filepath.Join(*dataDir, f)); err != nil {
			return fail("não encontrei %s em %s: informe --data-dir com o diretório de dados do serviço central", f, *dataDir)
		}
	}
	if *regPath == "" {
		*regPath = filepath.Join(*dataDir, "registry.yaml")
	}
	rb, err := os.ReadFile(*regPath)
	if err != nil {
		return fail("cadastro: %v", err)
	}
	reg, err := registry.Parse(rb)
	if err != nil {
		return fail("cadastro %s: %v", *regPath, err)
	}
	set, err := codes.LoadDir(*codesDir)
	if err != nil {
		return fail("%v", err)
	}
	st, err := store.OpenSQLite(filepath.Join(*dataDir, "readings.db"), store.SQLiteOptions{})
	if err != nil {
		return fail("%v", err)
	}
	defer st.Close()
	al, err := casestore.Open(ctx, filepath.Join(*dataDir, "cases.db"))
	if err != nil {
		return fail("%v", err)
	}
	defer al.Close()
	cs, err := cases.Open(ctx, filepath.Join(*dataDir, "cases.db"))
	if err != nil {
		return fail("%v", err)
	}
	defer cs.Close()
	key, err := evidence.LoadOrCreateKey(*dataDir)
	if err != nil {
		return fail("%v", err)
	}
	svc := &workflowapi.Service{Cases: cs, Alerts: al, Registry: reg, Readings: st, Batches: st, Codes: set, Key: key,
		Margin: *margin, Software: "sossego evidence export"}
	if *out == "" {
		*out = evidence.BagName(*alert) + ".zip"
	}
	var progress func(done, total int)
	if !*quiet {
		progress = progressBar(io.err)
	}
	// Write to a temporary file next to the target and rename: an
	// interrupted export never leaves a truncated package under the name.
	tmp, err := os.CreateTemp(filepath.Dir(*out), ".evidencia-*.zip")
	if err != nil {
		return fail("%v", err)
	}
	defer os.Remove(tmp.Name())
	sum, err := svc.Export(ctx, *alert, tmp, progress)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail("%v", err)
	}
	if err := os.Rename(tmp.Name(), *out); err != nil {
		return fail("%v", err)
	}
	pub := key.Public().(ed25519.PublicKey)
	fmt.Fprintf(io.out, "pacote de evidências gravado em %s\n", *out)
	fmt.Fprintf(io.out, "  %d registros de 1 s (%d na janela do alerta), LAeq %s dB, limite %s dB\n", sum.RecordsTotal, sum.Records, num(sum.LAeqDB), num(sum.LimitDB))
	fmt.Fprintf(io.out, "  assinado com a chave do serviço %s\n", keyID(pub))
	return 0
}

func num(v *float64) string {
	if v == nil {
		return "—"
	}
	return strings.Replace(fmt.Sprintf("%.1f", *v), ".", ",", 1)
}

func keyID(pub ed25519.PublicKey) string {
	h := sha256.Sum256(pub)
	return "sha256:" + hex.EncodeToString(h[:8])
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
	dataDir := fl.String("data-dir", "", "diretório de dados: exige a assinatura da chave deste serviço")
	keyPath := fl.String("chave", "", "arquivo da chave do serviço (exige a assinatura dela)")
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
		fmt.Fprint(io.err, "sossego evidence verify: informe um arquivo\n\n"+evidenceUsage)
		return 2
	}
	var trusted ed25519.PublicKey
	switch {
	case *keyPath != "":
		k, err := evidence.LoadKey(*keyPath)
		if err != nil {
			fmt.Fprintf(io.err, "sossego evidence verify: %s\n", describe(err))
			return 1
		}
		trusted = k.Public().(ed25519.PublicKey)
	case *dataDir != "":
		k, err := evidence.LoadKey(filepath.Join(*dataDir, evidence.KeyFile))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(io.err, "sossego evidence verify: %s não tem chave de evidências (%s)\n", *dataDir, evidence.KeyFile)
			} else {
				fmt.Fprintf(io.err, "sossego evidence verify: %s\n", describe(err))
			}
			return 1
		}
		trusted = k.Public().(ed25519.PublicKey)
	}
	f, err := os.Open(file)
	if err != nil {
		fmt.Fprintf(io.err, "sossego evidence verify: %s\n", describe(err))
		return 1
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		fmt.Fprintf(io.err, "sossego evidence verify: %s\n", describe(err))
		return 1
	}
	rep := evidence.Verify(f, st.Size(), trusted)
	if !rep.OK {
		fmt.Fprintf(io.out, "PACOTE INVÁLIDO: %s\n", file)
		for _, p := range rep.Problems {
			fmt.Fprintf(io.out, "  - %s\n", p)
		}
		return 1
	}
	fmt.Fprintf(io.out, "pacote íntegro: %s\n  alerta %s; %d arquivos de dados (%d bytes) conferidos; assinatura ed25519 válida (chave %s)\n",
		file, rep.AlertID, rep.PayloadFiles, rep.PayloadBytes, rep.KeyID)
	if trusted != nil {
		fmt.Fprintln(io.out, "  assinado pela chave deste serviço")
	} else {
		fmt.Fprintln(io.out, "  atenção: sem --data-dir ou --chave não se confere QUEM assinou, só que nada mudou depois da assinatura")
	}
	return 0
}

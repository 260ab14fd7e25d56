package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/sossego/sossego/internal/backup"
	"github.com/sossego/sossego/internal/central"
)

func init() {
	register("backup", "cópia de segurança da pasta de dados, com o serviço no ar (bancos consistentes e SHA256SUMS)", runBackup)
}

const backupUsage = `uso: sossego backup --data-dir DIR -o PASTA

Copia a pasta de dados do serviço central para PASTA (nova, ou uma pasta vazia,
fora da pasta de dados — de preferência em outro disco), com o serviço no ar:
  - cada banco SQLite (leituras, casos, usuários, calibração…) como uma cópia
    consistente de um instante, conferida depois de gravada;
  - os demais arquivos como estão: a chave que assina os pacotes de evidências
    (evidence-ed25519.key, a única chave privada: guarde a cópia com o mesmo
    cuidado), o histórico das chaves, o cadastro, os pacotes já exportados;
  - PASTA/SHA256SUMS, para conferir a cópia: cd PASTA && sha256sum -c SHA256SUMS
A cópia é gravada ao lado de PASTA e só recebe o nome PASTA quando está completa.
Para restaurar: pare o serviço, copie o conteúdo de PASTA (menos SHA256SUMS)
para uma pasta de dados vazia e inicie o serviço com ela.`

func runBackup(ctx context.Context, args []string, io stdio) int {
	fs := newFlags("backup", backupUsage, io)
	dir := fs.String("data-dir", "", "diretório de dados do serviço central")
	dest := fs.String("o", "", "pasta da cópia (não pode existir, ou deve estar vazia)")
	if code, ok := fs.parse(args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(io.err, "sossego backup: argumentos inesperados %q (use --data-dir DIR -o PASTA)\n", fs.Args())
		return 2
	}
	if *dir == "" || *dest == "" {
		fmt.Fprintln(io.err, "sossego backup: informe --data-dir (a pasta de dados do serviço central) e -o (a pasta da cópia)")
		return 2
	}
	sum, err := backup.Run(ctx, *dir, *dest)
	if err != nil {
		fmt.Fprintf(io.err, "sossego backup: %s\nnenhuma cópia foi gravada.\n", describe(err))
		return 1
	}
	fmt.Fprintf(io.out, "cópia de segurança gravada em %s\n", sum.Dir)
	fmt.Fprintf(io.out, "  %d bancos SQLite (cópias consistentes, conferidas), %d outros arquivos, %s\n",
		len(sum.Databases), len(sum.Files), central.FormatBytes(uint64(sum.Bytes)))
	printSkipped(io, sum.Skipped)
	fmt.Fprintf(io.out, "  confira com: cd %s && sha256sum -c %s\n", shellQuote(sum.Dir), backup.SumsFile)
	return 0
}

// shellQuote quotes p for a POSIX shell when it holds anything beyond
// letters, digits and / . _ - (the summary's command is meant to be pasted).
func shellQuote(p string) string {
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-", r)) {
			return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
		}
	}
	return p
}

// printSkipped lists what the backup left out, by reason: the paths of a
// reason with few, the count of one with many (every database's side files).
func printSkipped(io stdio, skipped []backup.Skipped) {
	var reasons []string
	paths := map[string][]string{}
	for _, s := range skipped {
		if _, seen := paths[s.Reason]; !seen {
			reasons = append(reasons, s.Reason)
		}
		paths[s.Reason] = append(paths[s.Reason], s.Path)
	}
	for _, r := range reasons {
		if ps := paths[r]; len(ps) > 3 {
			fmt.Fprintf(io.out, "  fora da cópia: %d arquivos — %s\n", len(ps), r)
		} else {
			fmt.Fprintf(io.out, "  fora da cópia: %s — %s\n", strings.Join(ps, ", "), r)
		}
	}
}

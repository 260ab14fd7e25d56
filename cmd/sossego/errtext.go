package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"regexp"
	"strings"
	"syscall"

	"github.com/sossego/sossego/internal/sqlitedb"
)

// describe renders err for the terminal in pt-BR: the English messages of
// the operating system and the network stack inside it ("open x: no such
// file or directory", "bind: address already in use") are replaced by what
// happened and what to fix; the names of the program's own packages that
// wrap them ("alertstore: ", "sqlite cases.db: open: ") are dropped, the
// file's name kept; the rest of the chain is kept.
func describe(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	walk(err, func(e error) bool {
		en := e.Error()
		pt, ok := translate(e)
		if ok && strings.Contains(msg, en) {
			msg = strings.Replace(msg, en, pt, 1)
			return false // its causes are in pt now
		}
		return true
	})
	return stripPackages(msg)
}

// packagePrefix is one of the program's package names as its errors begin
// ("store: ", "alertstore: "…): a developer's signpost, meaningless to the
// user, at the start of the message or of a cause (after ": " or a line
// break). Portuguese context ("cadastro: ", "destino: ") is not matched.
// TestPackagePrefixesKnown finds a package missing from the list.
var packagePrefix = regexp.MustCompile(`(^|: |\n)(?:(?:alerts|alertstore|bme280|broker|calibration|cases|central|codes|dashboard|evidence|gateway|holidays|influx|ingest|level|loadgen|longterm|migrate|monetary|mqttconn|mqttnet|notice|notify|nsrtmk4|pack|pcbadbm|pdf|registry|retention|run|sen0232|signature|sim|slm|stats|store|users|wire|xl2): )+`)

// sqlitePrefix is how the database layer names a file: "sqlite PATH: open: "
// says no more to a user than "PATH: ".
var sqlitePrefix = regexp.MustCompile(`sqlite (\S+): (?:open|create|migrate|quick_check): `)

func stripPackages(msg string) string {
	msg = sqlitePrefix.ReplaceAllString(msg, "$1: ")
	return packagePrefix.ReplaceAllString(msg, "$1")
}

// walk visits err's tree outermost first; visit returns false to skip the
// causes of the error it was given.
func walk(err error, visit func(error) bool) {
	if err == nil || !visit(err) {
		return
	}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			walk(e, visit)
		}
	case interface{ Unwrap() error }:
		walk(u.Unwrap(), visit)
	}
}

// translate renders the errors describe knows.
func translate(e error) (string, bool) {
	switch e {
	case context.Canceled:
		return "interrompido antes de terminar (Ctrl-C ou o serviço parando)", true
	case context.DeadlineExceeded:
		return "tempo esgotado", true
	}
	switch v := e.(type) {
	case *sqlitedb.DamagedError:
		return fmt.Sprintf("o arquivo não é um banco de dados SQLite ou está danificado (SQLite: %q): "+
			"restaure-o da cópia de segurança mais recente (feita com sossego backup)", v.Detail), true
	case *fs.PathError:
		return fmt.Sprintf("não foi possível %s %q: %s", pathOp(v.Op), v.Path, cause(v.Err)), true
	case *os.LinkError:
		return fmt.Sprintf("não foi possível %s %q em %q: %s", pathOp(v.Op), v.Old, v.New, cause(v.Err)), true
	case *os.SyscallError:
		return fmt.Sprintf("%s: %s", v.Syscall, cause(v.Err)), true
	case *net.OpError:
		addr := ""
		if v.Addr != nil {
			addr = " " + v.Addr.String()
		}
		return fmt.Sprintf("não foi possível %s%s: %s", netOp(v.Op), addr, cause(v.Err)), true
	case *net.DNSError:
		if v.IsNotFound {
			return fmt.Sprintf("o nome %q não foi encontrado (DNS): confira o endereço", v.Name), true
		}
		return fmt.Sprintf("falha ao resolver o nome %q (DNS): confira a rede e o servidor de nomes", v.Name), true
	case syscall.Errno:
		return cause(v), true
	}
	return "", false
}

// cause says an operating system error in pt-BR with what to do about it.
func cause(err error) string {
	var se *os.SyscallError
	if errors.As(err, &se) {
		err = se.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "o arquivo ou a pasta não existe; confira o caminho"
	case errors.Is(err, fs.ErrPermission):
		return "permissão negada; confira o dono e as permissões (ou rode como o usuário do serviço)"
	case errors.Is(err, fs.ErrExist):
		return "já existe"
	case errors.Is(err, syscall.ENOSPC):
		return "disco cheio; libere espaço"
	case errors.Is(err, syscall.EISDIR):
		return "é uma pasta, não um arquivo"
	case errors.Is(err, syscall.ENOTDIR):
		return "parte do caminho não é uma pasta"
	case errors.Is(err, syscall.EROFS):
		return "o sistema de arquivos é somente leitura"
	case errors.Is(err, syscall.EADDRINUSE):
		return "o endereço já está em uso por outro programa; escolha outra porta ou pare o outro serviço"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return "o endereço não pertence a esta máquina"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "conexão recusada: nada escuta nesse endereço; confira o endereço e se o serviço está no ar"
	case errors.Is(err, syscall.ECONNRESET):
		return "a conexão foi encerrada pelo outro lado"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "máquina ou rede inalcançável; confira a rede"
	case errors.Is(err, os.ErrDeadlineExceeded):
		return "tempo esgotado"
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		pt, _ := translate(dns)
		return pt
	}
	return err.Error()
}

func pathOp(op string) string {
	switch op {
	case "open":
		return "abrir"
	case "read":
		return "ler"
	case "write":
		return "gravar"
	case "stat", "lstat", "fstat":
		return "consultar"
	case "mkdir", "mkdirall":
		return "criar a pasta"
	case "remove", "unlinkat", "unlink", "rmdir":
		return "apagar"
	case "rename":
		return "renomear"
	case "close":
		return "fechar"
	case "sync", "fsync":
		return "gravar no disco"
	case "chmod", "chown":
		return "mudar as permissões de"
	case "readdirent", "readdir", "fdopendir":
		return "listar"
	case "truncate":
		return "truncar"
	case "create", "createtemp":
		return "criar"
	case "seek":
		return "posicionar em"
	}
	return op
}

func netOp(op string) string {
	switch op {
	case "listen":
		return "escutar em"
	case "dial":
		return "conectar a"
	case "read":
		return "ler de"
	case "write":
		return "enviar a"
	case "accept":
		return "aceitar conexões em"
	}
	return op
}

package dashboard

// The one way the API writes JSON and errors ({"erro": "…"} in pt-BR, with
// "problemas" when there are several) and the one way a handler reads a
// request body (size cap, strict decoding, a pt-BR error saying what to
// fix).

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"syscall"
)

// apiJSON writes v as the JSON answer, never cached.
func apiJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// apiError writes {"erro": msg}; msg is pt-BR and says what to do.
func apiError(w http.ResponseWriter, status int, msg string) {
	apiJSON(w, status, map[string]string{"erro": msg})
}

// WriteError is apiError for the central service's own refusals (a body
// over the server's bound): the one JSON error writer of the API.
func WriteError(w http.ResponseWriter, status int, msg string) { apiError(w, status, msg) }

// apiProblems writes {"erro": msg, "problemas": [...]}: every problem of a
// refused input at once (the list is left out when empty).
func apiProblems(w http.ResponseWriter, status int, msg string, problems []string) {
	if len(problems) == 0 {
		apiError(w, status, msg)
		return
	}
	apiJSON(w, status, map[string]any{"erro": msg, "problemas": problems})
}

// serverError answers a failure the user cannot mend from the request (a
// store that failed, a file that could not be read or written). The whole
// error goes to the service's log under a short reference, and the answer
// gives that reference in Portuguese, never the error's own words: those
// name the program's packages, paths and SQLite's codes. A full disk is
// said as such (507), since the administrator can act on it.
func serverError(w http.ResponseWriter, log *slog.Logger, area string, err error) {
	ref := logFailure(log, area, err)
	if errors.Is(err, syscall.ENOSPC) {
		apiJSON(w, http.StatusInsufficientStorage, map[string]string{
			"erro": "o disco do servidor está cheio e a operação não foi concluída: libere espaço na pasta de dados " +
				"e tente de novo (referência " + ref + " no log do serviço)",
			"referencia": ref})
		return
	}
	apiJSON(w, http.StatusInternalServerError, map[string]string{
		"erro": "erro interno do serviço; a operação não foi concluída. Tente de novo; se persistir, informe ao administrador " +
			"a referência " + ref + " (ele encontra os detalhes no log do serviço)",
		"referencia": ref})
}

// logFailure logs err under a new reference and returns it: eight hex
// digits an operator can read over the phone and find with grep.
func logFailure(log *slog.Logger, area string, err error) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	ref := hex.EncodeToString(b[:])
	if log != nil {
		log.Error(area+": erro na API", "referencia", ref, "erro", err)
	}
	return ref
}

// httpError carries a status and a pt-BR message.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func fail(status int, format string, a ...any) error {
	return &httpError{status, fmt.Sprintf(format, a...)}
}

// bodyKind says what a route accepts as its request body.
type bodyKind int

const (
	// jsonBody: a JSON object sent as application/json; an empty body is
	// refused.
	jsonBody bodyKind = iota
	// optionalBody: a route whose fields are all optional (the workflow's
	// steps): an empty body leaves v as it is, and the Content-Type is not
	// checked, so `curl -X POST …/issue` works.
	optionalBody
)

// readJSON reads a request body of at most limit bytes into v: unknown
// fields and data after the value are refused. The error is an *httpError
// with status 400 whose pt-BR message says what to fix.
func readJSON(w http.ResponseWriter, r *http.Request, limit int64, kind bodyKind, v any) error {
	if kind == jsonBody {
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			return fail(http.StatusBadRequest, "envie o corpo como JSON (Content-Type: application/json)")
		}
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); errors.Is(err, io.EOF) {
		if kind == optionalBody {
			return nil
		}
		return fail(http.StatusBadRequest, "corpo JSON vazio")
	} else if err != nil {
		return fail(http.StatusBadRequest, "corpo JSON inválido: %s", jsonProblem(err))
	}
	if dec.More() {
		return fail(http.StatusBadRequest, "corpo JSON inválido: dados depois do objeto")
	}
	return nil
}

// byteSize is n in bytes or KiB, for messages.
func byteSize(n int64) string {
	if n >= 1<<10 && n%(1<<10) == 0 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

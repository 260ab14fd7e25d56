package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"reflect"
	"strings"
	"time"
)

// jsonProblem says in pt-BR what is wrong with a request body that did not
// decode, and what to fix: encoding/json's own messages are English and
// name Go types ("json: unknown field", "cannot unmarshal string into Go
// struct field …").
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var big *http.MaxBytesError
	var tm *time.ParseError
	var netErr net.Error
	switch {
	case errors.As(err, &big):
		return "corpo maior que " + byteSize(big.Limit)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return "o corpo demorou demais para chegar; envie de novo"
	case errors.As(err, &syn):
		return fmt.Sprintf("JSON malformado perto do byte %d: confira aspas, vírgulas, chaves e colchetes", syn.Offset)
	case errors.As(err, &typ):
		want, got := goKind(typ.Type), jsonKind(typ.Value)
		if typ.Field == "" {
			return fmt.Sprintf("o corpo deveria ser %s, veio %s", want, got)
		}
		return fmt.Sprintf("o campo %q deveria ser %s, veio %s", typ.Field, want, got)
	case errors.As(err, &tm):
		return fmt.Sprintf("data e hora %q inválida: use RFC 3339, como 2026-03-14T22:30:00-03:00", tm.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "JSON incompleto: o corpo termina antes de fechar o objeto"
	case errors.As(err, &netErr):
		return "o corpo não chegou inteiro; envie de novo"
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "campo desconhecido " + name + ": confira o nome (veja docs/api.md e docs/workflow-api.md)"
	}
	if !strings.HasPrefix(msg, "json:") && msg != "" {
		// A field's own decoder (a value in R$, a duration) says in pt-BR
		// what is wrong with it.
		return msg
	}
	return "corpo ilegível"
}

// goKind names, in pt-BR, the JSON a Go type decodes from.
func goKind(t reflect.Type) string {
	if t == nil {
		return "outro tipo"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.PkgPath() == "time" && t.Name() == "Time" {
		return "uma data e hora RFC 3339 (texto)"
	}
	switch t.Kind() {
	case reflect.String:
		return "um texto"
	case reflect.Bool:
		return "true ou false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "um número inteiro"
	case reflect.Float32, reflect.Float64:
		return "um número"
	case reflect.Slice, reflect.Array:
		return "uma lista"
	case reflect.Struct, reflect.Map:
		return "um objeto"
	}
	return "outro tipo"
}

// jsonKind names, in pt-BR, the kind of JSON value UnmarshalTypeError.Value
// reports.
func jsonKind(v string) string {
	switch {
	case v == "string":
		return "um texto"
	case v == "bool":
		return "true ou false"
	case v == "array":
		return "uma lista"
	case v == "object":
		return "um objeto"
	case v == "null":
		return "null"
	case strings.HasPrefix(v, "number"):
		return "um número"
	}
	return v
}

package dashboard

import "testing"

func TestCaseBoolParam(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		raw     string
		want    *bool
		wantErr string
	}{
		{"", nil, ""},
		{"  ", nil, ""},
		{"true", &yes, ""},
		{"1", &yes, ""},
		{" SIM ", &yes, ""},
		{"false", &no, ""},
		{"0", &no, ""},
		{"nao", &no, ""},
		{"Não", &no, ""},
		{"talvez", nil, `overdue="talvez" inválido: use true ou false`},
	} {
		got, err := caseBoolParam("overdue", tc.raw)
		if msg := paramErrText(err); msg != tc.wantErr {
			t.Errorf("caseBoolParam(%q) error = %q, want %q", tc.raw, msg, tc.wantErr)
			continue
		}
		if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("caseBoolParam(%q) = %v, want %v", tc.raw, got, tc.want)
		}
	}
}

func TestCaseIntParam(t *testing.T) {
	for _, tc := range []struct {
		raw     string
		want    int
		wantErr string
	}{
		{"", 50, ""},
		{" 7 ", 7, ""},
		{"1", 1, ""},
		{"200", 200, ""},
		{"0", 0, `page_size="0" inválido: use um número inteiro de 1 a 200`},
		{"201", 0, `page_size="201" inválido: use um número inteiro de 1 a 200`},
		{"dez", 0, `page_size="dez" inválido: use um número inteiro de 1 a 200`},
	} {
		got, err := caseIntParam("page_size", tc.raw, 50, 1, 200)
		if msg := paramErrText(err); msg != tc.wantErr || got != tc.want {
			t.Errorf("caseIntParam(%q) = %d, %q; want %d, %q", tc.raw, got, msg, tc.want, tc.wantErr)
		}
	}
}

func TestCheckCaseParams(t *testing.T) {
	for _, tc := range []struct {
		name    string
		q       map[string][]string
		wantErr string
	}{
		{"none", nil, ""},
		{"known", map[string][]string{"sort": {"recent"}, "page": {"2"}}, ""},
		{"repeated alert and state", map[string][]string{"alert": {"a", "b"}, "state": {"x", "y"}}, ""},
		{"unknown", map[string][]string{"cor": {"azul"}}, `parâmetro desconhecido "cor": use municipality, state, overdue, mine, address, alert, sort, page, page_size`},
		{"repeated sort", map[string][]string{"sort": {"recent", "deadline"}}, `o parâmetro "sort" aparece 2 vezes: informe-o uma vez só`},
	} {
		if msg := paramErrText(checkCaseParams(tc.q)); msg != tc.wantErr {
			t.Errorf("%s: error = %q, want %q", tc.name, msg, tc.wantErr)
		}
	}
}

func paramErrText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

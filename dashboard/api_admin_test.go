package dashboard

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/monetary/monetarydb"
)

// adminFixture mounts the administration routes, backed by the real user
// and monetary stores, on the auth fixture.
func adminFixture(t *testing.T) (*fixture, *monetarydb.Store) {
	t.Helper()
	f := newFixture(t, HubOptions{}, AuthOptions{LoginAttempts: 100})
	units, err := monetarydb.Open(context.Background(), filepath.Join(t.TempDir(), monetarydb.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { units.Close() })
	set, err := codes.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	NewAdminAPI(AdminOptions{Users: f.store, Units: units, Codes: set, Now: f.clock.Now}).Register(f.mux, f.auth)
	return f, units
}

func TestAdminUsersAPI(t *testing.T) {
	f, _ := adminFixture(t)
	admC, admX := f.login(t, "adm")
	fisC, fisX := f.login(t, "fis")
	opC, opX := f.login(t, "op")
	const maria = `{"name":"maria","role":"fiscal","password":"senha-da-maria-1","full_name":"Maria dos Santos","matricula":"12.345-6",
		"email":"maria@lapa.pr.gov.br","phone":"41 99988-7766"}`
	tests := []struct {
		name         string
		method, path string
		body         string
		cookie, csrf string
		want         int
		wantErr      string
	}{
		{"operador cannot list users", "GET", "/api/v1/admin/users", "", opC, "", 403, "seu perfil (operador) não permite esta ação"},
		{"fiscal cannot list users", "GET", "/api/v1/admin/users", "", fisC, "", 403, "seu perfil (fiscal) não permite"},
		{"fiscal cannot add a user", "POST", "/api/v1/admin/users", maria, fisC, fisX, 403, "não permite"},
		{"operador cannot edit a user", "PATCH", "/api/v1/admin/users/op", `{"role":"admin"}`, opC, opX, 403, "não permite"},
		{"no login", "GET", "/api/v1/admin/users", "", "", "", 401, "faça login"},
		{"no CSRF token", "POST", "/api/v1/admin/users", maria, admC, "", 403, "CSRF"},
		{"fiscal without matrícula", "POST", "/api/v1/admin/users", strings.Replace(maria, `"matricula":"12.345-6",`, "", 1), admC, admX, 400,
			"matrícula: obrigatória para fiscal"},
		{"bad e-mail and phone", "POST", "/api/v1/admin/users", strings.NewReplacer("maria@lapa.pr.gov.br", "maria", "41 99988-7766", "999").Replace(maria),
			admC, admX, 400, `e-mail "maria" inválido: use o formato nome@prefeitura.gov.br; telefone "999" inválido`},
		{"short password", "POST", "/api/v1/admin/users", strings.Replace(maria, "senha-da-maria-1", "curta", 1), admC, admX, 400, "senha: use pelo menos 10"},
		{"unknown field", "POST", "/api/v1/admin/users", `{"nome":"x"}`, admC, admX, 400, "JSON inválido"},
		{"created", "POST", "/api/v1/admin/users", maria, admC, admX, 201, ""},
		{"duplicate", "POST", "/api/v1/admin/users", maria, admC, admX, 409, "já existe"},
		{"edit e-mail", "PATCH", "/api/v1/admin/users/maria", `{"email":"m.santos@lapa.pr.gov.br"}`, admC, admX, 200, ""},
		{"edit clears matrícula", "PATCH", "/api/v1/admin/users/maria", `{"matricula":""}`, admC, admX, 400, "matrícula: obrigatória"},
		{"edit nothing", "PATCH", "/api/v1/admin/users/maria", `{}`, admC, admX, 400, "nada a alterar"},
		{"edit unknown", "PATCH", "/api/v1/admin/users/zeca", `{"phone":"41 3622-1234"}`, admC, admX, 404, "usuário desconhecido: zeca"},
		{"last admin", "PATCH", "/api/v1/admin/users/adm", `{"disabled":true}`, admC, admX, 409, "último administrador ativo"},
		{"disable", "PATCH", "/api/v1/admin/users/op", `{"disabled":true}`, admC, admX, 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := f.do(t, tc.method, tc.path, tc.body, tc.cookie, tc.csrf, f.srv.URL)
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d: %v", resp.StatusCode, tc.want, body)
			}
			if tc.wantErr != "" && !strings.Contains(body["erro"].(string), tc.wantErr) {
				t.Fatalf("erro %q lacks %q", body["erro"], tc.wantErr)
			}
		})
	}
	resp, body := f.do(t, "GET", "/api/v1/admin/users", "", admC, "", "")
	if resp.StatusCode != 200 {
		t.Fatal(resp.StatusCode, body)
	}
	var got map[string]any
	for _, u := range body["users"].([]any) {
		if m := u.(map[string]any); m["name"] == "maria" {
			got = m
		}
	}
	if got == nil || got["full_name"] != "Maria dos Santos" || got["matricula"] != "12.345-6" || got["email"] != "m.santos@lapa.pr.gov.br" ||
		got["phone"] != "(41) 99988-7766" || got["role"] != "fiscal" {
		t.Fatalf("maria as listed: %v", got)
	}
	// The disabled operador's session is gone.
	if resp, _ := f.do(t, "GET", "/api/v1/units", "", opC, "", ""); resp.StatusCode != 401 {
		t.Errorf("disabled user's session answered %d", resp.StatusCode)
	}
}

func TestAdminUnitsAPI(t *testing.T) {
	f, _ := adminFixture(t)
	admC, admX := f.login(t, "adm")
	fisC, fisX := f.login(t, "fis")
	opC, _ := f.login(t, "op")
	const vrm = `{"code":"lapa","unit":"VRM","from":"2026-01-01","value_brl":4938.24,"act":"Decreto nº 20/2025"}`
	tests := []struct {
		name         string
		method, path string
		body         string
		cookie, csrf string
		want         int
		wantErr      string
	}{
		{"fiscal cannot set a value", "POST", "/api/v1/admin/units", vrm, fisC, fisX, 403, "seu perfil (fiscal) não permite"},
		{"operador reads the units", "GET", "/api/v1/units", "", opC, "", 200, ""},
		{"fiscal reads the history", "GET", "/api/v1/units/lapa/history", "", fisC, "", 200, ""},
		{"history of an unknown code", "GET", "/api/v1/units/atlantida/history", "", fisC, "", 404, "código municipal desconhecido"},
		{"unknown code", "POST", "/api/v1/admin/units", strings.Replace(vrm, `"lapa"`, `"atlantida"`, 1), admC, admX, 400, `código municipal "atlantida" desconhecido`},
		{"unit of another code", "POST", "/api/v1/admin/units", strings.Replace(vrm, `"VRM"`, `"VR"`, 1), admC, admX, 400, `a unidade "VR" não existe em Lei nº 1783/2004 (Lapa/PR): use VRM`},
		{"negative value", "POST", "/api/v1/admin/units", strings.Replace(vrm, "4938.24", "-1", 1), admC, admX, 400, "valor negativo"},
		{"value not a number", "POST", "/api/v1/admin/units", strings.Replace(vrm, "4938.24", `"muito"`, 1), admC, admX, 400, "valor em R$ deve ser um número"},
		{"no act", "POST", "/api/v1/admin/units", strings.Replace(vrm, "Decreto nº 20/2025", "", 1), admC, admX, 400, "informe o ato legal"},
		{"set", "POST", "/api/v1/admin/units", vrm, admC, admX, 201, ""},
		{"overlap", "POST", "/api/v1/admin/units", strings.Replace(vrm, `"from":"2026-01-01"`, `"from":"2025-06-01","to":"2026-02-01"`, 1), admC, admX, 400,
			"coincide com a já cadastrada a partir de 01/01/2026"},
		{"next value closes the current", "POST", "/api/v1/admin/units", strings.NewReplacer(`"2026-01-01"`, `"2027-01-01"`, "4938.24", "5100").Replace(vrm), admC, admX, 201, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := f.do(t, tc.method, tc.path, tc.body, tc.cookie, tc.csrf, f.srv.URL)
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d: %v", resp.StatusCode, tc.want, body)
			}
			if tc.wantErr != "" && !strings.Contains(body["erro"].(string), tc.wantErr) {
				t.Fatalf("erro %q lacks %q", body["erro"], tc.wantErr)
			}
		})
	}
	_, body := f.do(t, "GET", "/api/v1/units", "", opC, "", "")
	var lapa map[string]any
	for _, c := range body["codes"].([]any) {
		if m := c.(map[string]any); m["code"] == "lapa" {
			lapa = m
		}
	}
	u := lapa["units"].([]any)[0].(map[string]any)
	ps := u["periods"].([]any)
	cur, _ := u["current"].(map[string]any)
	// The fixture's clock is the real date: the value in force follows it.
	want := 4938.24
	if body["today"].(string) >= "2027-01-01" {
		want = 5100
	}
	if len(ps) != 2 || ps[0].(map[string]any)["to"] != "2026-12-31" || cur == nil || cur["value_brl"] != want || cur["set_by"] != "adm" {
		t.Fatalf("lapa VRM: %v", u)
	}
	_, body = f.do(t, "GET", "/api/v1/units/lapa/history?unit=VRM", "", fisC, "", "")
	if h := body["history"].([]any); len(h) != 3 || h[1].(map[string]any)["action"] != "closed" {
		t.Fatalf("history: %v", body)
	}
}

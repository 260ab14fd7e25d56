package dashboard

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/alerts/notice/noticetest"
	"github.com/sossego/sossego/internal/cases"
	"github.com/sossego/sossego/internal/tz"
)

// casesFixture: the dashboard fixture with the case routes over a real
// store holding four cases, as of 12/03/2026 12:00 in Brasília.
func casesFixture(t *testing.T) (*fixture, *caseStore, map[string]notice.Document) {
	t.Helper()
	f := newFixture(t, HubOptions{}, AuthOptions{LoginAttempts: 100})
	loc := tz.Brasilia()
	at := func(d, h int) time.Time { return time.Date(2026, 3, d, h, 0, 0, 0, loc) }
	now := at(12, 12)
	cs := newCaseStore(t, func() time.Time { return now })
	cs.api.Register(f.mux, f.auth)
	lapa, macabu := noticetest.Lapa(cs.set), noticetest.Macabu(cs.set)
	docs := map[string]notice.Document{
		"draft": cs.add(t, lapa, "lapa-bar-01/a", "", "", at(1, 9)),
		// Issued by fis, ciente on 09/03, 5 days: last day 14/03.
		"running": cs.add(t, macabu, "macabu-praca-01/b", "", "", at(9, 9),
			notice.Action{Kind: notice.ActIssue, At: at(9, 10), Agent: caseAgent, PrazoDays: 5},
			notice.Action{Kind: notice.ActAcknowledge, At: at(9, 11), SignedBy: "Dono"}),
		// Issued by another fiscal, ran out on 03/03.
		"overdue": cs.add(t, lapa, "lapa-bar-01/c", "11444777000161", "Avenida Manoel Pedro, 50, Lapa - PR", at(1, 9),
			notice.Action{Kind: notice.ActIssue, Actor: notice.Actor{ID: "outro", Name: "outro", Role: notice.RoleFiscal}, At: at(1, 10), Agent: caseAgent, PrazoDays: 2},
			notice.Action{Kind: notice.ActAcknowledge, Actor: notice.Actor{ID: "outro", Name: "outro", Role: notice.RoleFiscal}, At: at(1, 11), SignedBy: "Dono"}),
		"cancelled": cs.add(t, macabu, "macabu-praca-01/d", "52998224725", "", at(2, 9), notice.Action{Kind: notice.ActCancel, At: at(2, 10)}),
	}
	return f, cs, docs
}

func TestCasesAPIRoles(t *testing.T) {
	f, _, _ := casesFixture(t)
	for _, path := range []string{"/api/v1/cases", "/api/v1/parties/12345678000195"} {
		if resp, body := f.do(t, "GET", path, "", "", "", ""); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("anonymous %s: %d %v", path, resp.StatusCode, body)
		}
		for user, want := range map[string]int{"op": 200, "fis": 200, "adm": 403} {
			cookie, _ := f.login(t, user)
			if resp, body := f.do(t, "GET", path, "", cookie, "", ""); resp.StatusCode != want {
				t.Errorf("%s %s: %d %v, want %d", user, path, resp.StatusCode, body, want)
			}
		}
	}
}

func TestCasesAPIRefusesBadFilters(t *testing.T) {
	f, _, _ := casesFixture(t)
	cookie, _ := f.login(t, "fis")
	for _, tc := range []struct {
		query, want string
	}{
		{"state=aberto", `estado desconhecido "aberto": use um ou mais, separados por vírgula, de draft (rascunho)`},
		{"state=issued,Issued", `estado desconhecido "Issued"`},
		{"page_size=0", `page_size="0" inválido: use um número inteiro de 1 a 200`},
		{"page_size=500", `page_size="500" inválido`},
		{"page_size=dez", `page_size="dez" inválido`},
		{"page=0", `page="0" inválido`},
		{"page=-1", `page="-1" inválido`},
		{"municipality=curitiba", `município desconhecido "curitiba": use o id do código municipal (`},
		{"overdue=talvez", `overdue="talvez" inválido: use true ou false`},
		{"mine=2", `mine="2" inválido`},
		{"sort=nome", `sort="nome" inválido: use deadline`},
		{"estado=issued", `parâmetro desconhecido "estado": use municipality, state`},
		{"page=1&page=2", `o parâmetro "page" aparece 2 vezes`},
		{"address=" + strings.Repeat("a", 201), "endereço de busca com 201 caracteres: use no máximo 200"},
		{"alert=" + strings.Repeat("x,", 201), "201 alertas pedidos de uma vez: peça no máximo 200"},
	} {
		resp, body := f.do(t, "GET", "/api/v1/cases?"+tc.query, "", cookie, "", "")
		msg, _ := body["erro"].(string)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(msg, tc.want) {
			t.Errorf("%.40s: %d %q, want 400 with %q", tc.query, resp.StatusCode, msg, tc.want)
		}
	}
	for _, tc := range []struct{ doc, want string }{
		{"123", "deve ter 11 dígitos (CPF) ou 14 caracteres (CNPJ)"},
		{"12345678000100", "dígito verificador do CNPJ não confere"},
		{"111.444.777-00", "dígito verificador do CPF não confere"},
		{"11111111111", "CPF com todos os dígitos iguais"},
	} {
		resp, body := f.do(t, "GET", "/api/v1/parties/"+url.PathEscape(tc.doc), "", cookie, "", "")
		msg, _ := body["erro"].(string)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(msg, tc.want) || !strings.Contains(msg, "informe os 11 dígitos do CPF ou os 14 do CNPJ") {
			t.Errorf("party %s: %d %q", tc.doc, resp.StatusCode, msg)
		}
	}
}

func TestCasesAPIList(t *testing.T) {
	f, _, docs := casesFixture(t)
	cookie, _ := f.login(t, "fis")
	ids := func(body map[string]any) []string {
		var out []string
		list, _ := body["cases"].([]any)
		for _, c := range list {
			id := c.(map[string]any)["id"].(string)
			for name, d := range docs {
				if d.ID == id {
					out = append(out, name)
				}
			}
		}
		return out
	}
	for _, tc := range []struct {
		query string
		want  string
		total float64
	}{
		{"", "overdue running cancelled draft", 4},
		{"sort=recent", "running cancelled overdue draft", 4},
		{"municipality=conceicao-de-macabu", "running cancelled", 2},
		{"state=draft,cancelled", "cancelled draft", 2},
		{"state=draft&state=cancelled", "cancelled draft", 2},
		{"overdue=true", "overdue", 1},
		{"overdue=false&municipality=lapa", "draft", 1},
		{"mine=true", "running", 1}, // fis issued it; the system drafted every one
		{"mine=false", "overdue running cancelled draft", 4},
		{"address=manoel%20pedro", "overdue", 1},
		{"alert=lapa-bar-01/a,macabu-praca-01/d", "cancelled draft", 2},
		{"page=2&page_size=3", "draft", 4},
	} {
		resp, body := f.do(t, "GET", "/api/v1/cases?"+tc.query, "", cookie, "", "")
		if got := strings.Join(ids(body), " "); resp.StatusCode != 200 || got != tc.want || body["total"] != tc.total {
			t.Errorf("%s: %d %q total %v, want %q total %v", tc.query, resp.StatusCode, got, body["total"], tc.want, tc.total)
		}
	}
	_, body := f.do(t, "GET", "/api/v1/cases?alert=macabu-praca-01/b", "", cookie, "", "")
	c := body["cases"].([]any)[0].(map[string]any)
	next, _ := c["next_deadline"].(map[string]any)
	if c["state_label"] != "intimação preliminar com ciente do notificado" || next == nil || next["last_day"] != "14/03/2026" ||
		next["days_left"] != 2.0 || next["overdue"] != false || body["page"] != 1.0 || body["page_size"] != 50.0 || body["pages"] != 1.0 {
		t.Errorf("running case %v, page %v", c, body)
	}
	if states, _ := body["states"].([]any); len(states) != 9 {
		t.Errorf("states vocabulary %v", body["states"])
	}
}

// TestCasesAPIAlertWithoutDocument: an alert that fired and has no
// document yet is a case ("alerta sem ato") from the moment it fires; an
// alert with a document is listed once, by its document.
func TestCasesAPIAlertWithoutDocument(t *testing.T) {
	f, cs, docs := casesFixture(t)
	fired := time.Date(2026, 3, 11, 23, 10, 0, 0, tz.Brasilia())
	cs.x.Alerts = func(context.Context) ([]cases.OpenAlert, error) {
		return []cases.OpenAlert{
			{ID: "lapa-bar-01/sem-ato", CodeID: "lapa", Municipality: "Lapa", At: fired, SiteAddress: "Rua Barão do Rio Branco, 120, Lapa - PR",
				Party: cases.PartyRef{Document: "11.444.777/0001-61", Name: "Bar do Zé", Address: "Rua Barão do Rio Branco, 118, Lapa - PR"}},
			{ID: "lapa-bar-01/a", CodeID: "lapa", Municipality: "Lapa", At: fired}, // has its draft
		}, nil
	}
	cookie, _ := f.login(t, "fis")
	for _, tc := range []struct {
		query       string
		alertRow    bool
		total       float64
		firstAlerts string // the alert ids of the page, in order
	}{
		{"", true, 5, "lapa-bar-01/c macabu-praca-01/b lapa-bar-01/sem-ato macabu-praca-01/d lapa-bar-01/a"},
		{"state=sem_ato", true, 1, "lapa-bar-01/sem-ato"},
		{"state=sem_ato,draft", true, 2, "lapa-bar-01/sem-ato lapa-bar-01/a"},
		{"alert=lapa-bar-01/sem-ato,lapa-bar-01/a", true, 2, "lapa-bar-01/sem-ato lapa-bar-01/a"},
		{"address=barao%20do%20rio", true, 1, "lapa-bar-01/sem-ato"},
		{"municipality=lapa&sort=recent", true, 3, "lapa-bar-01/sem-ato lapa-bar-01/c lapa-bar-01/a"},
		{"municipality=conceicao-de-macabu", false, 2, "macabu-praca-01/b macabu-praca-01/d"},
		{"overdue=true", false, 1, "lapa-bar-01/c"},
		{"overdue=false&municipality=lapa", true, 2, "lapa-bar-01/sem-ato lapa-bar-01/a"},
		{"mine=true", false, 1, "macabu-praca-01/b"},
	} {
		resp, body := f.do(t, "GET", "/api/v1/cases?"+tc.query, "", cookie, "", "")
		list, _ := body["cases"].([]any)
		var alertIDs []string
		var row map[string]any
		for _, c := range list {
			c := c.(map[string]any)
			alertIDs = append(alertIDs, c["alert_id"].(string))
			if c["alert_id"] == "lapa-bar-01/sem-ato" {
				row = c
			}
		}
		if got := strings.Join(alertIDs, " "); resp.StatusCode != 200 || got != tc.firstAlerts || body["total"] != tc.total || (row != nil) != tc.alertRow {
			t.Errorf("%s: %d %q total %v, want %q total %v", tc.query, resp.StatusCode, got, body["total"], tc.firstAlerts, tc.total)
			continue
		}
		if row == nil {
			continue
		}
		party, _ := row["party"].(map[string]any)
		if row["id"] != "" || row["state"] != "sem_ato" || row["state_label"] != "alerta sem ato" || row["next_deadline"] != nil ||
			row["overdue"] != false || len(row["documents"].([]any)) != 0 || row["code_id"] != "lapa" ||
			party["document"] != "11444777000161" || party["name"] != "Bar do Zé" || row["created_at"] != fired.UTC().Format(time.RFC3339) {
			t.Errorf("%s: alert row %v", tc.query, row)
		}
	}
	if d := docs["draft"]; d.Draft.Finding.AlertID != "lapa-bar-01/a" {
		t.Fatalf("fixture: the draft is of alert %q", d.Draft.Finding.AlertID)
	}
	// A failing alert source is an error, not a list that silently
	// leaves the alerts out.
	cs.x.Alerts = func(context.Context) ([]cases.OpenAlert, error) {
		return nil, errors.New("banco de alertas indisponível")
	}
	if resp, body := f.do(t, "GET", "/api/v1/cases", "", cookie, "", ""); resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("failing alert source: %d %v", resp.StatusCode, body)
	}
}

func TestCasesAPIParty(t *testing.T) {
	f, cs, docs := casesFixture(t)
	cookie, _ := f.login(t, "op")
	lapa := noticetest.Lapa(cs.set)
	// The scenario's bar has only the draft: on record, but nothing counts.
	resp, body := f.do(t, "GET", "/api/v1/parties/"+url.PathEscape(lapa.Party.Document), "", cookie, "", "")
	list, _ := body["documents"].([]any)
	if resp.StatusCode != 200 || body["known"] != true || len(list) != 1 || list[0].(map[string]any)["counts_as_prior_infraction"] != false {
		t.Fatalf("party %d %v", resp.StatusCode, body)
	}
	// The other bar: its issued notice is the prior infraction the ladder counts.
	_, body = f.do(t, "GET", "/api/v1/parties/11.444.777%2F0001-61", "", cookie, "", "")
	list, _ = body["documents"].([]any)
	prior, _ := body["prior_infractions"].(map[string]any)["lapa"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["id"] != docs["overdue"].ID || list[0].(map[string]any)["counts_as_prior_infraction"] != true ||
		len(prior) != 1 || prior[0].(map[string]any)["Ref"] != docs["overdue"].ID {
		t.Errorf("other bar %v", body)
	}
	// A valid CPF with nothing on record.
	_, body = f.do(t, "GET", "/api/v1/parties/111.444.777-35", "", cookie, "", "")
	if body["known"] != false || len(body["documents"].([]any)) != 0 {
		t.Errorf("unknown party %v", body)
	}
}

package dashboard_test

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/sossego/sossego/alerts/notice/noticetest"
	"github.com/sossego/sossego/dashboard"
	"github.com/sossego/sossego/internal/workflow"
)

// changes records the workflow change feed.
type changes struct {
	mu  sync.Mutex
	got []dashboard.WorkflowChange
}

func (c *changes) add(x dashboard.WorkflowChange) {
	c.mu.Lock()
	c.got = append(c.got, x)
	c.mu.Unlock()
}
func (c *changes) list() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var s []string
	for _, x := range c.got {
		s = append(s, x.Action+":"+x.By+":"+x.Assignee+":"+x.State)
	}
	return strings.Join(s, " ")
}

// TestTriageAndChangeFeed: acknowledge and assign an alert (fiscal only,
// assignee checked against the fiscais), read its triage with its audit
// trail, and see every stored change (ack, assign, draft, issue, recusa) on
// the change feed exactly once.
func TestTriageAndChangeFeed(t *testing.T) {
	lapa := noticetest.Lapa(set)
	e := newEnv(t, fakeAlerts{lapa.Alert.ID: *lapa.Alert})
	feed := &changes{}
	e.set(func(c *workflow.Config) { c.OnChange = feed.add })
	e.set(func(c *workflow.Config) {
		c.Assignees = func(context.Context) ([]string, error) { return []string{"u-ana", "u-joao"}, nil }
	})
	id := url.PathEscape(lapa.Alert.ID)
	base := "/api/v1/alerts/" + id

	for _, tc := range []struct {
		name, user, method, path string
		body                     any
		status                   int
		msg                      string
	}{
		{"ack needs login", "", "POST", base + "/ack", nil, 401, "faça login"},
		{"operador cannot ack", "otto", "POST", base + "/ack", nil, 403, "somente um fiscal"},
		{"operador cannot assign", "otto", "POST", base + "/assign", map[string]string{"assignee": "u-ana"}, 403, "somente um fiscal"},
		{"unknown alert", "ana", "POST", "/api/v1/alerts/" + url.PathEscape("x/1") + "/ack", nil, 404, "não encontrado"},
		{"unknown field", "ana", "POST", base + "/ack", map[string]string{"quem": "x"}, 400, "corpo JSON inválido"},
		{"no assignee", "ana", "POST", base + "/assign", map[string]string{}, 422, "informe a quem atribuir"},
		{"not a fiscal", "ana", "POST", base + "/assign", map[string]string{"assignee": "u-otto"}, 422, "não é um fiscal ativo"},
		{"case of unknown alert", "otto", "GET", "/api/v1/alerts/" + url.PathEscape("x/1") + "/case", nil, 404, "não encontrado"},
		{"bad limit", "otto", "GET", "/api/v1/alert-cases?limit=0", nil, 400, "limit"},
	} {
		t.Run(tc.name, func(t *testing.T) { e.refused(t, tc.user, tc.method, tc.path, tc.body, tc.status, tc.msg) })
	}
	if got := feed.list(); got != "" {
		t.Fatalf("refused requests reached the feed: %s", got)
	}

	v := e.ok(t, "otto", "GET", base+"/case", nil, 200)
	if v["acked"] != false || v["assignee"] != nil || v["alert_id"] != lapa.Alert.ID {
		t.Fatalf("untouched case: %v", v)
	}
	v = e.ok(t, "ana", "POST", base+"/ack", nil, 200)
	if v["acked"] != true || v["acked_by"] != "u-ana" {
		t.Fatalf("ack: %v", v)
	}
	e.ok(t, "ana", "POST", base+"/ack", map[string]string{}, 200) // idempotent, not re-published
	v = e.ok(t, "ana", "POST", base+"/assign", map[string]string{"assignee": "u-joao"}, 200)
	if v["assignee"] != "u-joao" || v["assigned_by"] != "u-ana" {
		t.Fatalf("assign: %v", v)
	}
	v = e.ok(t, "otto", "GET", base+"/case", nil, 200)
	audit := v["audit"].([]any)
	if len(audit) != 2 || audit[0].(map[string]any)["action"] != "ack" || audit[1].(map[string]any)["action"] != "assign" {
		t.Fatalf("audit: %v", audit)
	}
	if a := v["assignees"].([]any); len(a) != 2 {
		t.Fatalf("assignees: %v", a)
	}
	list := e.ok(t, "otto", "GET", "/api/v1/alert-cases", nil, 200)
	cs := list["cases"].([]any)
	if len(cs) != 1 || cs[0].(map[string]any)["assignee"] != "u-joao" {
		t.Fatalf("alert-cases: %v", list)
	}

	// The document steps reach the feed too.
	e.set(func(c *workflow.Config) { c.Calibrations = calibrated{} })
	e.ok(t, "ana", "POST", base+"/constatacoes", sensorWindow(noticetest.Lapa(set), ""), 201)
	created := e.ok(t, "ana", "POST", base+"/notice", nil, 201)
	np := created["id"].(string)
	e.ok(t, "ana", "POST", base+"/notice", nil, 200) // idempotent: no second "draft"
	e.ok(t, "ana", "POST", "/api/v1/notices/"+np+"/issue", map[string]any{"prazo_days": 5}, 200)
	e.refused(t, "ana", "POST", "/api/v1/notices/"+np+"/recusa", map[string]any{"witnesses": witnesses(1)}, 409, "testemunhas")
	e.ok(t, "ana", "POST", "/api/v1/notices/"+np+"/recusa", map[string]any{"witnesses": witnesses(2), "declaration": "recusou-se a assinar"}, 200)
	want := "ack:u-ana:: assign:u-ana:u-joao: constatacao:u-ana:: draft:u-ana::draft issue:u-ana::issued recusa:u-ana::refused"
	if got := feed.list(); got != want {
		t.Errorf("feed\n got %s\nwant %s", got, want)
	}
	feed.mu.Lock()
	for _, c := range feed.got[3:] {
		if c.NoticeID != np || c.AlertID != lapa.Alert.ID || c.Title != "Notificação Preliminar" || c.At.IsZero() {
			t.Errorf("change %+v", c)
		}
	}
	feed.mu.Unlock()

	// Without an Assignees list any user name is accepted.
	e.set(func(c *workflow.Config) { c.Assignees = nil })
	if v := e.ok(t, "ana", "POST", base+"/assign", map[string]string{"assignee": "maria"}, 200); v["assignee"] != "maria" {
		t.Fatalf("assign without list: %v", v)
	}
}

package central

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/users"
	"github.com/sossego/sossego/internal/users/usersdb"
)

// TestCasesRoutesWired: the central service serves the case list and a
// party's history to fiscais and operadores, refuses a malformed CNPJ, and
// leaves the workflow's /parties/{doc}/history route where it was.
func TestCasesRoutesWired(t *testing.T) {
	dir := t.TempDir()
	us, err := usersdb.OpenDir(context.Background(), dir, users.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := us.Add(context.Background(), "fisc", users.Fiscal, "senha-muito-secreta", time.Now()); err != nil {
		t.Fatal(err)
	}
	us.Close()
	a := startCentral(t, Options{DataDir: dir})
	base := "http://" + a.HTTP
	fc, _ := loginAs(t, base, "fisc", "senha-muito-secreta")
	oc, _ := loginAs(t, base, testUser, testPassword)
	for _, tc := range []struct {
		c    *http.Client
		path string
		want int
		key  string
	}{
		{fc, "/api/v1/cases?municipality=lapa&overdue=true", 200, "cases"},
		{oc, "/api/v1/cases", 200, "cases"},
		{fc, "/api/v1/cases?state=aberto", 400, "erro"},
		{fc, "/api/v1/parties/12.345.678%2F0001-95", 200, "documents"},
		{fc, "/api/v1/parties/123", 400, "erro"},
		{fc, "/api/v1/parties/12345678000195/history?code=lapa", 200, ""},
		{http.DefaultClient, "/api/v1/cases", 401, "erro"},
	} {
		resp, err := tc.c.Get(base + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		var body any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		m, _ := body.(map[string]any)
		if resp.StatusCode != tc.want || (tc.key != "" && m[tc.key] == nil) {
			t.Errorf("%s: HTTP %d %v, want %d with %q", tc.path, resp.StatusCode, body, tc.want, tc.key)
		}
	}
}

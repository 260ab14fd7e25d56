package central

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/monetary/monetarydb"
	"github.com/sossego/sossego/internal/users"
	"github.com/sossego/sossego/internal/users/usersdb"
)

// TestAdminRoutesWired: the central service serves the administration
// routes from its own users.db and monetary.db: a fiscal reads the units
// and is refused a value; the admin sets one, stored in the data directory.
func TestAdminRoutesWired(t *testing.T) {
	dir := t.TempDir()
	us, err := usersdb.OpenDir(context.Background(), dir, users.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, role := range map[string]users.Role{"adm": users.Admin, "fisc": users.Fiscal} {
		if _, err := us.Add(context.Background(), name, role, "senha-muito-secreta", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	us.Close()
	a := startCentral(t, Options{DataDir: dir})
	base := "http://" + a.HTTP
	send := func(c *http.Client, csrf, method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Origin", base)
		req.Header.Set("X-CSRF-Token", csrf)
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	const vrm = `{"code":"lapa","unit":"VRM","from":"2026-01-01","value_brl":4938.24,"act":"Decreto nº 20/2025"}`
	fc, fcsrf := loginAs(t, base, "fisc", "senha-muito-secreta")
	if code, body := send(fc, fcsrf, "GET", "/api/v1/units", ""); code != 200 || !strings.Contains(body, `"VRM"`) {
		t.Errorf("fiscal GET units: %d %s", code, body)
	}
	if code, body := send(fc, fcsrf, "POST", "/api/v1/admin/units", vrm); code != 403 || !strings.Contains(body, "não permite") {
		t.Errorf("fiscal POST unit: %d %s", code, body)
	}
	if code, _ := send(fc, fcsrf, "GET", "/api/v1/admin/users", ""); code != 403 {
		t.Errorf("fiscal GET users: %d", code)
	}
	ac, acsrf := loginAs(t, base, "adm", "senha-muito-secreta")
	if code, body := send(ac, acsrf, "POST", "/api/v1/admin/units", vrm); code != 201 {
		t.Fatalf("admin POST unit: %d %s", code, body)
	}
	if code, body := send(ac, acsrf, "GET", "/api/v1/admin/users", ""); code != 200 || !strings.Contains(body, `"fisc"`) {
		t.Errorf("admin GET users: %d %s", code, body)
	}
	st, err := monetarydb.OpenDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if ps, err := st.Periods(context.Background(), "lapa"); err != nil || len(ps) != 1 || ps[0].SetBy != "adm" {
		t.Fatalf("stored periods %+v, %v", ps, err)
	}
}

package central

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/users"
	"github.com/sossego/sossego/internal/users/usersdb"
)

func loginAs(t *testing.T, base, user, password string) (*http.Client, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/login", strings.NewReader(`{"user":"`+user+`","password":"`+password+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", base)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var me struct {
		CSRF string `json:"csrf_token"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&me) != nil {
		t.Fatalf("login %s: HTTP %d", user, resp.StatusCode)
	}
	return c, me.CSRF
}

func putRegistry(t *testing.T, c *http.Client, base, csrf, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, base+"/api/v1/registry", strings.NewReader(body))
	req.Header.Set("Origin", base)
	req.Header.Set("X-CSRF-Token", csrf)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestRegistryAPIAdminOnly: only an admin reads or replaces the register; a
// broken file is refused with its problems and lines and changes nothing; a
// valid one takes effect at once.
func TestRegistryAPIAdminOnly(t *testing.T) {
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

	fc, fcsrf := loginAs(t, base, "fisc", "senha-muito-secreta")
	if code, _ := putRegistry(t, fc, base, fcsrf, string(registry.DemoYAML())); code != http.StatusForbidden {
		t.Errorf("fiscal PUT: HTTP %d, want 403", code)
	}
	oc, ocsrf := loginAs(t, base, testUser, testPassword)
	if code, _ := putRegistry(t, oc, base, ocsrf, string(registry.DemoYAML())); code != http.StatusForbidden {
		t.Errorf("operador PUT: HTTP %d, want 403", code)
	}
	if resp, err := oc.Get(base + "/api/v1/registry"); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("operador GET: %v %v, want 403", err, resp)
	}

	ac, acsrf := loginAs(t, base, "adm", "senha-muito-secreta")
	resp, err := ac.Get(base + "/api/v1/registry")
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(orig), "lapa-bar-01") {
		t.Fatalf("admin GET: HTTP %d", resp.StatusCode)
	}
	bad := strings.Replace(string(orig), "zone: other", "zone: lua", 1) + "\nextra_key: 1\n"
	code, body := putRegistry(t, ac, base, acsrf, bad)
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "problemas") || !strings.Contains(body, "linha") {
		t.Errorf("broken register: HTTP %d %s", code, body)
	}
	if _, ok := sensorIDs(t, ac, base)["lapa-bar-01"]; !ok {
		t.Fatal("a refused register changed the sensors")
	}
	good := strings.Replace(string(orig), "id: lapa-bar-01", "id: lapa-bar-99", 1)
	if code, body := putRegistry(t, ac, base, acsrf, good); code != http.StatusOK {
		t.Fatalf("valid register: HTTP %d %s", code, body)
	}
	ids := sensorIDs(t, ac, base)
	if _, ok := ids["lapa-bar-99"]; !ok {
		t.Errorf("new sensor not live after PUT: %v", ids)
	}
	if _, ok := ids["lapa-bar-01"]; ok {
		t.Errorf("old sensor still live after PUT: %v", ids)
	}
}

func sensorIDs(t *testing.T, c *http.Client, base string) map[string]bool {
	t.Helper()
	resp, err := c.Get(base + "/api/v1/sensors")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Sensors []struct {
			ID string `json:"id"`
		} `json:"sensors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, s := range body.Sensors {
		ids[s.ID] = true
	}
	return ids
}

// TestDemoKeysRefusedOnReload: outside the demonstration a register with a
// key derived from the public demonstration seed is refused not only at
// start but on every later change — replaced through the API (422, nothing
// written) or edited on disk (the reload keeps the register in force).
func TestDemoKeysRefusedOnReload(t *testing.T) {
	dir := t.TempDir()
	own, err := loadgen.RegistryYAML("uma-semente-so-nossa", 2, 1, "lapa")
	if err != nil {
		t.Fatal(err)
	}
	regPath := filepath.Join(dir, "registry.yaml")
	if err := os.WriteFile(regPath, own, 0o600); err != nil {
		t.Fatal(err)
	}
	us, err := usersdb.OpenDir(context.Background(), dir, users.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := us.Add(context.Background(), "adm", users.Admin, "senha-muito-secreta", time.Now()); err != nil {
		t.Fatal(err)
	}
	us.Close()
	a, stop := startCentralAs(t, Options{DataDir: dir, Registry: regPath, RegistryPoll: 20 * time.Millisecond})
	t.Cleanup(stop)
	base := "http://" + a.HTTP
	ac, acsrf := loginAs(t, base, "adm", "senha-muito-secreta")
	before := sensorIDs(t, ac, base)
	if len(before) != 2 {
		t.Fatalf("sensors at start: %v", before)
	}

	demo, err := loadgen.RegistryYAML(loadgen.DefaultSeed, 3, 1, "lapa")
	if err != nil {
		t.Fatal(err)
	}
	code, body := putRegistry(t, ac, base, acsrf, string(demo))
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "chaves de demonstração") {
		t.Errorf("PUT of a demo-key register: HTTP %d %s, want 422 naming the demonstration keys", code, body)
	}
	if got, _ := os.ReadFile(regPath); string(got) != string(own) {
		t.Error("a refused PUT rewrote the register file")
	}

	// The file edited on disk: the poll sees it, refuses it, keeps the old.
	if err := os.WriteFile(regPath, demo, 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(fmt.Sprint(registryErr(t, ac, base)), "demonstração") {
		if time.Now().After(deadline) {
			t.Fatalf("the edited register was not refused: %v", registryErr(t, ac, base))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if after := sensorIDs(t, ac, base); len(after) != len(before) {
		t.Errorf("sensors after the refused reload: %v, want the %d of before", after, len(before))
	}
}

// registryErr is what the health report says of the register (logged in).
func registryErr(t *testing.T, c *http.Client, base string) string {
	t.Helper()
	resp, err := c.Get(base + "/api/v1/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Components map[string]string `json:"components"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return body.Components["cadastro"]
}

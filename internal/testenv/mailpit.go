package testenv

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Mailpit is a running mailpit SMTP server with its HTTP API.
type Mailpit struct {
	Host    string // 127.0.0.1
	Port    int    // SMTP port
	APIURL  string // http://127.0.0.1:port
	CAFile  string // PEM of the CA that signed the STARTTLS certificate ("" without TLS)
	Dir     string
	bin     string
	args    []string
	cmd     *exec.Cmd
	logPath string
}

// MailpitOpts configure StartMailpit.
type MailpitOpts struct {
	// STARTTLS offers STARTTLS with a certificate for 127.0.0.1 signed by
	// a throwaway CA (CAFile) and requires clients to use it.
	STARTTLS bool
	// ImplicitTLS requires TLS from the first byte (port-465 style).
	ImplicitTLS bool
	// Users, if set, are the only accepted SMTP logins (name → password).
	Users map[string]string
}

// MailMessage is a message as mailpit's API lists it, with its text body.
type MailMessage struct {
	ID      string
	Subject string
	To      []string
	From    string
	Text    string
	HTML    string
	Headers map[string][]string
}

// StartMailpit starts mailpit (built by `make tools` into .tools/bin, or
// SOSSEGO_MAILPIT) on free loopback ports and waits until it answers. It
// is stopped at the end of the test.
func StartMailpit(t testing.TB, opts MailpitOpts) *Mailpit {
	t.Helper()
	bin := lookTool(t, "SOSSEGO_MAILPIT", "mailpit")
	if bin == "" {
		Missing(t, "mailpit", "make tools (go install github.com/axllent/mailpit@v1.33.1)")
	}
	dir := t.TempDir()
	smtpPort, httpPort := FreePort(t), FreePort(t)
	m := &Mailpit{Host: "127.0.0.1", Port: smtpPort, APIURL: fmt.Sprintf("http://127.0.0.1:%d", httpPort), Dir: dir, bin: bin,
		logPath: filepath.Join(dir, "mailpit.log")}
	m.args = []string{"--smtp", fmt.Sprintf("127.0.0.1:%d", smtpPort), "--listen", fmt.Sprintf("127.0.0.1:%d", httpPort),
		"--database", filepath.Join(dir, "mailpit.db"), "--disable-version-check", "--smtp-disable-rdns", "--quiet"}
	if opts.STARTTLS || opts.ImplicitTLS {
		pki := NewPKI(t)
		cert, key, ca := pki.ServerFiles(dir, "127.0.0.1")
		m.CAFile = ca
		m.args = append(m.args, "--smtp-tls-cert", cert, "--smtp-tls-key", key)
		if opts.ImplicitTLS {
			m.args = append(m.args, "--smtp-require-tls")
		} else {
			m.args = append(m.args, "--smtp-require-starttls")
		}
	}
	if len(opts.Users) > 0 {
		var lines []string
		for u, p := range opts.Users {
			// htpasswd's {SHA} form: weak, and enough for a throwaway test server.
			h := sha1.Sum([]byte(p))
			lines = append(lines, u+":{SHA}"+base64.StdEncoding.EncodeToString(h[:]))
		}
		sort.Strings(lines)
		f := filepath.Join(dir, "smtp-users")
		if err := os.WriteFile(f, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatalf("testenv: %v", err)
		}
		m.args = append(m.args, "--smtp-auth-file", f)
		if !opts.STARTTLS && !opts.ImplicitTLS {
			m.args = append(m.args, "--smtp-auth-allow-insecure")
		}
	} else {
		m.args = append(m.args, "--smtp-auth-accept-any")
		if !opts.STARTTLS && !opts.ImplicitTLS {
			m.args = append(m.args, "--smtp-auth-allow-insecure")
		}
	}
	m.Start(t)
	t.Cleanup(m.Stop)
	return m
}

// Start starts mailpit (again, after Stop) on the same ports and database.
func (m *Mailpit) Start(t testing.TB) {
	t.Helper()
	logf, err := os.OpenFile(m.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	defer logf.Close()
	cmd := exec.Command(m.bin, m.args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("testenv: start mailpit: %v", err)
	}
	m.cmd = cmd
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(m.APIURL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && waitTCP(fmt.Sprintf("%s:%d", m.Host, m.Port), time.Second) == nil {
				return
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(m.logPath)
			t.Fatalf("testenv: mailpit did not answer: %v\n%s", err, tail(b, 40))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop terminates mailpit.
func (m *Mailpit) Stop() {
	if m.cmd == nil || m.cmd.Process == nil {
		return
	}
	stopProcess(m.cmd, 5*time.Second)
	m.cmd = nil
}

// Messages returns every message mailpit holds, oldest first, with bodies.
func (m *Mailpit) Messages(t testing.TB) []MailMessage {
	t.Helper()
	var list struct {
		Messages []struct {
			ID string `json:"ID"`
		} `json:"messages"`
	}
	m.get(t, "/api/v1/messages?limit=1000", &list)
	out := make([]MailMessage, 0, len(list.Messages))
	for i := len(list.Messages) - 1; i >= 0; i-- {
		out = append(out, m.Message(t, list.Messages[i].ID))
	}
	return out
}

// Count returns how many messages mailpit holds.
func (m *Mailpit) Count(t testing.TB) int {
	t.Helper()
	var list struct {
		Total int `json:"total"`
	}
	m.get(t, "/api/v1/messages?limit=1", &list)
	return list.Total
}

// Message returns one message with its bodies and headers.
func (m *Mailpit) Message(t testing.TB, id string) MailMessage {
	t.Helper()
	var msg struct {
		ID      string `json:"ID"`
		Subject string `json:"Subject"`
		From    struct{ Address string }
		To      []struct{ Address string }
		Text    string `json:"Text"`
		HTML    string `json:"HTML"`
	}
	m.get(t, "/api/v1/message/"+id, &msg)
	out := MailMessage{ID: msg.ID, Subject: msg.Subject, From: msg.From.Address, Text: msg.Text, HTML: msg.HTML}
	for _, a := range msg.To {
		out.To = append(out.To, a.Address)
	}
	var hdr map[string][]string
	m.get(t, "/api/v1/message/"+id+"/headers", &hdr)
	out.Headers = hdr
	return out
}

// WaitMessages polls until mailpit holds at least n messages (or fails
// the test after timeout) and returns them.
func (m *Mailpit) WaitMessages(t testing.TB, n int, timeout time.Duration) []MailMessage {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if c := m.Count(t); c >= n {
			return m.Messages(t)
		} else if time.Now().After(deadline) {
			t.Fatalf("testenv: mailpit holds %d messages after %v, want %d", c, timeout, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// DeleteAll removes every message.
func (m *Mailpit) DeleteAll(t testing.TB) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, m.APIURL+"/api/v1/messages", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("testenv: mailpit delete: %v", err)
	}
	resp.Body.Close()
}

func (m *Mailpit) get(t testing.TB, path string, v any) {
	t.Helper()
	resp, err := http.Get(m.APIURL + path)
	if err != nil {
		t.Fatalf("testenv: mailpit %s: %v", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("testenv: mailpit %s: HTTP %d", path, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("testenv: mailpit %s: %v", path, err)
	}
}

// SMTPAddr is host:port of the SMTP listener.
func (m *Mailpit) SMTPAddr() string { return m.Host + ":" + strconv.Itoa(m.Port) }

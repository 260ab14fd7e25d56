// Package testenv starts the real components integration tests need — a
// Mosquitto broker, an InfluxDB 1.8 server, Debian's chromium — on free
// loopback ports, and stops them when the test ends.
//
// A missing component skips the test on a developer's machine but fails it
// when CI=true: in CI nothing may be silently left untested.
//
// Overview of its parts: starts real Mosquitto / InfluxDB / mailpit (SMTP,
// with STARTTLS/TLS and logins) / chromium / pdftoppm for tests.
package testenv

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// InCI reports whether the tests run under CI (CI=true).
func InCI() bool { return os.Getenv("CI") == "true" }

// Missing skips t, or fails it under CI, because a component is not installed.
func Missing(t testing.TB, what, howToInstall string) {
	t.Helper()
	msg := fmt.Sprintf("%s not found; install it with: %s", what, howToInstall)
	if InCI() {
		t.Fatal("CI=true and " + msg)
	}
	t.Skip(msg)
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// RepoRoot returns the module root (the folder holding go.mod).
func RepoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("testenv: cannot locate source")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// lookTool finds a binary by env override, the repo's .tools/bin, then PATH.
func lookTool(t testing.TB, envVar, name string, extra ...string) string {
	if p := os.Getenv(envVar); p != "" {
		return p
	}
	cands := []string{filepath.Join(RepoRoot(t), ".tools", "bin", name)}
	cands = append(cands, extra...)
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			return c
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return ""
}

// Mosquitto is a running Mosquitto broker.
type Mosquitto struct {
	Addr    string // host:port
	URL     string // tcp://host:port
	Dir     string // config and persistence folder
	cmd     *exec.Cmd
	binPath string
	conf    string
}

// MosquittoOpts configures StartMosquitto.
type MosquittoOpts struct {
	// Extra lines appended to mosquitto.conf (password_file, acl_file, …).
	// Without any, the broker allows anonymous clients.
	Extra []string
}

// StartMosquitto starts Debian's mosquitto on a free loopback port with
// persistence in a temporary folder and stops it at the end of the test.
func StartMosquitto(t testing.TB, opts MosquittoOpts) *Mosquitto {
	t.Helper()
	bin := lookTool(t, "SOSSEGO_MOSQUITTO", "mosquitto", "/usr/sbin/mosquitto")
	if bin == "" {
		Missing(t, "mosquitto", "apt-get install mosquitto mosquitto-clients")
	}
	dir := t.TempDir()
	port := FreePort(t)
	m := &Mosquitto{Addr: fmt.Sprintf("127.0.0.1:%d", port), Dir: dir, binPath: bin, conf: filepath.Join(dir, "mosquitto.conf")}
	m.URL = "tcp://" + m.Addr
	lines := []string{
		fmt.Sprintf("listener %d 127.0.0.1", port),
		"persistence true",
		"persistence_location " + dir + "/",
		"max_queued_messages 0",
		"log_dest stderr",
	}
	if os.Geteuid() == 0 {
		// Started as root (CI), Mosquitto drops to the "mosquitto" user,
		// which cannot write the test's temporary folder: its persistence
		// file was silently never saved ("Error saving in-memory database
		// … Permission denied"), so a graceful restart lost every session
		// and queued message. Keep root so that restarts persist, as on a
		// real installation where /var/lib/mosquitto is the broker's own.
		lines = append(lines, "user root")
	}
	hasAuth := false
	for _, l := range opts.Extra {
		if strings.HasPrefix(l, "password_file") || strings.HasPrefix(l, "allow_anonymous") {
			hasAuth = true
		}
	}
	if !hasAuth {
		lines = append(lines, "allow_anonymous true")
	}
	lines = append(lines, opts.Extra...)
	if err := os.WriteFile(m.conf, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatalf("testenv: write mosquitto.conf: %v", err)
	}
	m.start(t)
	t.Cleanup(func() { m.Stop() })
	return m
}

// StartMosquittoConfig starts Debian's mosquitto with exactly the given
// configuration (nothing added), waits until it listens on addr, and stops
// it at the end of the test. dir is where the config and the log go.
func StartMosquittoConfig(t testing.TB, dir, config, addr string) *Mosquitto {
	t.Helper()
	bin := lookTool(t, "SOSSEGO_MOSQUITTO", "mosquitto", "/usr/sbin/mosquitto")
	if bin == "" {
		Missing(t, "mosquitto", "apt-get install mosquitto mosquitto-clients")
	}
	m := &Mosquitto{Addr: addr, URL: "tcp://" + addr, Dir: dir, binPath: bin, conf: filepath.Join(dir, "mosquitto.conf")}
	if err := os.WriteFile(m.conf, []byte(config), 0o644); err != nil {
		t.Fatalf("testenv: write mosquitto.conf: %v", err)
	}
	m.start(t)
	t.Cleanup(func() { m.Stop() })
	return m
}

func (m *Mosquitto) start(t testing.TB) {
	t.Helper()
	cmd := exec.Command(m.binPath, "-c", m.conf)
	logf, err := os.Create(filepath.Join(m.Dir, "mosquitto.log"))
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("testenv: start mosquitto: %v", err)
	}
	m.cmd = cmd
	if err := waitTCP(m.Addr, 10*time.Second); err != nil {
		b, _ := os.ReadFile(logf.Name())
		t.Fatalf("testenv: mosquitto did not listen on %s: %v\n%s", m.Addr, err, b)
	}
}

// Stop terminates the broker (SIGTERM, persisting its state).
func (m *Mosquitto) Stop() {
	if m.cmd == nil || m.cmd.Process == nil {
		return
	}
	stopProcess(m.cmd, 5*time.Second)
	m.cmd = nil
}

// Kill terminates the broker with SIGKILL, as a crash would.
func (m *Mosquitto) Kill() {
	if m.cmd == nil || m.cmd.Process == nil {
		return
	}
	_ = m.cmd.Process.Kill()
	_ = m.cmd.Wait()
	m.cmd = nil
}

// Restart starts the broker again on the same port and folder.
func (m *Mosquitto) Restart(t testing.TB) {
	t.Helper()
	m.Stop()
	m.start(t)
}

// Influx is a running InfluxDB 1.8 server with Flux enabled.
type Influx struct {
	URL string // http://127.0.0.1:port
	Dir string
	bin string
	cmd *exec.Cmd
}

// StartInflux starts influxd 1.8.10 (built by `make tools` into .tools/bin,
// or SOSSEGO_INFLUXD) on free loopback ports and waits until it answers.
func StartInflux(t testing.TB) *Influx {
	t.Helper()
	bin := lookTool(t, "SOSSEGO_INFLUXD", "influxd")
	if bin == "" {
		Missing(t, "influxd 1.8.10", "make tools (go install github.com/influxdata/influxdb/cmd/influxd@v1.8.10)")
	}
	dir := t.TempDir()
	httpPort, bindPort := FreePort(t), FreePort(t)
	conf := fmt.Sprintf(`reporting-disabled = true
bind-address = "127.0.0.1:%d"
[meta]
  dir = "%[2]s/meta"
[data]
  dir = "%[2]s/data"
  wal-dir = "%[2]s/wal"
  query-log-enabled = false
[http]
  enabled = true
  bind-address = "127.0.0.1:%[3]d"
  flux-enabled = true
  log-enabled = false
[logging]
  level = "warn"
[monitor]
  store-enabled = false
[continuous_queries]
  enabled = false
`, bindPort, dir, httpPort)
	cf := filepath.Join(dir, "influxdb.conf")
	if err := os.WriteFile(cf, []byte(conf), 0o600); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	in := &Influx{URL: fmt.Sprintf("http://127.0.0.1:%d", httpPort), Dir: dir, bin: bin}
	in.Restart(t)
	t.Cleanup(in.Stop)
	return in
}

// Restart starts influxd (again, after Kill or Stop) on the same config and
// data, the way an operator would after a crash, and waits until it
// answers.
func (in *Influx) Restart(t testing.TB) {
	t.Helper()
	cmd := exec.Command(in.bin, "-config", filepath.Join(in.Dir, "influxdb.conf"))
	logf, err := os.OpenFile(filepath.Join(in.Dir, "influxd.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("testenv: start influxd: %v", err)
	}
	in.cmd = cmd
	// After a SIGKILL influxd replays its WAL before it listens, which on a
	// busy machine (load 30 on two cores) took over a minute.
	deadline := time.Now().Add(4 * time.Minute)
	for {
		resp, err := http.Get(in.URL + "/ping")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusNoContent {
				return
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logf.Name())
			t.Fatalf("testenv: influxd did not answer /ping within 4 min: %v\n%s", err, tail(b, 40))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// CreateDatabase runs CREATE DATABASE name.
func (in *Influx) CreateDatabase(t testing.TB, name string) {
	t.Helper()
	resp, err := http.PostForm(in.URL+"/query", map[string][]string{"q": {"CREATE DATABASE " + name}})
	if err != nil {
		t.Fatalf("testenv: create database: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("testenv: create database: HTTP %d", resp.StatusCode)
	}
}

// Stop terminates influxd.
func (in *Influx) Stop() {
	if in.cmd == nil || in.cmd.Process == nil {
		return
	}
	stopProcess(in.cmd, 10*time.Second)
	in.cmd = nil
}

// stopProcess interrupts a started component (it saves its state and
// exits) and kills it if it has not exited within grace.
func stopProcess(cmd *exec.Cmd, grace time.Duration) {
	_ = cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-done
	}
}

// Kill terminates influxd with SIGKILL (an outage).
func (in *Influx) Kill() {
	if in.cmd == nil || in.cmd.Process == nil {
		return
	}
	_ = in.cmd.Process.Kill()
	_ = in.cmd.Wait()
	in.cmd = nil
}

// Chromium returns the path of Debian's chromium, or skips/fails.
func Chromium(t testing.TB) string {
	t.Helper()
	bin := lookTool(t, "SOSSEGO_CHROMIUM", "chromium", "/usr/bin/chromium")
	if bin == "" {
		Missing(t, "chromium", "apt-get install chromium")
	}
	return bin
}

// Pdftoppm returns the path of poppler's pdftoppm, or skips/fails.
func Pdftoppm(t testing.TB) string {
	t.Helper()
	bin := lookTool(t, "SOSSEGO_PDFTOPPM", "pdftoppm")
	if bin == "" {
		Missing(t, "pdftoppm", "apt-get install poppler-utils")
	}
	return bin
}

func waitTCP(addr string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func tail(b []byte, n int) string {
	var lines []string
	s := bufio.NewScanner(strings.NewReader(string(b)))
	for s.Scan() {
		lines = append(lines, s.Text())
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// MosquittoAuth prepares the files of a secured Mosquitto: a folder the
// broker can read (started as root, it drops to its own user), a password
// file for users (name → password, made with mosquitto_passwd) and a copy
// of the shipped docs/mosquitto/acl. It returns the three paths.
func MosquittoAuth(t testing.TB, users map[string]string) (dir, passwdFile, aclFile string) {
	t.Helper()
	passwd, err := exec.LookPath("mosquitto_passwd")
	if err != nil {
		Missing(t, "mosquitto_passwd", "apt-get install mosquitto")
	}
	dir = t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatalf("testenv: %v", err)
		}
	}
	passwdFile = filepath.Join(dir, "passwd")
	first := true
	for u, p := range users {
		args := []string{"-b", passwdFile, u, p}
		if first {
			args, first = append([]string{"-c"}, args...), false
		}
		if out, err := exec.Command(passwd, args...).CombinedOutput(); err != nil {
			t.Fatalf("testenv: mosquitto_passwd: %v\n%s", err, out)
		}
	}
	if err := os.Chmod(passwdFile, 0o644); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	acl, err := os.ReadFile(filepath.Join(RepoRoot(t), "docs", "mosquitto", "acl"))
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	aclFile = filepath.Join(dir, "acl")
	if err := os.WriteFile(aclFile, acl, 0o644); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	return dir, passwdFile, aclFile
}

// Shipped is a Mosquitto running the shipped docs/mosquitto/mosquitto.conf.
type Shipped struct {
	*Mosquitto        // URL: the loopback password listener (1883 in the file)
	TLSURL     string // ssl://…: the client-certificate listener (8883 in the file)
	PKI        *PKI   // the CA behind the TLS listener; issue gateway certificates with it
}

// StartShippedMosquitto runs docs/mosquitto/mosquitto.conf as shipped, with
// only its ports (free loopback ports) and file paths (a password file for
// users, the shipped ACL, a throwaway PKI, a temporary persistence folder)
// rewritten. It fails the test if the file no longer has the lines it
// rewrites, so that a changed config is noticed rather than half-tested.
func StartShippedMosquitto(t testing.TB, users map[string]string) *Shipped {
	t.Helper()
	dir, pwFile, aclFile := MosquittoAuth(t, users)
	pki := NewPKI(t)
	certFile, keyFile, caFile := pki.ServerFiles(dir, "127.0.0.1")
	files := map[string]string{
		"password_file":        pwFile,
		"acl_file":             aclFile,
		"cafile":               caFile,
		"certfile":             certFile,
		"keyfile":              keyFile,
		"persistence_location": dir + "/",
	}
	tcpPort, tlsPort := FreePort(t), FreePort(t)
	shipped, err := os.ReadFile(filepath.Join(RepoRoot(t), "docs", "mosquitto", "mosquitto.conf"))
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	var conf []string
	rewritten := map[string]bool{}
	for _, line := range strings.Split(string(shipped), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0 || strings.HasPrefix(f[0], "#"):
		case f[0] == "listener" && len(f) == 3 && f[1] == "1883":
			line, rewritten["tcp"] = "listener "+strconv.Itoa(tcpPort)+" 127.0.0.1", true
		case f[0] == "listener" && len(f) == 2 && f[1] == "8883":
			line, rewritten["tls"] = "listener "+strconv.Itoa(tlsPort)+" 127.0.0.1", true
		case files[f[0]] != "":
			line, rewritten[f[0]] = f[0]+" "+files[f[0]], true
		}
		conf = append(conf, line)
	}
	if len(rewritten) != len(files)+2 {
		t.Fatalf("testenv: the shipped mosquitto.conf changed shape: rewrote %v", rewritten)
	}
	conf = append(conf, "log_dest stderr")
	m := StartMosquittoConfig(t, dir, strings.Join(conf, "\n")+"\n", "127.0.0.1:"+strconv.Itoa(tcpPort))
	return &Shipped{Mosquitto: m, TLSURL: "ssl://127.0.0.1:" + strconv.Itoa(tlsPort), PKI: pki}
}

// CPU returns the CPU time (user + system) the running broker has used so
// far, read from /proc (Linux); 0 when it is not running or /proc is not
// there. Benchmarks difference two readings to charge the broker's share of
// a run per message.
func (m *Mosquitto) CPU() time.Duration {
	if m.cmd == nil || m.cmd.Process == nil {
		return 0
	}
	return procCPU(m.cmd.Process.Pid)
}

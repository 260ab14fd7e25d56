package broker

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/testenv"
	"github.com/sossego/sossego/internal/wire"
)

// TestMosquittoACL runs docs/mosquitto/acl, unchanged, in a real Mosquitto
// and checks the same policy as the embedded broker at the subscriber.
func TestMosquittoACL(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	passwd, err := exec.LookPath("mosquitto_passwd")
	if err != nil {
		testenv.Missing(t, "mosquitto_passwd", "apt-get install mosquitto")
	}
	dir := t.TempDir()
	// Mosquitto started as root drops to the mosquitto user: make the
	// files readable.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	pwFile := filepath.Join(dir, "passwd")
	for i, up := range [][2]string{{svcUser, svcPass}, {"gw-a", "pa"}, {"gw-b", "pb"}} {
		args := []string{"-b", pwFile, up[0], up[1]}
		if i == 0 {
			args = append([]string{"-c"}, args...)
		}
		if out, err := exec.Command(passwd, args...).CombinedOutput(); err != nil {
			t.Fatalf("mosquitto_passwd: %v\n%s", err, out)
		}
	}
	aclText, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "docs", "mosquitto", "acl"))
	if err != nil {
		t.Fatal(err)
	}
	acl := filepath.Join(dir, "acl")
	if err := os.WriteFile(acl, aclText, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(pwFile, 0o644); err != nil {
		t.Fatal(err)
	}
	m := testenv.StartMosquitto(t, testenv.MosquittoOpts{Extra: []string{
		"allow_anonymous false",
		"password_file " + pwFile,
		"acl_file " + acl,
		"max_packet_size " + strconv.Itoa(MaxPacket),
	}})

	for _, tc := range []struct{ user, pass string }{{"", ""}, {"gw-a", "wrong"}, {"gw-z", "pz"}} {
		if _, err := connect(t, m.URL, "x-"+tc.user, tc.user, tc.pass, nil); err == nil {
			t.Errorf("mosquitto accepted user %q with password %q", tc.user, tc.pass)
		}
	}
	svc := mustConnect(t, m.URL, "svc", svcUser, svcPass)
	all := &collector{msgs: map[string][]string{}}
	subscribe(t, svc, "sossego/v1/#", all)
	a := mustConnect(t, m.URL, "gw-a", "gw-a", "pa")
	own := &collector{msgs: map[string][]string{}}
	subscribe(t, a, wire.AckTopic("lapa", "gw-a"), own)
	spy := &collector{msgs: map[string][]string{}}
	spyConn := mustConnect(t, m.URL, "gw-a:spy", "gw-a", "pa")
	_ = spyConn.Subscribe(wire.AckTopic("lapa", "gw-b"), 1, spy.handler).WaitTimeout(5 * time.Second)

	denied := []string{wire.LevelsTopic("lapa", "gw-b", "s1"), wire.StatusTopic("lapa", "gw-b"), wire.AckTopic("lapa", "gw-a")}
	publish(a, wire.LevelsTopic("lapa", "gw-a", "s1"), "ok")
	// Mosquitto 2.0.11 drops a denied publish and answers with a PUBACK
	// carrying reason 135, on which paho closes the connection: one
	// connection per attempt.
	for i, tp := range denied {
		publish(mustConnect(t, m.URL, "gw-a:spoof"+strconv.Itoa(i), "gw-a", "pa"), tp, "spoof")
	}
	publish(svc, wire.AckTopic("lapa", "gw-b"), "ack-b")
	publish(svc, wire.AckTopic("lapa", "gw-a"), "ack-a")
	barrier(t, a, wire.StatusTopic("lapa", "gw-a"), all)
	waitCount(t, own, wire.AckTopic("lapa", "gw-a"), 1)

	for _, tp := range denied {
		for _, p := range all.msgs[tp] {
			if p == "spoof" {
				t.Errorf("mosquitto delivered a spoofed publish on %s", tp)
			}
		}
	}
	if all.count(wire.LevelsTopic("lapa", "gw-a", "s1")) != 1 {
		t.Error("gw-a's own levels publish did not arrive")
	}
	if spy.total() != 0 {
		t.Errorf("gw-a read gw-b's acks: %v", spy.msgs)
	}
}

package broker

import (
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
	_, pwFile, acl := testenv.MosquittoAuth(t, map[string]string{svcUser: svcPass, "gw-a": "pa", "gw-b": "pb"})
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
	publish(a, wire.CheckTopic("lapa", "gw-a", "s1"), "check")
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
	for _, tp := range []string{wire.LevelsTopic("lapa", "gw-a", "s1"), wire.CheckTopic("lapa", "gw-a", "s1")} {
		if all.count(tp) != 1 {
			t.Errorf("gw-a's own publish on %s did not arrive", tp)
		}
	}
	if spy.total() != 0 {
		t.Errorf("gw-a read gw-b's acks: %v", spy.msgs)
	}
}

// TestShippedMosquittoConfig starts Mosquitto with docs/mosquitto/mosquitto.conf
// as shipped — only file paths and ports rewritten to the test's own — and
// checks what it promises: the central service on the loopback TCP listener
// with its password, gateways on the TLS listener identified by their
// client certificate's CN (use_identity_as_username + the %u ACL), no
// anonymous clients, no certificate-less TLS, no publishing as another
// gateway.
func TestShippedMosquittoConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	sm := testenv.StartShippedMosquitto(t, map[string]string{svcUser: svcPass})
	m, pki := sm.Mosquitto, sm.PKI

	if _, err := connect(t, m.URL, "anon", "", "", nil); err == nil {
		t.Error("anonymous client accepted")
	}
	svc := mustConnect(t, m.URL, "svc", svcUser, svcPass)
	all := &collector{msgs: map[string][]string{}}
	subscribe(t, svc, "sossego/v1/#", all)

	tlsURL := sm.TLSURL
	clientTLS := pki.ClientTLS
	if _, err := connect(t, tlsURL, "gw-a", "", "", clientTLS("")); err == nil {
		t.Error("TLS client without a certificate accepted")
	}
	gw, err := connect(t, tlsURL, "gw-a", "", "", clientTLS("gw-a"))
	if err != nil {
		t.Fatalf("gateway with a client certificate: %v", err)
	}
	acks := &collector{msgs: map[string][]string{}}
	subscribe(t, gw, wire.AckTopic("lapa", "gw-a"), acks)
	// Every data topic of the gateway's own, a field check included
	// (docs/wire.md): a refused one would end the gateway's connection.
	for _, tp := range []string{wire.LevelsTopic("lapa", "gw-a", "s1"), wire.EnvTopic("lapa", "gw-a", "s1"),
		wire.CheckTopic("lapa", "gw-a", "s1"), wire.StatusTopic("lapa", "gw-a")} {
		publish(gw, tp, "ok")
		waitCount(t, all, tp, 1)
	}
	if !gw.IsConnectionOpen() {
		t.Error("the gateway's connection ended after publishing its own topics")
	}
	publish(svc, wire.AckTopic("lapa", "gw-a"), "ack")
	waitCount(t, acks, wire.AckTopic("lapa", "gw-a"), 1)
	// Client ids are usernames (use_username_as_clientid): gw-a's
	// certificate connecting as client "gw-b" gets the session "gw-a" and
	// leaves gw-b's connection alone.
	gwB, err := connect(t, tlsURL, "gw-b", "", "", clientTLS("gw-b"))
	if err != nil {
		t.Fatalf("gw-b: %v", err)
	}
	// Mosquitto answers a denied publish with reason 135 and paho drops the
	// connection: one connection per attempt.
	spoof, err := connect(t, tlsURL, "gw-b", "", "", clientTLS("gw-a"))
	if err != nil {
		t.Fatal(err)
	}
	publish(spoof, wire.LevelsTopic("lapa", "gw-b", "s1"), "spoof")
	barrier(t, gwB, wire.StatusTopic("lapa", "gw-b"), all)
	if n := all.count(wire.LevelsTopic("lapa", "gw-b", "s1")); n != 0 {
		t.Errorf("gw-a's certificate published as gw-b (%d messages)", n)
	}
	if !gwB.IsConnectionOpen() {
		t.Error("gw-a's certificate with client id gw-b kicked gw-b off")
	}
}

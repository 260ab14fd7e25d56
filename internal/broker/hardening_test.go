package broker

import (
	"context"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/sossego/sossego/internal/testenv"
	"github.com/sossego/sossego/internal/wire"
)

// heapAfterGC is the live heap, in bytes, after a full collection.
func heapAfterGC() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// publishOnce connects as gw-a, publishes one message (QoS 1) and waits a
// little for its PUBACK; the broker may end the connection instead.
func publishOnce(t *testing.T, url, topic string, payload []byte, retain bool) {
	t.Helper()
	c, err := connect(t, url, "gw-a", "gw-a", "pa", nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	c.Publish(topic, 1, retain, payload).WaitTimeout(2 * time.Second)
	c.Disconnect(0)
}

// TestRetainedFloodRefused is the attack: one gateway's credential retains
// large messages under invented sensor ids (topics its ACL allows). Every
// one of them used to stay in the broker's memory (1,000 × 1 MiB pinned
// 2.4 GB). Now only the gateway's status topic may be retained, and only a
// status of at most wire.MaxStatusPayload bytes; the flood leaves the
// retained store and the heap as they were.
func TestRetainedFloodRefused(t *testing.T) {
	b := startBroker(t, Options{})
	svc := mustConnect(t, b.URL(), "svc", svcUser, svcPass)
	all := &collector{msgs: map[string][]string{}}
	subscribe(t, svc, "sossego/v1/#", all)

	const n, size = 64, 256 << 10 // 16 MiB in all
	payload := []byte(strings.Repeat("x", size))
	before := heapAfterGC()
	for i := range n {
		publishOnce(t, b.URL(), wire.LevelsTopic("lapa", "gw-a", "invented-"+strconv.Itoa(i)), payload, true)
	}
	// Retained oversized status, retained small status, non-retained levels.
	publishOnce(t, b.URL(), wire.StatusTopic("lapa", "gw-a"), payload, true)
	publishOnce(t, b.URL(), wire.StatusTopic("lapa", "gw-a"), []byte(strings.Repeat("s", wire.MaxStatusPayload+1)), false)
	publishOnce(t, b.URL(), wire.StatusTopic("lapa", "gw-a"), wire.OfflinePayload, true)
	publishOnce(t, b.URL(), wire.LevelsTopic("lapa", "gw-a", "s1"), []byte("live"), false)
	waitCount(t, all, wire.LevelsTopic("lapa", "gw-a", "s1"), 1)
	waitCount(t, all, wire.StatusTopic("lapa", "gw-a"), 1)

	retained := b.srv.Topics.Retained.GetAll()
	for k := range retained {
		if strings.HasPrefix(k, "$SYS/") {
			delete(retained, k) // the broker's own
		}
	}
	if len(retained) != 1 {
		names := []string{}
		for k := range retained {
			names = append(names, k)
		}
		t.Errorf("%d retained messages (%v), want only gw-a's status", len(retained), names)
	}
	if pk, ok := retained[wire.StatusTopic("lapa", "gw-a")]; !ok || string(pk.Payload) != string(wire.OfflinePayload) {
		t.Errorf("gw-a's small status not retained: %q", pk.Payload)
	}
	for tp, ps := range all.msgs {
		for _, p := range ps {
			if len(p) > wire.MaxStatusPayload {
				t.Errorf("a %d-byte refused message reached the subscriber on %s", len(p), tp)
			}
		}
	}
	after := heapAfterGC()
	t.Logf("heap after the flood of %d × %d KiB retained: %+d KiB", n, size>>10, (int64(after)-int64(before))>>10)
	if grown := int64(after) - int64(before); grown > n*size/4 {
		t.Errorf("heap grew by %d KiB during the flood: the broker kept what it refused", grown>>10)
	}
}

// TestWillLimitedToSmallStatus: a Will may only be the gateway's status,
// small, since mochi publishes (and retains) it without further checks.
func TestWillLimitedToSmallStatus(t *testing.T) {
	b := startBroker(t, Options{})
	for _, tc := range []struct {
		name, topic, payload string
		ok                   bool
	}{
		{"offline status", wire.StatusTopic("lapa", "gw-a"), string(wire.OfflinePayload), true},
		{"levels topic", wire.LevelsTopic("lapa", "gw-a", "s1"), "x", false},
		{"huge status", wire.StatusTopic("lapa", "gw-a"), strings.Repeat("x", wire.MaxStatusPayload+1), false},
	} {
		o := paho.NewClientOptions().AddBroker(b.URL()).SetClientID("gw-a").SetUsername("gw-a").SetPassword("pa").
			SetAutoReconnect(false).SetWill(tc.topic, tc.payload, 1, true)
		c := paho.NewClient(o)
		tok := c.Connect()
		tok.WaitTimeout(5 * time.Second)
		if (tok.Error() == nil) != tc.ok {
			t.Errorf("%s: err = %v, want ok=%v", tc.name, tok.Error(), tc.ok)
		}
		c.Disconnect(50)
	}
}

// TestClientIDIsTheGateway: one gateway's credential can neither open
// sessions under other client ids (1,000 abandoned ones held ~490 MB) nor
// take over another gateway's; a second connection of the gateway replaces
// the first.
func TestClientIDIsTheGateway(t *testing.T) {
	b := startBroker(t, Options{})
	for i := range 20 {
		if _, err := connect(t, b.URL(), "gw-a:"+strconv.Itoa(i), "gw-a", "pa", nil); err == nil {
			t.Fatalf("client id gw-a:%d accepted for gw-a", i)
		}
	}
	if _, err := connect(t, b.URL(), "gw-b", "gw-a", "pa", nil); err == nil {
		t.Fatal("gw-a connected under gw-b's client id")
	}
	first := mustConnect(t, b.URL(), "gw-a", "gw-a", "pa")
	mustConnect(t, b.URL(), "gw-a", "gw-a", "pa")
	deadline := time.Now().Add(10 * time.Second)
	for first.IsConnectionOpen() {
		if time.Now().After(deadline) {
			t.Fatal("the first gw-a connection is still open after a second one")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := b.srv.Clients.Len(); n > 2 { // gw-a and the broker's inline client
		t.Errorf("%d sessions", n)
	}
}

// TestAbandonedSessionsExpire: a persistent session (clean session false)
// whose gateway does not come back is dropped after SessionExpiry.
func TestAbandonedSessionsExpire(t *testing.T) {
	b := startBroker(t, Options{SessionExpiry: time.Second})
	o := paho.NewClientOptions().AddBroker(b.URL()).SetClientID("gw-a").SetUsername("gw-a").SetPassword("pa").
		SetAutoReconnect(false).SetCleanSession(false)
	c := paho.NewClient(o)
	if tok := c.Connect(); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("connect: %v", tok.Error())
	}
	if tok := c.Subscribe(wire.AckTopic("lapa", "gw-a"), 1, nil); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("subscribe: %v", tok.Error())
	}
	c.Disconnect(50)
	if _, ok := b.srv.Clients.Get("gw-a"); !ok {
		t.Fatal("the persistent session is gone at once")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, ok := b.srv.Clients.Get("gw-a"); !ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the abandoned session never expired")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRefusedPublishLogIsShort: mochi logs a packet it could not process
// whole; a denied 1 MiB publish wrote ~3 MB of log. The line stays short.
func TestRefusedPublishLogIsShort(t *testing.T) {
	var buf testenv.SyncBuffer
	b, err := New(Options{Listen: "127.0.0.1:0", Directory: testDirectory(t), ServiceUser: svcUser, ServicePassword: svcPass,
		Log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	defer func() { cancel(); <-done }()

	big := []byte(strings.Repeat("x", 1<<20))
	publishOnce(t, b.URL(), wire.LevelsTopic("lapa", "gw-b", "s1"), big, false) // another gateway's topic: ACL
	publishOnce(t, b.URL(), wire.LevelsTopic("lapa", "gw-a", "x"), big, true)   // retained: OnPublish
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(buf.String(), "publicação recusada") {
		if time.Now().After(deadline) {
			t.Fatalf("no refusal logged:\n%s", buf.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := len(buf.String()); n > 64<<10 {
		t.Errorf("%d bytes of log for two refused 1 MiB publishes", n)
	}
	for _, line := range strings.Split(buf.String(), "\n") {
		if len(line) > 4096 {
			t.Errorf("a %d-byte log line: %.200s…", len(line), line)
		}
	}
}

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc…(4 bytes)"},
		{"aé", 2, "a…(3 bytes)"}, // not inside the é
	} {
		if got := clip(tc.in, tc.n); got != tc.want {
			t.Errorf("clip(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

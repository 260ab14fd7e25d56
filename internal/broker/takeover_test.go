package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/sossego/sossego/internal/testenv"
	"github.com/sossego/sossego/internal/wire"
)

// realGateway connects as gw-a the way gateway/mqttconn does (persistent
// session, its ack topic subscribed at every connect, reconnecting) and
// hands every ack it receives to acks.
func realGateway(t *testing.T, url string, acks chan<- string) paho.Client {
	t.Helper()
	ackTopic := wire.AckTopic("lapa", "gw-a")
	onAck := func(_ paho.Client, m paho.Message) {
		if m.Topic() == ackTopic {
			select {
			case acks <- string(m.Payload()):
			default: // the test reads only the latest ones
			}
		}
	}
	o := paho.NewClientOptions().AddBroker(url).SetClientID("gw-a").SetUsername("gw-a").SetPassword("pa").
		SetCleanSession(false).SetAutoReconnect(true).SetConnectRetry(true).
		SetConnectRetryInterval(50 * time.Millisecond).SetMaxReconnectInterval(200 * time.Millisecond).
		SetConnectTimeout(5 * time.Second).SetDefaultPublishHandler(onAck).
		SetOnConnectHandler(func(c paho.Client) { c.Subscribe(ackTopic, 1, onAck) })
	c := paho.NewClient(o)
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("gateway connect: %v", tok.Error())
	}
	t.Cleanup(func() { c.Disconnect(50) })
	return c
}

// storm opens n connections at once with gw-a's client id and credential
// (clean sessions, each subscribing to gw-a's ack topic as an impostor
// would), then closes them all. Raw packets, so that every step is
// bounded by a deadline.
func storm(t *testing.T, addr string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			<-start
			buf := make([]byte, 5)
			if _, err := c.Write(connectPacket("gw-a", "gw-a", "pa")); err != nil {
				return
			}
			if _, err := io.ReadFull(c, buf[:4]); err != nil || buf[3] != 0 {
				return // taken over before its CONNACK: part of the storm too
			}
			if _, err := c.Write(subscribePacket(wire.AckTopic("lapa", "gw-a"))); err != nil {
				return
			}
			_, _ = io.ReadFull(c, buf) // SUBACK, or the connection taken over
			_, _ = c.Write([]byte{0xE0, 0})
		})
	}
	close(start)
	wg.Wait()
}

// subscribePacket is an MQTT 3.1.1 SUBSCRIBE to filter at QoS 1.
func subscribePacket(filter string) []byte {
	body := append([]byte{0, 1, byte(len(filter) >> 8), byte(len(filter))}, filter...)
	body = append(body, 1)
	return append([]byte{0x82, byte(len(body))}, body...)
}

// waitAck publishes acks with fresh sequence numbers until the gateway
// receives one of them; the gateway may be reconnecting, so an ack is
// repeated, as the central service repeats its ack after each batch.
func waitAck(t *testing.T, b *Broker, acks <-chan string, seq *atomic.Int64, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	sent := map[string]bool{}
	send := func() {
		p := fmt.Sprintf("ack-%d", seq.Add(1))
		sent[p] = true
		if err := b.Publish(wire.AckTopic("lapa", "gw-a"), []byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	send()
	for {
		select {
		case p := <-acks:
			if sent[p] {
				return
			}
		case <-tick.C:
			send()
		case <-deadline:
			t.Fatalf("the gateway received none of %d acks within %v after the takeover storm", len(sent), within)
		}
	}
}

// TestTakeoverStormLeavesGatewayDelivering is the attack of a holder of
// one gateway's password: bursts of connections with the gateway's client
// id, opened at once and closed. mochi's client table is keyed by client
// id and a takeover (look up, disconnect, add) is not atomic, so
// concurrent takeovers used to leave a connected client out of the table,
// and the end of a replaced clean session removed the table entry and
// subscription of the live one by id: the real gateway stayed connected
// and never received another ack. After every storm the real gateway must
// receive acks again within seconds.
func TestTakeoverStormLeavesGatewayDelivering(t *testing.T) {
	b := startBroker(t, Options{})
	acks := make(chan string, 64)
	realGateway(t, b.URL(), acks)
	var seq atomic.Int64
	waitAck(t, b, acks, &seq, 10*time.Second)
	const rounds, conns = 12, 8
	for r := range rounds {
		t0 := time.Now()
		storm(t, b.Addr().String(), conns)
		t1 := time.Now()
		waitAck(t, b, acks, &seq, 15*time.Second)
		t.Logf("round %d: storm %v, ack %v", r, t1.Sub(t0), time.Since(t1))
		if t.Failed() {
			t.Fatalf("round %d", r)
		}
	}
}

// connectPacket is an MQTT 3.1.1 CONNECT (clean session) with a username
// and password.
func connectPacket(clientID, user, pass string) []byte {
	str := func(s string) []byte { return append([]byte{byte(len(s) >> 8), byte(len(s))}, s...) }
	body := append(str("MQTT"), 4, 0xC2, 0, 60)
	body = append(body, str(clientID)...)
	body = append(body, str(user)...)
	body = append(body, str(pass)...)
	return append([]byte{0x10, byte(len(body))}, body...)
}

// TestFailedLoginsLogged: a password guessed a thousand times a second
// used to write one line with an empty message per try. A refused login is
// now logged with who, from where and why, one line per interval standing
// for all refusals in it; mochi's line for the end of each connection and
// its start-up chatter are debug, in pt-BR.
func TestFailedLoginsLogged(t *testing.T) {
	var buf testenv.SyncBuffer
	b, err := New(Options{Listen: "127.0.0.1:0", Directory: testDirectory(t), ServiceUser: svcUser, ServicePassword: svcPass,
		Log: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	defer func() { cancel(); <-done }()

	const tries = 200
	start := time.Now()
	for i := range tries {
		c, err := net.Dial("tcp", b.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write(connectPacket("gw-a", "gw-a", fmt.Sprint("guess-", i))); err != nil {
			t.Fatal(err)
		}
		if !closedWithin(c, 10*time.Second) { // CONNACK refused, then closed
			t.Fatalf("try %d: connection not closed", i)
		}
		c.Close()
	}
	elapsed := time.Since(start)
	var refusals, counted int
	for line := range strings.Lines(buf.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		msg, _ := rec["msg"].(string)
		switch {
		case msg == "":
			t.Errorf("a log line without a message: %s", line)
		case !strings.HasPrefix(msg, "broker"):
			t.Errorf("a broker line not in the operator's words: %s", line)
		case rec["level"] != "DEBUG" && slices.Contains([]string{"broker: conexão encerrada", "broker: hook adicionado", "broker: escutando"}, msg):
			t.Errorf("chatter above debug: %s", line)
		case msg == "broker: login MQTT recusado":
			refusals++
			if rec["motivo"] != "senha errada" || rec["usuario"] != "gw-a" || rec["remoto"] == nil {
				t.Errorf("refusal line without its content: %s", line)
			}
			n, _ := rec["recusas_no_intervalo"].(float64)
			counted += int(n)
		}
	}
	if max := 1 + int(elapsed/(10*time.Second)); refusals < 1 || refusals > max {
		t.Errorf("%d refusal lines for %d tries in %v, want 1..%d", refusals, tries, elapsed, max)
	}
	if counted > tries {
		t.Errorf("the refusal lines count %d refusals of %d", counted, tries)
	}
}

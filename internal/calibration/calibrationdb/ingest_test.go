package calibrationdb

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/crypto/bcrypt"

	"github.com/sossego/sossego/internal/broker"
	"github.com/sossego/sossego/internal/calibration"
	"github.com/sossego/sossego/internal/ingest"
	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/wire"
)

const testSeed = "calibration-test"

// waitFor polls cond until it holds or a generous deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// logBuffer collects log lines.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestCheckThroughIngest: a gateway publishes, through the embedded broker
// and the real ingest into a real SQLite readings store, a signed levels
// batch from a meter other than the certificate's and a signed calibrator
// check. The check reaches the register with its signed bytes and drift
// and is acknowledged in the gateway's seq; the other meter is a warning
// (log line and counter) and makes the readings indicativas; a check with a
// forged signature is not stored, and an out-of-range one is kept as a
// dead letter that settles its seq.
func TestCheckThroughIngest(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg, err := registry.Parse([]byte(fmt.Sprintf(`version: 1
gateways:
  - {id: gw1, municipality: lapa, public_key: %s}
sensors:
  - {id: m1, gateway: gw1, zone: other, location: {lat: -25.7, lon: -49.7}, address: Rua A, meter: {grade: class1, model: NTi XL2, serial: A2A-1, calibrated_at: 2026-01-01}, establishments: [{name: Bar, document: 12.345.678/0001-95, address: Rua A, type: bar, mechanism: sound_system}]}
`, loadgen.PublicKeyBase64(testSeed, "gw1"))))
	if err != nil {
		t.Fatal(err)
	}
	live := registry.NewLive(reg)
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	brk, err := broker.New(broker.Options{Listen: "127.0.0.1:0", ServiceUser: "svc", ServicePassword: "svc-pw",
		Directory: broker.DirectoryFunc(func(id string) (broker.Gateway, bool) {
			g, ok := live.Current().Gateway(id)
			return broker.Gateway{ID: g.ID, Municipality: g.Municipality, PasswordHash: hash}, ok
		})})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st := openReadings(t, dir)
	logs := &logBuffer{}
	now := time.Now().UTC().Truncate(time.Second)
	cal, err := Open(ctx, filepath.Join(dir, calibration.FileName), Options{Log: slogTo(logs), Sensors: func() []calibration.Sensor {
		return []calibration.Sensor{{ID: "m1", Municipality: "lapa"}}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer cal.Close()
	if _, err := cal.Add(ctx, calibration.Certificate{Sensor: "m1", Number: "RBC-7/2026", Laboratory: "Lab", MeterModel: "NTi XL2",
		MeterSerial: "A2A-1", CalibratedOn: now.AddDate(0, -1, 0).Format(time.DateOnly), Expires: now.AddDate(1, 0, 0).Format(time.DateOnly),
		UncertaintyDB: 0.4}, nil, "ana"); err != nil {
		t.Fatal(err)
	}
	in := ingest.New(ingest.Options{Store: st, Registry: live, Observers: []ingest.Observer{cal.Observer()}, Workers: 2})
	inl, err := ingest.NewInline(in, brk)
	if err != nil {
		t.Fatal(err)
	}
	in.SetAcker(inl)
	var wg sync.WaitGroup
	for _, run := range []func(context.Context) error{brk.Run, inl.Run, in.Run} {
		wg.Add(1)
		go func() { defer wg.Done(); _ = run(ctx) }()
	}
	defer func() { cancel(); wg.Wait() }()

	var mu sync.Mutex
	var acked uint64
	c := paho.NewClient(paho.NewClientOptions().AddBroker(brk.URL()).SetClientID("gw1").SetUsername("gw1").SetPassword("pw").
		SetCleanSession(true).SetOnConnectHandler(func(c paho.Client) {
		c.Subscribe(wire.AckTopic("lapa", "gw1"), 1, func(_ paho.Client, m paho.Message) {
			var a wire.Ack
			if err := jsonUnmarshal(m.Payload(), &a); err == nil {
				mu.Lock()
				acked = max(acked, a.Seq)
				mu.Unlock()
			}
		}).Wait()
	}))
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("connect: %v", tok.Error())
	}
	defer c.Disconnect(50)
	ackedAt := func(seq uint64) func() bool {
		return func() bool { mu.Lock(); defer mu.Unlock(); return acked >= seq }
	}
	key := loadgen.Key(testSeed, "gw1")
	publish := func(topic string, b *wire.Batch, k ed25519.PrivateKey) {
		t.Helper()
		p, err := wire.Seal(b, k)
		if err != nil {
			t.Fatal(err)
		}
		if tok := c.Publish(topic, 1, false, p); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatalf("publish: %v", tok.Error())
		}
	}
	dev := wire.Device{Model: "NTi XL2", Serial: "B7-SWAPPED", Grade: "class1"}
	levels := &wire.Batch{V: 1, Kind: wire.KindLevels, Municipality: "lapa", Gateway: "gw1", Sensor: "m1", Seq: 1, SentAt: now,
		Device: dev, Clock: wire.Clock{Synced: true, Source: "ntp"},
		Records: []wire.Record{{T: now.Add(-2 * time.Second), DurMs: 1000, LAeq: 60, LAFmax: 62, LAFmin: 58}}}
	publish(wire.LevelsTopic("lapa", "gw1", "m1"), levels, key)
	chk := &wire.Batch{V: 1, Kind: wire.KindCheck, Municipality: "lapa", Gateway: "gw1", Sensor: "m1", Seq: 2, SentAt: now,
		Device: dev, Clock: wire.Clock{Synced: true, Source: "ntp"},
		Check: &wire.Check{T: now.Add(-time.Second), ReferenceDB: 114, MeasuredDB: 114.3, FrequencyHz: 1000,
			CalibratorModel: "B&K 4231", CalibratorSerial: "2671834"}}
	publish(wire.CheckTopic("lapa", "gw1", "m1"), chk, key)
	waitFor(t, "the ack of the check (seq 2)", ackedAt(2))
	waitFor(t, "the check in the register", func() bool { ks, _ := cal.Checks(ctx, "m1", 0); return len(ks) == 1 })

	ks, _ := cal.Checks(ctx, "m1", 0)
	k := ks[0]
	if !k.Verified || k.Seq != 2 || k.Drift() != 0.3 || k.MeterSerial != "B7-SWAPPED" || k.Municipality != "lapa" || !k.At.Equal(now.Add(-time.Second)) {
		t.Fatalf("stored check %+v", k)
	}
	body, sig, err := cal.CheckEvidence(ctx, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !ed25519.Verify(key.Public().(ed25519.PublicKey), body, sig) {
		t.Fatal("the stored check's signature does not verify over its stored body")
	}
	// The swapped meter: warned at ingest, indicativas in the register.
	waitFor(t, "the mismatch warning", func() bool { return strings.Contains(logs.String(), "difere do certificado de calibração") })
	if ok, why := cal.Status("m1", now); ok || !strings.Contains(why, `"B7-SWAPPED", diferente do "A2A-1"`) {
		t.Fatalf("status: %v %q", ok, why)
	}
	if n := counterValue(t, cal); n != 1 {
		t.Fatalf("mismatch counter %v", n)
	}

	// A forged check (another key) is not stored and does not move the ack.
	forged := *chk
	forged.Seq = 3
	publish(wire.CheckTopic("lapa", "gw1", "m1"), &forged, loadgen.Key("someone-else", "gw1"))
	// An out-of-range check is a dead letter that settles seq 4.
	bad := *chk
	badCheck := *chk.Check
	badCheck.ReferenceDB = 100
	bad.Seq, bad.Check = 4, &badCheck
	publish(wire.CheckTopic("lapa", "gw1", "m1"), &bad, key)
	// Seq 3 then fills with a genuine check: the ack runs to 4.
	good := *chk
	goodCheck := *chk.Check
	goodCheck.T, goodCheck.MeasuredDB = now, 113.9
	good.Seq, good.Check = 3, &goodCheck
	publish(wire.CheckTopic("lapa", "gw1", "m1"), &good, key)
	waitFor(t, "the ack over the rejected check (seq 4)", ackedAt(4))
	waitFor(t, "the second check", func() bool { ks, _ := cal.Checks(ctx, "m1", 0); return len(ks) == 2 })
	ks, _ = cal.Checks(ctx, "m1", 0)
	if ks[0].Seq != 3 || ks[0].Drift() != -0.1 {
		t.Fatalf("latest check %+v", ks[0])
	}
	dls, err := st.DeadLetters(ctx, store.DeadLetterFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, d := range dls {
		reasons = append(reasons, d.Reason+": "+d.Message)
	}
	all := strings.Join(reasons, "\n")
	if !strings.Contains(all, "signature") || !strings.Contains(all, "94 ou 114 dB") {
		t.Fatalf("dead letters:\n%s", all)
	}
}

func slogTo(w *logBuffer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

func jsonUnmarshal(p []byte, v any) error { return json.Unmarshal(p, v) }

// counterValue is the register's device-mismatch counter.
func counterValue(t *testing.T, r *Register) float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(r.Collector())
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "sossego_calibration_device_mismatch_total" {
			return mf.Metric[0].GetCounter().GetValue()
		}
	}
	t.Fatal("no sossego_calibration_device_mismatch_total")
	return 0
}

package gateway

import (
	"context"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/wire"
	"github.com/sossego/sossego/internal/wire/signature"
)

func TestNewCheck(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name          string
		ref, measured float64
		model, serial string
		want          string // "" valid
	}{
		{"94 dB", 94, 94.123, "B&K 4231", "2671834", ""},
		{"114 dB", 114, 113.8, "B&K 4231", "2671834", ""},
		{"reference 100", 100, 100, "B&K 4231", "2671834", "94 ou 114 dB"},
		{"no calibrator", 94, 94, "", "2671834", "obrigatórios"},
		{"reading typed wrong", 94, 49.4, "B&K 4231", "2671834", "digitado errado"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewCheck(now, tc.ref, tc.measured, tc.model, tc.serial, "")
			if tc.want == "" {
				if err != nil || c.FrequencyHz != 1000 || c.MeasuredDB != float64(int(tc.measured*100+0.5))/100 {
					t.Fatalf("%+v %v", c, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// TestGatewaySendsRecordedCheck: a check recorded in the state folder (as
// `sossego-gateway check` does) is sealed by the running gateway under its
// seq, with the meter's device, signed, published on the check topic, and
// its file removed; a file that is not a valid check is set aside.
func TestGatewaySendsRecordedCheck(t *testing.T) {
	state := t.TempDir()
	box, err := OpenOutbox(filepath.Join(state, "o.db"), 100000)
	if err != nil {
		t.Fatal(err)
	}
	defer box.Close()
	pub, priv, _ := ed25519.GenerateKey(nil)
	at := time.Now().Add(-time.Minute)
	c, err := NewCheck(at, 94, 94.2, "B&K 4231", "2671834", "antes da medição")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RecordCheck(state, c); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(state, CheckDir)
	if err := os.WriteFile(filepath.Join(dir, "lixo.json"), []byte(`{"reference_db": 100}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ap := &ackPub{}
	g, err := New(Options{Municipality: "lapa", Gateway: "gw", Sensor: "m1", SamplePeriod: 5 * time.Millisecond,
		BatchRecords: 5, ReplayRate: 10000, AckTimeout: time.Hour, CheckDir: dir},
		&stepMeter{start: time.Now().Add(-time.Hour).Truncate(time.Second)}, FixedSync(synced), box, priv, ap, nil)
	if err != nil {
		t.Fatal(err)
	}
	ap.g = g
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	g.OnConnect()
	topic := wire.CheckTopic("lapa", "gw", "m1")
	wait(t, "the check published", func() bool { return len(ap.batches(t, topic)) == 1 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ap.mu.Lock()
	payload := ap.msgs[topic][0]
	ap.mu.Unlock()
	env, b, err := wire.Open(payload)
	if err != nil {
		t.Fatal(err)
	}
	if err := signature.Verify(env, pub); err != nil {
		t.Fatalf("signature: %v", err)
	}
	tp, _ := wire.ParseTopic(topic)
	if err := wire.Validate(tp, env, b, time.Now(), wire.DefaultSkew, wire.DefaultStale); err != nil {
		t.Fatalf("the central service would refuse it: %v", err)
	}
	if b.Check.MeasuredDB != 94.2 || b.Check.Note != "antes da medição" || b.Device.Model != "fake" || b.Device.Serial != "1" || b.Seq == 0 {
		t.Fatalf("sealed check %+v device %+v seq %d", b.Check, b.Device, b.Seq)
	}
	// The levels batches and the check share one seq space, without a gap.
	seqs := map[uint64]bool{b.Seq: true}
	for _, lb := range ap.batches(t, wire.LevelsTopic("lapa", "gw", "m1")) {
		seqs[lb.Seq] = true
	}
	for s := uint64(1); s <= b.Seq; s++ {
		if !seqs[s] {
			t.Fatalf("seq %d missing below the check's %d", s, b.Seq)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(left) != 1 || !strings.HasSuffix(left[0], "lixo.json.rejeitada") {
		t.Fatalf("left in %s: %v", dir, left)
	}
}

package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/gateway"
	"github.com/sossego/sossego/gateway/gatewaytest"
	"github.com/sossego/sossego/internal/testenv"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		wantErr string // substring of the parse or validation error; "" = valid
		check   func(t *testing.T, c Config)
	}{
		{"example file", mustRead(t, "../../docs/sossego-gateway.example.yaml"), "", func(t *testing.T, c Config) {
			if c.Gateway != "gw-centro-01" || c.Meter.Type != "pcbartists" || c.Batch.MaxAge != 10*time.Second {
				t.Errorf("example decoded to %+v", c)
			}
		}},
		{"minimal uses defaults", "municipality: lapa\ngateway: gw-01\n", "", func(t *testing.T, c Config) {
			d := defaultConfig()
			if c.Sensor != "m1" || c.Outbox != d.Outbox || c.Replay != d.Replay || c.Meter.SampleRateHz != 10 {
				t.Errorf("defaults not applied: %+v", c)
			}
		}},
		{"unknown key", "municipality: lapa\ngateway: gw-01\nmeter:\n  typo: 1\n", "typo", nil},
		{"wrong type", "municipality: lapa\ngateway: gw-01\nbatch:\n  records: many\n", "many", nil},
		{"two documents", "municipality: lapa\ngateway: gw-01\n---\nx: 1\n", "documento", nil},
		{"bad id", "municipality: Lapa\ngateway: gw-01\n", "municipality", nil},
		{"missing gateway", "municipality: lapa\n", "gateway", nil},
		{"bad meter", "municipality: lapa\ngateway: g\nmeter: {type: tascam}\n", "meter.type", nil},
		{"nsrt needs port", "municipality: lapa\ngateway: g\nmeter: {type: nsrt}\n", "serial_port", nil},
		{"bad policy", "municipality: lapa\ngateway: g\noutbox: {full_policy: drop-oldest}\n", "full_policy", nil},
		{"tiny outbox", "municipality: lapa\ngateway: g\noutbox: {capacity_records: 5}\n", "capacity_records", nil},
		{"outbox bytes", "municipality: lapa\ngateway: g\noutbox: {capacity_bytes: 67108864, reserve_bytes: 0, memory_records: 600}\n", "", func(t *testing.T, c Config) {
			o := c.Outbox.outboxOptions()
			if o.CapacityBytes != 64<<20 || o.Reserve != -1 || o.CapacityRecords != 3*86400 || c.gatewayOptions("x").MemoryRecords != 600 {
				t.Errorf("outbox options %+v, memory %d", o, c.gatewayOptions("x").MemoryRecords)
			}
		}},
		{"outbox defaults", "municipality: lapa\ngateway: g\n", "", func(t *testing.T, c Config) {
			if o := c.Outbox.outboxOptions(); o.Reserve != gateway.DefaultReserve || o.CapacityBytes != 0 || c.Outbox.MemoryRecords != 1800 {
				t.Errorf("outbox options %+v", o)
			}
		}},
		{"negative bytes", "municipality: lapa\ngateway: g\noutbox: {capacity_bytes: -1}\n", "outbox.capacity_bytes", nil},
		{"reserve too big", "municipality: lapa\ngateway: g\noutbox: {reserve_bytes: 10000000000}\n", "outbox.reserve_bytes", nil},
		{"memory under a batch", "municipality: lapa\ngateway: g\noutbox: {memory_records: 5}\n", "outbox.memory_records", nil},
		{"rate", "municipality: lapa\ngateway: g\nmeter: {sample_rate_hz: 1000}\n", "sample_rate_hz", nil},
		{"cert without key", "municipality: lapa\ngateway: g\nmqtt: {cert_file: a.pem}\n", "key_file", nil},
		{"duration", "municipality: lapa\ngateway: g\nbatch: {max_age: 500ms}\n", "max_age", nil},
		{"batch over an hour", "municipality: lapa\ngateway: g\nbatch: {max_age: 61m}\n", "batch.max_age 1h1m0s maior que 1h0m0s", nil},
		{"env batch over an hour", "municipality: lapa\ngateway: g\nenv: {type: bme280, interval: 10m, batch_records: 10, batch_max_age: 2h}\n", "env: um lote cobriria até 1h30m0s", nil},
		{"in flight over the window", "municipality: lapa\ngateway: g\nreplay: {window: 4, in_flight: 5}\n", "replay.in_flight 5 fora de 1–window (4)", nil},
		{"in flight zero", "municipality: lapa\ngateway: g\nreplay: {in_flight: 0}\n", "replay.in_flight 0", nil},
		{"in flight", "municipality: lapa\ngateway: g\nreplay: {in_flight: 3}\n", "", func(t *testing.T, c Config) {
			if got := c.gatewayOptions("x").InFlight; got != 3 {
				t.Errorf("gateway InFlight %d, want 3", got)
			}
		}},
		{"no env sensor by default", "municipality: lapa\ngateway: g\n", "", func(t *testing.T, c Config) {
			if c.Env.Type != "" || c.Env != defaultEnvConfig() || c.gatewayOptions("x").Env != (gateway.EnvOptions{}) {
				t.Errorf("env %+v", c.Env)
			}
		}},
		{"bme280", "municipality: lapa\ngateway: g\nenv: {type: bme280, i2c_bus: \"1\", address: 0x77, interval: 30s}\n", "", func(t *testing.T, c Config) {
			want := EnvConfig{Type: "bme280", I2CBus: "1", Address: 0x77, Interval: 30 * time.Second, BatchRecords: 10, BatchMaxAge: 10 * time.Minute}
			if c.Env != want {
				t.Errorf("env %+v, want %+v", c.Env, want)
			}
			o := c.gatewayOptions("x").Env
			if o != (gateway.EnvOptions{Interval: 30 * time.Second, BatchRecords: 10, BatchMaxAge: 10 * time.Minute}) {
				t.Errorf("gateway env options %+v", o)
			}
		}},
		{"bme280 own sensor id", "municipality: lapa\ngateway: g\nenv: {type: bme280, sensor: amb-1, batch_records: 5, batch_max_age: 5m}\n", "", func(t *testing.T, c Config) {
			if o := c.gatewayOptions("x").Env; o.Sensor != "amb-1" || o.BatchRecords != 5 || o.BatchMaxAge != 5*time.Minute || o.Interval != time.Minute {
				t.Errorf("gateway env options %+v", o)
			}
		}},
		{"env type", "municipality: lapa\ngateway: g\nenv: {type: dht22}\n", "env.type", nil},
		{"env address", "municipality: lapa\ngateway: g\nenv: {type: bme280, address: 0x48}\n", "env.address", nil},
		{"env interval", "municipality: lapa\ngateway: g\nenv: {type: bme280, interval: 100ms}\n", "env.interval", nil},
		{"env sensor id", "municipality: lapa\ngateway: g\nenv: {type: bme280, sensor: Amb}\n", "env.sensor", nil},
		{"env batch", "municipality: lapa\ngateway: g\nenv: {type: bme280, batch_records: 0}\n", "env.batch_records", nil},
		{"env unknown key", "municipality: lapa\ngateway: g\nenv: {type: bme280, adress: 0x76}\n", "adress", nil},
		{"xl2 needs port", "municipality: lapa\ngateway: g\nmeter: {type: xl2}\n", "serial_port", nil},
		{"xl2 calibrated", "municipality: lapa\ngateway: g\nmeter: {type: xl2, serial_port: /dev/ttyACM0, calibrated_at: 2026-08-20}\n", "", func(t *testing.T, c Config) {
			if c.Meter.CalibratedAt != "2026-08-20" {
				t.Errorf("calibrated_at %q", c.Meter.CalibratedAt)
			}
		}},
		{"calibration date", "municipality: lapa\ngateway: g\nmeter: {type: xl2, serial_port: /dev/ttyACM0, calibrated_at: 20/08/2026}\n", "calibrated_at", nil},
		{"calibration of a screening module", "municipality: lapa\ngateway: g\nmeter: {type: pcbartists, calibrated_at: 2026-08-20}\n", "calibrated_at", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseConfig(strings.NewReader(tc.yaml))
			if err == nil {
				err = c.validate()
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				if tc.check != nil {
					tc.check(t, c)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.wantErr)
			}
		})
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("municipality: lapa\ngateway: gw-01\n"))
	f.Add([]byte("meter: {type: sim, sample_rate_hz: 10}\nbatch: {max_age: 10s}\n"))
	f.Add([]byte("- a\n- b\n"))
	f.Add([]byte("&a [*a]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseConfig(bytes.NewReader(data))
		if err != nil {
			return
		}
		_ = c.validate() // must not panic
		_ = c.gatewayOptions("x")
	})
}

func TestKeyCommand(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"key", "--state-dir", dir}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	pub, err := base64.StdEncoding.DecodeString(strings.TrimSpace(out.String()))
	if err != nil || len(pub) != ed25519.PublicKeySize {
		t.Fatalf("printed %q", out.String())
	}
	key, err := gateway.LoadKey(filepath.Join(dir, gateway.KeyFile))
	if err != nil || !key.Public().(ed25519.PublicKey).Equal(ed25519.PublicKey(pub)) {
		t.Fatalf("printed key is not the stored one: %v", err)
	}
	out.Reset()
	run(context.Background(), []string{"key", "--state-dir", dir}, nil, &out, &errb)
	if strings.TrimSpace(out.String()) != base64.StdEncoding.EncodeToString(pub) {
		t.Error("second run printed a different key")
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"bogus"},
		{"run", "--municipality", "lapa", "--gateway", "g", "--meter", "xl2"}, // no serial port
		{"run", "--no-such-flag"},
		{"run", "--municipality", "lapa"}, // no gateway id
		{"run", "extra-arg"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, nil, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errb.String())
		}
		if errb.Len() == 0 {
			t.Errorf("%v: no message", args)
		}
		for _, en := range []string{"Usage of", "flag provided", "invalid value", "flag needs"} {
			if strings.Contains(errb.String(), en) {
				t.Errorf("%v: English message %q", args, errb.String())
			}
		}
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"run", "-h"}, {"key", "-help"}, {"help"}} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, nil, &out, &errb); code != 0 {
			t.Errorf("%v: exit %d, want 0", args, code)
		}
		for _, want := range []string{"Uso:", "sossego-gateway key", "Opções:", "-config arquivo", "-state-dir pasta"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%v: help without %q:\n%s", args, want, out.String())
			}
		}
		if strings.Contains(out.String(), "Usage of") || errb.Len() > 0 {
			t.Errorf("%v: stdout %q stderr %q", args, out.String(), errb.String())
		}
	}
}

// TestRunWithSimMeter runs the daemon (sim meter, accelerated) against an
// embedded broker with a test central service and stops it with the
// context: records arrive signed and acked, and the outbox empties.
func TestRunWithSimMeter(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts a broker")
	}
	b := gatewaytest.StartMochi(t)
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"key", "--state-dir", dir}, nil, &out, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	pub, _ := base64.StdEncoding.DecodeString(strings.TrimSpace(out.String()))
	c := gatewaytest.StartCentral(t, b.URL, "central", map[string]ed25519.PublicKey{"gw-sim": pub})
	cfg := filepath.Join(dir, "gw.yaml")
	os.WriteFile(cfg, []byte("municipality: lapa\ngateway: gw-sim\nbatch: {records: 5, max_age: 1s}\n"+
		"meter: {type: sim, sim_scenario: bar_music}\nstatus_interval: 1s\n"), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var logb testenv.SyncBuffer
	go func() {
		done <- run(ctx, []string{"--config", cfg, "--broker", b.URL, "--state-dir", dir, "--sample-rate", "10"}, nil, &out, &logb)
	}()
	ok := gatewaytest.WaitFor(30*time.Second, func() bool { return c.Contiguous("gw-sim") >= 2 })
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d\n%s", code, logb.String())
	}
	if !ok {
		t.Fatalf("no batches stored\n%s", logb.String())
	}
	if r := c.Rejected(); len(r) > 0 {
		t.Fatalf("central rejected: %v", r)
	}
	bs := c.Batches("gw-sim")
	if len(bs[0].Records) == 0 || bs[0].Records[0].Hist == nil {
		t.Errorf("first batch %+v", bs[0])
	}
	online := false
	for _, st := range c.StatusLog("gw-sim") {
		online = online || (st.State == "online" && st.Clock != nil && st.Outbox != nil && st.Outbox.Capacity > 0)
	}
	if !online {
		t.Errorf("no online status with clock and outbox: %+v", c.StatusLog("gw-sim"))
	}
	// A clean stop leaves "offline" retained (the Will covers crashes).
	if !gatewaytest.WaitFor(5*time.Second, func() bool { st, _ := c.Status("gw-sim"); return st.State == "offline" }) {
		t.Error("clean stop did not leave an offline status")
	}
}

// TestRunWithoutEnvSensor: an environmental sensor that cannot be opened
// is logged and the daemon goes on measuring noise.
func TestRunWithoutEnvSensor(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts a broker")
	}
	b := gatewaytest.StartMochi(t)
	dir := t.TempDir()
	key, _, err := gateway.LoadOrCreateKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := gatewaytest.StartCentral(t, b.URL, "central", map[string]ed25519.PublicKey{"gw-env": key.Public().(ed25519.PublicKey)})
	cfg := filepath.Join(dir, "gw.yaml")
	os.WriteFile(cfg, []byte("municipality: lapa\ngateway: gw-env\nbatch: {records: 5, max_age: 1s}\n"+
		"meter: {type: sim, sim_scenario: quiet_night}\n"+
		"env: {type: bme280, i2c_bus: no-such-bus-sossego, address: 0x77, interval: 1s}\n"), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var out, logb testenv.SyncBuffer
	go func() {
		done <- run(ctx, []string{"--config", cfg, "--broker", b.URL, "--state-dir", dir}, nil, &out, &logb)
	}()
	ok := gatewaytest.WaitFor(30*time.Second, func() bool { return c.Contiguous("gw-env") >= 2 })
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d\n%s", code, logb.String())
	}
	if !ok {
		t.Fatalf("no level batches stored without the env sensor\n%s", logb.String())
	}
	if !strings.Contains(logb.String(), "sensor ambiental indisponível") || !strings.Contains(logb.String(), "no-such-bus-sossego") {
		t.Errorf("the missing sensor is not in the log:\n%s", logb.String())
	}
	for _, s := range c.Batches("gw-env") {
		if s.Kind != "levels" {
			t.Errorf("seq %d is %s", s.Seq, s.Kind)
		}
	}
}

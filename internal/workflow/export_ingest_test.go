package workflow_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/evidence"
	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/alerts/notice/noticetest"
	"github.com/sossego/sossego/internal/cases/casesdb"
	"github.com/sossego/sossego/internal/ingest"
	"github.com/sossego/sossego/internal/ingest/loadgen"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/store/sqlitestore"
	"github.com/sossego/sossego/internal/wire"
	"github.com/sossego/sossego/internal/workflow"
)

// TestEvidenceFromIngestedStore builds the bag from a real SQLite store
// filled through the ingest path (signed envelopes, verified at ingest with
// the key in force when each was received): the Lapa gateway's key is
// rotated in the middle of the alert window, so the bag must carry both
// keys with their validity and every batch must re-verify with its own.
func TestEvidenceFromIngestedStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sc := noticetest.Lapa(set)
	const gw, sensor = "lapa-centro-01", "lapa-bar-01"
	a := *sc.Alert
	rotation := a.WindowStart.Add(a.WindowEnd.Sub(a.WindowStart) / 2)
	oldKey, newKey := loadgen.Key("evidence-old", gw), loadgen.Key(loadgen.DefaultSeed, gw)
	cur := loadgen.PublicKeyBase64(loadgen.DefaultSeed, gw)
	yaml := strings.Replace(string(registry.DemoYAML()), "    public_key: "+cur,
		"    public_key: "+cur+"\n    key_valid_from: "+rotation.Format(time.RFC3339)+
			"\n    previous_keys:\n      - {public_key: "+loadgen.PublicKeyBase64("evidence-old", gw)+", valid_until: "+rotation.Format(time.RFC3339)+", reason: rotação programada}", 1)
	reg, err := registry.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := reg.Gateway(gw); len(g.Keys()) != 2 {
		t.Fatalf("register keys: %+v", g.Keys())
	}
	st, err := sqlitestore.Open(filepath.Join(dir, "readings.db"), sqlitestore.Options{Sync: sqlitestore.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	in := ingest.New(ingest.Options{Store: st, Registry: registry.NewLive(reg), Now: func() time.Time { return a.WindowEnd.Add(time.Hour) }, Workers: 2})
	runCtx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- in.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("ingest: %v", err)
		}
	})

	margin := 5 * time.Minute
	rs := sc.Readings(a.WindowStart.Add(-margin-time.Minute), a.WindowEnd.Add(margin+time.Minute))
	var offered, done atomic.Int64
	offer := func(b *wire.Batch, received time.Time) {
		key := oldKey
		if !received.Before(rotation) {
			key = newKey
		}
		p, err := wire.Seal(b, key)
		if err != nil {
			t.Fatal(err)
		}
		offered.Add(1)
		topic := wire.LevelsTopic("lapa", gw, sensor)
		if b.Kind == wire.KindEnv {
			topic = wire.EnvTopic("lapa", gw, sensor)
		}
		for !in.Offer(ingest.Message{Topic: topic, Payload: p, ReceivedAt: received, Done: func() { done.Add(1) }}) {
			time.Sleep(time.Millisecond) // queue full: wait for room, as the broker link does
		}
	}
	seq := uint64(1)
	levelBatches := 0
	for i := 0; i < len(rs); i += 10 {
		b := &wire.Batch{V: 1, Kind: wire.KindLevels, Municipality: "lapa", Gateway: gw, Sensor: sensor, Seq: seq, SentAt: rs[i].T.Add(10 * time.Second),
			Device: wire.Device{Model: sc.Site.MeterModel, Serial: sc.Site.MeterSerial, Grade: sc.Site.Grade}, Clock: wire.Clock{Synced: true, OffsetMs: 2, Source: "ntp"}}
		for _, r := range rs[i:min(i+10, len(rs))] {
			b.Records = append(b.Records, wire.Record{T: r.T, DurMs: 1000, LAeq: r.LAeq, LAFmax: r.LAFmax, LAFmin: r.LAFmin})
		}
		offer(b, b.SentAt.Add(1500*time.Millisecond))
		seq++
		levelBatches++
		if i%600 == 0 { // an env reading every 10 minutes, in its own signed batch
			temp, hum := 18.25, 77.5
			e := &wire.Batch{V: 1, Kind: wire.KindEnv, Municipality: "lapa", Gateway: gw, Sensor: sensor, Seq: seq, SentAt: rs[i].T.Add(10 * time.Second),
				Device: wire.Device{Model: "Bosch BME280", Serial: "bme280-0x76", Grade: "screening"}, Clock: wire.Clock{Synced: true, OffsetMs: 2, Source: "ntp"},
				Env: []wire.EnvRecord{{T: rs[i].T, TemperatureC: &temp, HumidityPct: &hum}}}
			offer(e, e.SentAt.Add(time.Second))
			seq++
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for done.Load() < offered.Load() {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d batches stored", done.Load(), offered.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if dls, _ := st.DeadLetters(ctx, store.DeadLetterFilter{Limit: 10}); len(dls) > 0 {
		t.Fatalf("rejected at ingest: %+v", dls[0])
	}

	cs, err := casesdb.Open(ctx, filepath.Join(dir, "cases.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	// The alert acknowledged and assigned: the custody trail says so.
	ana := notice.Actor{ID: "u-ana", Name: "Ana Souza", Role: "fiscal"}
	if _, _, err := cs.Ack(ctx, a.ID, ana, a.WindowEnd.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cs.Assign(ctx, a.ID, "u-bruno", ana, a.WindowEnd.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	kr, err := evidence.LoadOrCreateKeyRing(dir, a.WindowStart)
	if err != nil {
		t.Fatal(err)
	}
	svc := workflow.New(workflow.Config{Cases: caseStores(cs), Alerts: fakeAlerts{a.ID: a}, Registry: reg, Readings: st, Batches: st, Codes: set, Key: kr.Signer,
		Margin: margin, Evidence: workflow.EvidenceSources{Keys: kr, Env: st, Ledger: &evidence.FileLedger{Dir: filepath.Join(dir, evidence.LedgerDir)}}})
	var bag bytes.Buffer
	sum, err := svc.Export(ctx, a.ID, &bag, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep := evidence.Verify(bytes.NewReader(bag.Bytes()), int64(bag.Len()), kr.Public())
	wantRecords := int(a.WindowEnd.Sub(a.WindowStart)/time.Second) + 2*int(margin/time.Second)
	if !rep.OK || rep.ReadingsChecked != wantRecords || sum.RecordsTotal != wantRecords || rep.BatchesVerified != rep.Batches || rep.Batches < levelBatches/2 {
		t.Fatalf("bag from the ingested store: %+v (summary %d records, want %d)", rep, sum.RecordsTotal, wantRecords)
	}
	files := map[string]string{}
	for name, d := range unzip(t, bag.Bytes()) {
		_, rest, _ := strings.Cut(name, "/")
		files[rest] = string(d)
	}
	// Both keys, each used for the batches received while it was in force.
	var keys []struct {
		Fingerprint string    `json:"fingerprint"`
		ValidUntil  time.Time `json:"valid_until"`
		Reason      string    `json:"reason"`
	}
	if err := json.Unmarshal([]byte(files["data/keys/gateways.json"]), &keys); err != nil || len(keys) != 2 ||
		keys[0].Fingerprint != evidence.Fingerprint(oldKey.Public().(ed25519.PublicKey)) || !keys[0].ValidUntil.Equal(rotation) || keys[0].Reason != "rotação programada" {
		t.Fatalf("gateways.json: %v %s", err, files["data/keys/gateways.json"])
	}
	for _, k := range []string{`"key":"data/keys/lapa-centro-01-1.pem"`, `"key":"data/keys/lapa-centro-01-2.pem"`} {
		if !strings.Contains(files["data/batches.ndjson"], k) {
			t.Errorf("no batch verified with %s", k)
		}
	}
	// The window is the alert's ± the stated margin, nothing more.
	lines := strings.Split(strings.TrimSpace(files["data/readings.csv"]), "\n")
	first, last := strings.Split(lines[1], ",")[0], strings.Split(lines[len(lines)-1], ",")[0]
	if first != a.WindowStart.Add(-margin).UTC().Format("2006-01-02T15:04:05.000Z") || last != a.WindowEnd.Add(margin-time.Second).UTC().Format("2006-01-02T15:04:05.000Z") {
		t.Errorf("exported %s … %s for the window %s ± %s", first, last, a.WindowStart, margin)
	}
	if !strings.Contains(files["data/env.csv"], ",18.25,77.50,,lapa-centro-01,") || !strings.Contains(files["bag-info.txt"], "Sossego-Margin: 5m0s") {
		t.Errorf("env.csv:\n%s", files["data/env.csv"])
	}
	var custody []evidence.Custody
	if err := json.Unmarshal([]byte(files["data/custody.json"]), &custody); err != nil || len(custody) != 2 ||
		custody[0].Action != "alerta reconhecido" || custody[0].Detail != "alerta "+a.ID+" reconhecido" || custody[0].Actor != "u-ana Ana Souza" ||
		custody[1].Action != "alerta atribuído" || custody[1].Detail != "alerta "+a.ID+" atribuído a u-bruno" || !custody[1].At.Equal(a.WindowEnd.Add(2*time.Minute)) {
		t.Errorf("custody.json (%v):\n%s", err, files["data/custody.json"])
	}
	if !strings.Contains(files["bag-info.txt"], "Sossego-Case-State-Time: "+a.WindowEnd.Add(2*time.Minute).UTC().Format(time.RFC3339)) {
		t.Errorf("the bag's date is not the case's last act:\n%s", files["bag-info.txt"])
	}
	// Same state, same bytes.
	var again bytes.Buffer
	if _, err := svc.Export(ctx, a.ID, &again, nil); err != nil || !bytes.Equal(again.Bytes(), bag.Bytes()) {
		t.Errorf("second export differs (%v)", err)
	}
}

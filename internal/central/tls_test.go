package central

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/sossego/sossego/gateway"
	"github.com/sossego/sossego/gateway/gatewaytest"
	"github.com/sossego/sossego/gateway/mqttconn"
	"github.com/sossego/sossego/internal/store"
	"github.com/sossego/sossego/internal/testenv"
	"github.com/sossego/sossego/internal/wire"
)

// TestGatewayOverTLS: `sossego central`'s embedded broker with its TLS
// listener; the real gateway stack (mqttconn.RunNode, outbox, signatures)
// logs in with nothing but its client certificate (CN = gateway id) and its
// batches are stored and acknowledged. A TLS client without a certificate
// is refused, and a certificate for another registered gateway cannot
// publish on this gateway's topics — not even a batch signed with this
// gateway's key.
func TestGatewayOverTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	dir := t.TempDir()
	pki := testenv.NewPKI(t)
	certFile, keyFile, caFile := pki.ServerFiles(dir, "127.0.0.1")
	gwDir := t.TempDir()
	key, _, err := gateway.LoadOrCreateKey(gwDir)
	if err != nil {
		t.Fatal(err)
	}
	const id, other, sensor = "lapa-tls-01", "lapa-tls-02", "lapa-tls-01-s1"
	_, otherPriv, _ := ed25519.GenerateKey(rand.Reader)
	pub := func(k ed25519.PrivateKey) string {
		return base64.StdEncoding.EncodeToString(k.Public().(ed25519.PublicKey))
	}
	regYAML := fmt.Sprintf(`version: 1
gateways:
  - {id: %s, municipality: lapa, public_key: %s}
  - {id: %s, municipality: lapa, public_key: %s}
sensors:
  - {id: %s, gateway: %s, zone: other, location: {lat: -25.77, lon: -49.71}, address: Rua Teste 1, meter: {grade: screening}}
`, id, pub(key), other, pub(otherPriv), sensor, id)
	regPath := filepath.Join(dir, "registry.yaml")
	if err := os.WriteFile(regPath, []byte(regYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	a := startCentral(t, Options{DataDir: dir, Registry: regPath, MQTTTLSListen: "127.0.0.1:0",
		TLSCert: certFile, TLSKey: keyFile, TLSClientCA: caFile})
	if a.MQTTTLS == "" {
		t.Fatal("no TLS listener address")
	}

	// No certificate: refused at the handshake.
	noCert := paho.NewClient(paho.NewClientOptions().AddBroker(a.MQTTTLS).SetClientID(id).SetTLSConfig(pki.ClientTLS("")).
		SetConnectTimeout(5 * time.Second).SetAutoReconnect(false))
	if tok := noCert.Connect(); tok.WaitTimeout(10*time.Second) && tok.Error() == nil {
		noCert.Disconnect(0)
		t.Fatal("TLS client without a certificate was accepted")
	}

	// The gateway, by certificate only.
	box, err := gateway.OpenOutbox(filepath.Join(gwDir, "outbox.db"), 100_000)
	if err != nil {
		t.Fatal(err)
	}
	defer box.Close()
	opts := gateway.DefaultOptions()
	opts.Municipality, opts.Gateway, opts.Sensor = "lapa", id, sensor
	opts.SamplePeriod, opts.BatchRecords, opts.StatusInterval, opts.Version = 20*time.Millisecond, 5, time.Second, "test"
	meter := &gatewaytest.Meter{Start: time.Now().Add(-time.Hour).Truncate(time.Second)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- mqttconn.RunNode(ctx, mqttconn.NodeOptions{Gateway: opts, Meter: meter, Outbox: box, Key: key,
			Sync: gateway.FixedSync(wire.Clock{Synced: true, Source: "ntp"}), Log: slog.New(slog.DiscardHandler),
			MQTT: mqttconn.Options{Broker: a.MQTTTLS, TLS: pki.ClientTLS(id), ConnectTimeout: 5 * time.Second,
				ConnectRetryInterval: 200 * time.Millisecond, MaxReconnectInterval: time.Second}})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("gateway: %v", err)
		}
	}()
	if !gatewaytest.WaitFor(30*time.Second, func() bool { return box.Acked() >= 10 }) {
		t.Fatalf("gateway over TLS: acked %d of %d batches", box.Acked(), box.LastSeq())
	}

	// Another gateway's certificate, publishing as this gateway with a batch
	// signed by this gateway's own key (a stolen key without the matching
	// certificate). It is logged in as lapa-tls-02, so the ACL drops it.
	imp := paho.NewClient(paho.NewClientOptions().AddBroker(a.MQTTTLS).SetClientID(other).SetTLSConfig(pki.ClientTLS(other)).
		SetConnectTimeout(5 * time.Second).SetAutoReconnect(false))
	if tok := imp.Connect(); tok.WaitTimeout(10*time.Second) && tok.Error() != nil {
		t.Fatalf("%s with its own certificate: %v", other, tok.Error())
	}
	const forgedSeq = 900_000
	forged, err := wire.Seal(&wire.Batch{V: wire.Version, Kind: wire.KindLevels, Municipality: "lapa", Gateway: id, Sensor: sensor,
		Seq: forgedSeq, SentAt: time.Now().UTC(), Device: wire.Device{Model: "m", Serial: "s", Grade: "screening"},
		Records: []wire.Record{{T: time.Now().Add(-time.Minute).UTC().Truncate(time.Second), DurMs: 1000, LAeq: 99, LAFmax: 99, LAFmin: 99}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	imp.Publish(wire.LevelsTopic("lapa", id, sensor), 1, false, forged).WaitTimeout(5 * time.Second)
	// The broker answers a denied publish from an MQTT 3.1.1 client by
	// closing the connection.
	if !gatewaytest.WaitFor(10*time.Second, func() bool { return !imp.IsConnectionOpen() }) {
		t.Errorf("%s's connection stayed open after publishing as %s", other, id)
	}
	imp.Disconnect(100)
	// Barrier: a status lapa-tls-02 may publish, on a new connection; once
	// it is stored, the forged batch has long been judged.
	imp = paho.NewClient(paho.NewClientOptions().AddBroker(a.MQTTTLS).SetClientID(other).SetTLSConfig(pki.ClientTLS(other)).
		SetConnectTimeout(5 * time.Second).SetAutoReconnect(false))
	if tok := imp.Connect(); tok.WaitTimeout(10*time.Second) && tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	imp.Publish(wire.StatusTopic("lapa", other), 1, true, []byte(`{"v":1,"state":"online"}`)).WaitTimeout(5 * time.Second)
	var gws struct {
		Gateways []store.GatewayStatus `json:"gateways"`
	}
	base := "http://" + a.HTTP + "/api/v1"
	byID := func() map[string]store.GatewayStatus {
		getJSON(t, base+"/gateways", &gws)
		m := map[string]store.GatewayStatus{}
		for _, g := range gws.Gateways {
			m[g.Gateway] = g
		}
		return m
	}
	acked := box.Acked()
	if !gatewaytest.WaitFor(20*time.Second, func() bool { return byID()[other].State == "online" && box.Acked() >= acked+5 }) {
		t.Fatalf("barrier not seen: %+v", byID()[other])
	}
	imp.Disconnect(100)
	g := byID()[id]
	if g.LastSeq >= forgedSeq || g.PendingAbove != 0 {
		t.Fatalf("the forged batch from %s's certificate was stored: %+v", other, g)
	}
	if g.Watermark < 15 || g.Clock == nil || !g.Clock.Synced {
		t.Errorf("gateway status after TLS ingest: %+v", g)
	}
}

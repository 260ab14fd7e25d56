package central

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sossego/sossego/internal/calibration"
	"github.com/sossego/sossego/internal/registry"
)

// TestEvidenceMetersFromCalibrationRegister: the evidence package takes the
// meter from the calibration register once it holds a certificate of the
// sensor — number, laboratory, dates, uncertainty, the register's verdict —
// and from the register of sensors (ok false) before that; the signed field
// checks travel either way.
func TestEvidenceMetersFromCalibrationRegister(t *testing.T) {
	ctx := context.Background()
	reg, err := registry.Parse(registry.DemoYAML())
	if err != nil {
		t.Fatal(err)
	}
	live := registry.NewLive(reg)
	cal, err := openCalibration(ctx, t.TempDir(), live, prometheus.NewRegistry(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer cal.Close()
	m := EvidenceMeters{Register: cal, Registry: live.Current}
	now := time.Now()
	if _, ok, err := m.Meter(ctx, "lapa-bar-01", now); err != nil || ok {
		t.Fatalf("before any certificate: ok %v, %v; want false (the register of sensors answers)", ok, err)
	}
	if last, signed, err := m.FieldChecks(ctx, "lapa-bar-01", now); err != nil || last != nil || len(signed) != 0 {
		t.Fatalf("before any check: %+v %v %v, want none", last, signed, err)
	}
	// The field checks before and after the instant travel with their
	// signed bytes, whether or not the register holds a certificate.
	for i, d := range []time.Duration{-2 * time.Hour, 3 * time.Hour} {
		k := calibration.FieldCheck{Sensor: "lapa-bar-01", Gateway: "lapa-centro-01", Municipality: "lapa", Seq: uint64(70 + i), At: now.Add(d),
			ReferenceDB: 94, MeasuredDB: 94.1, FrequencyHz: 1000, CalibratorModel: "CAL200", CalibratorSerial: "C-1", Verified: true, ReceivedAt: now.Add(d)}
		if _, err := cal.RecordCheck(ctx, k, []byte(`{"kind":"check"}`), []byte("assinatura")); err != nil {
			t.Fatal(err)
		}
	}
	last, signed, err := m.FieldChecks(ctx, "lapa-bar-01", now)
	if err != nil || last == nil || !last.At.Equal(now.Add(-2*time.Hour).Truncate(time.Millisecond)) || last.MeasuredDB != 94.1 || len(signed) != 2 {
		t.Fatalf("checks without a certificate: %+v %d %v", last, len(signed), err)
	}
	if _, ok, err := m.Meter(ctx, "lapa-bar-01", now); err != nil || ok {
		t.Fatalf("checks but no certificate: ok %v, %v; want false (the register of sensors answers)", ok, err)
	}
	if _, err := cal.Add(ctx, calibration.Certificate{Sensor: "lapa-bar-01", Number: "RBC-7/2026", Laboratory: "Laboratório Exemplo",
		MeterModel: "NSRT_mk4", MeterSerial: "NSRT-0001", CalibratedOn: now.AddDate(0, -1, 0).Format(time.DateOnly),
		Expires: now.AddDate(1, 0, 0).Format(time.DateOnly), UncertaintyDB: 0.4}, nil, "ana"); err != nil {
		t.Fatal(err)
	}
	got, ok, err := m.Meter(ctx, "lapa-bar-01", now)
	if err != nil || !ok {
		t.Fatalf("with a certificate: ok %v, %v", ok, err)
	}
	if len(got.Checks) != 2 || got.Checks[0].Seq != 70 || got.Checks[1].Seq != 71 || string(got.Checks[1].Body) != `{"kind":"check"}` ||
		string(got.Checks[0].Sig) != "assinatura" || !got.Checks[0].VerifiedAtIngest || got.Checks[0].Gateway != "lapa-centro-01" {
		t.Errorf("signed checks = %+v", got.Checks)
	}
	c := got.Calibration
	if c == nil || c.Certificate != "RBC-7/2026" || c.Laboratory != "Laboratório Exemplo" || c.UncertaintyDB == nil || *c.UncertaintyDB != 0.4 ||
		got.Serial != "NSRT-0001" || got.Grade != "class2" || got.Indicative || got.FieldCheck == nil || *got.FieldCheck != *last {
		t.Errorf("meter = %+v, calibration %+v", got, c)
	}
	// A reading after the expiry: indicativas, with the register's reason.
	late, _, err := m.Meter(ctx, "lapa-bar-01", now.AddDate(2, 0, 0))
	if err != nil || !late.Indicative || late.IndicativeWhy == "" {
		t.Errorf("after the expiry: %+v %v, want indicativas with why", late, err)
	}
	// A screening meter with a certificate in force: indicativas, by the
	// rule the workflow applies.
	if _, err := cal.Add(ctx, calibration.Certificate{Sensor: "lapa-hospital-01", Number: "RBC-8/2026", Laboratory: "Laboratório Exemplo",
		MeterModel: "PCBA-DBM", MeterSerial: "P-1", CalibratedOn: now.AddDate(0, -1, 0).Format(time.DateOnly),
		Expires: now.AddDate(1, 0, 0).Format(time.DateOnly), UncertaintyDB: 0.4}, nil, "ana"); err != nil {
		t.Fatal(err)
	}
	scr, ok, err := m.Meter(ctx, "lapa-hospital-01", now)
	if err != nil || !ok || !scr.Indicative || !strings.Contains(scr.IndicativeWhy, "medidor de triagem (não é classe 1 ou 2") ||
		scr.Grade != "screening" || scr.Calibration == nil {
		t.Errorf("certified screening meter: ok %v %v, %+v; want indicativas with the certificate", ok, err, scr)
	}
}

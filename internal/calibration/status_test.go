package calibration

import (
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/internal/tz"
)

// at is a Brasília wall-clock instant.
func at(s string) time.Time {
	t, err := time.ParseInLocation("2006-01-02 15:04", s, tz.Brasilia())
	if err != nil {
		panic(err)
	}
	return t
}

func cert(id int64, number, on, expires, serial string) Certificate {
	return Certificate{ID: id, Sensor: "m1", Number: number, Laboratory: "Lab Acústica RBC", MeterModel: "NTi XL2",
		MeterSerial: serial, CalibratedOn: on, Expires: expires, UncertaintyDB: 0.3}
}

func check(id int64, when string, ref, measured float64) FieldCheck {
	return FieldCheck{ID: id, Sensor: "m1", At: at(when), ReferenceDB: ref, MeasuredDB: measured, FrequencyHz: 1000,
		CalibratorModel: "B&K 4231", CalibratorSerial: "c-1"}
}

func TestEvaluate(t *testing.T) {
	c2026 := cert(1, "RBC-001/2026", "2026-01-10", "2027-01-10", "A2A-1")
	okCheck := []FieldCheck{check(1, "2026-06-01 10:00", 94, 94.1)}
	tests := []struct {
		name     string
		f        Facts
		at       string
		ok       bool
		reasons  []string // parts, in order
		warnings []string
		check    func(t *testing.T, v Verdict)
	}{
		{name: "no certificate", f: Facts{Checks: okCheck}, at: "2026-06-10 12:00",
			reasons: []string{"nenhum certificado de calibração cadastrado"}},
		{name: "in force, checked", f: Facts{Certificates: []Certificate{c2026}, Checks: okCheck}, at: "2026-06-10 12:00", ok: true},
		{name: "before the first calibration", f: Facts{Certificates: []Certificate{c2026}, Checks: okCheck}, at: "2026-01-09 23:59",
			reasons: []string{"nenhum certificado de calibração cobre esta data (o primeiro cadastrado é de 10/01/2026)"}},
		{name: "calibration day counts from its start", f: Facts{Certificates: []Certificate{c2026}}, at: "2026-01-10 00:00", ok: true,
			warnings: []string{"nenhuma verificação de campo"}},
		{name: "expiry day still valid", f: Facts{Certificates: []Certificate{c2026}, Checks: []FieldCheck{check(1, "2027-01-01 10:00", 94, 94)}},
			at: "2027-01-10 23:59", ok: true, warnings: []string{"vence hoje, 10/01/2027"},
			check: func(t *testing.T, v Verdict) {
				if !v.Expiring || v.Expired || v.DaysLeft != 0 {
					t.Fatalf("expiring %v expired %v days %d", v.Expiring, v.Expired, v.DaysLeft)
				}
			}},
		{name: "expired the next day", f: Facts{Certificates: []Certificate{c2026}, Checks: []FieldCheck{check(1, "2027-01-01 10:00", 94, 94)}},
			at: "2027-01-11 00:00", reasons: []string{"o certificado de calibração nº RBC-001/2026 venceu em 10/01/2027"},
			check: func(t *testing.T, v Verdict) {
				if !v.Expired || v.Expiring {
					t.Fatalf("expired %v expiring %v", v.Expired, v.Expiring)
				}
			}},
		{name: "30 days ahead is expiring", f: Facts{Certificates: []Certificate{c2026}, Checks: []FieldCheck{check(1, "2026-12-11 10:00", 94, 94)}},
			at: "2026-12-12 00:00", ok: true, warnings: []string{"vence em 10/01/2027 (29 dias)"}},
		{name: "the day before", f: Facts{Certificates: []Certificate{c2026}, Checks: []FieldCheck{check(1, "2027-01-01 10:00", 94, 94)}},
			at: "2027-01-09 08:00", ok: true, warnings: []string{"vence amanhã, 10/01/2027"}},
		{name: "31 days ahead is not", f: Facts{Certificates: []Certificate{c2026}, Checks: []FieldCheck{check(1, "2026-12-10 10:00", 94, 94)}},
			at: "2026-12-10 23:59", ok: true},
		{name: "a new calibration takes over", f: Facts{Certificates: []Certificate{c2026,
			cert(2, "RBC-002/2027", "2027-01-05", "2028-01-05", "A2A-1")}, Checks: []FieldCheck{check(1, "2027-01-06 10:00", 94, 94)}},
			at: "2027-02-01 00:00", ok: true,
			check: func(t *testing.T, v Verdict) {
				if v.Certificate.Number != "RBC-002/2027" {
					t.Fatalf("in force: %s", v.Certificate.Number)
				}
			}},
		{name: "the old one still answers for its time", f: Facts{Certificates: []Certificate{c2026,
			cert(2, "RBC-002/2027", "2027-01-05", "2028-01-05", "A2A-1")}, Checks: okCheck},
			at: "2026-06-10 12:00", ok: true,
			check: func(t *testing.T, v Verdict) {
				if v.Certificate.Number != "RBC-001/2026" {
					t.Fatalf("in force: %s", v.Certificate.Number)
				}
			}},
		{name: "a correction supersedes the revision it corrects", f: Facts{Certificates: []Certificate{
			cert(3, "RBC-001/2026", "2026-01-10", "2026-02-10", "A2A-1"), {ID: 4, Replaces: 3, Sensor: "m1", Number: "RBC-001/2026",
				Laboratory: "x", MeterModel: "NTi XL2", MeterSerial: "A2A-1", CalibratedOn: "2026-01-10", Expires: "2027-01-10", UncertaintyDB: 0.3}},
			Checks: okCheck}, at: "2026-06-10 12:00", ok: true},
		{name: "serial differs", f: Facts{Certificates: []Certificate{c2026}, Checks: okCheck,
			Sightings: []Sighting{{Sensor: "m1", Model: "NTi XL2", Serial: "A2A-9", At: at("2026-05-01 00:00")}}},
			at: "2026-06-10 12:00", reasons: []string{`os lotes assinados informam o número de série "A2A-9", diferente do "A2A-1" do certificado nº RBC-001/2026`},
			check: func(t *testing.T, v Verdict) {
				if !v.Mismatch || v.Device.Serial != "A2A-9" {
					t.Fatalf("mismatch %v device %+v", v.Mismatch, v.Device)
				}
			}},
		{name: "model differs", f: Facts{Certificates: []Certificate{c2026}, Checks: okCheck,
			Sightings: []Sighting{{Sensor: "m1", Model: "PCB Artists", Serial: "A2A-1", At: at("2026-05-01 00:00")}}},
			at: "2026-06-10 12:00", reasons: []string{`informam o modelo "PCB Artists", diferente do "NTi XL2"`}},
		{name: "model compared without case", f: Facts{Certificates: []Certificate{c2026}, Checks: okCheck,
			Sightings: []Sighting{{Sensor: "m1", Model: "nti xl2", Serial: "A2A-1", At: at("2026-05-01 00:00")}}},
			at: "2026-06-10 12:00", ok: true},
		{name: "the meter was swapped back before", f: Facts{Certificates: []Certificate{c2026}, Checks: okCheck,
			Sightings: []Sighting{{Sensor: "m1", Model: "NTi XL2", Serial: "A2A-9", At: at("2026-05-01 00:00")},
				{Sensor: "m1", Model: "NTi XL2", Serial: "A2A-1", At: at("2026-06-01 00:00")}}},
			at: "2026-06-10 12:00", ok: true},
		{name: "a later swap does not touch earlier readings", f: Facts{Certificates: []Certificate{c2026}, Checks: okCheck,
			Sightings: []Sighting{{Sensor: "m1", Model: "NTi XL2", Serial: "A2A-9", At: at("2026-07-01 00:00")}}},
			at: "2026-06-10 12:00", ok: true},
		{name: "expired and swapped: both reasons", f: Facts{Certificates: []Certificate{c2026},
			Sightings: []Sighting{{Sensor: "m1", Model: "NTi XL2", Serial: "Z", At: at("2026-05-01 00:00")}}},
			at: "2027-03-01 00:00", reasons: []string{"venceu em 10/01/2027", `número de série "Z"`}},
		{name: "check older than the default policy", f: Facts{Certificates: []Certificate{c2026}, Checks: okCheck},
			at: "2026-07-02 10:01", ok: true,
			warnings: []string{"a última verificação de campo foi em 01/06/2026, há 31 dias (a política do município pede uma a cada 30 dias)"},
			check: func(t *testing.T, v Verdict) {
				if !v.CheckStale {
					t.Fatal("not flagged")
				}
			}},
		{name: "check within a longer policy", f: Facts{Certificates: []Certificate{c2026}, Checks: okCheck, CheckMaxAge: 60 * 24 * time.Hour},
			at: "2026-07-02 10:01", ok: true},
		{name: "check after the instant does not count", f: Facts{Certificates: []Certificate{c2026}, Checks: okCheck},
			at: "2026-05-31 10:00", ok: true, warnings: []string{"nenhuma verificação de campo"}},
		{name: "drift beyond half a decibel", f: Facts{Certificates: []Certificate{c2026}, Checks: []FieldCheck{check(1, "2026-06-01 10:00", 114, 113.3)}},
			at: "2026-06-10 12:00", ok: true, warnings: []string{"mediu 113,30 dB para 114,00 dB do calibrador: desvio de -0,70 dB, acima de ±0,50 dB"},
			check: func(t *testing.T, v Verdict) {
				if !v.DriftHigh || v.LastCheck.Drift() != -0.7 {
					t.Fatalf("drift %v %v", v.DriftHigh, v.LastCheck.Drift())
				}
			}},
		{name: "latest check wins", f: Facts{Certificates: []Certificate{c2026}, Checks: []FieldCheck{
			check(1, "2026-06-01 10:00", 94, 93), check(2, "2026-06-05 10:00", 94, 94.05)}},
			at: "2026-06-10 12:00", ok: true,
			check: func(t *testing.T, v Verdict) {
				if v.LastCheck.ID != 2 || v.DriftHigh {
					t.Fatalf("last %d drift high %v", v.LastCheck.ID, v.DriftHigh)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := Evaluate(tc.f, at(tc.at))
			if v.OK != tc.ok {
				t.Fatalf("ok = %v, want %v (reasons %q)", v.OK, tc.ok, v.Reasons)
			}
			if tc.ok {
				if v.Why() != "" || len(v.Reasons) != 0 {
					t.Fatalf("ok with reasons %q", v.Reasons)
				}
			} else if !strings.HasPrefix(v.Why(), "leituras indicativas: ") {
				t.Fatalf("why %q", v.Why())
			}
			if len(v.Reasons) != len(tc.reasons) {
				t.Fatalf("reasons %q, want %d like %q", v.Reasons, len(tc.reasons), tc.reasons)
			}
			for i, want := range tc.reasons {
				if !strings.Contains(v.Reasons[i], want) {
					t.Errorf("reason %d = %q, want it to contain %q", i, v.Reasons[i], want)
				}
			}
			all := strings.Join(v.Warnings, " | ")
			for _, want := range tc.warnings {
				if !strings.Contains(all, want) {
					t.Errorf("warnings %q, want one containing %q", v.Warnings, want)
				}
			}
			if len(tc.warnings) == 0 && len(v.Warnings) != 0 && tc.ok {
				t.Errorf("unexpected warnings %q", v.Warnings)
			}
			if tc.check != nil {
				tc.check(t, v)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	now := at("2026-06-10 12:00")
	good := cert(0, "RBC-001/2026", "2026-01-10", "2027-01-10", "A2A-1")
	pdf := []byte("%PDF-1.7\n...")
	tests := []struct {
		name string
		edit func(c *Certificate)
		file []byte
		want []string // problems, in order; none: valid
	}{
		{name: "valid", edit: func(c *Certificate) {}},
		{name: "valid with a PDF", edit: func(c *Certificate) { c.FileName = "cert.pdf" }, file: pdf},
		{name: "missing number", edit: func(c *Certificate) { c.Number = " " }, want: []string{"informe o número do certificado"}},
		{name: "missing laboratory and serial", edit: func(c *Certificate) { c.Laboratory, c.MeterSerial = "", "" },
			want: []string{"informe o laboratório", "informe o número de série do medidor"}},
		{name: "expiry before date", edit: func(c *Certificate) { c.Expires = "2025-12-31" },
			want: []string{"a validade (31/12/2025) precisa ser posterior à data de calibração (10/01/2026)"}},
		{name: "expiry on the date", edit: func(c *Certificate) { c.Expires = c.CalibratedOn }, want: []string{"precisa ser posterior"}},
		{name: "bad date", edit: func(c *Certificate) { c.CalibratedOn = "10/01/2026" }, want: []string{`data de calibração "10/01/2026" inválida: use AAAA-MM-DD`}},
		{name: "no dates", edit: func(c *Certificate) { c.CalibratedOn, c.Expires = "", "" },
			want: []string{"informe a data de calibração", "informe a validade"}},
		{name: "calibrated in the future", edit: func(c *Certificate) { c.CalibratedOn, c.Expires = "2026-06-11", "2027-06-11" },
			want: []string{"a data de calibração 11/06/2026 está no futuro"}},
		{name: "no uncertainty", edit: func(c *Certificate) { c.UncertaintyDB = 0 }, want: []string{"informe a incerteza expandida"}},
		{name: "uncertainty too large", edit: func(c *Certificate) { c.UncertaintyDB = 7 }, want: []string{"incerteza de 7,00 dB acima de 5,00 dB"}},
		{name: "bad sensor", edit: func(c *Certificate) { c.Sensor = "M 1" }, want: []string{`sensor "M 1" inválido`}},
		{name: "long text", edit: func(c *Certificate) { c.Laboratory = strings.Repeat("l", MaxTextLen+1) }, want: []string{"o laboratório tem 201 bytes"}},
		{name: "not a PDF", edit: func(c *Certificate) { c.FileName = "cert.png" }, file: []byte("\x89PNG"), want: []string{"não é um PDF"}},
		{name: "empty file", edit: func(c *Certificate) { c.FileName = "c.pdf" }, file: []byte{}, want: []string{"está vazio"}},
		{name: "file without a name", edit: func(c *Certificate) {}, file: pdf, want: []string{"informe o nome do arquivo"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.edit(&c)
			err := Validate(c, tc.file, now)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				return
			}
			ve, ok := err.(*ValidationError)
			if !ok {
				t.Fatalf("got %v, want a ValidationError", err)
			}
			if len(ve.Problems) != len(tc.want) {
				t.Fatalf("problems %q, want %q", ve.Problems, tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(ve.Problems[i], w) {
					t.Errorf("problem %d = %q, want %q", i, ve.Problems[i], w)
				}
			}
		})
	}
}

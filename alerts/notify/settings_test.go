package notify

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

func TestOnDuty(t *testing.T) {
	all := []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
	m := Municipality{ID: "lapa", Coordinator: "coord", Weekly: []Shift{
		{Days: all, From: "07:00", To: "19:00", User: "fiscal-a"},
		{Days: []string{"mon", "tue", "wed", "thu", "fri"}, From: "19:00", To: "07:00", User: "fiscal-b"},
		{Days: []string{"sat", "sun"}, From: "19:00", To: "07:00", User: "fiscal-c"},
	}, Overrides: []Override{
		{Date: "2026-12-24", User: "fiscal-c", Reason: "véspera de Natal"},
		{Date: "2026-12-25", From: "08:00", To: "12:00", User: "fiscal-b"},
	}}
	local := func(s string) time.Time {
		tm, err := time.ParseInLocation("2006-01-02 15:04", s, saoPaulo)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	tests := []struct {
		at        string
		users     []string
		override  bool
		until     string
		next      string
		nextAfter []string // NextOnDuty excluding these
		want      string
	}{
		{at: "2026-11-24 10:00", users: []string{"fiscal-a"}, until: "2026-11-24 19:00", next: "fiscal-b"},
		{at: "2026-11-24 22:00", users: []string{"fiscal-b"}, until: "2026-11-25 07:00", next: "fiscal-a"},
		// the night shift that started on Friday ends Saturday 07:00
		{at: "2026-11-28 03:00", users: []string{"fiscal-b"}, until: "2026-11-28 07:00", next: "fiscal-a"},
		{at: "2026-11-28 20:00", users: []string{"fiscal-c"}, until: "2026-11-29 07:00", next: "fiscal-a"},
		// the whole-day exception replaces both shifts
		{at: "2026-12-24 10:00", users: []string{"fiscal-c"}, override: true, until: "2026-12-25 00:00", next: "fiscal-b"},
		// the night shift of the 24th was replaced until midnight, not after
		{at: "2026-12-25 03:00", users: []string{"fiscal-b"}, until: "2026-12-25 07:00", next: "fiscal-a"},
		{at: "2026-12-25 09:00", users: []string{"fiscal-b"}, override: true, until: "2026-12-25 12:00", next: "fiscal-a"},
		{at: "2026-11-24 10:00", nextAfter: []string{"fiscal-a", "fiscal-b"}, want: "fiscal-c"},
		{at: "2026-11-24 10:00", nextAfter: []string{"fiscal-a", "fiscal-b", "fiscal-c"}, want: ""},
	}
	always := Municipality{ID: "x", Weekly: []Shift{{Days: all, From: "00:00", To: "24:00", User: "fiscal-a"}}}
	if d := OnDuty(always, saoPaulo, local("2026-11-24 10:00")); !d.Until.IsZero() || d.Next != "" || len(d.Users) != 1 {
		t.Errorf("always on duty: %+v", d)
	}
	for _, tc := range tests {
		now := local(tc.at)
		if tc.nextAfter != nil {
			if got := NextOnDuty(m, saoPaulo, now, tc.nextAfter); got != tc.want {
				t.Errorf("%s: NextOnDuty excluding %v = %q, want %q", tc.at, tc.nextAfter, got, tc.want)
			}
			continue
		}
		d := OnDuty(m, saoPaulo, now)
		if !slices.Equal(d.Users, tc.users) || d.Override != tc.override || !d.Until.Equal(local(tc.until)) || d.Next != tc.next {
			t.Errorf("%s: on duty %v override %v until %s next %q; want %v %v %s %q", tc.at, d.Users, d.Override,
				d.Until.In(saoPaulo).Format("2006-01-02 15:04"), d.Next, tc.users, tc.override, tc.until, tc.next)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Settings)
		want []string // substrings of the problems, in order
	}{
		{name: "valid", mod: func(*Settings) {}},
		{name: "invalid e-mail address", mod: func(s *Settings) { s.Contacts[0].Email = "fiscal-at-lapa" },
			want: []string{`contato fiscal-a: e-mail "fiscal-at-lapa" inválido`}},
		{name: "unknown user in a schedule", mod: func(s *Settings) { s.Municipalities[0].Weekly[0].User = "joao" },
			want: []string{`escala semanal linha 1: usuário "joao" desconhecido no painel`}},
		{name: "an operator in a schedule", mod: func(s *Settings) { s.Municipalities[0].Weekly[0].User = "oper" },
			want: []string{`"oper" tem o perfil operador; a escala é de fiscais`}},
		{name: "a disabled fiscal", mod: func(s *Settings) { s.Municipalities[0].Weekly[0].User = "old" },
			want: []string{`o fiscal "old" está desativado`}},
		{name: "overlapping overrides", mod: func(s *Settings) {
			s.Municipalities[0].Overrides = []Override{{Date: "2026-12-24", From: "08:00", To: "20:00", User: "fiscal-a"},
				{Date: "2026-12-24", From: "18:00", User: "fiscal-b"}}
		}, want: []string{"exceções sobrepostas em 2026-12-24: 08:00–20:00 e 18:00–24:00"}},
		{name: "adjacent overrides are fine", mod: func(s *Settings) {
			s.Municipalities[0].Overrides = []Override{{Date: "2026-12-24", To: "12:00", User: "fiscal-a"},
				{Date: "2026-12-24", From: "12:00", User: "fiscal-b"}}
		}},
		{name: "bad day, hour and date", mod: func(s *Settings) {
			s.Municipalities[0].Weekly[0].Days = []string{"seg"}
			s.Municipalities[0].Weekly[1].To = "25:00"
			s.Municipalities[0].Overrides = []Override{{Date: "24/12/2026", User: "fiscal-a"}}
		}, want: []string{`dia "seg" inválido`, `fim: horário "25:00" inválido`, `data "24/12/2026" inválida`}},
		{name: "unknown coordinator and zone", mod: func(s *Settings) {
			s.Municipalities[0].Coordinator = "chefe"
			s.Municipalities[0].Timezone = "Brasil/Lapa"
		}, want: []string{`coordenador "chefe" não é um usuário do painel`, `fuso horário "Brasil/Lapa" desconhecido`}},
		{name: "smtp without host and sender", mod: func(s *Settings) { s.Email = EmailSettings{Enabled: true} },
			want: []string{"informe o servidor SMTP", "informe o remetente"}},
		{name: "webhook with a bad url and a short secret", mod: func(s *Settings) {
			s.Webhooks = []Webhook{{Name: "whatsapp", URL: "ftp://x", Secret: "curta"}}
		}, want: []string{`endereço "ftp://x" inválido`, "pelo menos 16 caracteres"}},
		{name: "bad phone", mod: func(s *Settings) { s.Contacts[1].Phone = "41 99999-0000" },
			want: []string{`telefone "41 99999-0000" inválido`}},
		{name: "grouping interval too short", mod: func(s *Settings) {
			s.Grouping = DefaultGrouping
			s.Grouping.Level.Interval = Duration(time.Second)
		}, want: []string{"agrupamento nível: intervalo 1s fora de 10s–24h"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := testSettings()
			tc.mod(&s)
			_, err := Validate(s, testUsers, time.LoadLocation)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %v, want a ValidationError", err)
			}
			if len(ve.Problems) != len(tc.want) {
				t.Fatalf("problems %q, want %d", ve.Problems, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(ve.Problems[i], w) {
					t.Errorf("problem %d %q lacks %q", i, ve.Problems[i], w)
				}
			}
		})
	}
}

func TestRedactedAndKeepSecrets(t *testing.T) {
	s := testSettings()
	s.Email = EmailSettings{Enabled: true, Host: "smtp.lapa", Username: "u", Password: "segredo-smtp", From: "sossego@lapa.pr.gov.br"}
	s.Webhooks = []Webhook{{Name: "zap", URL: "https://zap.lapa/x", Secret: "segredo-do-webhook-123"}}
	r := s.Redacted()
	if r.Email.Password != "" || !r.Email.PasswordSet || r.Webhooks[0].Secret != "" || !r.Webhooks[0].SecretSet {
		t.Fatalf("redacted: %+v %+v", r.Email, r.Webhooks)
	}
	if s.Webhooks[0].Secret == "" {
		t.Fatal("Redacted changed the original")
	}
	r.KeepSecrets(s)
	if r.Email.Password != "segredo-smtp" || r.Webhooks[0].Secret != "segredo-do-webhook-123" {
		t.Fatalf("secrets not kept: %+v %+v", r.Email, r.Webhooks)
	}
}

func TestSettingsYAMLRoundTrip(t *testing.T) {
	s := testSettings()
	s.Normalize()
	b, err := yaml.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Settings
	if err := yaml.Unmarshal(b, &back); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if diff := cmp.Diff(s, back); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s", diff)
	}
}

func TestCheckSilence(t *testing.T) {
	now := t0
	ok := Silence{Sensor: "bar", Starts: now, Ends: now.Add(3 * time.Hour), Reason: "evento licenciado nº 12/2026"}
	tests := []struct {
		name string
		mod  func(*Silence)
		want string
	}{
		{"valid", func(*Silence) {}, ""},
		{"nothing to silence", func(s *Silence) { s.Sensor = "" }, "informe o sensor ou o estabelecimento"},
		{"both", func(s *Silence) { s.Establishment = "Bar" }, "não os dois"},
		{"no reason", func(s *Silence) { s.Reason = " " }, "informe o motivo"},
		{"end before start", func(s *Silence) { s.Ends = s.Starts.Add(-time.Minute) }, "depois do início"},
		{"in the past", func(s *Silence) { s.Starts, s.Ends = now.Add(-2*time.Hour), now.Add(-time.Hour) }, "já passou"},
		{"too long", func(s *Silence) { s.Ends = s.Starts.Add(40 * 24 * time.Hour) }, "máximo é de 31 dias"},
	}
	for _, tc := range tests {
		s := ok
		tc.mod(&s)
		err := CheckSilence(s, now)
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestParseClock(t *testing.T) {
	for in, want := range map[string]int{"00:00": 0, "07:30": 450, "24:00": 1440, "23:59": 1439} {
		if got, err := ParseClock(in); err != nil || got != want {
			t.Errorf("ParseClock(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "7:30", "24:01", "12:60", "ab:cd", "12-30", "99:00"} {
		if _, err := ParseClock(in); err == nil {
			t.Errorf("ParseClock(%q) accepted", in)
		}
	}
}

func FuzzParseClock(f *testing.F) {
	for _, s := range []string{"00:00", "24:00", "12:3x", "99:99"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseClock(s)
		if err == nil && (m < 0 || m > 1440) {
			t.Fatalf("ParseClock(%q) = %d out of range", s, m)
		}
	})
}

// FuzzSettingsYAML feeds arbitrary documents through the strict decoder
// and the validation: no panic, and what validates is normalised.
func FuzzSettingsYAML(f *testing.F) {
	b, _ := yaml.Marshal(testSettings())
	f.Add(string(b))
	f.Add("municipalities: [{id: lapa, weekly: [{days: [mon], from: '22:00', to: '07:00', user: fiscal-a}]}]")
	f.Add("email: {enabled: true, host: x, from: 'a@b.c', timeout: 5x}")
	zones := map[string]*time.Location{}
	load := func(name string) (*time.Location, error) { // cached: the fuzzer calls it thousands of times
		if l, ok := zones[name]; ok {
			return l, nil
		}
		l, err := time.LoadLocation(name)
		if err == nil {
			zones[name] = l
		}
		return l, err
	}
	f.Fuzz(func(t *testing.T, doc string) {
		s, err := ParseSettingsYAML([]byte(doc))
		if err != nil {
			return
		}
		pol, err := Validate(s, testUsers, load)
		if err != nil {
			return
		}
		for _, m := range pol.Settings.Municipalities {
			_ = OnDuty(m, pol.Locations[m.ID], t0)
		}
	})
}

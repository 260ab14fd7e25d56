package codes

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func builtinSet(t testing.TB) *Set {
	t.Helper()
	s, err := Builtin()
	if err != nil {
		t.Fatalf("Builtin: %v", err)
	}
	return s
}

type evalCase struct {
	name     string
	code     string
	at       string
	zone     string
	source   string
	laeq     *float64
	dur      *float64
	prior    int
	assume   bool
	facts    map[string]any
	want     string  // "true", "false", "undetermined"
	article  string  // main article; "" = don't check
	limit    float64 // -1 = want null, 0 = don't check
	penalty  string  // substring of penalty_step; "" = don't check
	inReason string  // substring of reason; "" = don't check
	warning  string  // substring of the joined warnings; "" = don't check
	noPen    string  // must not appear in penalty_step
	noWarn   bool    // no warning at all
}

func f(x float64) *float64 { return &x }

func runCases(t *testing.T, cases []evalCase) {
	t.Helper()
	s := builtinSet(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := map[string]any{"id": tc.name, "code": tc.code, "at": tc.at, "zone": tc.zone, "source": tc.source,
				"prior_infractions": tc.prior, "assume_in_force": tc.assume}
			if tc.laeq != nil {
				req["laeq_dba"] = *tc.laeq
			}
			if tc.dur != nil {
				req["duration_s"] = *tc.dur
			}
			if tc.facts != nil {
				req["facts"] = tc.facts
			}
			line, _ := json.Marshal(req)
			r := s.EvalLine(line)
			if r.Error != "" {
				t.Fatalf("error: %s", r.Error)
			}
			got := ""
			switch v := r.Violation.(type) {
			case bool:
				got = map[bool]string{true: "true", false: "false"}[v]
			case string:
				got = v
			}
			if got != tc.want {
				t.Errorf("violation = %s, want %s (reason: %s)", got, tc.want, r.Reason)
			}
			if tc.article != "" && (r.Article == nil || *r.Article != tc.article) {
				a := "<nil>"
				if r.Article != nil {
					a = *r.Article
				}
				t.Errorf("article = %s, want %s (reason: %s)", a, tc.article, r.Reason)
			}
			switch {
			case tc.limit == -1 && r.LimitDBA != nil:
				t.Errorf("limit_dba = %v, want null", *r.LimitDBA)
			case tc.limit > 0 && (r.LimitDBA == nil || *r.LimitDBA != tc.limit):
				t.Errorf("limit_dba = %v, want %v", r.LimitDBA, tc.limit)
			}
			if tc.want == "true" && (r.PenaltyStep == nil || *r.PenaltyStep == "") {
				t.Errorf("violation without penalty_step")
			}
			if tc.want != "true" && r.PenaltyStep != nil {
				t.Errorf("penalty_step %q on a non-violation", *r.PenaltyStep)
			}
			if tc.penalty != "" && (r.PenaltyStep == nil || !strings.Contains(*r.PenaltyStep, tc.penalty)) {
				t.Errorf("penalty_step = %v, want it to contain %q", r.PenaltyStep, tc.penalty)
			}
			if tc.inReason != "" && !strings.Contains(r.Reason, tc.inReason) {
				t.Errorf("reason %q does not contain %q", r.Reason, tc.inReason)
			}
			if tc.want == "undetermined" && r.Reason == "" {
				t.Errorf("undetermined without a reason")
			}
			warns := strings.Join(r.Warnings, " | ")
			if tc.warning != "" && !strings.Contains(warns, tc.warning) {
				t.Errorf("warnings %q lack %q", warns, tc.warning)
			}
			if tc.noWarn && len(r.Warnings) > 0 {
				t.Errorf("unexpected warnings %q", warns)
			}
			if tc.noPen != "" && r.PenaltyStep != nil && strings.Contains(*r.PenaltyStep, tc.noPen) {
				t.Errorf("penalty_step %q must not contain %q", *r.PenaltyStep, tc.noPen)
			}
		})
	}
}

var bar = map[string]any{"establishment_type": "bar", "mechanism": "sound_system"}

func TestLapa(t *testing.T) {
	runCases(t, []evalCase{
		// Art. 96 boundaries: 21:59 day, 22:00 night, 06:59 night, 07:00 day; equal complies.
		{name: "day 21:59 at 65 complies", code: "lapa", at: "2026-03-10T21:59:00-03:00", zone: "other", source: "amplified_music", laeq: f(65), facts: bar, want: "false", article: "Art. 96", limit: 65},
		{name: "day 21:59 at 65.1 violates", code: "lapa", at: "2026-03-10T21:59:00-03:00", zone: "other", source: "amplified_music", laeq: f(65.1), facts: bar, want: "true", article: "Art. 96", limit: 65, penalty: "1ª infração: Notificação Preliminar"},
		{name: "night 22:00 at 65 violates", code: "lapa", at: "2026-03-10T22:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(65), facts: bar, want: "true", article: "Art. 96", limit: 60},
		{name: "night 22:00 at 60 complies", code: "lapa", at: "2026-03-10T22:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(60), facts: bar, want: "false", limit: 60},
		{name: "night 06:59 at 61 violates", code: "lapa", at: "2026-03-11T06:59:00-03:00", zone: "other", source: "amplified_music", laeq: f(61), facts: bar, want: "true", limit: 60},
		{name: "day 07:00 at 61 complies", code: "lapa", at: "2026-03-11T07:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(61), facts: bar, want: "false", limit: 65},
		{name: "UTC instant converted to Sao Paulo", code: "lapa", at: "2026-03-11T01:30:00Z", zone: "other", source: "amplified_music", laeq: f(62), facts: bar, want: "true", limit: 60},
		{name: "hospital night 40", code: "lapa", at: "2026-03-10T23:00:00-03:00", zone: "hospital_surroundings", source: "live_music", laeq: f(40.5), facts: map[string]any{"establishment_type": "church_or_temple"}, want: "true", limit: 40},
		{name: "hospital day 45 equal complies", code: "lapa", at: "2026-03-10T10:00:00-03:00", zone: "hospital_surroundings", source: "amplified_worship", laeq: f(45), facts: map[string]any{"establishment_type": "church_or_temple"}, want: "false", limit: 45},
		{name: "residential zone counts as other areas", code: "lapa", at: "2026-03-10T23:00:00-03:00", zone: "residential", source: "amplified_music", laeq: f(61), facts: bar, want: "true", limit: 60},
		{name: "unclassified zone between the candidate limits undetermined", code: "lapa", at: "2026-03-10T23:00:00-03:00", zone: "unclassified", source: "amplified_music", laeq: f(52), facts: bar, want: "undetermined", limit: -1, inReason: "zona não classificada"},
		{name: "unclassified zone above every candidate limit violates", code: "lapa", at: "2026-03-10T23:00:00-03:00", zone: "unclassified", source: "amplified_music", laeq: f(61), facts: bar, want: "true", article: "Art. 96", limit: -1, inReason: "excede todos"},
		{name: "missing establishment undetermined", code: "lapa", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(70), want: "undetermined", limit: 60, inReason: "establishment_type"},
		{name: "residence party has no number", code: "lapa", at: "2026-03-10T23:00:00-03:00", zone: "residential", source: "amplified_music", laeq: f(80), facts: map[string]any{"establishment_type": "residence"}, want: "undetermined", article: "Art. 133", limit: -1},
		{name: "construction has no number", code: "lapa", at: "2026-03-10T10:00:00-03:00", zone: "other", source: "construction_work", laeq: f(90), want: "undetermined", article: "Art. 133", limit: -1},
		{name: "public utility event exempt", code: "lapa", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(80), facts: map[string]any{"establishment_type": "public_event", "public_utility_event": true}, want: "false", article: "Art. 96"},
		// Penalty ladder (Art. 102): ordinal counting, no doubling, capped at the 4th.
		{name: "2nd infraction 25% VRM", code: "lapa", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(70), prior: 1, facts: bar, want: "true", penalty: "2ª infração: multa de 25% do VRM (Art. 102, II)"},
		{name: "3rd infraction 50% VRM", code: "lapa", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(70), prior: 2, facts: bar, want: "true", penalty: "50% do VRM"},
		{name: "5th infraction stays at judicial measures", code: "lapa", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(70), prior: 4, facts: bar, want: "true", penalty: "medidas judiciais"},
		// Art. 97: loudspeaker 10:00–17:00, licence.
		{name: "loudspeaker 09:59 outside window", code: "lapa", at: "2026-03-10T09:59:00-03:00", zone: "other", source: "loudspeaker_advertising", facts: map[string]any{"licensed": true, "content": "political"}, want: "true", article: "Art. 97, parágrafo único"},
		{name: "loudspeaker 10:00 allowed", code: "lapa", at: "2026-03-10T10:00:00-03:00", zone: "other", source: "loudspeaker_advertising", facts: map[string]any{"licensed": true, "content": "political"}, want: "false"},
		{name: "loudspeaker 16:59 allowed", code: "lapa", at: "2026-03-14T16:59:00-03:00", zone: "other", source: "loudspeaker_advertising", facts: map[string]any{"licensed": true, "content": "political"}, want: "false"},
		{name: "loudspeaker 17:00 outside", code: "lapa", at: "2026-03-10T17:00:00-03:00", zone: "other", source: "loudspeaker_advertising", facts: map[string]any{"licensed": true, "content": "political"}, want: "true"},
		{name: "loudspeaker without licence", code: "lapa", at: "2026-03-10T11:00:00-03:00", zone: "other", source: "loudspeaker_advertising", facts: map[string]any{"licensed": false, "content": "political"}, want: "true", article: "Art. 97"},
		{name: "loudspeaker licence unknown", code: "lapa", at: "2026-03-10T11:00:00-03:00", zone: "other", source: "loudspeaker_advertising", facts: map[string]any{"content": "political"}, want: "undetermined", inReason: "facts.licensed"},
		{name: "commercial ad in historic centre", code: "lapa", at: "2026-03-10T11:00:00-03:00", zone: "centro_historico", source: "loudspeaker_advertising", facts: map[string]any{"licensed": true, "content": "commercial"}, want: "true", article: "Art. 98"},
		{name: "commercial ad 80 m from hospital", code: "lapa", at: "2026-03-10T11:00:00-03:00", zone: "other", source: "loudspeaker_advertising", facts: map[string]any{"licensed": true, "content": "commercial", "distance_m_to_sensitive_poi": 80.0, "poi_type": "hospital"}, want: "true", article: "Art. 98"},
		{name: "commercial ad 80 m from a place of unstated type", code: "lapa", at: "2026-03-10T11:00:00-03:00", zone: "other", source: "loudspeaker_advertising", facts: map[string]any{"licensed": true, "content": "commercial", "distance_m_to_sensitive_poi": 80.0}, want: "undetermined", article: "Art. 98", inReason: "poi_type"},
		{name: "commercial ad 100 m away allowed", code: "lapa", at: "2026-03-10T11:00:00-03:00", zone: "other", source: "loudspeaker_advertising", facts: map[string]any{"licensed": true, "content": "commercial", "distance_m_to_sensitive_poi": 100.0}, want: "false"},
		{name: "electoral loudspeaker out of scope", code: "lapa", at: "2026-03-10T20:00:00-03:00", zone: "other", source: "loudspeaker_advertising", facts: map[string]any{"content": "electoral"}, want: "undetermined", article: "Art. 99"},
		{name: "electoral propaganda source", code: "lapa", at: "2026-03-10T20:00:00-03:00", zone: "other", source: "electoral_propaganda", want: "undetermined", article: "Art. 99"},
		// Art. 295 XIV: shows in bars end 22:00 every day.
		{name: "bar live music 21:59 ok", code: "lapa", at: "2026-03-10T21:59:00-03:00", zone: "other", source: "live_music", laeq: f(60), facts: map[string]any{"establishment_type": "bar"}, want: "false"},
		{name: "bar live music 22:00 ends", code: "lapa", at: "2026-03-10T22:00:00-03:00", zone: "other", source: "live_music", laeq: f(55), facts: map[string]any{"establishment_type": "bar"}, want: "true", article: "Art. 295, XIV", limit: 60, penalty: "Art. 299"},
		{name: "bar karaoke 00:30 Saturday", code: "lapa", at: "2026-03-14T00:30:00-03:00", zone: "other", source: "karaoke", laeq: f(50), facts: map[string]any{"establishment_type": "bar"}, want: "true", article: "Art. 295, XIV"},
		{name: "bar live music in hours without proven acoustics", code: "lapa", at: "2026-03-10T20:00:00-03:00", zone: "other", source: "live_music", laeq: f(50), facts: map[string]any{"establishment_type": "bar", "acoustics_proven": false}, want: "undetermined", article: "Art. 295, XIV"},
		// Art. 295 XIII: restaurants, Mon–Thu 22:00; Fri/Sat/eves 02:00 next day; Sunday not listed.
		{name: "restaurant show Thursday 22:00 ends", code: "lapa", at: "2026-03-12T22:00:00-03:00", zone: "other", source: "live_music", laeq: f(50), facts: map[string]any{"establishment_type": "restaurant"}, want: "true", article: "Art. 295, XIII"},
		{name: "restaurant show Friday 23:30 ok", code: "lapa", at: "2026-03-13T23:30:00-03:00", zone: "other", source: "karaoke", laeq: f(55), facts: map[string]any{"establishment_type": "restaurant"}, want: "false"},
		{name: "service day: Saturday 01:30 under Friday", code: "lapa", at: "2026-03-14T01:30:00-03:00", zone: "other", source: "karaoke", laeq: f(55), facts: map[string]any{"establishment_type": "restaurant"}, want: "false"},
		{name: "service day: Saturday 02:00 closed", code: "lapa", at: "2026-03-14T02:00:00-03:00", zone: "other", source: "karaoke", laeq: f(55), facts: map[string]any{"establishment_type": "restaurant"}, want: "true", article: "Art. 295, XIII"},
		{name: "service day: Tuesday 01:00 under Monday", code: "lapa", at: "2026-03-10T01:00:00-03:00", zone: "other", source: "live_music", laeq: f(55), facts: map[string]any{"establishment_type": "restaurant"}, want: "true", article: "Art. 295, XIII"},
		{name: "restaurant show Sunday: the day is not restricted by XIII", code: "lapa", at: "2026-03-15T21:00:00-03:00", zone: "other", source: "live_music", laeq: f(55), facts: map[string]any{"establishment_type": "restaurant"}, want: "false", inReason: "não restringe domingo"},
		{name: "holiday eve Monday 20 Apr: show until 02:00", code: "lapa", at: "2026-04-20T23:30:00-03:00", zone: "other", source: "live_music", laeq: f(55), facts: map[string]any{"establishment_type": "restaurant"}, want: "false"},
		{name: "local holiday eve Sunday 8 Feb (Cerco da Lapa): eve line applies", code: "lapa", at: "2026-02-08T23:30:00-03:00", zone: "other", source: "live_music", laeq: f(55), facts: map[string]any{"establishment_type": "restaurant"}, want: "false"},
		{name: "eve of 13 June (Friday 12 June 2026) counts", code: "lapa", at: "2026-06-13T01:59:00-03:00", zone: "other", source: "live_music", laeq: f(55), facts: map[string]any{"establishment_type": "restaurant"}, want: "false"},
		{name: "ordinary Monday 23:30 show ends at 22", code: "lapa", at: "2026-04-13T23:30:00-03:00", zone: "other", source: "live_music", laeq: f(55), facts: map[string]any{"establishment_type": "restaurant"}, want: "true"},
		// Art. 295 XV: dances.
		{name: "club dance Saturday 04:59 under Friday", code: "lapa", at: "2026-03-14T04:59:00-03:00", zone: "other", source: "amplified_music", laeq: f(55), facts: map[string]any{"establishment_type": "club"}, want: "false"},
		{name: "club dance Saturday 05:00 ends", code: "lapa", at: "2026-03-14T05:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(55), facts: map[string]any{"establishment_type": "club"}, want: "true", article: "Art. 295, XV"},
		{name: "club dance Monday 01:00 ends (Sunday line)", code: "lapa", at: "2026-03-16T01:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(55), facts: map[string]any{"establishment_type": "nightclub"}, want: "true", article: "Art. 295, XV"},
		{name: "club dance Tuesday: the day is not restricted by XV", code: "lapa", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(55), facts: map[string]any{"establishment_type": "club"}, want: "false", inReason: "não restringe terça-feira"},
		{name: "club dance Sunday holiday eve: the more favourable line (05:00)", code: "lapa", at: "2026-02-09T02:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(55), facts: map[string]any{"establishment_type": "club"}, want: "false"},
		{name: "club dance Sunday holiday eve still ends at 05:00", code: "lapa", at: "2026-02-09T05:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(55), facts: map[string]any{"establishment_type": "club"}, want: "true", article: "Art. 295, XV"},
		// Art. 295 III: bars close at 24:00.
		{name: "bar operating 23:59", code: "lapa", at: "2026-03-10T23:59:00-03:00", zone: "other", source: "amplified_music", laeq: f(50), facts: map[string]any{"establishment_type": "bar", "operating": true}, want: "false"},
		{name: "bar operating 00:00 after closing", code: "lapa", at: "2026-03-11T00:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(50), facts: map[string]any{"establishment_type": "bar", "operating": true}, want: "true", article: "Art. 295, III", penalty: "Art. 299"},
		{name: "church bell no rule but the general clause", code: "lapa", at: "2026-03-10T05:00:00-03:00", zone: "other", source: "church_bell", laeq: f(85), want: "undetermined", limit: -1},
		{name: "level not given: undetermined, limit reported", code: "lapa", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "amplified_music", facts: bar, want: "undetermined", article: "Art. 96", limit: 60, inReason: "não foi medido"},
	})
}

func TestConceicaoDeMacabu(t *testing.T) {
	runCases(t, []evalCase{
		{name: "45 equal complies", code: "conceicao-de-macabu", at: "2026-03-10T15:00:00-03:00", zone: "residential", source: "amplified_music", laeq: f(45), want: "false", article: "Art. 55", limit: 45},
		{name: "45.1 violates any hour", code: "conceicao-de-macabu", at: "2026-03-10T15:00:00-03:00", zone: "unclassified", source: "amplified_music", laeq: f(45.1), want: "true", article: "Art. 55", limit: 45, penalty: "R$ 84,75"},
		{name: "residence music violates (Art. 55 V)", code: "conceicao-de-macabu", at: "2026-03-10T03:00:00-03:00", zone: "residential", source: "amplified_music", laeq: f(50), facts: map[string]any{"establishment_type": "residence"}, want: "true", limit: 45},
		{name: "reincidence doubles only if punished", code: "conceicao-de-macabu", at: "2026-03-10T15:00:00-03:00", zone: "other", source: "generic", laeq: f(60), prior: 1, facts: map[string]any{"prior_punished": true}, want: "true", penalty: "em dobro por reincidência (Art. 157)"},
		{name: "prior not punished: no doubling", code: "conceicao-de-macabu", at: "2026-03-10T15:00:00-03:00", zone: "other", source: "generic", laeq: f(60), prior: 1, facts: map[string]any{"prior_punished": false}, want: "true"},
		{name: "siren 30 s complies", code: "conceicao-de-macabu", at: "2026-03-10T15:00:00-03:00", zone: "other", source: "siren", laeq: f(90), dur: f(30), want: "false", article: "Art. 55, VI", limit: 45},
		{name: "siren 31 s violates", code: "conceicao-de-macabu", at: "2026-03-10T15:00:00-03:00", zone: "other", source: "siren", laeq: f(90), dur: f(31), want: "true", article: "Art. 55, VI"},
		{name: "siren at 22:00 is not after 22", code: "conceicao-de-macabu", at: "2026-03-10T22:00:00-03:00", zone: "other", source: "siren", dur: f(5), want: "false"},
		{name: "siren at 22:01 after 22", code: "conceicao-de-macabu", at: "2026-03-10T22:01:00-03:00", zone: "other", source: "siren", dur: f(5), want: "true", article: "Art. 55, VI"},
		{name: "siren at 02:00 undetermined (no end time)", code: "conceicao-de-macabu", at: "2026-03-10T02:00:00-03:00", zone: "other", source: "siren", dur: f(5), want: "undetermined", article: "Art. 55, VI"},
		{name: "ambulance in service exempt", code: "conceicao-de-macabu", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "siren", laeq: f(95), dur: f(120), facts: map[string]any{"emitter": "emergency_vehicle", "in_service": true}, want: "false"},
		{name: "ambulance not in service not exempt", code: "conceicao-de-macabu", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "siren", laeq: f(95), dur: f(120), facts: map[string]any{"emitter": "emergency_vehicle", "in_service": false}, want: "true"},
		{name: "bells 06:00 allowed (special over 45 dB)", code: "conceicao-de-macabu", at: "2026-03-10T06:00:00-03:00", zone: "other", source: "church_bell", laeq: f(80), want: "false", article: "Art. 57", limit: 45},
		{name: "bells 05:59 before 6", code: "conceicao-de-macabu", at: "2026-03-10T05:59:00-03:00", zone: "other", source: "church_bell", laeq: f(80), want: "true", article: "Art. 57"},
		{name: "bells 20:00 allowed", code: "conceicao-de-macabu", at: "2026-03-10T20:00:00-03:00", zone: "other", source: "church_bell", want: "false"},
		{name: "bells 20:01 after 20", code: "conceicao-de-macabu", at: "2026-03-10T20:01:00-03:00", zone: "other", source: "church_bell", want: "true", article: "Art. 57"},
		{name: "works near school 06:59", code: "conceicao-de-macabu", at: "2026-03-10T06:59:00-03:00", zone: "near_school", source: "construction_work", laeq: f(70), want: "true", article: "Art. 58"},
		{name: "works near residence 07:00 allowed", code: "conceicao-de-macabu", at: "2026-03-14T07:00:00-03:00", zone: "near_residence", source: "construction_work", laeq: f(70), want: "false", article: "Art. 58"},
		{name: "works near hospital 18:00 allowed, 18:01 not", code: "conceicao-de-macabu", at: "2026-03-10T18:01:00-03:00", zone: "near_hospital", source: "machinery", want: "true", article: "Art. 58"},
		{name: "works elsewhere: 45 dB applies", code: "conceicao-de-macabu", at: "2026-03-10T10:00:00-03:00", zone: "industrial", source: "construction_work", laeq: f(70), want: "true", article: "Art. 55"},
		{name: "works in unclassified zone undetermined", code: "conceicao-de-macabu", at: "2026-03-10T20:00:00-03:00", zone: "unclassified", source: "construction_work", laeq: f(40), want: "undetermined", article: "Art. 58"},
		{name: "fireworks in logradouro", code: "conceicao-de-macabu", at: "2026-03-10T20:00:00-03:00", zone: "logradouro_publico", source: "fireworks", want: "true", article: "Art. 109, I"},
		{name: "licensed fireworks in logradouro at 44 dB", code: "conceicao-de-macabu", at: "2026-03-10T20:00:00-03:00", zone: "logradouro_publico", source: "fireworks", laeq: f(44), facts: map[string]any{"licensed": true}, want: "false"},
		{name: "quarry warning siren is required", code: "conceicao-de-macabu", at: "2026-03-10T23:00:00-03:00", zone: "quarry", source: "siren", laeq: f(95), dur: f(60), facts: map[string]any{"purpose": "blasting_warning"}, want: "false", article: "Art. 125, III"},
		{name: "sound vehicle undetermined under 45", code: "conceicao-de-macabu", at: "2026-03-10T10:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(40), facts: map[string]any{"mobile": true}, want: "undetermined", article: "Art. 56"},
	})
}

func TestEntreRiosDeMinas(t *testing.T) {
	runCases(t, []evalCase{
		{name: "music at night undetermined (no number)", code: "entre-rios-de-minas", at: "2026-03-10T23:00:00-03:00", zone: "residential", source: "amplified_music", laeq: f(80), want: "undetermined", article: "Art. 36", limit: -1},
		{name: "music 21:59 outside window", code: "entre-rios-de-minas", at: "2026-03-10T21:59:00-03:00", zone: "residential", source: "amplified_music", laeq: f(80), want: "false", limit: -1},
		{name: "music 07:00 outside window", code: "entre-rios-de-minas", at: "2026-03-11T07:00:00-03:00", zone: "residential", source: "amplified_music", laeq: f(80), want: "false"},
		{name: "bar noise by day: Art. 35 undetermined", code: "entre-rios-de-minas", at: "2026-03-10T15:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(80), facts: map[string]any{"establishment_type": "bar"}, want: "undetermined", article: "Art. 35, parágrafo único"},
		{name: "muffler-less engine at 22:00", code: "entre-rios-de-minas", at: "2026-03-10T22:00:00-03:00", zone: "other", source: "vehicle_without_muffler", want: "true", article: "Art. 36, I", penalty: "multa de 30% VR (Art. 37)"},
		{name: "muffler-less engine at 06:59", code: "entre-rios-de-minas", at: "2026-03-11T06:59:00-03:00", zone: "other", source: "vehicle_without_muffler", want: "true"},
		{name: "muffler-less engine at noon", code: "entre-rios-de-minas", at: "2026-03-11T12:00:00-03:00", zone: "other", source: "vehicle_without_muffler", want: "false", article: "", limit: -1},
		{name: "whistle 15 s complies", code: "entre-rios-de-minas", at: "2026-03-10T23:00:00-03:00", zone: "industrial", source: "siren", dur: f(15), want: "false", article: "Art. 36, V"},
		{name: "whistle 16 s violates", code: "entre-rios-de-minas", at: "2026-03-10T23:00:00-03:00", zone: "industrial", source: "siren", dur: f(16), want: "true", article: "Art. 36, V"},
		{name: "whistle 60 s by day not covered", code: "entre-rios-de-minas", at: "2026-03-10T12:00:00-03:00", zone: "industrial", source: "siren", dur: f(60), want: "false"},
		{name: "police siren in service exempt", code: "entre-rios-de-minas", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "siren", dur: f(60), facts: map[string]any{"emitter": "police", "in_service": true}, want: "false"},
		{name: "batuque at night without licence", code: "entre-rios-de-minas", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "batuque_congado", facts: map[string]any{"licensed": false}, want: "true", article: "Art. 36, VI"},
		{name: "batuque at night licensed", code: "entre-rios-de-minas", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "batuque_congado", facts: map[string]any{"licensed": true}, want: "false"},
		{name: "fireworks at night: two chapters", code: "entre-rios-de-minas", at: "2026-03-10T23:00:00-03:00", zone: "logradouro_publico", source: "fireworks", want: "true", article: "Art. 36, IV"},
		{name: "fireworks by day in logradouro 200% VR", code: "entre-rios-de-minas", at: "2026-03-10T15:00:00-03:00", zone: "logradouro_publico", source: "fireworks", want: "true", article: "Art. 71, I", penalty: "200%"},
		{name: "licensed fireworks by day", code: "entre-rios-de-minas", at: "2026-03-10T15:00:00-03:00", zone: "logradouro_publico", source: "fireworks", facts: map[string]any{"licensed": true}, want: "false"},
		{name: "no doubling in Entre Rios", code: "entre-rios-de-minas", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "vehicle_without_muffler", prior: 3, facts: map[string]any{"prior_punished": true}, want: "true", penalty: "multa de 30% VR (Art. 37)"},
		{name: "blasting series 29 min apart", code: "entre-rios-de-minas", at: "2026-03-10T10:00:00-03:00", zone: "quarry", source: "blasting", facts: map[string]any{"interval_between_series_s": 1740.0}, want: "true", article: "Art. 82, II", penalty: "300%"},
		{name: "blasting series 30 min apart", code: "entre-rios-de-minas", at: "2026-03-10T10:00:00-03:00", zone: "quarry", source: "blasting", facts: map[string]any{"interval_between_series_s": 1800.0}, want: "false"},
	})
}

func TestCamposAltos(t *testing.T) {
	runCases(t, []evalCase{
		{name: "loud music undetermined any hour", code: "campos-altos", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(90), want: "undetermined", article: "Art. 74, I", limit: -1},
		{name: "unlicensed loudspeaker", code: "campos-altos", at: "2026-03-10T12:00:00-03:00", zone: "other", source: "loudspeaker_advertising", facts: map[string]any{"licensed": false}, want: "true", article: "Art. 74, I, c", penalty: "10% SM_REGIONAL"},
		{name: "reincidence doubles (Art. 7)", code: "campos-altos", at: "2026-03-10T12:00:00-03:00", zone: "other", source: "loudspeaker_advertising", prior: 1, facts: map[string]any{"licensed": false, "prior_punished": true}, want: "true", penalty: "em dobro por reincidência (Art. 7): 20%"},
		{name: "firearm without just cause", code: "campos-altos", at: "2026-03-10T12:00:00-03:00", zone: "other", source: "firearm", want: "true", article: "Art. 74, I, e"},
		{name: "siren: duration illegible", code: "campos-altos", at: "2026-03-10T12:00:00-03:00", zone: "other", source: "siren", dur: f(120), want: "undetermined", article: "Art. 74, I, f"},
		{name: "emergency siren still undetermined (no exemption written)", code: "campos-altos", at: "2026-03-10T12:00:00-03:00", zone: "other", source: "siren", facts: map[string]any{"emitter": "emergency_vehicle", "in_service": true}, want: "undetermined"},
		{name: "family dance batuque exempt", code: "campos-altos", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "batuque_congado", facts: map[string]any{"licensed": false, "event": "baile_familiar"}, want: "false"},
		{name: "bar open 23:59", code: "campos-altos", at: "2026-03-10T23:59:00-03:00", zone: "other", source: "crowd_shouting", facts: map[string]any{"establishment_type": "bar", "operating": true}, want: "undetermined"},
		{name: "bar open 00:30 after 24:00", code: "campos-altos", at: "2026-03-11T00:30:00-03:00", zone: "other", source: "crowd_shouting", facts: map[string]any{"establishment_type": "bar", "operating": true}, want: "true", article: "Art. 202, VIII", penalty: "Cr$ 50,00"},
		{name: "bar open 06:59 before 7", code: "campos-altos", at: "2026-03-11T06:59:00-03:00", zone: "other", source: "generic", facts: map[string]any{"establishment_type": "bar", "operating": true}, want: "true"},
		{name: "industry Saturday is a dia útil", code: "campos-altos", at: "2026-03-14T10:00:00-03:00", zone: "industrial", source: "machinery", facts: map[string]any{"establishment_type": "factory", "operating": true}, want: "undetermined"},
		{name: "industry Sunday closed", code: "campos-altos", at: "2026-03-15T10:00:00-03:00", zone: "industrial", source: "machinery", facts: map[string]any{"establishment_type": "factory", "operating": true}, want: "true", article: "Art. 199, I"},
		{name: "industry on national holiday closed", code: "campos-altos", at: "2026-04-21T10:00:00-03:00", zone: "industrial", source: "machinery", facts: map[string]any{"establishment_type": "industry", "operating": true}, want: "true"},
		{name: "industry 17:00 after hours", code: "campos-altos", at: "2026-03-10T17:00:00-03:00", zone: "industrial", source: "machinery", facts: map[string]any{"establishment_type": "industry", "operating": true}, want: "true"},
	})
}

func TestCampinaGrandeDoSul(t *testing.T) {
	runCases(t, []evalCase{
		{name: "revoked: undetermined by default", code: "campina-grande-do-sul", at: "2026-03-10T23:30:00-03:00", zone: "other", source: "siren", dur: f(60), want: "undetermined", inReason: "não está em vigor", limit: -1},
		{name: "assume in force: siren 31 s", code: "campina-grande-do-sul", at: "2026-03-10T12:00:00-03:00", zone: "other", source: "siren", dur: f(31), assume: true, want: "true", article: "Art. 88, VI", penalty: "20% a 50% VR (Art. 92)"},
		{name: "assume in force: siren 30 s", code: "campina-grande-do-sul", at: "2026-03-10T12:00:00-03:00", zone: "other", source: "siren", dur: f(30), assume: true, want: "false"},
		{name: "doubling after punished reincidence", code: "campina-grande-do-sul", at: "2026-03-10T12:00:00-03:00", zone: "other", source: "siren", dur: f(31), assume: true, prior: 2, facts: map[string]any{"prior_punished": true}, want: "true", penalty: "40% a 100%"},
		{name: "bells 05:00 allowed", code: "campina-grande-do-sul", at: "2026-03-10T05:00:00-03:00", zone: "other", source: "church_bell", assume: true, want: "false"},
		{name: "bells 04:59", code: "campina-grande-do-sul", at: "2026-03-10T04:59:00-03:00", zone: "other", source: "church_bell", assume: true, want: "true", article: "Art. 89"},
		{name: "bells 22:01", code: "campina-grande-do-sul", at: "2026-03-10T22:01:00-03:00", zone: "other", source: "church_bell", assume: true, want: "true"},
		{name: "fire alarm bells exempt", code: "campina-grande-do-sul", at: "2026-03-10T03:00:00-03:00", zone: "other", source: "church_bell", assume: true, facts: map[string]any{"purpose": "fire_alarm"}, want: "false"},
		{name: "works near residence 22:00 allowed", code: "campina-grande-do-sul", at: "2026-03-10T22:00:00-03:00", zone: "residential", source: "construction_work", assume: true, want: "false"},
		{name: "works near residence 22:01", code: "campina-grande-do-sul", at: "2026-03-10T22:01:00-03:00", zone: "residential", source: "construction_work", assume: true, want: "true", article: "Art. 90"},
		{name: "bar Tuesday 23:00 closed", code: "campina-grande-do-sul", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "generic", assume: true, facts: map[string]any{"establishment_type": "bar", "operating": true, "alcohol_sold": true}, want: "true", article: "Art. 87, § 2º"},
		{name: "bar Friday 23:30 allowed", code: "campina-grande-do-sul", at: "2026-03-13T23:30:00-03:00", zone: "other", source: "generic", assume: true, facts: map[string]any{"establishment_type": "bar", "operating": true}, want: "false"},
		{name: "bar Friday 23:30 with algazarra: Art. 87 § 1º", code: "campina-grande-do-sul", at: "2026-03-13T23:30:00-03:00", zone: "other", source: "crowd_shouting", assume: true, facts: map[string]any{"establishment_type": "bar", "operating": true}, want: "true", article: "Art. 87, § 1º", penalty: "cassação da licença (Art. 87, § 3º)"},
		{name: "bar Saturday 00:10 after Friday's 24:00", code: "campina-grande-do-sul", at: "2026-03-14T00:10:00-03:00", zone: "other", source: "generic", assume: true, facts: map[string]any{"establishment_type": "bar", "operating": true}, want: "true"},
		{name: "bar holiday eve (Mon 20 Apr) 23:30 allowed", code: "campina-grande-do-sul", at: "2026-04-20T23:30:00-03:00", zone: "other", source: "generic", assume: true, facts: map[string]any{"establishment_type": "bar", "operating": true}, want: "false"},
		{name: "radio interference out of scope", code: "campina-grande-do-sul", at: "2026-03-10T12:00:00-03:00", zone: "other", source: "electrical_interference", assume: true, want: "undetermined", article: "Art. 91"},
	})
}

func TestHolidays(t *testing.T) {
	s := builtinSet(t)
	lapa, _ := s.Code("lapa")
	ca, _ := s.Code("campos-altos")
	cgs, _ := s.Code("campina-grande-do-sul")
	for _, tc := range []struct {
		d       Date
		holiday bool
	}{
		{Date{2026, 1, 1}, true}, {Date{2026, 4, 21}, true}, {Date{2026, 5, 1}, true}, {Date{2026, 9, 7}, true},
		{Date{2026, 10, 12}, true}, {Date{2026, 11, 2}, true}, {Date{2026, 11, 15}, true}, {Date{2026, 11, 20}, true},
		{Date{2023, 11, 20}, false}, // Consciência Negra is national from 2024 (Lei 14.759/2023)
		{Date{2026, 12, 25}, true}, {Date{2026, 2, 9}, true}, {Date{2026, 6, 13}, true},
		{Date{2026, 4, 3}, true}, // Good Friday 2026: a holiday in every municipality
		{Date{2026, 3, 10}, false},
	} {
		if _, got := lapa.Holiday(tc.d); got != tc.holiday {
			t.Errorf("lapa.Holiday(%s) = %v, want %v", tc.d, got, tc.holiday)
		}
	}
	if _, h := ca.Holiday(Date{2026, 2, 9}); h {
		t.Error("Lapa's local holiday leaked into Campos Altos")
	}
	for y, want := range map[int]Date{2024: {2024, 3, 31}, 2025: {2025, 4, 20}, 2026: {2026, 4, 5}, 2027: {2027, 3, 28}, 2038: {2038, 4, 25}} {
		if got := Easter(y); got != want {
			t.Errorf("Easter(%d) = %s, want %s", y, got, want)
		}
	}
	// Business days differ per code: Saturday counts in Campos Altos, not in Campina Grande do Sul.
	sat := Date{2026, 3, 14}
	if !ca.BusinessDay(sat) || cgs.BusinessDay(sat) {
		t.Errorf("Saturday business day: campos-altos=%v (want true), campina=%v (want false)", ca.BusinessDay(sat), cgs.BusinessDay(sat))
	}
	er, _ := s.Code("entre-rios-de-minas")
	// 7 business days from Thursday 16 Apr 2026 skip the weekend and Tiradentes (Tue 21 Apr).
	if got, want := er.AddBusinessDays(Date{2026, 4, 16}, 7), (Date{2026, 4, 28}); got != want {
		t.Errorf("AddBusinessDays = %s, want %s", got, want)
	}
}

func TestActiveLimit(t *testing.T) {
	s := builtinSet(t)
	lapa, _ := s.Code("lapa")
	cm, _ := s.Code("conceicao-de-macabu")
	cgs, _ := s.Code("campina-grande-do-sul")
	er, _ := s.Code("entre-rios-de-minas")
	sp, _ := time.LoadLocation("America/Sao_Paulo")
	at := func(s string) time.Time {
		t, err := time.ParseInLocation("2006-01-02 15:04", s, sp)
		if err != nil {
			panic(err)
		}
		return t
	}
	for _, tc := range []struct {
		name       string
		c          *Code
		zone, est  string
		t          time.Time
		ok         bool
		db         float64
		period     string
		start, end time.Time
	}{
		{"lapa night bar", lapa, "other", "bar", at("2026-03-10 23:00"), true, 60, "noturno", at("2026-03-10 22:00"), at("2026-03-11 07:00")},
		{"lapa 22:00 exactly", lapa, "other", "bar", at("2026-03-10 22:00"), true, 60, "noturno", at("2026-03-10 22:00"), at("2026-03-11 07:00")},
		{"lapa 21:59", lapa, "other", "bar", at("2026-03-10 21:59"), true, 65, "diurno", at("2026-03-10 07:00"), at("2026-03-10 22:00")},
		{"lapa early morning", lapa, "residential", "restaurant", at("2026-03-11 06:59"), true, 60, "noturno", at("2026-03-10 22:00"), at("2026-03-11 07:00")},
		{"lapa hospital", lapa, "hospital_surroundings", "church_or_temple", at("2026-03-11 07:00"), true, 45, "diurno", at("2026-03-11 07:00"), at("2026-03-11 22:00")},
		{"lapa residence: no limit", lapa, "other", "residence", at("2026-03-10 23:00"), false, 0, "", time.Time{}, time.Time{}},
		{"lapa no establishment: no limit", lapa, "other", "", at("2026-03-10 23:00"), false, 0, "", time.Time{}, time.Time{}},
		{"lapa unclassified zone: no limit", lapa, "unclassified", "bar", at("2026-03-10 23:00"), false, 0, "", time.Time{}, time.Time{}},
		{"cm 45 everywhere", cm, "unclassified", "", at("2026-03-10 12:00"), true, 45, "integral", time.Time{}, time.Time{}},
		{"revoked law: none", cgs, "other", "bar", at("2026-03-10 12:00"), false, 0, "", time.Time{}, time.Time{}},
		{"entre rios: none", er, "other", "bar", at("2026-03-10 23:00"), false, 0, "", time.Time{}, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, ok := tc.c.ActiveLimit(tc.zone, tc.est, tc.t)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if l.DBA != tc.db || l.Period != tc.period || !l.Start.Equal(tc.start) || !l.End.Equal(tc.end) {
				t.Errorf("got %v dB %s [%s, %s), want %v dB %s [%s, %s)", l.DBA, l.Period, l.Start, l.End, tc.db, tc.period, tc.start, tc.end)
			}
			if l.Article == "" || l.Quote == "" || l.CodeVersion == "" || l.RuleID == "" {
				t.Errorf("limit lacks citation: %+v", l)
			}
		})
	}
	// The fast path agrees with the full engine on every minute of a week.
	s2 := builtinSet(t)
	for m := 0; m < 7*1440; m += 7 {
		ts := at("2026-03-09 00:00").Add(time.Duration(m) * time.Minute)
		l, ok := lapa.ActiveLimit("other", "bar", ts)
		line, _ := json.Marshal(map[string]any{"code": "lapa", "at": ts.Format(time.RFC3339), "zone": "other", "source": "amplified_music",
			"laeq_dba": 50, "facts": map[string]any{"establishment_type": "bar"}})
		r := s2.EvalLine(line)
		if !ok || r.LimitDBA == nil || *r.LimitDBA != l.DBA {
			t.Fatalf("%s: fast path %v/%v, engine %v", ts, l.DBA, ok, r.LimitDBA)
		}
	}
}

func TestDST(t *testing.T) {
	// Brazil kept DST until 2019: at 2018-11-04 00:00 clocks jumped to 01:00.
	// The night window still ends at 07:00 local, which is a 8-hour span.
	s := builtinSet(t)
	lapa, _ := s.Code("lapa")
	sp, _ := time.LoadLocation("America/Sao_Paulo")
	l, ok := lapa.ActiveLimit("other", "bar", time.Date(2018, 11, 4, 2, 30, 0, 0, sp))
	if !ok || l.Period != "noturno" {
		t.Fatalf("got %+v ok=%v", l, ok)
	}
	if got := l.End.Sub(l.Start); got != 8*time.Hour {
		t.Errorf("night across DST start lasts %s, want 8h", got)
	}
	if h, m, _ := l.End.In(sp).Clock(); h != 7 || m != 0 {
		t.Errorf("night ends at %02d:%02d local, want 07:00", h, m)
	}
}

// TestActiveLimitConcurrent exercises the memoised fast path from many
// goroutines (run with -race) and checks it against fresh lookups.
func TestActiveLimitConcurrent(t *testing.T) {
	s := builtinSet(t)
	lapa, _ := s.Code("lapa")
	fresh, _ := builtinSet(t).Code("lapa")
	t0 := time.Date(2026, 3, 10, 20, 0, 0, 0, time.UTC)
	done := make(chan struct{})
	for g := 0; g < 4; g++ {
		go func(g int) {
			defer func() { done <- struct{}{} }()
			for i := 0; i < 2000; i++ {
				ts := t0.Add(time.Duration((i*37+g*1000)%172800) * time.Second)
				zone := []string{"other", "hospital_surroundings"}[i%2]
				got, ok1 := lapa.ActiveLimit(zone, "bar", ts)
				want, ok2 := fresh.ActiveLimit(zone, "bar", ts)
				if ok1 != ok2 || got.DBA != want.DBA || !got.Start.Equal(want.Start) {
					t.Errorf("%s %s: memoised %v [%s], fresh %v [%s]", zone, ts, got.DBA, got.Start, want.DBA, want.Start)
					return
				}
			}
		}(g)
	}
	for g := 0; g < 4; g++ {
		<-done
	}
}

func TestActiveLimitForMechanism(t *testing.T) {
	s := builtinSet(t)
	cm, _ := s.Code("conceicao-de-macabu")
	lapa, _ := s.Code("lapa")
	noon := time.Date(2026, 3, 10, 15, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name            string
		c               *Code
		zone, est, mech string
		ok              bool
	}{
		{"church sound system: 45 dB", cm, "other", "church_or_temple", "sound_system", true},
		{"church bells: Art. 57 decides, no level limit", cm, "other", "church_or_temple", "bell", false},
		{"machinery near a school: Art. 58 decides", cm, "near_school", "construction_site", "machinery", false},
		{"machinery in an industrial zone: 45 dB", cm, "industrial", "factory", "machinery", true},
		{"unknown mechanism: 45 dB", cm, "other", "restaurant", "", true},
		{"lapa bar sound system", lapa, "other", "bar", "sound_system", true},
	} {
		_, ok := tc.c.ActiveLimitFor(tc.zone, tc.est, tc.mech, noon)
		if ok != tc.ok {
			t.Errorf("%s: ok = %v, want %v", tc.name, ok, tc.ok)
		}
	}
}

// TestScheduleReadable keeps `sossego codes show` readable: no line wider
// than 100 columns, no vocabulary identifier or English token in the text.
func TestScheduleReadable(t *testing.T) {
	s := builtinSet(t)
	bad := []string{"all:", "mon", "tue", "wed", "thu", "fri/", "holiday_eve", "business_day", "undetermined", "→",
		"06-13", "02-09", "near_", "_music", "hospital_surroundings", "level_limit", "operating_schedule", "seed"}
	for _, id := range s.IDs() {
		c, _ := s.Code(id)
		txt := Schedule(c)
		for i, line := range strings.Split(txt, "\n") {
			if n := utf8.RuneCountInString(line); n > ShowWidth {
				t.Errorf("%s line %d has %d columns: %q", id, i+1, n, line)
			}
		}
		for _, b := range bad {
			if strings.Contains(txt, b) {
				t.Errorf("%s: schedule text contains %q", id, b)
			}
		}
	}
	lapa, _ := s.Code("lapa")
	txt := Schedule(lapa)
	for _, want := range []string{"13/06 Fundação da Cidade", "segunda a quinta-feira: abre às 08:00, encerra às 22:00",
		"sexta-feira, sábado e vésperas de feriado", "domingo e feriados: fechado", "entorno de hospital e perto de hospital"} {
		if !strings.Contains(txt, want) {
			t.Errorf("lapa schedule lacks %q", want)
		}
	}
}

// TestLabelsCoverVocabularies: every vocabulary value the loader accepts has
// a pt-BR label, and the codes' own rules use only labelled values.
func TestLabelsCoverVocabularies(t *testing.T) {
	for kind, vocab := range map[string]map[string]bool{
		LabelZone: knownZones, LabelSource: knownSources, LabelMechanism: knownMechanisms,
		LabelEstablishment: knownEstablishments, LabelDay: knownDays, LabelRuleKind: ruleKinds, LabelPOI: knownPOI,
	} {
		for v := range vocab {
			l, ok := Labels()[kind][v]
			if !ok || l == "" || strings.Contains(l, "_") {
				t.Errorf("%s %q has no label (%q)", kind, v, l)
			}
		}
		if len(Labels()[kind]) != len(vocab) {
			t.Errorf("%s: %d labels for %d values", kind, len(Labels()[kind]), len(vocab))
		}
	}
	if got := Label(LabelZone, "some_new_zone"); got != "some new zone" {
		t.Errorf("unknown value shown as %q", got)
	}
	for _, tc := range []struct {
		days []string
		want string
	}{
		{[]string{"mon", "tue", "wed", "thu"}, "segunda a quinta-feira"},
		{[]string{"fri", "sat", "holiday_eve"}, "sexta-feira, sábado e vésperas de feriado"},
		{[]string{"all"}, "todos os dias"},
		{[]string{"holiday", "sun"}, "domingo e feriados"},
		{[]string{"business_day"}, "dias úteis"},
	} {
		if got := DaysText(tc.days); got != tc.want {
			t.Errorf("DaysText(%v) = %q, want %q", tc.days, got, tc.want)
		}
	}
}

func TestResolveCodeNames(t *testing.T) {
	s := builtinSet(t)
	for in, want := range map[string]string{"Lapa": "lapa", " LAPA ": "lapa", "Conceição de Macabu": "conceicao-de-macabu",
		"campina_grande_do_sul": "campina-grande-do-sul", "Entre Rios de Minas": "entre-rios-de-minas"} {
		c, err := s.Resolve(in)
		if err != nil || c.ID != want {
			t.Errorf("Resolve(%q) = %v, %v; want %s", in, c, err, want)
		}
	}
	for in, hint := range map[string]string{"lap": `"lapa"`, "macabu": `"conceicao-de-macabu"`, "campos": `"campos-altos"`, "": "informe"} {
		_, err := s.Resolve(in)
		if err == nil || !strings.Contains(err.Error(), hint) {
			t.Errorf("Resolve(%q) error %v, want it to mention %s", in, err, hint)
		}
	}
	if _, err := s.Resolve("atlantida"); err == nil || strings.Contains(err.Error(), "quis dizer") {
		t.Errorf("Resolve(atlantida) = %v: no suggestion expected", err)
	}
}

package codes

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestVehicleSirens: horns, sirens and "quaisquer outros aparelhos" of a
// vehicle are the item about apparatus ("Os de buzina, clarins, tímpanos,
// campainhas ou quaisquer outros aparelhos"), not the factory whistle ("apitos
// ou silvos de fábricas … por mais de 15 segundos"): the duration does not
// decide; the exception is the emergency vehicle in service.
func TestVehicleSirens(t *testing.T) {
	out := map[string]any{"emitter": "police", "in_service": false}
	inService := map[string]any{"emitter": "ambulance", "in_service": true}
	unknownService := map[string]any{"emitter": "emergency_vehicle"}
	car := map[string]any{"emitter": "car"}
	mobile := map[string]any{"mobile": true}
	factory := map[string]any{"mechanism": "siren_whistle", "establishment_type": "factory"}
	runCases(t, []evalCase{
		// Entre Rios de Minas Art. 36, II, inside "no período de 22:00 às 07:00 horas".
		{name: "ER police siren out of service 23:00", code: "entre-rios-de-minas", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "siren", facts: out, want: "true", article: "Art. 36, II", penalty: "30%"},
		{name: "ER car horn 22:00 (first minute)", code: "entre-rios-de-minas", at: "2026-03-10T22:00:00-03:00", zone: "other", source: "siren", facts: car, want: "true", article: "Art. 36, II"},
		{name: "ER car horn 06:59 (last minute)", code: "entre-rios-de-minas", at: "2026-03-11T06:59:00-03:00", zone: "other", source: "siren", facts: car, want: "true", article: "Art. 36, II"},
		{name: "ER car horn 21:59: outside the window", code: "entre-rios-de-minas", at: "2026-03-10T21:59:00-03:00", zone: "other", source: "siren", facts: car, want: "false"},
		{name: "ER car horn 07:00: outside the window", code: "entre-rios-de-minas", at: "2026-03-11T07:00:00-03:00", zone: "other", source: "siren", facts: car, want: "false"},
		{name: "ER mobile siren 01:00, emitter not stated: the exception may apply", code: "entre-rios-de-minas", at: "2026-03-11T01:00:00-03:00", zone: "other", source: "siren", facts: mobile, want: "undetermined", article: "Art. 36, II", inReason: "facts.emitter"},
		{name: "ER ambulance in service 23:00: exception", code: "entre-rios-de-minas", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "siren", facts: inService, want: "false", inReason: "isento"},
		{name: "ER emergency vehicle, service not stated", code: "entre-rios-de-minas", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "siren", facts: unknownService, want: "undetermined", article: "Art. 36, II", inReason: "in_service"},
		{name: "ER factory whistle without duration stays Art. 36, V", code: "entre-rios-de-minas", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "siren", facts: factory, want: "undetermined", article: "Art. 36, V"},
		// Conceição de Macabu Art. 55, II: an example under the caput's "acima de 45 (quarenta e cinco) decibéis".
		{name: "CM police siren out of service, no level", code: "conceicao-de-macabu", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "siren", facts: out, want: "undetermined", article: "Art. 55, II"},
		{name: "CM car horn 45.1 dB", code: "conceicao-de-macabu", at: "2026-03-10T15:00:00-03:00", zone: "other", source: "siren", laeq: f(45.1), facts: car, want: "true", article: "Art. 55, II", limit: 45},
		{name: "CM car horn 45 dB", code: "conceicao-de-macabu", at: "2026-03-10T23:30:00-03:00", zone: "other", source: "siren", laeq: f(45), facts: car, want: "false", article: "Art. 55, II"},
		{name: "CM ambulance in service 80 dB: exception", code: "conceicao-de-macabu", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "siren", laeq: f(80), facts: inService, want: "false"},
		// Campina Grande do Sul Art. 88, II: a named example, any hour.
		{name: "CGS car horn", code: "campina-grande-do-sul", at: "2026-03-10T15:00:00-03:00", zone: "other", source: "siren", assume: true, facts: car, want: "true", article: "Art. 88, II"},
		{name: "CGS police in service: exception", code: "campina-grande-do-sul", at: "2026-03-10T15:00:00-03:00", zone: "other", source: "siren", assume: true, facts: map[string]any{"emitter": "police", "in_service": true}, want: "false"},
		// Campos Altos Art. 74, I, b: a named example; no written exception, only "evitáveis".
		{name: "CA police siren out of service", code: "campos-altos", at: "2026-03-10T15:00:00-03:00", zone: "other", source: "siren", facts: out, want: "true", article: "Art. 74, I, b"},
		{name: "CA ambulance in service: only 'evitáveis' reaches it", code: "campos-altos", at: "2026-03-10T15:00:00-03:00", zone: "other", source: "siren", facts: inService, want: "undetermined", article: "Art. 74, I, b"},
	})
}

// TestShowLicences: "Nenhum divertimento público poderá ser realizado sem
// licença" forbids the person who holds the show, not the administration:
// a show stated unlicensed is an infraction; the meetings the codes except
// are not.
func TestShowLicences(t *testing.T) {
	show := func(est string, licensed bool) map[string]any {
		return map[string]any{"establishment_type": est, "licensed": licensed}
	}
	baile := map[string]any{"event": "baile", "licensed": false}
	family := map[string]any{"event": "baile_familiar", "establishment_type": "club", "licensed": false}
	home := map[string]any{"establishment_type": "residence", "event": "festa", "licensed": false}
	runCases(t, []evalCase{
		// Entre Rios de Minas Art. 39: "Nenhum divertimento público poderá ser realizado sem licença prévia da Prefeitura."
		{name: "ER unlicensed show", code: "entre-rios-de-minas", at: "2026-03-10T20:00:00-03:00", zone: "other", source: "live_music", facts: show("public_event", false), want: "true", article: "Art. 39", penalty: "multa de 100% VR (Art. 46)"},
		{name: "ER licensed show", code: "entre-rios-de-minas", at: "2026-03-10T20:00:00-03:00", zone: "other", source: "live_music", facts: show("public_event", true), want: "false"},
		{name: "ER show, licence not stated: no presumption", code: "entre-rios-de-minas", at: "2026-03-10T20:00:00-03:00", zone: "other", source: "live_music", facts: map[string]any{"establishment_type": "public_event"}, want: "false"},
		{name: "ER bar with recorded music is no show: only Art. 35's clause", code: "entre-rios-de-minas", at: "2026-03-10T20:00:00-03:00", zone: "other", source: "amplified_music", facts: show("bar", false), want: "undetermined", article: "Art. 35, parágrafo único"},
		{name: "ER live music in a bar is a show", code: "entre-rios-de-minas", at: "2026-03-10T20:00:00-03:00", zone: "other", source: "live_music", facts: show("bar", false), want: "true", article: "Art. 39"},
		// Conceição de Macabu Art. 73: "Os espetáculos “shows”, bailes ou festas de caráter público dependem, para
		// realizar-se, de prévia licença da Prefeitura." Parágrafo único: clubs' meetings without paid entry, homes.
		{name: "CM unlicensed dance", code: "conceicao-de-macabu", at: "2026-03-10T21:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(40), facts: baile, want: "true", article: "Art. 73", penalty: "Arts. 74 e 152"},
		{name: "CM club's family dance: exception", code: "conceicao-de-macabu", at: "2026-03-10T21:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(40), facts: family, want: "false", inReason: "isento"},
		{name: "CM party at home: exception", code: "conceicao-de-macabu", at: "2026-03-10T21:00:00-03:00", zone: "residential", source: "amplified_music", laeq: f(40), facts: home, want: "false"},
		// Campos Altos Art. 82: "Nenhum divertimento público poderá ser realizado sem licença da Prefeitura."
		{name: "CA unlicensed nightclub", code: "campos-altos", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "amplified_music", facts: show("nightclub", false), want: "true", article: "Art. 82", penalty: "Art. 92"},
		// Campina Grande do Sul Arts. 94 and 106 (penalty Art. 108: 20% a 40%).
		{name: "CGS unlicensed show", code: "campina-grande-do-sul", at: "2026-03-10T21:00:00-03:00", zone: "other", source: "live_music", assume: true, facts: show("public_event", false), want: "true", article: "Art. 106", penalty: "20% a 40%"},
		{name: "CGS club's family dance: exception, only Art. 88's clause", code: "campina-grande-do-sul", at: "2026-03-10T21:00:00-03:00", zone: "other", source: "live_music", assume: true, facts: family, want: "undetermined", article: "Art. 88"},
		// Lapa Art. 109: "Nenhum divertimento público será realizado sem licença da Prefeitura."; Arts. 123–124.
		{name: "Lapa bar with recorded music, unlicensed (Art. 108 p.u.)", code: "lapa", at: "2026-03-10T20:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(50), facts: show("bar", false), want: "true", article: "Art. 109", penalty: "trinta (30) dias"},
		{name: "Lapa second time: interdiction", code: "lapa", at: "2026-03-10T20:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(50), prior: 1, facts: show("bar", false), want: "true", article: "Art. 109", penalty: "interdição"},
		{name: "Lapa restaurant with recorded music is no show", code: "lapa", at: "2026-03-10T20:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(50), facts: show("restaurant", false), want: "false"},
	})
}

// TestQuarriesAndBlasting: the special licence for explosives (Lapa Art.
// 153, Campos Altos Art. 160) and the urban-zone bans ("Não será permitida a
// exploração de pedreiras na zona urbana", Macabu Art. 124, Campina Grande do
// Sul Art. 171).
func TestQuarriesAndBlasting(t *testing.T) {
	unlicensed := map[string]any{"licensed": false}
	licensed := map[string]any{"licensed": true}
	runCases(t, []evalCase{
		{name: "Lapa blasting without the special licence", code: "lapa", at: "2026-03-10T10:00:00-03:00", zone: "quarry", source: "blasting", facts: unlicensed, want: "true", article: "Art. 153", penalty: "noventa (90) dias"},
		{name: "Lapa blasting, third infraction", code: "lapa", at: "2026-03-10T10:00:00-03:00", zone: "quarry", source: "blasting", prior: 2, facts: unlicensed, want: "true", article: "Art. 153", penalty: "multa de 50% do VRM (Art. 157, 3ª)"},
		{name: "Lapa blasting licensed: no general clause", code: "lapa", at: "2026-03-10T10:00:00-03:00", zone: "quarry", source: "blasting", facts: licensed, want: "false", article: "Art. 153"},
		{name: "Lapa blasting, licence not stated", code: "lapa", at: "2026-03-10T10:00:00-03:00", zone: "quarry", source: "blasting", want: "undetermined", article: "Art. 153", inReason: "facts.licensed"},
		{name: "CA blasting without licence", code: "campos-altos", at: "2026-03-10T10:00:00-03:00", zone: "quarry", source: "blasting", facts: unlicensed, want: "true", article: "Art. 160", penalty: "Art. 169"},
		{name: "CA blasting licensed", code: "campos-altos", at: "2026-03-10T10:00:00-03:00", zone: "quarry", source: "blasting", facts: licensed, want: "false", article: "Art. 160"},
		{name: "CM blasting in a residential zone", code: "conceicao-de-macabu", at: "2026-03-10T10:00:00-03:00", zone: "residential", source: "blasting", facts: licensed, want: "true", article: "Art. 124", penalty: "Arts. 127 e 152"},
		{name: "CM quarry machinery stated in the urban zone", code: "conceicao-de-macabu", at: "2026-03-10T10:00:00-03:00", zone: "other", source: "machinery", laeq: f(40), facts: map[string]any{"establishment_type": "quarry", "location": "zona_urbana"}, want: "true", article: "Art. 124"},
		{name: "CM licensed blasting at the quarry", code: "conceicao-de-macabu", at: "2026-03-10T10:00:00-03:00", zone: "quarry", source: "blasting", laeq: f(90), facts: licensed, want: "false"},
		{name: "CM blasting, zone unclassified", code: "conceicao-de-macabu", at: "2026-03-10T10:00:00-03:00", zone: "unclassified", source: "blasting", facts: licensed, want: "undetermined", article: "Art. 124"},
		{name: "CGS blasting in a residential zone", code: "campina-grande-do-sul", at: "2026-03-10T10:00:00-03:00", zone: "residential", source: "blasting", assume: true, want: "true", article: "Art. 171", penalty: "50% a 100%"},
		// A general clause says which source it judged.
		{name: "Lapa siren: the general clause names the siren", code: "lapa", at: "2026-03-10T10:00:00-03:00", zone: "other", source: "siren", want: "undetermined", article: "Art. 133", inReason: "fonte observada: sirene ou apito"},
	})
}

// TestMacabuEstablishmentsAfter22: Art. 146, § 1º "a partir das 22 horas não
// serão permitidos nos estabelecimentos os ruídos e sons excessivos" (read by
// Art. 55's 45 decibéis) and § 2º's extension, which lifts § 1º but not Art. 55.
func TestMacabuEstablishmentsAfter22(t *testing.T) {
	s := builtinSet(t)
	const para = "Art. 146, § 1º"
	for _, tc := range []struct {
		name, at string
		laeq     float64
		facts    map[string]any
		want     Tri
		cited    bool // § 1º among the articles
	}{
		{"21:59 above 45: Art. 55 only", "2026-03-10T21:59:00-03:00", 50, map[string]any{"establishment_type": "bar"}, True, false},
		{"22:00 above 45: § 1º too", "2026-03-10T22:00:00-03:00", 50, map[string]any{"establishment_type": "bar"}, True, true},
		{"23:59 above 45: § 1º too", "2026-03-10T23:59:00-03:00", 45.5, map[string]any{"establishment_type": "nightclub"}, True, true},
		{"00:00 after midnight: § 1º names no end", "2026-03-11T00:00:00-03:00", 50, map[string]any{"establishment_type": "bar"}, True, false},
		{"22:30 at 45: not excessive", "2026-03-10T22:30:00-03:00", 45, map[string]any{"establishment_type": "bar"}, False, true},
		{"extension granted: § 1º lifted, Art. 55 stays", "2026-03-10T23:00:00-03:00", 50, map[string]any{"establishment_type": "club", "hours_extension_granted": true}, True, false},
		{"acoustic isolation without the extension: § 1º applies", "2026-03-10T23:00:00-03:00", 50, map[string]any{"establishment_type": "club", "acoustic_isolation": true}, True, true},
		{"no establishment: § 1º is about establishments", "2026-03-10T23:00:00-03:00", 50, nil, True, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := s.Code("conceicao-de-macabu")
			at, _ := time.Parse(time.RFC3339, tc.at)
			l := tc.laeq
			v := Evaluate(c, Observation{At: at, Zone: "other", Source: "amplified_music", LAeq: &l, Facts: tc.facts})
			if v.Violation != tc.want || slices.Contains(v.Articles, para) != tc.cited || v.Article != "Art. 55" {
				t.Errorf("got %v %s %v, want %v with § 1º cited=%v (reason: %s)", v.Violation, v.Article, v.Articles, tc.want, tc.cited, v.Reason)
			}
		})
	}
}

// TestExceptions: the exceptions the articles write themselves.
func TestExceptions(t *testing.T) {
	factory := func(extra map[string]any) map[string]any {
		m := map[string]any{"establishment_type": "factory", "operating": true}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	runCases(t, []evalCase{
		// Campos Altos Art. 199, I, b: "aos domingos e feriados nacionais os estabelecimentos permanecerão fechados";
		// § 2º: "poderão funcionar além do horário estabelecido na letra “a” e nos dias referidos na letra “B”,
		// mediante permissão da autoridade competente".
		{name: "CA factory on Sunday without permission", code: "campos-altos", at: "2026-03-08T10:00:00-03:00", zone: "industrial", source: "generic", facts: factory(nil), want: "true", article: "Art. 199, I"},
		{name: "CA factory on Sunday with permission", code: "campos-altos", at: "2026-03-08T10:00:00-03:00", zone: "industrial", source: "generic", facts: factory(map[string]any{"permission": true}), want: "false", inReason: "isento"},
		{name: "CA factory on Good Friday 2026 with permission", code: "campos-altos", at: "2026-04-03T10:00:00-03:00", zone: "industrial", source: "generic", facts: factory(map[string]any{"permission": true}), want: "false"},
		{name: "CA factory on Good Friday 2026 without permission", code: "campos-altos", at: "2026-04-03T10:00:00-03:00", zone: "industrial", source: "generic", facts: factory(nil), want: "true", article: "Art. 199, I"},
		{name: "CA factory weekday 17:00 without permission", code: "campos-altos", at: "2026-03-10T17:00:00-03:00", zone: "industrial", source: "generic", facts: factory(nil), want: "true", article: "Art. 199, I"},
		{name: "CA factory weekday 16:59", code: "campos-altos", at: "2026-03-10T16:59:00-03:00", zone: "industrial", source: "generic", facts: factory(nil), want: "false"},
		// Campina Grande do Sul Art. 89: "os sinos não poderão tocar antes das 5 (cinco) e depois das 22 (vinte e
		// duas) horas, salvo os toques de rebates por ocasião de incêndios ou inundações."
		{name: "CGS bell 22:01", code: "campina-grande-do-sul", at: "2026-03-10T22:01:00-03:00", zone: "other", source: "church_bell", assume: true, want: "true", article: "Art. 89"},
		{name: "CGS bell 22:00", code: "campina-grande-do-sul", at: "2026-03-10T22:00:00-03:00", zone: "other", source: "church_bell", assume: true, want: "false", article: "Art. 89"},
		{name: "CGS bell 04:59", code: "campina-grande-do-sul", at: "2026-03-10T04:59:00-03:00", zone: "other", source: "church_bell", assume: true, want: "true", article: "Art. 89"},
		{name: "CGS fire alarm bell at 02:00: exception", code: "campina-grande-do-sul", at: "2026-03-10T02:00:00-03:00", zone: "other", source: "church_bell", assume: true, facts: map[string]any{"purpose": "fire_alarm"}, want: "false", article: "Art. 89", inReason: "isento"},
		{name: "CGS flood alarm bell at 23:00: exception", code: "campina-grande-do-sul", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "church_bell", assume: true, facts: map[string]any{"purpose": "flood_alarm", "mechanism": "bell"}, want: "false", article: "Art. 89"},
	})
}

// TestSupersededText: Campina Grande do Sul's bars close at 23:00 under Art.
// 87, § 2º (Lei nº 28/2001), not at 22:00 under the earlier Art. 210, II, b;
// the verdict and the printed schedule say so.
func TestSupersededText(t *testing.T) {
	bar := map[string]any{"establishment_type": "bar", "operating": true}
	const why = "prevalece sobre o Art. 210, II, b"
	runCases(t, []evalCase{
		{name: "bar Tuesday 22:30: Art. 87 governs", code: "campina-grande-do-sul", at: "2026-03-10T22:30:00-03:00", zone: "other", source: "generic", assume: true, facts: bar, want: "false", article: "Art. 87, § 2º", inReason: why},
		{name: "bar Tuesday 23:00: past Art. 87's hour", code: "campina-grande-do-sul", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "generic", assume: true, facts: bar, want: "true", article: "Art. 87, § 2º", inReason: why},
		{name: "bar Tuesday 06:30: open before 07:00", code: "campina-grande-do-sul", at: "2026-03-10T06:30:00-03:00", zone: "other", source: "generic", assume: true, facts: bar, want: "true", article: "Art. 87, § 2º", inReason: why},
	})
	c, _ := builtinSet(t).Code("campina-grande-do-sul")
	if sched := Schedule(c); !strings.Contains(strings.Join(strings.Fields(sched), " "), why+" (\"II - de 6,00 às 22 horas: a) padarias; b) bares.\")") {
		t.Errorf("the schedule does not say Art. 87 supersedes Art. 210, II, b:\n%s", sched)
	}
}

// TestFalseVerdictCitations: a false verdict that turns on a rule's hours,
// its closed list or an exemption another article grants names that rule and
// says why it did not apply.
func TestFalseVerdictCitations(t *testing.T) {
	s := builtinSet(t)
	for _, tc := range []struct {
		name, code, at, source string
		laeq                   float64
		facts                  map[string]any
		articles               []string
		inReason               string
	}{
		{"ER Art. 36's window: 21:59", "entre-rios-de-minas", "2026-03-10T21:59:00-03:00", "amplified_music", 70,
			map[string]any{"establishment_type": "residence"}, []string{"Art. 36"}, "não se aplica às 21:59; vale só das 22:00 às 07:00"},
		{"ER Art. 36's window: 07:00", "entre-rios-de-minas", "2026-03-11T07:00:00-03:00", "amplified_music", 70,
			map[string]any{"establishment_type": "residence"}, []string{"Art. 36"}, "não se aplica às 07:00"},
		{"ER vehicle horn 21:59: item II only, not the factory whistle", "entre-rios-de-minas", "2026-03-10T21:59:00-03:00", "siren", -1,
			map[string]any{"emitter": "car"}, []string{"Art. 36, II"}, "vale só das 22:00 às 07:00"},
		{"ER Art. 43's closed list: a school is not on it", "entre-rios-de-minas", "2026-03-10T20:00:00-03:00", "live_music", -1,
			map[string]any{"establishment_type": "public_event", "poi_type": "school", "distance_m_to_sensitive_poi": 50.0, "licensed": true},
			[]string{"Art. 36", "Art. 43"}, "escola não está na lista fechada do artigo (hospital, casa de saúde e maternidade)"},
		{"ER Art. 43's radius: exactly 100 m is outside", "entre-rios-de-minas", "2026-03-10T20:00:00-03:00", "live_music", -1,
			map[string]any{"establishment_type": "public_event", "poi_type": "hospital", "distance_m_to_sensitive_poi": 100.0, "licensed": true},
			[]string{"Art. 36", "Art. 43"}, "a 100 m, fora do raio de 100 m"},
		{"Lapa Art. 100: public-utility event", "lapa", "2026-03-10T23:00:00-03:00", "amplified_music", 75,
			map[string]any{"establishment_type": "public_event", "public_utility_event": true}, []string{"Art. 96", "Art. 100"}, "pelo Art. 100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := s.Code(tc.code)
			at, _ := time.Parse(time.RFC3339, tc.at)
			o := Observation{At: at, Zone: "other", Source: tc.source, Facts: tc.facts}
			if tc.laeq >= 0 {
				o.LAeq = &tc.laeq
			}
			v := Evaluate(c, o)
			if v.Violation != False || !slices.Equal(v.Articles, tc.articles) || !strings.Contains(v.Reason, tc.inReason) {
				t.Errorf("got %v %v (%s), want false %v with %q", v.Violation, v.Articles, v.Reason, tc.articles, tc.inReason)
			}
		})
	}
}

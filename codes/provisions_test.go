package codes

import "testing"

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

package codes

import "testing"

// The readings of docs/codes-conventions.md, one table per kind of reading
// error, with cases written from the seed texts (codes/seeds). Dates: 10 Mar
// 2026 is a Tuesday; 13 Jun and 9 Feb are Lapa's local holidays; 21 Apr is
// Tiradentes; 25 Dec is Christmas.

const (
	er = "entre-rios-de-minas"
	cm = "conceicao-de-macabu"
	ca = "campos-altos"
	cg = "campina-grande-do-sul"
)

func est(t string, kv ...any) map[string]any {
	m := map[string]any{"establishment_type": t}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func facts(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// 1. A conduct the code prohibits without a number is the infraction when
// the observation states it.
func TestReadingConducts(t *testing.T) {
	runCases(t, []evalCase{
		{name: "ER algazarra in a bar by day", code: er, at: "2026-03-10T10:00:00-03:00", zone: "other", source: "crowd_shouting", facts: est("bar"), want: "true", article: "Art. 35, parágrafo único", penalty: "Art. 37"},
		{name: "ER desordem in a nightclub at 03:00", code: er, at: "2026-03-11T03:00:00-03:00", zone: "other", source: "generic", facts: est("nightclub", "event", "desordem"), want: "true", article: "Art. 35, parágrafo único"},
		{name: "ER algazarra in a restaurant that sells alcohol", code: er, at: "2026-03-10T20:00:00-03:00", zone: "other", source: "crowd_shouting", facts: est("restaurant", "alcohol_sold", true), want: "true", article: "Art. 35, parágrafo único"},
		{name: "ER algazarra where no alcohol is sold, by day: no provision", code: er, at: "2026-03-10T15:00:00-03:00", zone: "other", source: "crowd_shouting", facts: est("restaurant", "alcohol_sold", false), want: "false"},
		{name: "ER algazarra in the street at night: the caput without a number", code: er, at: "2026-03-10T23:30:00-03:00", zone: "logradouro_publico", source: "crowd_shouting", want: "undetermined", article: "Art. 36"},
		{name: "CM desordem in a bar", code: cm, at: "2026-03-10T14:00:00-03:00", zone: "other", source: "generic", facts: est("bar", "event", "desordem"), want: "true", article: "Art. 54, parágrafo único", penalty: "cassada a licença"},
		{name: "CM algazarra in a residence: only the 45 dB, not measured", code: cm, at: "2026-03-10T14:00:00-03:00", zone: "residential", source: "crowd_shouting", facts: est("residence"), want: "undetermined", article: "Art. 55"},
		{name: "CA algazarra inside the market by location", code: ca, at: "2026-03-10T10:00:00-03:00", zone: "other", source: "crowd_shouting", facts: facts("location", "mercado_municipal"), want: "true", article: "Art. 529, b", penalty: "Cr$ 50,00 a Cr$ 200,00"},
		{name: "CA tumulto inside the market", code: ca, at: "2026-03-10T10:00:00-03:00", zone: "municipal_market", source: "generic", facts: facts("event", "desordem"), want: "true", article: "Art. 529, b"},
		{name: "CA desordem in a bar", code: ca, at: "2026-03-10T21:00:00-03:00", zone: "other", source: "generic", facts: est("bar", "event", "desordem"), want: "true", article: "Art. 73, parágrafo único", penalty: "cassada a licença"},
		{name: "CA vendor hawking with algazarra at the fair", code: ca, at: "2026-03-14T07:30:00-03:00", zone: "logradouro_publico", source: "crowd_shouting", facts: facts("location", "feira_livre"), want: "true", article: "Art. 544, a", penalty: "Art. 545"},
		{name: "CA algazarra in a street that is no fair: the caput", code: ca, at: "2026-03-10T10:00:00-03:00", zone: "logradouro_publico", source: "crowd_shouting", want: "undetermined", article: "Art. 74, I"},
		{name: "Lapa desordem in a bar: only the general clause", code: "lapa", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "generic", facts: est("bar", "event", "desordem"), want: "undetermined", article: "Art. 133"},
		{name: "CM desordem in the street, no level: 45 dB not measured", code: cm, at: "2026-03-10T23:00:00-03:00", zone: "logradouro_publico", source: "generic", facts: facts("event", "desordem"), want: "undetermined", article: "Art. 55"},
		{name: "CGS algazarra at a bar's door (imediações)", code: cg, at: "2026-03-10T21:00:00-03:00", zone: "logradouro_publico", source: "crowd_shouting", assume: true, facts: est("bar"), want: "true", article: "Art. 87, § 1º", penalty: "cassação da licença"},
	})
}

// 2. A stated source whose level decides but was not measured is
// undetermined; a generic source without a level shows no sound.
func TestReadingUnmeasuredLevels(t *testing.T) {
	runCases(t, []evalCase{
		{name: "Lapa restaurant live music inside the XIII hours, no level", code: "lapa", at: "2026-03-10T20:00:00-03:00", zone: "other", source: "live_music", facts: est("restaurant"), want: "undetermined", article: "Art. 96", limit: 65},
		{name: "Lapa church with amplified worship, no level", code: "lapa", at: "2026-03-10T10:00:00-03:00", zone: "hospital_surroundings", source: "amplified_worship", facts: est("church_or_temple"), want: "undetermined", article: "Art. 96", limit: 45},
		{name: "CM amplified worship, no level", code: cm, at: "2026-03-10T19:00:00-03:00", zone: "other", source: "amplified_worship", want: "undetermined", article: "Art. 55", limit: 45},
		{name: "CM bells at 19:00, no level: Art. 57 decides", code: cm, at: "2026-03-10T19:00:00-03:00", zone: "other", source: "church_bell", want: "false", article: "Art. 57", limit: 45},
		{name: "Lapa generic source, no level, bar open at 23:00", code: "lapa", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "generic", facts: est("bar", "operating", true), want: "false", article: "Art. 295, III"},
		{name: "ER generic source, no level, at night", code: er, at: "2026-03-10T23:30:00-03:00", zone: "residential", source: "generic", want: "false", limit: -1, inReason: "nada mostra ruído"},
		{name: "ER generic source with a level at night: the caput", code: er, at: "2026-03-10T23:30:00-03:00", zone: "residential", source: "generic", laeq: f(70), want: "undetermined", article: "Art. 36"},
		{name: "CA generic source, no level, shop open on a Tuesday morning", code: ca, at: "2026-03-10T10:00:00-03:00", zone: "other", source: "generic", facts: est("commerce", "operating", true), want: "false"},
		{name: "CGS generic source, no level, bar open at 23:30 on a Tuesday", code: cg, at: "2026-03-10T23:30:00-03:00", zone: "other", source: "generic", assume: true, facts: est("bar", "operating", true), want: "true", article: "Art. 87, § 2º"},
		{name: "CGS generic source, no level: nothing", code: cg, at: "2026-03-10T23:30:00-03:00", zone: "other", source: "generic", assume: true, want: "false"},
	})
}

// 3. An unclassified zone decides when every candidate limit agrees.
func TestReadingUnclassifiedZone(t *testing.T) {
	runCases(t, []evalCase{
		{name: "day, above 45 and 65", code: "lapa", at: "2026-03-10T10:00:00-03:00", zone: "unclassified", source: "amplified_music", laeq: f(66), facts: bar, want: "true", article: "Art. 96", limit: -1, penalty: "Art. 102"},
		{name: "day, at 45: complies with both", code: "lapa", at: "2026-03-10T10:00:00-03:00", zone: "unclassified", source: "live_music", laeq: f(45), facts: est("restaurant"), want: "false", limit: -1},
		{name: "day, 50: above 45, not above 65", code: "lapa", at: "2026-03-10T10:00:00-03:00", zone: "unclassified", source: "amplified_music", laeq: f(50), facts: bar, want: "undetermined", article: "Art. 96", limit: -1},
		{name: "22:00 belongs to the night: 61 above 40 and 60", code: "lapa", at: "2026-03-10T22:00:00-03:00", zone: "unclassified", source: "amplified_music", laeq: f(61), facts: bar, want: "true", article: "Art. 96"},
		{name: "21:59 is still day: 61 between 45 and 65", code: "lapa", at: "2026-03-10T21:59:00-03:00", zone: "unclassified", source: "amplified_music", laeq: f(61), facts: bar, want: "undetermined"},
		{name: "public utility event exempt in any zone", code: "lapa", at: "2026-03-10T23:00:00-03:00", zone: "unclassified", source: "amplified_music", laeq: f(80), facts: est("public_event", "public_utility_event", true), want: "false"},
		{name: "no level and no zone", code: "lapa", at: "2026-03-10T23:00:00-03:00", zone: "unclassified", source: "amplified_music", facts: bar, want: "undetermined", article: "Art. 96"},
		{name: "CM has one limit everywhere", code: cm, at: "2026-03-10T23:00:00-03:00", zone: "unclassified", source: "amplified_music", laeq: f(44), want: "false", limit: 45},
	})
}

// 4. Radius and proximity rules read the stated distance and type of place
// against the code's own closed list.
func TestReadingProximity(t *testing.T) {
	ad := func(kv ...any) map[string]any {
		return facts(append([]any{"licensed", true, "content", "commercial"}, kv...)...)
	}
	runCases(t, []evalCase{
		{name: "Lapa 98: 90 m from a cemetery", code: "lapa", at: "2026-03-10T11:00:00-03:00", zone: "other", source: "loudspeaker_advertising", facts: ad("poi_type", "cemetery", "distance_m_to_sensitive_poi", 90.0), want: "true", article: "Art. 98"},
		{name: "Lapa 98: 99 m from a funeral chapel", code: "lapa", at: "2026-03-10T11:00:00-03:00", zone: "other", source: "loudspeaker_advertising", facts: ad("poi_type", "funeral_chapel", "distance_m_to_sensitive_poi", 99.0), want: "true", article: "Art. 98"},
		{name: "Lapa 98: a church is not on the list", code: "lapa", at: "2026-03-10T11:00:00-03:00", zone: "other", source: "loudspeaker_advertising", facts: ad("poi_type", "church", "distance_m_to_sensitive_poi", 30.0), want: "false"},
		{name: "Lapa 98: exactly 100 m from a hospital is outside", code: "lapa", at: "2026-03-10T11:00:00-03:00", zone: "other", source: "loudspeaker_advertising", facts: ad("poi_type", "hospital", "distance_m_to_sensitive_poi", 100.0), want: "false"},
		{name: "Lapa 98: the historic centre needs no distance", code: "lapa", at: "2026-03-10T11:00:00-03:00", zone: "other", source: "loudspeaker_advertising", facts: ad("in_centro_historico", true), want: "true", article: "Art. 98"},
		{name: "Lapa 98: 50 m in a zone near a hospital", code: "lapa", at: "2026-03-10T11:00:00-03:00", zone: "near_hospital", source: "loudspeaker_advertising", facts: ad("distance_m_to_sensitive_poi", 50.0), want: "true", article: "Art. 98"},
		{name: "Lapa 98: hospital surroundings without a distance", code: "lapa", at: "2026-03-10T11:00:00-03:00", zone: "hospital_surroundings", source: "loudspeaker_advertising", facts: ad(), want: "undetermined", article: "Art. 98", inReason: "não prova a distância"},
		{name: "CM 58: 80 m from an asylum before 7", code: cm, at: "2026-03-10T06:30:00-03:00", zone: "other", source: "construction_work", facts: facts("poi_type", "asylum", "distance_m_to_sensitive_poi", 80.0), want: "true", article: "Art. 58"},
		{name: "CM 58: 200 m from a hospital — the text does not say", code: cm, at: "2026-03-10T06:30:00-03:00", zone: "other", source: "construction_work", facts: facts("poi_type", "hospital", "distance_m_to_sensitive_poi", 200.0), want: "undetermined", article: "Art. 58"},
		{name: "CM 58: 400 m from a school is not near; 45 dB applies", code: cm, at: "2026-03-10T06:30:00-03:00", zone: "other", source: "construction_work", laeq: f(80), facts: facts("poi_type", "school", "distance_m_to_sensitive_poi", 400.0), want: "true", article: "Art. 55"},
		{name: "CM 58: a zone near a school is near, whatever the distance to a church", code: cm, at: "2026-03-10T06:30:00-03:00", zone: "near_school", source: "construction_work", facts: facts("poi_type", "church", "distance_m_to_sensitive_poi", 500.0), want: "true", article: "Art. 58"},
		{name: "CM 58: residential zone at 18:01", code: cm, at: "2026-03-10T18:01:00-03:00", zone: "residential", source: "machinery", want: "true", article: "Art. 58"},
		{name: "CGS 90: a public building is not on the list", code: cg, at: "2026-03-10T06:30:00-03:00", zone: "other", source: "construction_work", assume: true, facts: facts("poi_type", "public_building", "distance_m_to_sensitive_poi", 30.0), want: "undetermined", article: "Art. 88"},
		{name: "CGS 90: 50 m from an asylum at 23:00", code: cg, at: "2026-03-10T23:00:00-03:00", zone: "other", source: "machinery", assume: true, facts: facts("poi_type", "asylum", "distance_m_to_sensitive_poi", 50.0), want: "true", article: "Art. 90"},
		{name: "CGS 90: residential zone at 21:00 is within the hours", code: cg, at: "2026-03-10T21:00:00-03:00", zone: "residential", source: "construction_work", assume: true, want: "false", article: "Art. 90"},
	})
}

// 5. A named example of the prohibited noise is a conduct, not the
// qualitative caput; under a numeric caput the number governs.
func TestReadingNamedExamples(t *testing.T) {
	runCases(t, []evalCase{
		{name: "CGS engine without muffler at 03:00", code: cg, at: "2026-03-11T03:00:00-03:00", zone: "residential", source: "vehicle_without_muffler", assume: true, want: "true", article: "Art. 88, I", penalty: "Art. 92"},
		{name: "CGS machinery with a defective muffler", code: cg, at: "2026-03-10T15:00:00-03:00", zone: "industrial", source: "machinery", assume: true, facts: facts("muffler_defective", true), want: "true", article: "Art. 88, I"},
		{name: "CGS gunfire without just cause", code: cg, at: "2026-03-10T15:00:00-03:00", zone: "other", source: "firearm", assume: true, want: "true", article: "Art. 88, IV", penalty: "Art. 157"},
		{name: "CA engine without muffler at 23:00", code: ca, at: "2026-03-10T23:00:00-03:00", zone: "other", source: "vehicle_without_muffler", want: "true", article: "Art. 74, I, a"},
		{name: "CA gunfire with just cause", code: ca, at: "2026-03-10T23:00:00-03:00", zone: "other", source: "firearm", facts: facts("just_cause", true), want: "false"},
		{name: "ER engine without muffler at 23:30", code: er, at: "2026-03-10T23:30:00-03:00", zone: "other", source: "vehicle_without_muffler", want: "true", article: "Art. 36, I"},
		{name: "ER defective muffler at 02:00", code: er, at: "2026-03-11T02:00:00-03:00", zone: "other", source: "machinery", facts: facts("muffler_defective", true), want: "true", article: "Art. 36, I"},
		{name: "ER defective muffler at noon: outside the window", code: er, at: "2026-03-11T12:00:00-03:00", zone: "other", source: "machinery", facts: facts("muffler_defective", true), want: "false"},
		{name: "CM engine without muffler at 50 dB", code: cm, at: "2026-03-10T15:00:00-03:00", zone: "other", source: "vehicle_without_muffler", laeq: f(50), want: "true", article: "Art. 55"},
		{name: "CM licensed quarry blasting: the licence displaces 45 dB", code: cm, at: "2026-03-10T10:00:00-03:00", zone: "quarry", source: "blasting", laeq: f(95), facts: facts("licensed", true), want: "false"},
		{name: "CM quarry blasting without licence at 95 dB", code: cm, at: "2026-03-10T10:00:00-03:00", zone: "quarry", source: "blasting", laeq: f(95), want: "true", article: "Art. 55"},
		{name: "CM engine without muffler at 40 dB", code: cm, at: "2026-03-10T15:00:00-03:00", zone: "other", source: "vehicle_without_muffler", laeq: f(40), want: "false"},
	})
}

// 6. A provision that is hard to read is read as far as its text allows.
func TestReadingHardText(t *testing.T) {
	runCases(t, []evalCase{
		{name: "ER 63 § 2º: truncated paragraph restored by the caput", code: er, at: "2026-03-10T11:00:00-03:00", zone: "other", source: "loudspeaker_advertising", facts: facts("licensed", false), want: "true", article: "Art. 63, § 2º", penalty: "multa de 50% VR (Art. 66)"},
		{name: "ER 63 § 2º and Art. 36, III at night, even licensed", code: er, at: "2026-03-10T22:30:00-03:00", zone: "other", source: "loudspeaker_advertising", facts: facts("licensed", true), want: "true", article: "Art. 36, III"},
		{name: "ER 63 § 2º does not reach electoral propaganda", code: er, at: "2026-03-10T11:00:00-03:00", zone: "other", source: "loudspeaker_advertising", facts: facts("content", "electoral"), want: "false"},
		{name: "CM 56: the law it names has no number", code: cm, at: "2026-03-10T15:00:00-03:00", zone: "other", source: "loudspeaker_advertising", laeq: f(40), facts: facts("mobile", true), want: "undetermined", article: "Art. 56"},
		{name: "CA 74 I f: the siren's duration is illegible", code: ca, at: "2026-03-10T15:00:00-03:00", zone: "industrial", source: "siren", dur: f(10), want: "undetermined", article: "Art. 74, I, f"},
		{name: "CM chapter clause points to Art. 153: the penalties are Art. 152's", code: cm, at: "2026-03-10T15:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(60), want: "true", penalty: "Arts. 59 e 152"},
	})
}

// 7. Every schedule that touches noise: industries, commerce, restaurants,
// machines that interfere with radio reception.
func TestReadingSchedules(t *testing.T) {
	op := func(t string, kv ...any) map[string]any { return est(t, append([]any{"operating", true}, kv...)...) }
	runCases(t, []evalCase{
		{name: "Lapa industry on a Saturday evening: not a dia útil, not mentioned", code: "lapa", at: "2026-03-14T20:00:00-03:00", zone: "industrial", source: "machinery", facts: op("factory"), want: "undetermined", article: "Art. 133"},
		{name: "Lapa industry on 13 June (local holiday)", code: "lapa", at: "2026-06-13T10:00:00-03:00", zone: "industrial", source: "generic", facts: op("industry"), want: "true", article: "Art. 294, I", penalty: "Art. 299"},
		{name: "Lapa industry at 05:30 on a Tuesday", code: "lapa", at: "2026-03-10T05:30:00-03:00", zone: "industrial", source: "generic", facts: op("factory"), want: "true", article: "Art. 294, I"},
		{name: "Lapa industry of continuous work on a Sunday", code: "lapa", at: "2026-03-15T10:00:00-03:00", zone: "industrial", source: "generic", facts: op("factory", "exempt_activity", true), want: "false"},
		{name: "Lapa shop on a Saturday at 15:30", code: "lapa", at: "2026-03-14T15:30:00-03:00", zone: "other", source: "generic", facts: op("commerce"), want: "true", article: "Art. 294, II"},
		{name: "Lapa shop on a Saturday at 14:59", code: "lapa", at: "2026-03-14T14:59:00-03:00", zone: "other", source: "generic", facts: op("commerce"), want: "false"},
		{name: "Lapa shop at 20:00 on 10 December: season until 22:00", code: "lapa", at: "2026-12-10T20:00:00-03:00", zone: "other", source: "generic", facts: op("commerce"), want: "false"},
		{name: "Lapa shop at 22:00 on 10 December", code: "lapa", at: "2026-12-10T22:00:00-03:00", zone: "other", source: "generic", facts: op("commerce"), want: "true"},
		{name: "Lapa shop on Christmas", code: "lapa", at: "2026-12-25T11:00:00-03:00", zone: "other", source: "generic", facts: op("commerce"), want: "true", inReason: "fechado"},
		{name: "Lapa shop at 19:00 with the extension granted", code: "lapa", at: "2026-05-08T19:00:00-03:00", zone: "other", source: "generic", facts: op("commerce", "hours_extension_granted", true), want: "false"},
		{name: "CA shop on a Saturday at 19:30", code: ca, at: "2026-03-14T19:30:00-03:00", zone: "other", source: "generic", facts: op("commerce"), want: "true", article: "Art. 199, II", penalty: "Cr$ 50,00"},
		{name: "CA shop on a Saturday at 19:30 with the Prefeito's extension", code: ca, at: "2026-03-14T19:30:00-03:00", zone: "other", source: "generic", facts: op("commerce", "hours_extension_granted", true), want: "false"},
		{name: "CA shop on 24 December at 21:00 with the extension", code: ca, at: "2026-12-24T21:00:00-03:00", zone: "other", source: "generic", facts: op("commerce", "hours_extension_granted", true), want: "false"},
		{name: "CA shop on Tiradentes", code: ca, at: "2026-04-21T10:00:00-03:00", zone: "other", source: "generic", facts: op("commerce"), want: "true"},
		{name: "CGS shop on a Sunday: Art. 208 does not mention it", code: cg, at: "2026-03-15T15:00:00-03:00", zone: "other", source: "generic", assume: true, facts: op("commerce"), want: "false"},
		{name: "CGS shop on a Saturday at 13:00", code: cg, at: "2026-03-14T13:00:00-03:00", zone: "other", source: "generic", assume: true, facts: op("commerce"), want: "true", article: "Art. 208", penalty: "Art. 213", noPen: "cassação"},
		{name: "CGS shop on a Saturday at 13:00 with authorisation", code: cg, at: "2026-03-14T13:00:00-03:00", zone: "other", source: "generic", assume: true, facts: op("commerce", "hours_extension_granted", true), want: "false"},
		{name: "CGS restaurant off the BR-116 at 23:30", code: cg, at: "2026-03-10T23:30:00-03:00", zone: "other", source: "generic", assume: true, facts: op("restaurant", "located_on_highway", false), want: "true", article: "Art. 210, IV, a", penalty: "cassação da licença"},
		{name: "CGS restaurant at 23:30, highway unknown", code: cg, at: "2026-03-10T23:30:00-03:00", zone: "other", source: "generic", assume: true, facts: op("restaurant"), want: "undetermined", article: "Art. 210, IV, a", inReason: "located_on_highway"},
		{name: "CGS restaurant on the BR-116 at 23:30", code: cg, at: "2026-03-10T23:30:00-03:00", zone: "other", source: "generic", assume: true, facts: op("restaurant", "located_on_highway", true), want: "false"},
		{name: "CGS radio interference on a Tuesday at 19:00", code: cg, at: "2026-03-10T19:00:00-03:00", zone: "industrial", source: "electrical_interference", assume: true, want: "true", article: "Art. 91, parágrafo único"},
		{name: "CGS radio interference on a Saturday at 19:00: not a dia útil", code: cg, at: "2026-03-14T19:00:00-03:00", zone: "industrial", source: "electrical_interference", assume: true, want: "undetermined", article: "Art. 91"},
		{name: "CGS radio interference on Tiradentes", code: cg, at: "2026-04-21T10:00:00-03:00", zone: "industrial", source: "electrical_interference", assume: true, want: "true", article: "Art. 91, parágrafo único"},
	})
}

// 8. The penalty is the violated article's own, with its accessory
// sanctions.
func TestReadingPenalties(t *testing.T) {
	runCases(t, []evalCase{
		{name: "CGS bar after hours: Art. 92 and the cassação of Art. 87 § 3º", code: cg, at: "2026-03-10T23:30:00-03:00", zone: "other", source: "generic", assume: true, facts: est("bar", "operating", true), want: "true", penalty: "multa de 20% a 50% VR (Art. 92); cassação da licença (Art. 87, § 3º)", noPen: "Art. 213"},
		{name: "CA gunfire: Art. 75 and Art. 169, no cassação", code: ca, at: "2026-03-10T23:00:00-03:00", zone: "other", source: "firearm", want: "true", penalty: "Art. 164, II: multa (Art. 169", noPen: "cassa"},
		{name: "CA loudspeaker without licence: Art. 75 only", code: ca, at: "2026-03-10T11:00:00-03:00", zone: "other", source: "loudspeaker_advertising", facts: facts("licensed", false), want: "true", penalty: "multa de 10% SM_REGIONAL (Art. 75)", noPen: "cassa"},
		{name: "ER fireworks at night in a public place: Art. 37 and Art. 73", code: er, at: "2026-03-10T23:00:00-03:00", zone: "logradouro_publico", source: "fireworks", want: "true", article: "Art. 36, IV", penalty: "Art. 71, I: multa de 200% VR (Art. 73)"},
		{name: "CM fireworks in a public place: its own chapter", code: cm, at: "2026-03-10T21:00:00-03:00", zone: "logradouro_publico", source: "fireworks", want: "true", article: "Art. 109, I", penalty: "responsabilidade civil e criminal"},
		{name: "CGS fireworks in a public place: Art. 92 and Art. 157", code: cg, at: "2026-03-10T21:00:00-03:00", zone: "logradouro_publico", source: "fireworks", assume: true, want: "true", article: "Art. 88, V", penalty: "Art. 155, I: multa de 50% a 200% VR (Art. 157)"},
		{name: "CGS loudspeaker without licence: Art. 92 and Art. 194", code: cg, at: "2026-03-10T11:00:00-03:00", zone: "other", source: "loudspeaker_advertising", assume: true, facts: facts("licensed", false), want: "true", article: "Art. 88, III", penalty: "Art. 186: multa de 20% a 40% VR (Art. 194)"},
		{name: "CGS reincidência doubles a punished repeat", code: cg, at: "2026-03-10T21:00:00-03:00", zone: "other", source: "crowd_shouting", assume: true, prior: 1, facts: est("bar", "prior_punished", true), want: "true", penalty: "em dobro por reincidência (Art. 8): 40% a 100%"},
		{name: "Lapa bar after hours: Art. 299 ladder", code: "lapa", at: "2026-03-11T00:30:00-03:00", zone: "other", source: "generic", prior: 3, facts: est("bar", "operating", true), want: "true", penalty: "4ª infração: suspensão do Alvará de Licença"},
	})
}

// 9. Siting and licensing provisions addressed to the administration:
// undetermined with a warning, never false, never a penalty.
func TestReadingLicensingReview(t *testing.T) {
	runCases(t, []evalCase{
		{name: "Lapa 117: nightclub 150 m from a prison", code: "lapa", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(55), facts: est("nightclub", "poi_type", "prison", "distance_m_to_sensitive_poi", 150.0), want: "undetermined", article: "Art. 117", warning: "revisão do licenciamento (Art. 117)"},
		{name: "Lapa 117 keeps its warning when Art. 96 is violated", code: "lapa", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(70), facts: est("bar", "poi_type", "church", "distance_m_to_sensitive_poi", 199.0), want: "true", article: "Art. 96", warning: "Art. 117"},
		{name: "Lapa 117: exactly 200 m is not \"menos de 200m\"", code: "lapa", at: "2026-03-10T23:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(55), facts: est("bar", "poi_type", "church", "distance_m_to_sensitive_poi", 200.0), want: "false", noWarn: true},
		{name: "Lapa 117: mechanical music in a restaurant is not a divertimento público", code: "lapa", at: "2026-03-10T20:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(55), facts: est("restaurant", "poi_type", "school", "distance_m_to_sensitive_poi", 100.0), want: "false", noWarn: true},
		{name: "Lapa 117: a zone near a hospital does not prove the distance", code: "lapa", at: "2026-03-10T20:00:00-03:00", zone: "near_hospital", source: "live_music", laeq: f(40), facts: est("bar"), want: "false", noWarn: true},
		{name: "ER 43: club 50 m from a maternity", code: er, at: "2026-03-10T20:00:00-03:00", zone: "other", source: "live_music", facts: est("club", "poi_type", "maternity", "distance_m_to_sensitive_poi", 50.0), want: "undetermined", article: "Art. 43", warning: "Art. 43"},
		{name: "ER 43: a school is not on its list", code: er, at: "2026-03-10T20:00:00-03:00", zone: "other", source: "live_music", facts: est("club", "poi_type", "school", "distance_m_to_sensitive_poi", 50.0), want: "false", noWarn: true},
		{name: "CM 66: 299 m from a school", code: cm, at: "2026-03-10T20:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(44), facts: est("bar", "poi_type", "school", "distance_m_to_sensitive_poi", 299.0), want: "undetermined", article: "Art. 66", warning: "Art. 66"},
		{name: "CM 66: 300 m is outside the radius", code: cm, at: "2026-03-10T20:00:00-03:00", zone: "other", source: "amplified_music", laeq: f(44), facts: est("bar", "poi_type", "school", "distance_m_to_sensitive_poi", 300.0), want: "false", noWarn: true},
		{name: "CM 66 with 45 dB exceeded: Art. 55, warning kept", code: cm, at: "2026-03-10T20:00:00-03:00", zone: "other", source: "live_music", laeq: f(50), facts: est("public_event", "poi_type", "clinic", "distance_m_to_sensitive_poi", 100.0), want: "true", article: "Art. 55", warning: "Art. 66"},
		{name: "CGS 100: 99 m from a hospital", code: cg, at: "2026-03-10T20:00:00-03:00", zone: "other", source: "karaoke", assume: true, facts: est("bar", "poi_type", "hospital", "distance_m_to_sensitive_poi", 99.0), want: "undetermined", article: "Art. 100", warning: "Art. 100"},
		{name: "CA 161: blasting 150 m from a house", code: ca, at: "2026-03-10T10:00:00-03:00", zone: "quarry", source: "blasting", facts: facts("poi_type", "residence", "distance_m_to_sensitive_poi", 150.0), want: "undetermined", article: "Art. 161", warning: "Art. 161"},
		{name: "CA 161: blasting 250 m from a house", code: ca, at: "2026-03-10T10:00:00-03:00", zone: "quarry", source: "blasting", facts: facts("poi_type", "residence", "distance_m_to_sensitive_poi", 250.0), want: "undetermined", article: "Art. 74, I", noWarn: true},
	})
}

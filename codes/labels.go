package codes

import (
	"maps"
	"strings"
)

// The pt-BR labels of every value of the codes-eval vocabularies (docs/
// codes-eval.md), in one place. The CLI, the verdicts' reasons, the
// schedule text and the dashboard (GET /api/v1/labels) all use them, so an
// enum value never reaches a user.

// Label kinds accepted by Label.
const (
	LabelZone          = "zone"
	LabelSource        = "source"
	LabelMechanism     = "mechanism"
	LabelEstablishment = "establishment"
	LabelDay           = "day"
	LabelRuleKind      = "rule_kind"
	LabelPeriod        = "period"
	LabelPOI           = "poi"
	LabelVerdict       = "verdict"
)

var labels = map[string]map[string]string{
	LabelZone: {
		"hospital_surroundings": "entorno de hospital",
		"near_hospital":         "perto de hospital",
		"near_school":           "perto de escola",
		"near_residence":        "perto de residências",
		"residential":           "zona residencial",
		"logradouro_publico":    "logradouro público",
		"centro_historico":      "Centro Histórico",
		"industrial":            "zona industrial",
		"quarry":                "pedreira",
		"municipal_market":      "mercado municipal",
		"other":                 "outras áreas",
		"unclassified":          "zona não classificada",
	},
	LabelSource: {
		"amplified_music":         "música amplificada",
		"live_music":              "música ao vivo",
		"karaoke":                 "karaokê",
		"amplified_worship":       "culto com som amplificado",
		"loudspeaker_advertising": "propaganda por alto-falante",
		"electoral_propaganda":    "propaganda eleitoral",
		"siren":                   "sirene ou apito",
		"church_bell":             "sinos",
		"construction_work":       "obra",
		"machinery":               "máquinas",
		"fireworks":               "fogos de artifício",
		"blasting":                "explosões em pedreira",
		"firearm":                 "arma de fogo",
		"batuque_congado":         "batuque ou congado",
		"crowd_shouting":          "algazarra",
		"vehicle_without_muffler": "motor sem silencioso",
		"electrical_interference": "interferência elétrica",
		"generic":                 "fonte não especificada",
	},
	LabelMechanism: {
		"sound_system":       "sistema de som",
		"recorded_music":     "música mecânica",
		"live_music":         "música ao vivo",
		"karaoke":            "karaokê",
		"loudspeaker_ad":     "alto-falante de propaganda",
		"siren_whistle":      "sirene ou apito",
		"bell":               "sino",
		"machinery":          "máquinas",
		"radio_interference": "interferência em rádio",
	},
	LabelEstablishment: {
		"bar":               "bar",
		"restaurant":        "restaurante",
		"club":              "clube",
		"nightclub":         "boate ou danceteria",
		"commerce":          "comércio",
		"church_or_temple":  "igreja ou templo",
		"factory":           "fábrica",
		"industry":          "indústria",
		"construction_site": "obra",
		"residence":         "residência",
		"public_event":      "evento público",
		"quarry":            "pedreira",
		"workshop":          "oficina",
	},
	LabelDay: {
		"mon":          "segunda-feira",
		"tue":          "terça-feira",
		"wed":          "quarta-feira",
		"thu":          "quinta-feira",
		"fri":          "sexta-feira",
		"sat":          "sábado",
		"sun":          "domingo",
		"holiday":      "feriados",
		"holiday_eve":  "vésperas de feriado",
		"business_day": "dias úteis",
		"all":          "todos os dias",
	},
	LabelRuleKind: {
		KindLevelLimit:      "limite de nível",
		KindProhibitedHours: "proibido no horário",
		KindPermittedHours:  "permitido só no horário",
		KindDuration:        "duração máxima",
		KindSchedule:        "horário de funcionamento",
		KindLicence:         "exige licença",
		KindLocationBan:     "proibido no local",
		KindMinInterval:     "intervalo mínimo",
		KindConduct:         "conduta proibida",
		KindQualitative:     "proibição sem critério objetivo",
		KindOutOfScope:      "outra legislação",
		KindRequiredSignal:  "sinal exigido por lei",
		KindLicensingReview: "revisão do licenciamento",
	},
	LabelPeriod: {
		"diurno":   "período diurno",
		"noturno":  "período noturno",
		"integral": "qualquer horário",
	},
	LabelPOI: {
		"hospital":        "hospital",
		"clinic":          "casa de saúde",
		"maternity":       "maternidade",
		"school":          "escola",
		"asylum":          "asilo",
		"church":          "igreja ou templo",
		"residence":       "residência",
		"public_building": "prédio ou repartição pública",
		"cemetery":        "cemitério",
		"funeral_chapel":  "capela mortuária",
		"prison":          "presídio",
	},
	LabelVerdict: {
		"true":         "infração",
		"false":        "sem infração",
		"undetermined": "indeterminado",
	},
}

// Label returns the pt-BR label of value in the vocabulary kind (one of the
// Label* constants). An unknown value is returned with underscores shown as
// spaces, never as an identifier.
func Label(kind, value string) string {
	if l, ok := labels[kind][value]; ok {
		return l
	}
	return strings.ReplaceAll(value, "_", " ")
}

// ZoneLabel is Label(LabelZone, z).
func ZoneLabel(z string) string { return Label(LabelZone, z) }

// SourceLabel is Label(LabelSource, s).
func SourceLabel(s string) string { return Label(LabelSource, s) }

// MechanismLabel is Label(LabelMechanism, m).
func MechanismLabel(m string) string { return Label(LabelMechanism, m) }

// EstablishmentLabel is Label(LabelEstablishment, e).
func EstablishmentLabel(e string) string { return Label(LabelEstablishment, e) }

// DayLabel is Label(LabelDay, d) for a day token (mon…sun, holiday, …).
func DayLabel(d string) string { return Label(LabelDay, d) }

// POILabel is Label(LabelPOI, p).
func POILabel(p string) string { return Label(LabelPOI, p) }

// Labels returns a copy of every vocabulary's labels, by kind then value:
// what GET /api/v1/labels serves.
func Labels() map[string]map[string]string {
	out := make(map[string]map[string]string, len(labels))
	for k, m := range labels {
		out[k] = maps.Clone(m)
	}
	return out
}

func labelList(kind string, values []string) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = Label(kind, v)
	}
	return joinPT(parts)
}

// joinPT joins with commas and a final "e".
func joinPT(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " e " + parts[len(parts)-1]
}

var weekOrder = []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}

// DaysText words a list of day tokens in Portuguese: runs of three or more
// consecutive weekdays collapse ("segunda a quinta-feira"), the rest are
// listed ("sexta-feira, sábado e vésperas de feriado").
func DaysText(days []string) string {
	if len(days) == 0 {
		return "todos os dias"
	}
	in := map[string]bool{}
	for _, d := range days {
		in[d] = true
	}
	if in["all"] {
		return "todos os dias"
	}
	var parts []string
	for i := 0; i < len(weekOrder); {
		if !in[weekOrder[i]] {
			i++
			continue
		}
		j := i
		for j+1 < len(weekOrder) && in[weekOrder[j+1]] {
			j++
		}
		if j-i >= 2 {
			first := strings.TrimSuffix(DayLabel(weekOrder[i]), "-feira")
			parts = append(parts, first+" a "+DayLabel(weekOrder[j]))
		} else {
			for k := i; k <= j; k++ {
				parts = append(parts, DayLabel(weekOrder[k]))
			}
		}
		i = j + 1
	}
	for _, d := range []string{"business_day", "holiday_eve", "holiday"} {
		if in[d] {
			parts = append(parts, DayLabel(d))
		}
	}
	return joinPT(parts)
}

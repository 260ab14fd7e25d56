package codes

import (
	"fmt"
	"slices"
	"strings"
)

// Whether an observation is in a rule's scope: its trigger, zone, window,
// establishment, places and protected surroundings.

// ruleScope is what deciding that an observation is in a rule's scope
// learnt that its verdict needs.
type ruleScope struct {
	zoneUnknown bool     // the rule names zones and the observation's is unclassified
	missing     []string // what the observation must state for a verdict
	whereWhy    string   // why the place cannot be decided ("": it can, or the rule names none)
	miss        missKind // out of scope only by its hours or its places
}

// missKind says why a rule whose trigger the observation shows is still out
// of its scope: its hours, or its places and closed list of protected ones.
type missKind uint8

const (
	missNone missKind = iota
	missWindow
	missPlace
)

// missText says why a rule the observation triggered did not apply.
func (c *Code) missText(r *Rule, o *Observation, ctx *evalCtx) string {
	head := fmt.Sprintf("%s (%s): não se aplica", r.Label, r.Article)
	if r.Window != nil && !c.inWindow(r.Window, ctx) {
		return fmt.Sprintf("%s às %s; vale só %s", head, fmtHM(ctx.minute), windowText(r.Window))
	}
	m := &r.Match
	pt, hasPT := factString(o, "poi_type")
	d, hasD := factNumber(o, "distance_m_to_sensitive_poi")
	switch {
	case len(m.Near) > 0 && hasPT && !slices.Contains(m.Near, pt):
		return fmt.Sprintf("%s: %s não está na lista fechada do artigo (%s)", head, POILabel(pt), labelList(LabelPOI, m.Near))
	case len(m.Near) > 0 && hasD && r.RadiusM != nil && d >= *r.RadiusM:
		return fmt.Sprintf("%s: a %s m, fora do raio de %s m", head, fmtNum(d), fmtNum(*r.RadiusM))
	case len(m.Near) > 0 && hasD && r.RadiusM == nil:
		return fmt.Sprintf("%s: a %s m, fora das proximidades de %s", head, fmtNum(d), labelList(LabelPOI, m.Near))
	}
	places := make([]string, len(m.Places))
	for k, p := range m.Places {
		places[k] = placeLabel(p)
	}
	return fmt.Sprintf("%s fora dos locais do artigo (%s)", head, joinPT(places))
}

// scope reports whether o is in rule i's scope, and notes in ctx the
// level rules whose scope matched with a known zone.
func (c *Code) scope(i int, o *Observation, ctx *evalCtx) (sc ruleScope, ok bool) {
	r := &c.Rules[i]
	m := &r.Match
	byEvent, ok := triggered(m, o)
	if !ok {
		return sc, false
	}
	if len(m.Zones) > 0 {
		if o.Zone == "unclassified" {
			sc.zoneUnknown = true
		} else if !slices.Contains(m.Zones, o.Zone) {
			return sc, false
		}
	}
	outside := r.Window != nil && r.Kind != KindPermittedHours && !c.inWindow(r.Window, ctx)
	if sc.missing, ok = establishmentScope(r, o); !ok {
		return sc, false
	}
	if r.Kind == KindLevelLimit && !sc.zoneUnknown && !outside {
		ctx.levelScope[i] = true
	}
	// A limit or a general clause about a sound needs the observation to show
	// one; a clause about a stated fact (an establishment's special hours)
	// does not.
	soundRule := len(m.Sources) > 0 || len(m.Mechanisms) > 0
	if (r.Kind == KindLevelLimit || r.Kind == KindQualitative) && soundRule && !byEvent && !noiseShown(o) {
		return sc, false
	}
	if len(m.Content) > 0 {
		ct, ok := factString(o, "content")
		switch {
		case !ok:
			sc.missing = append(sc.missing, "o conteúdo da propaganda (facts.content)")
		case !slices.Contains(m.Content, ct):
			return sc, false
		}
	}
	if outside {
		// Everything but the hour fits: a false verdict names the rule and
		// says its hours did not apply.
		sc.miss = missWindow
		return sc, false
	}
	if len(m.Places) > 0 || len(m.Near) > 0 {
		st, why := c.where(r, o)
		// A provision addressed to the administration is in scope only when
		// the stated facts put the observation inside its radius.
		if st == False {
			if statesPlace(o) {
				sc.miss = missPlace
			}
			return sc, false
		}
		if st == Undetermined && r.Kind == KindLicensingReview {
			return sc, false
		}
		if st == Undetermined {
			sc.whereWhy = why
		}
	}
	return sc, true
}

// triggered reports whether o shows the rule's trigger: a source or
// mechanism, and the facts the rule is about. byEvent is true when the
// trigger is a stated event (a desordem), which shows a disturbance by
// itself.
func triggered(m *Match, o *Observation) (byEvent, ok bool) {
	if len(m.Sources) > 0 || len(m.Mechanisms) > 0 || len(m.Events) > 0 {
		mech, _ := factString(o, "mechanism")
		ev, _ := factString(o, "event")
		byEvent = ev != "" && slices.Contains(m.Events, ev)
		if !slices.Contains(m.Sources, o.Source) && (mech == "" || !slices.Contains(m.Mechanisms, mech)) && !byEvent {
			return false, false
		}
	}
	for k, want := range m.Facts {
		if holds, _ := factHolds(o, k, want); !holds {
			return false, false
		}
	}
	if len(m.AnyFacts) > 0 && firstHolding(m.AnyFacts, o) < 0 {
		return false, false
	}
	return byEvent, true
}

// establishmentScope reports whether o's establishment is one the rule is
// about (ok), and what is missing to decide it.
func establishmentScope(r *Rule, o *Observation) (missing []string, ok bool) {
	m := &r.Match
	if len(m.Establishments) > 0 {
		est, ok := factString(o, "establishment_type")
		switch {
		case !ok:
			// A level limit whose scope is a list of establishments cannot be
			// decided without the type; any other rule about an establishment
			// is not triggered by an observation that names none.
			if r.Kind != KindLevelLimit {
				return nil, false
			}
			missing = append(missing, "o tipo de estabelecimento (facts.establishment_type)")
		case !slices.Contains(m.Establishments, est):
			return nil, false
		}
	}
	if m.AlcoholVenue {
		sold, present := factBool(o, "alcohol_sold")
		est, _ := factString(o, "establishment_type")
		if !(present && sold) && (present || (est != "bar" && est != "nightclub")) {
			return nil, false
		}
	}
	return missing, true
}

func (c *Code) inWindow(w *Window, ctx *evalCtx) bool {
	if !w.containsMinute(ctx.minute) {
		return false
	}
	start := ctx.date
	if w.startsPreviousDay(ctx.minute) {
		start = start.AddDays(-1)
	}
	return c.anyDay(w.Days, start)
}

// where decides a rule's places and protected surroundings: True when the
// observation is inside them, False when outside, Undetermined (with why)
// when the stated facts do not say.
func (c *Code) where(r *Rule, o *Observation) (Tri, string) {
	m := &r.Match
	place := False
	if len(m.Places) > 0 {
		place = inPlaces(m.Places, o)
		if place == True {
			return True, ""
		}
	}
	placeWhy := "local não classificado; informe a zona ou facts.location (" + strings.Join(m.Places, ", ") + ")"
	if len(m.Near) == 0 {
		if place == Undetermined {
			return Undetermined, placeWhy
		}
		return False, ""
	}
	near, why := proximity(r, o)
	switch {
	case near == True:
		return True, ""
	case near == Undetermined:
		return Undetermined, why
	case place == Undetermined:
		return Undetermined, placeWhy
	}
	return False, ""
}

func inPlaces(places []string, o *Observation) Tri {
	if slices.Contains(places, o.Zone) {
		return True
	}
	if loc, ok := factString(o, "location"); ok {
		if slices.Contains(places, loc) {
			return True
		}
		return False
	}
	if b, ok := factBool(o, "in_centro_historico"); ok && slices.Contains(places, "centro_historico") {
		if b {
			return True
		}
		if len(places) == 1 {
			return False
		}
	}
	if o.Zone == "unclassified" {
		return Undetermined
	}
	return False
}

// zoneImplies reports whether the zone itself says the observation is near a
// place of one of the listed types (a sensor classified "perto de escola" is
// near a school, a residential zone is among residences).
func zoneImplies(zone string, near []string) bool {
	switch zone {
	case "near_hospital", "hospital_surroundings":
		return slices.Contains(near, "hospital")
	case "near_school":
		return slices.Contains(near, "school")
	case "near_residence", "residential":
		return slices.Contains(near, "residence")
	}
	return false
}

// proximity decides a radius rule (RadiusM) or a "nas proximidades de" rule
// from the stated distance and type of the protected place and the code's
// own closed list (Match.Near). A zone label alone does not prove a
// distance.
func proximity(r *Rule, o *Observation) (Tri, string) {
	near := r.Match.Near
	pt, hasPT := factString(o, "poi_type")
	d, hasD := factNumber(o, "distance_m_to_sensitive_poi")
	listed := hasPT && slices.Contains(near, pt)
	implied := zoneImplies(o.Zone, near)
	list := labelList(LabelPOI, near)
	if r.RadiusM != nil {
		rad := *r.RadiusM
		switch {
		case listed && hasD:
			return triOf(d < rad), ""
		case listed:
			return Undetermined, fmt.Sprintf("%s sem distância informada; o artigo vale a menos de %s m de %s (informe facts.distance_m_to_sensitive_poi)",
				POILabel(pt), fmtNum(rad), list)
		case hasPT && !implied:
			return False, "" // a place the list does not name is not protected by this rule
		case hasD && !hasPT:
			if d >= rad {
				return False, ""
			}
			if implied {
				return True, ""
			}
			return Undetermined, fmt.Sprintf("a %s m de um local cujo tipo não foi informado; o artigo protege só %s (informe facts.poi_type)", fmtNum(d), list)
		case implied || o.Zone == "unclassified":
			return Undetermined, fmt.Sprintf("a zona (%s) não prova a distância; o artigo vale a menos de %s m de %s (informe facts.distance_m_to_sensitive_poi e facts.poi_type)",
				ZoneLabel(o.Zone), fmtNum(rad), list)
		}
		return False, ""
	}
	switch {
	case implied:
		return True, "" // the zone itself says the place is near a protected use
	case listed && hasD:
		switch {
		case d <= nearClearM:
			return True, ""
		case d > nearFarM:
			return False, ""
		}
		return Undetermined, fmt.Sprintf("a %s m de %s: o código não diz até onde vão as \"proximidades\"", fmtNum(d), POILabel(pt))
	case listed:
		return Undetermined, fmt.Sprintf("%s sem distância informada (informe facts.distance_m_to_sensitive_poi)", POILabel(pt))
	case hasPT:
		return False, "" // a place the list does not name is not protected by this rule
	case o.Zone == "unclassified":
		return Undetermined, "zona não classificada; o artigo protege as proximidades de " + list
	case hasD && d <= nearFarM:
		return Undetermined, fmt.Sprintf("a %s m de um local cujo tipo não foi informado; o artigo protege só %s (informe facts.poi_type)", fmtNum(d), list)
	}
	return False, ""
}

func triOf(b bool) Tri {
	if b {
		return True
	}
	return False
}

// statesPlace reports whether the observation states where it is beyond its
// zone: a protected place's type or distance, a location, the historic
// centre. Only then did a rule's places or closed list decide against it.
func statesPlace(o *Observation) bool {
	for _, k := range [...]string{"poi_type", "distance_m_to_sensitive_poi", "location", "in_centro_historico"} {
		if _, ok := o.Facts[k]; ok {
			return true
		}
	}
	return false
}

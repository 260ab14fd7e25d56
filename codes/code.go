// Package codes holds the municipal Códigos de Posturas that Sossego enforces
// as cited data, and the pure engine that applies them.
//
// Each code is one YAML file (the five seed codes are embedded from data/;
// a municipality can load its own from a directory). Every rule names its
// article and quotes the law verbatim (the seed texts are kept in seeds/);
// every interpretation names the reading of docs/codes-conventions.md it
// follows.
//
// The engine is pure: Evaluate(code, observation) → Verdict and the fast
// path Code.ActiveLimit do no I/O and read no clock. Times are evaluated in
// America/Sao_Paulo from the embedded tz database.
package codes

import (
	"fmt"
	"strings"
	"time"
)

// Code is one municipal code (one law, one version).
type Code struct {
	ID           string       `yaml:"id"`      // e.g. "lapa"
	Version      string       `yaml:"version"` // stable version label cited in alerts
	Municipality string       `yaml:"municipality"`
	State        string       `yaml:"state"`
	Law          Law          `yaml:"law"`
	Status       Status       `yaml:"status"`
	Timezone     string       `yaml:"timezone"`
	Units        []Unit       `yaml:"monetary_units"`
	Calendar     Calendar     `yaml:"calendar"`
	Zones        []Zone       `yaml:"zones"`
	Rules        []Rule       `yaml:"rules"`
	Penalties    []Penalty    `yaml:"penalties"`
	Procedure    Procedure    `yaml:"procedure"`
	NotEncoded   []NotEncoded `yaml:"not_encoded"`
	Assumptions  []string     `yaml:"assumptions"`
	loc          *time.Location
	file         string
	levels       []compiledLevel
	// overrideIdx[i] lists the indexes of the rules rule i displaces.
	overrideIdx [][]int
}

// Law identifies the legal text.
type Law struct {
	Type     string    `yaml:"type"`
	Number   string    `yaml:"number"`
	Date     string    `yaml:"date"` // YYYY-MM-DD as in the header
	Title    string    `yaml:"title"`
	Seed     string    `yaml:"seed"` // the text's file name under codes/seeds/
	AltDates []AltDate `yaml:"alt_dates"`
}

// AltDate is a conflicting date found in the text.
type AltDate struct {
	Date  string `yaml:"date"`
	Where string `yaml:"where"`
}

// Status is what the text says about the law being in force.
type Status struct {
	InForce   bool     `yaml:"in_force"`
	RevokedBy string   `yaml:"revoked_by"`
	Quote     string   `yaml:"quote"` // the text's own words about revocation or entry into force
	Article   string   `yaml:"article"`
	Revokes   []string `yaml:"revokes"`
	Defects   []string `yaml:"text_defects"`
}

// Unit is a monetary unit as the code states it.
type Unit struct {
	ID         string   `yaml:"id"`
	Name       string   `yaml:"name"`
	Article    string   `yaml:"article"`
	Quote      string   `yaml:"quote"`
	ValueBRL   *float64 `yaml:"value_brl"` // configured current value; nil = not configured
	Indexation string   `yaml:"indexation"`
	Obsolete   bool     `yaml:"obsolete"`
}

// Calendar holds the code's own days.
type Calendar struct {
	// BusinessDays is what this code's "dias úteis" means (e.g. mon–fri).
	BusinessDays []string `yaml:"business_days"`
	// BusinessDaysNote cites the wording that fixes BusinessDays.
	BusinessDaysNote string `yaml:"business_days_note"`
	// Holidays are the municipal holidays the code names.
	Holidays []Holiday `yaml:"holidays"`
	// ServiceDayStart: minutes before this time belong to the previous
	// calendar day's schedule ("HH:MM do dia seguinte"). Default 06:00.
	ServiceDayStart string `yaml:"service_day_start"`
	// Decreed are the days the municipality set outside the code (a
	// municipal holiday law, a decree of ponto facultativo), passed in as
	// data through Set.SetDecreed or Code.WithDecreed; never in the YAML.
	Decreed []Decreed `yaml:"-"`
}

// Holiday is a municipal holiday on a fixed date.
type Holiday struct {
	MonthDay string `yaml:"month_day"` // MM-DD
	Name     string `yaml:"name"`
	Article  string `yaml:"article"`
	Quote    string `yaml:"quote"`
}

// Zone documents a zone value the code uses and how the text defines it.
type Zone struct {
	ID       string `yaml:"id"` // one of the codes-eval zone values
	Label    string `yaml:"label"`
	Article  string `yaml:"article"`
	Geometry string `yaml:"geometry"` // "undefined", "buffer 100 m", "polygon (external)", …
}

// Rule kinds.
const (
	KindLevelLimit      = "level_limit"        // measured LAeq strictly above a limit
	KindProhibitedHours = "prohibited_hours"   // the activity is banned inside the window
	KindPermittedHours  = "permitted_hours"    // the activity is allowed only inside the window
	KindDuration        = "duration_limit"     // an event longer than N seconds
	KindSchedule        = "operating_schedule" // opening/closing by service day
	KindLicence         = "licence_required"   // unlawful without a licence
	KindLocationBan     = "location_ban"       // banned in a zone or radius
	KindMinInterval     = "min_interval"       // successive events at least N s apart
	KindConduct         = "conduct"            // a conduct prohibited outright: violated when stated
	KindQualitative     = "qualitative"        // prohibited, but no criterion a machine can evaluate
	KindOutOfScope      = "out_of_scope"       // governed by other legislation
	KindRequiredSignal  = "required_signal"    // a sound the law requires: never a violation
	// KindLicensingReview is a siting or licensing provision addressed to
	// the administration ("não será concedida licença…"): never an
	// infraction of the person observed; in scope it makes the verdict
	// undetermined and warns that the licence calls for review.
	KindLicensingReview = "licensing_review"
)

var ruleKinds = map[string]bool{
	KindLevelLimit: true, KindProhibitedHours: true, KindPermittedHours: true, KindDuration: true,
	KindSchedule: true, KindLicence: true, KindLocationBan: true, KindMinInterval: true,
	KindConduct: true, KindQualitative: true, KindOutOfScope: true, KindRequiredSignal: true,
	KindLicensingReview: true,
}

// Rule is one encoded provision.
type Rule struct {
	ID      string `yaml:"id"`
	Article string `yaml:"article"` // e.g. "Art. 96"
	Quote   string `yaml:"quote"`   // verbatim seed text
	Kind    string `yaml:"kind"`
	// Label is a short pt-BR description used in reasons, e.g.
	// "período noturno (22:00–07:00), outras áreas".
	Label string `yaml:"label"`

	Match Match `yaml:"match"`

	Window   *Window         `yaml:"window"`   // prohibited/permitted hours, level period
	Schedule []ScheduleEntry `yaml:"schedule"` // operating_schedule

	LimitDBA     *float64 `yaml:"limit_dba"`
	Period       string   `yaml:"period"` // period id for the fast path: diurno, noturno, integral
	MaxDurationS *float64 `yaml:"max_duration_s"`
	MinIntervalS *float64 `yaml:"min_interval_s"`
	// RadiusM is the radius around the places of Match.Near that the rule
	// protects ("raio de 100 metros", "distando menos de 200m"); nil for
	// "nas proximidades de", which names no distance.
	RadiusM *float64 `yaml:"radius_m"`

	// ExemptIf: the rule does not apply when every fact of any one entry holds.
	ExemptIf []map[string]any `yaml:"exempt_if"`
	// ExemptBy, when set, is parallel to ExemptIf: the article (and its
	// verbatim text) that grants each exemption when it is not the rule's
	// own; an empty entry means the rule's own article.
	ExemptBy []Citation `yaml:"exempt_by"`
	// ExemptUnknown: when the rule would be violated and an exemption could
	// still apply because its facts are not stated, the verdict is
	// undetermined instead (the exemption is part of the rule's own text).
	ExemptUnknown bool `yaml:"exempt_unknown"`
	// Overrides names general rules this special rule displaces when it
	// applies (a special rule prevails over the general one: bells, works
	// and sirens are judged by their own articles, not by a flat limit).
	Overrides []string `yaml:"overrides"`
	// PermissionFact: when this fact is explicitly false, an activity inside
	// the permitted hours is undetermined (the permission "desde que
	// comprovada a acústica" did not arise).
	PermissionFact string `yaml:"permission_fact"`

	// Supersedes names earlier wording in the same code that this rule's
	// later wording displaces for the same case (Campina Grande do Sul Art.
	// 87, Lei nº 28/2001, over the bars' hours of Art. 210): every verdict
	// and the printed schedule say which governs.
	Supersedes []Superseded `yaml:"supersedes"`

	Penalty     string   `yaml:"penalty"`
	Conventions []string `yaml:"conventions"` // interpretations, naming docs/codes-conventions.md
	// Why: for qualitative and out_of_scope rules, why there is no machine
	// verdict; for licensing_review, the review the provision calls for.
	Why string `yaml:"why"`

	line int
}

// Superseded is an earlier provision a rule displaces: its article, its
// verbatim text and why the rule governs instead (pt-BR).
type Superseded struct {
	Article string `yaml:"article"`
	Quote   string `yaml:"quote"`
	Why     string `yaml:"why"`
}

// Match says which observations a rule is about. Empty lists match anything.
// Sources, Mechanisms and Events together name the activity: the rule is
// about the observation when any one of them matches.
type Match struct {
	Sources        []string `yaml:"sources"`
	Events         []string `yaml:"events"`         // facts.event values (e.g. desordem)
	Establishments []string `yaml:"establishments"` // facts.establishment_type; missing → undetermined
	Mechanisms     []string `yaml:"mechanisms"`     // facts.mechanism
	// AlcoholVenue: the rule is about "estabelecimentos em que se vendam
	// bebidas alcoólicas": facts.alcohol_sold true, or a bar or nightclub
	// unless facts.alcohol_sold is false.
	AlcoholVenue bool     `yaml:"alcohol_venue"`
	Zones        []string `yaml:"zones"`
	// Places the rule is about (location_ban, conduct): a zone value, a
	// facts.location value, or centro_historico via facts.in_centro_historico.
	Places []string `yaml:"places"`
	// Near lists the protected places (facts.poi_type values) of a radius
	// or "nas proximidades de" rule: the code's own closed list.
	Near    []string `yaml:"near"`
	Content []string `yaml:"content"` // facts.content
	// Facts must all hold; a fact the observation does not state makes the
	// rule not applicable (unless listed in Needs).
	Facts map[string]any `yaml:"facts"`
	// AnyFacts: when set, the rule is about the observation only if every
	// fact of at least one entry holds (a vehicle's siren: a stated vehicle
	// emitter, or a mobile source).
	AnyFacts []map[string]any `yaml:"any_facts"`
	// Needs are facts without which the rule cannot be decided: when one
	// is missing the rule yields undetermined.
	Needs []string `yaml:"needs"`
}

// Window is a daily time window, half-open [From, To) at minute resolution
// unless FromExclusive ("depois das H": t > H) or ToInclusive ("não …
// depois das H": H itself is inside). To "24:00" is the end of the day; To ≤
// From crosses midnight.
type Window struct {
	From          string   `yaml:"from"`
	To            string   `yaml:"to"`
	FromExclusive bool     `yaml:"from_exclusive"`
	ToInclusive   bool     `yaml:"to_inclusive"`
	Days          []string `yaml:"days"` // days the window starts on; empty = every day
}

// ScheduleEntry is one line of an operating schedule.
type ScheduleEntry struct {
	Days         []string `yaml:"days"` // mon..sun, holiday, holiday_eve, business_day, all
	Open         string   `yaml:"open"`
	Close        string   `yaml:"close"`
	CloseNextDay bool     `yaml:"close_next_day"`
	Closed       bool     `yaml:"closed"` // closed all day ("permanecerão fechados")
	// CloseIfExtended is the closing time when facts.hours_extension_granted
	// is true (an extension the code lets the administration grant).
	CloseIfExtended string `yaml:"close_if_extended"`
	// FromDate and ToDate (MM-DD, inclusive, may wrap the year) restrict
	// the line to a season ("de 1.º de Dezembro a 06 de Janeiro").
	FromDate string `yaml:"from_date"`
	ToDate   string `yaml:"to_date"`
}

// Penalty is a penalty provision.
type Penalty struct {
	ID      string `yaml:"id"`
	Article string `yaml:"article"`
	Quote   string `yaml:"quote"`
	Type    string `yaml:"type"` // ladder | fixed | range | unmapped
	// Steps of a ladder, in order (1ª infração first).
	Steps []Step `yaml:"steps"`
	// Fixed or range amounts.
	Percent    *float64 `yaml:"percent"`
	PercentMin *float64 `yaml:"percent_min"`
	PercentMax *float64 `yaml:"percent_max"`
	Amounts    []string `yaml:"amounts"` // literal amounts as written (e.g. R$ tiers)
	Unit       string   `yaml:"unit"`    // monetary unit id
	// Reincidence doubling: fines double when the infractor was already
	// "autuado e punido" (facts.prior_punished).
	Doubling *Doubling `yaml:"doubling"`
	// Accessory sanctions the violated article or its chapter adds to the
	// fine (cassação da licença, apreensão), worded as the code states them.
	Accessory []string `yaml:"accessory"`
	// Chapter is the chapter's clause that points to this penalty when it
	// is not the penalty article itself (e.g. "Art. 59 … previstas no Art.
	// 153", whose list is Art. 152).
	Chapter       *Citation `yaml:"chapter"`
	AppealMinPct  *float64  `yaml:"appeal_min_percent"`
	AppealArticle string    `yaml:"appeal_article"`
	CountingNote  string    `yaml:"counting_note"`
	line          int
}

// Step is one rung of a ladder.
type Step struct {
	Ordinal int      `yaml:"ordinal"`
	Action  string   `yaml:"action"` // notificacao_preliminar | fine | judicial_measures | licence_suspension | licence_cassation
	Percent *float64 `yaml:"percent"`
	Text    string   `yaml:"text"` // pt-BR, as the code words it
	Item    string   `yaml:"item"` // e.g. "Art. 102, II"
	Days    int      `yaml:"days"` // regularisation deadline or suspension days
}

// Citation is an article and its verbatim text.
type Citation struct {
	Article string `yaml:"article"`
	Quote   string `yaml:"quote"`
}

// Doubling describes reincidência.
type Doubling struct {
	Article  string  `yaml:"article"`
	Quote    string  `yaml:"quote"`
	Factor   float64 `yaml:"factor"`
	Requires string  `yaml:"requires"` // "autuado e punido"
}

// Procedure is the administrative procedure the code prescribes.
type Procedure struct {
	Notice      *Document  `yaml:"notice"` // nil when the code has none
	Auto        *Document  `yaml:"auto"`
	Deadlines   []Deadline `yaml:"deadlines"`
	Department  string     `yaml:"department"`
	DeptArticle string     `yaml:"department_article"`
}

// Document is a notice or auto de infração with its required fields.
type Document struct {
	Kind      string  `yaml:"kind"` // notificacao_preliminar | intimacao_preliminar | notificacao_intimacao | auto_de_infracao
	Title     string  `yaml:"title"`
	Article   string  `yaml:"article"`
	Quote     string  `yaml:"quote"`
	Fields    []Field `yaml:"fields"`
	Witnesses int     `yaml:"witnesses_on_refusal"`
	// PrazoDaysMax is the longest regularisation deadline the fiscal may set
	// (0 = the code fixes none).
	PrazoDaysMax int    `yaml:"prazo_days_max"`
	NotWhen      string `yaml:"not_when"` // e.g. "risco iminente"
}

// Field is a required field of a document.
type Field struct {
	ID      string `yaml:"id"`
	Label   string `yaml:"label"`
	Article string `yaml:"article"`
	ByHand  bool   `yaml:"by_hand"` // only the fiscal can fill it
}

// Deadline is a procedural deadline.
type Deadline struct {
	ID       string `yaml:"id"`
	Article  string `yaml:"article"`
	Quote    string `yaml:"quote"`
	Days     int    `yaml:"days"`
	Business bool   `yaml:"business_days"`
	From     string `yaml:"from"`
}

// NotEncoded records a noise provision deliberately left out of the
// machine rules, with the reason.
type NotEncoded struct {
	Article string `yaml:"article"`
	Quote   string `yaml:"quote"`
	Reason  string `yaml:"reason"`
}

// Location returns the code's time zone.
func (c *Code) Location() *time.Location { return c.loc }

// Rule returns the rule with id, or nil.
func (c *Code) Rule(id string) *Rule {
	for i := range c.Rules {
		if c.Rules[i].ID == id {
			return &c.Rules[i]
		}
	}
	return nil
}

// PenaltyByID returns the penalty with id, or nil.
func (c *Code) PenaltyByID(id string) *Penalty {
	for i := range c.Penalties {
		if c.Penalties[i].ID == id {
			return &c.Penalties[i]
		}
	}
	return nil
}

// Title is "Lei nº 1783/2004 (Lapa/PR)".
func (c *Code) Title() string {
	year := c.Law.Date
	if len(year) >= 4 {
		year = year[:4]
	}
	return fmt.Sprintf("%s nº %s/%s (%s/%s)", c.Law.Type, c.Law.Number, year, c.Municipality, c.State)
}

func lower(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

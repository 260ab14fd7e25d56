package codes

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sossego/sossego/internal/tz"
)

//go:embed data/*.yaml
var builtin embed.FS

// Error is a problem in a code file, with its position and what to fix.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Errors is every problem found in one file.
type Errors []*Error

func (es Errors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// Parse decodes and validates one code file strictly: unknown keys, bad
// times, dangling references and contradictions are errors carrying
// file:line and what to fix.
func Parse(file string, data []byte) (*Code, error) {
	var c Code
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, yamlError(file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{File: file, Msg: "mais de um documento YAML no arquivo; use um arquivo por código"}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err == nil {
		setLines(&c, &root)
	}
	c.file = file
	if err := c.validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

func yamlError(file string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		var es Errors
		for _, m := range te.Errors {
			es = append(es, lineError(file, m))
		}
		return es
	}
	return lineError(file, err.Error())
}

func lineError(file, msg string) *Error {
	msg = strings.TrimPrefix(msg, "yaml: ")
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		text := m[2]
		if strings.Contains(text, "not found in type") {
			text += " (chave desconhecida: corrija a grafia ou remova-a; veja codes/README.md para o esquema)"
		}
		return &Error{File: file, Line: n, Msg: text}
	}
	return &Error{File: file, Msg: msg}
}

// setLines records the line of each rule and penalty for later messages.
func setLines(c *Code, root *yaml.Node) {
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return
	}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		key, val := m.Content[i].Value, m.Content[i+1]
		switch key {
		case "rules":
			for j, n := range val.Content {
				if j < len(c.Rules) {
					c.Rules[j].line = n.Line
				}
			}
		case "penalties":
			for j, n := range val.Content {
				if j < len(c.Penalties) {
					c.Penalties[j].line = n.Line
				}
			}
		}
	}
}

// Vocabularies of docs/codes-eval.md.
var (
	knownZones = set("hospital_surroundings", "near_hospital", "near_school", "near_residence", "residential",
		"logradouro_publico", "centro_historico", "industrial", "quarry", "municipal_market", "other", "unclassified")
	knownSources = set("amplified_music", "live_music", "karaoke", "amplified_worship", "loudspeaker_advertising",
		"electoral_propaganda", "siren", "church_bell", "construction_work", "machinery", "fireworks", "blasting",
		"firearm", "batuque_congado", "crowd_shouting", "vehicle_without_muffler", "electrical_interference", "generic")
	knownEstablishments = set("bar", "restaurant", "club", "nightclub", "commerce", "church_or_temple", "factory",
		"industry", "construction_site", "residence", "public_event", "quarry", "workshop")
	knownMechanisms = set("sound_system", "recorded_music", "live_music", "karaoke", "loudspeaker_ad",
		"siren_whistle", "bell", "machinery", "radio_interference")
	knownBoolFacts = set("licensed", "alcohol_sold", "acoustics_proven", "acoustic_isolation",
		"hours_extension_granted", "mobile", "operating", "in_service", "in_centro_historico",
		"public_utility_event", "prior_punished", "muffler_defective", "just_cause", "permission",
		"exempt_activity", "located_on_highway")
	knownStringFacts = set("emitter", "content", "event", "licence_scope", "location", "poi_type", "purpose",
		"establishment_type", "mechanism")
	knownNumberFacts = set("distance_m_to_sensitive_poi", "interval_between_series_s")
	knownPOI         = set("hospital", "clinic", "maternity", "school", "asylum", "church", "residence",
		"public_building", "cemetery", "funeral_chapel", "prison")
	knownDays    = set("mon", "tue", "wed", "thu", "fri", "sat", "sun", "holiday", "holiday_eve", "business_day", "all")
	knownActions = set("notificacao_preliminar", "advertencia", "fine", "judicial_measures",
		"licence_suspension", "licence_cassation", "interdiction")
)

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

func (c *Code) validate() error {
	var es Errors
	bad := func(line int, format string, a ...any) {
		es = append(es, &Error{File: c.file, Line: line, Msg: fmt.Sprintf(format, a...)})
	}
	c.validateHeader(bad)
	c.validateCalendar(bad)
	for _, z := range c.Zones {
		if !knownZones[z.ID] {
			bad(0, "zona %q fora do vocabulário (veja docs/codes-eval.md)", z.ID)
		}
	}
	pens := c.validatePenalties(bad)
	ids := map[string]bool{}
	for i := range c.Rules {
		c.validateRule(&c.Rules[i], pens, ids, bad)
	}
	for i := range c.Rules {
		r := &c.Rules[i]
		for _, o := range r.Overrides {
			if !ids[o] || o == r.ID {
				bad(r.line, "regra %q: overrides cita %q, que não é outra regra deste código", r.ID, o)
			}
		}
	}
	c.checkContradictions(bad)
	c.validateProcedure(bad)
	if len(es) > 0 {
		return es
	}
	c.compile()
	return nil
}

// validateHeader checks the code's identity, its law and status, and
// loads its time zone (tz.Name when it names none).
func (c *Code) validateHeader(bad func(int, string, ...any)) {
	if c.ID == "" || c.ID != lower(c.ID) || strings.ContainsAny(c.ID, " /+#") {
		bad(0, "id %q inválido: use minúsculas e hífens, por exemplo \"lapa\"", c.ID)
	}
	if msg := checkVersion(c.Version); msg != "" {
		bad(0, "%s", msg)
	}
	if c.Municipality == "" || c.State == "" {
		bad(0, "municipality e state são obrigatórios")
	}
	if c.Law.Number == "" || c.Law.Date == "" {
		bad(0, "law.number e law.date são obrigatórios")
	} else if _, err := time.Parse(time.DateOnly, c.Law.Date); err != nil {
		bad(0, "law.date %q não é uma data AAAA-MM-DD", c.Law.Date)
	}
	if c.Timezone == "" {
		c.Timezone = tz.Name
	}
	loc, err := tz.Load(c.Timezone)
	if err != nil {
		bad(0, "timezone %q desconhecido: use um nome IANA como America/Sao_Paulo", c.Timezone)
	}
	c.loc = loc
	if !c.Status.InForce && c.Status.RevokedBy == "" {
		bad(0, "status.in_force é false mas revoked_by está vazio: diga o que revogou a lei")
	}
}

// validateCalendar checks the calendar (business days, the service day's
// start, defaulting to 06:00, and the holidays).
func (c *Code) validateCalendar(bad func(int, string, ...any)) {
	for _, d := range c.Calendar.BusinessDays {
		if !knownDays[d] || d == "holiday" || d == "holiday_eve" || d == "business_day" || d == "all" {
			bad(0, "calendar.business_days: %q não é um dia da semana (mon..sun)", d)
		}
	}
	if len(c.Calendar.BusinessDays) == 0 {
		bad(0, "calendar.business_days vazio: diga o que \"dias úteis\" significa neste código")
	}
	if c.Calendar.ServiceDayStart == "" {
		c.Calendar.ServiceDayStart = "06:00"
	}
	if _, err := parseHM(c.Calendar.ServiceDayStart); err != nil {
		bad(0, "calendar.service_day_start: %v", err)
	}
	for _, h := range c.Calendar.Holidays {
		if _, err := time.Parse("01-02", h.MonthDay); err != nil {
			bad(0, "feriado %q: month_day %q deve ser MM-DD", h.Name, h.MonthDay)
		}
		if h.Article == "" || h.Quote == "" {
			bad(0, "feriado %q: cite article e quote", h.Name)
		}
	}
}

// validatePenalties checks the penalties and returns them by id.
func (c *Code) validatePenalties(bad func(int, string, ...any)) map[string]*Penalty {
	units := map[string]bool{}
	for _, u := range c.Units {
		units[u.ID] = true
	}
	pens := map[string]*Penalty{}
	for i := range c.Penalties {
		p := &c.Penalties[i]
		if _, dup := pens[p.ID]; dup {
			bad(p.line, "penalidade %q repetida", p.ID)
		}
		pens[p.ID] = p
		if p.Article == "" || p.Quote == "" {
			bad(p.line, "penalidade %q: cite article e quote (texto literal)", p.ID)
		}
		p.validateType(bad)
		if p.Unit != "" && !units[p.Unit] {
			bad(p.line, "penalidade %q: unidade %q não declarada em monetary_units", p.ID, p.Unit)
		}
		if p.Chapter != nil && (p.Chapter.Article == "" || p.Chapter.Quote == "") {
			bad(p.line, "penalidade %q: chapter precisa de article e quote", p.ID)
		}
	}
	return pens
}

// validateType checks what p's type needs: steps, a percent or the amounts
// as written.
func (p *Penalty) validateType(bad func(int, string, ...any)) {
	switch p.Type {
	case "ladder":
		if len(p.Steps) == 0 {
			bad(p.line, "penalidade %q do tipo ladder sem steps", p.ID)
		}
		for j, s := range p.Steps {
			if s.Ordinal != j+1 {
				bad(p.line, "penalidade %q: steps fora de ordem (esperado ordinal %d, achado %d)", p.ID, j+1, s.Ordinal)
			}
			if !knownActions[s.Action] {
				bad(p.line, "penalidade %q: ação %q desconhecida", p.ID, s.Action)
			}
			if s.Action == "fine" && s.Percent == nil {
				bad(p.line, "penalidade %q: step %d é multa sem percent", p.ID, s.Ordinal)
			}
		}
	case "fixed":
		if p.Percent == nil {
			bad(p.line, "penalidade %q do tipo fixed precisa de percent", p.ID)
		}
	case "range":
		if p.PercentMin == nil || p.PercentMax == nil || *p.PercentMin > *p.PercentMax {
			bad(p.line, "penalidade %q do tipo range precisa de percent_min ≤ percent_max", p.ID)
		}
	case "unmapped":
		if len(p.Amounts) == 0 {
			bad(p.line, "penalidade %q do tipo unmapped precisa listar amounts como escritos", p.ID)
		}
	default:
		bad(p.line, "penalidade %q: type %q desconhecido (ladder, fixed, range, unmapped)", p.ID, p.Type)
	}
}

// validateRule checks one rule against the penalties pens; ids collects
// the rule ids seen so far.
func (c *Code) validateRule(r *Rule, pens map[string]*Penalty, ids map[string]bool, bad func(int, string, ...any)) {
	if r.ID == "" {
		bad(r.line, "regra sem id")
	}
	if ids[r.ID] {
		bad(r.line, "regra %q repetida", r.ID)
	}
	ids[r.ID] = true
	if r.Article == "" || strings.TrimSpace(r.Quote) == "" {
		bad(r.line, "regra %q: toda regra cita article e quote (texto literal da lei)", r.ID)
	}
	if !ruleKinds[r.Kind] {
		bad(r.line, "regra %q: kind %q desconhecido", r.ID, r.Kind)
	}
	if r.Label == "" {
		bad(r.line, "regra %q: falta label (descrição curta em português)", r.ID)
	}
	c.validateMatch(r, bad)
	if r.Window != nil {
		if err := r.Window.validate(); err != nil {
			bad(r.line, "regra %q: window: %v", r.ID, err)
		}
	}
	r.validateKind(bad)
	if r.RadiusM != nil && (*r.RadiusM <= 0 || len(r.Match.Near) == 0) {
		bad(r.line, "regra %q: radius_m precisa ser > 0 e vir com match.near (os locais protegidos)", r.ID)
	}
	needsPenalty := r.Kind != KindQualitative && r.Kind != KindOutOfScope && r.Kind != KindRequiredSignal &&
		r.Kind != KindLicensingReview
	if needsPenalty && r.Penalty == "" {
		bad(r.line, "regra %q: falta penalty (id de uma penalidade)", r.ID)
	}
	if r.Penalty != "" && pens[r.Penalty] == nil {
		bad(r.line, "regra %q: penalty %q não existe em penalties", r.ID, r.Penalty)
	}
}

// validateKind checks the fields r's kind needs.
func (r *Rule) validateKind(bad func(int, string, ...any)) {
	switch r.Kind {
	case KindLevelLimit:
		if r.Window != nil && len(r.Window.Days) > 0 {
			bad(r.line, "regra %q: limites de nível não dependem do dia da semana nos códigos; remova window.days", r.ID)
		}
		if r.LimitDBA == nil || *r.LimitDBA <= 0 || *r.LimitDBA > 160 {
			bad(r.line, "regra %q: level_limit precisa de limit_dba entre 0 e 160", r.ID)
		}
		if r.Period == "" {
			bad(r.line, "regra %q: level_limit precisa de period (diurno, noturno ou integral)", r.ID)
		}
	case KindProhibitedHours, KindPermittedHours:
		if r.Window == nil {
			bad(r.line, "regra %q: %s precisa de window", r.ID, r.Kind)
		}
	case KindDuration:
		if r.MaxDurationS == nil || *r.MaxDurationS <= 0 {
			bad(r.line, "regra %q: duration_limit precisa de max_duration_s > 0", r.ID)
		}
	case KindMinInterval:
		if r.MinIntervalS == nil || *r.MinIntervalS <= 0 {
			bad(r.line, "regra %q: min_interval precisa de min_interval_s > 0", r.ID)
		}
	case KindSchedule:
		if len(r.Schedule) == 0 {
			bad(r.line, "regra %q: operating_schedule precisa de schedule", r.ID)
		}
		for _, e := range r.Schedule {
			if err := e.validate(); err != nil {
				bad(r.line, "regra %q: schedule: %v", r.ID, err)
			}
		}
	case KindQualitative, KindOutOfScope:
		if r.Why == "" {
			bad(r.line, "regra %q: %s precisa de why (por que não há critério objetivo)", r.ID, r.Kind)
		}
	case KindLicensingReview:
		if r.Why == "" {
			bad(r.line, "regra %q: licensing_review precisa de why (a revisão do licenciamento que o artigo pede)", r.ID)
		}
		if len(r.Match.Near) == 0 {
			bad(r.line, "regra %q: licensing_review precisa de match.near (os locais protegidos)", r.ID)
		}
		if r.Penalty != "" {
			bad(r.line, "regra %q: licensing_review dirige-se à administração e não tem penalty", r.ID)
		}
	case KindLocationBan:
		if len(r.Match.Places) == 0 && (r.RadiusM == nil || len(r.Match.Near) == 0) {
			bad(r.line, "regra %q: location_ban precisa de match.places ou de radius_m com match.near", r.ID)
		}
	}
}

// validateProcedure checks the documents of the procedure (the auto de
// infração is required).
func (c *Code) validateProcedure(bad func(int, string, ...any)) {
	if c.Procedure.Auto == nil {
		bad(0, "procedure.auto é obrigatório (o auto de infração)")
	}
	for _, d := range []*Document{c.Procedure.Notice, c.Procedure.Auto} {
		if d == nil {
			continue
		}
		if d.Article == "" || d.Quote == "" || len(d.Fields) == 0 {
			bad(0, "documento %q: cite article, quote e os campos exigidos", d.Kind)
		}
	}
}

func (c *Code) validateMatch(r *Rule, bad func(int, string, ...any)) {
	chk := func(what string, vals []string, vocab map[string]bool) {
		for _, v := range vals {
			if !vocab[v] {
				bad(r.line, "regra %q: %s %q fora do vocabulário de docs/codes-eval.md", r.ID, what, v)
			}
		}
	}
	chk("source", r.Match.Sources, knownSources)
	chk("establishment", r.Match.Establishments, knownEstablishments)
	chk("mechanism", r.Match.Mechanisms, knownMechanisms)
	chk("zone", r.Match.Zones, knownZones)
	chk("near", r.Match.Near, knownPOI)
	for _, p := range r.Match.Places {
		if p == "" {
			bad(r.line, "regra %q: places com valor vazio", r.ID)
		}
	}
	for k, v := range r.Match.Facts {
		checkFact(r, k, v, bad)
	}
	for _, m := range slices.Concat(r.ExemptIf, r.Match.AnyFacts) {
		if len(m) == 0 {
			bad(r.line, "regra %q: entrada vazia em exempt_if ou any_facts", r.ID)
		}
		for k, v := range m {
			checkFact(r, k, v, bad)
		}
	}
	for _, k := range r.Match.Needs {
		if !knownBoolFacts[k] && !knownStringFacts[k] && !knownNumberFacts[k] {
			bad(r.line, "regra %q: needs %q não é um fato conhecido", r.ID, k)
		}
	}
	if len(r.ExemptBy) > 0 && len(r.ExemptBy) != len(r.ExemptIf) {
		bad(r.line, "regra %q: exempt_by tem %d entradas e exempt_if %d; uma citação por exceção", r.ID, len(r.ExemptBy), len(r.ExemptIf))
	}
	for _, x := range r.ExemptBy {
		if (x.Article == "") != (x.Quote == "") {
			bad(r.line, "regra %q: exempt_by cita article e quote juntos (ou nenhum, para o próprio artigo)", r.ID)
		}
	}
	for _, x := range r.Supersedes {
		if x.Article == "" || x.Quote == "" || x.Why == "" {
			bad(r.line, "regra %q: supersedes precisa de article, quote e why (por que esta regra prevalece)", r.ID)
		}
	}
	if r.PermissionFact != "" && !knownBoolFacts[r.PermissionFact] {
		bad(r.line, "regra %q: permission_fact %q não é um fato booleano conhecido", r.ID, r.PermissionFact)
	}
}

func checkFact(r *Rule, k string, v any, bad func(int, string, ...any)) {
	switch {
	case k == "source": // the observation's source, for an exemption of one source only
		vals, _ := v.([]any)
		if s, ok := v.(string); ok {
			vals = []any{s}
		}
		for _, x := range vals {
			if s, _ := x.(string); !knownSources[s] {
				bad(r.line, "regra %q: source %v fora do vocabulário de docs/codes-eval.md", r.ID, x)
			}
		}
		if len(vals) == 0 {
			bad(r.line, "regra %q: fato source é texto ou lista de textos, achado %v", r.ID, v)
		}
	case knownBoolFacts[k]:
		if _, ok := v.(bool); !ok {
			bad(r.line, "regra %q: fato %q é booleano (true/false), achado %v", r.ID, k, v)
		}
	case knownStringFacts[k]:
		switch v.(type) {
		case string, []any:
		default:
			bad(r.line, "regra %q: fato %q é texto ou lista de textos, achado %v", r.ID, k, v)
		}
	default:
		bad(r.line, "regra %q: fato %q desconhecido (veja docs/codes-eval.md)", r.ID, k)
	}
}

// checkContradictions rejects two level limits for the same scope, zone
// and instant with different values.
func (c *Code) checkContradictions(bad func(int, string, ...any)) {
	var lv []*Rule
	for i := range c.Rules {
		if c.Rules[i].Kind == KindLevelLimit && c.Rules[i].LimitDBA != nil {
			lv = append(lv, &c.Rules[i])
		}
	}
	for i := 0; i < len(lv); i++ {
		for j := i + 1; j < len(lv); j++ {
			a, b := lv[i], lv[j]
			if *a.LimitDBA == *b.LimitDBA || !overlap(a.Match.Zones, b.Match.Zones) ||
				!overlap(a.Match.Sources, b.Match.Sources) || !overlap(a.Match.Establishments, b.Match.Establishments) ||
				len(a.Match.Facts) > 0 || len(b.Match.Facts) > 0 || len(a.Match.AnyFacts) > 0 || len(b.Match.AnyFacts) > 0 {
				continue
			}
			if windowsOverlap(a.Window, b.Window) {
				bad(b.line, "regra %q contradiz %q: limites diferentes (%.0f e %.0f dB) para a mesma zona e horário; separe as zonas ou os horários",
					b.ID, a.ID, *a.LimitDBA, *b.LimitDBA)
			}
		}
	}
}

func overlap(a, b []string) bool {
	if len(a) == 0 || len(b) == 0 {
		return true
	}
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// windowsOverlap checks minute by minute over one week.
func windowsOverlap(a, b *Window) bool {
	if a == nil || b == nil {
		return true
	}
	for m := 0; m < 1440; m++ {
		if a.containsMinute(m) && b.containsMinute(m) {
			return true
		}
	}
	return false
}

// Set is a collection of codes by id.
type Set struct {
	byID map[string]*Code
	// decreed holds the codes with the municipality's decreed days
	// (SetDecreed); a code absent from it has none.
	decreed atomic.Pointer[map[string]*Code]
}

// Builtin returns the five embedded seed codes.
func Builtin() (*Set, error) {
	return loadFS(builtin, "data")
}

// LoadDir returns the embedded codes plus every *.yaml in dir; a file in
// dir with the id of an embedded code replaces it.
func LoadDir(dir string) (*Set, error) {
	s, err := Builtin()
	if err != nil {
		return nil, err
	}
	if dir == "" {
		return s, nil
	}
	extra, err := loadFS(os.DirFS(dir), ".")
	if err != nil {
		return nil, err
	}
	for id, c := range extra.byID {
		c.file = filepath.Join(dir, c.file)
		s.byID[id] = c
	}
	return s, nil
}

func loadFS(fsys fs.FS, dir string) (*Set, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("codes: read %s: %w", dir, err)
	}
	s := &Set{byID: map[string]*Code{}}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		p := e.Name()
		if dir != "." {
			p = dir + "/" + e.Name()
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, fmt.Errorf("codes: read %s: %w", p, err)
		}
		c, err := Parse(e.Name(), data)
		if err != nil {
			return nil, err
		}
		if prev, dup := s.byID[c.ID]; dup {
			return nil, &Error{File: e.Name(), Msg: fmt.Sprintf("id %q já usado por %s", c.ID, prev.file)}
		}
		s.byID[c.ID] = c
	}
	return s, nil
}

// Code returns the code with id, with the decreed days last given to
// SetDecreed.
func (s *Set) Code(id string) (*Code, bool) {
	return s.code(id)
}

// IDs returns the code ids in order.
func (s *Set) IDs() []string {
	ids := make([]string, 0, len(s.byID))
	for id := range s.byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Resolve finds the code a person means by name: the id in any case, with
// or without accents, spaces for hyphens ("Lapa", "Conceição de Macabu").
// When nothing matches, the error is pt-BR and suggests the nearest ids.
func (s *Set) Resolve(name string) (*Code, error) {
	key := normalizeID(name)
	if c, ok := s.code(key); ok {
		return c, nil
	}
	ids := s.IDs()
	if key == "" {
		return nil, fmt.Errorf("informe o código municipal; códigos carregados: %s", strings.Join(ids, ", "))
	}
	var near []string
	for _, id := range ids {
		if strings.HasPrefix(id, key) || strings.Contains(id, key) || levenshtein(id, key) <= 3 {
			near = append(near, id)
		}
	}
	if len(near) > 0 {
		return nil, fmt.Errorf("código %q desconhecido; você quis dizer %s? códigos carregados: %s",
			name, quoteList(near), strings.Join(ids, ", "))
	}
	return nil, fmt.Errorf("código %q desconhecido; códigos carregados: %s", name, strings.Join(ids, ", "))
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return strings.Join(q, " ou ")
}

var accentFold = strings.NewReplacer("á", "a", "à", "a", "â", "a", "ã", "a", "ä", "a", "é", "e", "ê", "e", "è", "e",
	"í", "i", "î", "i", "ó", "o", "ô", "o", "õ", "o", "ö", "o", "ú", "u", "ü", "u", "ç", "c")

// normalizeID folds a municipality name or code id to the id form.
func normalizeID(s string) string {
	s = accentFold.Replace(strings.ToLower(strings.TrimSpace(s)))
	s = strings.Map(func(r rune) rune {
		switch {
		case r == ' ' || r == '_' || r == '/':
			return '-'
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			return r
		}
		return -1
	}, s)
	for strings.Contains(s, "--") {
		s = strings.ReplaceAll(s, "--", "-")
	}
	return strings.Trim(s, "-")
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

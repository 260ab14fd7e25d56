// Package registry is the central service's register of who may send data and
// what it describes: gateways (identity, public key, MQTT credential),
// sensors (where they are, which municipal code and zone apply, the meter's
// grade and calibration) and the establishments each sensor watches (the
// facts a notice needs: name, CNPJ/CPF, address, type, mechanism, licences).
//
// The register is a YAML file, parsed strictly: an unknown key, a missing
// field or a malformed value is an error that names the line and says what to
// fix (in Portuguese, because operators read it). A parsed *Registry is
// immutable; Live holds the current one and swaps it atomically when the
// file changes (mtime poll) or when Reload is called (SIGHUP), keeping the
// old register when the new file is invalid.
//
// The vocabulary of zones, establishment types and mechanisms is the one of
// the codes engine's evaluation contract (`sossego codes eval`, codes/README.md).
//
// Overview of its parts: the YAML register of gateways, sensors,
// establishments; live reload; a sensor's meter as `calibration.Decide` takes
// it (`Meter.Calibration`).
package registry

import (
	"bytes"
	"crypto/ed25519"
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sossego/sossego/internal/calibration"
	"github.com/sossego/sossego/internal/wire"
	"github.com/sossego/sossego/internal/wire/signature"
)

// Zones a sensor may be placed in (docs/codes-eval.md `zone`).
var Zones = []string{
	"hospital_surroundings", "near_hospital", "near_school", "near_residence", "residential",
	"logradouro_publico", "centro_historico", "industrial", "quarry", "municipal_market", "other", "unclassified",
}

// EstablishmentTypes (docs/codes-eval.md `facts.establishment_type`).
var EstablishmentTypes = []string{
	"bar", "restaurant", "club", "nightclub", "commerce", "church_or_temple", "factory",
	"industry", "construction_site", "residence", "public_event", "quarry", "workshop",
}

// Mechanisms (docs/codes-eval.md `facts.mechanism`).
var Mechanisms = []string{
	"sound_system", "recorded_music", "live_music", "karaoke", "loudspeaker_ad", "siren_whistle",
	"bell", "machinery", "radio_interference",
}

// ServiceUser is the central service's MQTT user name (and default client
// id), internal/central.ServiceUser. A gateway's broker user name is its id,
// so a gateway with this id would log in as the central service (and see
// every gateway's data): the id is reserved.
const ServiceUser = "sossego-central"

// Grades of a meter, as on the wire.
var Grades = []string{"class1", "class2", "screening"}

// Gateway is one edge gateway.
type Gateway struct {
	ID           string `yaml:"id"`
	Municipality string `yaml:"municipality"` // topic segment; also the default code of its sensors
	Name         string `yaml:"name,omitempty"`
	// PublicKey is the gateway's ed25519 public key, base64 (standard).
	PublicKey string `yaml:"public_key,omitempty"`
	// RequireSignature defaults to true: unsigned or wrongly signed batches
	// are rejected. With false they are accepted and stored as unverified.
	RequireSignature *bool `yaml:"require_signature,omitempty"`
	// MQTTPasswordHash is a bcrypt hash of the gateway's broker password
	// (username = gateway id). Empty: the gateway must present a TLS client
	// certificate whose CN is its id.
	MQTTPasswordHash string `yaml:"mqtt_password_hash,omitempty"`
	// KeyValidFrom is when PublicKey came into force (RFC 3339; empty:
	// always). A batch received before it is checked with the previous key
	// in force then.
	KeyValidFrom string `yaml:"key_valid_from,omitempty"`
	// PreviousKeys are the gateway's rotated or revoked keys, kept so that
	// every batch stays verifiable with the key in force when it was
	// received (evidence packages carry them).
	PreviousKeys []PreviousKey `yaml:"previous_keys,omitempty"`

	key  ed25519.PublicKey
	vkey *signature.PublicKey
	keys []KeyPeriod // oldest first; the last is the current key
	line int
}

// PreviousKey is a key the gateway no longer signs with.
type PreviousKey struct {
	PublicKey  string `yaml:"public_key"`
	ValidFrom  string `yaml:"valid_from,omitempty"` // RFC 3339; empty: from the start
	ValidUntil string `yaml:"valid_until"`          // RFC 3339, exclusive: when it was rotated or revoked
	// Revoked marks a compromised key (rather than one retired in a
	// planned rotation); batches received while it was in force stay
	// verifiable, and the evidence says it was revoked.
	Revoked bool   `yaml:"revoked,omitempty"`
	Reason  string `yaml:"reason,omitempty"`
}

// KeyPeriod is one of a gateway's keys with the time it was in force,
// [From, Until); a zero bound is open.
type KeyPeriod struct {
	Key     ed25519.PublicKey
	From    time.Time
	Until   time.Time
	Revoked bool
	Reason  string
	Current bool

	vkey *signature.PublicKey
}

// Covers reports whether the key was in force at t.
func (k KeyPeriod) Covers(t time.Time) bool {
	return (k.From.IsZero() || !t.Before(k.From)) && (k.Until.IsZero() || t.Before(k.Until))
}

// Key returns the decoded public key (nil when none is registered).
func (g Gateway) Key() ed25519.PublicKey { return g.key }

// VerifyKey returns the public key prepared for signature checks (nil when
// none is registered).
func (g Gateway) VerifyKey() *signature.PublicKey { return g.vkey }

// Keys returns every key the gateway has had, oldest first, with its
// validity (the current one last).
func (g Gateway) Keys() []KeyPeriod { return slices.Clone(g.keys) }

// KeyAt returns the key in force at t: the one a batch received at t was
// (or must be) checked with.
func (g Gateway) KeyAt(t time.Time) (KeyPeriod, bool) {
	for i := len(g.keys) - 1; i >= 0; i-- {
		if g.keys[i].Covers(t) {
			return g.keys[i], true
		}
	}
	return KeyPeriod{}, false
}

// VerifyKeyAt is KeyAt prepared for signature checks (nil when no key was
// in force at t).
func (g Gateway) VerifyKeyAt(t time.Time) *signature.PublicKey {
	if k, ok := g.KeyAt(t); ok {
		return k.vkey
	}
	return nil
}

// SignatureRequired reports whether batches must carry a valid signature.
func (g Gateway) SignatureRequired() bool { return g.RequireSignature == nil || *g.RequireSignature }

// Location is a WGS 84 position.
type Location struct {
	Lat float64 `yaml:"lat" json:"lat"`
	Lon float64 `yaml:"lon" json:"lon"`
}

// Meter describes the instrument behind a sensor.
type Meter struct {
	Model        string `yaml:"model,omitempty" json:"model,omitempty"`
	Serial       string `yaml:"serial,omitempty" json:"serial,omitempty"`
	Grade        string `yaml:"grade" json:"grade"`                                     // class1 | class2 | screening
	CalibratedAt string `yaml:"calibrated_at,omitempty" json:"calibrated_at,omitempty"` // YYYY-MM-DD
	Certificate  string `yaml:"certificate,omitempty" json:"certificate,omitempty"`     // calibration certificate id
}

// Calibration is the meter as calibration.Decide takes it (the zero Meter,
// no grade, for a sensor out of the register).
func (m Meter) Calibration() calibration.SensorMeter {
	return calibration.SensorMeter{Grade: m.Grade, CalibratedAt: m.CalibratedAt, Certificate: m.Certificate}
}

// Licence is an authorisation an establishment holds.
type Licence struct {
	Kind       string `yaml:"kind" json:"kind"` // e.g. alvara_funcionamento, licenca_musica_ao_vivo
	Number     string `yaml:"number,omitempty" json:"number,omitempty"`
	Scope      string `yaml:"scope,omitempty" json:"scope,omitempty"`
	ValidUntil string `yaml:"valid_until,omitempty" json:"valid_until,omitempty"` // YYYY-MM-DD
}

// Establishment is a place a sensor watches.
type Establishment struct {
	Name      string    `yaml:"name" json:"name"`
	Document  string    `yaml:"document" json:"document"` // CNPJ or CPF, check digits verified
	Address   string    `yaml:"address" json:"address"`
	Type      string    `yaml:"type" json:"type"`
	Mechanism string    `yaml:"mechanism,omitempty" json:"mechanism,omitempty"`
	Licences  []Licence `yaml:"licences,omitempty" json:"licences,omitempty"`
}

// Sensor is one measuring point.
type Sensor struct {
	ID             string          `yaml:"id" json:"id"`
	Gateway        string          `yaml:"gateway" json:"gateway"`
	Code           string          `yaml:"code,omitempty" json:"code"` // municipal code id (codes-eval.md); default: the gateway's municipality
	Zone           string          `yaml:"zone" json:"zone"`
	Location       Location        `yaml:"location" json:"location"`
	Address        string          `yaml:"address" json:"address"`
	Meter          Meter           `yaml:"meter" json:"meter"`
	Establishments []Establishment `yaml:"establishments,omitempty" json:"establishments,omitempty"`

	municipality string
	line         int
}

// Municipality is the topic segment of the sensor's gateway.
func (s Sensor) Municipality() string { return s.municipality }

// Primary is the sensor's primary establishment: the first of its list,
// whose type and mechanism pick the limit in force and whose name the
// alerts and notices carry; ok is false (and the establishment zero) when
// the sensor watches none.
func (s Sensor) Primary() (e Establishment, ok bool) { return Primary(s.Establishments) }

// Primary is the primary establishment of a sensor's list (Sensor.Primary).
func Primary(es []Establishment) (Establishment, bool) {
	if len(es) == 0 {
		return Establishment{}, false
	}
	return es[0], true
}

// file is the YAML document.
type file struct {
	Version  int       `yaml:"version"`
	Gateways []Gateway `yaml:"gateways"`
	Sensors  []Sensor  `yaml:"sensors"`
}

// Registry is a validated, immutable register.
type Registry struct {
	gateways map[string]Gateway
	sensors  map[string]Sensor
	gwOrder  []string
	snOrder  []string
}

// Gateway returns the gateway with that id.
func (r *Registry) Gateway(id string) (Gateway, bool) {
	g, ok := r.gateways[id]
	return g, ok
}

// Sensor returns the sensor with that id.
func (r *Registry) Sensor(id string) (Sensor, bool) {
	s, ok := r.sensors[id]
	return s, ok
}

// Gateways returns every gateway in file order.
func (r *Registry) Gateways() []Gateway {
	out := make([]Gateway, 0, len(r.gwOrder))
	for _, id := range r.gwOrder {
		out = append(out, r.gateways[id])
	}
	return out
}

// Sensors returns every sensor in file order.
func (r *Registry) Sensors() []Sensor {
	out := make([]Sensor, 0, len(r.snOrder))
	for _, id := range r.snOrder {
		out = append(out, r.sensors[id])
	}
	return out
}

// Empty returns a register with no gateways: every message is rejected as
// coming from an unknown source.
func Empty() *Registry {
	return &Registry{gateways: map[string]Gateway{}, sensors: map[string]Sensor{}}
}

//go:embed demo.yaml
var demoYAML []byte

// DemoYAML is the demonstration register (the same text as
// docs/registry.example.yaml). Its keys and passwords derive from the
// public loadgen seed: for trying Sossego out, never for production.
func DemoYAML() []byte { return bytes.Clone(demoYAML) }

// Error is a problem in the register file. Line is 0 when unknown.
type Error struct {
	Line int
	Msg  string // Portuguese, says what to fix
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("cadastro: linha %d: %s", e.Line, e.Msg)
	}
	return "cadastro: " + e.Msg
}

// Errors is every problem found in one file.
type Errors []*Error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// MaxFileSize bounds what Parse reads.
const MaxFileSize = 16 << 20

// Parse decodes and validates a register. The error is an Errors value
// listing every problem (or a single *Error for unreadable YAML).
func Parse(data []byte) (*Registry, error) {
	if len(data) > MaxFileSize {
		return nil, &Error{Msg: fmt.Sprintf("arquivo com %d bytes excede o máximo de %d", len(data), MaxFileSize)}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{Msg: "arquivo vazio; veja docs/registry.example.yaml"}
		}
		return nil, yamlError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{Line: extra.Line, Msg: "mais de um documento YAML no arquivo; use um só"}
	}
	if len(doc.Content) == 0 {
		return nil, &Error{Msg: "arquivo vazio; veja docs/registry.example.yaml"}
	}
	root := doc.Content[0]
	var errs Errors
	checkKeys(root, reflect.TypeOf(file{}), "raiz do cadastro", &errs, 0)
	if len(errs) > 0 {
		return nil, errs
	}
	var f file
	if err := root.Decode(&f); err != nil {
		return nil, yamlError(err)
	}
	// Record the line of each list item for validation messages.
	if gw := mapValue(root, "gateways"); gw != nil && gw.Kind == yaml.SequenceNode {
		for i, n := range gw.Content {
			if i < len(f.Gateways) {
				f.Gateways[i].line = n.Line
			}
		}
	}
	if sn := mapValue(root, "sensors"); sn != nil && sn.Kind == yaml.SequenceNode {
		for i, n := range sn.Content {
			if i < len(f.Sensors) {
				f.Sensors[i].line = n.Line
			}
		}
	}
	return build(f)
}

func yamlError(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		var es Errors
		for _, m := range te.Errors {
			es = append(es, &Error{Line: lineOf(m), Msg: "valor de tipo errado: " + m})
		}
		return es
	}
	return &Error{Line: lineOf(err.Error()), Msg: "YAML inválido: " + err.Error()}
}

// lineOf extracts "line N" from a yaml error message.
func lineOf(msg string) int {
	i := strings.Index(msg, "line ")
	if i < 0 {
		return 0
	}
	n := 0
	for _, c := range msg[i+5:] {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
		if n > math.MaxInt32/10 {
			return 0
		}
	}
	return n
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// checkKeys walks a YAML node against a Go type and reports every mapping
// key that has no field, with the valid keys.
func checkKeys(n *yaml.Node, t reflect.Type, where string, errs *Errors, depth int) {
	if depth > 20 || n == nil {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode {
		*errs = append(*errs, &Error{Line: n.Line, Msg: "aliases YAML (*nome) não são aceitos no cadastro; repita o valor"})
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
				return
			}
			*errs = append(*errs, &Error{Line: n.Line, Msg: fmt.Sprintf("%s deve ser um mapa (chave: valor)", where)})
			return
		}
		fields := map[string]reflect.StructField{}
		var names []string
		for i := range t.NumField() {
			f := t.Field(i)
			tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
			if tag == "" || tag == "-" || !f.IsExported() {
				continue
			}
			fields[tag] = f
			names = append(names, tag)
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "<<" {
				*errs = append(*errs, &Error{Line: k.Line, Msg: "merge YAML (<<) não é aceito no cadastro"})
				continue
			}
			f, ok := fields[k.Value]
			if !ok {
				*errs = append(*errs, &Error{Line: k.Line, Msg: fmt.Sprintf("campo desconhecido %q em %s; campos válidos: %s",
					k.Value, where, strings.Join(names, ", "))})
				continue
			}
			if seen[k.Value] {
				*errs = append(*errs, &Error{Line: k.Line, Msg: fmt.Sprintf("campo %q repetido em %s", k.Value, where)})
			}
			seen[k.Value] = true
			checkKeys(v, f.Type, fmt.Sprintf("%s.%s", where, k.Value), errs, depth+1)
		}
	case reflect.Slice:
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return
		}
		if n.Kind != yaml.SequenceNode {
			*errs = append(*errs, &Error{Line: n.Line, Msg: fmt.Sprintf("%s deve ser uma lista (itens com -)", where)})
			return
		}
		for i, c := range n.Content {
			checkKeys(c, t.Elem(), fmt.Sprintf("%s[%d]", where, i), errs, depth+1)
		}
	default:
		if n.Kind != yaml.ScalarNode {
			*errs = append(*errs, &Error{Line: n.Line, Msg: fmt.Sprintf("%s deve ser um valor simples", where)})
		}
	}
}

func build(f file) (*Registry, error) {
	var errs problems
	if f.Version != 1 {
		errs.add(1, "version: %d não suportada; use version: 1", f.Version)
	}
	r := &Registry{gateways: map[string]Gateway{}, sensors: map[string]Sensor{}}
	for _, g := range f.Gateways {
		switch {
		case !wire.ValidID(g.ID):
			errs.add(g.line, "gateway id %q inválido: use 1–64 caracteres a-z, 0-9, - e _", g.ID)
			continue
		case r.gateways[g.ID].ID != "":
			errs.add(g.line, "gateway %q cadastrado duas vezes", g.ID)
			continue
		case g.ID == ServiceUser:
			// Reported once; the gateway is still recorded so that its
			// sensors do not add "not registered" errors.
			errs.add(g.line, "gateway id %q é reservado ao usuário MQTT do serviço central; escolha outro id para o gateway", g.ID)
		}
		g = checkGateway(g, &errs)
		r.gateways[g.ID] = g
		r.gwOrder = append(r.gwOrder, g.ID)
	}
	for _, s := range f.Sensors {
		if !wire.ValidID(s.ID) {
			errs.add(s.line, "sensor id %q inválido: use 1–64 caracteres a-z, 0-9, - e _", s.ID)
			continue
		}
		if _, dup := r.sensors[s.ID]; dup {
			errs.add(s.line, "sensor %q cadastrado duas vezes", s.ID)
			continue
		}
		g, ok := r.gateways[s.Gateway]
		if !ok {
			errs.add(s.line, "sensor %q: gateway %q não está cadastrado em gateways", s.ID, s.Gateway)
		}
		s.municipality = g.Municipality
		if s.Code == "" {
			s.Code = g.Municipality
		}
		checkSensor(s, &errs)
		for i, e := range s.Establishments {
			checkEstablishment(fmt.Sprintf("sensor %q: establishments[%d]", s.ID, i), s.line, e, &errs)
		}
		r.sensors[s.ID] = s
		r.snOrder = append(r.snOrder, s.ID)
	}
	if len(errs) > 0 {
		sort.SliceStable(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
		return nil, Errors(errs)
	}
	return r, nil
}

// problems collects a register's errors, each with its line.
type problems Errors

func (p *problems) add(line int, format string, a ...any) {
	*p = append(*p, &Error{Line: line, Msg: fmt.Sprintf(format, a...)})
}

// checkGateway checks a gateway's municipality, key and MQTT password
// hash, and returns it with its parsed key.
func checkGateway(g Gateway, errs *problems) Gateway {
	if !wire.ValidID(g.Municipality) {
		errs.add(g.line, "gateway %q: municipality %q inválido: use o id do código municipal (ex.: lapa)", g.ID, g.Municipality)
	}
	if g.PublicKey != "" {
		k, err := base64.StdEncoding.DecodeString(g.PublicKey)
		if err != nil || len(k) != ed25519.PublicKeySize {
			errs.add(g.line, "gateway %q: public_key deve ser a chave ed25519 de 32 bytes em base64 (veja `sossego-gateway key`)", g.ID)
		} else if vk, err := signature.NewPublicKey(ed25519.PublicKey(k)); err != nil {
			errs.add(g.line, "gateway %q: public_key não é uma chave ed25519 utilizável (fora da curva, de ordem pequena ou com componente de ordem pequena — nenhuma chave gerada de verdade é assim); gere-a com `sossego-gateway key`", g.ID)
		} else {
			g.key, g.vkey = ed25519.PublicKey(k), vk
		}
	} else if g.SignatureRequired() {
		errs.add(g.line, "gateway %q: public_key ausente; cadastre a chave ou use require_signature: false", g.ID)
	}
	g.keys = checkKeyHistory(g, errs)
	switch h := g.MQTTPasswordHash; {
	case h == "" || strings.HasPrefix(h, "$2"):
	case strings.HasPrefix(h, "$7$") || strings.HasPrefix(h, "$6$"):
		errs.add(g.line, "gateway %q: mqtt_password_hash está no formato do mosquitto_passwd (%s…), que o broker embutido não lê; gere um hash bcrypt com `htpasswd -nbB %s SENHA` (a parte depois de \"%s:\")", g.ID, h[:3], g.ID, g.ID)
	default:
		errs.add(g.line, "gateway %q: mqtt_password_hash deve ser um hash bcrypt ($2a$/$2b$/$2y$…), não a senha; gere-o com `htpasswd -nbB %s SENHA`", g.ID, g.ID)
	}
	return g
}

// checkKeyHistory checks the previous keys and the current key's start:
// each a usable ed25519 key, periods in order and not overlapping, the
// current key not among them. It returns every key with its period.
func checkKeyHistory(g Gateway, errs *problems) []KeyPeriod {
	parse := func(what, v string) (time.Time, bool) {
		if v == "" {
			return time.Time{}, true
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			errs.add(g.line, "gateway %q: %s %q não é uma data e hora RFC 3339 (ex.: 2026-06-01T00:00:00Z)", g.ID, what, v)
			return time.Time{}, false
		}
		return t.UTC(), true
	}
	var out []KeyPeriod
	seen := map[string]bool{g.PublicKey: g.PublicKey != ""}
	for i, p := range g.PreviousKeys {
		where := fmt.Sprintf("previous_keys[%d]", i)
		k, err := base64.StdEncoding.DecodeString(p.PublicKey)
		var vk *signature.PublicKey
		if err == nil && len(k) == ed25519.PublicKeySize {
			vk, err = signature.NewPublicKey(ed25519.PublicKey(k))
		}
		if err != nil || len(k) != ed25519.PublicKeySize {
			errs.add(g.line, "gateway %q: %s.public_key deve ser uma chave ed25519 utilizável de 32 bytes em base64", g.ID, where)
			continue
		}
		if seen[p.PublicKey] {
			errs.add(g.line, "gateway %q: %s.public_key repete outra chave do gateway; cada chave aparece uma vez", g.ID, where)
			continue
		}
		seen[p.PublicKey] = true
		from, ok1 := parse(where+".valid_from", p.ValidFrom)
		until, ok2 := parse(where+".valid_until", p.ValidUntil)
		if !ok1 || !ok2 {
			continue
		}
		if until.IsZero() {
			errs.add(g.line, "gateway %q: %s.valid_until obrigatório: quando a chave deixou de valer (rotação ou revogação)", g.ID, where)
			continue
		}
		if !from.IsZero() && !from.Before(until) {
			errs.add(g.line, "gateway %q: %s: valid_from deve ser anterior a valid_until", g.ID, where)
			continue
		}
		if n := len(out); n > 0 && (from.IsZero() || from.Before(out[n-1].Until)) {
			errs.add(g.line, "gateway %q: %s começa antes do fim da chave anterior; liste as chaves em ordem, sem sobreposição", g.ID, where)
			continue
		}
		out = append(out, KeyPeriod{Key: ed25519.PublicKey(k), From: from, Until: until, Revoked: p.Revoked, Reason: p.Reason, vkey: vk})
	}
	from, ok := parse("key_valid_from", g.KeyValidFrom)
	if !ok {
		return out
	}
	if n := len(out); n > 0 && g.key != nil {
		if from.IsZero() {
			from = out[n-1].Until
		} else if from.Before(out[n-1].Until) {
			errs.add(g.line, "gateway %q: key_valid_from é anterior ao fim da última chave em previous_keys", g.ID)
		}
	}
	if g.key != nil {
		out = append(out, KeyPeriod{Key: g.key, From: from, Current: true, vkey: g.vkey})
	}
	return out
}

// checkSensor checks a sensor's code, zone, location, address and meter.
func checkSensor(s Sensor, errs *problems) {
	if !wire.ValidID(s.Code) {
		errs.add(s.line, "sensor %q: code %q inválido (id do código municipal, ex.: lapa)", s.ID, s.Code)
	}
	if !slices.Contains(Zones, s.Zone) {
		errs.add(s.line, "sensor %q: zone %q desconhecida; use uma de: %s", s.ID, s.Zone, strings.Join(Zones, ", "))
	}
	if s.Location.Lat < -90 || s.Location.Lat > 90 || s.Location.Lon < -180 || s.Location.Lon > 180 ||
		(s.Location.Lat == 0 && s.Location.Lon == 0) {
		errs.add(s.line, "sensor %q: location lat/lon ausente ou fora da faixa (graus decimais, ex.: lat: -25.77, lon: -49.72)", s.ID)
	}
	if strings.TrimSpace(s.Address) == "" {
		errs.add(s.line, "sensor %q: address obrigatório (o endereço vai na notificação)", s.ID)
	}
	if !slices.Contains(Grades, s.Meter.Grade) {
		errs.add(s.line, "sensor %q: meter.grade %q inválido; use class1, class2 ou screening", s.ID, s.Meter.Grade)
	}
	if s.Meter.CalibratedAt != "" {
		if _, err := time.Parse(time.DateOnly, s.Meter.CalibratedAt); err != nil {
			errs.add(s.line, "sensor %q: meter.calibrated_at %q não é uma data AAAA-MM-DD", s.ID, s.Meter.CalibratedAt)
		}
	} else if s.Meter.Grade == "class1" || s.Meter.Grade == "class2" {
		errs.add(s.line, "sensor %q: medidor %s precisa de meter.calibrated_at (data da última calibração)", s.ID, s.Meter.Grade)
	}
}

// checkEstablishment checks one establishment a sensor watches.
func checkEstablishment(where string, line int, e Establishment, errs *problems) {
	if strings.TrimSpace(e.Name) == "" {
		errs.add(line, "%s: name obrigatório", where)
	}
	if err := CheckDocument(e.Document); err != nil {
		errs.add(line, "%s: document %q: %v", where, e.Document, err)
	}
	if strings.TrimSpace(e.Address) == "" {
		errs.add(line, "%s: address obrigatório", where)
	}
	if !slices.Contains(EstablishmentTypes, e.Type) {
		errs.add(line, "%s: type %q desconhecido; use um de: %s", where, e.Type, strings.Join(EstablishmentTypes, ", "))
	}
	if e.Mechanism != "" && !slices.Contains(Mechanisms, e.Mechanism) {
		errs.add(line, "%s: mechanism %q desconhecido; use um de: %s", where, e.Mechanism, strings.Join(Mechanisms, ", "))
	}
	for j, l := range e.Licences {
		if strings.TrimSpace(l.Kind) == "" {
			errs.add(line, "%s: licences[%d]: kind obrigatório (ex.: alvara_funcionamento)", where, j)
		}
		if l.ValidUntil != "" {
			if _, err := time.Parse(time.DateOnly, l.ValidUntil); err != nil {
				errs.add(line, "%s: licences[%d]: valid_until %q não é uma data AAAA-MM-DD", where, j, l.ValidUntil)
			}
		}
	}
}

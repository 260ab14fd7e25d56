// Package wire is the MQTT contract between gateways and the central service,
// version 1 (docs/wire.md is the human-readable copy; keep them in step).
//
// A gateway publishes signed batches of 1-s acoustic records (and
// environmental readings) under its own topic prefix, numbered with a
// per-gateway sequence. The central service stores them durably, then
// publishes the highest contiguous seq it holds on the gateway's ack topic;
// only then does the gateway drop them from its outbox.
//
// The package is pure: encoding, decoding, signing and validation, with the
// receive time passed in by the caller. Checking the signatures is
// internal/wire/signature's.
//
// Overview of its parts: MQTT wire contract v1 (docs/wire.md): topics, signed
// envelopes (`Seal`), the strict decoder (`Open`), validation.
package wire

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/sossego/sossego/internal/level"
)

// Version is the wire-format version carried in topics and envelopes.
const Version = 1

// Root is the first topic segment.
const Root = "sossego"

// Topic suffixes.
const (
	KindLevels = "levels"
	KindEnv    = "env"
	KindStatus = "status"
	KindAck    = "ack"
	// KindCheck is a field check of a meter with an acoustic calibrator
	// (a signed event carried like a batch, in the gateway's seq).
	KindCheck = "check"
)

// Limits on what a receiver accepts.
const (
	MinDB        = 0.0
	MaxDB        = 160.0
	MaxRecords   = 3600    // one hour of 1-s records per batch
	MaxDurMs     = 1000    // one record covers at most one second (records are stored per second)
	MaxPayload   = 1 << 20 // bytes; brokers should refuse larger packets
	MaxIDLength  = 64
	DefaultSkew  = 10 * time.Minute    // how far in the future a record may be
	DefaultStale = 30 * 24 * time.Hour // how old a record may be (outbox replay after an outage)
	// MaxSeq is the highest seq: seqs are stored as SQLite integers
	// (int64), and a gateway counting one batch a second would need 3·10¹¹
	// years to reach it.
	MaxSeq = math.MaxInt64
	// MaxBatchSpan bounds the time between a batch's first and last record
	// start (an hour of 1-s records spans 3599 s). A gateway cuts a batch
	// after batch.max_age (default 10 s).
	MaxBatchSpan = time.Hour
	// MaxTextLen bounds the free-text fields of a batch, in bytes:
	// device.model, device.serial, device.firmware and clock.source.
	MaxTextLen = 128
	// MaxStatusPayload is the largest status message (a gateway's is
	// ~250 bytes). Brokers keep a status retained, so it is small on purpose.
	MaxStatusPayload = 4096
)

// ValidID reports whether s may be used as a municipality, gateway or sensor
// id: lowercase letters, digits, '-' and '_', 1–64 characters, the first a
// letter or digit; no MQTT wildcard or separator. (It is the regular
// expression ^[a-z0-9][a-z0-9_-]{0,63}$ written out: three ids are checked
// per message, and the regexp cost ~1 µs of them.)
func ValidID(s string) bool {
	if len(s) == 0 || len(s) > 64 || s[0] == '-' || s[0] == '_' {
		return false
	}
	for i := range len(s) {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

// LevelsTopic is where a gateway publishes 1-s records for one sensor.
func LevelsTopic(municipality, gateway, sensor string) string {
	return strings.Join([]string{Root, "v1", municipality, gateway, sensor, KindLevels}, "/")
}

// EnvTopic is where a gateway publishes environmental readings for one sensor.
func EnvTopic(municipality, gateway, sensor string) string {
	return strings.Join([]string{Root, "v1", municipality, gateway, sensor, KindEnv}, "/")
}

// CheckTopic is where a gateway publishes a calibrator check of one sensor.
func CheckTopic(municipality, gateway, sensor string) string {
	return strings.Join([]string{Root, "v1", municipality, gateway, sensor, KindCheck}, "/")
}

// StatusTopic is the gateway's retained status topic; its Will sets "offline".
func StatusTopic(municipality, gateway string) string {
	return strings.Join([]string{Root, "v1", municipality, gateway, KindStatus}, "/")
}

// AckTopic is where the central service acknowledges durable storage.
func AckTopic(municipality, gateway string) string {
	return strings.Join([]string{Root, "v1", municipality, gateway, KindAck}, "/")
}

// Subscriptions the central service uses.
const (
	SubLevels = Root + "/v1/+/+/+/" + KindLevels
	SubEnv    = Root + "/v1/+/+/+/" + KindEnv
	SubStatus = Root + "/v1/+/+/" + KindStatus
	SubCheck  = Root + "/v1/+/+/+/" + KindCheck
)

// Topic is a parsed topic name.
type Topic struct {
	Municipality, Gateway, Sensor string // Sensor is empty for status and ack
	Kind                          string // levels, env, check, status or ack
}

// ParseTopic splits a v1 topic name and checks every id.
func ParseTopic(name string) (Topic, error) {
	p := strings.Split(name, "/")
	bad := func(why string) (Topic, error) {
		return Topic{}, &Error{Reason: ReasonTopic, Msg: fmt.Sprintf("tópico %q inválido: %s", name, why)}
	}
	if len(p) < 5 || p[0] != Root || p[1] != "v1" {
		return bad("esperado sossego/v1/{município}/{gateway}/…")
	}
	var t Topic
	switch {
	case len(p) == 6 && (p[5] == KindLevels || p[5] == KindEnv || p[5] == KindCheck):
		t = Topic{Municipality: p[2], Gateway: p[3], Sensor: p[4], Kind: p[5]}
		if !ValidID(t.Sensor) {
			return bad(fmt.Sprintf("identificador de sensor %q fora do padrão [a-z0-9_-]", t.Sensor))
		}
	case len(p) == 5 && (p[4] == KindStatus || p[4] == KindAck):
		t = Topic{Municipality: p[2], Gateway: p[3], Kind: p[4]}
	default:
		return bad("tipo de mensagem desconhecido")
	}
	for _, id := range []string{t.Municipality, t.Gateway} {
		if !ValidID(id) {
			return bad(fmt.Sprintf("identificador %q fora do padrão [a-z0-9_-]", id))
		}
	}
	return t, nil
}

// Device is the instrument metadata carried by every batch.
type Device struct {
	Model        string `json:"model"`
	Serial       string `json:"serial"`
	Firmware     string `json:"firmware,omitempty"`
	Grade        string `json:"grade"`                   // class1 | class2 | screening
	CalibratedAt string `json:"calibrated_at,omitempty"` // YYYY-MM-DD
}

// Clock is the gateway's clock-sync state when the batch was built.
type Clock struct {
	Synced   bool    `json:"synced"`
	OffsetMs float64 `json:"offset_ms"`        // estimated offset from the reference
	Source   string  `json:"source,omitempty"` // ntp, gps, rtc, none; step marks seconds re-measured after a backward clock step
}

// Record is one 1-s (or longer) acoustic record. Levels in dB re 20 µPa.
type Record struct {
	T        time.Time        `json:"t"` // start of the interval, UTC, ms precision
	DurMs    int64            `json:"dur_ms"`
	LAeq     float64          `json:"laeq_db"`
	LAFmax   float64          `json:"lafmax_db"`
	LAFmin   float64          `json:"lafmin_db"`
	LCpeak   *float64         `json:"lcpeak_db,omitempty"`
	Hist     *level.Histogram `json:"hist,omitempty"` // LAF samples in 0.1 dB bins, ms each
	Overload bool             `json:"overload,omitempty"`
}

// EnvRecord is one environmental reading.
type EnvRecord struct {
	T            time.Time `json:"t"`
	TemperatureC *float64  `json:"temperature_c,omitempty"`
	HumidityPct  *float64  `json:"humidity_pct,omitempty"`
	PressureHPa  *float64  `json:"pressure_hpa,omitempty"`
}

// Check is a field check of the meter with an acoustic calibrator: the
// calibrator's tone (94 or 114 dB at 1 kHz) on the microphone, and the
// level the meter measured. The drift is MeasuredDB − ReferenceDB.
type Check struct {
	T                time.Time `json:"t"` // when the check was made, UTC
	ReferenceDB      float64   `json:"reference_db"`
	MeasuredDB       float64   `json:"measured_db"`
	FrequencyHz      float64   `json:"frequency_hz"`
	CalibratorModel  string    `json:"calibrator_model"`
	CalibratorSerial string    `json:"calibrator_serial"`
	Note             string    `json:"note,omitempty"`
}

// Limits of a check message.
const (
	// CheckTolerance is how far a check's measured level may be from its
	// reference: beyond it the meter (or the reading typed in) is broken,
	// not drifting.
	CheckTolerance = 10.0
	// MaxNoteLen bounds a check's note, in bytes.
	MaxNoteLen = 512
	// MaxCheckPayload is the largest check message.
	MaxCheckPayload = 16384
)

// Reference levels of acoustic calibrators (IEC 60942) a check may use.
var CheckReferences = []float64{94, 114}

// Batch is the signed body of a levels, env or check message.
type Batch struct {
	V            int         `json:"v"`
	Kind         string      `json:"kind"` // levels | env
	Municipality string      `json:"municipality"`
	Gateway      string      `json:"gateway"`
	Sensor       string      `json:"sensor"`
	Seq          uint64      `json:"seq"` // per gateway, strictly increasing, from 1
	SentAt       time.Time   `json:"sent_at"`
	Device       Device      `json:"device"`
	Clock        Clock       `json:"clock"`
	Records      []Record    `json:"records,omitempty"`
	Env          []EnvRecord `json:"env,omitempty"`
	Check        *Check      `json:"check,omitempty"` // kind check only
}

// Envelope carries the exact body bytes and the gateway's ed25519 signature
// over them. Body is kept verbatim so that it can be stored as evidence and
// re-verified later.
type Envelope struct {
	V    int             `json:"v"`
	Kid  string          `json:"kid"` // key id: the gateway id
	Body json.RawMessage `json:"body"`
	Sig  []byte          `json:"sig,omitempty"` // base64 in JSON
}

// Ack is published by the central service (QoS 1, not retained).
type Ack struct {
	V       int    `json:"v"`
	Gateway string `json:"gateway"`
	Seq     uint64 `json:"seq"` // highest contiguous seq durably stored
}

// Status is the retained gateway status; the Will publishes State "offline".
type Status struct {
	V       int       `json:"v"`
	State   string    `json:"state"` // online | offline
	At      time.Time `json:"at,omitzero"`
	Clock   *Clock    `json:"clock,omitempty"`
	Outbox  *Outbox   `json:"outbox,omitempty"`
	Version string    `json:"version,omitempty"`
}

// Outbox reports the gateway's durable queue in its status.
type Outbox struct {
	Pending  int    `json:"pending"`
	Capacity int    `json:"capacity"`
	Dropped  uint64 `json:"dropped"` // records discarded by the full-outbox policy
	Full     bool   `json:"full"`

	// Alarms, present only while they hold (older receivers see the four
	// fields above alone in normal operation).

	// Memory is the number of records the gateway holds in memory because
	// its disk refuses writes (bounded; beyond it the full policy applies).
	Memory int `json:"memory,omitempty"`
	// StorageError says why the outbox cannot write (disk full, I/O
	// error); empty when it can.
	StorageError string `json:"storage_error,omitempty"`
	// AckRegressed is set while the central service acks seqs below the
	// watermark this gateway already applied (its data restored from an
	// older backup?); AckRegressions counts such acks since the gateway
	// started.
	AckRegressed   bool   `json:"ack_regressed,omitempty"`
	AckRegressions uint64 `json:"ack_regressions,omitempty"`
}

// OfflinePayload is the Will message body.
var OfflinePayload = []byte(`{"v":1,"state":"offline"}`)

// Seal marshals b, signs the exact body bytes with key and returns the
// envelope bytes. A nil key produces an unsigned envelope.
func Seal(b *Batch, key ed25519.PrivateKey) ([]byte, error) {
	body, err := json.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("wire: marshal body: %w", err)
	}
	env := Envelope{V: Version, Kid: b.Gateway, Body: body}
	if key != nil {
		env.Sig = ed25519.Sign(key, body)
	}
	out, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("wire: marshal envelope: %w", err)
	}
	return out, nil
}

// Reasons for rejecting a message. They label metrics and dead letters.
const (
	ReasonTopic     = "topic"
	ReasonSize      = "size"
	ReasonJSON      = "json"
	ReasonSchema    = "schema"
	ReasonRange     = "range"
	ReasonTime      = "timestamp"
	ReasonSignature = "signature"
	ReasonUnknown   = "unknown_source"
	ReasonMismatch  = "topic_mismatch"
	// ReasonQuota: the gateway sent more than its quota (messages or bytes
	// per second); the message is refused, not stored, and the gateway
	// sends it again later (its outbox keeps it until acked).
	ReasonQuota = "quota"
	// ReasonSeqConflict: a validly signed batch under a seq the central
	// service already holds with a different body. Both bodies are kept;
	// the first stays the stored batch.
	ReasonSeqConflict = "seq_conflict"
)

// Error is a rejection with a machine-readable reason and a Portuguese
// message that says what to fix.
type Error struct {
	Reason string
	Msg    string
}

func (e *Error) Error() string { return e.Reason + ": " + e.Msg }

func reject(reason, format string, a ...any) error {
	return &Error{Reason: reason, Msg: fmt.Sprintf(format, a...)}
}

// ReasonOf returns the rejection reason of err, or "internal".
func ReasonOf(err error) string {
	var we *Error
	if errors.As(err, &we) {
		return we.Reason
	}
	return "internal"
}

// Open decodes an envelope and its body strictly (unknown fields are
// errors). It does not verify the signature (internal/wire/signature) or
// validate values.
func Open(payload []byte) (*Envelope, *Batch, error) {
	if len(payload) > MaxPayload {
		return nil, nil, reject(ReasonSize, "mensagem com %d bytes excede o máximo de %d", len(payload), MaxPayload)
	}
	// One pass decodes the body straight into the Batch and slices its
	// bytes out of the payload. Decoding the envelope with Body as a raw
	// value first scanned the body twice (a third of the decode). Anything
	// the one pass does not accept goes the two-pass way, which gives the
	// rejection its reason and message (FuzzOpenOnePass checks that both
	// agree on everything the one pass accepts).
	if env, b, ok := openOnePass(payload); ok {
		if env.V != Version {
			return nil, nil, reject(ReasonSchema, "versão do envelope %d não suportada (esperado %d)", env.V, Version)
		}
		return env, b, nil
	}
	return openTwoPass(payload)
}

// onePass decodes an envelope member by member (UnmarshalJSONFrom).
type onePass struct {
	payload []byte
	env     Envelope
	b       Batch
}

var errMember = errors.New("unknown envelope member")

func (o *onePass) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return errMember
	}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return err
		}
		switch name.String() {
		case "v":
			err = jsonv2.UnmarshalDecode(dec, &o.env.V)
		case "kid":
			err = jsonv2.UnmarshalDecode(dec, &o.env.Kid)
		case "sig":
			err = jsonv2.UnmarshalDecode(dec, &o.env.Sig)
		case "body":
			if dec.PeekKind() != '{' {
				return errMember
			}
			start := dec.InputOffset()
			if err := jsonv2.UnmarshalDecode(dec, &o.b); err != nil {
				return err
			}
			// From the end of the name: the colon, maybe white space, the object.
			o.env.Body = bytes.Clone(bytes.TrimLeft(o.payload[start:dec.InputOffset()], " \t\r\n:"))
		default:
			return errMember
		}
		if err != nil {
			return err
		}
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return errMember
	}
	return nil
}

// openOnePass decodes payload in one pass; ok is false when it did not
// decode to an envelope with a body object.
func openOnePass(payload []byte) (*Envelope, *Batch, bool) {
	o := &onePass{payload: payload}
	// The records go into a slice sized from the payload (a record takes
	// at least ~80 bytes of JSON, the rest of the batch more than 200):
	// the decoder appends into its capacity, and growing it one record at
	// a time was most of the decode's allocation. Counting the records
	// first cost more than it saved. No records member leaves it nil, as
	// decoding without it does.
	prealloc := min(max(1, (len(payload)-200)/80), MaxRecords)
	o.b.Records = make([]Record, 0, prealloc)
	if err := strictUnmarshal(payload, o); err != nil || len(o.env.Body) == 0 || o.env.Body[0] != '{' {
		return nil, nil, false
	}
	if len(o.b.Records) == 0 && cap(o.b.Records) == prealloc {
		o.b.Records = nil
	}
	return &o.env, &o.b, true
}

// openTwoPass decodes the envelope with Body as a raw value, then the body.
func openTwoPass(payload []byte) (*Envelope, *Batch, error) {
	var env Envelope
	if err := strictUnmarshal(payload, &env); err != nil {
		return nil, nil, reject(ReasonJSON, "envelope JSON inválido: %v", err)
	}
	if env.V != Version {
		return nil, nil, reject(ReasonSchema, "versão do envelope %d não suportada (esperado %d)", env.V, Version)
	}
	if len(env.Body) == 0 {
		return nil, nil, reject(ReasonSchema, "envelope sem campo body")
	}
	var b Batch
	if err := strictUnmarshal(env.Body, &b); err != nil {
		return &env, nil, reject(ReasonJSON, "corpo JSON inválido: %v", err)
	}
	return &env, &b, nil
}

// strictUnmarshal decodes one JSON value into v with encoding/json/v2
// semantics (github.com/go-json-experiment/json, the module the standard
// library's encoding/json/v2 comes from): member names match exactly,
// unknown or duplicated members, invalid UTF-8 and data after the value are
// errors. Duplicates matter for signed evidence: two readers must never see
// different values in the same signed bytes. It decodes in one pass, about
// 2.4× faster than encoding/json with DisallowUnknownFields (BENCHMARKS.md).
func strictUnmarshal(data []byte, v any) error {
	return jsonv2.Unmarshal(data, v, jsonv2.RejectUnknownMembers(true))
}

// Validate checks a decoded batch against the topic it arrived on and the
// receive time now: schema, ids, value ranges and timestamps no more than
// skew in the future or stale in the past. The steps run in this order and
// the first rejection is returned: the envelope and header against the
// topic, the device and clock fields, then the records of the batch's kind.
func Validate(t Topic, env *Envelope, b *Batch, now time.Time, skew, stale time.Duration) error {
	if err := validateHeader(t, env, b); err != nil {
		return err
	}
	if err := validateDevice(b); err != nil {
		return err
	}
	if b.Check != nil && b.Kind != KindCheck {
		return reject(ReasonSchema, "campo check só vale em mensagens check")
	}
	w := receiveWindow{now: now, skew: skew, stale: stale}
	switch b.Kind {
	case KindLevels:
		return validateLevels(b, w)
	case KindEnv:
		return validateEnv(b, w)
	case KindCheck:
		if b.Check == nil || len(b.Records) != 0 || len(b.Env) != 0 {
			return reject(ReasonSchema, "mensagem check precisa de check (e nenhum records ou env)")
		}
		if err := w.check(0, b.Check.T); err != nil {
			return err
		}
		return validateCheck(b.Check)
	default:
		return reject(ReasonSchema, "kind %q desconhecido; use levels, env ou check", b.Kind)
	}
}

// validateHeader checks the batch's version, that its kind and ids are the
// topic's and the envelope's key id its gateway, and its seq.
func validateHeader(t Topic, env *Envelope, b *Batch) error {
	if b.V != Version {
		return reject(ReasonSchema, "campo v=%d não suportado (esperado %d)", b.V, Version)
	}
	if b.Kind != t.Kind {
		return reject(ReasonMismatch, "kind %q não corresponde ao tópico (%q)", b.Kind, t.Kind)
	}
	if b.Municipality != t.Municipality || b.Gateway != t.Gateway || b.Sensor != t.Sensor {
		return reject(ReasonMismatch, "município/gateway/sensor do corpo (%s/%s/%s) diferem do tópico (%s/%s/%s)",
			b.Municipality, b.Gateway, b.Sensor, t.Municipality, t.Gateway, t.Sensor)
	}
	if env != nil && env.Kid != b.Gateway {
		return reject(ReasonMismatch, "kid %q do envelope difere do gateway %q", env.Kid, b.Gateway)
	}
	if b.Seq == 0 {
		return reject(ReasonSchema, "seq ausente ou zero; a numeração começa em 1")
	}
	if b.Seq > MaxSeq {
		return reject(ReasonSchema, "seq %d fora de 1..%d", b.Seq, uint64(MaxSeq))
	}
	return nil
}

// validateDevice checks the free-text lengths, the device's grade, model,
// serial and calibration date.
func validateDevice(b *Batch) error {
	for _, f := range []struct{ name, v string }{{"device.model", b.Device.Model}, {"device.serial", b.Device.Serial},
		{"device.firmware", b.Device.Firmware}, {"clock.source", b.Clock.Source}} {
		if len(f.v) > MaxTextLen {
			return reject(ReasonSchema, "%s com %d bytes excede o máximo de %d", f.name, len(f.v), MaxTextLen)
		}
	}
	if !b.Device.validGrade() {
		return reject(ReasonSchema, "device.grade %q inválido; use class1, class2 ou screening", b.Device.Grade)
	}
	if b.Device.Model == "" || b.Device.Serial == "" {
		return reject(ReasonSchema, "device.model e device.serial são obrigatórios")
	}
	if b.Device.CalibratedAt != "" {
		if _, err := time.Parse(time.DateOnly, b.Device.CalibratedAt); err != nil {
			return reject(ReasonSchema, "device.calibrated_at %q não é uma data AAAA-MM-DD", b.Device.CalibratedAt)
		}
	}
	return nil
}

// receiveWindow is what a record's time is checked against: the receive
// time, how far in the future (skew) and the past (stale) it may be.
type receiveWindow struct {
	now         time.Time
	skew, stale time.Duration
}

// check checks record i's time ts: present, not after now+skew, not before
// now-stale.
func (w receiveWindow) check(i int, ts time.Time) error {
	if ts.IsZero() {
		return reject(ReasonSchema, "registro %d sem campo t", i)
	}
	if ts.After(w.now.Add(w.skew)) {
		return reject(ReasonTime, "registro %d com t=%s no futuro (recebido em %s); verifique o relógio do gateway",
			i, ts.UTC().Format(time.RFC3339), w.now.UTC().Format(time.RFC3339))
	}
	if ts.Before(w.now.Add(-w.stale)) {
		return reject(ReasonTime, "registro %d com t=%s antigo demais (mais de %s antes do recebimento)",
			i, ts.UTC().Format(time.RFC3339), w.stale)
	}
	return nil
}

// checkOrder checks record i's start ts (i > 0) against the previous
// record's and the first's. Record starts strictly increase and span at
// most MaxBatchSpan: a start that repeats or goes back means the gateway
// clock stepped back while the batch was being built, and which of the two
// records is right cannot be told here.
func checkOrder(i int, prev, ts, first time.Time) error {
	if !ts.After(prev) {
		return reject(ReasonTime, "registro %d com t=%s não é posterior ao anterior (t=%s): os registros de um lote vêm em ordem de tempo, sem repetir; o relógio do gateway voltou?",
			i, ts.UTC().Format(time.RFC3339Nano), prev.UTC().Format(time.RFC3339Nano))
	}
	if ts.Sub(first) > MaxBatchSpan {
		return reject(ReasonTime, "registros de %s a %s: um lote cobre no máximo %s; o relógio do gateway saltou?",
			first.UTC().Format(time.RFC3339), ts.UTC().Format(time.RFC3339), MaxBatchSpan)
	}
	return nil
}

// validateLevels checks a levels batch: records and no env, at most
// MaxRecords, each in the receive window, in order, and in range.
func validateLevels(b *Batch, w receiveWindow) error {
	if len(b.Records) == 0 || len(b.Env) != 0 {
		return reject(ReasonSchema, "mensagem levels precisa de records (e nenhum env)")
	}
	if len(b.Records) > MaxRecords {
		return reject(ReasonSchema, "%d registros excedem o máximo de %d por lote", len(b.Records), MaxRecords)
	}
	for i := range b.Records {
		r := &b.Records[i]
		if err := w.check(i, r.T); err != nil {
			return err
		}
		if i > 0 {
			if err := checkOrder(i, b.Records[i-1].T, r.T, b.Records[0].T); err != nil {
				return err
			}
		}
		if err := validateRecord(i, r); err != nil {
			return err
		}
	}
	return nil
}

// validateRecord checks record i's duration, levels (each in range and
// LAFmin ≤ LAeq ≤ LAFmax within rounding) and histogram.
func validateRecord(i int, r *Record) error {
	if r.DurMs <= 0 || r.DurMs > MaxDurMs {
		return reject(ReasonSchema, "registro %d com dur_ms=%d fora de 1..%d: um registro cobre no máximo um segundo; envie um registro por segundo",
			i, r.DurMs, MaxDurMs)
	}
	for _, v := range []struct {
		name string
		db   float64
	}{{"laeq_db", r.LAeq}, {"lafmax_db", r.LAFmax}, {"lafmin_db", r.LAFmin}} {
		if err := checkDB(i, v.name, v.db); err != nil {
			return err
		}
	}
	if r.LCpeak != nil {
		if err := checkDB(i, "lcpeak_db", *r.LCpeak); err != nil {
			return err
		}
	}
	if r.LAFmin > r.LAeq+0.05 || r.LAeq > r.LAFmax+0.05 {
		return reject(ReasonRange, "registro %d incoerente: exige lafmin_db ≤ laeq_db ≤ lafmax_db (%.1f, %.1f, %.1f)",
			i, r.LAFmin, r.LAeq, r.LAFmax)
	}
	if r.Hist != nil {
		if err := r.Hist.Validate(); err != nil {
			return reject(ReasonSchema, "registro %d: histograma inválido: %v", i, err)
		}
	}
	return nil
}

// validateEnv checks an env batch: env readings and no records, at most
// MaxRecords, each in the receive window, in order, and in range.
func validateEnv(b *Batch, w receiveWindow) error {
	if len(b.Env) == 0 || len(b.Records) != 0 {
		return reject(ReasonSchema, "mensagem env precisa de env (e nenhum records)")
	}
	if len(b.Env) > MaxRecords {
		return reject(ReasonSchema, "%d leituras excedem o máximo de %d por lote", len(b.Env), MaxRecords)
	}
	for i := range b.Env {
		e := &b.Env[i]
		if err := w.check(i, e.T); err != nil {
			return err
		}
		if i > 0 {
			if err := checkOrder(i, b.Env[i-1].T, e.T, b.Env[0].T); err != nil {
				return err
			}
		}
		if err := validateEnvRecord(i, e); err != nil {
			return err
		}
	}
	return nil
}

// validateEnvRecord checks reading i: at least one quantity, each in its
// range.
func validateEnvRecord(i int, e *EnvRecord) error {
	if e.TemperatureC == nil && e.HumidityPct == nil && e.PressureHPa == nil {
		return reject(ReasonSchema, "leitura %d sem nenhuma grandeza", i)
	}
	if e.TemperatureC != nil && (*e.TemperatureC < -60 || *e.TemperatureC > 90) {
		return reject(ReasonRange, "leitura %d: temperatura %.1f °C fora de -60..90", i, *e.TemperatureC)
	}
	if e.HumidityPct != nil && (*e.HumidityPct < 0 || *e.HumidityPct > 100) {
		return reject(ReasonRange, "leitura %d: umidade %.1f%% fora de 0..100", i, *e.HumidityPct)
	}
	if e.PressureHPa != nil && (*e.PressureHPa < 300 || *e.PressureHPa > 1100) {
		return reject(ReasonRange, "leitura %d: pressão %.1f hPa fora de 300..1100", i, *e.PressureHPa)
	}
	return nil
}

// validateCheck checks a calibrator check's values (its time is checked by
// Validate against the receive time).
func validateCheck(c *Check) error {
	ref := false
	for _, r := range CheckReferences {
		if c.ReferenceDB == r {
			ref = true
		}
	}
	if !ref {
		return reject(ReasonRange, "check.reference_db=%v: o calibrador acústico gera 94 ou 114 dB", c.ReferenceDB)
	}
	if c.FrequencyHz != 1000 {
		return reject(ReasonRange, "check.frequency_hz=%v: a verificação de campo usa o tom de 1000 Hz do calibrador", c.FrequencyHz)
	}
	if math.IsNaN(c.MeasuredDB) || math.IsInf(c.MeasuredDB, 0) || c.MeasuredDB < MinDB || c.MeasuredDB > MaxDB {
		return reject(ReasonRange, "check.measured_db=%v fora da faixa %.0f–%.0f dB", c.MeasuredDB, MinDB, MaxDB)
	}
	if d := c.MeasuredDB - c.ReferenceDB; d > CheckTolerance || d < -CheckTolerance {
		return reject(ReasonRange, "check.measured_db=%.2f difere %.2f dB da referência %.0f dB (mais de %.0f dB): o medidor está com defeito ou o valor foi digitado errado",
			c.MeasuredDB, d, c.ReferenceDB, CheckTolerance)
	}
	if c.CalibratorModel == "" || c.CalibratorSerial == "" {
		return reject(ReasonSchema, "check.calibrator_model e check.calibrator_serial são obrigatórios")
	}
	for _, f := range []struct{ name, v string }{{"check.calibrator_model", c.CalibratorModel}, {"check.calibrator_serial", c.CalibratorSerial}} {
		if len(f.v) > MaxTextLen {
			return reject(ReasonSchema, "%s com %d bytes excede o máximo de %d", f.name, len(f.v), MaxTextLen)
		}
	}
	if len(c.Note) > MaxNoteLen {
		return reject(ReasonSchema, "check.note com %d bytes excede o máximo de %d", len(c.Note), MaxNoteLen)
	}
	return nil
}

func (d Device) validGrade() bool {
	switch d.Grade {
	case "class1", "class2", "screening":
		return true
	}
	return false
}

func checkDB(i int, name string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < MinDB || v > MaxDB {
		return reject(ReasonRange, "registro %d: %s=%v fora da faixa %.0f–%.0f dB", i, name, v, MinDB, MaxDB)
	}
	return nil
}

package dashboard

// The live hub.
//
// Concurrency design (after gorilla/websocket's examples/chat and
// examples/filewatch):
//
//   - One hub goroutine (Hub.Run) owns the set of connected browsers; the
//     set needs no mutex because only that goroutine touches it.
//   - Producers (the central service's ingest, alert monitor and case
//     workflow) call the Publish… methods. They never block: level,
//     environment and gateway updates are written into per-key maps under a
//     short mutex, so the latest value of a sensor wins within a tick
//     (Options.Tick, 250 ms by default) and a busy sensor cannot flood a
//     browser; alert and case events are queued in order and wake the hub at
//     once. A full event queue drops the event and counts it (Stats).
//   - Each tick the hub encodes one "update" frame (once, as a
//     websocket.PreparedMessage) and offers it to every client's buffered
//     send channel. A client whose channel is full is a slow client: the hub
//     closes its channel and forgets it — it is dropped, never waited for.
//     The browser reconnects and receives a fresh snapshot.
//   - Each socket has exactly one reader goroutine (control frames, pongs,
//     read limit; the dashboard is push-only) and one writer goroutine (send
//     channel, pings, write deadlines), as the library requires.
//   - Only authenticated sessions may connect, and only from an allowed
//     Origin; a request without Origin is refused. Events are filtered by
//     role: every role sees levels, gateways and alerts; fiscais and admins
//     also receive case updates (acknowledgements, assignments, notices).
//   - A session that expires, or logs out (Hub.EndSession), is disconnected.
//
// Messages (JSON text frames) all carry "type":
//
//	hello     {user, role, tick_ms, server_time}             first frame
//	snapshot  {levels, env, gateways}                        latest known values, second frame
//	update    {levels?, env?, gateways?}                     coalesced changes of one tick
//	alert     {event: alerts.Event}                          alert transition
//	case      {case: CaseUpdate}                             fiscal-only workflow change

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/internal/users"
)

// DB is a level in decibels, encoded in JSON with one decimal.
type DB float64

// MarshalJSON writes one decimal; NaN and ±Inf (never valid levels) as null.
func (d DB) MarshalJSON() ([]byte, error) {
	f := float64(d)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'f', 1, 64), nil
}

// Level is the latest 1-s reading of a sensor judged against the limit in
// force.
type Level struct {
	Sensor       string    `json:"sensor"`
	Gateway      string    `json:"gateway,omitempty"`
	Municipality string    `json:"municipality,omitempty"`
	T            time.Time `json:"t"` // start of the 1-s record
	LAeq         DB        `json:"laeq_db"`
	LAFmax       DB        `json:"lafmax_db"`
	// Limit is nil when no numeric limit is in force (the code sets none now).
	Limit       *DB       `json:"limit_db,omitempty"`
	Period      string    `json:"period,omitempty"`       // e.g. "noturno"
	PeriodLabel string    `json:"period_label,omitempty"` // e.g. "período noturno (22:00–07:00)"
	PeriodEnd   time.Time `json:"period_end,omitzero"`    // when the limit in force changes
	Margin      *DB       `json:"margin_db,omitempty"`    // LAeq − limit (positive = above)
	Grade       string    `json:"grade,omitempty"`        // class1 | class2 | screening
	ClockSynced *bool     `json:"clock_synced,omitempty"`
	Status      string    `json:"status,omitempty"` // alerts.Status of the sensor, when known
	// ReceivedAt is when the service published the reading (set by
	// PublishLevel when zero): a reading received long after its own time
	// T was replayed or delayed, and the UI says so ("atrasado").
	ReceivedAt time.Time `json:"received_at,omitzero"`
}

// Env is the latest environment reading of a sensor.
type Env struct {
	Sensor      string    `json:"sensor"`
	T           time.Time `json:"t"`
	TempC       *float64  `json:"temp_c,omitempty"`
	RH          *float64  `json:"rh_pct,omitempty"`
	PressureHPa *float64  `json:"pressure_hpa,omitempty"`
	WindMS      *float64  `json:"wind_ms,omitempty"`
}

// GatewayStatus is a gateway's connectivity and clock state.
type GatewayStatus struct {
	Gateway      string    `json:"gateway"`
	Municipality string    `json:"municipality,omitempty"`
	State        string    `json:"state"` // online | offline
	At           time.Time `json:"at,omitzero"`
	LastSeen     time.Time `json:"last_seen,omitzero"`
	ClockSynced  *bool     `json:"clock_synced,omitempty"`
	ClockOffset  *float64  `json:"clock_offset_ms,omitempty"`
	ClockSource  string    `json:"clock_source,omitempty"`
}

// CaseUpdate is a change in the fiscal's workflow: an alert acknowledged or
// assigned, a notice drafted, issued, acknowledged (ciente) or refused.
type CaseUpdate struct {
	AlertID  string    `json:"alert_id,omitempty"`
	NoticeID string    `json:"notice_id,omitempty"`
	Action   string    `json:"action"` // ack | assign | draft | issue | ciente | recusa | …
	State    string    `json:"state,omitempty"`
	By       string    `json:"by,omitempty"`
	Assignee string    `json:"assignee,omitempty"`
	Title    string    `json:"title,omitempty"`
	At       time.Time `json:"at"`
}

// HubOptions configure a Hub; zero fields take the defaults shown.
type HubOptions struct {
	Tick        time.Duration // coalescing tick; 250 ms
	SendBuffer  int           // frames queued per client before it is dropped; 64
	EventQueue  int           // alert/case events queued between ticks; 4096
	WriteWait   time.Duration // deadline of one write; 10 s
	PongWait    time.Duration // a client silent this long is gone; 60 s
	PingPeriod  time.Duration // ping interval; PongWait·9/10
	MaxMessage  int64         // read limit for client frames; 4096 bytes
	Origins     *Origins      // allowed origins; nil: same host only
	Now         func() time.Time
	HandshakeTO time.Duration // websocket handshake timeout; 10 s
}

func (o *HubOptions) defaults() {
	if o.Tick <= 0 {
		o.Tick = 250 * time.Millisecond
	}
	if o.SendBuffer <= 0 {
		o.SendBuffer = 64
	}
	if o.EventQueue <= 0 {
		o.EventQueue = 4096
	}
	if o.WriteWait <= 0 {
		o.WriteWait = 10 * time.Second
	}
	if o.PongWait <= 0 {
		o.PongWait = 60 * time.Second
	}
	if o.PingPeriod <= 0 || o.PingPeriod >= o.PongWait {
		o.PingPeriod = o.PongWait * 9 / 10
	}
	if o.MaxMessage <= 0 {
		o.MaxMessage = 4096
	}
	if o.Origins == nil {
		o.Origins = &Origins{}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.HandshakeTO <= 0 {
		o.HandshakeTO = 10 * time.Second
	}
}

// SessionLookup resolves the session of a request; *Auth implements it.
type SessionLookup interface {
	SessionFromRequest(r *http.Request) (users.Session, error)
}

// HubStats are counters for metrics and tests.
type HubStats struct {
	Clients        int    // connected now
	Dropped        uint64 // slow clients dropped
	Refused        uint64 // websocket requests refused (origin, auth)
	Frames         uint64 // frames offered to clients
	Coalesced      uint64 // level/env/gateway updates replaced by a newer one within a tick
	EventsDropped  uint64 // alert/case events dropped because the queue was full
	LevelsReceived uint64
}

type audience uint8

const (
	audAll    audience = iota // every role
	audFiscal                 // fiscal and admin
)

func (a audience) admits(r users.Role) bool {
	switch a {
	case audAll:
		return true
	case audFiscal:
		return r == users.Fiscal || r == users.Admin
	}
	return false
}

type event struct {
	aud  audience
	body []byte
}

// Hub fans live updates out to connected browsers. Create it with NewHub,
// run it with Run, mount it (ServeHTTP) at the websocket path.
type Hub struct {
	opts     HubOptions
	log      *slog.Logger
	sessions SessionLookup
	upgrader websocket.Upgrader

	mu     sync.Mutex
	levels map[string]Level
	env    map[string]Env
	gws    map[string]GatewayStatus
	events []event
	wake   chan struct{}

	register   chan *client
	unregister chan *client
	endSession chan string
	statsReq   chan chan int
	done       chan struct{} // closed when Run returns
	running    atomic.Bool
	tickC      <-chan time.Time // tests drive the tick; nil: a ticker of Options.Tick

	dropped, refused, frames, coalesced, evDropped, levelsIn atomic.Uint64
}

// NewHub returns a hub that admits the sessions s recognises.
func NewHub(s SessionLookup, opts HubOptions, log *slog.Logger) *Hub {
	opts.defaults()
	h := &Hub{
		opts: opts, log: log, sessions: s,
		levels: map[string]Level{}, env: map[string]Env{}, gws: map[string]GatewayStatus{},
		wake:       make(chan struct{}, 1),
		register:   make(chan *client),
		unregister: make(chan *client),
		endSession: make(chan string),
		statsReq:   make(chan chan int),
		done:       make(chan struct{}),
	}
	h.upgrader = websocket.Upgrader{
		HandshakeTimeout: opts.HandshakeTO,
		ReadBufferSize:   1024,
		WriteBufferSize:  4096,
		// The origin was checked (and a missing Origin refused) before
		// Upgrade is called; the library's check is kept as a second line.
		CheckOrigin: func(r *http.Request) bool { return h.opts.Origins.Allowed(r) },
	}
	return h
}

// PublishLevel records the latest level of a sensor; never blocks.
func (h *Hub) PublishLevel(l Level) {
	h.levelsIn.Add(1)
	if l.ReceivedAt.IsZero() {
		l.ReceivedAt = h.opts.Now().UTC()
	}
	h.mu.Lock()
	if _, ok := h.levels[l.Sensor]; ok {
		h.coalesced.Add(1)
	}
	h.levels[l.Sensor] = l
	h.mu.Unlock()
}

// PublishEnv records the latest environment reading of a sensor; never blocks.
func (h *Hub) PublishEnv(e Env) {
	h.mu.Lock()
	if _, ok := h.env[e.Sensor]; ok {
		h.coalesced.Add(1)
	}
	h.env[e.Sensor] = e
	h.mu.Unlock()
}

// PublishGateway records a gateway's status; never blocks.
func (h *Hub) PublishGateway(g GatewayStatus) {
	h.mu.Lock()
	if _, ok := h.gws[g.Gateway]; ok {
		h.coalesced.Add(1)
	}
	h.gws[g.Gateway] = g
	h.mu.Unlock()
}

// PublishAlert sends an alert transition to every role; never blocks.
func (h *Hub) PublishAlert(e alerts.Event) {
	h.queue(audAll, struct {
		Type  string       `json:"type"`
		Event alerts.Event `json:"event"`
	}{"alert", e})
}

// PublishCase sends a workflow change to fiscais and admins; never blocks.
func (h *Hub) PublishCase(c CaseUpdate) {
	h.queue(audFiscal, struct {
		Type string     `json:"type"`
		Case CaseUpdate `json:"case"`
	}{"case", c})
}

// IngestEvent is something ingest kept instead of applying, for the
// operators to see at once (a second re-measured with other values, a
// batch under a stored seq with another body, seqs skipped, a gateway over
// its quota). The store keeps each one; GET /api/v1/conflicts,
// /api/v1/seq-skips and /api/v1/dead-letters list them.
type IngestEvent struct {
	Kind         string    `json:"kind"` // record_conflict | seq_conflict | seq_skip | quota
	Gateway      string    `json:"gateway"`
	Municipality string    `json:"municipality,omitempty"`
	Sensor       string    `json:"sensor,omitempty"`
	Seq          uint64    `json:"seq,omitempty"`
	T            time.Time `json:"t,omitzero"`
	At           time.Time `json:"at"`
	Message      string    `json:"message"` // pt-BR
}

// PublishIngest sends an ingest event to every role; never blocks.
func (h *Hub) PublishIngest(e IngestEvent) {
	h.queue(audAll, struct {
		Type  string      `json:"type"`
		Event IngestEvent `json:"event"`
	}{"ingest", e})
}

func (h *Hub) queue(aud audience, msg any) {
	b, err := json.Marshal(msg)
	if err != nil {
		h.log.Error("painel: falha ao codificar evento", "erro", err)
		return
	}
	h.mu.Lock()
	if len(h.events) >= h.opts.EventQueue {
		h.mu.Unlock()
		h.evDropped.Add(1)
		return
	}
	h.events = append(h.events, event{aud, b})
	h.mu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// EndSession disconnects every socket of the session with this token
// (logout). It is a no-op when the hub is not running.
func (h *Hub) EndSession(token string) {
	select {
	case h.endSession <- token:
	case <-h.done:
	}
}

// Stats returns the hub's counters. Clients is -1 when the hub is not running.
func (h *Hub) Stats() HubStats {
	s := HubStats{
		Clients: -1, Dropped: h.dropped.Load(), Refused: h.refused.Load(), Frames: h.frames.Load(),
		Coalesced: h.coalesced.Load(), EventsDropped: h.evDropped.Load(), LevelsReceived: h.levelsIn.Load(),
	}
	if h.running.Load() {
		ch := make(chan int, 1)
		select {
		case h.statsReq <- ch:
			s.Clients = <-ch
		case <-h.done:
		}
	}
	return s
}

func (h *Hub) stopped() bool {
	select {
	case <-h.done:
		return true
	default:
		return false
	}
}

// ErrHubStopped is returned by Run when called twice.
var ErrHubStopped = errors.New("dashboard: hub already ran")

// Run is the hub goroutine. It returns nil when ctx ends, after closing every
// client's send channel (their writers then close the sockets).
func (h *Hub) Run(ctx context.Context) error {
	if !h.running.CompareAndSwap(false, true) {
		return ErrHubStopped
	}
	defer close(h.done)
	clients := map[*client]struct{}{}
	last := lastValues{levels: map[string]Level{}, env: map[string]Env{}, gws: map[string]GatewayStatus{}}
	tickC := h.tickC
	if tickC == nil {
		tick := time.NewTicker(h.opts.Tick)
		defer tick.Stop()
		tickC = tick.C
	}
	drop := func(c *client, why string) {
		if _, ok := clients[c]; ok {
			delete(clients, c)
			c.closeWhy = why
			close(c.send)
		}
	}
	offer := func(aud audience, pm *websocket.PreparedMessage) {
		for c := range clients {
			if !aud.admits(c.role) {
				continue
			}
			select {
			case c.send <- pm:
				h.frames.Add(1)
			default:
				h.dropped.Add(1)
				h.log.Info("painel: cliente lento desconectado", "user", c.user, "remote", c.remote)
				drop(c, closeSlow)
			}
		}
	}
	for {
		select {
		case <-ctx.Done():
			for c := range clients {
				drop(c, closeShutdown)
			}
			return nil
		case c := <-h.register:
			clients[c] = struct{}{}
			// The send buffer is fresh, so hello and snapshot always fit.
			c.send <- h.prepare(helloMsg{Type: "hello", User: c.user, Role: string(c.role),
				TickMs: h.opts.Tick.Milliseconds(), ServerTime: h.opts.Now().UTC()})
			c.send <- h.prepare(last.snapshot())
		case c := <-h.unregister:
			drop(c, "")
		case tok := <-h.endSession:
			for c := range clients {
				if c.token == tok {
					drop(c, closeLoggedOut)
				}
			}
		case ch := <-h.statsReq:
			ch <- len(clients)
		case <-h.wake:
			h.flushEvents(offer)
		case <-tickC:
			h.flushEvents(offer)
			if u, ok := h.takeUpdate(&last); ok {
				offer(audAll, h.prepare(u))
			}
			now := h.opts.Now()
			for c := range clients {
				if !c.expires.IsZero() && !now.Before(c.expires) {
					drop(c, closeExpired)
				}
			}
		}
	}
}

type helloMsg struct {
	Type       string    `json:"type"`
	User       string    `json:"user"`
	Role       string    `json:"role"`
	TickMs     int64     `json:"tick_ms"`
	ServerTime time.Time `json:"server_time"`
}

type updateMsg struct {
	Type     string          `json:"type"`
	Levels   []Level         `json:"levels,omitempty"`
	Env      []Env           `json:"env,omitempty"`
	Gateways []GatewayStatus `json:"gateways,omitempty"`
}

// lastValues is the hub goroutine's copy of the latest value per key, sent
// as a snapshot to every new client.
type lastValues struct {
	levels map[string]Level
	env    map[string]Env
	gws    map[string]GatewayStatus
}

func (l *lastValues) snapshot() updateMsg {
	m := updateMsg{Type: "snapshot", Levels: make([]Level, 0, len(l.levels)), Env: make([]Env, 0, len(l.env)),
		Gateways: make([]GatewayStatus, 0, len(l.gws))}
	for _, v := range l.levels {
		m.Levels = append(m.Levels, v)
	}
	for _, v := range l.env {
		m.Env = append(m.Env, v)
	}
	for _, v := range l.gws {
		m.Gateways = append(m.Gateways, v)
	}
	sort.Slice(m.Levels, func(i, j int) bool { return m.Levels[i].Sensor < m.Levels[j].Sensor })
	sort.Slice(m.Env, func(i, j int) bool { return m.Env[i].Sensor < m.Env[j].Sensor })
	sort.Slice(m.Gateways, func(i, j int) bool { return m.Gateways[i].Gateway < m.Gateways[j].Gateway })
	return m
}

// takeUpdate swaps out the pending maps and builds this tick's update frame.
func (h *Hub) takeUpdate(last *lastValues) (updateMsg, bool) {
	h.mu.Lock()
	levels, env, gws := h.levels, h.env, h.gws
	if len(levels)+len(env)+len(gws) == 0 {
		h.mu.Unlock()
		return updateMsg{}, false
	}
	h.levels, h.env, h.gws = make(map[string]Level, len(levels)), make(map[string]Env, len(env)), make(map[string]GatewayStatus, len(gws))
	h.mu.Unlock()
	u := updateMsg{Type: "update"}
	for k, v := range levels {
		u.Levels = append(u.Levels, v)
		last.levels[k] = v
	}
	for k, v := range env {
		u.Env = append(u.Env, v)
		last.env[k] = v
	}
	for k, v := range gws {
		u.Gateways = append(u.Gateways, v)
		last.gws[k] = v
	}
	return u, true
}

func (h *Hub) flushEvents(offer func(audience, *websocket.PreparedMessage)) {
	h.mu.Lock()
	evs := h.events
	h.events = nil
	h.mu.Unlock()
	for _, e := range evs {
		pm, err := websocket.NewPreparedMessage(websocket.TextMessage, e.body)
		if err != nil {
			h.log.Error("painel: falha ao preparar quadro", "erro", err)
			continue
		}
		offer(e.aud, pm)
	}
}

func (h *Hub) prepare(msg any) *websocket.PreparedMessage {
	b, err := json.Marshal(msg)
	if err != nil {
		// Only DB values are floats and they never fail; keep the hub alive anyway.
		h.log.Error("painel: falha ao codificar quadro", "erro", err)
		b = []byte(`{"type":"error"}`)
	}
	pm, err := websocket.NewPreparedMessage(websocket.TextMessage, b)
	if err != nil {
		h.log.Error("painel: falha ao preparar quadro", "erro", err)
	}
	return pm
}

// Close codes sent to the browser (4000–4999 are for applications).
const (
	closeSlow      = "cliente lento"
	closeShutdown  = "servidor encerrando"
	closeLoggedOut = "sessão encerrada"
	closeExpired   = "sessão expirada"
)

var closeCodes = map[string]int{
	closeSlow:      4000,
	closeShutdown:  websocket.CloseGoingAway,
	closeLoggedOut: 4001,
	closeExpired:   4001,
}

// client is one browser socket.
type client struct {
	hub      *Hub
	conn     *websocket.Conn
	send     chan *websocket.PreparedMessage
	user     string
	role     users.Role
	token    string
	expires  time.Time
	remote   string
	closeWhy string // set by the hub goroutine before it closes send
}

// ServeHTTP upgrades an authenticated same-origin request to a websocket.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Origin") == "" {
		h.refused.Add(1)
		http.Error(w, "origem ausente: conexões ao vivo só a partir do painel", http.StatusForbidden)
		return
	}
	if !h.opts.Origins.Allowed(r) {
		h.refused.Add(1)
		http.Error(w, "origem não permitida", http.StatusForbidden)
		return
	}
	s, err := h.sessions.SessionFromRequest(r)
	if err != nil {
		h.refused.Add(1)
		http.Error(w, "faça login para acompanhar ao vivo", http.StatusUnauthorized)
		return
	}
	if !h.running.Load() || h.stopped() {
		http.Error(w, "painel ao vivo indisponível", http.StatusServiceUnavailable)
		return
	}
	conn, err := h.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader already answered
	}
	c := &client{hub: h, conn: conn, send: make(chan *websocket.PreparedMessage, h.opts.SendBuffer+2),
		user: s.User.Name, role: s.User.Role, token: s.Token, expires: s.Expires, remote: r.RemoteAddr}
	select {
	case h.register <- c:
	case <-h.done:
		conn.Close()
		return
	}
	go c.writePump()
	go c.readPump()
}

// readPump is the only reader: it enforces the read limit and the pong
// deadline and discards anything the browser sends (the feed is push-only).
func (c *client) readPump() {
	defer func() {
		select {
		case c.hub.unregister <- c:
		case <-c.hub.done:
		}
		c.conn.Close()
	}()
	c.conn.SetReadLimit(c.hub.opts.MaxMessage)
	c.conn.SetReadDeadline(time.Now().Add(c.hub.opts.PongWait))
	c.conn.SetPongHandler(func(string) error {
		return c.conn.SetReadDeadline(time.Now().Add(c.hub.opts.PongWait))
	})
	for {
		if _, _, err := c.conn.NextReader(); err != nil {
			return
		}
	}
}

// writePump is the only writer: frames from send, pings on a ticker, a
// deadline on every write. When the hub closes send it says why and closes.
func (c *client) writePump() {
	ping := time.NewTicker(c.hub.opts.PingPeriod)
	defer func() {
		ping.Stop()
		c.conn.Close()
	}()
	for {
		select {
		case pm, ok := <-c.send:
			if !ok {
				if why := c.closeWhy; why != "" {
					msg := websocket.FormatCloseMessage(closeCodes[why], why)
					c.conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(c.hub.opts.WriteWait))
				}
				return
			}
			c.conn.SetWriteDeadline(time.Now().Add(c.hub.opts.WriteWait))
			if err := c.conn.WritePreparedMessage(pm); err != nil {
				return
			}
		case <-ping.C:
			if err := c.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(c.hub.opts.WriteWait)); err != nil {
				return
			}
		}
	}
}

// String describes the client for logs.
func (c *client) String() string { return fmt.Sprintf("%s(%s)@%s", c.user, c.role, c.remote) }

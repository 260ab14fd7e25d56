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
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/internal/users"
)

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
	clients := &clientSet{h: h, m: map[*client]struct{}{}}
	last := lastValues{levels: map[string]Level{}, env: map[string]Env{}, gws: map[string]GatewayStatus{}}
	tickC := h.tickC
	if tickC == nil {
		tick := time.NewTicker(h.opts.Tick)
		defer tick.Stop()
		tickC = tick.C
	}
	for {
		select {
		case <-ctx.Done():
			clients.dropWhere(closeShutdown, func(*client) bool { return true })
			return nil
		case c := <-h.register:
			clients.m[c] = struct{}{}
			// The send buffer is fresh, so hello and snapshot always fit.
			c.send <- h.prepare(helloMsg{Type: "hello", User: c.user, Role: string(c.role),
				TickMs: h.opts.Tick.Milliseconds(), ServerTime: h.opts.Now().UTC()})
			c.send <- h.prepare(last.snapshot())
		case c := <-h.unregister:
			clients.drop(c, "")
		case tok := <-h.endSession:
			clients.dropWhere(closeLoggedOut, func(c *client) bool { return c.token == tok })
		case ch := <-h.statsReq:
			ch <- len(clients.m)
		case <-h.wake:
			h.flushEvents(clients.offer)
		case <-tickC:
			h.flushEvents(clients.offer)
			if u, ok := h.takeUpdate(&last); ok {
				clients.offer(audAll, h.prepare(u))
			}
			now := h.opts.Now()
			clients.dropWhere(closeExpired, func(c *client) bool { return !c.expires.IsZero() && !now.Before(c.expires) })
		}
	}
}

// clientSet is the hub goroutine's set of connected browsers; only that
// goroutine touches it.
type clientSet struct {
	h *Hub
	m map[*client]struct{}
}

// drop forgets c and closes its send channel, telling its writer why.
func (cs *clientSet) drop(c *client, why string) {
	if _, ok := cs.m[c]; ok {
		delete(cs.m, c)
		c.closeWhy = why
		close(c.send)
	}
}

// dropWhere drops every client f picks.
func (cs *clientSet) dropWhere(why string, f func(*client) bool) {
	for c := range cs.m {
		if f(c) {
			cs.drop(c, why)
		}
	}
}

// offer hands pm to every client of the audience; a client whose buffer
// is full is slow and dropped, never waited for.
func (cs *clientSet) offer(aud audience, pm *websocket.PreparedMessage) {
	for c := range cs.m {
		if !aud.admits(c.role) {
			continue
		}
		select {
		case c.send <- pm:
			cs.h.frames.Add(1)
		default:
			cs.h.dropped.Add(1)
			cs.h.log.Info("painel: cliente lento desconectado", "user", c.user, "remote", c.remote)
			cs.drop(c, closeSlow)
		}
	}
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

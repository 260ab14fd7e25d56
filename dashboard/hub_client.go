package dashboard

// One browser socket of the live hub: its upgrade, its reader and its
// writer (hub.go says how they share the work).

import (
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/websocket"

	"github.com/sossego/sossego/internal/users"
)

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

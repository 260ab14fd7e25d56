package broker

import (
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/sossego/sossego/internal/conntrack"
)

// Why the broker bounds its own shutdown: mochi v2.7.9's Close can wait
// for ever.
//
//   - A client's packets are written under the client's lock
//     (Client.WritePacket), on a connection whose deadline is the client's
//     keep-alive × 1.5 — none for a keep-alive of 0. The DISCONNECT sent at
//     shutdown waits behind a write to a client that does not read (its
//     TCP window full), so the closer of the listener blocks, and Close
//     with it, for as long as that client stays silent.
//   - A listener's clients are disconnected before the listener itself is
//     closed, and only clients that had finished CONNECT are in the list:
//     a connection accepted meanwhile, or still sending CONNECT, completes
//     it afterwards, stays connected (a client's pings keep renewing its
//     deadline) and Close waits for it in Listeners.ClientsWg.
//   - ClientsWg.Add runs in the connection's goroutine, so a Wait that
//     starts before a freshly accepted connection's goroutine has run
//     races its Add.
//
// So the broker closes its listeners itself first, refuses a CONNECT that
// arrives while it stops, waits until every accepted connection's
// goroutine has started (internal/conntrack), disconnects the clients concurrently, and after
// ShutdownGrace closes whatever connection is left; if mochi still has not
// returned after another ShutdownGrace, Run returns without it and says so.

// DefaultShutdownGrace is Options.ShutdownGrace's default.
const DefaultShutdownGrace = 5 * time.Second

// shutdown stops the broker within about three times the grace.
func (b *Broker) shutdown() {
	b.closing.Store(true)
	for _, ln := range b.raw {
		_ = ln.Close() // no new connection; mochi's accept loop ends
	}
	deadline := time.Now().Add(b.grace)
	b.conns.WaitStarted(deadline)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// mochi v2.7.9's own closer (closeListenerClients →
		// Clients.GetByListener) read-locks the client map twice; a client
		// removing itself in between (a clean session ending) deadlocks
		// both (seen in CI). This closer reads the map once; srv.Close then
		// finds the listeners closed.
		b.srv.Listeners.CloseAll(b.disconnectAll)
		_ = b.srv.Close()
	}()
	t := time.NewTimer(b.grace)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	cut := b.conns.Open()
	who := b.describe(cut)
	for _, c := range cut {
		_ = c.Close()
	}
	b.log.Warn("broker: desligamento: conexões que não encerraram a tempo foram fechadas à força",
		"conexoes", len(cut), "clientes", who, "espera", b.grace)
	t.Reset(b.grace)
	select {
	case <-done:
	case <-t.C:
		b.log.Error("broker: desligamento: o broker embutido não terminou depois de fechadas as conexões; o serviço segue sem esperá-lo",
			"espera", 2*b.grace, "clientes", b.describe(nil))
	}
}

// disconnectAll sends DISCONNECT to every client of listener at once, so
// one client that does not read holds up only itself.
func (b *Broker) disconnectAll(listener string) {
	var wg sync.WaitGroup
	for _, cl := range b.srv.Clients.GetAll() {
		if cl.Net.Listener != listener || cl.Closed() {
			continue
		}
		wg.Add(1)
		go func(cl *mqtt.Client) {
			defer wg.Done()
			_ = b.srv.DisconnectClient(cl, packets.ErrServerShuttingDown)
		}(cl)
	}
	wg.Wait()
}

// describe names the clients on conns (every connected client when conns
// is nil), at most 20: client id and remote address, or the address alone
// for a connection that never finished CONNECT.
func (b *Broker) describe(conns []*conntrack.Conn) []string {
	byRemote := map[string]string{}
	for _, cl := range b.srv.Clients.GetAll() {
		if !cl.Net.Inline && !cl.Closed() {
			byRemote[cl.Net.Remote] = cl.ID
		}
	}
	var out []string
	if conns == nil {
		for r, id := range byRemote {
			out = append(out, id+"@"+r)
		}
	}
	for _, c := range conns {
		r := c.RemoteAddr().String()
		if id, ok := byRemote[r]; ok {
			out = append(out, id+"@"+r)
		} else {
			out = append(out, "(sem CONNECT)@"+r)
		}
	}
	sort.Strings(out)
	if len(out) > 20 {
		out = append(out[:20], "…")
	}
	return out
}

// refuseWhileClosing is the OnConnect answer while the broker stops.
func refuseWhileClosing(closing *atomic.Bool, log *slog.Logger, cl *mqtt.Client) error {
	if closing != nil && closing.Load() {
		log.Info("broker: conexão recusada: o broker está sendo desligado", "cliente", cl.ID, "remoto", cl.Net.Remote)
		return packets.ErrServerShuttingDown
	}
	return nil
}

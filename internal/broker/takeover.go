package broker

import (
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// Takeovers. mochi keeps one table entry per client id, and a new
// connection takes over the session in steps that are not atomic: look
// the id up, disconnect the client found, add itself. Two connections with
// the same id racing through those steps (a holder of a gateway's
// password opening eight at once) both disconnect the old client and both
// add themselves: the first one added stays connected, out of the table,
// and is sent nothing. And when a clean session ends, mochi removes the
// table entry and the subscriptions by client id, whoever holds them by
// then: a replaced session ending late unsubscribed the live gateway and
// dropped it from the table. Either way the real gateway stayed connected
// and never received another ack.
//
// Two rules keep the table right whatever the order:
//
//   - a session's end never touches the table (keepSessionAtEnd): a
//     disconnected session stays until the next connection with its id
//     takes it over or SessionExpiry removes it, as a persistent session
//     does; a clean CONNECT still starts without the old session;
//   - every connection, once added and acknowledged (OnSessionEstablished,
//     which mochi calls after adding it), disconnects the connections with
//     its id that are no longer the table's entry, itself included
//     (sweep). The last connection added runs its sweep after every other
//     was added, and a connection established after that sweep finds the
//     entry is not its own; so no connection stays up out of the table.
//     The one disconnected reconnects and takes the session over.

// keepSessionAtEnd makes mochi keep cl's session when its connection ends
// (MQTT 3: as if CleanSession were false; MQTT 5: a session expiry of at
// least a second). Called from OnConnectAuthenticate, before mochi adds
// the client to its table.
func keepSessionAtEnd(cl *mqtt.Client) {
	if cl.Properties.ProtocolVersion < 5 {
		cl.Properties.Clean = false
		return
	}
	if cl.Properties.Props.SessionExpiryInterval == 0 {
		cl.Properties.Props.SessionExpiryInterval = 1
	}
}

// OnPacketRead keeps an MQTT 5 DISCONNECT from setting the session's
// expiry to zero, which would make its end remove the table entry by id
// (see keepSessionAtEnd).
func (h *authHook) OnPacketRead(_ *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	if pk.FixedHeader.Type == packets.Disconnect {
		pk.Properties.SessionExpiryIntervalFlag = false
	}
	return pk, nil
}

// OnSessionEstablished records cl as live under its id and disconnects
// the live connections with that id that are not the table's entry.
func (h *authHook) OnSessionEstablished(cl *mqtt.Client, _ packets.Packet) {
	if cl.Net.Inline {
		return
	}
	for _, stale := range h.sweep(cl) {
		h.log.Debug("broker: conexão fora da tabela de sessões encerrada; o cliente vai reconectar", "cliente", clip(stale.ID, maxLogValue))
		_ = h.srv.DisconnectClient(stale, packets.ErrSessionTakenOver)
	}
}

// sweep adds cl to the live connections of its id and returns those of
// them (cl included) that are not the table's entry, forgetting them and
// any already closed.
func (h *authHook) sweep(cl *mqtt.Client) []*mqtt.Client {
	h.mu.Lock()
	defer h.mu.Unlock()
	set := h.live[cl.ID]
	if set == nil {
		set = map[*mqtt.Client]struct{}{}
		h.live[cl.ID] = set
	}
	set[cl] = struct{}{}
	cur, _ := h.srv.Clients.Get(cl.ID)
	var stale []*mqtt.Client
	for c := range set {
		if c == cur && !c.Closed() {
			continue
		}
		delete(set, c)
		if !c.Closed() {
			stale = append(stale, c)
		}
	}
	if len(set) == 0 {
		delete(h.live, cl.ID)
	}
	return stale
}

// forget removes cl from the live connections; h.mu is held.
func (h *authHook) forget(cl *mqtt.Client) {
	if set := h.live[cl.ID]; set != nil {
		delete(set, cl)
		if len(set) == 0 {
			delete(h.live, cl.ID)
		}
	}
}

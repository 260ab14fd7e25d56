package pahostore

import (
	"slices"
	"testing"

	"github.com/eclipse/paho.mqtt.golang/packets"
)

func TestKeepsAllButOutboundPublishes(t *testing.T) {
	pub := func(id uint16) packets.ControlPacket {
		p := packets.NewControlPacket(packets.Publish).(*packets.PublishPacket)
		p.Qos, p.MessageID, p.TopicName = 1, id, "sossego/v1/lapa/gw/ack"
		return p
	}
	sub := packets.NewControlPacket(packets.Subscribe).(*packets.SubscribePacket)
	sub.MessageID = 3
	cases := []struct {
		key  string
		pkt  packets.ControlPacket
		kept bool
	}{
		{"o.1", pub(1), false}, // outbound publish: the application repeats it
		{"i.2", pub(2), true},  // inbound QoS 1 publish not yet PUBACKed
		{"o.3", sub, true},     // subscription paho may resume
	}
	s := New()
	s.Open()
	defer s.Close()
	for _, c := range cases {
		s.Put(c.key, c.pkt)
	}
	for _, c := range cases {
		got := s.Get(c.key) != nil
		if got != c.kept {
			t.Errorf("%s (%T): kept = %v, want %v", c.key, c.pkt, got, c.kept)
		}
	}
	if all := s.All(); len(all) != 2 || !slices.Contains(all, "i.2") || !slices.Contains(all, "o.3") {
		t.Errorf("All() = %v, want i.2 and o.3", all)
	}
	s.Del("i.2")
	if s.Get("i.2") != nil {
		t.Error("Del did not remove i.2")
	}
}

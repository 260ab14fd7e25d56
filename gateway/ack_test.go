package gateway

import (
	"encoding/json"
	"testing"

	"github.com/sossego/sossego/internal/wire"
)

func TestParseAck(t *testing.T) {
	tests := []struct {
		payload string
		ok      bool
		seq     uint64
	}{
		{`{"v":1,"gateway":"gw-01","seq":42}`, true, 42},
		{`{"v":1,"gateway":"gw-01","seq":18446744073709551615}`, true, 18446744073709551615},
		{`{"v":1,"gateway":"gw-01","seq":0}`, false, 0},
		{`{"v":2,"gateway":"gw-01","seq":1}`, false, 0},
		{`{"v":1,"gateway":"GW","seq":1}`, false, 0},
		{`{"v":1,"seq":1}`, false, 0},
		{`{"v":1,"gateway":"gw-01","seq":-1}`, false, 0},
		{`{"v":1,"gateway":"gw-01","seq":1.5}`, false, 0},
		{`{"v":1,"gateway":"gw-01","seq":1,"x":1}`, false, 0},
		{`{"v":1,"gateway":"gw-01","seq":1}{}`, false, 0},
		{`offline`, false, 0},
		{``, false, 0},
	}
	for _, tc := range tests {
		a, err := ParseAck([]byte(tc.payload))
		if (err == nil) != tc.ok || a.Seq != tc.seq {
			t.Errorf("ParseAck(%s) = %+v, %v; want ok=%v seq=%d", tc.payload, a, err, tc.ok, tc.seq)
		}
	}
}

func FuzzParseAck(f *testing.F) {
	f.Add([]byte(`{"v":1,"gateway":"gw-01","seq":42}`))
	f.Add([]byte(`{"v":1,"gateway":"gw-01","seq":1e3}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		a, err := ParseAck(payload)
		if err != nil {
			return
		}
		if a.V != wire.Version || a.Seq == 0 || !wire.ValidID(a.Gateway) {
			t.Fatalf("accepted invalid ack %+v", a)
		}
		again, _ := json.Marshal(a)
		b, err := ParseAck(again)
		if err != nil || b != a {
			t.Fatalf("re-marshalled ack %s: %+v, %v", again, b, err)
		}
	})
}

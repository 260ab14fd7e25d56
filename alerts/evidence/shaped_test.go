package evidence_test

import (
	"crypto/ed25519"
	"encoding/json"
	"math"

	"github.com/sossego/sossego/alerts/evidence"
	"github.com/sossego/sossego/internal/level"
	"github.com/sossego/sossego/internal/wire"
)

// gatewayShaped rewrites p's signed batches and records the way the
// gateway's aggregator makes them: LAeq, LAFmax and LAFmin to two
// decimals, an LCpeak, and a histogram of ten 100-ms LAF samples spread
// over up to ten 0.1-dB bins. Each body is signed again with the key in
// force when it was received (p's batch 1003 keeps its bad signature).
func gatewayShaped(p *evidence.Package) *evidence.Package {
	keyAt := func(bt evidence.Batch) ed25519.PrivateKey {
		if bt.ReceivedAt.Before(p.GatewayKeys[0].ValidUntil) {
			return gatewayOld
		}
		return gatewayNew
	}
	r2 := func(v float64) float64 { return math.Round(v*100) / 100 }
	ri := 0
	for i := range p.Batches {
		bt := &p.Batches[i]
		var wb wire.Batch
		if err := json.Unmarshal(bt.Body, &wb); err != nil {
			panic(err)
		}
		for j := range wb.Records {
			r := &wb.Records[j]
			r.LAeq, r.LAFmax, r.LAFmin = r2(r.LAeq), r2(r.LAFmax), r2(r.LAFmin)
			peak := r2(r.LAFmax + 14.3)
			r.LCpeak = &peak
			h := level.Histogram{Bins: map[int]float64{}}
			for k := range 10 {
				db := r.LAFmin + (r.LAFmax-r.LAFmin)*float64((k*7+j*3)%10)/9
				h.Add(db, 100)
			}
			r.Hist = &h
			rec := &p.Records[ri]
			ri++
			rec.LAeq, rec.LAFmax, rec.LAFmin, rec.LCpeak, rec.Hist = r.LAeq, r.LAFmax, r.LAFmin, r.LCpeak, r.Hist
		}
		body, err := json.Marshal(&wb)
		if err != nil {
			panic(err)
		}
		bad := !bt.VerifiedAtIngest
		bt.Body, bt.Sig = body, ed25519.Sign(keyAt(*bt), body)
		if bad {
			bt.Sig[0] ^= 1
		}
	}
	return p
}

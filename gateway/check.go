package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sossego/sossego/internal/wire"
)

// CheckDir is the folder, inside the state folder, where
// `sossego-gateway check` leaves the calibrator checks a technician
// recorded; the running daemon seals each (signed, under the next seq,
// with the meter's device) into the outbox and removes the file.
const CheckDir = "checks"

// CheckPollInterval is how often the daemon looks for recorded checks.
const CheckPollInterval = 2 * time.Second

// checkState is the gateway's part for field checks.
type checkState struct {
	devMu sync.Mutex
	dev   *wire.Device // the meter as the last levels batch reported it
}

func (c *checkState) setDevice(d wire.Device) {
	c.devMu.Lock()
	c.dev = &d
	c.devMu.Unlock()
}

func (c *checkState) device() (wire.Device, bool) {
	c.devMu.Lock()
	defer c.devMu.Unlock()
	if c.dev == nil {
		return wire.Device{}, false
	}
	return *c.dev, true
}

// NewCheck builds a calibrator check made at t: ref is the calibrator's
// level (94 or 114 dB), measured what the meter showed, at 1 kHz. It
// returns the wire contract's rejection, in pt-BR, for values the central
// service would refuse.
func NewCheck(t time.Time, ref, measured float64, calModel, calSerial, note string) (wire.Check, error) {
	c := wire.Check{T: t.UTC().Truncate(time.Millisecond), ReferenceDB: ref, MeasuredDB: math.Round(measured*100) / 100,
		FrequencyHz: 1000, CalibratorModel: strings.TrimSpace(calModel), CalibratorSerial: strings.TrimSpace(calSerial),
		Note: strings.TrimSpace(note)}
	// Validate through the contract with a stand-in batch.
	b := wire.Batch{V: wire.Version, Kind: wire.KindCheck, Municipality: "m", Gateway: "g", Sensor: "s", Seq: 1,
		Device: wire.Device{Model: "m", Serial: "s", Grade: "screening"}, Check: &c}
	if err := wire.Validate(wire.Topic{Municipality: "m", Gateway: "g", Sensor: "s", Kind: wire.KindCheck}, nil, &b,
		c.T, wire.DefaultSkew, wire.DefaultStale); err != nil {
		var we *wire.Error
		if ok := asWireError(err, &we); ok {
			return wire.Check{}, fmt.Errorf("%s", we.Msg)
		}
		return wire.Check{}, err
	}
	return c, nil
}

func asWireError(err error, out **wire.Error) bool {
	we, ok := err.(*wire.Error)
	if ok {
		*out = we
	}
	return ok
}

// RecordCheck writes c into stateDir's CheckDir for the daemon to send
// (written whole, then renamed: the daemon never reads half a file). It
// returns the file's path.
func RecordCheck(stateDir string, c wire.Check) (string, error) {
	dir := filepath.Join(stateDir, CheckDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("pasta de verificações: %w", err)
	}
	data, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	name := c.T.UTC().Format("20060102T150405.000Z") + "-" + hex.EncodeToString(suffix) + ".json"
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return "", fmt.Errorf("gravar a verificação: %w", err)
	}
	f, err := os.Open(tmp)
	if err == nil {
		err = f.Sync()
		f.Close()
	}
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("gravar a verificação: %w", err)
	}
	path := filepath.Join(dir, name)
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("gravar a verificação: %w", err)
	}
	return path, nil
}

// sendChecks seals every recorded check in dir into the outbox, oldest
// first, and removes its file once stored. It waits for the first levels
// batch, which tells the meter's device. A file that does not decode to a
// valid check is renamed *.rejeitada and logged.
func (g *Gateway) sendChecks(ctx context.Context, dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		return
	}
	dev, ok := g.checkState.device()
	if !ok {
		return // no levels batch yet: the check waits for the meter's device
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && strings.HasSuffix(n, ".json") && !strings.HasPrefix(n, ".") {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		path := filepath.Join(dir, n)
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		var c wire.Check
		if err == nil {
			err = json.Unmarshal(data, &c)
		}
		if err == nil {
			_, err = NewCheck(c.T, c.ReferenceDB, c.MeasuredDB, c.CalibratorModel, c.CalibratorSerial, c.Note)
		}
		if err != nil {
			g.log.Error("verificação de campo inválida; não enviada (arquivo renomeado .rejeitada)", "arquivo", path, "erro", err)
			_ = os.Rename(path, path+".rejeitada")
			continue
		}
		// Straight into the outbox, not through the memory buffer: while the
		// disk refuses or the outbox is full the file stays and is tried again.
		before := g.box.LastSeq()
		g.memMu.Lock()
		g.storeOne(ctx, held{kind: wire.KindCheck, topic: g.checkTopic(), build: func(seq uint64, now time.Time) wire.Batch {
			return wire.Batch{V: wire.Version, Kind: wire.KindCheck, Municipality: g.opts.Municipality, Gateway: g.opts.Gateway,
				Sensor: g.opts.Sensor, Seq: seq, SentAt: now.Truncate(time.Millisecond), Device: dev, Clock: g.currentClock(), Check: &c}
		}})
		g.memMu.Unlock()
		if g.box.LastSeq() == before {
			return
		}
		if err := os.Remove(path); err != nil {
			g.log.Error("verificação de campo enviada à fila mas o arquivo não pôde ser removido", "arquivo", path, "erro", err)
			continue
		}
		g.log.Info("verificação de campo na fila, assinada", "referencia_db", c.ReferenceDB, "medido_db", c.MeasuredDB,
			"calibrador", c.CalibratorModel+" "+c.CalibratorSerial, "seq", g.box.LastSeq())
	}
}

func (g *Gateway) checkTopic() string {
	return wire.CheckTopic(g.opts.Municipality, g.opts.Gateway, g.opts.Sensor)
}

// watchChecks polls dir for recorded checks until ctx ends.
func (g *Gateway) watchChecks(ctx context.Context, dir string) error {
	dbctx := context.WithoutCancel(ctx)
	t := time.NewTicker(CheckPollInterval)
	defer t.Stop()
	for {
		g.sendChecks(dbctx, dir)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

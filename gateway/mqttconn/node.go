package mqttconn

import (
	"context"
	"crypto/ed25519"
	"errors"
	"log/slog"

	"golang.org/x/sync/errgroup"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/gateway"
)

// NodeOptions is everything one running gateway needs.
type NodeOptions struct {
	Gateway gateway.Options
	MQTT    Options // StatusTopic and AckTopic are filled in from Gateway
	Meter   bridge.Meter
	// Env is an optional environmental sensor, sampled every
	// Gateway.Env.Interval and published on the env topic through the
	// same outbox (nil: none).
	Env    gateway.EnvSensor
	Sync   gateway.SyncSource
	Outbox *gateway.Outbox
	Key    ed25519.PrivateKey
	Log    *slog.Logger
}

// RunNode samples the meter (and the environmental sensor, if any) and
// delivers batches over MQTT until ctx ends.
// On the way out the gateway stops first (flushing its open batch into the
// outbox), then the transport publishes "offline" and disconnects.
func RunNode(ctx context.Context, o NodeOptions) error {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	pub := &lateTransport{}
	g, err := gateway.New(o.Gateway, o.Meter, o.Sync, o.Outbox, o.Key, pub, log)
	if err != nil {
		return err
	}
	if o.Env != nil {
		g.SetEnvSensor(o.Env)
	}
	mo := o.MQTT
	mo.StatusTopic, mo.AckTopic = g.StatusTopic(), g.AckTopic()
	if mo.ClientID == "" {
		mo.ClientID = o.Gateway.Gateway
	}
	cl, err := New(mo, g, log)
	if err != nil {
		return err
	}
	pub.c = cl
	tctx, stopTransport := context.WithCancel(context.Background())
	defer stopTransport()
	eg, ectx := errgroup.WithContext(tctx)
	eg.Go(func() error { return cl.Run(ectx) })
	eg.Go(func() error {
		err := g.Run(ctx)
		stopTransport()
		return err
	})
	err = eg.Wait()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// lateTransport lets the gateway be built before its MQTT client.
type lateTransport struct{ c *Client }

func (t *lateTransport) Publish(ctx context.Context, topic string, payload []byte, retained bool) error {
	return t.c.Publish(ctx, topic, payload, retained)
}

func (t *lateTransport) PublishAsync(topic string, payload []byte, retained bool) func(context.Context) error {
	return t.c.PublishAsync(topic, payload, retained)
}

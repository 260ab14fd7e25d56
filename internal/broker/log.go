package broker

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mochi-mqtt/server/v2/packets"
)

// maxLogValue is the most of a string a log line shows (topics, errors).
const maxLogValue = 256

// clip shortens s to at most n bytes (on a rune boundary), saying how long
// it was.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s…(%d bytes)", s[:cut], len(s))
}

// logHandler cuts what mochi logs down to size: it logs a packet it could
// not process whole ("pk", a packets.Packet with its payload), so one
// refused 1 MiB publish wrote ~3 MB of log. A packet becomes its type,
// topic (clipped), QoS, retain flag and payload length; any other long
// value is clipped.
type logHandler struct{ slog.Handler }

func newLogHandler(h slog.Handler) slog.Handler { return logHandler{h} }

func (h logHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, clip(r.Message, maxLogValue), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(shortAttr(a))
		return true
	})
	return h.Handler.Handle(ctx, out)
}

func (h logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	short := make([]slog.Attr, len(as))
	for i, a := range as {
		short[i] = shortAttr(a)
	}
	return logHandler{h.Handler.WithAttrs(short)}
}

func (h logHandler) WithGroup(name string) slog.Handler { return logHandler{h.Handler.WithGroup(name)} }

func shortAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, clip(v.String(), maxLogValue))
	case slog.KindGroup:
		g := v.Group()
		short := make([]any, len(g))
		for i, x := range g {
			short[i] = shortAttr(x)
		}
		return slog.Group(a.Key, short...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case packets.Packet:
			return slog.Group(a.Key, "type", packets.PacketNames[x.FixedHeader.Type], "topic", clip(x.TopicName, maxLogValue),
				"qos", x.FixedHeader.Qos, "retain", x.FixedHeader.Retain, "payload_bytes", len(x.Payload))
		case *packets.Packet:
			if x != nil {
				return shortAttr(slog.Any(a.Key, *x))
			}
		case []byte:
			return slog.Int(a.Key+"_bytes", len(x))
		case error:
			return slog.String(a.Key, clip(x.Error(), maxLogValue))
		case fmt.Stringer:
			return slog.String(a.Key, clip(x.String(), maxLogValue))
		default:
			return slog.String(a.Key, clip(fmt.Sprintf("%+v", x), maxLogValue))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// logLimiter lets one line through per interval and counts the others.
type logLimiter struct {
	every time.Duration

	mu     sync.Mutex
	last   time.Time
	counts int
}

// allow reports whether to log now and how many events the line stands
// for (this one and those not logged since the last line).
func (l *logLimiter) allow(now time.Time) (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.counts++
	if !l.last.IsZero() && now.Sub(l.last) < l.every {
		return 0, false
	}
	n := l.counts
	l.last, l.counts = now, 0
	return n, true
}

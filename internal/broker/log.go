package broker

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
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

// logHandler is what mochi logs through. It cuts lines down to size: mochi
// logs a packet it could not process whole ("pk", a packets.Packet with
// its payload), so one refused 1 MiB publish wrote ~3 MB of log. A packet
// becomes its type, topic (clipped), QoS, retain flag and payload length;
// any other long value is clipped. And it speaks the operator's language:
// mochi's start-up chatter and the end of every connection (an empty
// message with the error, EOF for most) go to debug, the lines an operator
// acts on are translated (mochiLines), and each warning or error line is
// written at most once per interval with the count of those it stands
// for.
type logHandler struct {
	slog.Handler
	limits *lineLimits
}

func newLogHandler(h slog.Handler) slog.Handler {
	return logHandler{h, &lineLimits{every: 10 * time.Second, by: map[string]*logLimiter{}}}
}

// mochiLine is how one of mochi's messages reaches the operator.
type mochiLine struct {
	msg   string     // pt-BR; "" keeps mochi's, prefixed
	level slog.Level // the level it is logged at
}

// mochiLines maps mochi's messages (v2.7.9) to the central log's.
var mochiLines = map[string]mochiLine{
	"":                                    {"broker: conexão encerrada", slog.LevelDebug}, // a listener's connection ended, with its error
	"added hook":                          {"broker: hook adicionado", slog.LevelDebug},
	"attached listener":                   {"broker: escutando", slog.LevelDebug},
	"mochi mqtt starting":                 {"broker: iniciando", slog.LevelDebug},
	"mochi mqtt server started":           {"broker: iniciado", slog.LevelDebug},
	"gracefully stopping server":          {"broker: parando", slog.LevelDebug},
	"mochi mqtt server stopped":           {"broker: parado", slog.LevelDebug},
	"stopping hook":                       {"broker: parando hook", slog.LevelDebug},
	"error processing packet":             {"broker: pacote inválido; conexão encerrada", slog.LevelWarn},
	"client store quota reached":          {"broker: fila de mensagens do cliente cheia; mensagem descartada", slog.LevelWarn},
	"packet ids exhausted":                {"broker: identificadores de pacote do cliente esgotados; mensagem descartada", slog.LevelWarn},
	"publish packet error":                {"broker: falha ao publicar pacote", slog.LevelError},
	"parse will error":                    {"broker: Will inválido", slog.LevelWarn},
	"failed to serve.":                    {"broker: listener parou", slog.LevelError},
	"listener type unavailable by config": {"", slog.LevelError},
}

// keepaliveWarning is the start of mochi's warning for a client whose
// keep-alive is under its recommended minimum.
const keepaliveWarning = "client keepalive is below minimum"

func (h logHandler) Enabled(ctx context.Context, l slog.Level) bool {
	// mochi's level is not the one logged: ask the lowest and decide in
	// Handle.
	return h.Handler.Enabled(ctx, min(l, slog.LevelDebug))
}

func (h logHandler) Handle(ctx context.Context, r slog.Record) error {
	msg, level, ours := translate(r.Message, r.Level)
	if !h.Handler.Enabled(ctx, level) {
		return nil
	}
	out := slog.NewRecord(r.Time, level, clip(msg, maxLogValue), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(shortAttr(a))
		return true
	})
	if !ours && level >= slog.LevelWarn { // the broker's own lines have their own limits
		n, ok := h.limits.allow(msg, r.Time)
		if !ok {
			return nil
		}
		out.AddAttrs(slog.Int("ocorrencias_no_intervalo", n))
	}
	return h.Handler.Handle(ctx, out)
}

// translate returns the message and level a line is logged with; the
// broker's own lines (already pt-BR, "broker: …") pass unchanged (ours).
func translate(msg string, level slog.Level) (string, slog.Level, bool) {
	if l, ok := mochiLines[msg]; ok {
		if l.msg == "" {
			return "broker (mochi): " + msg, l.level, false
		}
		return l.msg, l.level, false
	}
	switch {
	case strings.HasPrefix(msg, "broker: "):
		return msg, level, true
	case strings.HasPrefix(msg, keepaliveWarning):
		return "broker: cliente com keep-alive curto demais", slog.LevelDebug, false
	}
	return "broker (mochi): " + msg, level, false
}

func (h logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	short := make([]slog.Attr, len(as))
	for i, a := range as {
		short[i] = shortAttr(a)
	}
	return logHandler{h.Handler.WithAttrs(short), h.limits}
}

func (h logHandler) WithGroup(name string) slog.Handler {
	return logHandler{h.Handler.WithGroup(name), h.limits}
}

// lineLimits is one logLimiter per message.
type lineLimits struct {
	every time.Duration
	mu    sync.Mutex
	by    map[string]*logLimiter
}

func (l *lineLimits) allow(msg string, now time.Time) (int, bool) {
	l.mu.Lock()
	lim := l.by[msg]
	if lim == nil {
		lim = &logLimiter{every: l.every}
		l.by[msg] = lim
	}
	l.mu.Unlock()
	return lim.allow(now)
}

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

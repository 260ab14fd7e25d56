package notify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"
	mail "github.com/wneessen/go-mail"

	"github.com/sossego/sossego/alerts/notify"
	"github.com/sossego/sossego/internal/tz"
)

// Receiver names.
const (
	ReceiverEmail = "email"
	ReceiverPush  = "push"
	webhookPrefix = "webhook:"
)

// emailPayload is an e-mail as the outbox keeps it.
type emailPayload struct {
	To        string   `json:"to"`
	Subject   string   `json:"subject"`
	Text      string   `json:"text"`
	HTML      string   `json:"html"`
	MessageID string   `json:"message_id"`
	Alerts    []string `json:"alerts"`
}

// pushPayload is what the service worker receives (sw.js).
type pushPayload struct {
	Title string `json:"title"`
	Body  string `json:"body"`
	URL   string `json:"url,omitempty"`
	Tag   string `json:"tag"`
}

func alertIDs(n notify.Notification) []string {
	ids := make([]string, len(n.Alerts))
	for i, a := range n.Alerts {
		ids[i] = a.ID
	}
	return ids
}

func (s *Service) renderContext(pol *notify.Policy, muni string) notify.RenderContext {
	rc := notify.RenderContext{Details: s.o.Sensors}
	if pol != nil {
		rc.PublicURL = pol.Settings.PublicURL
		_, rc.Location, _ = pol.Municipality(muni)
	}
	return rc
}

// shortTarget is a delivery target as shown in the history: the device of
// a push subscription is shortened.
func shortTarget(receiver, target string) string {
	if receiver == ReceiverPush {
		return "aparelho " + shortHash(target)
	}
	return target
}

func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:4])
}

// enqueueDeliveries expands a notification into one outbox row per
// channel of its user and returns the history lines.
func (s *Service) enqueueDeliveries(ctx context.Context, tx *sql.Tx, pol *notify.Policy, n notify.Notification, now time.Time,
	receivers map[string]bool) ([]notify.HistoryEntry, error) {
	rc := s.renderContext(pol, n.Municipality)
	msg := notify.Render(n, rc)
	contact, _ := pol.Contact(n.User)
	type row struct {
		receiver, target string
		payload          []byte
	}
	var rows []row
	if pol != nil && pol.Settings.Email.Enabled && contact.Email != "" {
		p := emailPayload{To: contact.Email, Subject: msg.Subject, Text: msg.Text, HTML: msg.HTML, Alerts: alertIDs(n),
			MessageID: "sossego." + n.ID + "." + shortHash(contact.Email) + "@" + hostOf(pol.Settings.Email.From)}
		b, _ := json.Marshal(p)
		rows = append(rows, row{ReceiverEmail, contact.Email, b})
	}
	if pol != nil {
		for _, wh := range pol.Settings.Webhooks {
			if len(wh.Municipalities) > 0 && !contains(wh.Municipalities, n.Municipality) {
				continue
			}
			name := webhookPrefix + wh.Name
			pl := notify.BuildWebhook(n.ID+"/"+name, n, msg, notify.WebhookRecipient{User: n.User, Email: contact.Email, Phone: contact.Phone}, rc)
			b, err := pl.Marshal()
			if err != nil {
				return nil, err
			}
			rows = append(rows, row{name, wh.Name, b})
		}
	}
	if pol != nil && pol.Settings.Push.Enabled {
		subs, err := pushSubsTx(ctx, tx, n.User)
		if err != nil {
			return nil, err
		}
		title := msg.Subject[len("[Sossego] "):]
		if i := strings.Index(title, ":"); i > 0 && n.Type != notify.TypeTest {
			title = title[:i]
		}
		b, _ := json.Marshal(pushPayload{Title: "Sossego — " + title, Body: msg.Short, URL: msg.URL, Tag: n.Group})
		for _, sub := range subs {
			rows = append(rows, row{ReceiverPush, sub, b})
		}
	}
	var logs []notify.HistoryEntry
	ids := alertIDs(n)
	idsJSON, _ := json.Marshal(ids)
	if len(rows) == 0 {
		for _, id := range ids {
			logs = append(logs, notify.HistoryEntry{Entry: notify.Entry{AlertID: id, At: now, Kind: notify.EntryNoChannel, Notification: n.ID,
				User: n.User, Detail: fmt.Sprintf("%s não tem canal: cadastre e-mail ou telefone em Notificações, ou ative o push no aparelho", n.User)}})
		}
		s.m.undeliverable.Inc()
		return logs, nil
	}
	recv := n.ReceivedAt
	if recv.IsZero() {
		recv = now
	}
	for _, r := range rows {
		if _, err := tx.ExecContext(ctx, `INSERT INTO notify_outbox (notification, receiver, target, user, alert_ids, payload, status, next_at, received_at, created_at)
			VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?) ON CONFLICT (notification, receiver, target) DO NOTHING`,
			n.ID, r.receiver, r.target, n.User, string(idsJSON), string(r.payload), ms(now), ms(recv), ms(now)); err != nil {
			return nil, fmt.Errorf("notify: outbox: %w", err)
		}
		receivers[r.receiver] = true
		for _, id := range ids {
			logs = append(logs, notify.HistoryEntry{Entry: notify.Entry{AlertID: id, At: now, Kind: notify.EntryEnqueued, Notification: n.ID,
				User: n.User, Detail: "na fila de envio: " + receiverLabel(r.receiver) + " para " + n.User},
				Receiver: r.receiver, Target: shortTarget(r.receiver, r.target)})
		}
	}
	return logs, nil
}

func pushSubsTx(ctx context.Context, tx *sql.Tx, user string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT endpoint FROM notify_push_subscriptions WHERE user = ? ORDER BY created_at`, user)
	if err != nil {
		return nil, fmt.Errorf("notify: push subscriptions: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var e string
		if err := rows.Scan(&e); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

func receiverLabel(r string) string {
	switch {
	case r == ReceiverEmail:
		return "e-mail"
	case r == ReceiverPush:
		return "push"
	case strings.HasPrefix(r, webhookPrefix):
		return "webhook " + strings.TrimPrefix(r, webhookPrefix)
	}
	return r
}

func hostOf(addr string) string {
	if i := strings.LastIndexByte(addr, '@'); i >= 0 {
		return addr[i+1:]
	}
	return "sossego.invalid"
}

func contains(list []string, x string) bool {
	for _, v := range list {
		if v == x {
			return true
		}
	}
	return false
}

// ---- workers -----------------------------------------------------------

func receiverNames(pol *notify.Policy) []string {
	names := []string{ReceiverEmail, ReceiverPush}
	if pol != nil {
		for _, w := range pol.Settings.Webhooks {
			names = append(names, webhookPrefix+w.Name)
		}
	}
	return names
}

// syncWorkers starts a worker for every receiver of the policy and stops
// those of receivers removed. Pending rows of a removed receiver wait:
// they go out if it comes back.
func (s *Service) syncWorkers() {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.wctx == nil {
		return
	}
	want := map[string]bool{}
	for _, n := range receiverNames(s.policy.Load()) {
		want[n] = true
		if s.workers[n] != nil {
			continue
		}
		ctx, cancel := context.WithCancel(s.wctx)
		w := &worker{name: n, poke: make(chan struct{}, 1), cancel: cancel}
		s.workers[n] = w
		s.wwg.Add(1)
		go func() {
			defer s.wwg.Done()
			s.work(ctx, w)
		}()
	}
	for n, w := range s.workers {
		if !want[n] {
			w.cancel()
			delete(s.workers, n)
		}
	}
}

func (s *Service) pokeWorker(name string) {
	s.wmu.Lock()
	w := s.workers[name]
	s.wmu.Unlock()
	if w == nil {
		return
	}
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

// work delivers one receiver's due rows, one at a time, until ctx ends;
// push rows each on their own (workPush).
func (s *Service) work(ctx context.Context, w *worker) {
	if w.name == ReceiverPush {
		s.workPush(ctx, w)
		return
	}
	const batch = 16
	for {
		now := s.o.Now()
		ds, next, err := s.st.due(ctx, w.name, now, batch)
		if err != nil && ctx.Err() == nil {
			s.log.Error("notificações: leitura da fila falhou", "receptor", w.name, "erro", err)
		}
		for _, d := range ds {
			if ctx.Err() != nil {
				return
			}
			s.attempt(ctx, d)
		}
		if len(ds) == batch {
			continue
		}
		if err == nil {
			s.pass("worker:"+w.name, now)
		}
		wait := s.o.Poll
		if !next.IsZero() {
			if d := next.Sub(s.o.Now()); d < wait {
				wait = max(d, time.Millisecond)
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-w.poke:
		case <-t.C:
		}
		t.Stop()
	}
}

// maxPushInFlight bounds the push deliveries attempted at once: far more
// than the devices of an installation's users (DefaultMaxPushDevices
// each), so that in practice every endpoint has its own.
const maxPushInFlight = 512

// workPush delivers the push rows, each due row at once on its own
// goroutine, until ctx ends: an endpoint that never answers holds its
// own row for the push timeout and nobody else's.
func (s *Service) workPush(ctx context.Context, w *worker) {
	var (
		mu       sync.Mutex
		inFlight = map[int64]bool{}
		wg       sync.WaitGroup
		ended    = make(chan struct{}, 1)
	)
	defer wg.Wait()
	for {
		mu.Lock()
		busy := len(inFlight)
		mu.Unlock()
		var next time.Time
		if busy < maxPushInFlight {
			ds, nt, err := s.st.due(ctx, w.name, s.o.Now(), maxPushInFlight)
			if err != nil && ctx.Err() == nil {
				s.log.Error("notificações: leitura da fila falhou", "receptor", w.name, "erro", err)
			}
			next = nt
			mu.Lock()
			for _, d := range ds {
				if inFlight[d.ID] || len(inFlight) >= maxPushInFlight {
					continue
				}
				inFlight[d.ID] = true
				wg.Go(func() {
					s.attempt(ctx, d)
					mu.Lock()
					delete(inFlight, d.ID)
					mu.Unlock()
					select {
					case ended <- struct{}{}:
					default:
					}
				})
			}
			mu.Unlock()
		}
		wait := s.o.Poll
		if !next.IsZero() {
			if d := next.Sub(s.o.Now()); d < wait {
				wait = max(d, time.Millisecond)
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-w.poke:
		case <-ended:
		case <-t.C:
		}
		t.Stop()
	}
}

// permanentError is a refusal that retrying cannot fix.
type permanentError struct{ error }

func (e permanentError) Unwrap() error { return e.error }

func permanent(err error) error { return permanentError{err} }

// backoff is the wait after the n-th failed attempt (1-based).
func (s *Service) backoff(n int) time.Duration {
	d := s.o.BackoffBase
	for i := 1; i < n && d < s.o.BackoffMax; i++ {
		d *= 2
	}
	return min(d, s.o.BackoffMax)
}

// attempt delivers one row and records the outcome.
func (s *Service) attempt(ctx context.Context, d delivery) {
	pol := s.policy.Load()
	send, timeout, err := s.sender(pol, d.Receiver)
	start := s.o.Now()
	if err == nil {
		actx, cancel := context.WithTimeout(ctx, timeout)
		err = send(actx, d)
		cancel()
		if err != nil && ctx.Err() != nil {
			return // shutting down: the row stays pending for the next start
		}
		if err != nil && errors.Is(err, context.DeadlineExceeded) {
			err = shown(fmt.Sprintf("sem resposta em %s", timeout), err)
		}
	}
	now := s.o.Now()
	n := d.Attempts + 1
	target := shortTarget(d.Receiver, d.Target)
	label := receiverLabel(d.Receiver)
	var status, detail string
	var kind notify.EntryKind
	next := now
	switch {
	case err == nil:
		status, kind = "sent", notify.EntrySent
		detail = fmt.Sprintf("entregue por %s a %s (%s)", label, d.User, target)
		if n > 1 {
			detail += fmt.Sprintf(", na tentativa %d", n)
		}
		s.m.deliveries.WithLabelValues(d.Receiver, "sent").Inc()
		s.m.latency.WithLabelValues(kindOf(d.Receiver)).Observe(now.Sub(d.ReceivedAt).Seconds())
		s.m.attemptTime.WithLabelValues(kindOf(d.Receiver)).Observe(now.Sub(start).Seconds())
		if s.sent != nil {
			s.sent(d.Receiver, now.Sub(d.ReceivedAt))
		}
	case errors.As(err, new(permanentError)) || n >= s.o.MaxAttempts:
		status, kind = "failed", notify.EntryFailed
		detail = fmt.Sprintf("falhou definitivamente por %s para %s (%s) após %d tentativa(s): %s", label, d.User, target, n, summary(err))
		s.m.deliveries.WithLabelValues(d.Receiver, "failed").Inc()
		s.log.Warn("notificação não entregue", "receptor", d.Receiver, "usuario", d.User, "tentativas", n, "erro", err)
	default:
		status, kind = "pending", notify.EntryRetry
		next = now.Add(s.backoff(n))
		detail = fmt.Sprintf("falhou por %s para %s (%s), tentativa %d: %s; nova tentativa às %s", label, d.User, target, n, summary(err),
			next.In(locOf(pol)).Format("15:04:05"))
		s.m.deliveries.WithLabelValues(d.Receiver, "retry").Inc()
		s.log.Info("notificação: nova tentativa agendada", "receptor", d.Receiver, "usuario", d.User, "tentativa", n, "erro", err)
	}
	var logs []notify.HistoryEntry
	for _, id := range d.AlertIDs {
		logs = append(logs, notify.HistoryEntry{Entry: notify.Entry{AlertID: id, At: now, Kind: kind, Notification: d.Notification,
			User: d.User, Detail: detail}, Receiver: d.Receiver, Target: target, Attempt: n})
	}
	errText := ""
	if err != nil {
		errText = err.Error()
	}
	if ferr := s.st.finish(context.WithoutCancel(ctx), d, status, next, errText, now, logs); ferr != nil {
		s.log.Error("notificações: resultado da entrega não gravado", "erro", ferr)
	}
}

// locOf is the zone retry times are told in: Brasília time (one zone
// for the whole installation's log lines).
func locOf(*notify.Policy) *time.Location { return tz.Brasilia() }

func kindOf(receiver string) string {
	if strings.HasPrefix(receiver, webhookPrefix) {
		return "webhook"
	}
	return receiver
}

type sendFunc func(ctx context.Context, d delivery) error

// sender returns how to deliver to a receiver under the current settings.
func (s *Service) sender(pol *notify.Policy, receiver string) (sendFunc, time.Duration, error) {
	if pol == nil {
		return nil, 0, permanent(shown("notificações sem configuração", nil))
	}
	set := pol.Settings
	switch {
	case receiver == ReceiverEmail:
		if !set.Email.Enabled {
			return nil, 0, permanent(shown("e-mail desativado nas configurações", nil))
		}
		e := set.Email
		return func(ctx context.Context, d delivery) error { return sendEmail(ctx, e, d.Payload) }, e.Timeout.D(), nil
	case receiver == ReceiverPush:
		if !set.Push.Enabled {
			return nil, 0, permanent(shown("push desativado nas configurações", nil))
		}
		p := set.Push
		return func(ctx context.Context, d delivery) error { return s.sendPush(ctx, p, d) }, p.Timeout.D(), nil
	case strings.HasPrefix(receiver, webhookPrefix):
		name := strings.TrimPrefix(receiver, webhookPrefix)
		for _, w := range set.Webhooks {
			if w.Name == name {
				return func(ctx context.Context, d delivery) error { return s.sendWebhook(ctx, w, d.Payload) }, w.Timeout.D(), nil
			}
		}
		return nil, 0, permanent(shown(fmt.Sprintf("webhook %q removido das configurações", name), nil))
	}
	return nil, 0, permanent(shown(fmt.Sprintf("receptor %q desconhecido", receiver), nil))
}

// ---- e-mail ------------------------------------------------------------

func buildMail(e notify.EmailSettings, p emailPayload) (*mail.Msg, error) {
	m := mail.NewMsg()
	if err := m.From(e.From); err != nil {
		return nil, permanent(shown(fmt.Sprintf("remetente %q inválido", e.From), err))
	}
	if err := m.To(p.To); err != nil {
		return nil, permanent(shown(fmt.Sprintf("destinatário %q inválido", p.To), err))
	}
	m.Subject(p.Subject)
	m.SetMessageIDWithValue(p.MessageID)
	m.SetDate()
	m.SetGenHeader(mail.Header("X-Sossego-Alertas"), strings.Join(p.Alerts, " "))
	m.SetBodyString(mail.TypeTextPlain, p.Text)
	if p.HTML != "" {
		m.AddAlternativeString(mail.TypeTextHTML, p.HTML)
	}
	return m, nil
}

func sendEmail(ctx context.Context, e notify.EmailSettings, payload []byte) error {
	var p emailPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return permanent(shown("mensagem ilegível na fila", err))
	}
	m, err := buildMail(e, p)
	if err != nil {
		return err
	}
	if e.Transport == "dir" {
		if err := os.MkdirAll(e.Dir, 0o750); err != nil {
			return fmt.Errorf("pasta de mensagens: %w", err)
		}
		name := filepath.Join(e.Dir, time.Now().UTC().Format("20060102T150405.000")+"-"+safeName(p.MessageID)+".eml")
		tmp := name + ".tmp"
		if err := m.WriteToFile(tmp); err != nil {
			return fmt.Errorf("gravar %s: %w", tmp, err)
		}
		return os.Rename(tmp, name)
	}
	opts := []mail.Option{mail.WithPort(e.Port), mail.WithTimeout(e.Timeout.D())}
	tc := &tls.Config{ServerName: e.Host, MinVersion: tls.VersionTLS12}
	if e.CAFile != "" {
		pem, err := os.ReadFile(e.CAFile)
		if err != nil {
			return permanent(shown("arquivo de certificados do SMTP ilegível", err))
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return permanent(shown("nenhum certificado no arquivo de certificados do SMTP", nil))
		}
		tc.RootCAs = pool
	}
	opts = append(opts, mail.WithTLSConfig(tc))
	switch e.Security {
	case "tls":
		opts = append(opts, mail.WithSSLPort(false))
	case "none":
		opts = append(opts, mail.WithTLSPolicy(mail.NoTLS))
	default:
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory))
	}
	if e.Username != "" {
		auth := mail.SMTPAuthAutoDiscover
		if e.Security == "none" {
			auth = mail.SMTPAuthPlainNoEnc
		}
		opts = append(opts, mail.WithSMTPAuth(auth), mail.WithUsername(e.Username), mail.WithPassword(e.Password))
	}
	c, err := mail.NewClient(e.Host, opts...)
	if err != nil {
		return permanent(fmt.Errorf("cliente SMTP: %w", err))
	}
	if err := c.DialAndSendWithContext(ctx, m); err != nil {
		var se *mail.SendError
		if errors.As(err, &se) && !se.IsTemp() && se.ErrorCode() >= 500 && se.ErrorCode() < 600 {
			return permanent(shown("servidor SMTP recusou", err))
		}
		return fmt.Errorf("SMTP %s:%d: %w", e.Host, e.Port, err)
	}
	return nil
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

// ---- webhook -----------------------------------------------------------

func (s *Service) sendWebhook(ctx context.Context, w notify.Webhook, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return permanent(shown("endereço do webhook inválido", err))
	}
	var p struct {
		Delivery string      `json:"delivery"`
		Type     notify.Type `json:"type"`
	}
	_ = json.Unmarshal(body, &p)
	now := s.o.Now()
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("User-Agent", "Sossego-Notificacoes/1")
	req.Header.Set(notify.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	req.Header.Set(notify.HeaderSignature, notify.Sign([]byte(w.Secret), now, body))
	req.Header.Set(notify.HeaderDelivery, p.Delivery)
	req.Header.Set(notify.HeaderEvent, string(p.Type))
	resp, err := s.httpClient().Do(req)
	if err != nil {
		return fmt.Errorf("webhook %s: %w", w.Name, scrubURL(err))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		return nil
	case c >= 300 && c < 400:
		return redirectRefusal("webhook "+w.Name, c)
	case c == http.StatusRequestTimeout || c == http.StatusTooManyRequests || c >= 500:
		return shown(fmt.Sprintf("webhook %s respondeu HTTP %d", w.Name, c), nil)
	default:
		return permanent(shown(fmt.Sprintf("webhook %s recusou: HTTP %d", w.Name, c), nil))
	}
}

// scrubURL drops the URL (it may carry a token) from a client error.
func scrubURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// ---- push --------------------------------------------------------------

func (s *Service) sendPush(ctx context.Context, p notify.PushSettings, d delivery) error {
	sub, ok, err := s.st.pushSub(ctx, d.Target)
	if err != nil {
		return err
	}
	if !ok {
		return permanent(shown("aparelho não está mais inscrito", nil))
	}
	if !s.o.AllowInternalPush {
		if err := checkPushHost(sub.Sub.Endpoint); err != nil {
			return permanent(err)
		}
	}
	subject := strings.TrimPrefix(p.Subject, "mailto:")
	if subject == "" {
		subject = "sossego@localhost"
	}
	ws := &webpush.Subscription{Endpoint: sub.Sub.Endpoint, Keys: webpush.Keys{Auth: sub.Sub.Keys.Auth, P256dh: sub.Sub.Keys.P256dh}}
	resp, err := webpush.SendNotificationWithContext(ctx, d.Payload, ws, &webpush.Options{
		HTTPClient: s.pushClient(), Subscriber: subject, TTL: 3600, Urgency: webpush.UrgencyHigh,
		VAPIDPublicKey: s.vapidPub, VAPIDPrivateKey: s.vapidPriv, Topic: topicOf(d.Notification)})
	if err != nil {
		if errors.Is(err, errPrivatePush) {
			return permanent(errPrivatePush)
		}
		return fmt.Errorf("push: %w", scrubURL(err))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		return nil
	case c >= 300 && c < 400:
		return redirectRefusal("o serviço de push", c)
	case c == http.StatusNotFound || c == http.StatusGone:
		if _, err := s.st.db.ExecContext(ctx, `DELETE FROM notify_push_subscriptions WHERE endpoint = ?`, d.Target); err != nil {
			return err
		}
		return permanent(shown(fmt.Sprintf("o serviço de push respondeu HTTP %d: inscrição expirada, removida", c), nil))
	case c == http.StatusTooManyRequests || c >= 500:
		return shown(fmt.Sprintf("serviço de push respondeu HTTP %d", c), nil)
	default:
		return permanent(shown(fmt.Sprintf("serviço de push recusou: HTTP %d", c), nil))
	}
}

// topicOf makes a push Topic (≤ 32 URL-safe characters) so that a phone
// offline gets the newest message of a notification, not every retry.
func topicOf(id string) string {
	t := safeName(id)
	if len(t) > 32 {
		t = t[:32]
	}
	return strings.ReplaceAll(t, ".", "_")
}

package notify

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/notify"
	"github.com/sossego/sossego/internal/tz"
)

// The errors callers branch on.
var (
	ErrFileManaged = notify.ErrFileManaged // PutSettings when the settings come from a file
	ErrNotFound    = notify.ErrNotFound    // an unknown silence or subscription
)

// loadSettings reads the settings from the file or the database.
func (s *Service) loadSettings(ctx context.Context) error {
	if s.o.ConfigFile != "" {
		set, mod, err := readFile(s.o.ConfigFile)
		if err != nil {
			return fmt.Errorf("notify: %s: %w", s.o.ConfigFile, err)
		}
		users, err := s.o.Users(ctx)
		if err != nil {
			return fmt.Errorf("notify: users: %w", err)
		}
		pol, err := notify.Validate(set, users, tz.Load)
		if err != nil {
			return fmt.Errorf("notify: %s: %w", s.o.ConfigFile, err)
		}
		s.apply(pol, set)
		s.fileMod = mod
		return nil
	}
	var set notify.Settings
	ok, err := s.st.getKV(ctx, "settings", &set)
	if err != nil {
		return err
	}
	if !ok && s.o.Defaults != nil {
		set = *s.o.Defaults
	}
	pol, err := notify.Compile(set, tz.Load)
	if err != nil {
		// Stored settings that no longer compile (a zone vanished from
		// tzdata…) must not stop the service: run without them and say so.
		s.log.Error("notificações: configuração salva inválida; notificações desativadas até ser corrigida no painel", "erro", err)
		pol, _ = notify.Compile(notify.Settings{}, tz.Load)
	}
	s.apply(pol, set)
	return nil
}

func (s *Service) apply(pol *notify.Policy, set notify.Settings) {
	s.setMu.Lock()
	s.settings = pol.Settings
	s.setMu.Unlock()
	s.policy.Store(pol)
	s.syncWorkers()
	s.poke()
}

// readFile parses the settings file and reads the secret files it names.
func readFile(path string) (notify.Settings, time.Time, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return notify.Settings{}, time.Time{}, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return notify.Settings{}, time.Time{}, err
	}
	set, err := notify.ParseSettingsYAML(b)
	if err != nil {
		return notify.Settings{}, time.Time{}, err
	}
	if f := set.Email.PasswordFile; f != "" {
		if set.Email.Password, err = envOr(f); err != nil {
			return notify.Settings{}, time.Time{}, fmt.Errorf("email.password_file: %w", err)
		}
	}
	for i := range set.Webhooks {
		if f := set.Webhooks[i].SecretFile; f != "" {
			if set.Webhooks[i].Secret, err = envOr(f); err != nil {
				return notify.Settings{}, time.Time{}, fmt.Errorf("webhook %s: secret_file: %w", set.Webhooks[i].Name, err)
			}
		}
	}
	return set, fi.ModTime(), nil
}

// watchFile reloads the settings file when it changes; a file that does
// not validate is refused (logged) and the settings in force stay.
func (s *Service) watchFile(ctx context.Context) error {
	t := time.NewTicker(max(s.o.Poll, 2*time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		fi, err := os.Stat(s.o.ConfigFile)
		if err != nil || fi.ModTime().Equal(s.fileMod) {
			continue
		}
		s.fileMod = fi.ModTime()
		set, _, err := readFile(s.o.ConfigFile)
		var pol *notify.Policy
		if err == nil {
			var users []notify.UserRef
			if users, err = s.o.Users(ctx); err == nil {
				pol, err = notify.Validate(set, users, tz.Load)
			}
		}
		if err != nil {
			s.log.Error("notificações: arquivo de configuração recusado; a configuração anterior continua", "arquivo", s.o.ConfigFile, "erro", err)
			continue
		}
		s.apply(pol, set)
		s.log.Info("notificações: configuração recarregada", "arquivo", s.o.ConfigFile)
	}
}

// Settings returns the settings in force without secrets, and the file
// they come from ("" when edited in the dashboard).
func (s *Service) Settings() (notify.Settings, string) {
	s.setMu.Lock()
	defer s.setMu.Unlock()
	return s.settings.Redacted(), s.o.ConfigFile
}

// PutSettings validates and stores new settings (secrets left empty keep
// the stored ones). The error is a *notify.ValidationError for bad input.
func (s *Service) PutSettings(ctx context.Context, set notify.Settings, by string) (notify.Settings, error) {
	if s.o.ConfigFile != "" {
		return notify.Settings{}, ErrFileManaged
	}
	s.setMu.Lock()
	old := s.settings
	s.setMu.Unlock()
	set.KeepSecrets(old)
	users, err := s.o.Users(ctx)
	if err != nil {
		return notify.Settings{}, fmt.Errorf("notify: users: %w", err)
	}
	pol, err := notify.Validate(set, users, tz.Load)
	if err != nil {
		return notify.Settings{}, err
	}
	now := s.o.Now()
	err = s.st.tx(ctx, func(tx *sql.Tx) error {
		if err := putKV(ctx, tx, "settings", pol.Settings, now); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO notify_settings_audit (at, by, detail) VALUES (?, ?, ?)`, ms(now), by, changeSummary(old, pol.Settings))
		return err
	})
	if err != nil {
		return notify.Settings{}, fmt.Errorf("notify: save settings: %w", err)
	}
	s.apply(pol, pol.Settings)
	s.log.Info("notificações: configuração alterada", "por", by)
	return pol.Settings.Redacted(), nil
}

// changeSummary says what changed, without secrets.
func changeSummary(old, cur notify.Settings) string {
	var parts []string
	if old.Email.Password != cur.Email.Password {
		parts = append(parts, "senha SMTP alterada")
	}
	o, c := old.Redacted(), cur.Redacted()
	o.Email.PasswordSet, c.Email.PasswordSet = false, false
	if fmt.Sprint(o.Email) != fmt.Sprint(c.Email) {
		parts = append(parts, "e-mail")
	}
	if fmt.Sprint(o.Webhooks) != fmt.Sprint(c.Webhooks) || len(old.Webhooks) != len(cur.Webhooks) {
		parts = append(parts, "webhooks")
	}
	if fmt.Sprint(o.Push) != fmt.Sprint(c.Push) {
		parts = append(parts, "push")
	}
	if fmt.Sprint(o.Municipalities) != fmt.Sprint(c.Municipalities) {
		parts = append(parts, "escalas")
	}
	if fmt.Sprint(o.Contacts) != fmt.Sprint(c.Contacts) {
		parts = append(parts, "contatos")
	}
	if fmt.Sprint(o.Grouping) != fmt.Sprint(c.Grouping) || o.PublicURL != c.PublicURL {
		parts = append(parts, "geral")
	}
	if len(parts) == 0 {
		return "salvo sem mudanças"
	}
	return "alterado: " + strings.Join(parts, ", ")
}

// OnDuty returns who is on duty now in every municipality, with the
// register's municipalities that have no schedule.
func (s *Service) OnDuty(now time.Time) []notify.Duty {
	pol := s.policy.Load()
	seen := map[string]bool{}
	var out []notify.Duty
	if pol != nil {
		for _, m := range pol.Settings.Municipalities {
			_, loc, _ := pol.Municipality(m.ID)
			out = append(out, notify.OnDuty(m, loc, now))
			seen[m.ID] = true
		}
	}
	if s.o.Municipalities != nil {
		for _, m := range s.o.Municipalities() {
			if !seen[m] {
				seen[m] = true
				out = append(out, notify.Duty{Municipality: m, Users: []string{}})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Municipality < out[j].Municipality })
	return out
}

// History returns an alert's notification history.
func (s *Service) History(ctx context.Context, alertID string) ([]notify.HistoryEntry, error) {
	return s.st.history(ctx, alertID)
}

// Silences returns the silences that end after since (active, future and
// recent), newest first, and the audit trail.
func (s *Service) Silences(ctx context.Context, since time.Time) ([]notify.Silence, []notify.SilenceAudit, error) {
	list, err := s.st.silences(ctx, since)
	if err != nil {
		return nil, nil, err
	}
	slices.Reverse(list)
	audit, err := s.st.silenceAudit(ctx)
	return list, audit, err
}

// CreateSilence validates and stores a silence (audited) and applies it.
func (s *Service) CreateSilence(ctx context.Context, sl notify.Silence, by string) (notify.Silence, error) {
	now := s.o.Now()
	if sl.Starts.IsZero() {
		sl.Starts = now
	}
	sl.Reason = strings.TrimSpace(sl.Reason)
	if err := notify.CheckSilence(sl, now); err != nil {
		return notify.Silence{}, err
	}
	sl.ID, sl.CreatedBy, sl.CreatedAt, sl.EndedBy, sl.EndedAt = randomID("sil-"), by, now, "", time.Time{}
	sl.Starts, sl.Ends = sl.Starts.UTC(), sl.Ends.UTC()
	err := s.st.tx(ctx, func(tx *sql.Tx) error {
		if err := putSilence(ctx, tx, sl); err != nil {
			return err
		}
		return auditSilence(ctx, tx, notify.SilenceAudit{SilenceID: sl.ID, At: now, Action: "created", By: by,
			Detail: fmt.Sprintf("%s silenciado de %s a %s: %s", sl.Target(), sl.Starts.Format(time.RFC3339), sl.Ends.Format(time.RFC3339), sl.Reason)})
	})
	if err != nil {
		return notify.Silence{}, err
	}
	if err := s.refreshSilences(ctx); err != nil {
		return sl, err
	}
	s.poke()
	return sl, nil
}

// EndSilence ends a silence now (audited).
func (s *Service) EndSilence(ctx context.Context, id, by string) (notify.Silence, error) {
	now := s.o.Now()
	list, err := s.st.silences(ctx, time.Time{})
	if err != nil {
		return notify.Silence{}, err
	}
	i := slices.IndexFunc(list, func(x notify.Silence) bool { return x.ID == id })
	if i < 0 {
		return notify.Silence{}, fmt.Errorf("silêncio %q: %w", id, ErrNotFound)
	}
	sl := list[i]
	if !sl.End().After(now) {
		return sl, nil // already over
	}
	sl.EndedBy, sl.EndedAt = by, now
	err = s.st.tx(ctx, func(tx *sql.Tx) error {
		if err := putSilence(ctx, tx, sl); err != nil {
			return err
		}
		return auditSilence(ctx, tx, notify.SilenceAudit{SilenceID: sl.ID, At: now, Action: "ended", By: by,
			Detail: "silêncio encerrado antes do fim previsto"})
	})
	if err != nil {
		return notify.Silence{}, err
	}
	if err := s.refreshSilences(ctx); err != nil {
		return sl, err
	}
	s.poke()
	return sl, nil
}

// PushKey is the VAPID public key browsers subscribe with.
func (s *Service) PushKey() string { return s.vapidPub }

// PushEnabled reports whether push is on.
func (s *Service) PushEnabled() bool {
	pol := s.policy.Load()
	return pol != nil && pol.Settings.Push.Enabled
}

// Subscribe stores a browser's push subscription for user: a valid
// subscription to a public push service, within the user's device cap
// (guard.go).
func (s *Service) Subscribe(ctx context.Context, user string, sub notify.PushSubscription) error {
	if err := notify.CheckPushSubscription(sub); err != nil {
		return &notify.ValidationError{Problems: []string{err.Error()}}
	}
	if !s.o.AllowInternalPush {
		if err := checkPushHost(sub.Endpoint); err != nil {
			return &notify.ValidationError{Problems: []string{err.Error()}}
		}
	}
	return s.st.tx(ctx, func(tx *sql.Tx) error {
		if err := s.checkDeviceCap(ctx, tx, user, sub.Endpoint); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO notify_push_subscriptions (endpoint, user, p256dh, auth, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (endpoint) DO UPDATE SET user = excluded.user, p256dh = excluded.p256dh, auth = excluded.auth`,
			sub.Endpoint, user, sub.Keys.P256dh, sub.Keys.Auth, ms(s.o.Now()))
		if err != nil {
			return fmt.Errorf("notify: subscribe: %w", err)
		}
		return nil
	})
}

// Unsubscribe removes a subscription of user.
func (s *Service) Unsubscribe(ctx context.Context, user, endpoint string) error {
	res, err := s.st.db.ExecContext(ctx, `DELETE FROM notify_push_subscriptions WHERE endpoint = ? AND user = ?`, endpoint, user)
	if err != nil {
		return fmt.Errorf("notify: unsubscribe: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("inscrição: %w", ErrNotFound)
	}
	return nil
}

// Devices counts a user's push subscriptions.
func (s *Service) Devices(ctx context.Context, user string) (int, error) {
	subs, err := s.st.pushSubs(ctx, user)
	return len(subs), err
}

// Test sends a test message to user through one receiver now and waits for
// the outcome (the settings page's button). receiver is email, push or
// webhook:<name>.
func (s *Service) Test(ctx context.Context, receiver, user string) error {
	pol := s.policy.Load()
	if pol == nil {
		return errors.New("notificações sem configuração")
	}
	now := s.o.Now()
	n := notify.Notification{ID: randomID("teste-"), Type: notify.TypeTest, User: user, At: now, ReceivedAt: now,
		Alerts: []alerts.Alert{}}
	msg := notify.Render(n, s.renderContext(pol, ""))
	contact, _ := pol.Contact(user)
	send, timeout, err := s.sender(pol, receiver)
	if err != nil {
		return err
	}
	var targets []delivery
	switch {
	case receiver == ReceiverEmail:
		if contact.Email == "" {
			return fmt.Errorf("%s não tem e-mail cadastrado nos contatos", user)
		}
		p := emailPayload{To: contact.Email, Subject: msg.Subject, Text: msg.Text, HTML: msg.HTML, MessageID: n.ID + "@" + hostOf(pol.Settings.Email.From)}
		b, _ := jsonMarshal(p)
		targets = append(targets, delivery{Receiver: receiver, Target: contact.Email, User: user, Payload: b})
	case receiver == ReceiverPush:
		subs, err := s.st.pushSubs(ctx, user)
		if err != nil {
			return err
		}
		if len(subs) == 0 {
			return fmt.Errorf("%s não tem aparelho inscrito: ative o push no painel, no aparelho", user)
		}
		b, _ := jsonMarshal(pushPayload{Title: "Sossego — teste", Body: msg.Short, Tag: "teste"})
		for _, sub := range subs {
			targets = append(targets, delivery{Notification: n.ID, Receiver: receiver, Target: sub.Endpoint, User: user, Payload: b})
		}
	default:
		pl := notify.BuildWebhook(n.ID, n, msg, notify.WebhookRecipient{User: user, Email: contact.Email, Phone: contact.Phone}, s.renderContext(pol, ""))
		b, err := pl.Marshal()
		if err != nil {
			return err
		}
		targets = append(targets, delivery{Receiver: receiver, Target: receiver, User: user, Payload: b})
	}
	var errs []error
	for _, d := range targets {
		tctx, cancel := context.WithTimeout(ctx, timeout)
		err := send(tctx, d)
		cancel()
		outcome := "sent"
		if err != nil {
			outcome = "failed"
			errs = append(errs, err)
		}
		s.m.deliveries.WithLabelValues(receiver, "test_"+outcome).Inc()
	}
	return errors.Join(errs...)
}

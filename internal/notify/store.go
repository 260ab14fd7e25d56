package notify

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sossego/sossego/alerts/notify"
	"github.com/sossego/sossego/internal/sqlitedb"
)

// FileName is the notification database inside the service's data dir.
const FileName = "notify.db"

// store is the notification database: settings, the engine's state, the
// durable outbox of deliveries, every alert's notification history,
// silences with their audit trail, and Web Push subscriptions.
type store struct {
	db *sql.DB
}

// migrations are the schema's steps (recorded in notify_migrations).
// Append, never edit, once released.
var migrations = []sqlitedb.Step{
	{Name: "notifications: settings, engine state, outbox, history, silences, push subscriptions", SQL: `
CREATE TABLE notify_kv (
	key        TEXT PRIMARY KEY, -- settings | state | vapid
	value      TEXT NOT NULL,
	updated_at INTEGER NOT NULL
) STRICT;
CREATE TABLE notify_outbox (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	notification TEXT NOT NULL,
	receiver     TEXT NOT NULL,   -- email | webhook:<name> | push
	target       TEXT NOT NULL,   -- address | webhook name | push endpoint
	user         TEXT NOT NULL,
	alert_ids    TEXT NOT NULL,   -- JSON array
	payload      TEXT NOT NULL,   -- what the receiver sends (JSON)
	status       TEXT NOT NULL,   -- pending | sent | failed
	attempts     INTEGER NOT NULL DEFAULT 0,
	next_at      INTEGER NOT NULL, -- unix ms
	last_error   TEXT NOT NULL DEFAULT '',
	received_at  INTEGER NOT NULL, -- when the first alert of it was received (latency)
	created_at   INTEGER NOT NULL,
	sent_at      INTEGER,
	UNIQUE (notification, receiver, target)
) STRICT;
CREATE INDEX notify_outbox_due ON notify_outbox(status, receiver, next_at);
CREATE TABLE notify_log (
	seq          INTEGER PRIMARY KEY AUTOINCREMENT,
	alert_id     TEXT NOT NULL,
	at           INTEGER NOT NULL,
	kind         TEXT NOT NULL,
	notification TEXT NOT NULL DEFAULT '',
	user         TEXT NOT NULL DEFAULT '',
	receiver     TEXT NOT NULL DEFAULT '',
	target       TEXT NOT NULL DEFAULT '',
	attempt      INTEGER NOT NULL DEFAULT 0,
	detail       TEXT NOT NULL
) STRICT;
CREATE INDEX notify_log_by_alert ON notify_log(alert_id, seq);
CREATE TABLE notify_silences (
	id         TEXT PRIMARY KEY,
	body       TEXT NOT NULL, -- JSON notify.Silence
	ends       INTEGER NOT NULL,
	created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX notify_silences_by_end ON notify_silences(ends);
CREATE TABLE notify_silence_audit (
	seq        INTEGER PRIMARY KEY AUTOINCREMENT,
	silence_id TEXT NOT NULL,
	at         INTEGER NOT NULL,
	action     TEXT NOT NULL, -- created | ended | expired
	by         TEXT NOT NULL DEFAULT '',
	detail     TEXT NOT NULL,
	UNIQUE (silence_id, action)
) STRICT;
CREATE TABLE notify_push_subscriptions (
	endpoint   TEXT PRIMARY KEY,
	user       TEXT NOT NULL,
	p256dh     TEXT NOT NULL,
	auth       TEXT NOT NULL,
	created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX notify_push_by_user ON notify_push_subscriptions(user);
CREATE TABLE notify_settings_audit (
	seq    INTEGER PRIMARY KEY AUTOINCREMENT,
	at     INTEGER NOT NULL,
	by     TEXT NOT NULL,
	detail TEXT NOT NULL
) STRICT;
`},
}

func openStore(ctx context.Context, path string) (*store, error) {
	db, err := sqlitedb.OpenMigrated(ctx, path, sqlitedb.Options{MaxOpenConns: 4}, sqlitedb.Scheme{Table: "notify_migrations"}, migrations)
	if err != nil {
		return nil, fmt.Errorf("notify: %w", err)
	}
	return &store{db: db}, nil
}

func (s *store) close() error { return s.db.Close() }

func (s *store) tx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func putKV(ctx context.Context, e execer, key string, v any, now time.Time) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("notify: encode %s: %w", key, err)
	}
	_, err = e.ExecContext(ctx, `INSERT INTO notify_kv (key, value, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`, key, string(b), ms(now))
	if err != nil {
		return fmt.Errorf("notify: save %s: %w", key, err)
	}
	return nil
}

// getKV decodes key into v; ok is false when it is not stored.
func (s *store) getKV(ctx context.Context, key string, v any) (bool, error) {
	var js string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM notify_kv WHERE key = ?`, key).Scan(&js)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("notify: load %s: %w", key, err)
	}
	if err := json.Unmarshal([]byte(js), v); err != nil {
		return false, fmt.Errorf("notify: decode %s: %w", key, err)
	}
	return true, nil
}

// delivery is one row of the outbox.
type delivery struct {
	ID           int64
	Notification string
	Receiver     string
	Target       string
	User         string
	AlertIDs     []string
	Payload      []byte
	Attempts     int
	NextAt       time.Time
	ReceivedAt   time.Time
}

func insertLog(ctx context.Context, e execer, h notify.HistoryEntry) error {
	_, err := e.ExecContext(ctx, `INSERT INTO notify_log (alert_id, at, kind, notification, user, receiver, target, attempt, detail)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, h.AlertID, ms(h.At), string(h.Kind), h.Notification, h.User, h.Receiver, h.Target,
		h.Attempt, h.Detail)
	if err != nil {
		return fmt.Errorf("notify: history of %s: %w", h.AlertID, err)
	}
	return nil
}

func (s *store) history(ctx context.Context, alertID string) ([]notify.HistoryEntry, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT alert_id, at, kind, notification, user, receiver, target, attempt, detail
		FROM notify_log WHERE alert_id = ? ORDER BY seq`, alertID)
	if err != nil {
		return nil, fmt.Errorf("notify: history: %w", err)
	}
	defer rows.Close()
	out := []notify.HistoryEntry{}
	for rows.Next() {
		var h notify.HistoryEntry
		var at int64
		var kind string
		if err := rows.Scan(&h.AlertID, &at, &kind, &h.Notification, &h.User, &h.Receiver, &h.Target, &h.Attempt, &h.Detail); err != nil {
			return nil, fmt.Errorf("notify: history: %w", err)
		}
		h.At, h.Kind = fromMS(at), notify.EntryKind(kind)
		out = append(out, h)
	}
	return out, rows.Err()
}

// due returns up to limit pending deliveries of a receiver due at now,
// and the instant of the next one not yet due (zero: none).
func (s *store) due(ctx context.Context, receiver string, now time.Time, limit int) ([]delivery, time.Time, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, notification, receiver, target, user, alert_ids, payload, attempts, next_at, received_at
		FROM notify_outbox WHERE status = 'pending' AND receiver = ? AND next_at <= ? ORDER BY next_at, id LIMIT ?`,
		receiver, ms(now), limit)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("notify: outbox: %w", err)
	}
	defer rows.Close()
	var out []delivery
	for rows.Next() {
		var d delivery
		var ids, payload string
		var next, recv int64
		if err := rows.Scan(&d.ID, &d.Notification, &d.Receiver, &d.Target, &d.User, &ids, &payload, &d.Attempts, &next, &recv); err != nil {
			return nil, time.Time{}, fmt.Errorf("notify: outbox: %w", err)
		}
		if err := json.Unmarshal([]byte(ids), &d.AlertIDs); err != nil {
			return nil, time.Time{}, fmt.Errorf("notify: outbox row %d: %w", d.ID, err)
		}
		d.Payload, d.NextAt, d.ReceivedAt = []byte(payload), fromMS(next), fromMS(recv)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, time.Time{}, fmt.Errorf("notify: outbox: %w", err)
	}
	var next sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT min(next_at) FROM notify_outbox WHERE status = 'pending' AND receiver = ? AND next_at > ?`,
		receiver, ms(now)).Scan(&next); err != nil {
		return nil, time.Time{}, fmt.Errorf("notify: outbox: %w", err)
	}
	var nt time.Time
	if next.Valid {
		nt = fromMS(next.Int64)
	}
	return out, nt, nil
}

// finish records one attempt's outcome and its history lines in one
// transaction. status is pending (retry at next), sent or failed.
func (s *store) finish(ctx context.Context, d delivery, status string, next time.Time, errText string, now time.Time, logs []notify.HistoryEntry) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var sent any
		if status == "sent" {
			sent = ms(now)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE notify_outbox SET status = ?, attempts = attempts + 1, next_at = ?, last_error = ?, sent_at = ?
			WHERE id = ?`, status, ms(next), errText, sent, d.ID); err != nil {
			return fmt.Errorf("notify: outbox row %d: %w", d.ID, err)
		}
		for _, h := range logs {
			if err := insertLog(ctx, tx, h); err != nil {
				return err
			}
		}
		return nil
	})
}

// pendingCounts returns the pending deliveries per receiver.
func (s *store) pendingCounts(ctx context.Context) (map[string]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT receiver, count(*) FROM notify_outbox WHERE status = 'pending' GROUP BY receiver`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var r string
		var n int
		if err := rows.Scan(&r, &n); err != nil {
			return nil, err
		}
		out[r] = n
	}
	return out, rows.Err()
}

func (s *store) silences(ctx context.Context, since time.Time) ([]notify.Silence, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT body FROM notify_silences WHERE ends >= ? ORDER BY created_at, id`, ms(since))
	if err != nil {
		return nil, fmt.Errorf("notify: silences: %w", err)
	}
	defer rows.Close()
	out := []notify.Silence{}
	for rows.Next() {
		var js string
		if err := rows.Scan(&js); err != nil {
			return nil, fmt.Errorf("notify: silences: %w", err)
		}
		var sl notify.Silence
		if err := json.Unmarshal([]byte(js), &sl); err != nil {
			return nil, fmt.Errorf("notify: silences: %w", err)
		}
		out = append(out, sl)
	}
	return out, rows.Err()
}

func putSilence(ctx context.Context, e execer, sl notify.Silence) error {
	b, err := json.Marshal(sl)
	if err != nil {
		return err
	}
	_, err = e.ExecContext(ctx, `INSERT INTO notify_silences (id, body, ends, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET body = excluded.body, ends = excluded.ends`, sl.ID, string(b), ms(sl.End()), ms(sl.CreatedAt))
	if err != nil {
		return fmt.Errorf("notify: save silence %s: %w", sl.ID, err)
	}
	return nil
}

func auditSilence(ctx context.Context, e execer, a notify.SilenceAudit) error {
	_, err := e.ExecContext(ctx, `INSERT INTO notify_silence_audit (silence_id, at, action, by, detail) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (silence_id, action) DO NOTHING`, a.SilenceID, ms(a.At), a.Action, a.By, a.Detail)
	if err != nil {
		return fmt.Errorf("notify: silence audit: %w", err)
	}
	return nil
}

func (s *store) silenceAudit(ctx context.Context) ([]notify.SilenceAudit, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT silence_id, at, action, by, detail FROM notify_silence_audit ORDER BY seq DESC LIMIT 500`)
	if err != nil {
		return nil, fmt.Errorf("notify: silence audit: %w", err)
	}
	defer rows.Close()
	out := []notify.SilenceAudit{}
	for rows.Next() {
		var a notify.SilenceAudit
		var at int64
		if err := rows.Scan(&a.SilenceID, &at, &a.Action, &a.By, &a.Detail); err != nil {
			return nil, err
		}
		a.At = fromMS(at)
		out = append(out, a)
	}
	return out, rows.Err()
}

type pushSub struct {
	User string
	Sub  notify.PushSubscription
}

func (s *store) pushSubs(ctx context.Context, user string) ([]notify.PushSubscription, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT endpoint, p256dh, auth FROM notify_push_subscriptions WHERE user = ? ORDER BY created_at`, user)
	if err != nil {
		return nil, fmt.Errorf("notify: push subscriptions: %w", err)
	}
	defer rows.Close()
	var out []notify.PushSubscription
	for rows.Next() {
		var p notify.PushSubscription
		if err := rows.Scan(&p.Endpoint, &p.Keys.P256dh, &p.Keys.Auth); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

func (s *store) pushSub(ctx context.Context, endpoint string) (pushSub, bool, error) {
	var p pushSub
	err := s.db.QueryRowContext(ctx, `SELECT user, endpoint, p256dh, auth FROM notify_push_subscriptions WHERE endpoint = ?`, endpoint).
		Scan(&p.User, &p.Sub.Endpoint, &p.Sub.Keys.P256dh, &p.Sub.Keys.Auth)
	if errors.Is(err, sql.ErrNoRows) {
		return p, false, nil
	}
	return p, err == nil, err
}

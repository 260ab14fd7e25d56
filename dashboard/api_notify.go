package dashboard

// Notification routes (docs/notifications.md):
//
//	GET    /api/v1/notify/on-duty                    every role: who is on duty now, per municipality
//	GET    /api/v1/notify/settings                   admin: settings without secrets, users, source
//	PUT    /api/v1/notify/settings                   admin: replace them (validated; empty secrets kept)
//	POST   /api/v1/notify/test                       admin: {"receiver","user"}: send a test message now
//	GET    /api/v1/notify/silences                   every role: silences and their audit trail
//	POST   /api/v1/notify/silences                   operador, fiscal: {"sensor"|"establishment","starts","ends"|"minutes","reason"}
//	POST   /api/v1/notify/silences/{id}/end          operador, fiscal: end a silence now
//	GET    /api/v1/alerts/{id}/notifications         every role: the alert's notification history
//	GET    /api/v1/notify/push                       every role: push on?, VAPID key, this user's devices
//	POST   /api/v1/notify/push/subscriptions         every role: this browser's push subscription
//	DELETE /api/v1/notify/push/subscriptions         every role: {"endpoint"}

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/sossego/sossego/alerts/notify"
	"github.com/sossego/sossego/internal/users"
)

// NotifySettings are the notification settings, who is on duty and the
// test message (internal/notify's Service).
type NotifySettings interface {
	Settings() (notify.Settings, string)
	PutSettings(ctx context.Context, s notify.Settings, by string) (notify.Settings, error)
	OnDuty(now time.Time) []notify.Duty
	Test(ctx context.Context, receiver, user string) error
}

// NotifySilences are the silences and an alert's notification history
// (internal/notify's Service).
type NotifySilences interface {
	History(ctx context.Context, alertID string) ([]notify.HistoryEntry, error)
	Silences(ctx context.Context, since time.Time) ([]notify.Silence, []notify.SilenceAudit, error)
	CreateSilence(ctx context.Context, s notify.Silence, by string) (notify.Silence, error)
	EndSilence(ctx context.Context, id, by string) (notify.Silence, error)
}

// NotifyPush is Web Push: the service's key and the users' subscriptions
// (internal/notify's Service).
type NotifyPush interface {
	PushKey() string
	PushEnabled() bool
	Subscribe(ctx context.Context, user string, sub notify.PushSubscription) error
	Unsubscribe(ctx context.Context, user, endpoint string) error
	Devices(ctx context.Context, user string) (int, error)
}

// NotifyOptions configure the notification routes; internal/notify's
// Service is all three of Settings, Silences and Push.
type NotifyOptions struct {
	Settings NotifySettings
	Silences NotifySilences
	Push     NotifyPush
	Registry APIRegistry // sensors and establishments a silence may name
	// Users lists the dashboard's users for the schedule editor.
	Users func(ctx context.Context) ([]users.User, error)
	Now   func() time.Time
	Log   *slog.Logger
}

// NotifyAPI serves the notification routes.
type NotifyAPI struct{ o NotifyOptions }

// NewNotifyAPI returns the routes.
func NewNotifyAPI(o NotifyOptions) *NotifyAPI {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &NotifyAPI{o: o}
}

func (n *NotifyAPI) internal(w http.ResponseWriter, err error) {
	serverError(w, n.o.Log, "notificações", err)
}

// invalid answers 400 with every problem.
func invalid(w http.ResponseWriter, err error) bool {
	var ve *notify.ValidationError
	if !errors.As(err, &ve) {
		return false
	}
	apiProblems(w, http.StatusBadRequest, "corrija: "+strings.Join(ve.Problems, "; "), ve.Problems)
	return true
}

func sessionUser(r *http.Request) users.User {
	s, _ := SessionFrom(r.Context())
	return s.User
}

func (n *NotifyAPI) onDuty(w http.ResponseWriter, r *http.Request) {
	now := n.o.Now()
	apiJSON(w, http.StatusOK, map[string]any{"now": now.UTC(), "on_duty": n.o.Settings.OnDuty(now)})
}

type settingsView struct {
	Settings notify.Settings `json:"settings"`
	// Source is the configuration file the settings come from; "" when
	// they are edited here.
	Source string     `json:"source,omitempty"`
	Users  []userView `json:"users"`
}

type userView struct {
	Name string     `json:"name"`
	Role users.Role `json:"role"`
}

func (n *NotifyAPI) settingsView(ctx context.Context, s notify.Settings, src string) (settingsView, error) {
	v := settingsView{Settings: s, Source: src, Users: []userView{}}
	if n.o.Users != nil {
		list, err := n.o.Users(ctx)
		if err != nil {
			return v, err
		}
		for _, u := range list {
			if !u.Disabled {
				v.Users = append(v.Users, userView{u.Name, u.Role})
			}
		}
	}
	return v, nil
}

func (n *NotifyAPI) getSettings(w http.ResponseWriter, r *http.Request) {
	s, src := n.o.Settings.Settings()
	v, err := n.settingsView(r.Context(), s, src)
	if err != nil {
		n.internal(w, err)
		return
	}
	apiJSON(w, http.StatusOK, v)
}

func (n *NotifyAPI) putSettings(w http.ResponseWriter, r *http.Request) {
	var s notify.Settings
	if err := readJSON(w, r, 1<<20, jsonBody, &s); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	got, err := n.o.Settings.PutSettings(r.Context(), s, sessionUser(r).Name)
	switch {
	case errors.Is(err, notify.ErrFileManaged):
		_, src := n.o.Settings.Settings()
		apiError(w, http.StatusConflict, "as configurações de notificação vêm do arquivo "+src+": edite o arquivo (ele é recarregado sozinho)")
		return
	case invalid(w, err):
		return
	case err != nil:
		n.internal(w, err)
		return
	}
	_, src := n.o.Settings.Settings()
	v, err := n.settingsView(r.Context(), got, src)
	if err != nil {
		n.internal(w, err)
		return
	}
	apiJSON(w, http.StatusOK, v)
}

func (n *NotifyAPI) test(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Receiver string `json:"receiver"`
		User     string `json:"user"`
	}
	if err := readJSON(w, r, 4096, jsonBody, &req); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	if req.User == "" {
		req.User = sessionUser(r).Name
	}
	if req.Receiver != "email" && req.Receiver != "push" && !strings.HasPrefix(req.Receiver, "webhook:") {
		apiError(w, http.StatusBadRequest, "receptor inválido: use email, push ou webhook:<nome>")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Minute)
	defer cancel()
	if err := n.o.Settings.Test(ctx, req.Receiver, req.User); err != nil {
		apiJSON(w, http.StatusBadGateway, map[string]any{"ok": false, "erro": "o teste falhou: " + err.Error()})
		return
	}
	apiJSON(w, http.StatusOK, map[string]any{"ok": true, "mensagem": "mensagem de teste entregue ao receptor"})
}

func (n *NotifyAPI) silences(w http.ResponseWriter, r *http.Request) {
	list, audit, err := n.o.Silences.Silences(r.Context(), n.o.Now().Add(-7*24*time.Hour))
	if err != nil {
		n.internal(w, err)
		return
	}
	now := n.o.Now()
	type view struct {
		notify.Silence
		Active bool `json:"active"`
	}
	out := make([]view, len(list))
	for i, s := range list {
		out[i] = view{s, s.ActiveAt(now)}
	}
	apiJSON(w, http.StatusOK, map[string]any{"silences": out, "audit": audit})
}

// SilenceRequest is the body of POST /api/v1/notify/silences.
type SilenceRequest struct {
	Sensor        string    `json:"sensor,omitempty"`
	Establishment string    `json:"establishment,omitempty"`
	Starts        time.Time `json:"starts,omitzero"` // default now
	Ends          time.Time `json:"ends,omitzero"`
	Minutes       int       `json:"minutes,omitempty"` // instead of ends: duration from starts
	Reason        string    `json:"reason"`
}

// silenceFrom checks a request against the register and returns the
// silence to create; the errors are pt-BR.
func (n *NotifyAPI) silenceFrom(req SilenceRequest, now time.Time) (notify.Silence, error) {
	s := notify.Silence{Sensor: strings.TrimSpace(req.Sensor), Establishment: strings.TrimSpace(req.Establishment),
		Starts: req.Starts, Ends: req.Ends, Reason: req.Reason}
	if s.Starts.IsZero() {
		s.Starts = now
	}
	if req.Minutes != 0 {
		if !req.Ends.IsZero() {
			return s, &notify.ValidationError{Problems: []string{"informe o fim (ends) ou a duração (minutes), não os dois"}}
		}
		if req.Minutes < 0 || req.Minutes > int(notify.MaxSilence/time.Minute) {
			return s, &notify.ValidationError{Problems: []string{"duração inválida: de 1 minuto a 31 dias"}}
		}
		s.Ends = s.Starts.Add(time.Duration(req.Minutes) * time.Minute)
	}
	if n.o.Registry != nil {
		reg := n.o.Registry.Current()
		switch {
		case s.Sensor != "":
			sen, ok := reg.Sensor(s.Sensor)
			if !ok {
				return s, &notify.ValidationError{Problems: []string{fmt.Sprintf("sensor %q não está cadastrado", s.Sensor)}}
			}
			s.Municipality = sen.Municipality()
		case s.Establishment != "":
			found := false
			for _, sen := range reg.Sensors() {
				for _, e := range sen.Establishments {
					if e.Name == s.Establishment {
						found, s.Municipality = true, sen.Municipality()
					}
				}
			}
			if !found {
				return s, &notify.ValidationError{Problems: []string{fmt.Sprintf("estabelecimento %q não está cadastrado", s.Establishment)}}
			}
		}
	}
	return s, notify.CheckSilence(s, now)
}

func (n *NotifyAPI) createSilence(w http.ResponseWriter, r *http.Request) {
	var req SilenceRequest
	if err := readJSON(w, r, 8192, jsonBody, &req); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	s, err := n.silenceFrom(req, n.o.Now())
	if invalid(w, err) {
		return
	}
	s, err = n.o.Silences.CreateSilence(r.Context(), s, sessionUser(r).Name)
	if invalid(w, err) {
		return
	}
	if err != nil {
		n.internal(w, err)
		return
	}
	apiJSON(w, http.StatusCreated, s)
}

func (n *NotifyAPI) endSilence(w http.ResponseWriter, r *http.Request) {
	s, err := n.o.Silences.EndSilence(r.Context(), r.PathValue("id"), sessionUser(r).Name)
	if errors.Is(err, notify.ErrNotFound) {
		apiError(w, http.StatusNotFound, "silêncio "+r.PathValue("id")+" não existe")
		return
	}
	if err != nil {
		n.internal(w, err)
		return
	}
	apiJSON(w, http.StatusOK, s)
}

func (n *NotifyAPI) history(w http.ResponseWriter, r *http.Request) {
	hs, err := n.o.Silences.History(r.Context(), r.PathValue("id"))
	if err != nil {
		n.internal(w, err)
		return
	}
	apiJSON(w, http.StatusOK, map[string]any{"alert_id": r.PathValue("id"), "history": hs})
}

func (n *NotifyAPI) push(w http.ResponseWriter, r *http.Request) {
	c, err := n.o.Push.Devices(r.Context(), sessionUser(r).Name)
	if err != nil {
		n.internal(w, err)
		return
	}
	apiJSON(w, http.StatusOK, map[string]any{"enabled": n.o.Push.PushEnabled(), "public_key": n.o.Push.PushKey(), "devices": c})
}

func (n *NotifyAPI) subscribe(w http.ResponseWriter, r *http.Request) {
	var sub notify.PushSubscription
	if err := readJSON(w, r, 8192, jsonBody, &sub); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	err := n.o.Push.Subscribe(r.Context(), sessionUser(r).Name, sub)
	if invalid(w, err) {
		return
	}
	if err != nil {
		n.internal(w, err)
		return
	}
	apiJSON(w, http.StatusCreated, map[string]any{"ok": true})
}

func (n *NotifyAPI) unsubscribe(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Endpoint string `json:"endpoint"`
	}
	if err := readJSON(w, r, 4096, jsonBody, &req); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	err := n.o.Push.Unsubscribe(r.Context(), sessionUser(r).Name, req.Endpoint)
	if errors.Is(err, notify.ErrNotFound) {
		apiError(w, http.StatusNotFound, "este aparelho não estava inscrito")
		return
	}
	if err != nil {
		n.internal(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

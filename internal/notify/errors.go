package notify

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
)

// A delivery's error in the alert's history is a short pt-BR summary that
// every role may read: the receiver's raw error can name internal hosts
// and addresses, SMTP dialogue or TLS details. The raw error stays in the
// outbox row (last_error) and reaches administrators only, through
// DeliveryErrors, and the service's log.

// shownError is an error whose message (msg) may be shown to every role;
// err, if any, is the raw cause.
type shownError struct {
	msg string
	err error
}

func (e shownError) Error() string {
	if e.err == nil {
		return e.msg
	}
	return e.msg + ": " + e.err.Error()
}

func (e shownError) Unwrap() error { return e.err }

// shown wraps cause (nil: none) under a message every role may read.
func shown(msg string, cause error) error { return shownError{msg, cause} }

// summary is what the history says of a delivery's error.
func summary(err error) string {
	var sh shownError
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var netErr net.Error
	switch {
	case errors.As(err, &sh):
		return sh.msg
	case errors.Is(err, errPrivatePush):
		return errPrivatePush.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return "sem resposta dentro do tempo limite"
	case errors.As(err, &certErr), errors.As(err, &unknownCA), errors.As(err, &hostErr):
		return "certificado TLS do receptor não aceito (detalhes para administradores)"
	case errors.As(err, &netErr), errors.As(err, new(*net.OpError)), errors.As(err, new(*net.DNSError)):
		return "falha de rede ao contatar o receptor (detalhes para administradores)"
	}
	return "o receptor falhou (detalhes para administradores)"
}

// DeliveryError is one delivery of an alert with its receiver's raw
// error, for administrators.
type DeliveryError struct {
	Receiver string `json:"receiver"`
	Target   string `json:"target"` // as in the history (a push device shortened)
	User     string `json:"user"`
	Status   string `json:"status"` // pending, sent, failed
	Attempts int    `json:"attempts"`
	Error    string `json:"error"` // the latest attempt's raw error
}

// DeliveryErrors lists the deliveries of alertID whose latest attempt
// failed, with the raw error: for administrators only (the history shows
// every role a summary).
func (s *Service) DeliveryErrors(ctx context.Context, alertID string) ([]DeliveryError, error) {
	rows, err := s.st.db.QueryContext(ctx, `SELECT receiver, target, user, status, attempts, last_error, alert_ids
		FROM notify_outbox WHERE last_error <> '' AND instr(alert_ids, ?) > 0 ORDER BY id`, alertID)
	if err != nil {
		return nil, fmt.Errorf("notify: delivery errors: %w", err)
	}
	defer rows.Close()
	out := []DeliveryError{}
	for rows.Next() {
		var d DeliveryError
		var ids string
		if err := rows.Scan(&d.Receiver, &d.Target, &d.User, &d.Status, &d.Attempts, &d.Error, &ids); err != nil {
			return nil, fmt.Errorf("notify: delivery errors: %w", err)
		}
		var list []string
		if json.Unmarshal([]byte(ids), &list) != nil || !slices.Contains(list, alertID) {
			continue
		}
		d.Target = shortTarget(d.Receiver, d.Target)
		out = append(out, d)
	}
	return out, rows.Err()
}

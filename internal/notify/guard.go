package notify

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/sossego/sossego/alerts/notify"
)

// What a delivery may reach. Push endpoints are given by browsers, that
// is by any logged-in user: one that names a loopback or LAN address
// would make the central service send requests inside the municipal
// network, and one that never answers would hold everybody's push. So:
//
//   - a push endpoint on a loopback, private, link-local, shared (CGNAT),
//     multicast or unspecified address, or named localhost or without a
//     dot, is refused when it is subscribed and again when it is
//     delivered to; without an injected Transport and without a proxy,
//     the address a name resolves to is checked when connecting, too;
//   - a user has at most Options.MaxPushDevices subscriptions;
//   - each push delivery runs on its own (deliver.go, workPush), bounded
//     by the push timeout, so that one endpoint never delays another;
//   - neither webhooks nor push follow redirects: a 307 would send the
//     signed body elsewhere, a 302 would turn into a GET on whatever
//     address it names. A redirect is a refusal, told with its status.

// DefaultMaxPushDevices is Options.MaxPushDevices's default.
const DefaultMaxPushDevices = 10

// errPrivatePush is the refusal of a push endpoint inside the network.
var errPrivatePush = errors.New("o endereço de push aponta para a rede interna ou para este servidor; use o serviço de push do navegador")

// checkPushHost refuses an endpoint whose host is a local name or an
// internal address.
func checkPushHost(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || u.Hostname() == "" {
		return errors.New("endereço de push inválido")
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if ip, err := netip.ParseAddr(host); err == nil {
		if internalAddr(ip) {
			return errPrivatePush
		}
		return nil
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || !strings.Contains(host, ".") {
		return errPrivatePush
	}
	return nil
}

// cgnat is RFC 6598's shared address space.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// internalAddr reports whether ip is not a public unicast address.
func internalAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() || cgnat.Contains(ip)
}

// noRedirects makes a client return a redirect as the answer.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// httpClient is the client for webhooks (push: pushClient): the injected
// Transport or the default one, never following redirects.
func (s *Service) httpClient() *http.Client {
	return &http.Client{Transport: s.o.Transport, CheckRedirect: noRedirects}
}

// pushClient is httpClient for push endpoints: without an injected
// Transport and without a proxy, it refuses to connect to an internal
// address whatever name led there.
func (s *Service) pushClient() *http.Client {
	c := s.httpClient()
	if c.Transport == nil && !proxied() {
		t := http.DefaultTransport.(*http.Transport).Clone()
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: refuseInternal}
		t.DialContext = d.DialContext
		c.Transport = t
	}
	return c
}

// proxied reports whether outgoing HTTPS goes through a proxy (the proxy
// then decides where requests go).
func proxied() bool {
	req := &http.Request{URL: &url.URL{Scheme: "https", Host: "push.example"}}
	u, err := http.ProxyFromEnvironment(req)
	return err != nil || u != nil
}

// refuseInternal is a dialer's Control: no connection to an internal
// address.
func refuseInternal(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	if ip, err := netip.ParseAddr(host); err == nil && internalAddr(ip) {
		return errPrivatePush
	}
	return nil
}

// redirectRefusal is the error for a redirect answered to a delivery.
func redirectRefusal(what string, code int) error {
	return permanent(shown(fmt.Sprintf("%s respondeu com redirecionamento HTTP %d; redirecionamentos não são seguidos: corrija o endereço", what, code), nil))
}

// checkDeviceCap refuses a new subscription of user past the cap;
// re-subscribing an endpoint the user has is not new.
func (s *Service) checkDeviceCap(ctx context.Context, tx *sql.Tx, user, endpoint string) error {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM notify_push_subscriptions WHERE user = ? AND endpoint <> ?`,
		user, endpoint).Scan(&n)
	if err != nil {
		return fmt.Errorf("notify: subscribe: %w", err)
	}
	if n >= s.o.MaxPushDevices {
		return &notify.ValidationError{Problems: []string{fmt.Sprintf("limite de %d aparelhos com notificações por usuário atingido: desative as notificações em um aparelho que não usa mais e tente de novo", s.o.MaxPushDevices)}}
	}
	return nil
}

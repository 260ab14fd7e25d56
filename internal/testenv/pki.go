package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// PKI is a throwaway certificate authority for TLS tests: it signs broker
// (server) certificates and gateway client certificates whose CN is the
// gateway id.
type PKI struct {
	CA     *x509.Certificate
	key    *ecdsa.PrivateKey
	t      testing.TB
	mu     sync.Mutex
	serial int64
}

// NewPKI creates the CA (valid for a day).
func NewPKI(t testing.TB) *PKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("testenv: CA key: %v", err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Sossego test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("testenv: CA certificate: %v", err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("testenv: CA certificate: %v", err)
	}
	return &PKI{CA: ca, key: key, t: t, serial: 1}
}

// Issue signs a certificate for cn: a server certificate (cn is its IP
// address or host name) or a client certificate.
func (p *PKI) Issue(cn string, server bool) tls.Certificate {
	p.t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		p.t.Fatalf("testenv: key: %v", err)
	}
	p.mu.Lock()
	p.serial++
	serial := p.serial
	p.mu.Unlock()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		if ip := net.ParseIP(cn); ip != nil {
			tmpl.IPAddresses = []net.IP{ip}
		} else {
			tmpl.DNSNames = []string{cn}
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.CA, &key.PublicKey, p.key)
	if err != nil {
		p.t.Fatalf("testenv: certificate for %s: %v", cn, err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// Pool is a certificate pool holding the CA.
func (p *PKI) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(p.CA)
	return pool
}

// ClientTLS is a client configuration trusting the CA, with a client
// certificate for cn ("" for none).
func (p *PKI) ClientTLS(cn string) *tls.Config {
	p.t.Helper()
	c := &tls.Config{RootCAs: p.Pool(), MinVersion: tls.VersionTLS12}
	if cn != "" {
		c.Certificates = []tls.Certificate{p.Issue(cn, false)}
	}
	return c
}

// ServerFiles writes a server certificate for cn, its key and the CA as
// PEM files in dir (for a broker configured by file) and returns their
// paths.
func (p *PKI) ServerFiles(dir, cn string) (cert, key, ca string) {
	p.t.Helper()
	srv := p.Issue(cn, true)
	der, err := x509.MarshalPKCS8PrivateKey(srv.PrivateKey)
	if err != nil {
		p.t.Fatalf("testenv: server key: %v", err)
	}
	write := func(name, typ string, b []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o644); err != nil {
			p.t.Fatalf("testenv: %v", err)
		}
		return path
	}
	return write("server.crt", "CERTIFICATE", srv.Certificate[0]), write("server.key", "PRIVATE KEY", der),
		write("ca.crt", "CERTIFICATE", p.CA.Raw)
}

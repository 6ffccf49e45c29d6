package client_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/mockserver"
)

// testPKI is a CA made by the test, a server certificate for 127.0.0.1 and a client
// certificate, both signed by it, written as PEM files in a temporary directory.
type testPKI struct {
	caFile, clientCert, clientKey string
	ca                            *x509.Certificate
	caPool                        *x509.CertPool
	server                        tls.Certificate
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey := key()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tasksim test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	issue := func(serial int64, usage x509.ExtKeyUsage, ips []net.IP) ([]byte, *ecdsa.PrivateKey) {
		k := key()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "tasksim test"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, k
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	keyDER := func(k *ecdsa.PrivateKey) []byte {
		b, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	srvDER, srvKey := issue(2, x509.ExtKeyUsageServerAuth, []net.IP{net.IPv4(127, 0, 0, 1)})
	cliDER, cliKey := issue(3, x509.ExtKeyUsageClientAuth, nil)
	p := &testPKI{
		caFile:     write("ca.pem", "CERTIFICATE", caDER),
		clientCert: write("client.pem", "CERTIFICATE", cliDER),
		clientKey:  write("client-key.pem", "EC PRIVATE KEY", keyDER(cliKey)),
		ca:         ca,
		caPool:     x509.NewCertPool(),
		server:     tls.Certificate{Certificate: [][]byte{srvDER}, PrivateKey: srvKey},
	}
	p.caPool.AddCert(ca)
	return p
}

// tlsFront serves a mock server's handler over TLS on 127.0.0.1 with the PKI's server
// certificate; with mutual, it asks for a client certificate signed by the CA.
func tlsFront(t *testing.T, p *testPKI, mutual bool) string {
	t.Helper()
	srv, err := mockserver.NewHandlerServer(mockserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ts := httptest.NewUnstartedServer(srv.Handler())
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{p.server}, MinVersion: tls.VersionTLS12}
	if mutual {
		ts.TLS.ClientAuth, ts.TLS.ClientCAs = tls.RequireAndVerifyClientCert, p.caPool
	}
	ts.StartTLS()
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// connect opens a session to url with the TLS options o.
func connect(t *testing.T, url string, o client.TLSOptions) error {
	t.Helper()
	cfg, err := o.Config()
	if err != nil {
		t.Fatalf("Config: %v", err)
	}
	target := &client.Target{URL: url, Client: client.NewHTTPClientWith(client.ClientOptions{IdleConns: 2, TLS: cfg})}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := target.Connect(ctx, client.ClientCapabilities())
	if err == nil {
		_ = s.Close(ctx)
	}
	return err
}

// TestTLSInternalCA: a target signed by a CA the system does not know is refused with an
// error that names --ca-cert; with --ca-cert it is reached (the CA is added to the system
// roots); with --insecure-skip-verify too.
func TestTLSInternalCA(t *testing.T) {
	p := newTestPKI(t)
	url := tlsFront(t, p, false)

	err := connect(t, url, client.TLSOptions{})
	var te *client.TLSError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "--ca-cert") {
		t.Fatalf("without --ca-cert: %v, want a TLSError naming --ca-cert", err)
	}
	if err := connect(t, url, client.TLSOptions{CACert: p.caFile}); err != nil {
		t.Fatalf("with --ca-cert: %v", err)
	}
	if err := connect(t, url, client.TLSOptions{InsecureSkipVerify: true}); err != nil {
		t.Fatalf("with --insecure-skip-verify: %v", err)
	}
}

// TestTLSMutual: a target that asks for a client certificate is refused without one, with an
// error that names --client-cert, and reached with --client-cert and --client-key.
func TestTLSMutual(t *testing.T) {
	p := newTestPKI(t)
	url := tlsFront(t, p, true)

	err := connect(t, url, client.TLSOptions{CACert: p.caFile})
	if err == nil || !strings.Contains(err.Error(), "--client-cert") {
		t.Fatalf("without a client certificate: %v, want an error naming --client-cert", err)
	}
	if err := connect(t, url, client.TLSOptions{CACert: p.caFile, ClientCert: p.clientCert, ClientKey: p.clientKey}); err != nil {
		t.Fatalf("with a client certificate: %v", err)
	}
}

// TestTLSOptionsErrors: a bad file is an error that names the flag and the file.
func TestTLSOptionsErrors(t *testing.T) {
	p := newTestPKI(t)
	notPEM := filepath.Join(t.TempDir(), "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		o    client.TLSOptions
		want []string
	}{
		{client.TLSOptions{CACert: "/nonexistent/ca.pem"}, []string{"--ca-cert", "/nonexistent/ca.pem"}},
		{client.TLSOptions{CACert: notPEM}, []string{"--ca-cert", notPEM, "no PEM certificate"}},
		{client.TLSOptions{ClientCert: p.clientCert}, []string{"--client-cert", "needs --client-key"}},
		{client.TLSOptions{ClientKey: p.clientKey}, []string{"--client-key", "needs --client-cert"}},
		{client.TLSOptions{ClientCert: p.clientCert, ClientKey: p.caFile}, []string{"--client-cert", "--client-key", p.caFile}},
	} {
		_, err := c.o.Config()
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("Config(%+v) = %v, want an error containing %q", c.o, err, w)
			}
		}
	}
	if cfg, err := (client.TLSOptions{}).Config(); cfg != nil || err != nil {
		t.Errorf("zero options: %v %v, want nil, nil (Go's defaults)", cfg, err)
	}
}

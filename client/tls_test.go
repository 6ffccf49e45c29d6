package client_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/testpki"
	"github.com/tasksim/tasksim/mockserver"
)

// tlsFront serves a mock server's handler over TLS on 127.0.0.1 with the PKI's server
// certificate; with mutual, it asks for a client certificate signed by the CA.
func tlsFront(t *testing.T, p *testpki.PKI, mutual bool) string {
	t.Helper()
	srv, err := mockserver.NewHandlerServer(mockserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ts := httptest.NewUnstartedServer(srv.Handler())
	ts.TLS = p.ServerTLS(mutual)
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
	p := testpki.New(t)
	url := tlsFront(t, p, false)

	err := connect(t, url, client.TLSOptions{})
	var te *client.TLSError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "--ca-cert") {
		t.Fatalf("without --ca-cert: %v, want a TLSError naming --ca-cert", err)
	}
	if err := connect(t, url, client.TLSOptions{CACert: p.CAFile}); err != nil {
		t.Fatalf("with --ca-cert: %v", err)
	}
	if err := connect(t, url, client.TLSOptions{InsecureSkipVerify: true}); err != nil {
		t.Fatalf("with --insecure-skip-verify: %v", err)
	}
}

// TestTLSMutual: a target that asks for a client certificate is refused without one, with an
// error that names --client-cert, and reached with --client-cert and --client-key.
func TestTLSMutual(t *testing.T) {
	p := testpki.New(t)
	url := tlsFront(t, p, true)

	err := connect(t, url, client.TLSOptions{CACert: p.CAFile})
	if err == nil || !strings.Contains(err.Error(), "--client-cert") {
		t.Fatalf("without a client certificate: %v, want an error naming --client-cert", err)
	}
	if err := connect(t, url, client.TLSOptions{CACert: p.CAFile, ClientCert: p.ClientCert, ClientKey: p.ClientKey}); err != nil {
		t.Fatalf("with a client certificate: %v", err)
	}
}

// TestTLSOptionsErrors: a bad file is an error that names the flag and the file.
func TestTLSOptionsErrors(t *testing.T) {
	p := testpki.New(t)
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
		{client.TLSOptions{ClientCert: p.ClientCert}, []string{"--client-cert", "needs --client-key"}},
		{client.TLSOptions{ClientKey: p.ClientKey}, []string{"--client-key", "needs --client-cert"}},
		{client.TLSOptions{ClientCert: p.ClientCert, ClientKey: p.CAFile}, []string{"--client-cert", "--client-key", p.CAFile}},
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

package runner

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/testpki"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/scenarios"
)

// TestRunTLSTarget runs against a TLS front of the mock server signed by a CA the test
// makes, asking for a client certificate: without tls.ca_cert the run stops with an error
// that names --ca-cert; with the CA and the client certificate it runs, verified; with
// insecure_skip_verify (and the client certificate) it runs, and its summary says
// unverified, in summary.json and in the text.
func TestRunTLSTarget(t *testing.T) {
	pki := testpki.New(t)
	srv, err := mockserver.NewHandlerServer(mockserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ts := httptest.NewUnstartedServer(srv.Handler())
	ts.TLS = pki.ServerTLS(true)
	ts.StartTLS()
	defer ts.Close()

	run := func(tls scenarios.TLS) (*results.Summary, error) {
		sc, err := scenarios.Load("smoke")
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range []string{"duration=1s", "grace=3s", "workload.clients=2", `args={"duration_ms":100}`} {
			path, value, _ := strings.Cut(kv, "=")
			if err := sc.Set(path, value); err != nil {
				t.Fatal(err)
			}
		}
		sc.Target, sc.TLS = ts.URL+"/mcp", tls
		return Run(context.Background(), sc, Options{Dir: t.TempDir()})
	}

	_, err = run(scenarios.TLS{})
	var te *client.TLSError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "--ca-cert") {
		t.Fatalf("without the CA: %v, want a TLS error naming --ca-cert", err)
	}
	mtls := scenarios.TLS{ClientCert: pki.ClientCert, ClientKey: pki.ClientKey}
	for _, c := range []struct {
		name       string
		tls        scenarios.TLS
		unverified bool
	}{
		{"ca_cert", scenarios.TLS{CACert: pki.CAFile, ClientCert: mtls.ClientCert, ClientKey: mtls.ClientKey}, false},
		{"insecure_skip_verify", scenarios.TLS{InsecureSkipVerify: true, ClientCert: mtls.ClientCert, ClientKey: mtls.ClientKey}, true},
	} {
		sum, err := run(c.tls)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if sum.Tasks.Created == 0 || sum.TLSUnverified != c.unverified {
			t.Errorf("%s: %d tasks created, tls_unverified %v; want some, %v", c.name, sum.Tasks.Created, sum.TLSUnverified, c.unverified)
		}
		var text strings.Builder
		if err := results.WriteText(&text, sum, ""); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(text.String(), "TLS UNVERIFIED"); got != c.unverified {
			t.Errorf("%s: text says TLS UNVERIFIED %v, want %v:\n%s", c.name, got, c.unverified, text.String())
		}
	}
}

package cliflags

import (
	"net/http"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/runner"
)

// TLS is the TLS flags of every command that reaches a target (run, sweep, probe,
// conform): a CA added to the system roots, a client certificate for mutual TLS, or no
// verification. The fields hold the values as given.
type TLS struct {
	CACert, ClientCert, ClientKey string // --ca-cert, --client-cert, --client-key: PEM files
	InsecureSkipVerify            bool   // --insecure-skip-verify
}

// Bind defines the TLS flags on fs, their values going to t.
func (t *TLS) Bind(fs *pflag.FlagSet) {
	fs.StringVar(&t.CACert, "ca-cert", "", "PEM `FILE` of CA certificates trusted for an https target, added to the system roots (tls.ca_cert)")
	fs.StringVar(&t.ClientCert, "client-cert", "", "PEM `FILE` of the client certificate, for a target that asks for one (mutual TLS; with --client-key) (tls.client_cert)")
	fs.StringVar(&t.ClientKey, "client-key", "", "PEM `FILE` of the client certificate's private key (tls.client_key)")
	fs.BoolVar(&t.InsecureSkipVerify, "insecure-skip-verify", false, "accept any certificate of an https target: nothing proves which server answers, and the summary says unverified (tls.insecure_skip_verify)")
}

// Options are the flags as client.TLSOptions.
func (t *TLS) Options() client.TLSOptions {
	return client.TLSOptions{CACert: t.CACert, ClientCert: t.ClientCert, ClientKey: t.ClientKey, InsecureSkipVerify: t.InsecureSkipVerify}
}

// Client is an HTTP client of conns connections with the flags' TLS; a file that cannot
// be read is a *runner.UsageError naming its flag.
func (t *TLS) Client(conns int) (*http.Client, error) {
	cfg, err := t.Options().Config()
	if err != nil {
		return nil, &runner.UsageError{Err: err}
	}
	return client.NewHTTPClientWith(client.ClientOptions{IdleConns: conns, TLS: cfg}), nil
}

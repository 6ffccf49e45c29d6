package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
)

// TLS for targets behind an internal CA or mutual TLS. Targets inside a company are often
// signed by its own CA, and SSL_CERT_FILE, the usual way to trust one, replaces the system
// bundle instead of adding to it: the CA file of TLSOptions is added to the system roots.

// TLSOptions are the TLS settings of https:// targets. The zero value is Go's default:
// the system roots, no client certificate, verification on.
type TLSOptions struct {
	// CACert is a PEM file of one or more CA certificates, trusted besides the system
	// roots. "" = the system roots only.
	CACert string
	// ClientCert and ClientKey are the PEM files of the client certificate and its key, for
	// targets that ask for one (mutual TLS). Both or neither.
	ClientCert, ClientKey string
	// InsecureSkipVerify accepts any server certificate: the target is not authenticated,
	// and a run's summary says so (unverified).
	InsecureSkipVerify bool
}

// On reports whether o differs from Go's defaults.
func (o TLSOptions) On() bool { return o != TLSOptions{} }

// Config returns the tls.Config of o, or an error naming the file and what is wrong with
// it. The zero TLSOptions gives nil (Go's default configuration).
func (o TLSOptions) Config() (*tls.Config, error) {
	if !o.On() {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.InsecureSkipVerify} //nolint:gosec // asked for, and marked in the summary
	if o.CACert != "" {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool() // no system roots here: the CA file alone
		}
		pem, err := os.ReadFile(o.CACert)
		if err != nil {
			return nil, fmt.Errorf("--ca-cert: %w", err)
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--ca-cert %s: no PEM certificate in the file (want one or more \"-----BEGIN CERTIFICATE-----\" blocks)", o.CACert)
		}
		cfg.RootCAs = pool
	}
	switch {
	case o.ClientCert != "" && o.ClientKey != "":
		pair, err := tls.LoadX509KeyPair(o.ClientCert, o.ClientKey)
		if err != nil {
			return nil, fmt.Errorf("--client-cert %s / --client-key %s: %w", o.ClientCert, o.ClientKey, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	case o.ClientCert != "":
		return nil, fmt.Errorf("--client-cert %s needs --client-key, the file of its private key", o.ClientCert)
	case o.ClientKey != "":
		return nil, fmt.Errorf("--client-key %s needs --client-cert, the file of its certificate", o.ClientKey)
	}
	return cfg, nil
}

// TLSError is a TLS handshake that failed for a reason the user can fix with a flag: it
// keeps the error and says which.
type TLSError struct{ Err error }

func (e *TLSError) Unwrap() error { return e.Err }

func (e *TLSError) Error() string {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	switch {
	case errors.As(e.Err, &unknown):
		return e.Err.Error() + ": the target's certificate is signed by a CA this machine does not trust; add the CA with --ca-cert FILE (added to the system roots)"
	case errors.As(e.Err, &host):
		return e.Err.Error() + ": the target's certificate is for another name; use the URL's host the certificate names"
	case strings.Contains(e.Err.Error(), "certificate required"), errors.Is(e.Err, errClientCertAsked):
		return e.Err.Error() + ": the target asks for a client certificate (mutual TLS); give it with --client-cert FILE --client-key FILE"
	}
	return e.Err.Error()
}

// errClientCertAsked marks a failed request to a target that asked for a client
// certificate, none being configured (schemeTransport.watchCertRequests).
var errClientCertAsked = errors.New("the target asked for a client certificate in the handshake and none was given")

// tlsError wraps err in a TLSError when it is one of the handshake failures TLSError
// explains, and returns it unchanged otherwise (a TLSError already).
func tlsError(err error) error {
	if _, ok := err.(*TLSError); ok {
		return err
	}
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	if errors.As(err, &unknown) || errors.As(err, &host) || (err != nil && strings.Contains(err.Error(), "tls: certificate required")) {
		return &TLSError{Err: err}
	}
	return err
}

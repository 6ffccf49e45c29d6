// Package testpki makes a certificate authority for tests of TLS targets: a CA, a server
// certificate for 127.0.0.1 and a client certificate signed by it, as PEM files.
package testpki

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
	"testing"
	"time"
)

// PKI is a CA made by a test, a server certificate for 127.0.0.1 and a client
// certificate, both signed by it, written as PEM files in a temporary directory.
type PKI struct {
	CAFile, ClientCert, ClientKey string // PEM files
	CA                            *x509.Certificate
	CAPool                        *x509.CertPool  // the CA alone, for a server's ClientCAs
	Server                        tls.Certificate // for 127.0.0.1, signed by the CA
}

// New makes a PKI in a temporary directory of t.
func New(t testing.TB) *PKI {
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
	p := &PKI{
		CAFile:     write("ca.pem", "CERTIFICATE", caDER),
		ClientCert: write("client.pem", "CERTIFICATE", cliDER),
		ClientKey:  write("client-key.pem", "EC PRIVATE KEY", keyDER(cliKey)),
		CA:         ca,
		CAPool:     x509.NewCertPool(),
		Server:     tls.Certificate{Certificate: [][]byte{srvDER}, PrivateKey: srvKey},
	}
	p.CAPool.AddCert(ca)
	return p
}

// ServerTLS returns a server configuration with the PKI's certificate; with mutual, it
// requires a client certificate signed by the CA.
func (p *PKI) ServerTLS(mutual bool) *tls.Config {
	cfg := &tls.Config{Certificates: []tls.Certificate{p.Server}, MinVersion: tls.VersionTLS12}
	if mutual {
		cfg.ClientAuth, cfg.ClientCAs = tls.RequireAndVerifyClientCert, p.CAPool
	}
	return cfg
}

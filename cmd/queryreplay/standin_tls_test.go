package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCA is a certificate authority made in the test with crypto/x509,
// independent of the stand-in's own generator (tds.GenerateCertificate).
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue makes a server certificate for 127.0.0.1 and returns its DER
// and the PEM certificate and PKCS #8 key.
func (ca *testCA) issue(t *testing.T) (der, certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano() + 1), Subject: pkix.Name{CommonName: "flag-given stand-in"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames: []string{"localhost"}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err = x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return der, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})
}

func writeTestFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestStandinServesFlagCertificate: the certificate given with --tls-cert
// and --tls-key is the one the stand-in serves. A client pinning its CA
// logs in (encrypt=true and TDS 8.0 strict); one pinning another CA is
// refused; the TLS handshake's leaf is byte for byte the given one.
func TestStandinServesFlagCertificate(t *testing.T) {
	dir := t.TempDir()
	ca, other := newTestCA(t, "QueryReplay test CA"), newTestCA(t, "some other CA")
	leaf, certPEM, keyPEM := ca.issue(t)
	caFile := writeTestFile(t, dir, "ca.pem", ca.pem)
	otherFile := writeTestFile(t, dir, "other-ca.pem", other.pem)
	lines, cancel, done := startStandinCommand(t, 1, "--tls-cert", writeTestFile(t, dir, "server.pem", certPEM),
		"--tls-key", writeTestFile(t, dir, "server.key", keyPEM))
	defer func() { cancel(); <-done }()
	if len(lines) != 1 || !strings.Contains(lines[0], "encrypt=disable") {
		t.Fatalf("with --tls-cert the stand-in prints one DSN (it has no CA to pin): %q", lines)
	}
	u, err := url.Parse(lines[0])
	if err != nil {
		t.Fatal(err)
	}

	dsn := func(encrypt, caPath string) string {
		q := u.Query()
		q.Set("encrypt", encrypt)
		q.Set("certificate", caPath)
		q.Set("disableretry", "true")
		v := *u
		v.RawQuery = q.Encode()
		return v.String()
	}
	for _, encrypt := range []string{"true", "strict"} {
		db, err := sql.Open("sqlserver", dsn(encrypt, caFile))
		if err != nil {
			t.Fatal(err)
		}
		var enc string
		if err := db.QueryRow("SELECT encrypt_option FROM sys.dm_exec_connections WHERE session_id = @@SPID").Scan(&enc); err != nil || enc != "TRUE" {
			t.Errorf("encrypt=%s pinning the flags' CA: encrypt_option %q, %v", encrypt, enc, err)
		}
		db.Close()

		wrong, err := sql.Open("sqlserver", dsn(encrypt, otherFile))
		if err != nil {
			t.Fatal(err)
		}
		if err := wrong.Ping(); err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Errorf("encrypt=%s pinning another CA: %v, want a certificate error", encrypt, err)
		}
		wrong.Close()
	}

	// TDS 8.0 is TLS from the first byte, so a plain TLS client sees the
	// served chain directly
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", u.Host,
		&tls.Config{RootCAs: pool, ServerName: "127.0.0.1", NextProtos: []string{"tds/8.0"}})
	if err != nil {
		t.Fatalf("TLS to the stand-in with the flags' CA: %v", err)
	}
	defer conn.Close()
	if served := conn.ConnectionState().PeerCertificates; len(served) == 0 || !bytes.Equal(served[0].Raw, leaf) {
		t.Fatal("the stand-in served another certificate than --tls-cert")
	}
}

// TestStandinCertificateFlagErrors: a bad --tls-cert/--tls-key pair fails
// at start with exit 2 and a message naming the file at fault.
func TestStandinCertificateFlagErrors(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t, "QueryReplay test CA")
	_, certPEM, keyPEM := ca.issue(t)
	_, _, otherKey := ca.issue(t)
	cert := writeTestFile(t, dir, "server.pem", certPEM)
	key := writeTestFile(t, dir, "server.key", keyPEM)
	for _, tc := range []struct {
		name       string
		cert, key  string
		want       []string
		wantAbsent string
	}{
		{"missing certificate", filepath.Join(dir, "missing.pem"), key, []string{"missing.pem", "no such file"}, ""},
		{"missing key", cert, filepath.Join(dir, "missing.key"), []string{"missing.key", "no such file"}, ""},
		{"certificate not PEM", writeTestFile(t, dir, "garbage.pem", []byte("not a certificate\n")), key, []string{"garbage.pem", "no PEM certificate"}, ""},
		{"key file holds a certificate", cert, writeTestFile(t, dir, "cert-as-key.pem", certPEM), []string{"cert-as-key.pem", "no PEM private key"}, ""},
		{"key of another certificate", cert, writeTestFile(t, dir, "other.key", otherKey), []string{"other.key", "server.pem", "does not go with"}, "BEGIN"},
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"standin", "--listen", "127.0.0.1:0", "--tls-cert", tc.cert, "--tls-key", tc.key},
			&env{stdout: &out, stderr: &errOut, stdin: strings.NewReader("")})
		if code != 2 {
			t.Errorf("%s: exit %d, want 2 (%s)", tc.name, code, errOut.String())
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut.String(), w) {
				t.Errorf("%s: stderr %q does not say %q", tc.name, errOut.String(), w)
			}
		}
		if tc.wantAbsent != "" && strings.Contains(errOut.String(), tc.wantAbsent) {
			t.Errorf("%s: stderr quotes the key material: %q", tc.name, errOut.String())
		}
	}
}

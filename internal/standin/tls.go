package standin

import (
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/tds"
)

// TLS for the stand-in: SQL Server always has a certificate (a self-signed
// fallback one when none is configured,
// https://learn.microsoft.com/en-us/sql/database-engine/configure-windows/configure-sql-server-encryption),
// so clients' default encrypted logins work. The stand-in generates a CA
// and a server certificate for 127.0.0.1 and localhost at Start unless
// Options.Certificate is given; Running.CAPEM and CAFile let clients pin
// the CA instead of trusting any certificate.

// certificateLifetime bounds the generated certificate.
const certificateLifetime = 7 * 24 * time.Hour

func (r *Running) setupTLS() error {
	o := r.Server.opts
	if o.NoTLS {
		if o.Encryption != tds.EncryptOptional {
			return fmt.Errorf("standin: encryption %s needs TLS, but TLS is turned off", o.Encryption)
		}
		return nil
	}
	cert := o.Certificate
	if cert == nil {
		g, err := tds.GenerateCertificate([]string{"127.0.0.1", "localhost", "::1"}, certificateLifetime)
		if err != nil {
			return fmt.Errorf("standin: %w", err)
		}
		cert = &g.Certificate
		r.CAPEM = g.CAPEM
		f, err := os.CreateTemp("", "queryreplay-standin-ca-*.pem")
		if err != nil {
			return fmt.Errorf("standin: write CA file: %w", err)
		}
		_, werr := f.Write(g.CAPEM)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(f.Name())
			return fmt.Errorf("standin: write CA file: %w", werr)
		}
		r.CAFile = f.Name()
	}
	r.tlsConfig = &tls.Config{Certificates: []tls.Certificate{*cert}}
	return nil
}

func (r *Running) removeCAFile() {
	if r.CAFile != "" {
		os.Remove(r.CAFile)
	}
}

// LoadCertificate reads a PEM certificate (chain) and key, for
// Options.Certificate. Each error names the file at fault: the one that
// cannot be read or holds no PEM block of its kind, or both when the key
// is not the certificate's.
func LoadCertificate(certFile, keyFile string) (*tls.Certificate, error) {
	certPEM, err := readPEMFile(certFile, "CERTIFICATE", "certificate")
	if err != nil {
		return nil, err
	}
	keyPEM, err := readPEMFile(keyFile, "PRIVATE KEY", "private key")
	if err != nil {
		return nil, err
	}
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("standin: the key in %s does not go with the certificate in %s: %w", keyFile, certFile, err)
	}
	return &c, nil
}

// readPEMFile reads path and checks it holds a PEM block whose type ends
// in kind ("CERTIFICATE"; "PRIVATE KEY" also matches "RSA PRIVATE KEY"
// and "EC PRIVATE KEY").
func readPEMFile(path, kind, what string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("standin: read %s file: %w", what, err)
	}
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return nil, fmt.Errorf("standin: %s holds no PEM %s block (want a PEM file, \"-----BEGIN %s-----\")", path, what, kind)
		}
		if strings.HasSuffix(block.Type, kind) {
			return data, nil
		}
	}
}

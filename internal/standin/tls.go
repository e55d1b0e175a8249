package standin

import (
	"crypto/tls"
	"fmt"
	"os"
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
// Options.Certificate.
func LoadCertificate(certFile, keyFile string) (*tls.Certificate, error) {
	c, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("standin: load certificate %s / %s: %w", certFile, keyFile, err)
	}
	return &c, nil
}

package tds

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// GeneratedCertificate is a server certificate made at start, as SQL Server
// makes its self-signed fallback certificate when none is configured
// (https://learn.microsoft.com/en-us/sql/database-engine/configure-windows/configure-sql-server-encryption).
// Unlike SQL Server's, it is issued by a throwaway CA, so clients can pin
// that CA (go-mssqldb certificate=, FreeTDS "ca file", tedious
// cryptoCredentialsDetails.ca) instead of trusting any certificate.
type GeneratedCertificate struct {
	// Certificate is the leaf and its chain (leaf, CA), for tls.Config.
	Certificate tls.Certificate
	// CAPEM is the issuing CA certificate in PEM, for clients to pin.
	CAPEM []byte
	// CertPEM is the leaf certificate in PEM.
	CertPEM []byte
}

// GenerateCertificate makes an ECDSA P-256 CA and a server certificate for
// hosts (IP addresses or DNS names, e.g. "127.0.0.1", "localhost"), valid
// from an hour ago for validFor.
func GenerateCertificate(hosts []string, validFor time.Duration) (*GeneratedCertificate, error) {
	if len(hosts) == 0 {
		return nil, fmt.Errorf("tds: a certificate needs at least one host name")
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("tds: CA key: %w", err)
	}
	notBefore := time.Now().Add(-time.Hour)
	notAfter := notBefore.Add(validFor + time.Hour)
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "QueryReplay stand-in CA", Organization: []string{"QueryReplay"}},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("tds: CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("tds: CA certificate: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("tds: server key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: hosts[0], Organization: []string{"QueryReplay"}},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("tds: server certificate: %w", err)
	}
	return &GeneratedCertificate{
		Certificate: tls.Certificate{Certificate: [][]byte{der, caDER}, PrivateKey: key},
		CAPEM:       pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		CertPEM:     pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
	}, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}

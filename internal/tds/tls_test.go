package tds

import (
	"bytes"
	"context"
	"crypto/tls"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TLS with the real go-mssqldb driver: every PRELOGIN outcome, TDS 8.0
// strict mode, trustServerCertificate and CA pinning (go-mssqldb's
// certificate= parameter), and the refusals a real server gives.

var (
	testCertOnce sync.Once
	testCert     *GeneratedCertificate
	testCertErr  error
)

func generatedCert(t testing.TB) *GeneratedCertificate {
	t.Helper()
	testCertOnce.Do(func() { testCert, testCertErr = GenerateCertificate([]string{"127.0.0.1", "localhost"}, time.Hour) })
	if testCertErr != nil {
		t.Fatal(testCertErr)
	}
	return testCert
}

func withTLS(t testing.TB, policy Encryption) func(*Server) {
	cert := generatedCert(t)
	return func(s *Server) {
		s.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert.Certificate}}
		s.Encryption = policy
	}
}

func tlsDSN(addr, params string) string {
	return "sqlserver://sa:" + testPassword + "@" + addr + "?database=appdb&disableretry=true" + params
}

func TestTLSNegotiation(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, generatedCert(t).CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	other, err := GenerateCertificate([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	otherCA := filepath.Join(t.TempDir(), "other-ca.pem")
	if err := os.WriteFile(otherCA, other.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		tls     bool
		policy  Encryption
		params  string
		want    string // the session's encryption, or
		wantErr string // a substring of the client's error
	}{
		{"no certificate, encrypt=disable", false, 0, "&encrypt=disable", "none", ""},
		{"no certificate, encrypt=true", false, 0, "&encrypt=true", "", "server does not support encryption"},
		{"no certificate, strict", false, 0, "&encrypt=strict&certificate=" + ca, "", "TLS Handshake failed"},
		{"optional, encrypt absent: login only", true, EncryptOptional, "", "login-only", ""},
		{"optional, encrypt=false: login only", true, EncryptOptional, "&encrypt=false&trustServerCertificate=true", "login-only", ""},
		{"optional, encrypt=disable", true, EncryptOptional, "&encrypt=disable", "none", ""},
		{"optional, encrypt=true, trusted", true, EncryptOptional, "&encrypt=true&trustServerCertificate=true", "tls", ""},
		{"optional, encrypt=true, CA pinned", true, EncryptOptional, "&encrypt=true&certificate=" + ca, "tls", ""},
		{"optional, encrypt=true, wrong CA", true, EncryptOptional, "&encrypt=true&certificate=" + otherCA, "", "certificate signed by unknown authority"},
		{"optional, encrypt=true, unverified", true, EncryptOptional, "&encrypt=true", "", "certificate"},
		{"optional, strict, CA pinned", true, EncryptOptional, "&encrypt=strict&certificate=" + ca, "tds8-strict", ""},
		{"optional, strict, wrong host", true, EncryptOptional, "&encrypt=strict&certificate=" + ca + "&hostNameInCertificate=db.example", "", "certificate"},
		{"required, encrypt=false: whole connection", true, EncryptRequired, "&encrypt=false&trustServerCertificate=true", "tls", ""},
		// told ENCRYPT_REQ, go-mssqldb attempts TLS even with encrypt=disable, verifying the certificate
		{"required, encrypt=disable", true, EncryptRequired, "&encrypt=disable", "", "certificate signed by unknown authority"},
		{"required, strict", true, EncryptRequired, "&encrypt=strict&certificate=" + ca, "tds8-strict", ""},
		{"strict only, encrypt=true refused", true, EncryptStrict, "&encrypt=true&trustServerCertificate=true", "", "read"},
		{"strict only, strict", true, EncryptStrict, "&encrypt=strict&certificate=" + ca, "tds8-strict", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var configure func(*Server)
			if tc.tls {
				configure = withTLS(t, tc.policy)
			}
			_, addr := startServerWith(t, newTestHandler(), configure)
			db, err := sql.Open("sqlserver", tlsDSN(addr, tc.params))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var got string
			err = db.QueryRowContext(ctx, "select encryption").Scan(&got)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("connected (%s), want an error containing %q", got, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %q, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("query: %v", err)
			}
			if got != tc.want {
				t.Fatalf("session encryption %q, want %q", got, tc.want)
			}
			// a second round trip proves the transport after login is right
			var one int
			if err := db.QueryRowContext(ctx, "select 1").Scan(&one); err != nil || one != 1 {
				t.Fatalf("select 1 after login: %d, %v", one, err)
			}
		})
	}
}

// TestTLSLargeResult sends a result far larger than a TLS record and a TDS
// packet over an encrypted connection.
func TestTLSLargeResult(t *testing.T) {
	_, addr := startServerWith(t, newTestHandler(), withTLS(t, EncryptRequired))
	db := openDBWith(t, tlsDSN(addr, "&encrypt=true&trustServerCertificate=true&packet+size=16383"))
	rows, err := db.Query("select rows 20000")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil || n != 20000 {
		t.Fatalf("%d rows, %v; want 20000", n, err)
	}
}

func openDBWith(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlserver", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestTLSRequiredRefusesClearLogin: with Force Encryption a client told
// ENCRYPT_REQ that sends LOGIN7 in clear is disconnected; PRELOGIN answers
// follow MS-TDS 2.2.6.5 for every client value.
func TestTLSRequiredRefusesClearLogin(t *testing.T) {
	_, addr := startServerWith(t, newTestHandler(), withTLS(t, EncryptRequired))
	c := dialRaw(t, addr)
	c.send(packetPrelogin, statusEOM, buildPrelogin(), 4096) // ENCRYPT_OFF
	pre := c.mustRead()
	opts, err := preloginOptions(pre.payload)
	if err != nil || !bytes.Equal(opts[preloginEncryption], []byte{encryptReq}) {
		t.Fatalf("PRELOGIN reply %x: %v; want ENCRYPT_REQ", pre.payload, err)
	}
	c.send(packetLogin7, statusEOM, buildLogin7("sa", testPassword, "appdb", 4096), 4096)
	c.expectClosed()

	for _, tc := range []struct {
		client    byte
		haveTLS   bool
		policy    Encryption
		answer    byte
		handshake bool
	}{
		{encryptOff, false, EncryptOptional, encryptNotSup, false},
		{encryptOn, false, EncryptRequired, encryptNotSup, false},
		{encryptOff, true, EncryptOptional, encryptOff, true},
		{encryptOn, true, EncryptOptional, encryptOn, true},
		{encryptReq, true, EncryptOptional, encryptOn, true},
		{encryptNotSup, true, EncryptOptional, encryptNotSup, false},
		{encryptOff, true, EncryptRequired, encryptReq, true},
		{encryptNotSup, true, EncryptRequired, encryptReq, true},
		{encryptOn, true, EncryptRequired, encryptOn, true},
	} {
		a, h := preloginAnswer(tc.client, tc.haveTLS, tc.policy)
		if a != tc.answer || h != tc.handshake {
			t.Errorf("client %d, tls %v, %s: answer %d handshake %v; want %d %v", tc.client, tc.haveTLS, tc.policy, a, h, tc.answer, tc.handshake)
		}
	}
}

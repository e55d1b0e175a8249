package standin

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"sync"

	"github.com/queryreplay/queryreplay/internal/tds"
)

// Running is a stand-in listening on a TCP address.
type Running struct {
	// Server is the emulated SQL Server (state, fault injection).
	Server *Server
	// Addr is the host:port actually listened on.
	Addr string
	// DSN connects go-mssqldb as the sysadmin login to the demo database,
	// without TLS (encrypt=disable).
	DSN string
	// TLSDSN is DSN with the whole connection encrypted and the generated
	// CA pinned (encrypt=true&certificate=<CAFile>); "" when TLS is off or
	// the certificate was given.
	TLSDSN string
	// CAPEM is the CA that issued the generated server certificate (nil
	// when Options.Certificate was given or TLS is off); CAFile holds it on
	// disk for clients that take a path (FreeTDS, go-mssqldb certificate=).
	CAPEM  []byte
	CAFile string

	tlsConfig *tls.Config

	mu   sync.Mutex
	tds  *tds.Server
	ln   net.Listener
	done chan error
}

// Faults returns the fault-injection control.
func (r *Running) Faults() *Faults { return r.Server.Faults }

// Start listens on addr (e.g. "127.0.0.1:0") and serves a new stand-in
// built from opts until ctx ends or Close is called.
func Start(ctx context.Context, addr string, opts Options) (*Running, error) {
	if _, err := LookupPersona(opts.Persona); err != nil {
		return nil, fmt.Errorf("standin: %w", err)
	}
	srv := New(opts)
	r := &Running{Server: srv}
	if err := r.setupTLS(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		r.removeCAFile()
		return nil, fmt.Errorf("standin: listen on %s: %w", addr, err)
	}
	r.Addr = ln.Addr().String()
	r.DSN = DSN(srv.opts.User, srv.opts.Password, r.Addr, demoDBName)
	if r.CAFile != "" {
		r.TLSDSN = TLSDSN(srv.opts.User, srv.opts.Password, r.Addr, demoDBName, r.CAFile)
	}
	r.serve(ln)
	go func() {
		<-ctx.Done()
		_ = r.Close()
	}()
	return r, nil
}

// DSN builds a go-mssqldb connection string for the stand-in (no TLS: the
// stand-in answers PRELOGIN with encryption NOT_SUP).
func DSN(user, password, addr, database string) string {
	u := url.URL{Scheme: "sqlserver", User: url.UserPassword(user, password), Host: addr}
	q := url.Values{}
	q.Set("database", database)
	q.Set("encrypt", "disable")
	u.RawQuery = q.Encode()
	return u.String()
}

// TLSDSN builds a go-mssqldb connection string that encrypts the whole
// connection and verifies the server certificate against the CA in caFile.
func TLSDSN(user, password, addr, database, caFile string) string {
	u := url.URL{Scheme: "sqlserver", User: url.UserPassword(user, password), Host: addr}
	q := url.Values{}
	q.Set("database", database)
	q.Set("encrypt", "true")
	q.Set("certificate", caFile)
	u.RawQuery = q.Encode()
	return u.String()
}

func (r *Running) serve(ln net.Listener) {
	t := &tds.Server{Handler: r.Server.Faults.Wrap(r.Server), Logger: r.Server.opts.Logger, Name: serverName, Version: r.Server.persona.Version,
		TLSConfig: r.tlsConfig, Encryption: r.Server.opts.Encryption}
	r.mu.Lock()
	r.tds, r.ln = t, ln
	done := make(chan error, 1)
	r.done = done
	r.mu.Unlock()
	go func() { done <- t.Serve(ln) }()
}

// Close stops listening, drops every connection and removes the generated
// CA file.
func (r *Running) Close() error {
	err := r.closeServer()
	r.removeCAFile()
	return err
}

func (r *Running) closeServer() error {
	r.mu.Lock()
	t := r.tds
	r.mu.Unlock()
	if t == nil {
		return nil
	}
	return t.Close()
}

// Restart emulates a SQL Server service restart on the same address: every
// connection is dropped, open transactions roll back, the buffer pool
// empties, and event sessions keep running only if STARTUP_STATE = ON.
func (r *Running) Restart() error {
	if err := r.closeServer(); err != nil {
		return fmt.Errorf("standin: restart: close: %w", err)
	}
	r.Server.Restart()
	ln, err := net.Listen("tcp", r.Addr)
	if err != nil {
		return fmt.Errorf("standin: restart: listen on %s: %w", r.Addr, err)
	}
	r.serve(ln)
	return nil
}

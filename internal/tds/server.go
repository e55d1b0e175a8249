package tds

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Server is a TDS 7.4 server. Like net/http's Server, it owns listeners and
// connections and delegates behaviour to a Handler. The zero value is not
// usable; set Handler. Fields must not change after Serve is called.
type Server struct {
	// Handler authenticates logins and serves sessions. Required.
	Handler Handler
	// Logger receives connection events and the reasons for closing
	// connections; nil means slog.Default(). Passwords, SQL text and result
	// values are never logged.
	Logger *slog.Logger
	// Name is the server name sent in ERROR and INFO tokens (@@SERVERNAME);
	// "" means "QUERYREPLAY".
	Name string
	// Version is the SQL Server version announced in PRELOGIN and LOGINACK;
	// zero means 16.0.4135 (SQL Server 2022).
	Version Version
	// LoginTimeout bounds PRELOGIN + LOGIN7; zero means 30 seconds.
	LoginTimeout time.Duration
	// TLSConfig, when set, makes encryption available: it must carry a
	// certificate (Certificates or GetCertificate). The server adds ALPN
	// "tds/8.0" for TDS 8.0 clients. Nil: no TLS; PRELOGIN answers
	// ENCRYPT_NOT_SUP, as before certificates existed.
	TLSConfig *tls.Config
	// Encryption is the policy when TLSConfig is set (default
	// EncryptOptional, SQL Server's "Force Encryption = No").
	Encryption Encryption
	// MaxMessageSize bounds one client message (e.g. a huge RPC); zero means
	// 64 MiB.
	MaxMessageSize int

	mu         sync.Mutex
	listeners  map[net.Listener]struct{}
	conns      map[*conn]struct{}
	spids      map[uint16]bool
	closed     bool
	inShutdown atomic.Bool
	shutdownCh chan struct{} // closed by Shutdown: idle connections close
	baseCtx    context.Context
	cancelBase context.CancelFunc
	lastTx     atomic.Uint64
}

// Version is a SQL Server product version, e.g. 16.0.4135.
type Version struct {
	Major, Minor uint8
	Build        uint16
}

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Build) }

// ErrServerClosed is returned by Serve after Shutdown or Close.
var ErrServerClosed = errors.New("tds: server closed")

const firstUserSPID = 51 // SQL Server reserves lower SPIDs for system sessions

func (s *Server) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

func (s *Server) name() string {
	if s.Name != "" {
		return s.Name
	}
	return "QUERYREPLAY"
}

func (s *Server) version() Version {
	if s.Version == (Version{}) {
		return Version{Major: 16, Minor: 0, Build: 4135}
	}
	return s.Version
}

func (s *Server) maxMessageSize() int {
	if s.MaxMessageSize > 0 {
		return s.MaxMessageSize
	}
	return 64 << 20
}

func (s *Server) loginTimeout() time.Duration {
	if s.LoginTimeout > 0 {
		return s.LoginTimeout
	}
	return 30 * time.Second
}

// init prepares internal state; call with s.mu held.
func (s *Server) initLocked() {
	if s.listeners == nil {
		s.listeners = map[net.Listener]struct{}{}
		s.conns = map[*conn]struct{}{}
		s.spids = map[uint16]bool{}
		s.shutdownCh = make(chan struct{})
		s.baseCtx, s.cancelBase = context.WithCancel(context.Background())
	}
}

// ListenAndServe listens on the TCP address addr and serves.
func (s *Server) ListenAndServe(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("tds: listen on %s: %w", addr, err)
	}
	return s.Serve(ln)
}

// Serve accepts connections on ln, serving each in its own goroutine, until
// ln fails or the server is shut down. It always closes ln and returns a
// non-nil error: ErrServerClosed after Shutdown or Close.
func (s *Server) Serve(ln net.Listener) error {
	if s.Handler == nil {
		ln.Close()
		return errors.New("tds: Server.Handler is nil")
	}
	s.mu.Lock()
	s.initLocked()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
		ln.Close()
	}()
	log := s.logger()
	log.Info("tds server listening", "addr", ln.Addr().String())
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.inShutdown.Load() {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				log.Warn("tds accept failed; retrying", "err", err, "delay", backoff)
				time.Sleep(backoff)
				continue
			}
			return fmt.Errorf("tds: accept: %w", err)
		}
		backoff = 0
		c, ok := s.newConn(nc)
		if !ok {
			nc.Close()
			continue
		}
		go c.serve()
	}
}

// newConn registers a connection and allocates its SPID: the lowest free
// number from 51 up, reused after disconnect as SQL Server does.
func (s *Server) newConn(nc net.Conn) (*conn, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.inShutdown.Load() {
		return nil, false
	}
	spid := uint16(firstUserSPID)
	for s.spids[spid] {
		spid++
		if spid == 0 {
			s.logger().Error("tds: no free SPID; refusing connection", "remote", nc.RemoteAddr().String())
			return nil, false
		}
	}
	s.spids[spid] = true
	c := newConn(s, nc, spid)
	s.conns[c] = struct{}{}
	return c, true
}

func (s *Server) removeConn(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
	delete(s.spids, c.sess.SPID)
}

func (s *Server) nextTransaction() uint64 { return s.lastTx.Add(1) }

// Shutdown stops accepting connections, closes idle connections, lets each
// busy connection finish its current request and then closes it, and waits
// until all connections are gone or ctx ends (then it returns ctx.Err(); call
// Close to force the rest).
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.initLocked()
	if !s.inShutdown.Swap(true) {
		close(s.shutdownCh)
	}
	for ln := range s.listeners {
		ln.Close()
	}
	s.mu.Unlock()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		s.mu.Lock()
		n := len(s.conns)
		s.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// CloseSession closes the connection with the given SPID at once, as KILL
// does; its running request's context is cancelled. It reports whether such
// a connection existed.
func (s *Server) CloseSession(spid uint16) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c.sess.SPID == spid {
			c.nc.Close()
			return true
		}
	}
	return false
}

// Close closes all listeners and connections immediately and cancels the
// contexts of running requests. It does not wait for handlers to return.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initLocked()
	s.closed = true
	if !s.inShutdown.Swap(true) {
		close(s.shutdownCh)
	}
	s.cancelBase()
	var first error
	for ln := range s.listeners {
		if err := ln.Close(); err != nil && first == nil {
			first = err
		}
	}
	for c := range s.conns {
		c.nc.Close()
	}
	return first
}

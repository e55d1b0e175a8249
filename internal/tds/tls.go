package tds

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
)

// TLS, as SQL Server does it (MS-TDS 2.2.6.5 PRELOGIN; TDS 8.0:
// https://learn.microsoft.com/en-us/sql/relational-databases/security/networking/tds-8):
//
//   - TDS 7.x: PRELOGIN travels in clear and negotiates ENCRYPTION. Unless
//     the answer is ENCRYPT_NOT_SUP, the TLS handshake follows, its records
//     carried inside PRELOGIN packets (type 0x12); after it, TLS records go
//     straight over TCP. ENCRYPT_OFF from both sides means only the LOGIN7
//     message is encrypted and everything after it is clear again ("login
//     only"); any other outcome encrypts the whole connection.
//   - TDS 8.0 (encrypt=strict): the client starts TLS on the bare socket
//     (ALPN "tds/8.0"), and PRELOGIN, LOGIN7 and everything after run
//     inside it.

// Encryption is the server's encryption policy, the equivalent of SQL
// Server's "Force Encryption" and "Force Strict Encryption" settings
// (https://learn.microsoft.com/en-us/sql/database-engine/configure-windows/configure-sql-server-encryption).
// It matters only when Server.TLSConfig is set; without a certificate the
// server answers ENCRYPT_NOT_SUP and refuses TDS 8.0.
type Encryption uint8

const (
	// EncryptOptional (Force Encryption = No, SQL Server's default):
	// clients choose. A client that offers encryption but does not ask
	// (go-mssqldb's encrypt=false, FreeTDS "request") gets its login
	// encrypted and the rest in clear; one that asks (encrypt=true) gets the
	// whole connection encrypted; one that cannot (encrypt=disable, tedious
	// encrypt:false) gets no TLS at all. TDS 8.0 strict clients are served.
	EncryptOptional Encryption = iota
	// EncryptRequired (Force Encryption = Yes): every connection is
	// encrypted whole; PRELOGIN answers ENCRYPT_REQ to clients that did not
	// ask, and a client that then sends LOGIN7 in clear is disconnected.
	EncryptRequired
	// EncryptStrict (Force Strict Encryption = Yes, SQL Server 2022+): only
	// TDS 8.0 connections are accepted; any connection that starts with a
	// clear PRELOGIN is closed.
	EncryptStrict
)

func (e Encryption) String() string {
	switch e {
	case EncryptOptional:
		return "optional"
	case EncryptRequired:
		return "required"
	case EncryptStrict:
		return "strict"
	}
	return fmt.Sprintf("encryption(%d)", uint8(e))
}

// ParseEncryption parses "optional", "required" or "strict".
func ParseEncryption(s string) (Encryption, error) {
	for _, e := range []Encryption{EncryptOptional, EncryptRequired, EncryptStrict} {
		if e.String() == s {
			return e, nil
		}
	}
	return 0, fmt.Errorf("unknown encryption policy %q (want optional, required or strict)", s)
}

// ConnEncryption says how one connection is protected.
type ConnEncryption uint8

const (
	ConnClear     ConnEncryption = iota // no TLS at all
	ConnLoginOnly                       // TLS for LOGIN7 only (both sides ENCRYPT_OFF)
	ConnEncrypted                       // TDS 7.x, TLS after PRELOGIN for the whole connection
	ConnStrict                          // TDS 8.0, TLS from the first byte
)

func (e ConnEncryption) String() string {
	switch e {
	case ConnClear:
		return "none"
	case ConnLoginOnly:
		return "login-only"
	case ConnEncrypted:
		return "tls"
	case ConnStrict:
		return "tds8-strict"
	}
	return fmt.Sprintf("conn-encryption(%d)", uint8(e))
}

// alpnTDS8 is the ALPN protocol id of TDS 8.0 (the one go-mssqldb and
// tedious send with encrypt=strict).
const alpnTDS8 = "tds/8.0"

// tlsRecordHandshake is the first byte of a TLS ClientHello record; a TDS
// 7.x client starts with a PRELOGIN packet (0x12) instead.
const tlsRecordHandshake = 0x16

// preloginAnswer decides the ENCRYPTION byte of the PRELOGIN reply from the
// client's value (MS-TDS 2.2.6.5), and whether the TLS handshake follows
// (every answer but ENCRYPT_NOT_SUP).
func preloginAnswer(client byte, haveTLS bool, policy Encryption) (answer byte, handshake bool) {
	if !haveTLS {
		return encryptNotSup, false
	}
	switch client {
	case encryptNotSup:
		if policy == EncryptOptional {
			return encryptNotSup, false
		}
		// Force Encryption: the client is told encryption is required; a
		// client that still cannot do TLS is disconnected at LOGIN7.
		return encryptReq, true
	case encryptOff:
		if policy == EncryptOptional {
			return encryptOff, true // login only
		}
		return encryptReq, true
	default: // ENCRYPT_ON, ENCRYPT_REQ (or anything newer): encrypt all
		return encryptOn, true
	}
}

// prefixConn is a net.Conn whose first Read returns bytes already taken
// from it (the byte read to tell TDS 8.0 from TDS 7.x).
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (p *prefixConn) Read(b []byte) (int, error) {
	if len(p.prefix) > 0 {
		n := copy(b, p.prefix)
		p.prefix = p.prefix[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}

// handshakeConn carries the TDS 7.x TLS handshake: while active, TLS
// records the server writes are collected and sent as one PRELOGIN message
// per flight (when the server next reads, or at flush), and reads return
// the payloads of the client's PRELOGIN packets. Afterwards it passes bytes
// straight through to the socket, as the client's TLS layer then does.
type handshakeConn struct {
	net.Conn
	spid    uint16
	active  bool
	unread  []byte // rest of the current client packet
	flight  []byte // server handshake bytes not yet sent
	maxSize int
}

func (h *handshakeConn) Read(b []byte) (int, error) {
	if !h.active {
		return h.Conn.Read(b)
	}
	if err := h.flush(); err != nil {
		return 0, err
	}
	for len(h.unread) == 0 {
		var hdr [packetHeaderSize]byte
		if _, err := io.ReadFull(h.Conn, hdr[:]); err != nil {
			return 0, err
		}
		if packetType(hdr[0]) == packetLogin7 {
			return 0, errClearLoginRefused
		}
		if packetType(hdr[0]) != packetPrelogin {
			return 0, fmt.Errorf("TLS handshake: got a %s packet, want PRELOGIN", packetType(hdr[0]))
		}
		n := int(binary.BigEndian.Uint16(hdr[2:4])) - packetHeaderSize
		if n < 0 || n > h.maxSize {
			return 0, fmt.Errorf("TLS handshake: bad packet length %d", n+packetHeaderSize)
		}
		h.unread = make([]byte, n)
		if _, err := io.ReadFull(h.Conn, h.unread); err != nil {
			return 0, err
		}
	}
	n := copy(b, h.unread)
	h.unread = h.unread[n:]
	return n, nil
}

func (h *handshakeConn) Write(b []byte) (int, error) {
	if !h.active {
		return h.Conn.Write(b)
	}
	h.flight = append(h.flight, b...)
	return len(b), nil
}

// flush sends the pending flight as one PRELOGIN message split into packets
// of at most 4096 bytes (the pre-login packet size).
func (h *handshakeConn) flush() error {
	if len(h.flight) == 0 {
		return nil
	}
	w := newMessageWriter(h.Conn, h.spid)
	w.typ = packetPrelogin
	if err := w.write(h.flight); err != nil {
		return err
	}
	h.flight = nil
	return w.end()
}

// startTLS runs the TDS 7.x handshake inside PRELOGIN packets and returns
// the TLS connection, which from then on runs straight over the socket.
func (c *conn) startTLS() (*tls.Conn, error) {
	h := &handshakeConn{Conn: c.nc, spid: c.sess.SPID, active: true, maxSize: maxPacketSize}
	cfg := c.srv.tlsConfig()
	// SQL Server speaks TLS 1.3 only over TDS 8.0; TDS 7.x tops out at TLS
	// 1.2 (https://learn.microsoft.com/en-us/sql/relational-databases/security/networking/tds-8).
	// FreeTDS depends on it: after a TLS 1.3 handshake it sends its
	// Finished outside PRELOGIN packets.
	cfg.MaxVersion = tls.VersionTLS12
	tc := tls.Server(h, cfg)
	if err := tc.Handshake(); err != nil {
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	if err := h.flush(); err != nil { // TLS 1.2 ends with the server's Finished
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	h.active = false
	return tc, nil
}

// startStrictTLS runs the TDS 8.0 handshake on the bare socket.
func (c *conn) startStrictTLS(first byte) (*tls.Conn, error) {
	tc := tls.Server(&prefixConn{Conn: c.nc, prefix: []byte{first}}, c.srv.tlsConfig())
	if err := tc.Handshake(); err != nil {
		return nil, fmt.Errorf("TDS 8.0 TLS handshake: %w", err)
	}
	if p := tc.ConnectionState().NegotiatedProtocol; p != alpnTDS8 {
		c.log.Info("tds 8.0 client negotiated no tds/8.0 ALPN; serving it anyway", "alpn", p)
	}
	return tc, nil
}

// tlsConfig returns the configured TLS settings with ALPN for TDS 8.0.
func (s *Server) tlsConfig() *tls.Config {
	cfg := s.TLSConfig.Clone()
	cfg.NextProtos = []string{alpnTDS8}
	// session tickets would add post-handshake records to the flight
	cfg.SessionTicketsDisabled = true
	if cfg.MinVersion == 0 {
		cfg.MinVersion = tls.VersionTLS12
	}
	return cfg
}

// errClearLoginRefused: a client sent LOGIN7 in clear although TLS was
// required.
var errClearLoginRefused = errors.New("client sent LOGIN7 without TLS although the server requires encryption")

package tds

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"
)

// conn serves one client connection. Its goroutine reads messages; each
// request runs its handler in a second goroutine, so that ATTENTION can be
// read while the request runs [verified, docs/design/standin-protocol.md §14: a server that
// stops reading never sees the cancel].
type conn struct {
	srv     *Server
	nc      net.Conn
	rw      io.ReadWriter // the transport: nc, or TLS over it
	log     *slog.Logger
	sess    Session
	handler SessionHandler
	out     *messageWriter
	// attention is set by the reading goroutine when ATTENTION arrives
	// during a request; the request goroutine reads it when finishing.
	attention atomic.Bool
	txName    string
}

// outcome is what a finished request tells the reading goroutine.
type outcome struct {
	answeredAttention bool
	closeReason       error // non-nil: close the connection
}

var (
	errDropped        = errors.New("handler asked to drop the connection")
	errClientLeft     = errors.New("client closed the connection")
	errServerShutdown = errors.New("server shutting down")
)

func newConn(s *Server, nc net.Conn, spid uint16) *conn {
	c := &conn{srv: s, nc: nc, rw: nc, out: newMessageWriter(nc, spid)}
	c.sess.SPID = spid
	c.sess.RemoteAddr = nc.RemoteAddr()
	c.sess.PacketSize = defaultPacketSize
	c.log = s.logger().With("spid", spid, "remote", nc.RemoteAddr().String())
	return c
}

func (c *conn) serve() {
	reason := c.run()
	c.nc.Close()
	if c.handler != nil {
		func() {
			defer func() {
				if p := recover(); p != nil {
					c.log.Error("tds: SessionHandler.Close panicked", "panic", p, "stack", string(debug.Stack()))
				}
			}()
			c.handler.Close()
		}()
	}
	c.srv.removeConn(c)
	switch {
	case errors.Is(reason, errClientLeft), errors.Is(reason, errServerShutdown):
		c.log.Debug("tds connection closed", "reason", reason.Error())
	case errors.Is(reason, errDropped):
		c.log.Info("tds connection dropped by handler")
	default:
		c.log.Warn("tds connection closed", "reason", reason.Error())
	}
}

// run returns why the connection ended.
func (c *conn) run() error {
	ok, err := c.login()
	if err != nil || !ok {
		if err == nil {
			err = errors.New("login refused")
		}
		return err
	}
	type readResult struct {
		m   message
		err error
	}
	msgs := make(chan readResult)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			m, err := readMessage(c.rw, c.srv.maxMessageSize())
			select {
			case msgs <- readResult{m, err}:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()

	var (
		busy     bool
		cancel   context.CancelCauseFunc
		done     = make(chan outcome, 1)
		shutdown = c.srv.shutdownCh
	)
	defer func() {
		if cancel != nil {
			cancel(errClientLeft)
		}
	}()
	// finished handles the end of a request; an error ends the connection.
	finished := func(o outcome) error {
		busy = false
		cancel(nil)
		attention := c.attention.Swap(false)
		if o.closeReason != nil {
			return o.closeReason
		}
		if attention && !o.answeredAttention {
			// The request had already finished when ATTENTION arrived; the
			// client waits for one more response with DONE_ATTN.
			return c.replyAttention()
		}
		return nil
	}
	waitRequest := func(cause error) {
		if busy {
			cancel(cause)
			<-done
			busy = false
		}
	}
	for {
		select {
		case rr := <-msgs:
			if rr.err != nil {
				waitRequest(errClientLeft)
				if errors.Is(rr.err, io.EOF) || errors.Is(rr.err, net.ErrClosed) {
					return errClientLeft
				}
				return fmt.Errorf("read message: %w", rr.err)
			}
			switch rr.m.typ {
			case packetAttention:
				if busy {
					c.attention.Store(true)
					cancel(ErrAttention)
				} else if err := c.replyAttention(); err != nil {
					return err
				}
			case packetSQLBatch, packetRPC, packetTransMgr:
				if busy {
					// Usually the previous request has sent its last packet
					// and the client answered before its goroutine reported
					// back; otherwise the client broke the one-request-at-a-
					// time rule (no MARS) and this request waits its turn.
					if err := finished(<-done); err != nil {
						return err
					}
				}
				busy = true
				ctx, cancelRequest := context.WithCancelCause(c.srv.baseCtx)
				cancel = cancelRequest
				go func(m message) { done <- c.runRequest(ctx, m) }(rr.m)
			default:
				waitRequest(errors.New("protocol violation"))
				return fmt.Errorf("unexpected %s message after login", rr.m.typ)
			}
		case o := <-done:
			if err := finished(o); err != nil {
				return err
			}
			if c.srv.inShutdown.Load() {
				return errServerShutdown
			}
		case <-shutdown:
			shutdown = nil
			if !busy {
				return errServerShutdown
			}
		}
	}
}

func (c *conn) replyAttention() error {
	if err := c.out.write(appendDone(nil, tokenDone, doneAttn, CmdNone, 0)); err != nil {
		return err
	}
	return c.out.end()
}

// ---- login ----

func (c *conn) login() (bool, error) {
	c.nc.SetDeadline(time.Now().Add(c.srv.loginTimeout()))
	if err := c.startTransport(); err != nil {
		return false, err
	}
	const maxLoginMessage = 128 << 10
	m, err := readMessage(c.rw, maxLoginMessage)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return false, errClientLeft
		}
		return false, fmt.Errorf("read PRELOGIN: %w", err)
	}
	loginOnly := false
	if m.typ == packetPrelogin {
		answer, err := c.prelogin(m.payload)
		if err != nil {
			return false, err
		}
		if answer != encryptNotSup && c.sess.Encryption != ConnStrict {
			tc, err := c.startTLS()
			if err != nil {
				return false, err
			}
			c.setTransport(tc)
			c.sess.Encryption = ConnEncrypted
			if answer == encryptOff {
				c.sess.Encryption, loginOnly = ConnLoginOnly, true
			}
		}
		if m, err = readMessage(c.rw, maxLoginMessage); err != nil {
			if errors.Is(err, io.EOF) {
				return false, errClientLeft
			}
			return false, fmt.Errorf("read LOGIN7: %w", err)
		}
	}
	if loginOnly {
		// ENCRYPT_OFF on both sides: only LOGIN7 was encrypted; the client
		// reads the login reply and everything after in clear.
		c.setTransport(c.nc)
	}
	if m.typ != packetLogin7 {
		return false, fmt.Errorf("expected a LOGIN7 message, got %s", m.typ)
	}
	req, err := decodeLogin7(m.payload)
	if err != nil {
		return false, err
	}
	c.sess.User, c.sess.AppName, c.sess.HostName = req.User, req.AppName, req.HostName
	c.sess.ClientPID, c.sess.Language = req.ClientPID, req.Language
	c.sess.TDSVersion = negotiateTDSVersion(req.TDSVersion)
	if c.sess.TDSVersion != req.TDSVersion {
		c.log.Info("tds client asked for another TDS version", "requested", fmt.Sprintf("%#08x", req.TDSVersion), "answered", fmt.Sprintf("%#08x", c.sess.TDSVersion))
	}
	c.sess.PacketSize = negotiatePacketSize(req.PacketSize)
	c.out.packetSize = c.sess.PacketSize

	res, herr := c.callLogin(req)
	if errors.Is(herr, ErrDropConnection) {
		return false, errDropped
	}
	if herr == nil && (res == nil || res.Session == nil) {
		herr = errors.New("Handler.Login returned no SessionHandler")
	}
	if herr != nil {
		return false, c.refuseLogin(req.User, herr)
	}
	c.handler = res.Session
	db := res.Database
	if db == "" {
		db = req.Database
	}
	if db == "" {
		db = "master"
	}
	if err := c.acceptLogin(db); err != nil {
		return false, err
	}
	c.nc.SetDeadline(time.Time{})
	c.log.Info("tds login", "user", req.User, "app", req.AppName, "database", db,
		"tds_version", fmt.Sprintf("%#08x", c.sess.TDSVersion), "packet_size", c.sess.PacketSize)
	return true, nil
}

func (c *conn) callLogin(req *LoginRequest) (res *LoginResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("tds: Handler.Login panicked", "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("login handler panicked: %v", p)
		}
	}()
	ctx, cancel := context.WithTimeout(c.srv.baseCtx, c.srv.loginTimeout())
	defer cancel()
	return c.srv.Handler.Login(ctx, &c.sess, req)
}

// startTransport tells TDS 8.0 from TDS 7.x by the first byte: a TLS
// ClientHello starts a strict connection, a PRELOGIN packet a 7.x one.
func (c *conn) startTransport() error {
	var first [1]byte
	if _, err := io.ReadFull(c.nc, first[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return errClientLeft
		}
		return fmt.Errorf("read first byte: %w", err)
	}
	if first[0] == tlsRecordHandshake {
		if c.srv.TLSConfig == nil {
			return errors.New("client started TLS first (TDS 8.0, encrypt=strict) but the server has no certificate")
		}
		tc, err := c.startStrictTLS(first[0])
		if err != nil {
			return err
		}
		c.setTransport(tc)
		c.sess.Encryption = ConnStrict
		return nil
	}
	if c.srv.TLSConfig != nil && c.srv.Encryption == EncryptStrict {
		return errors.New("the server accepts only TDS 8.0 strict connections (Force Strict Encryption); the client sent a clear PRELOGIN")
	}
	c.setTransport(&prefixConn{Conn: c.nc, prefix: first[:]})
	return nil
}

func (c *conn) setTransport(rw io.ReadWriter) {
	c.rw = rw
	c.out.w = rw
}

// prelogin answers PRELOGIN and returns the ENCRYPTION byte it sent
// (MS-TDS 2.2.6.5; see preloginAnswer). Inside a TDS 8.0 connection TLS is
// already up and the answer is ENCRYPT_NOT_SUP: no further handshake
// (go-mssqldb and tedious ignore the value there).
func (c *conn) prelogin(p []byte) (byte, error) {
	opts, err := preloginOptions(p)
	if err != nil {
		return 0, err
	}
	client := byte(encryptNotSup)
	if enc, ok := opts[preloginEncryption]; ok && len(enc) == 1 {
		client = enc[0]
	}
	answer := byte(encryptNotSup)
	if c.sess.Encryption != ConnStrict {
		answer, _ = preloginAnswer(client, c.srv.TLSConfig != nil, c.srv.Encryption)
	}
	if answer == encryptNotSup && (client == encryptOn || client == encryptReq) && c.sess.Encryption != ConnStrict {
		c.log.Info("tds client wants encryption but the server has no certificate; answering NOT_SUP", "client_encryption", client)
	}
	v := c.srv.version()
	reply := []struct {
		token byte
		data  []byte
	}{
		{preloginVersion, []byte{v.Major, v.Minor, byte(v.Build >> 8), byte(v.Build), 0, 0}},
		{preloginEncryption, []byte{answer}},
		{preloginInstOpt, []byte{0}},
		{preloginThreadID, []byte{0, 0, 0, 0}},
		{preloginMARS, []byte{0}},
	}
	var table, data []byte
	offset := len(reply)*5 + 1
	for _, o := range reply {
		table = append(table, o.token)
		table = binary.BigEndian.AppendUint16(table, uint16(offset+len(data)))
		table = binary.BigEndian.AppendUint16(table, uint16(len(o.data)))
		data = append(data, o.data...)
	}
	table = append(table, preloginTerminator)
	if err := c.out.write(append(table, data...)); err != nil {
		return 0, err
	}
	return answer, c.out.end()
}

// negotiateTDSVersion echoes the versions this server knows and answers 7.4
// to anything newer or unknown.
func negotiateTDSVersion(requested uint32) uint32 {
	switch requested {
	case 0x71000001, 0x72090002, 0x730A0003, 0x730B0003, 0x74000004:
		return requested
	}
	return 0x74000004
}

func negotiatePacketSize(requested uint32) int {
	if requested == 0 {
		return defaultPacketSize
	}
	return int(min(max(requested, minPacketSize), maxPacketSize))
}

func (c *conn) acceptLogin(db string) error {
	c.sess.mu.Lock()
	c.sess.database, c.sess.loginDB = db, db
	c.sess.mu.Unlock()
	var b []byte
	var err error
	if b, err = appendEnvChangeString(b, envDatabase, db, "master"); err != nil {
		return fmt.Errorf("login reply: %w", err)
	}
	if b, err = appendMessage(b, tokenInfo, databaseChangedInfo(db), c.srv.name()); err != nil {
		return fmt.Errorf("login reply: %w", err)
	}
	b = appendEnvChangeBytes(b, envCollation, defaultCollation[:], nil)
	b, _ = appendEnvChangeString(b, envLanguage, "us_english", "")
	b, _ = appendMessage(b, tokenInfo, &Error{Number: 5703, State: 1, Message: "Changed language setting to us_english."}, c.srv.name())
	b = appendLoginAck(b, c.sess.TDSVersion, "Microsoft SQL Server", c.srv.version())
	size := strconv.Itoa(c.sess.PacketSize)
	b, _ = appendEnvChangeString(b, envPacketSize, size, size)
	b = appendDone(b, tokenDone, 0, CmdNone, 0)
	if err := c.out.write(b); err != nil {
		return err
	}
	return c.out.end()
}

// refuseLogin sends the failure reply. The client always sees 18456 state 1;
// the real reason goes to the log only (see LoginError).
func (c *conn) refuseLogin(user string, herr error) error {
	var b []byte
	var tdsErr *Error
	var loginErr *LoginError
	state, reason := uint8(1), herr.Error()
	switch {
	case errors.As(herr, &loginErr):
		state, reason = loginErr.State, loginErr.Reason
	case errors.As(herr, &tdsErr):
		var err error
		if b, err = appendMessage(b, tokenError, tdsErr, c.srv.name()); err != nil {
			return fmt.Errorf("login failure reply: %w", err)
		}
	}
	failed := &Error{Number: 18456, Severity: 14, State: 1, Line: 1, Message: fmt.Sprintf("Login failed for user '%s'.", user)}
	b, err := appendMessage(b, tokenError, failed, c.srv.name())
	if err != nil {
		return fmt.Errorf("login failure reply: %w", err)
	}
	b = appendDone(b, tokenDone, doneError, CmdNone, 0)
	if err := c.out.write(b); err != nil {
		return err
	}
	if err := c.out.end(); err != nil {
		return err
	}
	// The user name is logged, as SQL Server's error log does; the password never.
	return fmt.Errorf("login failed for user %q (state %d): %s", user, state, reason)
}

// ---- requests ----

// runRequest decodes and serves one request message; it runs in its own
// goroutine.
func (c *conn) runRequest(ctx context.Context, m message) (o outcome) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("tds: handler panicked; closing the connection", "panic", p, "stack", string(debug.Stack()))
			o = outcome{closeReason: fmt.Errorf("handler panicked: %v", p)}
		}
	}()
	reset := m.resetConnection()
	switch m.typ {
	case packetSQLBatch:
		b, err := decodeBatch(m.payload)
		if err != nil {
			return c.badRequest(err)
		}
		b.ResetConnection = reset
		w := newResultWriter(c, nil)
		c.resetIfAsked(w, reset)
		c.log.Debug("tds batch", "chars", len(b.SQL), "transaction", b.Transaction)
		return c.complete(ctx, w, c.handler.Batch(ctx, b, w))
	case packetRPC:
		call, err := decodeRPC(m.payload)
		if err != nil {
			return c.badRequest(err)
		}
		call.ResetConnection = reset
		w := newResultWriter(c, call)
		c.resetIfAsked(w, reset)
		c.log.Debug("tds rpc", "proc", call.ProcName, "params", len(call.Params), "transaction", call.Transaction)
		return c.complete(ctx, w, c.handler.RPC(ctx, call, w))
	default: // packetTransMgr
		req, err := decodeTransMgr(m.payload)
		if err != nil {
			return c.badRequest(err)
		}
		req.ResetConnection = reset
		w := newResultWriter(c, nil)
		c.resetIfAsked(w, reset)
		c.log.Debug("tds transaction request", "kind", req.Kind.String(), "transaction", req.Transaction)
		return c.complete(ctx, w, c.transaction(ctx, req, w))
	}
}

// badRequest answers a request this server cannot decode. Unsupported but
// well-formed requests get an ERROR reply (error 8009, as SQL Server answers
// a malformed RPC) and the connection stays open; malformed ones close it.
func (c *conn) badRequest(err error) outcome {
	if !errors.Is(err, errUnsupported) {
		return outcome{closeReason: fmt.Errorf("malformed request: %w", err)}
	}
	c.log.Info("tds request not supported", "err", err)
	w := newResultWriter(c, nil)
	w.Error(&Error{Number: 8009, Severity: 16, State: 1, Line: 1, Message: "The incoming tabular data stream (TDS) protocol stream is incorrect: " + err.Error()})
	if ferr := w.finish(0); ferr != nil {
		return outcome{closeReason: ferr}
	}
	return outcome{}
}

// resetIfAsked applies the reset-connection status bit: the server forgets
// the open transaction, returns to the login database and acknowledges with
// ENVCHANGE 18; the handler resets its own state (see Batch.ResetConnection).
func (c *conn) resetIfAsked(w *resultWriter, reset bool) {
	if !reset {
		return
	}
	c.sess.setTransaction(0)
	c.txName = ""
	w.emit(appendEnvChangeBytes(nil, envResetConnection, nil, nil))
	if current, login := c.sess.Database(), c.sess.loginDatabase(); current != login {
		if tok, err := appendEnvChangeString(nil, envDatabase, login, current); err == nil {
			w.emit(tok)
		}
		c.sess.setDatabase(login)
	}
}

// transaction serves a TM request: state checks, the handler, then the
// transaction ENVCHANGEs.
func (c *conn) transaction(ctx context.Context, req *TransactionRequest, w *resultWriter) error {
	open := c.sess.Transaction() != 0
	switch {
	case req.Kind == TxCommit && !open:
		return &Error{Number: 3902, Severity: 16, State: 1, Line: 1, Message: "The COMMIT TRANSACTION request has no corresponding BEGIN TRANSACTION."}
	case req.Kind == TxRollback && !open:
		return &Error{Number: 3903, Severity: 16, State: 1, Line: 1, Message: "The ROLLBACK TRANSACTION request has no corresponding BEGIN TRANSACTION."}
	case req.Kind == TxSave && !open:
		return &Error{Number: 628, Severity: 16, State: 0, Line: 1, Message: "Cannot issue SAVE TRANSACTION when there is no active transaction."}
	}
	if err := c.handler.Transaction(ctx, req, w); err != nil {
		return err
	}
	var err error
	switch req.Kind {
	case TxBegin:
		if !open { // a nested BEGIN keeps the outer descriptor
			_, err = w.BeginTransaction()
			c.txName = req.Name
		}
	case TxCommit, TxRollback:
		toSavepoint := req.Kind == TxRollback && req.Name != "" && !equalFoldASCII(req.Name, c.txName)
		if toSavepoint {
			break
		}
		if req.Kind == TxCommit {
			err = w.CommitTransaction()
		} else {
			err = w.RollbackTransaction()
		}
		c.txName = ""
		if err == nil && req.BeginNew {
			_, err = w.BeginTransaction()
			c.txName = req.NewName
		}
	}
	return err
}

// complete finishes the response according to how the handler ended.
func (c *conn) complete(ctx context.Context, w *resultWriter, herr error) (o outcome) {
	defer func() { w.err = errWriterClosed }()
	if herr != nil && errors.Is(herr, ErrDropConnection) {
		c.nc.Close() // abrupt: unsent output is lost, as with a crashed server
		return outcome{closeReason: errDropped}
	}
	if c.attention.Load() {
		if err := w.endCancelled(); err != nil {
			return outcome{closeReason: err}
		}
		if err := c.replyAttention(); err != nil {
			return outcome{closeReason: err}
		}
		return outcome{answeredAttention: true}
	}
	if ctx.Err() != nil && herr != nil {
		// Cancelled by Server.Close or a lost connection, not by the client.
		return outcome{closeReason: fmt.Errorf("request ended: %w", context.Cause(ctx))}
	}
	var fatal error
	if herr != nil {
		var tdsErr *Error
		if !errors.As(herr, &tdsErr) {
			c.log.Warn("tds handler failed; reporting error 50000 to the client", "err", herr)
			tdsErr = &Error{Number: 50000, Severity: 16, State: 1, Line: 1, Message: herr.Error()}
		}
		if err := w.Error(tdsErr); err != nil {
			// e.g. a message too long for the token: report that instead
			if werr := w.Error(&Error{Number: 50000, Severity: 16, State: 1, Line: 1, Message: err.Error()}); werr != nil {
				return outcome{closeReason: werr}
			}
		}
		if tdsErr.Severity >= 20 {
			fatal = fmt.Errorf("fatal error %d (severity %d) ends the connection", tdsErr.Number, tdsErr.Severity)
		}
	}
	if err := w.finish(0); err != nil {
		return outcome{closeReason: err}
	}
	return outcome{closeReason: fatal}
}

package tds

import (
	"errors"
	"fmt"
)

// resultWriter implements ResultWriter for one request. It writes tokens
// straight into the connection's messageWriter, which sends full packets as
// they fill. The DONE of the latest statement is held back until it is known
// whether more output follows, because only the last DONE of a response may
// lack the MORE bit (go-mssqldb ends the response at the first DONE without
// it [verified, docs/design/standin-protocol.md §9]).
type resultWriter struct {
	c     *conn
	inRPC bool
	call  *RPCCall

	pending    bool // a statement DONE awaits its MORE bit
	pendStatus uint16
	pendCmd    Command
	pendRows   uint64

	cols    []*columnCodec
	setOpen bool
	setRows int64

	errorSinceDone bool
	anyError       bool
	returnStatus   int32
	returnValues   [][]byte
	row            []byte // scratch
	err            error  // sticky: the connection failed
}

var errWriterClosed = errors.New("tds: result writer used after the handler returned")

func newResultWriter(c *conn, call *RPCCall) *resultWriter {
	return &resultWriter{c: c, inRPC: call != nil, call: call}
}

// emit writes one complete token, first releasing a held DONE with MORE.
func (w *resultWriter) emit(token []byte) error {
	if w.err != nil {
		return w.err
	}
	if w.pending {
		w.pending = false
		id := byte(tokenDone)
		if w.inRPC {
			id = tokenDoneInProc
		}
		if err := w.c.out.write(appendDone(nil, id, w.pendStatus|doneMore, w.pendCmd, w.pendRows)); err != nil {
			w.err = err
			return err
		}
	}
	if err := w.c.out.write(token); err != nil {
		w.err = err
		return err
	}
	return nil
}

func (w *resultWriter) statusBits() uint16 {
	var s uint16
	if w.c.sess.Transaction() != 0 {
		s |= doneInXact
	}
	return s
}

// closeSet ends an open result set with a DONE counting its rows.
func (w *resultWriter) closeSet() error {
	if !w.setOpen {
		return nil
	}
	return w.Done(Done{Command: CmdSelect, RowCount: w.setRows})
}

// cancelled stops output once the client sent ATTENTION: the client will
// discard it anyway, and a handler that ignores ctx still stops at its next
// write.
func (w *resultWriter) cancelled() error {
	if w.c.attention.Load() {
		return fmt.Errorf("tds: result not sent: %w", ErrAttention)
	}
	return nil
}

func (w *resultWriter) Columns(cols ...Column) error {
	if w.err != nil {
		return w.err
	}
	if err := w.cancelled(); err != nil {
		return err
	}
	if err := w.closeSet(); err != nil {
		return err
	}
	if len(cols) == 0 || len(cols) > 4096 {
		return fmt.Errorf("tds: a result set needs 1-4096 columns, got %d", len(cols))
	}
	codecs := make([]*columnCodec, len(cols))
	tok := appendU16([]byte{tokenColMetadata}, uint16(len(cols)))
	for i, col := range cols {
		codec, err := newColumnCodec(col.TypeInfo, col.NotNull)
		if err != nil {
			return fmt.Errorf("tds: column %d (%q): %w", i+1, col.Name, err)
		}
		codecs[i] = codec
		tok = appendU32(tok, 0) // UserType
		var flags uint16
		if !col.NotNull {
			flags |= 0x0001
		}
		tok = appendU16(tok, flags)
		tok = append(tok, codec.typeInfo...)
		if tok, err = appendBVarChar(tok, col.Name); err != nil {
			return fmt.Errorf("tds: column %d name: %w", i+1, err)
		}
	}
	if err := w.emit(tok); err != nil {
		return err
	}
	w.cols, w.setOpen, w.setRows = codecs, true, 0
	return nil
}

func (w *resultWriter) Row(values ...any) error {
	if w.err != nil {
		return w.err
	}
	if err := w.cancelled(); err != nil {
		return err
	}
	if !w.setOpen {
		return errors.New("tds: Row called without an open result set (call Columns first)")
	}
	if len(values) != len(w.cols) {
		return fmt.Errorf("tds: row has %d values for %d columns", len(values), len(w.cols))
	}
	normalized := make([]any, len(values))
	nulls := 0
	for i, v := range values {
		nv, err := normalizeValue(v)
		if err != nil {
			return fmt.Errorf("tds: column %d: %w", i+1, err)
		}
		normalized[i] = nv
		if nv == nil {
			nulls++
		}
	}
	// NBCROW (TDS 7.3+) saves the NULL bytes; ROW otherwise.
	useNBC := nulls > 0 && w.c.sess.TDSVersion >= 0x730A0003
	row := w.row[:0]
	if useNBC {
		row = append(row, tokenNBCRow)
		bitmap := make([]byte, (len(values)+7)/8)
		for i, v := range normalized {
			if v == nil {
				bitmap[i/8] |= 1 << (i % 8)
			}
		}
		row = append(row, bitmap...)
	} else {
		row = append(row, tokenRow)
	}
	for i, v := range normalized {
		if v == nil && useNBC {
			if w.cols[i].null == nil {
				return fmt.Errorf("tds: column %d: NULL in a NOT NULL %s column", i+1, w.cols[i].Type)
			}
			continue
		}
		var err error
		if row, err = w.cols[i].appendValue(row, v); err != nil {
			return fmt.Errorf("tds: column %d: %w", i+1, err)
		}
	}
	w.row = row
	if err := w.emit(row); err != nil {
		return err
	}
	w.setRows++
	return nil
}

func (w *resultWriter) Done(d Done) error {
	if w.err != nil {
		return w.err
	}
	if w.pending { // two Done calls in a row: release the first
		if err := w.emit(nil); err != nil {
			return err
		}
	}
	w.setOpen, w.cols = false, nil
	status := w.statusBits()
	var rows uint64
	if d.RowCount >= 0 {
		status |= doneCount
		rows = uint64(d.RowCount)
	}
	if w.errorSinceDone {
		status |= doneError
		w.errorSinceDone = false
	}
	w.pending, w.pendStatus, w.pendCmd, w.pendRows = true, status, d.Command, rows
	return nil
}

func (w *resultWriter) message(token byte, e *Error) error {
	if w.err != nil {
		return w.err
	}
	if e == nil {
		return errors.New("tds: nil message")
	}
	tok, err := appendMessage(nil, token, e, w.c.srv.name())
	if err != nil {
		return fmt.Errorf("tds: %w", err)
	}
	return w.emit(tok)
}

func (w *resultWriter) Error(e *Error) error {
	if err := w.message(tokenError, e); err != nil {
		return err
	}
	w.errorSinceDone, w.anyError = true, true
	return nil
}

func (w *resultWriter) Info(m *Error) error { return w.message(tokenInfo, m) }

func (w *resultWriter) SetDatabase(name string) error {
	if w.err != nil {
		return w.err
	}
	if name == "" || utf16Len(name) > 128 {
		return fmt.Errorf("tds: database name %q must be 1-128 characters", name)
	}
	tok, err := appendEnvChangeString(nil, envDatabase, name, w.c.sess.Database())
	if err != nil {
		return err
	}
	if err := w.emit(tok); err != nil {
		return err
	}
	w.c.sess.setDatabase(name)
	return w.Info(databaseChangedInfo(name))
}

func databaseChangedInfo(name string) *Error {
	return &Error{Number: 5701, State: 2, Message: fmt.Sprintf("Changed database context to '%s'.", name)}
}

func (w *resultWriter) BeginTransaction() (uint64, error) {
	if w.err != nil {
		return 0, w.err
	}
	if open := w.c.sess.Transaction(); open != 0 {
		return 0, fmt.Errorf("tds: BeginTransaction while transaction %d is open (the handler tracks nesting; call it only for the outermost BEGIN TRAN)", open)
	}
	id := w.c.srv.nextTransaction()
	if err := w.emit(appendEnvChangeBytes(nil, envBeginTran, appendU64(nil, id), nil)); err != nil {
		return 0, err
	}
	w.c.sess.setTransaction(id)
	return id, nil
}

func (w *resultWriter) endTransaction(typ byte) error {
	if w.err != nil {
		return w.err
	}
	open := w.c.sess.Transaction()
	if open == 0 {
		return errors.New("tds: no transaction is open")
	}
	if err := w.emit(appendEnvChangeBytes(nil, typ, nil, appendU64(nil, open))); err != nil {
		return err
	}
	w.c.sess.setTransaction(0)
	return nil
}

func (w *resultWriter) CommitTransaction() error   { return w.endTransaction(envCommitTran) }
func (w *resultWriter) RollbackTransaction() error { return w.endTransaction(envRollbackTran) }

func (w *resultWriter) ReturnStatus(status int32) error {
	if !w.inRPC {
		return errors.New("tds: ReturnStatus outside an RPC")
	}
	w.returnStatus = status
	return nil
}

func (w *resultWriter) ReturnValue(p Param) error {
	if w.err != nil {
		return w.err
	}
	if !w.inRPC {
		return errors.New("tds: ReturnValue outside an RPC")
	}
	codec, err := newColumnCodec(p.Type, false)
	if err != nil {
		return fmt.Errorf("tds: output parameter %s: %w", p.Name, err)
	}
	ordinal := 0
	for i, cp := range w.call.Params {
		if equalFoldASCII(cp.Name, p.Name) {
			ordinal = i
			break
		}
	}
	tok := appendU16([]byte{tokenReturnValue}, uint16(ordinal))
	if tok, err = appendBVarChar(tok, p.Name); err != nil {
		return fmt.Errorf("tds: output parameter name: %w", err)
	}
	tok = append(tok, 0x01) // status: output parameter
	tok = appendU32(tok, 0) // UserType
	tok = appendU16(tok, 0x0001)
	tok = append(tok, codec.typeInfo...)
	if tok, err = codec.appendValue(tok, p.Value); err != nil {
		return fmt.Errorf("tds: output parameter %s: %w", p.Name, err)
	}
	// Sent after RETURNSTATUS, just before the closing DONEPROC, like SQL
	// Server.
	w.returnValues = append(w.returnValues, tok)
	return nil
}

func (w *resultWriter) Flush() error {
	if w.err != nil {
		return w.err
	}
	if err := w.c.out.flush(); err != nil {
		w.err = err
		return err
	}
	return nil
}

// endCancelled ends the response a cancelled request was producing, after
// ATTENTION: whatever was already written stays, a held DONE goes out with
// MORE, and a final DONE (DONEPROC in an RPC) without MORE closes the
// message so that it is structurally valid. The acknowledgement (DONE with
// ATTN) follows as a message of its own (conn.replyAttention): tedious reads
// the rest of the cancelled response in one state and looks for the
// acknowledgement only in the next message (MS-TDS 3.2.5.7; an
// acknowledgement inside the same message made tedious' cancel time out,
// issue 14), and go-mssqldb accepts either.
func (w *resultWriter) endCancelled() error {
	if w.err != nil {
		return w.err
	}
	id := byte(tokenDone)
	if w.inRPC {
		id = tokenDoneProc
	}
	if err := w.emit(appendDone(nil, id, w.statusBits(), CmdNone, 0)); err != nil {
		return err
	}
	if err := w.c.out.end(); err != nil {
		w.err = err
		return err
	}
	return nil
}

// finish ends the response: the final DONE (batch, TM) or RETURNSTATUS,
// RETURNVALUEs and DONEPROC (RPC). extraStatus adds e.g. doneError.
func (w *resultWriter) finish(extraStatus uint16) error {
	if w.err != nil {
		return w.err
	}
	if err := w.closeSet(); err != nil {
		return err
	}
	status := w.statusBits() | extraStatus
	if w.errorSinceDone {
		status |= doneError
	}
	if w.inRPC {
		if err := w.emit(appendReturnStatus(nil, w.returnStatus)); err != nil {
			return err
		}
		for _, rv := range w.returnValues {
			if err := w.emit(rv); err != nil {
				return err
			}
		}
		if w.anyError {
			status |= doneError
		}
		if err := w.emit(appendDone(nil, tokenDoneProc, status, CmdExec, 0)); err != nil {
			return err
		}
	} else if w.pending && extraStatus == 0 && !w.errorSinceDone {
		// The held DONE is the last token: send it without MORE.
		w.pending = false
		if err := w.c.out.write(appendDone(nil, tokenDone, w.pendStatus, w.pendCmd, w.pendRows)); err != nil {
			w.err = err
			return err
		}
	} else if err := w.emit(appendDone(nil, tokenDone, status, CmdNone, 0)); err != nil {
		return err
	}
	if err := w.c.out.end(); err != nil {
		w.err = err
		return err
	}
	return nil
}

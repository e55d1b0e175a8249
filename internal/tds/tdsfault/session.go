package tdsfault

import (
	"context"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/tds"
)

// session applies the rules to one connection's requests.
type session struct {
	in    *Injector
	inner tds.SessionHandler
}

func (s *session) Batch(ctx context.Context, b *tds.Batch, w tds.ResultWriter) error {
	if err := s.apply(ctx, b.SQL, true); err != nil {
		return err
	}
	return s.inner.Batch(ctx, b, w)
}

func (s *session) RPC(ctx context.Context, call *tds.RPCCall, w tds.ResultWriter) error {
	text, ok := rpcText(call)
	if err := s.apply(ctx, text, ok); err != nil {
		return err
	}
	return s.inner.RPC(ctx, call, w)
}

// Transaction requests carry no text: no rule applies to them.
func (s *session) Transaction(ctx context.Context, req *tds.TransactionRequest, w tds.ResultWriter) error {
	return s.inner.Transaction(ctx, req, w)
}

func (s *session) Close() { s.inner.Close() }

// rpcText is the statement text of an sp_executesql or sp_prepexec call;
// ok is false for other calls, which only the empty pattern matches.
func rpcText(call *tds.RPCCall) (string, bool) {
	if x, ok := call.ExecuteSQL(); ok {
		return x.Statement, true
	}
	if call.ProcID != tds.ProcIDPrepExec && !strings.EqualFold(call.ProcName, "sp_prepexec") && !strings.EqualFold(call.ProcName, "sys.sp_prepexec") {
		return "", false
	}
	// sp_prepexec @handle OUTPUT, @params, @stmt, args...
	for i, p := range call.Params {
		if stmt, isString := p.Value.(string); isString && (strings.EqualFold(p.Name, "@stmt") || p.Name == "" && i == 2) {
			return stmt, true
		}
	}
	return "", false
}

// apply fires the first rule matching text. A request without text (hasText
// false) is matched only by the empty pattern.
func (s *session) apply(ctx context.Context, text string, hasText bool) error {
	if s.in.Pending() == 0 || s.killed() {
		return nil // a killed session's request goes straight to the handler, which refuses it
	}
	r := s.in.take(text, hasText)
	if r == nil {
		return nil
	}
	switch r.kind {
	case kindDrop:
		return tds.ErrDropConnection
	case kindError:
		e := r.err
		return &e
	}
	return s.hold(ctx, r.delay)
}

// hold waits d, or until the client cancels or the session is killed. A
// killed session's held request never runs: the connection is dropped, as
// KILL does.
func (s *session) hold(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	if s.in.onHold != nil {
		s.in.onHold()
	}
	var killed <-chan struct{}
	if k, ok := s.inner.(Session); ok {
		killed = k.Killed()
	}
	select {
	case <-t.C:
		return nil
	case <-killed:
		return tds.ErrDropConnection
	case <-ctx.Done():
		if k, ok := s.inner.(Session); ok {
			k.HoldCancelled()
		}
		return ctx.Err()
	}
}

func (s *session) killed() bool {
	k, ok := s.inner.(Session)
	if !ok {
		return false
	}
	select {
	case <-k.Killed():
		return true
	default:
		return false
	}
}

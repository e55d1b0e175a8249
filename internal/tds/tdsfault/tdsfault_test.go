package tdsfault

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/tds"
)

// fakeHandler records every call it sees, with the exact arguments.
type fakeHandler struct {
	mu     sync.Mutex
	calls  []string
	args   []any
	killed chan struct{} // nil: not a Session
	cancel int
}

func (f *fakeHandler) record(call string, arg any) {
	f.mu.Lock()
	f.calls = append(f.calls, call)
	f.args = append(f.args, arg)
	f.mu.Unlock()
}

func (f *fakeHandler) Login(_ context.Context, s *tds.Session, req *tds.LoginRequest) (*tds.LoginResult, error) {
	f.record("login", req)
	if req.User == "refused" {
		return nil, &tds.LoginError{State: 8, Reason: "no"}
	}
	var sess tds.SessionHandler = &fakeSession{f: f}
	if f.killed != nil {
		sess = &killableSession{fakeSession{f: f}}
	}
	return &tds.LoginResult{Session: sess, Database: "db"}, nil
}

type fakeSession struct{ f *fakeHandler }

func (s *fakeSession) Batch(_ context.Context, b *tds.Batch, w tds.ResultWriter) error {
	s.f.record("batch", b)
	s.f.record("writer", w)
	return nil
}

func (s *fakeSession) RPC(_ context.Context, c *tds.RPCCall, w tds.ResultWriter) error {
	s.f.record("rpc", c)
	s.f.record("writer", w)
	return nil
}

func (s *fakeSession) Transaction(_ context.Context, r *tds.TransactionRequest, w tds.ResultWriter) error {
	s.f.record("tm", r)
	s.f.record("writer", w)
	return nil
}

func (s *fakeSession) Close() { s.f.record("close", nil) }

type killableSession struct{ fakeSession }

func (s *killableSession) Killed() <-chan struct{} { return s.f.killed }
func (s *killableSession) HoldCancelled() {
	s.f.mu.Lock()
	s.f.cancel++
	s.f.mu.Unlock()
}

// nopWriter is a distinct ResultWriter the handler must receive unchanged.
type nopWriter struct{ tds.ResultWriter }

func login(t *testing.T, h tds.Handler) tds.SessionHandler {
	t.Helper()
	res, err := h.Login(context.Background(), &tds.Session{SPID: 51}, &tds.LoginRequest{User: "sa"})
	if err != nil {
		t.Fatal(err)
	}
	return res.Session
}

// script drives one session through every kind of request.
func script(t *testing.T, h tds.Handler, w tds.ResultWriter) []error {
	t.Helper()
	ctx := context.Background()
	var errs []error
	_, err := h.Login(ctx, &tds.Session{SPID: 52}, &tds.LoginRequest{User: "refused"})
	errs = append(errs, err)
	s := login(t, h)
	errs = append(errs,
		s.Batch(ctx, &tds.Batch{SQL: "SELECT 1", ResetConnection: true}, w),
		s.RPC(ctx, &tds.RPCCall{ProcID: tds.ProcIDExecuteSQL, Params: []tds.Param{{Value: "SELECT @p"}, {Value: "@p int"}, {Name: "@p", Value: int64(1)}}}, w),
		s.RPC(ctx, &tds.RPCCall{ProcName: "dbo.Proc"}, w),
		s.Transaction(ctx, &tds.TransactionRequest{Kind: tds.TxBegin}, w),
	)
	s.Close()
	return errs
}

// With no rule configured, the inner handler sees exactly the calls and
// arguments (the same pointers) it sees unwrapped, and the same errors
// come back.
func TestNoRulesIsTransparent(t *testing.T) {
	for _, killable := range []bool{false, true} {
		t.Run(fmt.Sprint("killable=", killable), func(t *testing.T) {
			newFake := func() *fakeHandler {
				f := &fakeHandler{}
				if killable {
					f.killed = make(chan struct{})
				}
				return f
			}
			w := &nopWriter{}
			plain, wrapped := newFake(), newFake()
			plainErrs := script(t, plain, w)
			wrappedErrs := script(t, (&Injector{}).Wrap(wrapped), w)
			if !reflect.DeepEqual(plain.calls, wrapped.calls) {
				t.Fatalf("calls: wrapped %v, unwrapped %v", wrapped.calls, plain.calls)
			}
			if !reflect.DeepEqual(plain.args, wrapped.args) {
				t.Fatalf("arguments differ: wrapped %v, unwrapped %v", wrapped.args, plain.args)
			}
			if !reflect.DeepEqual(plainErrs, wrappedErrs) {
				t.Fatalf("errors: wrapped %v, unwrapped %v", wrappedErrs, plainErrs)
			}
			for i, a := range wrapped.args {
				if wrapped.calls[i] == "writer" && a != any(w) {
					t.Fatalf("the handler got writer %v, want the caller's", a)
				}
			}
		})
	}
}

// Each kind of rule applies to a matching request only, once, and a
// request it answers never reaches the handler.
func TestRuleAppliesToMatchingRequestOnly(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		set     func(in *Injector)
		wantErr func(error) bool
	}{
		{"drop", func(in *Injector) { in.DropConnection("fn_DBLOG") }, func(err error) bool { return errors.Is(err, tds.ErrDropConnection) }},
		{"error", func(in *Injector) { in.Error("fn_dblog", 1205, 13, "deadlocked") }, func(err error) bool {
			var e *tds.Error
			return errors.As(err, &e) && e.Number == 1205 && e.Severity == 13 && e.Message == "deadlocked"
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, in := &fakeHandler{}, &Injector{}
			tc.set(in)
			s := login(t, in.Wrap(f))
			if err := s.Batch(ctx, &tds.Batch{SQL: "SELECT 1"}, nil); err != nil {
				t.Fatalf("a batch that does not match: %v", err)
			}
			if err := s.Transaction(ctx, &tds.TransactionRequest{Kind: tds.TxBegin}, nil); err != nil {
				t.Fatalf("a TM request: %v", err)
			}
			if in.Pending() != 1 {
				t.Fatal("the rule fired on a request that does not match")
			}
			rpc := &tds.RPCCall{ProcID: tds.ProcIDExecuteSQL, Params: []tds.Param{{Value: "SELECT * FROM FN_DBLOG(NULL, NULL)"}}}
			if err := s.RPC(ctx, rpc, nil); !tc.wantErr(err) {
				t.Fatalf("the matching call returned %v", err)
			}
			if err := s.RPC(ctx, rpc, nil); err != nil {
				t.Fatalf("the rule fired twice: %v", err)
			}
			want := []string{"login", "batch", "tm", "rpc"}
			if got := f.calls; !reflect.DeepEqual(filter(got), want) {
				t.Fatalf("handler saw %v, want %v (the faulted call never reaches it)", got, want)
			}
		})
	}
}

func filter(calls []string) []string {
	var out []string
	for _, c := range calls {
		if c != "writer" {
			out = append(out, c)
		}
	}
	return out
}

func TestDropLogins(t *testing.T) {
	f, in := &fakeHandler{}, &Injector{}
	in.DropLogins(2)
	h := in.Wrap(f)
	for i := 0; i < 2; i++ {
		if _, err := h.Login(context.Background(), &tds.Session{}, &tds.LoginRequest{User: "sa"}); !errors.Is(err, tds.ErrDropConnection) {
			t.Fatalf("login %d: %v, want dropped", i, err)
		}
	}
	login(t, h)
	if !reflect.DeepEqual(f.calls, []string{"login"}) {
		t.Fatalf("handler saw %v, want only the third login", f.calls)
	}
}

// A Delay holds the matching request until the client cancels (the
// handler hears of the attention) or the session is killed (dropped); the
// held request never reaches the handler.
func TestDelayEndsOnAttentionOrKill(t *testing.T) {
	for _, end := range []string{"attention", "kill"} {
		t.Run(end, func(t *testing.T) {
			f, in := &fakeHandler{killed: make(chan struct{})}, &Injector{}
			in.Delay("waitfor me", time.Hour)
			held := make(chan struct{})
			in.onHold = func() { close(held) }
			s := login(t, in.Wrap(f))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- s.Batch(ctx, &tds.Batch{SQL: "WAITFOR ME"}, nil) }()
			select {
			case <-held:
			case <-time.After(20 * time.Second):
				t.Fatal("the rule never fired")
			}
			if end == "kill" {
				close(f.killed)
			} else {
				cancel()
			}
			var err error
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("the held request did not end")
			}
			switch {
			case end == "kill" && !errors.Is(err, tds.ErrDropConnection):
				t.Fatalf("killed: %v, want the connection dropped", err)
			case end == "attention" && !errors.Is(err, context.Canceled):
				t.Fatalf("cancelled: %v, want context.Canceled", err)
			case end == "attention" && f.cancel != 1:
				t.Fatalf("the handler heard of %d cancelled holds, want 1", f.cancel)
			}
			if got := filter(f.calls); !reflect.DeepEqual(got, []string{"login"}) {
				t.Fatalf("the held request reached the handler: %v", got)
			}
		})
	}
}

// A Delay that runs out passes the request on unchanged.
func TestDelayPassesOn(t *testing.T) {
	f, in := &fakeHandler{}, &Injector{}
	in.Delay("", time.Millisecond)
	s := login(t, in.Wrap(f))
	b := &tds.Batch{SQL: "SELECT 1"}
	if err := s.Batch(context.Background(), b, nil); err != nil {
		t.Fatal(err)
	}
	if len(f.args) != 3 || f.args[1] != any(b) {
		t.Fatalf("handler saw %v, want the same batch", f.args)
	}
}

// The text a rule sees: a batch's SQL, the statement of sp_executesql and
// sp_prepexec; a call by procedure name or a TM request has none, and only
// the empty pattern matches it.
func TestRequestText(t *testing.T) {
	ctx := context.Background()
	prepexec := &tds.RPCCall{ProcID: tds.ProcIDPrepExec, Params: []tds.Param{{Name: "@handle", Output: true}, {Value: "@p int"}, {Value: "SELECT * FROM t WHERE v = @p"}, {Value: int64(1)}}}
	byName := &tds.RPCCall{ProcName: "dbo.WHERE_v"}
	for _, tc := range []struct {
		pattern string
		call    *tds.RPCCall
		want    bool
	}{
		{"where V =", prepexec, true},
		{"@p int", prepexec, false}, // the declaration is not the statement
		{"where_v", byName, false},
		{"", byName, true},
	} {
		in := &Injector{}
		in.Error(tc.pattern, 50000, 16, "injected")
		s := login(t, in.Wrap(&fakeHandler{}))
		err := s.RPC(ctx, tc.call, nil)
		if got := err != nil; got != tc.want {
			t.Errorf("pattern %q on %s: fired %v, want %v", tc.pattern, tc.call.ProcName, got, tc.want)
		}
	}
	in := &Injector{}
	in.Error("", 50000, 16, "injected")
	s := login(t, in.Wrap(&fakeHandler{}))
	if err := s.Transaction(ctx, &tds.TransactionRequest{Kind: tds.TxBegin}, nil); err != nil || in.Pending() != 1 {
		t.Fatalf("a TM request: %v, pending %d; want no rule applied", err, in.Pending())
	}
}

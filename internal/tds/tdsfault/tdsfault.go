// Package tdsfault injects failures into a TDS server for tests, by
// wrapping the server's tds.Handler as net/http middleware wraps an
// http.Handler: Injector.Wrap returns a Handler that, for a request matching
// a configured rule, drops the connection, answers with an error or holds
// the request for a while before passing it on.
//
// What it must not do:
//   - know T-SQL. A rule matches a request by a case-insensitive substring
//     of its text (the batch text, or the statement of sp_executesql and
//     sp_prepexec), the way tests ask; nothing is parsed or interpreted.
//   - change anything when no rule is configured: the wrapped handler then
//     sees exactly the calls, arguments and writers it would see unwrapped.
//   - reach into the handler's state. The two things it needs from a
//     session (is it killed, tell it about a cancelled hold) come through
//     the optional Session interface.
//
// Faults that act inside a running batch (a trigger that commits the
// transaction) are not here: they change the engine's transaction state and
// so live in the engine (internal/standin).
package tdsfault

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/queryreplay/queryreplay/internal/tds"
)

// Session is implemented by an inner tds.SessionHandler that wants the
// wrapper to honour its life cycle. Both methods are optional together:
// a session handler without them is wrapped all the same (a held request
// then ends only by its delay or by ATTENTION).
type Session interface {
	// Killed is closed when the session is killed (KILL): a request held by
	// a Delay stops waiting and the connection is dropped, and a killed
	// session's later requests skip the rules (the handler refuses them).
	Killed() <-chan struct{}
	// HoldCancelled tells the handler that the client cancelled (ATTENTION)
	// a request while a Delay held it, before the handler saw it: SQL
	// Server still reports the attention.
	HoldCancelled()
}

// Injector holds the fault rules of one server. The zero value has no
// rules; it is safe for concurrent use.
type Injector struct {
	mu         sync.Mutex
	rules      []*rule
	dropLogins int
	onHold     func() // tests: called when a Delay begins holding a request
}

type kind int

const (
	kindDrop kind = iota
	kindDelay
	kindError
)

type rule struct {
	match string // lower case; "" matches every request
	kind  kind
	delay time.Duration
	err   tds.Error
}

// DropConnection closes the socket, without a reply, at the next request
// whose text contains match.
func (in *Injector) DropConnection(match string) { in.add(&rule{match: match, kind: kindDrop}) }

// Delay holds the next matching request for d before passing it on
// (ATTENTION still cancels it, and KILL ends it).
func (in *Injector) Delay(match string, d time.Duration) {
	in.add(&rule{match: match, kind: kindDelay, delay: d})
}

// Error answers the next matching request with the given SQL Server error
// instead of passing it on.
func (in *Injector) Error(match string, number int32, severity uint8, message string) {
	in.add(&rule{match: match, kind: kindError,
		err: tds.Error{Number: number, Severity: severity, State: 1, Line: 1, Message: message}})
}

// DropLogins makes the next n logins fail by dropping the connection.
func (in *Injector) DropLogins(n int) {
	in.mu.Lock()
	in.dropLogins += n
	in.mu.Unlock()
}

// Pending is the number of request rules that have not fired yet (a test
// waits for it to fall to know a Delay is holding its request).
func (in *Injector) Pending() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.rules)
}

func (in *Injector) add(r *rule) {
	r.match = strings.ToLower(r.match)
	in.mu.Lock()
	in.rules = append(in.rules, r)
	in.mu.Unlock()
}

// take removes and returns the first rule matching text, or nil. Without
// text only the empty pattern matches.
func (in *Injector) take(text string, hasText bool) *rule {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.rules) == 0 {
		return nil
	}
	lower := strings.ToLower(text)
	for i, r := range in.rules {
		if r.match == "" || hasText && strings.Contains(lower, r.match) {
			in.rules = append(in.rules[:i], in.rules[i+1:]...)
			return r
		}
	}
	return nil
}

func (in *Injector) takeLogin() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.dropLogins == 0 {
		return false
	}
	in.dropLogins--
	return true
}

// Wrap returns h with the injector's rules applied in front of it.
func (in *Injector) Wrap(h tds.Handler) tds.Handler { return &handler{in: in, inner: h} }

type handler struct {
	in    *Injector
	inner tds.Handler
}

// Login drops the connection while DropLogins has logins left to drop,
// and otherwise wraps the session the inner handler returns.
func (h *handler) Login(ctx context.Context, s *tds.Session, req *tds.LoginRequest) (*tds.LoginResult, error) {
	if h.in.takeLogin() {
		return nil, tds.ErrDropConnection
	}
	res, err := h.inner.Login(ctx, s, req)
	if err != nil || res == nil || res.Session == nil {
		return res, err
	}
	wrapped := *res
	wrapped.Session = h.in.WrapSession(res.Session)
	return &wrapped, nil
}

// WrapSession applies the injector's request rules in front of one
// session handler (Wrap does it for every session a login returns).
func (in *Injector) WrapSession(s tds.SessionHandler) tds.SessionHandler {
	return &session{in: in, inner: s}
}

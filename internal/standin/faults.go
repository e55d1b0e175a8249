package standin

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/queryreplay/queryreplay/internal/tds"
)

// Faults injects failures for tests. Each rule matches statements by a
// case-insensitive substring of the batch text ("" matches every batch) and
// fires once unless Times says otherwise.
type Faults struct {
	srv        *Server
	mu         sync.Mutex
	rules      []*faultRule
	dropLogins int
	txnFaults  []*txnFault // safety.go
}

type faultRule struct {
	match string
	kind  string // drop, delay, error
	delay time.Duration
	err   *SQLError
	times int
}

func (f *Faults) add(r *faultRule) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.times == 0 {
		r.times = 1
	}
	f.rules = append(f.rules, r)
}

// DropConnection closes the socket, without a reply, at the next batch whose
// text contains match.
func (f *Faults) DropConnection(match string) { f.add(&faultRule{match: match, kind: "drop"}) }

// Delay holds the next matching batch for d before executing it (ATTENTION
// still cancels it).
func (f *Faults) Delay(match string, d time.Duration) {
	f.add(&faultRule{match: match, kind: "delay", delay: d})
}

// Error answers the next matching batch with the given SQL Server error
// instead of executing it.
func (f *Faults) Error(match string, number int32, severity uint8, message string) {
	f.add(&faultRule{match: match, kind: "error", err: &SQLError{Number: number, Class: severity, State: 1, Message: message, Line: 1}})
}

// DropLogins makes the next n logins fail by dropping the connection.
func (f *Faults) DropLogins(n int) {
	f.mu.Lock()
	f.dropLogins += n
	f.mu.Unlock()
}

// Kill ends a session as KILL <spid> does
// (https://learn.microsoft.com/en-us/sql/t-sql/language-elements/kill-transact-sql):
// its open transaction rolls back, and its running request — held by a Delay
// fault, in WAITFOR, or waiting for a lock — is aborted and never executes
// afterwards; the client finds the connection closed (the request gets no
// reply). A later request on the connection finds it closed too.
func (f *Faults) Kill(spid int) bool {
	s := f.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.conns[spid]
	if !ok {
		return false
	}
	s.killLocked(c)
	return true
}

// SPIDs lists the connected sessions.
func (f *Faults) SPIDs() []int {
	s := f.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	for id := range s.conns {
		out = append(out, id)
	}
	return out
}

func (f *Faults) loginFault() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dropLogins > 0 {
		f.dropLogins--
		return tds.ErrDropConnection
	}
	return nil
}

// before applies the first matching rule to a batch.
func (f *Faults) before(ctx context.Context, c *connState, sql string) error {
	f.mu.Lock()
	var hit *faultRule
	for i, r := range f.rules {
		if r.match == "" || strings.Contains(strings.ToLower(sql), strings.ToLower(r.match)) {
			hit = r
			r.times--
			if r.times <= 0 {
				f.rules = append(f.rules[:i], f.rules[i+1:]...)
			}
			break
		}
	}
	f.mu.Unlock()
	if hit == nil {
		return nil
	}
	switch hit.kind {
	case "drop":
		return tds.ErrDropConnection
	case "error":
		return toTDS(hit.err)
	case "delay":
		t := time.NewTimer(hit.delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.killCh:
			return tds.ErrDropConnection
		}
	}
	return nil
}

package standin

import (
	"time"

	"github.com/queryreplay/queryreplay/internal/tds/tdsfault"
)

// Faults is the stand-in's test control for failures and sessions.
//
//   - Request faults — DropConnection, Delay, Error, DropLogins (and Pending)
//     — come from the embedded tdsfault.Injector. They act in front of the
//     stand-in: Running serves Injector.Wrap(Server), so the executor never
//     sees them, and a Server used without Running has none.
//   - Kill and SPIDs act on the server's sessions, as KILL and
//     sys.dm_exec_sessions would.
//   - EndTransactionIn and ReplaceTransactionIn (safety.go) stay in the
//     engine: they model a trigger that commits, which changes the session's
//     transaction after the batch's statements ran; no wrapper around the
//     handler can reach that state without sending T-SQL of its own (an extra
//     batch, visible in events and the input buffer).
type Faults struct {
	*tdsfault.Injector

	srv *Server
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

// Killed implements tdsfault.Session: closed once the session is KILLed,
// so a request a Delay holds stops waiting.
func (c *connState) Killed() <-chan struct{} { return c.killCh }

// HoldCancelled implements tdsfault.Session: the client cancelled a request
// a Delay held before it ran; SQL Server still fires the attention event.
func (c *connState) HoldCancelled() {
	s := c.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	s.useClock(c)
	c.attention(time.Now())
}

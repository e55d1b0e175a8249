package standin

import "time"

// Event time is simulated per session. Server.clock is the clock of the
// session holding the server latch: work advances it by what the work
// would cost on a real server (advance), and it is raised to the wall
// clock (now) where a real server's time would have passed too: when the
// session's batch or query starts, and when a real wait ends (a lock, a
// memory grant, WAITFOR DELAY). Sessions run
// side by side (the latch is given up every few hundred rows and around
// network writes), so a session that takes the latch brings its own
// clock back with it: another session's statement — a monitor polling
// sys.dm_exec_requests while a traced batch drains its rows — never moves
// the traced batch's clock, and so never stretches its operators' times.
// Sessions meet only through locks: a lock wait ends no earlier than the
// blocker released its locks on the blocker's clock (waitWhile).

// connClock is one session's event clock while another holds the latch.
type connClock struct {
	at         time.Time // the session's event time when it last gave up the latch; zero: never ran
	locksFreed time.Time // when the session last released its transaction's locks, on its clock
}

// clockOwner is the session whose clock Server.clock is; nil: none (the
// server's own work, e.g. a scenario's blocker rolling back).
type clockOwner struct{ conn *connState }

// useClock makes c's event clock the server's (the caller holds the
// latch). The session that ran before keeps the time it reached; a session
// that never ran starts at the wall clock. A nil c keeps the current time
// but no session's clock moves with it.
func (s *Server) useClock(c *connState) {
	prev := s.clockOwner.conn
	if prev == c {
		return
	}
	if prev != nil {
		prev.clock.at = s.clock
	}
	s.clockOwner.conn = c
	if c == nil {
		return
	}
	if c.clock.at.IsZero() {
		c.clock.at = s.opts.Now().UTC()
	}
	s.clock = c.clock.at
}

// notBefore raises the running session's clock to t: what happens next
// happens no earlier than t (the end of a lock wait after the release).
func (s *Server) notBefore(t time.Time) {
	if t.After(s.clock) {
		s.clock = t
	}
}

// locksReleased notes when c released its locks, on the running clock.
func (s *Server) locksReleased(c *connState) {
	if c != nil {
		c.clock.locksFreed = s.clock
	}
}

// paceDelay is how far the running session's event clock is ahead of the
// wall clock under Options.PaceToWallClock (0 otherwise); the caller holds
// the latch.
func (s *Server) paceDelay() time.Duration {
	if !s.opts.PaceToWallClock {
		return 0
	}
	return s.clock.Sub(s.opts.Now())
}

// waitPace waits d without the latch (the caller gave it up), or until the
// request is cancelled or its session killed: the check after the wait
// ends the statement then.
func (x *execCtx) waitPace(d time.Duration) {
	if d <= 0 {
		return
	}
	var done <-chan struct{}
	if x.ctx != nil {
		done = x.ctx.Done()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-done:
	case <-x.conn.killCh:
	}
}

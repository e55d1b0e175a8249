package tracer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/queryreplay/queryreplay/pkg/bundle"
)

// Who blocked the traced batch. The event session sees only the traced
// session, so a lock wait on the timeline cannot say who held the lock.
// While the batch runs, the control connection therefore samples
// sys.dm_exec_requests for the traced session every BlockerInterval; when
// blocking_session_id is set, it records the blocker, the wait type, the
// wait time and the wait resource, and reads the blocker's login, host
// and program from sys.dm_exec_sessions (and, only when
// Options.BlockerStatements allows it, its last batch from
// sys.dm_exec_input_buffer). Consecutive samples of the same wait make one
// BlockingSample with its first and last sighting.
//
// Every statement is a SELECT of a DMV: nothing changes on the server. The
// DMVs show other sessions only to a login with VIEW SERVER STATE (VIEW
// SERVER PERFORMANCE STATE on SQL Server 2022 and later), which the
// permission pre-check already asks for:
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-requests-transact-sql
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-sessions-transact-sql
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-input-buffer-transact-sql
// wait_resource's formats (KEY: db:hobt (hash), PAGE: db:file:page, …):
// https://learn.microsoft.com/en-us/troubleshoot/sql/database-engine/performance/understand-resolve-blocking
//
// Sampling never fails a trace: a refusal or an error stops it and is
// noted once in Result.BlockingNote (and the warnings). The watchdog has a
// connection of its own: when it must act it tells the sampler to stop and
// does not wait for a sample in flight (guard.go).

// Sampling defaults.
const (
	// DefaultBlockerInterval is how often the traced request is sampled.
	DefaultBlockerInterval = 100 * time.Millisecond
	// DefaultMaxBlockerSamples bounds the blocking intervals kept.
	DefaultMaxBlockerSamples = 100
)

// blockerQueryTimeout bounds one sampling query (a variable for tests).
var blockerQueryTimeout = 5 * time.Second

// blockerRow is one sample of the traced request.
type blockerRow struct {
	session  int
	waitType string
	waitMs   int64
	resource string
}

// blockerSession is what was learned about one blocking session.
type blockerSession struct {
	login, host, program, status, statement, note string
}

// blockerSampler samples the traced request while the batch runs.
type blockerSampler struct {
	r        *run
	ctx      context.Context // not cancelled with the batch: a cancelled query could spoil the control connection
	start    time.Time
	interval time.Duration
	max      int

	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}

	samples     []bundle.BlockingSample
	current     *bundle.BlockingSample // the last element of samples while its wait goes on; nil once a sample saw no blocking (or it was not kept)
	sessions    map[int]*blockerSession
	dropped     int         // intervals not kept: the cap was reached
	droppedLast *blockerRow // the last sample not kept, so one interval counts once
	note        string
}

// startBlockerSampler starts sampling the traced request; the returned
// function stops it and waits until its last statement is done (safe to
// call more than once, from more than one goroutine).
func (r *run) startBlockerSampler(ctx context.Context, start time.Time) func() {
	s := &blockerSampler{r: r, ctx: context.WithoutCancel(ctx), start: start, interval: r.o.BlockerInterval, max: r.o.MaxBlockerSamples,
		stop: make(chan struct{}), done: make(chan struct{}), sessions: map[int]*blockerSession{}}
	r.blockers = s
	if s.interval < 0 || s.max < 0 {
		close(s.done)
		return func() {}
	}
	go s.loop()
	return func() {
		s.signal()
		<-s.done
	}
}

// signal tells the sampler to take no further sample, without waiting.
func (s *blockerSampler) signal() { s.stopOnce.Do(func() { close(s.stop) }) }

// busy tells whether the sampler has not yet returned (a sample may be in
// flight on the control connection).
func (s *blockerSampler) busy() bool {
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

func (s *blockerSampler) loop() {
	defer close(s.done)
	t := time.NewTimer(s.interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		select {
		case <-s.stop: // stopped while the timer fired: the batch is over
			return
		default:
		}
		if !s.sampleOnce() {
			return
		}
		t.Reset(s.interval)
	}
}

// sampleOnce reads the traced request once; false stops sampling.
func (s *blockerSampler) sampleOnce() bool {
	before := time.Now()
	row, found, err := s.readRequest()
	at := before.Add(time.Since(before) / 2)
	if err != nil {
		s.fail("read sys.dm_exec_requests", err)
		return false
	}
	if !found {
		// the request is between statements or done, or the login cannot
		// see other sessions: the traced session itself tells which
		visible, err := s.tracedVisible()
		if err != nil {
			s.fail("read sys.dm_exec_sessions", err)
			return false
		}
		if !visible {
			msg := "who blocked the batch was not sampled: the login cannot see the traced session in sys.dm_exec_requests (it needs VIEW SERVER STATE; VIEW SERVER PERFORMANCE STATE on SQL Server 2022 and later)"
			s.note = msg
			return false
		}
		s.current, s.droppedLast = nil, nil
		return true
	}
	if row.session == 0 {
		s.current, s.droppedLast = nil, nil
		return true
	}
	s.record(row, at)
	return true
}

// record adds a blocked sample: it extends the current interval when the
// wait is the same one, else starts a new one (within the cap).
func (s *blockerSampler) record(row blockerRow, at time.Time) {
	us := at.Sub(s.start).Microseconds()
	if c := s.current; c != nil && c.SessionID == row.session && c.WaitType == row.waitType && c.WaitResource == row.resource && row.waitMs >= c.WaitTimeMs {
		c.LastSeenUs, c.LastSeen, c.WaitTimeMs = us, at.UTC(), row.waitMs
		c.Samples++
		return
	}
	s.current = nil
	if len(s.samples) >= s.max {
		if d := s.droppedLast; d == nil || d.session != row.session || d.waitType != row.waitType || d.resource != row.resource || row.waitMs < d.waitMs {
			s.dropped++ // a new interval; the same wait goes on uncounted
		}
		s.droppedLast = &row
		return
	}
	b := bundle.BlockingSample{SessionID: row.session, WaitType: row.waitType, WaitResource: row.resource, FirstSeenUs: us, LastSeenUs: us,
		FirstSeen: at.UTC(), LastSeen: at.UTC(), WaitStartUs: max(0, us-row.waitMs*1000), WaitTimeMs: row.waitMs, Samples: 1}
	if row.session > 0 {
		info := s.session(row.session)
		b.Login, b.Host, b.Program, b.Status, b.Statement, b.Note = info.login, info.host, info.program, info.status, info.statement, info.note
	}
	s.samples = append(s.samples, b)
	s.current = &s.samples[len(s.samples)-1]
}

// readRequest reads the traced request's row of sys.dm_exec_requests.
func (s *blockerSampler) readRequest() (blockerRow, bool, error) {
	q := fmt.Sprintf("%sSELECT blocking_session_id, wait_type, wait_time, wait_resource FROM sys.dm_exec_requests WHERE session_id = %d",
		s.r.spec.Marker(), s.r.info.spid)
	var blocker, waitMs sql.NullInt64
	var waitType, resource sql.NullString
	if err := s.queryRow(q, &blocker, &waitType, &waitMs, &resource); err != nil {
		if errors.Is(err, errNoRow) {
			return blockerRow{}, false, nil
		}
		return blockerRow{}, false, err
	}
	return blockerRow{session: int(blocker.Int64), waitType: waitType.String, waitMs: waitMs.Int64, resource: strings.TrimSpace(resource.String)}, true, nil
}

// tracedVisible tells whether the control connection sees the traced
// session in sys.dm_exec_sessions at all.
func (s *blockerSampler) tracedVisible() (bool, error) {
	q := fmt.Sprintf("%sSELECT COUNT(*) FROM sys.dm_exec_sessions WHERE session_id = %d", s.r.spec.Marker(), s.r.info.spid)
	var n sql.NullInt64
	if err := s.queryRow(q, &n); err != nil {
		return false, err
	}
	return n.Int64 > 0, nil
}

// session looks a blocking session up once.
func (s *blockerSampler) session(id int) *blockerSession {
	if b, ok := s.sessions[id]; ok {
		return b
	}
	b := &blockerSession{}
	s.sessions[id] = b
	q := fmt.Sprintf("%sSELECT login_name, host_name, program_name, status FROM sys.dm_exec_sessions WHERE session_id = %d", s.r.spec.Marker(), id)
	var login, host, program, status sql.NullString
	switch err := s.queryRow(q, &login, &host, &program, &status); {
	case errors.Is(err, errNoRow):
		b.note = "the session had ended when it was looked up"
		return b
	case err != nil:
		b.note = "sys.dm_exec_sessions could not be read: " + err.Error()
		return b
	}
	b.login, b.host, b.program, b.status = login.String, host.String, program.String, status.String
	if s.r.o.BlockerStatements {
		q = fmt.Sprintf("%sSELECT event_info FROM sys.dm_exec_input_buffer(%d, NULL)", s.r.spec.Marker(), id)
		var text sql.NullString
		if err := s.queryRow(q, &text); err != nil && !errors.Is(err, errNoRow) {
			b.note = "sys.dm_exec_input_buffer could not be read: " + err.Error()
		}
		b.statement = text.String
	}
	return b
}

func (s *blockerSampler) queryRow(q string, dest ...any) error {
	s.r.ctlMu.Lock() // the live producer shares the connection (livetrace.go)
	defer s.r.ctlMu.Unlock()
	ctx, cancel := context.WithTimeout(s.ctx, blockerQueryTimeout)
	defer cancel()
	err := queryRow(ctx, s.r.conn, "sample blockers", q, dest...)
	if err != nil && !errors.Is(err, errNoRow) {
		s.r.noteConnErr(err)
	}
	return err
}

// fail notes why sampling stopped.
func (s *blockerSampler) fail(step string, err error) {
	if cause := errors.Unwrap(err); cause != nil {
		err = cause // queryRow's "sample blockers: " adds nothing to step
	}
	msg := fmt.Sprintf("who blocked the batch was sampled only in part: %s failed: %v", step, err)
	if isPermissionDenied(err) {
		msg = fmt.Sprintf("who blocked the batch was not sampled: %s was refused (it needs VIEW SERVER STATE; VIEW SERVER PERFORMANCE STATE on SQL Server 2022 and later): %v", step, err)
	}
	s.note = msg // the message names the step, never the batch
}

// isPermissionDenied: SQL Server's Msg 297 (the user does not have
// permission) or 300 (… permission was denied on object …).
func isPermissionDenied(err error) bool {
	var se mssql.Error
	if errors.As(err, &se) {
		return se.Number == 297 || se.Number == 300
	}
	return strings.Contains(err.Error(), "permission was denied")
}

// finish moves what was sampled into the bundle.
func (s *blockerSampler) finish(b *bundle.Bundle) {
	if s == nil {
		return
	}
	b.Result.Blocking = s.samples
	note := s.note
	if s.dropped > 0 {
		msg := fmt.Sprintf("%d further blocking intervals were not kept (the cap is %d; raise MaxBlockerSamples)", s.dropped, s.max)
		note = strings.TrimPrefix(note+"; "+msg, "; ")
	}
	if note != "" {
		b.Result.BlockingNote = note
		s.r.warn("%s", note)
	}
}

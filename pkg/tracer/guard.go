package tracer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Limits on waiting. A trace never waits on a silent network past them.
// (Variables so that tests can shorten them.)
var (
	// controlIdle: how long any read on the control connection, or on the
	// traced connection outside the batch, may wait for a byte.
	controlIdle = 60 * time.Second
	// attentionGrace: after the batch's deadline go-mssqldb sends ATTENTION
	// and waits for its acknowledgement; the traced connection's network
	// deadline ends that wait.
	attentionGrace = 10 * time.Second
	// abortTimeout bounds the watchdog's STOP, check and KILL.
	abortTimeout = 15 * time.Second
)

// runBatch runs the user's batch on the traced connection under its
// deadline. When the deadline passes (or the trace is cancelled) while the
// batch still runs, or the traced connection is lost, abortTraced stops the
// session at once and KILLs the traced session from the watchdog's own
// connection, without waiting for the control connection (the blocker
// sampler may be in a query there, or the network may have swallowed it).
func (r *run) runBatch(ctx context.Context) ([]int64, time.Duration, error) {
	deadline := time.Now().Add(r.o.Timeout)
	qctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	setNetLimits(r.traced, 0, deadline.Add(attentionGrace))
	defer r.tickProgress()()
	finished := make(chan struct{})
	watched := make(chan struct{})
	sent := time.Now()
	stopSampler := r.startBlockerSampler(ctx, sent) // blocking.go
	stopLive := r.startLive(ctx, sent)              // livetrace.go
	go func() {
		defer close(watched)
		select {
		case <-finished:
		case <-qctx.Done():
			select {
			case <-finished:
				return
			default:
			}
			why, cause := fmt.Sprintf("the batch outlived its timeout of %s", r.o.Timeout), context.DeadlineExceeded
			if ctx.Err() != nil {
				why, cause = "the trace was cancelled while the batch ran", ctx.Err()
			}
			r.mu.Lock()
			r.abortCause = cause
			r.mu.Unlock()
			r.blockers.signal() // no new sample; one in flight is not waited for
			if r.live != nil {
				r.live.signal()
			}
			r.abortTraced(ctx, why)
			if r.blockers.busy() || r.live.busy() {
				// a sample still waits on the control connection: after an
				// abort the trace needs that connection no more (the
				// cleanup drops the session from the watchdog's if it must),
				// so it is given up rather than waited for
				setNetLimits(r.conn, controlIdle, time.Now())
			}
		}
	}()
	counts, dur, err := r.drain(qctx)
	stopSampler()
	stopLive()
	close(finished)
	<-watched
	if err != nil && !r.aborted && r.tracedIsBad() {
		r.abortTraced(ctx, "the traced connection was lost while the batch ran")
	}
	if !r.tracedIsBad() {
		setNetLimits(r.traced, controlIdle, time.Time{})
	}
	return counts, dur, err
}

// tickProgress reports progress once a second while the batch runs; the
// returned function stops it.
func (r *run) tickProgress() func() {
	if r.o.Progress == nil {
		return func() {}
	}
	r.progress("running", 0)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				r.progress("running", 0)
			case <-stop:
				return
			}
		}
	}()
	return func() { close(stop); wg.Wait() }
}

// drain runs the batch and drains every result set, counting rows and
// discarding values.
func (r *run) drain(ctx context.Context) ([]int64, time.Duration, error) {
	start := time.Now()
	query, args := tracedRequest(r.o)
	rows, err := r.traced.QueryContext(ctx, query, args...)
	if err != nil {
		r.noteTracedErr(err)
		return nil, time.Since(start), fmt.Errorf("run query: %w", err)
	}
	defer rows.Close()
	var counts []int64
	for {
		var n int64
		for rows.Next() {
			n++
			r.rows.Add(1)
		}
		counts = append(counts, n)
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		r.noteTracedErr(err)
		return counts, time.Since(start), fmt.Errorf("run query: %w", err)
	}
	if err := rows.Close(); err != nil {
		r.noteTracedErr(err)
		return counts, time.Since(start), fmt.Errorf("run query: %w", err)
	}
	if err := ctx.Err(); err != nil {
		r.noteTracedErr(err)
		return counts, time.Since(start), fmt.Errorf("run query: %w", err)
	}
	return counts, time.Since(start), nil
}

// abortTraced gives up on the traced connection: it stops the session at
// once (a running session filtered on an id the server may hand to the next
// connection must not outlive the trace), then KILLs the traced session if
// it is still the one QueryReplay opened (its locks go with it, even while a
// middlebox keeps its socket open). It runs on the watchdog connection,
// ignoring the caller's cancellation, within abortTimeout.
func (r *run) abortTraced(ctx context.Context, why string) {
	r.mu.Lock()
	if r.aborted {
		r.mu.Unlock()
		return
	}
	r.aborted, r.tracedBad = true, true
	r.mu.Unlock()
	setNetLimits(r.traced, 0, time.Now()) // nothing more is awaited from it
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
	defer cancel()
	// the watchdog's connection must not wait past the budget either
	setNetLimits(r.watch, controlIdle, time.Now().Add(abortTimeout))
	defer setNetLimits(r.watch, controlIdle, time.Time{})
	note := why
	if r.created && !r.stopped {
		if err := r.watchExec(actx, "stop event session", r.spec.StopDDL()); err != nil {
			note += fmt.Sprintf("; stopping the event session %s failed: %v", r.spec.Name, err)
		} else {
			r.stopped = true
		}
	}
	k := r.killTraced(actx)
	r.mu.Lock()
	r.abortNote, r.abortEnded, r.killFailed = note+"; "+k.note, k.ended, k.failed
	r.mu.Unlock()
}

type killResult struct {
	note   string
	ended  bool // QueryReplay's transaction was no longer open in the traced session
	failed bool // the traced session may still be there: not found gone, not killed
}

// killTraced KILLs the traced session
// (https://learn.microsoft.com/en-us/sql/t-sql/language-elements/kill-transact-sql)
// if sys.dm_exec_sessions still shows it with its login time, noting
// whether QueryReplay's transaction was still open in it
// (sys.dm_tran_session_transactions,
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-tran-session-transactions-transact-sql):
// a killed session's open transaction is rolled back.
func (r *run) killTraced(ctx context.Context) killResult {
	present, open, err := r.tracedSession(ctx)
	switch {
	case err != nil:
		return killResult{note: fmt.Sprintf("the traced session %d could not be looked up, so it was not killed (%v); its connection is closed instead, and the server rolls its transaction back when it notices", r.info.spid, err),
			failed: true}
	case !present:
		return killResult{note: "the traced session had already ended (the server rolls back the open transaction of a session that ends)"}
	case r.inTxn && !open:
		r.warn("QueryReplay's transaction was no longer open in the traced session when it was killed")
	}
	if err := r.watchExec(ctx, "kill the traced session", fmt.Sprintf("%sKILL %d", r.spec.Marker(), r.info.spid)); err != nil {
		return killResult{note: fmt.Sprintf("KILL of the traced session %d failed (%v); its connection is closed instead, and the server rolls its transaction back when it notices", r.info.spid, err),
			ended: r.inTxn && !open, failed: true}
	}
	gone := r.waitTracedGone(ctx)
	switch {
	case r.inTxn && !open:
		return killResult{note: "the traced session was killed, but QueryReplay's transaction was no longer open in it", ended: true}
	case !gone:
		return killResult{note: "the traced session was killed and is still rolling back"}
	case r.inTxn:
		r.rolledBack = true
		return killResult{note: "the traced session was killed and QueryReplay's transaction, open until then, was rolled back"}
	}
	return killResult{note: "the traced session was killed"}
}

// tracedSession tells whether the traced session is still there (same id
// and login time) and whether QueryReplay's transaction is open in it.
func (r *run) tracedSession(ctx context.Context) (present, open bool, err error) {
	var login sql.NullTime
	q := fmt.Sprintf("%sSELECT login_time FROM sys.dm_exec_sessions WHERE session_id = %d", r.spec.Marker(), r.info.spid)
	if err := queryRow(ctx, r.watch, "look up the traced session", q, &login); err != nil {
		if errors.Is(err, errNoRow) {
			return false, false, nil
		}
		r.watchBad = r.watchBad || isConnErr(err)
		return false, false, err
	}
	if !login.Valid || loginKey(login.Time) != loginKey(r.info.loginTime) {
		return false, false, nil // the id serves another connection now
	}
	q = fmt.Sprintf("%sSELECT transaction_id FROM sys.dm_tran_session_transactions WHERE session_id = %d", r.spec.Marker(), r.info.spid)
	rows, err := r.watch.QueryContext(ctx, q)
	if err != nil {
		r.watchBad = r.watchBad || isConnErr(err)
		return true, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var id sql.NullInt64
		if err := rows.Scan(&id); err != nil {
			return true, false, err
		}
		open = open || id.Int64 == r.txnID
	}
	return true, open, rows.Err()
}

// waitTracedGone polls until the killed session has left
// sys.dm_exec_sessions (its rollback is done) or ctx ends.
func (r *run) waitTracedGone(ctx context.Context) bool {
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, 500*time.Millisecond) {
		present, _, err := r.tracedSession(ctx)
		if err == nil && !present {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
	}
}

// abortError is the trace's error after abortTraced.
func (r *run) abortError(qerr error) error {
	r.mu.Lock()
	note, ended, cause := r.abortNote, r.abortEnded, r.abortCause
	r.mu.Unlock()
	if cause != nil {
		// what the driver saw (often EOF, once the session was killed) is
		// a consequence; the cause is the deadline or the cancellation
		qerr = fmt.Errorf("run query: %w", cause)
	}
	if qerr == nil {
		qerr = errors.New("run query: the batch did not finish")
	}
	if note == "" {
		note = "the traced connection failed"
	}
	if ended {
		return errors.Join(qerr, &TransactionEndedError{Detail: note})
	}
	return fmt.Errorf("%w (%s)", qerr, note)
}

// tracedRequest is what the traced connection sends: the batch alone, or,
// for a statement with parameters, sys.sp_executesql with the statement,
// its declarations and its values as arguments. The text is built from the
// number of values only (@v1, @v2, …: positional parameters of
// sp_executesql,
// https://learn.microsoft.com/en-us/sql/relational-databases/system-stored-procedures/sp-executesql-transact-sql),
// so the statement runs as the application ran it: the same text with the
// same declarations, whose cached plan it can reuse.
func tracedRequest(o Options) (string, []any) {
	if o.Params == nil {
		return o.SQL, nil
	}
	var b strings.Builder
	b.WriteString("EXEC sys.sp_executesql @stmt, @params")
	args := []any{sql.Named("stmt", o.SQL), sql.Named("params", o.Params.Decl)}
	for i, v := range o.Params.Values() {
		fmt.Fprintf(&b, ", @v%d", i+1)
		args = append(args, sql.Named(fmt.Sprintf("v%d", i+1), v))
	}
	return b.String(), args
}

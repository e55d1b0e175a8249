package tracer

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// cleanupTimeout is the cleanup's budget; it ignores the caller's
// cancellation (a cancelled trace must still drop its session), and
// retries with backoff until the budget is spent.
const cleanupTimeout = 30 * time.Second

// cleanup undoes whatever the run left, in order of harm: the session first
// (on the control connection, else on the watchdog's, else from fresh
// connections); a traced session whose connection was lost and that was not
// yet found gone is KILLed (from the watchdog's connection, or a fresh one
// if that failed); then the traced connection's transaction and trace flag
// — rolled back and turned off when it still answers, and in any case ended
// by closing the connection, on which the server rolls back whatever is
// open and the session-scoped trace flag goes.
func (r *run) cleanup(ctx context.Context) error {
	budget := r.o.cleanupBudget
	if budget <= 0 {
		budget = cleanupTimeout
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), budget)
	defer cancel()
	end, _ := cctx.Deadline()
	if r.conn != nil {
		setNetLimits(r.conn, controlIdle, end)
	}
	if r.traced != nil && !r.tracedIsBad() {
		setNetLimits(r.traced, controlIdle, end)
	}
	if r.watch != nil {
		setNetLimits(r.watch, controlIdle, end)
	}
	if r.created && r.conn != nil && !r.connBad {
		if err := r.exec(cctx, "drop event session", r.spec.DropDDL()); err == nil {
			r.created = false
		}
	}
	if r.created && r.watch != nil && !r.watchBad {
		if err := r.watchExec(cctx, "drop event session", r.spec.DropDDL()); err == nil {
			r.created = false
		}
	}
	kerr := r.killLost(cctx)
	r.cleanupTraced(cctx)
	for _, c := range []*Conn{&r.conn, &r.watch} {
		if *c != nil {
			discard(*c)
			*c = nil
		}
	}
	if !r.created {
		return kerr
	}
	if err := r.dropFresh(cctx, budget); err != nil {
		return errors.Join(kerr, fmt.Errorf("drop event session %s: %w (the next trace's sweep, or queryreplay sweep, drops it once this process's connections are gone)", r.spec.Name, err))
	}
	r.created = false
	return kerr
}

// killLost KILLs the traced session when its connection was lost or given
// up and nothing has yet made sure the session is gone: the watchdog did
// not run (the connection failed outside the batch) or its own connection
// failed it (a refused KILL is not retried: the abort's error says so).
// While a middlebox keeps the socket open the server keeps the session, and
// its transaction's locks, alive.
func (r *run) killLost(ctx context.Context) error {
	r.mu.Lock()
	need := r.traced != nil && r.info.spid != 0 && r.tracedBad && (!r.aborted || r.killFailed && r.watchBad)
	r.mu.Unlock()
	if !need {
		return nil
	}
	if r.watch == nil || r.watchBad {
		c, err := r.t.open.Open(ctx)
		if err != nil {
			return fmt.Errorf("the traced session %d could not be killed: the watchdog's connection failed and a fresh one could not be opened (%w); the server rolls its transaction back when it notices the closed connection", r.info.spid, err)
		}
		if r.watch != nil {
			discard(r.watch)
		}
		r.watch, r.watchBad = c, false
		end, _ := ctx.Deadline()
		setNetLimits(c, controlIdle, end)
	}
	kctx, cancel := context.WithTimeout(ctx, abortTimeout) // waiting for the rollback must leave budget for the rest
	defer cancel()
	k := r.killTraced(kctx)
	if k.failed {
		return errors.New(k.note)
	}
	return nil
}

func (r *run) cleanupTraced(ctx context.Context) {
	if r.traced == nil {
		return
	}
	if !r.tracedIsBad() {
		m := r.spec.Marker()
		if r.inTxn {
			if err := r.execTraced(ctx, "roll back", m+sqlRollback); err == nil {
				if count, _, err := r.transactionState(ctx, m+sqlTransactionState); err == nil && count == 0 {
					r.inTxn = false
				}
			}
		}
		if r.traceFlag && !r.tracedIsBad() {
			if err := r.execTraced(ctx, "re-enable read-ahead", m+sqlTraceOff); err == nil {
				r.traceFlag = false
			}
		}
	}
	// Always discarded: never pooled, and closing a connection whose
	// transaction is still open makes the server roll it back.
	discard(r.traced)
	r.traced = nil
}

// dropFresh drops the session from fresh connections, retrying with
// backoff (50 ms doubling to 2 s) until ctx's budget is spent: the server
// may be restarting or the network flapping.
func (r *run) dropFresh(ctx context.Context, budget time.Duration) error {
	attempts := 0
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		attempts++
		err := r.dropOnce(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d attempts over %s failed, the last: %w", attempts, budget, err)
		case <-time.After(wait):
		}
	}
}

func (r *run) dropOnce(ctx context.Context) error {
	c, err := r.t.open.Open(ctx)
	if err != nil {
		return err
	}
	defer discard(c)
	end, _ := ctx.Deadline()
	setNetLimits(c, controlIdle, end)
	_, err = c.ExecContext(ctx, r.spec.DropDDL())
	return err
}

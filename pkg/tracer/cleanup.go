package tracer

import (
	"context"
	"fmt"
	"time"
)

// cleanupTimeout is the cleanup's budget; it ignores the caller's
// cancellation (a cancelled trace must still drop its session), and
// retries with backoff until the budget is spent.
const cleanupTimeout = 30 * time.Second

// cleanup undoes whatever the run left, in order of harm: the session first
// (on the control connection, else from fresh connections), then the traced
// connection's transaction and trace flag — rolled back and turned off when
// it still answers, and in any case ended by closing the connection, on
// which the server rolls back whatever is open and the session-scoped
// trace flag goes.
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
	if r.created && r.conn != nil && !r.connBad {
		if err := r.exec(cctx, "drop event session", r.spec.DropDDL()); err == nil {
			r.created = false
		}
	}
	r.cleanupTraced(cctx)
	if r.conn != nil {
		discard(r.conn)
		r.conn = nil
	}
	if !r.created {
		return nil
	}
	if err := r.dropFresh(cctx, budget); err != nil {
		return fmt.Errorf("drop event session %s: %w (the next trace's sweep, or queryreplay sweep, drops it once this process's connections are gone)", r.spec.Name, err)
	}
	r.created = false
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

package tracer

import (
	"context"
	"fmt"
)

// TransactionEndedError is returned when the traced batch ended or replaced
// QueryReplay's transaction — a COMMIT the classifier could not see, in a
// trigger, a procedure or a function: what the batch changed before that
// point may be permanent. The trace's bundle, when there is one, carries
// the log records (a LOP_COMMIT_XACT among them) and RolledBack false.
type TransactionEndedError struct {
	// Replaced: a transaction other than QueryReplay's was open after the
	// batch (the batch committed and began again).
	Replaced bool
	// TranCount is @@TRANCOUNT after the batch.
	TranCount int
	// Detail says how it was found.
	Detail string
}

func (e *TransactionEndedError) Error() string {
	msg := "the batch ended QueryReplay's transaction: its changes may be permanent"
	if e.Replaced {
		msg = "the batch ended QueryReplay's transaction and began another: its changes may be permanent"
	}
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg + "; check the data the batch touches"
}

// verifyTransaction checks on the traced connection, after the batch, that
// QueryReplay's transaction is the one still open: @@TRANCOUNT at least 1
// and the transaction id unchanged. It first turns off the SET options that
// would make its own statements compile without running or return no rows.
// A *TransactionEndedError says the batch ended or replaced it; any other
// error that the check itself failed.
func (r *run) verifyTransaction(ctx context.Context) error {
	m := r.spec.Marker()
	if err := r.execTraced(ctx, "reset SET options", m+sqlResetOptions); err != nil {
		return fmt.Errorf("verify QueryReplay's transaction: %w", err)
	}
	count, id, err := r.transactionState(ctx, m+sqlTransactionState)
	if err != nil {
		return fmt.Errorf("verify QueryReplay's transaction: %w", err)
	}
	switch {
	case count >= 1 && id == r.txnID:
		return nil
	case count == 0:
		return &TransactionEndedError{TranCount: count, Detail: "@@TRANCOUNT was 0 after the batch"}
	}
	return &TransactionEndedError{Replaced: true, TranCount: count,
		Detail: fmt.Sprintf("the open transaction's id was %d after the batch, not %d", id, r.txnID)}
}

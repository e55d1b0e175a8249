package callstack

// SpinlockCategory is the category of spinlock frames (Spinlock<…>::Spin…,
// SpinlockBase::Backoff/Sleep).
const SpinlockCategory = "Spinlock"

// AttributeSpinlocks sets Owner on the spinlock frames of one stack
// (innermost frame first): the category of the nearest caller that is
// neither a spinlock frame, infrastructure nor unknown. A spinlock is named
// by what it protects — the LOCK_HASH spinlock under lck_lockInternal or
// XactLockInfo::ReleaseAll is the lock manager's ("Locking"), not a latch —
// and spinlock types are numbered differently in every build, so the
// caller, not the template argument, says whose it is.
func AttributeSpinlocks(stack []Resolved) {
	owner, display := "", ""
	for i := len(stack) - 1; i >= 0; i-- {
		r := &stack[i]
		c := r.Class
		switch {
		case c == nil:
		case c.Category == SpinlockCategory:
			r.Owner, r.OwnerDisplay = owner, display
		case c.Category != "Unknown" && c.Category != "" && !c.Infrastructure:
			owner, display = c.Category, c.CategoryDisplay
		}
	}
}

package findings

import (
	"fmt"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/timeline"
)

const (
	refLockEscalation = "https://learn.microsoft.com/en-us/sql/relational-databases/sql-server-transaction-locking-and-row-versioning-guide#lock-escalation"
	refAlterTable     = "https://learn.microsoft.com/en-us/sql/t-sql/statements/alter-table-transact-sql"
)

// lockEscalation: SQL Server replaced the statement's row or page locks
// on an object with one table (or, with LOCK_ESCALATION = AUTO on a
// partitioned table, partition) lock. One finding per object and mode:
// the lock it became, how many locks it replaced, and why.
func lockEscalation(a *analysis) []Finding {
	type key struct {
		object, mode, rtype string
	}
	groups := map[key][]int{}
	var order []key
	l := a.in.Trace.Lanes.Escalation
	for i := range l {
		k := key{objectName(a.in.Trace.ObjectOf(l[i].Object)), l[i].Mode, l[i].ResourceType}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	var out []Finding
	for _, k := range order {
		out = append(out, a.escalationFinding(l, groups[k], k.object, k.mode, k.rtype))
	}
	return out
}

func objectName(o *timeline.ObjectName) string {
	if o == nil {
		return ""
	}
	return o.String()
}

func (a *analysis) escalationFinding(l []timeline.EscalationEvent, idx []int, object, mode, rtype string) Finding {
	var locks uint64
	memory := false
	for _, i := range idx {
		locks += l[i].EscalatedLock
		memory = memory || strings.Contains(strings.ToLower(l[i].Cause), "memory")
	}
	on := object
	if on == "" {
		on = "an object the catalog does not name"
	}
	what := "table"
	if strings.EqualFold(rtype, "HOBT") {
		what = "partition"
	}
	f := Finding{
		Title: fmt.Sprintf("Lock escalation on %s: %s became one %s %s lock", on,
			plural(int64(locks), "row or page lock", "row or page locks"), mode, what),
		Severity: SeverityWarning,
		pending:  ev(LaneEscalation, idx),
		Numbers: []Number{num("escalatedLocks", float64(locks), "count", "events"),
			num("escalations", float64(len(idx)), "count", "events")},
		Reference: refLockEscalation,
	}
	who := "other sessions' reads and writes"
	if strings.HasPrefix(strings.ToUpper(mode), "S") || strings.EqualFold(mode, "IS") {
		who = "other sessions' writes"
	}
	f.Detail = fmt.Sprintf("Until the transaction ends, the %s %s lock blocks %s on the whole %s.", mode, what, who, what)
	if memory {
		f.Detail += " The cause was lock memory, not this statement's lock count: the instance's locks used too much memory."
	}
	f.Hint = "SQL Server escalates when one statement holds about 5,000 locks on one table or index (or lock memory runs " +
		"short). Change the rows in batches that each take fewer locks, each in its own transaction; an index that lets " +
		"the statement touch fewer rows takes fewer locks. ALTER TABLE … SET (LOCK_ESCALATION = AUTO) escalates to the " +
		"partition on a partitioned table; DISABLE prevents most escalations at the cost of lock memory (" + refAlterTable + ")."
	return f
}

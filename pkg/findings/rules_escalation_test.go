package findings

import (
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/timeline"
)

const orderLinesHoBT = 72057594049789952

// escalationTrace: key locks on dbo.OrderLines and, when escalate, the
// lock_escalation SQL Server writes when one statement passes its lock
// threshold.
func escalationTrace(t *testing.T, escalate bool, cause string) *timeline.Trace {
	cat := timeline.NewCatalog()
	cat.AddHoBT(5, orderLinesHoBT, timeline.ObjectName{Schema: "dbo", Table: "OrderLines", Index: "PK_OrderLines"})
	ev := newEvents()
	ev.at(0, "sqlserver", "sql_batch_starting", fs("batch_text", "x"))
	for i := int64(0); i < 50; i++ {
		ev.lock(100+i, -1, "X", orderLinesHoBT, "(abc)")
	}
	if escalate {
		ev.at(500, "sqlserver", "lock_escalation", fm("escalation_cause", 0, cause), fu("escalated_lock_count", 6248),
			fu("hobt_lock_count", 6248), fu("hobt_id", orderLinesHoBT), fm("resource_type", 5, "OBJECT"), fm("mode", 8, "X"),
			fu("database_id", 5))
	}
	ev.at(1000, "sqlserver", "sql_batch_completed", fu("duration", 1000))
	tr, _ := build(t, nil, cat, ev)
	return tr
}

func TestLockEscalation(t *testing.T) {
	f := one(t, analyze(t, Input{Trace: escalationTrace(t, true, "Lock threshold")}), "lock-escalation")
	if f.Title != "Lock escalation on dbo.OrderLines.PK_OrderLines: 6,248 row or page locks became one X table lock" {
		t.Errorf("title %q", f.Title)
	}
	if numberOf(t, f, "escalatedLocks") != 6248 || f.EvidenceTotal != 1 || f.Evidence[0].Lane != LaneEscalation || f.Start != 500 {
		t.Errorf("numbers %+v evidence %+v", f.Numbers, f.Evidence)
	}
	if !strings.Contains(f.Hint, "batches") || !strings.Contains(f.Hint, "LOCK_ESCALATION") || f.Reference != refLockEscalation ||
		!strings.Contains(f.Detail, "reads and writes") || strings.Contains(f.Detail, "lock memory") {
		t.Errorf("detail %q hint %q", f.Detail, f.Hint)
	}
	m := one(t, analyze(t, Input{Trace: escalationTrace(t, true, "Memory threshold")}), "lock-escalation")
	if !strings.Contains(m.Detail, "lock memory") {
		t.Errorf("memory cause: %q", m.Detail)
	}
	// Look-alike: many key locks, no escalation.
	none(t, analyze(t, Input{Trace: escalationTrace(t, false, "")}), "lock-escalation")
}

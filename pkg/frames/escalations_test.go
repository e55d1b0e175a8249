package frames

import (
	"testing"

	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// A trace with a lock escalation sends it as the escalations frame; one
// without sends no such frame (the other frames are unchanged).
func TestEscalationsFrame(t *testing.T) {
	src := sampleSource()
	for _, f := range build(t, src, Request{}) {
		if f.Name == "escalations" {
			t.Fatal("an escalations frame for a trace without escalations")
		}
	}
	l := &src.Bundle.Trace.Lanes
	l.Objects = append(l.Objects, timeline.ObjectName{Schema: "dbo", Table: "OrderLines"})
	l.Escalation = []timeline.EscalationEvent{{T: 40, Mode: "X", ResourceType: "OBJECT", Cause: "Lock threshold",
		EscalatedLock: 6248, HoBTLocks: 6248, Object: timeline.ObjectRef(len(l.Objects)),
		Match: timeline.Match{NodeID: timeline.Unmatched}}}
	f := byName(t, build(t, src, Request{}), "escalations")
	if f.Rows() != 1 || field(t, f, "mode").At(0) != "X" || field(t, f, "object").At(0) != "dbo.OrderLines" ||
		field(t, f, "escalatedLockCount").At(0).(int64) != 6248 || field(t, f, "tUs").At(0).(int64) != 40 ||
		field(t, f, "cause").At(0) != "Lock threshold" {
		t.Errorf("row %v", f.RowCopy(0))
	}
}

package timeline

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/pkg/xe"
)

// lock_escalation events were decoded by pkg/xe and then dropped: the
// timeline keeps them in the escalation lane with their object.
func TestLockEscalationLane(t *testing.T) {
	base := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	seq := uint64(0)
	mk := func(us int64, name string, fields ...xe.Field) xe.Event {
		seq++
		ts := base.Add(time.Duration(us) * time.Microsecond)
		return xe.Event{Name: name, Package: "sqlserver", Timestamp: xe.Timestamp{Raw: ts.Format(time.RFC3339Nano), Time: ts}, Fields: fields,
			Actions: []xe.Field{{Name: "event_sequence", Value: xe.UintValue(seq)}, {Name: "database_id", Value: xe.UintValue(5)}}}
	}
	f := func(n string, v xe.Value) xe.Field { return xe.Field{Name: n, Value: v} }
	evs := []xe.Event{
		mk(0, "sql_batch_starting", f("batch_text", xe.StringValue("x"))),
		mk(700, "lock_escalation", f("escalation_cause", xe.MapFieldValue(0, "Lock threshold")), f("escalated_lock_count", xe.UintValue(6248)),
			f("hobt_lock_count", xe.UintValue(6248)), f("hobt_id", xe.UintValue(72057594049789952)), f("resource_type", xe.MapFieldValue(5, "OBJECT")),
			f("mode", xe.MapFieldValue(8, "X")), f("object_id", xe.IntValue(901578250)), f("database_id", xe.UintValue(5))),
		mk(900, "sql_batch_completed", f("duration", xe.UintValue(900))),
	}
	cat := NewCatalog()
	cat.AddHoBT(5, 72057594049789952, ObjectName{Schema: "dbo", Table: "OrderLines", Index: "PK_OrderLines"})
	b, err := NewBuilder(nil, cat, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		b.Add(&evs[i])
	}
	tr, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Lanes.Escalation) != 1 {
		t.Fatalf("escalation lane %+v", tr.Lanes.Escalation)
	}
	e := tr.Lanes.Escalation[0]
	if e.T != 700 || e.Mode != "X" || e.ResourceType != "OBJECT" || e.EscalatedLock != 6248 || e.Cause != "Lock threshold" ||
		tr.ObjectOf(e.Object) == nil || tr.ObjectOf(e.Object).Table != "OrderLines" || e.NodeID != Unmatched {
		t.Errorf("entry %+v object %+v", e, tr.ObjectOf(e.Object))
	}
	// A trace without escalations writes no lane (older readers, goldens).
	tr.Lanes.Escalation = nil
	data, err := json.Marshal(tr.Lanes)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["escalation"]; ok {
		t.Error("an empty escalation lane is written")
	}
}

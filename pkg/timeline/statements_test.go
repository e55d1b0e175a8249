package timeline

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/queryreplay/queryreplay/pkg/xe"
)

// withStack gives the stream's last event a tsql_stack action: frames
// innermost first, each "handle:offset".
func (st *stream) withFrames(frames ...StatementKey) {
	raw := "<frames>"
	for i, f := range frames {
		raw += fmt.Sprintf(`<frame level="%d" handle="%s" line="1" offsetStart="%d" offsetEnd="-1"/>`, i+1, f.Handle, f.Start)
	}
	raw += "</frames>"
	ev := &st.events[len(st.events)-1]
	ev.Actions = append(ev.Actions, xe.Field{Name: "tsql_stack", Package: "sqlserver", Value: xe.XMLValue(raw)})
}

// TestStatementsKeepTheirOwnEvents (issue 30, issue 32 point 1): two
// statements of one procedure, each with a plan whose node 0 and node 1
// are the same operators; every event lands on its own statement's
// timeline, identified by its tsql_stack frame, never by its position —
// statement 2's events interleave with statement 1's in time here, which
// position alone could not untangle. The EXEC that called the procedure
// is their parent; an event with no stack stays on the batch.
func TestStatementsKeepTheirOwnEvents(t *testing.T) {
	planXML, err := os.ReadFile(filepath.Join("testdata", "plans", "synthetic", "sort_over_scan.sqlplan"))
	if err != nil {
		t.Fatal(err)
	}
	batch := StatementKey{Handle: "0x02AA", Start: 0}
	one := StatementKey{Handle: "0x03BB", Start: 40}
	two := StatementKey{Handle: "0x03BB", Start: 120}
	st := newStream()
	st.batchStart(0)
	st.add(1, "sqlserver", "sql_statement_starting", s("statement", "EXEC dbo.P"), u("offset", 0), u("offset_end", 20))
	st.withFrames(batch)
	for i, k := range []StatementKey{one, two} {
		st.add(2+i, "sqlserver", "sp_statement_starting", s("statement", fmt.Sprintf("SELECT %d", i+1)), u("offset", uint64(k.Start)),
			u("offset_end", uint64(k.Start+60)), u("nest_level", 1), s("object_name", "P"), u("object_id", 99))
		st.withFrames(k, batch)
	}
	// interleaved: 3 reads of statement 1, 5 of statement 2, each statement's profiles
	for i := range 8 {
		k := one
		if i%2 == 1 || i >= 6 {
			k = two
		}
		st.read(10+i, 1, uint64(100+i))
		st.withFrames(k, batch)
	}
	st.read(19, 1, 999) // no stack: between statements
	for i, k := range []StatementKey{one, two} {
		st.profile(30+i, 0, 0, 500)
		st.withFrames(k, batch)
		st.profile(30+i, 1, 0, 400)
		st.withFrames(k, batch)
		st.add(32+i, "sqlserver", "query_post_execution_showplan", kv{"showplan_xml", xe.XMLValue(string(planXML))})
		st.withFrames(k, batch)
		st.add(34+i, "sqlserver", "sp_statement_completed", u("duration", uint64(1000*(i+1))), u("row_count", uint64(i+7)),
			u("logical_reads", 3), u("offset", uint64(k.Start)), u("offset_end", uint64(k.Start+60)), u("nest_level", 1), s("object_name", "P"))
		st.withFrames(k, batch)
	}
	st.batchEnd(40, 40000)

	set := NewStatementSet()
	for i := range st.events {
		set.Observe(&st.events[i], nil)
	}
	if set.Len() != 4 || set.WithPlans() != 2 {
		t.Fatalf("tree of %d nodes, %d with plans; want the batch, the EXEC and two planned statements", set.Len(), set.WithPlans())
	}
	sb, err := NewStatementBuilder(set, nil, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range st.events {
		sb.Add(&st.events[i])
	}
	nodes, err := sb.Build()
	if err != nil {
		t.Fatal(err)
	}
	sameInterleaved(t, st.events, nodes)
	exec, s1, s2 := nodes[1], nodes[2], nodes[3]
	if exec.Text != "EXEC dbo.P" || exec.Parent != 0 || s1.Parent != exec.ID || s2.Parent != exec.ID || s1.NestLevel != 1 || s1.ObjectName != "P" {
		t.Errorf("tree: exec %+v, s1 parent %d nest %d object %q, s2 parent %d", exec.Text, s1.Parent, s1.NestLevel, s1.ObjectName, s2.Parent)
	}
	if s1.Text != "SELECT 1" || s2.Text != "SELECT 2" || s1.ElapsedUs != 1000 || s2.ElapsedUs != 2000 || s2.Rows != 8 || s1.Executions != 1 {
		t.Errorf("statements: %q %d µs, %q %d µs %d rows", s1.Text, s1.ElapsedUs, s2.Text, s2.ElapsedUs, s2.Rows)
	}
	for _, c := range []struct {
		n     Statement
		reads int
	}{{s1, 3}, {s2, 5}, {nodes[0], 1}} {
		if got := len(c.n.Trace.Lanes.Read); got != c.reads {
			t.Errorf("statement %d (%q): %d reads on its timeline, want %d", c.n.ID, c.n.Text, got, c.reads)
		}
		if c.n.Trace.Summary.Lost != 0 {
			t.Errorf("statement %d: %d lost: a statement's subsequence is not a loss", c.n.ID, c.n.Trace.Summary.Lost)
		}
	}
	if len(nodes[0].Trace.Operators) != 0 || len(s1.Trace.Operators) == 0 || len(s2.Trace.Operators) == 0 {
		t.Errorf("operators: batch %d, s1 %d, s2 %d", len(nodes[0].Trace.Operators), len(s1.Trace.Operators), len(s2.Trace.Operators))
	}
	// each statement's timeline shares the batch's time zero
	if s1.Trace.ZeroTime != s2.Trace.ZeroTime || s1.Trace.ZeroTime != nodes[0].Trace.ZeroTime {
		t.Errorf("zero times differ: %q %q %q", nodes[0].Trace.ZeroTime, s1.Trace.ZeroTime, s2.Trace.ZeroTime)
	}
}

// TestStackCacheSeesReusedBytes: a decoder in ReuseEvents mode hands each
// event a tsql_stack whose bytes it overwrites for the next one. The cache
// of the last parsed stack must compare against what it parsed, not share
// those bytes, or the next statement's events would keep the previous key.
func TestStackCacheSeesReusedBytes(t *testing.T) {
	frame := func(handle string, start int) string {
		return fmt.Sprintf(`<frames><frame level="1" handle="%s" line="1" offsetStart="%d" offsetEnd="-1"/></frames>`, handle, start)
	}
	first, second := frame("0x0200AA", 40), frame("0x0200BB", 90)
	if len(first) != len(second) {
		t.Fatal("the two stacks must be the same length to share a buffer")
	}
	buf := []byte(first)
	ev := xe.Event{Name: "lock_acquired", Actions: []xe.Field{{Name: "tsql_stack", Package: "sqlserver", Value: xe.XMLValue(unsafe.String(&buf[0], len(buf)))}}}
	var c stackCache
	for i, want := range []StatementKey{{Handle: "0x0200AA", Start: 40}, {Handle: "0x0200AA", Start: 40}, {Handle: "0x0200BB", Start: 90}} {
		if i == 2 {
			copy(buf, second) // the decoder reuses its buffer
		}
		key, _, _, _, _, ok := statementKeyOf(&ev, &c)
		if !ok || key != want {
			t.Fatalf("event %d: key %+v ok=%v, want %+v", i, key, ok, want)
		}
	}
	ev.Actions = nil
	if _, _, _, _, _, ok := statementKeyOf(&ev, &c); ok {
		t.Fatal("an event without a tsql_stack has no statement identity, whatever was cached")
	}
}

// sameInterleaved builds the statements again with each event observed
// and added at once, the set growing as the builder runs (a live trace),
// and checks they are the ones the two passes built.
func sameInterleaved(t *testing.T, events []xe.Event, want []Statement) {
	t.Helper()
	set := NewStatementSet()
	sb, err := NewStatementBuilder(set, nil, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range events {
		set.Observe(&events[i], nil)
		sb.Add(&events[i])
	}
	got, err := sb.Build()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(want)
	g, _ := json.Marshal(got)
	if string(a) != string(g) {
		t.Errorf("the statements built beside the first pass differ from the two passes' (%d and %d bytes of JSON)", len(g), len(a))
	}
}

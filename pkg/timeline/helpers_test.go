package timeline

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/testenv"
	"github.com/queryreplay/queryreplay/pkg/callstack"
	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

var update = flag.Bool("update", false, "rewrite golden traces")

// stream writes events for a test plan: each event gets the next
// event_sequence and a millisecond timestamp from base, as event_file XML
// prints them.
type stream struct {
	base   time.Time
	seq    uint64
	events []xe.Event
}

func newStream() *stream {
	return &stream{base: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)}
}

type kv struct {
	name string
	v    xe.Value
}

func u(name string, v uint64) kv           { return kv{name, xe.UintValue(v)} }
func m(name string, k uint64, t string) kv { return kv{name, xe.MapFieldValue(k, t)} }
func s(name, v string) kv                  { return kv{name, xe.StringValue(v)} }

func (st *stream) add(ms int, pkg, name string, data ...kv) {
	st.seq++
	ts := st.base.Add(time.Duration(ms) * time.Millisecond)
	ev := xe.Event{Name: name, Package: pkg, Timestamp: xe.Timestamp{Raw: ts.Format("2006-01-02T15:04:05.000Z"), Time: ts}}
	for _, d := range data {
		ev.Fields = append(ev.Fields, xe.Field{Name: d.name, Value: d.v})
	}
	ev.Actions = []xe.Field{
		{Name: "event_sequence", Package: "package0", Value: xe.UintValue(st.seq)},
		{Name: "database_id", Package: "sqlserver", Value: xe.UintValue(5)},
		{Name: "session_id", Package: "sqlserver", Value: xe.UintValue(57)},
	}
	st.events = append(st.events, ev)
}

func (st *stream) batchStart(ms int) {
	st.add(ms, "sqlserver", "sql_batch_starting", s("batch_text", "traced"))
}
func (st *stream) batchEnd(ms int, durUs uint64) {
	st.add(ms, "sqlserver", "sql_batch_completed", u("duration", durUs), u("cpu_time", durUs/2))
}
func (st *stream) read(ms int, file, page uint64) {
	st.add(ms, "sqlserver", "physical_page_read", u("file_id", file), u("page_id", page))
}
func (st *stream) profile(ms int, node, thread, totalUs uint64) {
	st.add(ms, "sqlserver", "query_thread_profile", u("node_id", node), u("thread_id", thread), u("total_time_us", totalUs))
}
func (st *stream) lock(ms int, released bool, hobt uint64, res string, durUs uint64) {
	name := "lock_acquired"
	if released {
		name = "lock_released"
	}
	st.add(ms, "sqlserver", name, m("resource_type", 7, "KEY"), m("mode", 3, "S"), u("transaction_id", 9001),
		u("database_id", 5), u("resource_0", 1), u("resource_1", 2), u("resource_2", 3),
		u("associated_object_id", hobt), u("duration", durUs), s("resource_description", res))
}
func (st *stream) wait(ms int, end bool, waitType string, durMs uint64) {
	op := m("opcode", 0, "Begin")
	if end {
		op = m("opcode", 1, "End")
	}
	st.add(ms, "sqlos", "wait_info", m("wait_type", 66, waitType), op, u("duration", durMs), u("signal_duration", 0))
}

func loadPlan(t testing.TB, name string) *showplan.Plan {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "plans", name))
	if err != nil {
		t.Fatal(err)
	}
	p, err := showplan.ParseBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func build(t testing.TB, plan *showplan.Plan, cat *Catalog, opts *Options, events []xe.Event) *Trace {
	t.Helper()
	b, err := NewBuilder(plan, cat, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range events {
		b.Add(&events[i])
	}
	tr, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	// Every trace a test builds keeps the invariants, whatever the test
	// itself checks.
	for _, v := range Check(tr, b.stmt) {
		t.Errorf("invariant: %s", v)
	}
	sameWithNamesLate(t, plan, cat, opts, events, tr)
	return tr
}

// sameWithNamesLate builds the events again with the plan and the names
// given after they were added (Builder.SetPlan, Builder.SetNames), as a
// live trace does, and checks the trace is the same: nothing but Build may
// read them.
func sameWithNamesLate(t testing.TB, plan *showplan.Plan, cat *Catalog, opts *Options, events []xe.Event, want *Trace) {
	t.Helper()
	var early Options
	if opts != nil {
		early = *opts
	} else {
		early.Statement = -1
	}
	late := early
	late.LockRows, late.Stacks = nil, callstack.ParseOptions{}
	b, err := NewBuilder(nil, nil, nil, &late)
	if err != nil {
		t.Fatal(err)
	}
	for i := range events {
		b.Add(&events[i])
	}
	if err := b.SetPlan(plan); err != nil {
		t.Fatal(err)
	}
	b.SetNames(Names{Catalog: cat, LockRows: early.LockRows, Stacks: early.Stacks})
	got, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(want)
	g, _ := json.Marshal(got)
	if string(a) != string(g) {
		t.Errorf("the trace built with the plan and names given after the events differs (%d and %d bytes of JSON)", len(a), len(g))
	}
}

func checkGolden(t *testing.T, name string, tr *Trace) {
	t.Helper()
	got, err := json.MarshalIndent(tr, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	testenv.Golden(t, filepath.Join("testdata", "golden", name+".json"), got, *update)
}

func op(tr *Trace, id int) *Operator {
	for i := range tr.Operators {
		if tr.Operators[i].ID == id {
			return &tr.Operators[i]
		}
	}
	return nil
}

func phase(o *Operator, k PhaseKind) *Phase {
	for i := range o.Phases {
		if o.Phases[i].Kind == k {
			return &o.Phases[i]
		}
	}
	return nil
}

// at moves the last event to base + us µs (a sub-millisecond timestamp,
// as newer builds write).
func (st *stream) at(us int64) {
	ev := &st.events[len(st.events)-1]
	ev.Timestamp.Time = st.base.Add(time.Duration(us) * time.Microsecond)
	ev.Timestamp.Raw = ev.Timestamp.Time.Format(time.RFC3339Nano)
}

func (st *stream) fileRead(ms int, completed bool, offset, durMs uint64) {
	name := "file_read"
	if completed {
		name = "file_read_completed"
	}
	st.add(ms, "sqlserver", name, u("database_id", 5), u("file_id", 1), u("offset", offset), u("size", 8192), u("duration", durMs))
}

func (st *stream) spill(ms int, name string, node int64) {
	fields := []kv{m(name+"_type", 0, "Recursion"), u("granted_memory_kb", 1024), u("used_memory_kb", 1024)}
	if node >= 0 {
		fields = append(fields, u("query_operation_node_id", uint64(node)))
	}
	st.add(ms, "sqlserver", name, fields...)
}

// dropSequence removes event i's event_sequence action.
func (st *stream) dropSequence(i int) {
	st.events[i].Actions = st.events[i].Actions[1:]
}

// traceJSON is the trace as a consumer of queryreplay timeline --json sees
// it: the assertions on it check the contract's field names, not only the
// Go values.
func traceJSON(t *testing.T, tr *Trace) map[string]any {
	t.Helper()
	data, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// jsonOperator returns the JSON object of operator id.
func jsonOperator(t *testing.T, js map[string]any, id int) map[string]any {
	t.Helper()
	for _, o := range js["operators"].([]any) {
		om := o.(map[string]any)
		if om["id"].(float64) == float64(id) {
			return om
		}
	}
	t.Fatalf("no operator %d in the JSON", id)
	return nil
}

func jsonLane(t *testing.T, js map[string]any, lane string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, e := range js["lanes"].(map[string]any)[lane].([]any) {
		out = append(out, e.(map[string]any))
	}
	return out
}

func loadSynthetic(t testing.TB, name string) *showplan.Plan {
	t.Helper()
	return loadPlan(t, filepath.Join("synthetic", name))
}

package findings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/timeline"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// events writes a synthetic event stream: each event gets the next
// event_sequence and a timestamp at µs precision from a fixed base.
type events struct {
	base time.Time
	seq  uint64
	list []xe.Event
	db   uint64
}

func newEvents() *events {
	return &events{base: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), db: 5}
}

type field struct {
	name string
	v    xe.Value
}

func fu(name string, v uint64) field           { return field{name, xe.UintValue(v)} }
func fm(name string, k uint64, t string) field { return field{name, xe.MapFieldValue(k, t)} }
func fs(name, v string) field                  { return field{name, xe.StringValue(v)} }

// at adds an event us µs after the base.
func (e *events) at(us int64, pkg, name string, fields ...field) {
	e.seq++
	ts := e.base.Add(time.Duration(us) * time.Microsecond)
	ev := xe.Event{Name: name, Package: pkg, Timestamp: xe.Timestamp{Raw: ts.Format("2006-01-02T15:04:05.0000000Z"), Time: ts}}
	for _, f := range fields {
		ev.Fields = append(ev.Fields, xe.Field{Name: f.name, Value: f.v})
	}
	ev.Actions = []xe.Field{
		{Name: "event_sequence", Package: "package0", Value: xe.UintValue(e.seq)},
		{Name: "database_id", Package: "sqlserver", Value: xe.UintValue(e.db)},
		{Name: "session_id", Package: "sqlserver", Value: xe.UintValue(57)},
	}
	e.list = append(e.list, ev)
}

// skip loses n event_sequence numbers (events the session dropped).
func (e *events) skip(n uint64) { e.seq += n }

func (e *events) batch(start, end int64) {
	e.at(start, "sqlserver", "sql_batch_starting", fs("batch_text", "traced"))
	e.at(end, "sqlserver", "sql_batch_completed", fu("duration", uint64(end-start)), fu("cpu_time", uint64(end-start)/2))
}

func (e *events) read(us int64, file, page uint64) {
	e.at(us, "sqlserver", "physical_page_read", fu("file_id", file), fu("page_id", page))
}

func (e *events) write(us int64, db, file, page uint64) {
	keep := e.db
	e.db = db
	e.at(us, "sqlserver", "physical_page_write", fu("file_id", file), fu("page_id", page))
	e.db = keep
}

// wait adds a wait_info Begin at from and End at to (durations in ms, as
// the event gives them).
func (e *events) wait(from, to int64, waitType string) {
	e.at(from, "sqlos", "wait_info", fm("wait_type", 1, waitType), fm("opcode", 0, "Begin"), fu("duration", 0), fu("signal_duration", 0))
	e.at(to, "sqlos", "wait_info", fm("wait_type", 1, waitType), fm("opcode", 1, "End"), fu("duration", uint64((to-from)/1000)), fu("signal_duration", 0))
}

// lock adds a KEY lock acquired at from and released at to (to < 0: never).
func (e *events) lock(from, to int64, mode string, hobt uint64, hash string) {
	f := []field{fm("resource_type", 7, "KEY"), fm("mode", 5, mode), fu("transaction_id", 9001), fu("database_id", e.db),
		fu("resource_0", 1), fu("resource_1", 2), fu("resource_2", 3), fu("associated_object_id", hobt), fs("resource_description", hash)}
	e.at(from, "sqlserver", "lock_acquired", append(f, fu("duration", 0))...)
	if to >= 0 {
		e.at(to, "sqlserver", "lock_released", append(f, fu("duration", uint64(to-from)))...)
	}
}

func (e *events) profile(us int64, node, thread, totalUs uint64) {
	e.at(us, "sqlserver", "query_thread_profile", fu("node_id", node), fu("thread_id", thread), fu("total_time_us", totalUs))
}

func (e *events) spill(us int64, name string, node uint64, typeField, typeText string, grantedKB, usedKB uint64) {
	e.at(us, "sqlserver", name, fm(typeField, 1, typeText), fu("query_operation_node_id", node),
		fu("granted_memory_kb", grantedKB), fu("used_memory_kb", usedKB))
}

func (e *events) grant(us int64, grantedKB, usedKB uint64) {
	e.at(us, "sqlserver", "query_memory_grant_usage", fu("granted_memory_kb", grantedKB), fu("used_memory_kb", usedKB))
}

func (e *events) split(us int64, op string, rowset, file, page uint64) {
	e.at(us, "sqlserver", "page_split", fu("file_id", file), fu("page_id", page), fu("database_id", e.db), fu("rowset_id", rowset),
		fm("splitOperation", 0, op), fu("new_page_file_id", file), fu("new_page_page_id", page+1000))
}

func (e *events) logRecord(us int64, op, ctx string, allocUnit, size uint64) {
	e.at(us, "sqlserver", "transaction_log", fm("operation", 2, op), fm("context", 2, ctx), fu("alloc_unit_id", allocUnit),
		fu("database_id", e.db), fu("transaction_id", 9001), fu("log_record_size", size))
}

func (e *events) fileRead(us, doneUs int64, file, offset, size uint64) {
	e.at(us, "sqlserver", "file_read", fu("database_id", e.db), fu("file_id", file), fu("offset", offset), fu("size", size))
	e.at(doneUs, "sqlserver", "file_read_completed", fu("database_id", e.db), fu("file_id", file), fu("offset", offset), fu("size", size),
		fu("duration", uint64((doneUs-us)/1000)))
}

// loadPlan parses testdata/plans/name.
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

// build rebuilds the timeline of ev over plan (nil: no plan) and returns it
// with the plan statement the findings read.
func build(t testing.TB, plan *showplan.Plan, cat *timeline.Catalog, ev *events) (*timeline.Trace, *showplan.Statement) {
	return buildWith(t, plan, cat, nil, ev)
}

// buildWith is build with the timeline's options (lock rows, statement).
func buildWith(t testing.TB, plan *showplan.Plan, cat *timeline.Catalog, opts *timeline.Options, ev *events) (*timeline.Trace, *showplan.Statement) {
	t.Helper()
	b, err := timeline.NewBuilder(plan, cat, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ev.list {
		b.Add(&ev.list[i])
	}
	tr, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return tr, PlanStatement(plan, tr)
}

// analyze runs the rules with the default thresholds.
func analyze(t testing.TB, in Input) *Report {
	t.Helper()
	r, err := Analyze(in, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// smallConfig is the defaults with the floors scaled down to the
// synthetic traces' size (a few hundred pages, a few splits and log
// records): the rules' mechanics are tested with it, and the production
// defaults are tested silent on the same traces.
func smallConfig() Config {
	c := DefaultConfig()
	c.MinReads, c.MinSplits, c.MinLogRecords = 100, 1, 1
	return c
}

// analyzeSmall runs the rules with smallConfig.
func analyzeSmall(t testing.TB, in Input) *Report {
	t.Helper()
	r, err := Analyze(in, smallConfig())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// byRule returns the findings of one rule.
func byRule(r *Report, rule string) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

// one returns the single finding of rule, failing the test otherwise.
func one(t testing.TB, r *Report, rule string) Finding {
	t.Helper()
	fs := byRule(r, rule)
	if len(fs) != 1 {
		t.Fatalf("%s: %d findings, want 1; all: %s", rule, len(fs), titles(r))
	}
	return fs[0]
}

func none(t testing.TB, r *Report, rule string) {
	t.Helper()
	if fs := byRule(r, rule); len(fs) != 0 {
		t.Errorf("%s fired on its control: %s", rule, titles(r))
	}
}

func titles(r *Report) string {
	var s []string
	for _, f := range r.Findings {
		s = append(s, f.Rule+": "+f.Title)
	}
	return "[" + strings.Join(s, " | ") + "]"
}

func numberOf(t testing.TB, f Finding, name string) float64 {
	t.Helper()
	v, ok := f.Number(name)
	if !ok {
		t.Fatalf("%s: no number %q in %+v", f.Rule, name, f.Numbers)
	}
	return v
}

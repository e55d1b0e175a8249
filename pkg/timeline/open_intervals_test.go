package timeline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/xe"
)

// Issue 13, timeline item 2: intervals that ended before
// sql_batch_starting have negative times and are closed; only an interval
// whose end was not captured is open.
func TestScenarioNegativeTimesAreNotOpen(t *testing.T) {
	plan := loadPlan(t, "KeyLookup.sqlplan")
	cat := NewCatalog()
	cat.AddHoBT(5, 72057594043170816, ObjectName{Schema: "dbo", Table: "Users", Index: "PK_Users_Id"})
	st := newStream()
	st.lock(-31, false, 72057594043170816, "(8194443284a0)", 0)
	st.wait(-30, false, "RESOURCE_SEMAPHORE", 0)
	st.wait(-30, true, "RESOURCE_SEMAPHORE", 0)
	st.at(-29500)
	st.events[len(st.events)-1].Fields[2].Value = xe.UintValue(0) // duration in ms: under one
	st.lock(-30, true, 72057594043170816, "(8194443284a0)", 1500)
	st.at(-29500)
	st.batchStart(0)
	st.wait(2, false, "PAGEIOLATCH_SH", 0) // never ends
	st.batchEnd(5, 5000)
	tr := build(t, plan, cat, nil, st.events)

	w := tr.Lanes.Wait
	if len(w) != 2 || w[0].T != -30000 || w[0].End != -29500 || w[0].Open {
		t.Fatalf("wait before the batch %+v: want -30000 to -29500, closed", w[0])
	}
	if !w[1].Open || w[1].End != tr.End {
		t.Errorf("wait without an end %+v: want open, closed at the statement end %d", w[1], tr.End)
	}
	l := tr.Lanes.Lock
	if len(l) != 1 || l[0].T != -31000 || l[0].End != -29500 || l[0].Open || l[0].HeldToEnd {
		t.Fatalf("lock %+v: want -31000 to -29500, released", l)
	}
	if tr.Start != -31000 {
		t.Errorf("trace start %d, want -31000", tr.Start)
	}
	js := traceJSON(t, tr)
	waits := jsonLane(t, js, "wait")
	if _, ok := waits[0]["open"]; ok || waits[0]["end"] != -29500.0 || waits[1]["open"] != true {
		t.Errorf("JSON waits %v", waits)
	}
	if locks := jsonLane(t, js, "lock"); locks[0]["end"] != -29500.0 || locks[0]["open"] != nil || locks[0]["heldToEnd"] != nil {
		t.Errorf("JSON lock %v", locks[0])
	}
}

// One of my own: a file_read without its completion is open (End = T,
// Completed false); a read issued before the batch and completed is closed.
func TestScenarioOpenFileRead(t *testing.T) {
	st := newStream()
	st.fileRead(-3, false, 8192, 0)
	st.fileRead(-2, true, 8192, 1)
	st.batchStart(0)
	st.fileRead(1, false, 16384, 0)
	st.batchEnd(3, 3000)
	tr := build(t, nil, nil, nil, st.events)
	io := tr.Lanes.IO
	if len(io) != 2 {
		t.Fatalf("io %+v", io)
	}
	if io[0].T != -3000 || io[0].End != -2000 || io[0].Open || !io[0].Completed {
		t.Errorf("completed read %+v", io[0])
	}
	if io[1].T != 1000 || io[1].End != 1000 || !io[1].Open || io[1].Completed {
		t.Errorf("uncompleted read %+v", io[1])
	}
}

// Issue 13, timeline item 5: the same event fed twice is counted once and
// reported; a gap is reported with its time range; a sub-millisecond
// timestamp stops spreading only in its own millisecond.
func TestScenarioDuplicatesGapsAndSpreading(t *testing.T) {
	st := newStream()
	st.batchStart(0)
	st.read(1, 1, 1)
	st.read(1, 1, 2)
	st.read(1, 1, 3)
	st.read(2, 1, 4)
	st.read(2, 1, 5)
	st.at(2100) // a precise timestamp: millisecond 2 is left alone
	st.read(5, 1, 6)
	st.events[len(st.events)-1].Actions[0].Value = xe.UintValue(10) // sequences 7–9 lost
	events := append(slices.Clone(st.events), st.events[2])         // page 2's read fed twice
	tr := build(t, nil, nil, nil, events)

	s := tr.Summary
	if s.Events != 7 || s.Duplicates != 1 || len(tr.Lanes.Read) != 6 {
		t.Fatalf("events %d duplicates %d reads %d: want 7, 1, 6", s.Events, s.Duplicates, len(tr.Lanes.Read))
	}
	if s.Lost != 3 || len(s.Gaps) != 1 || s.Gaps[0] != (Gap{After: 6, Before: 10, Missing: 3, Start: 2100, End: 5000}) {
		t.Errorf("lost %d gaps %+v: want 3 lost between sequence 6 (2100 µs) and 10 (5000 µs)", s.Lost, s.Gaps)
	}
	var got []int64
	for _, r := range tr.Lanes.Read {
		got = append(got, r.T)
	}
	if want := []int64{1000, 1333, 1666, 2000, 2100, 5000}; !slices.Equal(got, want) {
		t.Errorf("read times %v, want %v (millisecond 1 spread, 2 not)", got, want)
	}
	if !s.Spread || s.SpreadBuckets != 1 {
		t.Errorf("spread %v buckets %d", s.Spread, s.SpreadBuckets)
	}
	if !strings.Contains(strings.Join(s.Notes, ";"), "1 duplicate event") {
		t.Errorf("notes %v", s.Notes)
	}
	js := traceJSON(t, tr)
	sum := js["summary"].(map[string]any)
	if sum["duplicates"] != 1.0 || len(sum["gaps"].([]any)) != 1 || sum["gaps"].([]any)[0].(map[string]any)["start"] != 2100.0 {
		t.Errorf("JSON summary %v", sum)
	}
}

// Item 5: a trace where only some events carry event_sequence says so.
func TestScenarioMixedSequencePresence(t *testing.T) {
	st := newStream()
	st.batchStart(0)
	st.read(1, 1, 1)
	st.read(2, 1, 2)
	st.read(3, 1, 3)
	st.dropSequence(2)
	events := append(slices.Clone(st.events), st.events[1]) // a duplicate among those that have one
	tr := build(t, nil, nil, nil, events)
	s := tr.Summary
	if s.Ordering != "capture" || s.WithoutSequence != 1 || s.Duplicates != 1 || s.Events != 4 {
		t.Fatalf("summary %+v", s)
	}
	if !strings.Contains(strings.Join(s.Notes, ";"), "1 of 4 events carry no event_sequence") {
		t.Errorf("notes %v", s.Notes)
	}
}

// One of my own: two different events with one event_sequence are both
// kept and reported (events of two sessions mixed), not dropped as
// duplicates.
func TestScenarioSequenceClash(t *testing.T) {
	st := newStream()
	st.batchStart(0)
	st.read(1, 1, 1)
	st.read(2, 1, 2)
	st.events[2].Actions[0].Value = xe.UintValue(2)
	tr := build(t, nil, nil, nil, st.events)
	if s := tr.Summary; s.Duplicates != 0 || s.SequenceClashes != 1 || len(tr.Lanes.Read) != 2 ||
		!strings.Contains(strings.Join(s.Notes, ";"), "more than one session") {
		t.Fatalf("summary %+v", s)
	}
}

// One of my own: gaps are bounded; the count stays exact.
func TestScenarioManyGapsAreTruncated(t *testing.T) {
	st := newStream()
	st.batchStart(0)
	for i := 0; i < MaxGaps+10; i++ {
		st.read(1+i, 1, 1)
		st.events[len(st.events)-1].Actions[0].Value = xe.UintValue(uint64(2 + 2*i)) // every other sequence lost
	}
	tr := build(t, nil, nil, nil, st.events)
	// MaxGaps+10 reads after the batch start: MaxGaps+9 gaps of one.
	if s := tr.Summary; len(s.Gaps) != MaxGaps || !s.GapsTruncated || s.Lost != uint64(MaxGaps+9) {
		t.Fatalf("gaps %d truncated %v lost %d", len(s.Gaps), s.GapsTruncated, s.Lost)
	}
}

// One of my own: buffers from several CPUs deliver timestamps out of
// order; spreading still goes per millisecond and skips the one with a
// precise timestamp.
func TestScenarioSpreadOutOfOrderTimestamps(t *testing.T) {
	st := newStream()
	st.batchStart(0)
	st.read(3, 1, 1)
	st.read(1, 1, 2)
	st.read(3, 1, 3)
	st.read(1, 1, 4)
	st.read(2, 1, 5)
	st.read(2, 1, 6)
	st.at(2250)
	tr := build(t, nil, nil, nil, st.events)
	byPage := map[uint64]int64{}
	for _, r := range tr.Lanes.Read {
		byPage[r.PageID] = r.T
	}
	want := map[uint64]int64{1: 3000, 2: 1000, 3: 3500, 4: 1500, 5: 2000, 6: 2250}
	for p, w := range want {
		if byPage[p] != w {
			t.Errorf("page %d at %d, want %d (all: %v)", p, byPage[p], w, byPage)
		}
	}
	if tr.Summary.SpreadBuckets != 2 {
		t.Errorf("spread buckets %d, want 2", tr.Summary.SpreadBuckets)
	}
}

// One of my own: a saved schema-1 trace (a v1 bundle's trace part, as the
// timeline wrote it before the schema field) still loads, and its open
// intervals come back as Open; a newer schema is refused by name.
func TestScenarioSchema1TraceLoads(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "v1", "key_lookup.json"))
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`"schema": *[0-9]`).Match(data) {
		t.Fatal("the fixture is not a schema-1 trace")
	}
	var tr Trace
	if err := json.Unmarshal(data, &tr); err != nil {
		t.Fatal(err)
	}
	if tr.Schema != Schema || len(tr.Operators) != 3 || len(tr.Lanes.Lock) != 3 {
		t.Fatalf("loaded %d operators, %d locks, schema %d", len(tr.Operators), len(tr.Lanes.Lock), tr.Schema)
	}
	if l := tr.Lanes.Lock[1]; !l.HeldToEnd || !l.Open {
		t.Errorf("a held lock of schema 1 did not come back open: %+v", l)
	}
	if l := tr.Lanes.Lock[0]; l.Open {
		t.Errorf("a released lock came back open: %+v", l)
	}
	err = json.Unmarshal([]byte(`{"schema":4,"operators":[]}`), &tr)
	if err == nil || !strings.Contains(err.Error(), "trace schema 4 is newer than this build reads") {
		t.Errorf("newer schema: err = %v", err)
	}
	if err := json.Unmarshal([]byte(`{"schema":-1}`), &tr); err == nil {
		t.Error("negative schema accepted")
	}
}

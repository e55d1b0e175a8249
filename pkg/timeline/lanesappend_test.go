package timeline

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The hand-written lanes JSON (lanesappend.go) must be, byte for byte,
// what encoding/json writes for the wire types: the reference below is
// the reflective encoding MarshalJSON used before (issue 29).

// toLanesWire is l as the JSON has it: every object and candidate list
// inline.
func toLanesWire(l *Lanes) lanesWire {
	w := lanesWire{Plan: l.Plan, Escalation: nil}
	m := func(x Match) matchWire {
		return matchWire{x.NodeID, x.Rule, x.Confidence, x.Ambiguous, l.CandidatesOf(&x)}
	}
	page := func(e *PageEvent) pageWire {
		return pageWire{e.T, m(e.Match), e.DatabaseID, e.FileID, e.PageID, l.ObjectOf(e.Object), e.Stack}
	}
	w.Read, w.Write = wireLane(l.Read, page), wireLane(l.Write, page)
	w.Lock = wireLane(l.Lock, func(e *LockInterval) lockWire {
		return lockWire{e.T, e.End, m(e.Match), e.Mode, e.ResourceType, e.Resource, e.TransactionID, l.ObjectOf(e.Object),
			e.Open, e.HeldToEnd, e.Row, e.AcquireSeen, e.Stack}
	})
	w.Wait = wireLane(l.Wait, func(e *WaitInterval) waitWire {
		return waitWire{e.T, e.End, m(e.Match), e.WaitType, e.Category, e.DurationUs, e.DurationSource, e.DurationMs,
			e.SignalDurationMs, e.UnderOneMs, e.Open, e.Stack}
	})
	w.Memory = wireLane(l.Memory, func(e *MemoryEvent) memoryWire {
		return memoryWire{e.T, m(e.Match), e.Kind, e.Detail, e.GrantedMemoryKB, e.UsedMemoryKB, e.Spill, e.Stack}
	})
	w.Split = wireLane(l.Split, func(e *SplitEvent) splitWire {
		return splitWire{e.T, m(e.Match), e.FileID, e.PageID, e.NewFileID, e.NewPageID, e.Operation, l.ObjectOf(e.Object), e.Stack}
	})
	w.Log = wireLane(l.Log, func(e *LogEvent) logWire {
		return logWire{e.T, m(e.Match), e.Kind, e.Operation, e.Context, e.TransactionID, e.Size, l.ObjectOf(e.Object), e.Stack}
	})
	w.IO = wireLane(l.IO, func(e *IOInterval) ioWire {
		return ioWire{e.T, e.End, m(e.Match), e.Write, e.DatabaseID, e.FileID, e.Offset, e.Size, e.DurationUs, e.Completed, e.Open}
	})
	if len(l.Escalation) > 0 {
		w.Escalation = wireLane(l.Escalation, func(e *EscalationEvent) escalationWire {
			return escalationWire{e.T, m(e.Match), e.Mode, e.ResourceType, e.Cause, e.EscalatedLock, e.HoBTLocks, l.ObjectOf(e.Object), e.Stack}
		})
	}
	return w
}

// wireLane is a lane as the JSON has it; nil stays nil (JSON null).
func wireLane[E, W any](lane []E, f func(*E) W) []W {
	if lane == nil {
		return nil
	}
	out := make([]W, len(lane))
	for i := range lane {
		out[i] = f(&lane[i])
	}
	return out
}

// reflectLanesJSON is json.Marshal of the wire types.
func reflectLanesJSON(l *Lanes) ([]byte, error) { return json.Marshal(toLanesWire(l)) }

// reflectTraceJSON is what json.Marshal(t) wrote when the lanes were
// json.Marshal of their wire types: a struct built by reflection with
// Trace's fields and tags, its Lanes field of the wire type, all encoded
// by encoding/json. (A Marshaler's output is compacted and HTML-escaped
// again when nested, which changes nothing in json.Marshal's output.)
func reflectTraceJSON(t *Trace) ([]byte, error) {
	return json.Marshal(traceMirror(t, reflect.TypeFor[lanesWire](), reflect.ValueOf(toLanesWire(&t.Lanes))))
}

// traceMirror is a value of a struct type built by reflection with
// Trace's fields and tags, its Lanes field of type lanesType set to lanes,
// the others t's.
func traceMirror(t *Trace, lanesType reflect.Type, lanes reflect.Value) any {
	tt := reflect.TypeFor[Trace]()
	fields := make([]reflect.StructField, tt.NumField())
	for i := range fields {
		fields[i] = tt.Field(i)
		fields[i].Index, fields[i].Offset = nil, 0
		if fields[i].Type == reflect.TypeFor[Lanes]() {
			fields[i].Type = lanesType
		}
	}
	mirror := reflect.New(reflect.StructOf(fields)).Elem()
	src := reflect.ValueOf(t).Elem()
	for i := range fields {
		if fields[i].Type == lanesType {
			mirror.Field(i).Set(lanes)
			continue
		}
		mirror.Field(i).Set(src.Field(i))
	}
	return mirror.Interface()
}

// checkLanesJSON fails unless MarshalJSON and AppendJSON write what
// encoding/json writes for l and for a trace holding it.
func checkLanesJSON(t *testing.T, name string, l Lanes) {
	t.Helper()
	checkTraceJSON(t, name, &Trace{Schema: Schema, ZeroTime: "2026-11-29T10:00:00Z", Lanes: l})
}

func checkTraceJSON(t *testing.T, name string, tr *Trace) {
	t.Helper()
	want, err := reflectLanesJSON(&tr.Lanes)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	got, err := tr.Lanes.MarshalJSON()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: lanes JSON differs from encoding/json's at byte %d:\n got %s\nwant %s", name, firstDiff(got, want), clip(got), clip(want))
	}
	wantTrace, err := reflectTraceJSON(tr)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	gotTrace, err := tr.AppendJSON([]byte("prefix"))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !bytes.HasPrefix(gotTrace, []byte("prefix")) || !bytes.Equal(gotTrace[6:], wantTrace) {
		t.Errorf("%s: AppendJSON differs from encoding/json's at byte %d", name, firstDiff(gotTrace[6:], wantTrace))
	}
	if viaMarshal, err := json.Marshal(tr); err != nil || !bytes.Equal(viaMarshal, wantTrace) {
		t.Errorf("%s: json.Marshal(trace) differs from the reflective encoding (err %v)", name, err)
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func clip(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

// hostileStrings are strings encoding/json escapes or rewrites: quotes,
// backslashes, HTML characters, control characters, U+2028 and U+2029,
// invalid UTF-8, DEL and non-ASCII; and plain ones, and the empty string
// (which omitempty leaves out).
var hostileStrings = []string{
	"", "plain", `a"b`, `c:\path\x`, "<script>alert(1)</script>", "a<b", "a>b", "a & b", "\x00\x01\x08\t\n\f\r\x1f",
	"line\u2028sep\u2029", "bad \xff\xfe utf8", "trunc \xe2\x80", "\x7f", "café 日本 🙂", "\ufffd", "\"\\<>&\u2028",
}

// hostileLanes has one or more entries in every lane, every string of
// every entry and object s, and numbers at their limits.
func hostileLanes(s string, k int) Lanes {
	n := int64(k)
	m := func(i int) Match {
		return Match{NodeID: NodeID(i - 1), Rule: Rule(i % len(ruleNames)), Confidence: Confidence(i % len(confidenceNames)),
			Ambiguous: i%2 == 1, Candidates: CandidatesRef(i % 4)}
	}
	return Lanes{
		Plan: []PlanEntry{{T: -n, End: math.MaxInt64, FirstEmit: math.MinInt64, NodeID: Unmatched}, {NodeID: 7}},
		Read: []PageEvent{{T: n, Match: m(k), DatabaseID: math.MaxUint64, FileID: 1, PageID: 2, Object: 1, Stack: math.MaxUint32},
			{Match: m(k + 1), Object: 2}, {Match: m(k + 2), Object: 99}},
		Write: []PageEvent{{T: -1, Match: m(k + 3), Object: 3}},
		Lock: []LockInterval{{T: n, End: n + 1, Match: m(k), Mode: s, ResourceType: s, Resource: s, TransactionID: -n, Object: 1,
			Open: true, HeldToEnd: true, Row: s, AcquireSeen: true, Stack: 3}, {Match: m(k + 1)}},
		Wait: []WaitInterval{{T: n, End: n, Match: m(k + 2), WaitType: s, Category: s, DurationUs: 5, DurationSource: s,
			DurationMs: 6, SignalDurationMs: 7, UnderOneMs: true, Open: true, Stack: 1}, {Match: m(k)}},
		Memory: []MemoryEvent{{T: n, Match: m(k), Kind: s, Detail: s, GrantedMemoryKB: 1, UsedMemoryKB: 2, Spill: true, Stack: 4}, {Kind: s}},
		Split:  []SplitEvent{{T: n, Match: m(k + 1), FileID: 1, PageID: 2, NewFileID: 3, NewPageID: 4, Operation: s, Object: 2, Stack: 5}, {}},
		Log: []LogEvent{{T: n, Match: m(k), Kind: s, Operation: s, Context: s, TransactionID: math.MinInt64, Size: 9, Object: 1, Stack: 6},
			{Kind: s}},
		IO: []IOInterval{{T: n, End: n + 9, Match: m(k), Write: true, DatabaseID: 2, FileID: 3, Offset: 4, Size: 5, DurationUs: 6,
			Completed: true, Open: true}, {}},
		Escalation: []EscalationEvent{{T: n, Match: m(k + 3), Mode: s, ResourceType: s, Cause: s, EscalatedLock: 5000, HoBTLocks: 12,
			Object: 3, Stack: 2}, {Mode: s}},
		Objects:       []ObjectName{{Database: s, Schema: s, Table: s, Index: s}, {Table: s}, {Schema: "dbo", Table: "T", Index: s}},
		CandidateSets: [][]NodeID{{1, 2, Unmatched}, {}, {NodeID(k)}},
	}
}

// TestLanesJSONHostileStrings: every string field of every lane, object
// names and the statement, with every kind of character encoding/json
// escapes or replaces.
func TestLanesJSONHostileStrings(t *testing.T) {
	for k, s := range hostileStrings {
		l := hostileLanes(s, k)
		checkLanesJSON(t, "hostile "+s, l)
		tr := &Trace{Schema: Schema, ZeroTime: s, Start: -5, End: 9, Statement: s, Lanes: l,
			Operators: []Operator{{ID: 1, PhysicalOp: s, Object: s}}, Summary: Summary{Notes: []string{s}, Lanes: map[string]int{s: 1}},
			Stacks: []Stack{{ID: 1, Frames: []StackFrame{{Module: s, Symbol: s}}}}, Pages: []PageHeader{{Type: s}}}
		checkTraceJSON(t, "hostile trace "+s, tr)
	}
}

// TestLanesJSONNilAndEmpty: a nil lane is null, an empty one [], as
// json.Marshal always wrote them; an empty escalation lane is left out.
func TestLanesJSONNilAndEmpty(t *testing.T) {
	checkLanesJSON(t, "zero", Lanes{})
	empty := Lanes{Plan: []PlanEntry{}, Read: []PageEvent{}, Write: []PageEvent{}, Lock: []LockInterval{}, Wait: []WaitInterval{},
		Memory: []MemoryEvent{}, Split: []SplitEvent{}, Log: []LogEvent{}, IO: []IOInterval{}, Escalation: []EscalationEvent{}}
	checkLanesJSON(t, "empty", empty)
	got, _ := Lanes{}.MarshalJSON()
	if want := `{"plan":null,"read":null,"write":null,"lock":null,"wait":null,"memory":null,"split":null,"log":null,"io":null}`; string(got) != want {
		t.Errorf("nil lanes: %s, want %s", got, want)
	}
	got, _ = empty.MarshalJSON()
	if want := `{"plan":[],"read":[],"write":[],"lock":[],"wait":[],"memory":[],"split":[],"log":[],"io":[]}`; string(got) != want {
		t.Errorf("empty lanes: %s, want %s", got, want)
	}
	// each lane alone nil, empty and full, the others full
	full := hostileLanes("x<y", 1)
	lanes := reflect.TypeFor[Lanes]()
	for i := range lanes.NumField() {
		if lanes.Field(i).Type.Elem().Kind() != reflect.Struct || lanes.Field(i).Tag.Get("json") == "-" {
			continue
		}
		for _, what := range []string{"nil", "empty"} {
			l := full
			f := reflect.ValueOf(&l).Elem().Field(i)
			if what == "empty" {
				f.Set(reflect.MakeSlice(f.Type(), 0, 0))
			} else {
				f.Set(reflect.Zero(f.Type()))
			}
			checkLanesJSON(t, lanes.Field(i).Name+" "+what, l)
		}
	}
	var nilTrace *Trace
	if got, err := nilTrace.AppendJSON(nil); err != nil || string(got) != "null" {
		t.Errorf("nil trace: %s %v, want null", got, err)
	}
}

// TestLanesJSONTestdataTraces: the saved traces of testdata, read and
// written again.
func TestLanesJSONTestdataTraces(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var tr Trace
		if json.Unmarshal(data, &tr) != nil || tr.Schema == 0 {
			continue // not a trace
		}
		seen++
		checkTraceJSON(t, p, &tr)
	}
	if seen < 4 {
		t.Fatalf("only %d testdata traces", seen)
	}
}

// TestLanesJSONEveryField: every field of every lane entry, object and
// candidate list set by reflection (so a field added to an entry type is
// set too), zero and not: the hand-written JSON must write what the
// reflective one does. TestWireTypesMatchEntries keeps the wire types,
// and so the reference, in step with the entries.
func TestLanesJSONEveryField(t *testing.T) {
	for _, n := range []int64{1, -3, 77, math.MaxInt32} {
		for _, s := range []string{"v", "<&>", ""} {
			var l Lanes
			fill(reflect.ValueOf(&l).Elem(), s, n)
			checkLanesJSON(t, "filled", l)
			var tr Trace
			fill(reflect.ValueOf(&tr).Elem(), s, n)
			checkTraceJSON(t, "filled trace", &tr)
		}
	}
	// zero entries in every lane: the omitempty side of every field
	var l Lanes
	fill(reflect.ValueOf(&l).Elem(), "v", 1)
	lv := reflect.ValueOf(&l).Elem()
	for i := range lv.NumField() {
		if f := lv.Field(i); f.Kind() == reflect.Slice && lv.Type().Field(i).Tag.Get("json") != "-" {
			f.Set(reflect.MakeSlice(f.Type(), 2, 2))
		}
	}
	checkLanesJSON(t, "zero entries", l)
	// the lanes' JSON fields are lanesWire's, one for one
	lt, wt := reflect.TypeFor[Lanes](), reflect.TypeFor[lanesWire]()
	var visible []string
	for i := range lt.NumField() {
		if tag := lt.Field(i).Tag.Get("json"); tag != "-" {
			visible = append(visible, lt.Field(i).Name+" "+tag)
		}
	}
	var wire []string
	for i := range wt.NumField() {
		wire = append(wire, wt.Field(i).Name+" "+wt.Field(i).Tag.Get("json"))
	}
	if strings.Join(visible, ",") != strings.Join(wire, ",") {
		t.Errorf("Lanes' JSON fields %v, lanesWire's %v", visible, wire)
	}
}

// fill sets every field it reaches to something not zero: integers to n
// (handles, rules and confidences to valid ones), strings to s, bools to
// true, slices to two elements, maps to one, pointers to a new value.
func fill(v reflect.Value, s string, n int64) {
	switch v.Type() {
	case reflect.TypeFor[Rule]():
		v.SetUint(uint64(1 + (n&0xff)%int64(len(ruleNames)-1)))
		return
	case reflect.TypeFor[Confidence]():
		v.SetUint(uint64(1 + (n&0xff)%int64(len(confidenceNames)-1)))
		return
	case reflect.TypeFor[ObjectRef](), reflect.TypeFor[CandidatesRef]():
		v.SetUint(uint64(1 + n&1)) // tables are filled with two entries
		return
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(uint64(n))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(n) / 4)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.String:
		v.SetString(s)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(v.Index(i), s, n+int64(i))
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, s+"k", n)
		fill(e, s, n)
		v.SetMapIndex(k, e)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), s, n)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), s, n)
			}
		}
	}
}

// FuzzLanesJSON: entries in every lane from fuzzed strings, numbers and
// flags, against the reflective encoding.
func FuzzLanesJSON(f *testing.F) {
	for i, s := range hostileStrings {
		f.Add(s, hostileStrings[(i+3)%len(hostileStrings)], int64(i*1000-3000), uint64(i)<<60, uint32(i), uint8(i*37))
	}
	f.Fuzz(func(t *testing.T, s1, s2 string, n int64, u uint64, st uint32, flags uint8) {
		l := hostileLanes(s1, int(flags))
		l.Objects[1] = ObjectName{Database: s2, Table: s1}
		if flags&1 != 0 {
			l.Objects[0].Index = s2
		}
		for i := range l.Read {
			l.Read[i].T, l.Read[i].PageID, l.Read[i].Stack = n, u, st
		}
		lk := &l.Lock[1]
		lk.T, lk.End, lk.Mode, lk.Resource, lk.Row, lk.Object = n, -n, s2, s1+s2, s2, ObjectRef(flags%5)
		lk.Open, lk.HeldToEnd, lk.AcquireSeen = flags&2 != 0, flags&4 != 0, flags&8 != 0
		w := &l.Wait[1]
		w.WaitType, w.DurationSource, w.DurationUs, w.UnderOneMs, w.Stack = s2, s1, u, flags&16 != 0, st
		l.Memory[1].Detail, l.Memory[1].GrantedMemoryKB, l.Memory[1].Spill = s2, u, flags&32 != 0
		l.Split[1].Operation, l.Split[1].NewPageID, l.Split[1].Object = s2, u, ObjectRef(flags%3)
		l.Log[1].Operation, l.Log[1].Context, l.Log[1].TransactionID = s1, s2, n
		l.IO[1].Offset, l.IO[1].Write, l.IO[1].Open = u, flags&64 != 0, flags&128 != 0
		l.Escalation[1].Cause, l.Escalation[1].HoBTLocks = s2, u
		l.Plan[1].NodeID = NodeID(n)
		l.CandidateSets[2] = []NodeID{NodeID(n), NodeID(st)}
		checkLanesJSON(t, "fuzz", l)
	})
}

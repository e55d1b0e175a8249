package timeline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// TestLaneEntriesHoldNoPointer: a page event (and the Match every lane
// entry embeds) must hold no pointer, slice, map, string or interface.
// The read lane is most of a trace (a million entries); an entry type
// without pointers puts the lane in memory the garbage collector never
// scans, and scanning it on every cycle was a third of a build's time
// (issue 26). Name an object or a list by a handle into Lanes' tables
// instead.
func TestLaneEntriesHoldNoPointer(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[PageEvent](), reflect.TypeFor[Match]()} {
		if path := pointerIn(typ, typ.Name()); path != "" {
			t.Errorf("%s holds a pointer at %s: the lane becomes GC-scanned memory again (issue 26)", typ, path)
		}
	}
	// the check itself sees what it must
	type withString struct {
		T int64
		Match
		Name string
	}
	if pointerIn(reflect.TypeFor[withString](), "withString") == "" {
		t.Error("pointerIn missed a string field")
	}
}

// pointerIn names the first field of typ whose kind holds a pointer, or "".
func pointerIn(typ reflect.Type, path string) string {
	switch typ.Kind() {
	case reflect.Pointer, reflect.UnsafePointer, reflect.Slice, reflect.Map, reflect.String, reflect.Interface, reflect.Chan, reflect.Func:
		return path
	case reflect.Array:
		return pointerIn(typ.Elem(), path+"[]")
	case reflect.Struct:
		for i := range typ.NumField() {
			f := typ.Field(i)
			if p := pointerIn(f.Type, path+"."+f.Name); p != "" {
				return p
			}
		}
	}
	return ""
}

// TestWireTypesMatchEntries: each lane entry type and its JSON form have
// the same fields in the same order (the JSON's order), the same types but
// for the handles, and the same tags, so a field added to an entry cannot
// be forgotten by the JSON.
func TestWireTypesMatchEntries(t *testing.T) {
	pairs := []struct{ entry, wire reflect.Type }{
		{reflect.TypeFor[Match](), reflect.TypeFor[matchWire]()},
		{reflect.TypeFor[PageEvent](), reflect.TypeFor[pageWire]()},
		{reflect.TypeFor[LockInterval](), reflect.TypeFor[lockWire]()},
		{reflect.TypeFor[WaitInterval](), reflect.TypeFor[waitWire]()},
		{reflect.TypeFor[MemoryEvent](), reflect.TypeFor[memoryWire]()},
		{reflect.TypeFor[SplitEvent](), reflect.TypeFor[splitWire]()},
		{reflect.TypeFor[EscalationEvent](), reflect.TypeFor[escalationWire]()},
		{reflect.TypeFor[LogEvent](), reflect.TypeFor[logWire]()},
		{reflect.TypeFor[IOInterval](), reflect.TypeFor[ioWire]()},
	}
	handles := map[reflect.Type]reflect.Type{
		reflect.TypeFor[ObjectRef]():     reflect.TypeFor[*ObjectName](),
		reflect.TypeFor[CandidatesRef](): reflect.TypeFor[[]NodeID](),
		reflect.TypeFor[Match]():         reflect.TypeFor[matchWire](),
	}
	tags := map[string]string{"Object": `json:"object,omitempty"`, "Candidates": `json:"candidates,omitempty"`}
	for _, p := range pairs {
		if p.entry.NumField() != p.wire.NumField() {
			t.Errorf("%s has %d fields, %s %d", p.entry, p.entry.NumField(), p.wire, p.wire.NumField())
			continue
		}
		for i := range p.entry.NumField() {
			e, w := p.entry.Field(i), p.wire.Field(i)
			wantType, wantTag := e.Type, e.Tag
			if h, ok := handles[e.Type]; ok {
				wantType = h
				if tg, ok := tags[e.Name]; ok {
					wantTag = reflect.StructTag(tg)
				}
			}
			name := e.Name
			if e.Anonymous {
				name = "matchWire"
			}
			if w.Name != name || w.Type != wantType || w.Tag != wantTag || w.Anonymous != e.Anonymous {
				t.Errorf("%s field %d is %s %s %s, %s has %s %s %s", p.entry, i, e.Name, e.Type, e.Tag, p.wire, w.Name, w.Type, w.Tag)
			}
		}
	}
	if l, w := reflect.TypeFor[Lanes]().NumField()-2, reflect.TypeFor[lanesWire]().NumField(); l != w {
		t.Errorf("Lanes has %d lanes, lanesWire %d", l, w)
	}
}

// TestTraceJSONKeepsEveryObjectAndCandidate: the goldens were written
// when entries held their object and candidate list themselves; read
// with handles, every entry still names what its JSON says, checked
// against a plain decoding of the file (no handle code involved), the
// tables hold each name and list once, and built traces write the same.
func TestTraceJSONKeepsEveryObjectAndCandidate(t *testing.T) {
	for _, name := range []string{"hash_join", "key_lookup", "self_join", "sort_chain"} {
		data, err := os.ReadFile(filepath.Join("testdata", "golden", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var tr Trace
		if err := json.Unmarshal(data, &tr); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var raw struct {
			Lanes map[string][]struct {
				Object     *ObjectName `json:"object"`
				Candidates []NodeID    `json:"candidates"`
			} `json:"lanes"`
		}
		if err := json.Unmarshal(data, &raw); err != nil {
			t.Fatal(err)
		}
		objects, lists := 0, 0
		for lane, entries := range raw.Lanes {
			if lane == "plan" {
				continue
			}
			n, at := laneHandles(&tr.Lanes, lane)
			if n != len(entries) {
				t.Fatalf("%s %s: %d entries, the file has %d", name, lane, n, len(entries))
			}
			for i, want := range entries {
				obj, m := at(i)
				if got := tr.ObjectOf(obj); !reflect.DeepEqual(got, want.Object) {
					t.Errorf("%s %s[%d]: object %+v, the file says %+v", name, lane, i, got, want.Object)
				}
				if got := tr.CandidatesOf(m); !slices.Equal(got, want.Candidates) {
					t.Errorf("%s %s[%d]: candidates %v, the file says %v", name, lane, i, got, want.Candidates)
				}
				if want.Object != nil {
					objects++
				}
				if want.Candidates != nil {
					lists++
				}
			}
		}
		if objects > 0 && len(tr.Lanes.Objects) == 0 || lists > 0 && len(tr.Lanes.CandidateSets) == 0 {
			t.Errorf("%s: %d objects, %d lists in the file, tables %d and %d", name, objects, lists, len(tr.Lanes.Objects), len(tr.Lanes.CandidateSets))
		}
		for i, o := range tr.Lanes.Objects {
			if slices.Index(tr.Lanes.Objects, o) != i {
				t.Errorf("%s: object %+v twice in the table", name, o)
			}
		}
		for i, c := range tr.Lanes.CandidateSets {
			if slices.IndexFunc(tr.Lanes.CandidateSets, func(d []NodeID) bool { return slices.Equal(c, d) }) != i {
				t.Errorf("%s: candidates %v twice in the table", name, c)
			}
		}
	}
}

// laneHandles gives a lane's length and each entry's object handle and match.
func laneHandles(l *Lanes, lane string) (int, func(int) (ObjectRef, *Match)) {
	switch lane {
	case "read":
		return len(l.Read), func(i int) (ObjectRef, *Match) { return l.Read[i].Object, &l.Read[i].Match }
	case "write":
		return len(l.Write), func(i int) (ObjectRef, *Match) { return l.Write[i].Object, &l.Write[i].Match }
	case "lock":
		return len(l.Lock), func(i int) (ObjectRef, *Match) { return l.Lock[i].Object, &l.Lock[i].Match }
	case "wait":
		return len(l.Wait), func(i int) (ObjectRef, *Match) { return 0, &l.Wait[i].Match }
	case "memory":
		return len(l.Memory), func(i int) (ObjectRef, *Match) { return 0, &l.Memory[i].Match }
	case "split":
		return len(l.Split), func(i int) (ObjectRef, *Match) { return l.Split[i].Object, &l.Split[i].Match }
	case "log":
		return len(l.Log), func(i int) (ObjectRef, *Match) { return l.Log[i].Object, &l.Log[i].Match }
	case "io":
		return len(l.IO), func(i int) (ObjectRef, *Match) { return 0, &l.IO[i].Match }
	case "escalation":
		return len(l.Escalation), func(i int) (ObjectRef, *Match) { return l.Escalation[i].Object, &l.Escalation[i].Match }
	}
	return 0, nil
}

// TestLanesJSONRoundTrip: lanes with every lane, objects and candidate
// lists survive writing and reading (a trace marshalled by value too),
// and reading again writes the same bytes.
func TestLanesJSONRoundTrip(t *testing.T) {
	mt := Match{NodeID: 2, Rule: RuleObjectTiming, Confidence: ConfidenceLow, Ambiguous: true, Candidates: 2}
	tr := Trace{Schema: Schema, Lanes: Lanes{
		Objects:       []ObjectName{{Schema: "dbo", Table: "Orders", Index: "PK_Orders"}, {Database: "tempdb", Table: "#t"}},
		CandidateSets: [][]NodeID{{0, 1}, {1, 2, 5}},
		Plan:          []PlanEntry{{T: 1, End: 9, FirstEmit: 2, NodeID: 1}},
		Read:          []PageEvent{{T: 5, Match: mt, DatabaseID: 7, FileID: 1, PageID: 9, Object: 1, Stack: 3}, {T: 6, Match: Match{NodeID: Unmatched}}},
		Write:         []PageEvent{{T: 7, Match: Match{NodeID: 1, Rule: RuleObject, Confidence: ConfidenceStrong}, FileID: 1, PageID: 10, Object: 2}},
		Lock:          []LockInterval{{T: 1, End: 4, Match: mt, Mode: "X", ResourceType: "KEY", Resource: "r", TransactionID: 9, Object: 1, Open: true, HeldToEnd: true, Row: "Id=1", AcquireSeen: true, Stack: 1}},
		Wait:          []WaitInterval{{T: 2, End: 3, Match: Match{NodeID: Unmatched, Ambiguous: true, Candidates: 1}, WaitType: "CXPACKET", Category: "Parallelism", DurationUs: 1, DurationSource: "events", UnderOneMs: true, Stack: 2}},
		Memory:        []MemoryEvent{{T: 3, Match: mt, Kind: "sort_warning", Detail: "d", GrantedMemoryKB: 1, UsedMemoryKB: 2, Spill: true, Stack: 4}},
		Split:         []SplitEvent{{T: 4, Match: mt, FileID: 1, PageID: 2, NewFileID: 1, NewPageID: 3, Operation: "SPLIT_FOR_INSERT", Object: 2, Stack: 5}},
		Log:           []LogEvent{{T: 5, Match: mt, Kind: "record", Operation: "LOP_INSERT_ROWS", Context: "LCX_HEAP", TransactionID: 9, Size: 100, Object: 2, Stack: 6}},
		IO:            []IOInterval{{T: 6, End: 8, Match: mt, Write: true, DatabaseID: 7, FileID: 1, Offset: 8192, Size: 8192, DurationUs: 2, Completed: true}},
		Escalation:    []EscalationEvent{{T: 7, Match: Match{NodeID: Unmatched, Rule: RuleStatement}, Mode: "X", ResourceType: "OBJECT", Cause: "Lock threshold", EscalatedLock: 5000, HoBTLocks: 5000, Object: 1, Stack: 7}},
	}}
	byValue, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	byPointer, err := json.Marshal(&tr)
	if err != nil {
		t.Fatal(err)
	}
	if string(byValue) != string(byPointer) {
		t.Fatalf("a trace marshals differently by value:\n%s\n%s", byValue, byPointer)
	}
	var raw struct {
		Lanes struct {
			Read []map[string]any `json:"read"`
			Lock []map[string]any `json:"lock"`
			Wait []map[string]any `json:"wait"`
		} `json:"lanes"`
	}
	if err := json.Unmarshal(byValue, &raw); err != nil {
		t.Fatal(err)
	}
	if o, ok := raw.Lanes.Read[0]["object"].(map[string]any); !ok || o["table"] != "Orders" || o["index"] != "PK_Orders" ||
		!reflect.DeepEqual(raw.Lanes.Read[0]["candidates"], []any{1.0, 2.0, 5.0}) || raw.Lanes.Read[1]["object"] != nil ||
		!reflect.DeepEqual(raw.Lanes.Wait[0]["candidates"], []any{0.0, 1.0}) || raw.Lanes.Lock[0]["object"] == nil {
		t.Errorf("objects and candidates are not inline: %s", byValue)
	}
	var back Trace
	if err := json.Unmarshal(byValue, &back); err != nil {
		t.Fatal(err)
	}
	sameLanes(t, &back.Lanes, &tr.Lanes)
	again, err := json.Marshal(&back)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(byValue) {
		t.Errorf("JSON changed on a round trip:\n%s\n%s", again, byValue)
	}
}

// TestHandlesOutOfTable: a handle the table does not hold names nothing
// rather than panicking (lanes put together by hand, a zero Lanes).
func TestHandlesOutOfTable(t *testing.T) {
	var l Lanes
	if l.ObjectOf(3) != nil || l.CandidatesOf(&Match{Candidates: 2}) != nil || l.ObjectOf(0) != nil {
		t.Error("a handle outside the tables named something")
	}
}

// sameLanes: a and b hold the same entries naming the same objects and
// candidate lists, whatever their handles (a table read back is in the
// order the JSON names them first).
func sameLanes(t *testing.T, a, b *Lanes) {
	t.Helper()
	for _, lane := range []string{"read", "write", "lock", "wait", "memory", "split", "log", "io", "escalation"} {
		na, atA := laneHandles(a, lane)
		nb, atB := laneHandles(b, lane)
		if na != nb {
			t.Errorf("%s: %d entries, want %d", lane, na, nb)
			continue
		}
		for i := range na {
			oa, ma := atA(i)
			ob, mb := atB(i)
			if !reflect.DeepEqual(a.ObjectOf(oa), b.ObjectOf(ob)) || !slices.Equal(a.CandidatesOf(ma), b.CandidatesOf(mb)) {
				t.Errorf("%s[%d]: object %+v candidates %v, want %+v %v", lane, i, a.ObjectOf(oa), a.CandidatesOf(ma), b.ObjectOf(ob), b.CandidatesOf(mb))
			}
		}
	}
	// and the rest of every entry: the handles set aside
	strip := func(l *Lanes) Lanes {
		c := *l
		c.Objects, c.CandidateSets = nil, nil
		c.Read, c.Write, c.Lock = slices.Clone(c.Read), slices.Clone(c.Write), slices.Clone(c.Lock)
		c.Wait, c.Memory, c.Split = slices.Clone(c.Wait), slices.Clone(c.Memory), slices.Clone(c.Split)
		c.Log, c.IO, c.Escalation = slices.Clone(c.Log), slices.Clone(c.IO), slices.Clone(c.Escalation)
		c.EachMatch(func(m *Match) { m.Candidates = 0 })
		for i := range c.Read {
			c.Read[i].Object = 0
		}
		for i := range c.Write {
			c.Write[i].Object = 0
		}
		for i := range c.Lock {
			c.Lock[i].Object = 0
		}
		for i := range c.Split {
			c.Split[i].Object = 0
		}
		for i := range c.Log {
			c.Log[i].Object = 0
		}
		for i := range c.Escalation {
			c.Escalation[i].Object = 0
		}
		return c
	}
	if sa, sb := strip(a), strip(b); !reflect.DeepEqual(sa, sb) {
		t.Errorf("entries differ:\n got %+v\nwant %+v", sa, sb)
	}
}

// TestLaneTablesIntern: one handle per distinct name, whether it comes as
// the catalog's shared pointer (past the recent cache too) or as another
// copy, and one per distinct candidate list, copied (the matcher reuses
// its buffer).
func TestLaneTablesIntern(t *testing.T) {
	tb := newLaneTables()
	names := make([]*ObjectName, 7)
	for i := range names {
		names[i] = &ObjectName{Schema: "dbo", Table: "T", Index: string(rune('a' + i))}
	}
	first := make([]ObjectRef, len(names))
	for round := range 3 {
		for i, o := range names {
			r := tb.object(o)
			if round == 0 {
				first[i] = r
			} else if r != first[i] {
				t.Fatalf("round %d: %+v named %d, first %d", round, *o, r, first[i])
			}
			if copyRef := tb.object(&ObjectName{Schema: "dbo", Table: "T", Index: o.Index}); copyRef != r {
				t.Fatalf("a copy of %+v named %d, the shared one %d", *o, copyRef, r)
			}
		}
	}
	if len(tb.objects) != len(names) || tb.object(nil) != 0 {
		t.Fatalf("table %+v", tb.objects)
	}
	buf := []NodeID{1, 2}
	a := tb.candidates(buf)
	buf[0], buf[1] = 3, 4
	if b := tb.candidates(buf); b == a || tb.candidates([]NodeID{1, 2}) != a || !slices.Equal(tb.sets[a-1], []NodeID{1, 2}) ||
		tb.candidates(nil) != 0 || len(tb.sets) != 2 {
		t.Fatalf("candidate table %v", tb.sets)
	}
}

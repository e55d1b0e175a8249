package bundle

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// rawTrace is a trace part read without timeline's decoding: each lane
// entry's object and candidate list as the file has them inline.
type rawTrace struct {
	Lanes map[string][]struct {
		Object     *timeline.ObjectName `json:"object"`
		Candidates []timeline.NodeID    `json:"candidates"`
	} `json:"lanes"`
}

// TestOldBundlesKeepObjectsAndCandidates: bundles written when lane
// entries held their object and candidate list themselves (before the
// handles of issue 26) load with every entry naming, through the trace's
// tables, what the file says, in the bundle's trace and in each
// statement's; and written again they are the same bytes. (small.json,
// version 1, names no object and is upgraded when written again.)
func TestOldBundlesKeepObjectsAndCandidates(t *testing.T) {
	for _, name := range []string{"statements_v2.json", "statements_v3.json"} {
		path := filepath.Join("testdata", "bundle", name)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Load(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var raw struct {
			Trace      rawTrace `json:"trace"`
			Statements []struct {
				Trace *rawTrace `json:"trace"`
			} `json:"statements"`
		}
		if err := json.Unmarshal(data, &raw); err != nil {
			t.Fatal(err)
		}
		named := sameEntries(t, name+" trace", b.Trace, &raw.Trace)
		for i, st := range raw.Statements {
			if st.Trace != nil { // a version 3 file stores the first planned one once, as the trace
				named += sameEntries(t, name+" statement", b.Statements[i].Trace, st.Trace)
			}
		}
		if named == 0 {
			t.Errorf("%s: no entry names an object or candidates: the test checks nothing", name)
		}
		var again bytes.Buffer
		if err := Write(&again, b); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again.Bytes(), data) {
			t.Errorf("%s: written again, the bundle changed", name)
		}
	}
}

// sameEntries compares every lane entry's object and candidates with the
// file's and counts the entries that name either.
func sameEntries(t *testing.T, what string, tr *timeline.Trace, raw *rawTrace) int {
	t.Helper()
	if tr == nil {
		t.Fatalf("%s: no trace", what)
	}
	l, n := &tr.Lanes, 0
	type entry struct {
		obj timeline.ObjectRef
		m   *timeline.Match
	}
	lanes := map[string][]entry{}
	add := func(lane string, obj timeline.ObjectRef, m *timeline.Match) {
		lanes[lane] = append(lanes[lane], entry{obj, m})
	}
	for i := range l.Read {
		add("read", l.Read[i].Object, &l.Read[i].Match)
	}
	for i := range l.Write {
		add("write", l.Write[i].Object, &l.Write[i].Match)
	}
	for i := range l.Lock {
		add("lock", l.Lock[i].Object, &l.Lock[i].Match)
	}
	for i := range l.Wait {
		add("wait", 0, &l.Wait[i].Match)
	}
	for i := range l.Memory {
		add("memory", 0, &l.Memory[i].Match)
	}
	for i := range l.Split {
		add("split", l.Split[i].Object, &l.Split[i].Match)
	}
	for i := range l.Log {
		add("log", l.Log[i].Object, &l.Log[i].Match)
	}
	for i := range l.IO {
		add("io", 0, &l.IO[i].Match)
	}
	for i := range l.Escalation {
		add("escalation", l.Escalation[i].Object, &l.Escalation[i].Match)
	}
	for lane, want := range raw.Lanes {
		if lane == "plan" {
			continue
		}
		got := lanes[lane]
		if len(got) != len(want) {
			t.Fatalf("%s %s: %d entries, the file has %d", what, lane, len(got), len(want))
		}
		for i, w := range want {
			if o := tr.ObjectOf(got[i].obj); !reflect.DeepEqual(o, w.Object) {
				t.Errorf("%s %s[%d]: object %+v, the file says %+v", what, lane, i, o, w.Object)
			}
			if c := tr.CandidatesOf(got[i].m); !slices.Equal(c, w.Candidates) {
				t.Errorf("%s %s[%d]: candidates %v, the file says %v", what, lane, i, c, w.Candidates)
			}
			if w.Object != nil || w.Candidates != nil {
				n++
			}
		}
	}
	return n
}

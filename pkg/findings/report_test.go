package findings

import (
	"cmp"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/internal/testenv"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestFormat(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Count(0), "0"}, {Count(999), "999"}, {Count(14600), "14,600"}, {Count(-1234567), "-1,234,567"},
		{Percent(0.85), "85%"}, {Percent(0.001), "<1%"}, {Percent(0.996), ">99%"}, {Percent(1), "100%"}, {Percent(0), "0%"},
		{KB(1024), "1,024 KB"}, {KB(102400), "100.0 MB"}, {KB(20 << 20), "20.0 GB"},
		{Bytes(812), "812 bytes"}, {Bytes(2220), "2 KB"}, {Bytes(5 << 20), "5.0 MB"},
		{Duration(340), "340 µs"}, {Duration(12400), "12 ms"}, {Duration(1500), "1.5 ms"}, {Duration(2_400_000), "2.4 s"}, {Duration(25_000_000), "25 s"},
		{plural(1, "page", "pages"), "1 page"}, {plural(12400, "page", "pages"), "12,400 pages"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestConfig(t *testing.T) {
	d := DefaultConfig()
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	c, err := ParseConfig([]byte(`{"readShare": 0.7, "minReads": 5}`))
	if err != nil || c.ReadShare != 0.7 || c.MinReads != 5 || c.SkewShare != d.SkewShare {
		t.Errorf("parse: %+v %v", c, err)
	}
	for _, bad := range []string{`{"readshare": 0.7}`, `{"readShare": 1.5}`, `{"minReads": -1}`, `{"maxEvidence": 0}`, `[1]`} {
		if _, err := ParseConfig([]byte(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if err := c.Set("skewShare", "0.35"); err != nil || c.SkewShare != 0.35 {
		t.Errorf("set: %v %v", c.SkewShare, err)
	}
	for _, bad := range [][2]string{{"nope", "1"}, {"minReads", "x"}, {"skewShare", "y"}, {"grantFullShare", "2"}} {
		if err := c.Set(bad[0], bad[1]); err == nil {
			t.Errorf("Set(%s, %s) accepted", bad[0], bad[1])
		}
	}
	// Every threshold a rule names exists, and every field is documented.
	fields := map[string]bool{}
	for _, f := range d.Fields() {
		if f.Doc == "" || f.Value == "" {
			t.Errorf("field %+v undocumented", f)
		}
		fields[f.Name] = true
	}
	for _, r := range Rules() {
		for _, th := range r.Thresholds {
			if !fields[th] {
				t.Errorf("rule %s names unknown threshold %s", r.ID, th)
			}
		}
	}
	if _, err := Analyze(Input{Trace: &timeline.Trace{}}, Config{}); err == nil {
		t.Error("zero Config accepted")
	}
	if _, err := Analyze(Input{}, d); err == nil {
		t.Error("no trace accepted")
	}
}

func TestRulesListed(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules() {
		if seen[r.ID] || r.Summary == "" {
			t.Errorf("rule %+v", r)
		}
		seen[r.ID] = true
	}
	for _, id := range []string{"reads-concentrated", "residual-predicate", "spill", "exchange-spill", "grant-excess", "grant-too-small",
		"grant-wait", "blocking", "cold-cache", "parallel-skew", "parallelism-waits", "page-splits", "log-volume", "events-lost",
		"events-truncated", "events-ambiguous"} {
		if !seen[id] {
			t.Errorf("rule %s missing", id)
		}
	}
}

// The report of a plan with many problems, as JSON and as text: golden
// files, beside independent checks of the order and of every finding's
// required parts.
func TestReportGolden(t *testing.T) {
	in := planOnly(t, "stack_overflow-inequality_index.sqlplan")
	in.Run.DroppedEvents = 3
	r := analyze(t, in)
	for i, f := range r.Findings {
		if f.Title == "" || f.Hint == "" || !strings.HasPrefix(f.Reference, "https://learn.microsoft.com/") || f.Numbers == nil || f.Confidence == "" {
			t.Errorf("finding %d incomplete: %+v", i, f)
		}
		if i > 0 && f.Severity.rank() > r.Findings[i-1].Severity.rank() {
			t.Errorf("finding %d (%s) after a less severe one", i, f.Severity)
		}
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js, &back); err != nil || len(back.Findings) != len(r.Findings) || back.Config != r.Config {
		t.Fatalf("JSON round trip: %v", err)
	}
	testenv.Golden(t, filepath.Join("testdata", "golden", "inequality_index.json"), append(js, '\n'), *update)
	text := r.Text()
	if !strings.HasPrefix(text, "Findings (") || strings.Count(text, "Hint: ") != len(r.Findings) {
		t.Errorf("text:\n%s", text)
	}
	for _, line := range strings.Split(text, "\n") {
		if n := len([]rune(line)); n > textWidth && !strings.Contains(line, "https://") {
			t.Errorf("line of %d runes: %q", n, line)
		}
	}
	testenv.Golden(t, filepath.Join("testdata", "golden", "inequality_index.txt"), []byte(text), *update)
	if got := (&Report{}).Text(); got != "Findings: none.\n" {
		t.Errorf("empty report %q", got)
	}
}

// Arbitrary timelines — random trees, lanes with entries tied to
// operators that may not exist, times in any order — never make a rule
// panic, and every finding keeps its invariants.
func FuzzAnalyze(f *testing.F) {
	f.Add(uint64(1), uint8(5), uint16(40))
	f.Add(uint64(7), uint8(1), uint16(0))
	f.Add(uint64(99), uint8(30), uint16(500))
	f.Fuzz(func(t *testing.T, seed uint64, ops uint8, entries uint16) {
		tr := randomTrace(rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), int(ops), int(entries))
		cfg := DefaultConfig()
		cfg.MaxEvidence = 5
		r, err := Analyze(Input{Trace: tr, Run: Run{Truncated: seed%3 == 0, DroppedEvents: int64(seed % 5)}}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range r.Findings {
			if f.Title == "" || f.Rule == "" || len(f.Evidence) > cfg.MaxEvidence || f.EvidenceTotal < len(f.Evidence) {
				t.Fatalf("finding %+v", f)
			}
			for _, e := range f.Evidence {
				if n, _ := lane(tr, e.Lane); e.Index < 0 || e.Index >= n {
					t.Fatalf("evidence %+v outside its lane", e)
				}
			}
		}
		_ = r.Text()
	})
}

func randomTrace(rng *rand.Rand, ops, entries int) *timeline.Trace {
	tr := &timeline.Trace{Start: 0, End: rng.Int64N(1_000_000) + 1}
	kinds := []string{"Sort", "Hash Match", "Nested Loops", "Clustered Index Scan", "Index Seek", "Parallelism", "Clustered Index Seek"}
	for i := range ops {
		o := timeline.Operator{ID: i, PhysicalOp: kinds[rng.IntN(len(kinds))], Start: rng.Int64N(tr.End), Object: []string{"", "dbo.T", "dbo.T.IX", "a.b.c.d"}[rng.IntN(4)]}
		o.End = o.Start + rng.Int64N(1000)
		if i > 0 {
			p := rng.IntN(i)
			o.Parent = &p
		}
		for th := range rng.IntN(5) {
			o.Threads = append(o.Threads, timeline.ThreadBar{Thread: th, Rows: rng.Int64N(100_000)})
		}
		tr.Operators = append(tr.Operators, o)
	}
	m := func() timeline.Match {
		tr.Lanes.CandidateSets = append(tr.Lanes.CandidateSets, []timeline.NodeID{timeline.NodeID(rng.IntN(ops + 1))})
		return timeline.Match{NodeID: timeline.NodeID(rng.IntN(ops+2) - 1), Ambiguous: rng.IntN(4) == 0, Candidates: timeline.CandidatesRef(len(tr.Lanes.CandidateSets))}
	}
	t := func() int64 { return rng.Int64N(tr.End+1000) - 500 }
	waits := []string{"LCK_M_X", "LCK_M_S", "RESOURCE_SEMAPHORE", "CXPACKET", "CXCONSUMER", "PAGEIOLATCH_SH", "SOS_SCHEDULER_YIELD", ""}
	l := &tr.Lanes
	for range entries {
		switch rng.IntN(8) {
		case 0:
			l.Read = append(l.Read, timeline.PageEvent{T: t(), Match: m(), DatabaseID: uint64(rng.IntN(6))})
		case 1:
			l.Write = append(l.Write, timeline.PageEvent{T: t(), Match: m(), DatabaseID: uint64(rng.IntN(3))})
		case 2:
			s := t()
			l.Lock = append(l.Lock, timeline.LockInterval{T: s, End: s + rng.Int64N(100), Match: m(), Mode: []string{"X", "S", "IX"}[rng.IntN(3)], AcquireSeen: rng.IntN(2) == 0, Resource: "r"})
		case 3:
			s := t()
			l.Wait = append(l.Wait, timeline.WaitInterval{T: s, End: s + rng.Int64N(5000), Match: m(), WaitType: waits[rng.IntN(len(waits))], DurationUs: uint64(rng.IntN(5000)), Open: rng.IntN(5) == 0})
		case 4:
			l.Memory = append(l.Memory, timeline.MemoryEvent{T: t(), Match: m(), Kind: []string{"sort_warning", "hash_warning", "exchange_spill", "query_memory_grant_usage"}[rng.IntN(4)],
				Spill: rng.IntN(2) == 0, GrantedMemoryKB: uint64(rng.IntN(1 << 20)), UsedMemoryKB: uint64(rng.IntN(1 << 20)), Detail: []string{"", "Multiple pass", "Bailout"}[rng.IntN(3)]})
		case 5:
			l.Split = append(l.Split, timeline.SplitEvent{T: t(), Match: m(), Operation: []string{"", "SPLIT_FOR_INSERT", "x"}[rng.IntN(3)]})
		case 6:
			l.Log = append(l.Log, timeline.LogEvent{T: t(), Match: m(), Kind: []string{"record", "flush"}[rng.IntN(2)], Size: uint64(rng.IntN(500))})
		case 7:
			s := t()
			l.IO = append(l.IO, timeline.IOInterval{T: s, End: s + 10, Match: m(), Size: uint64(rng.IntN(8)) * 8192})
		}
	}
	// Lanes are sorted by time, as the timeline writes them.
	sortByT(l)
	tr.Summary.Events = entries
	tr.Summary.Lost = uint64(rng.IntN(3))
	if tr.Summary.Lost > 0 {
		tr.Summary.Gaps = []timeline.Gap{{Missing: tr.Summary.Lost + uint64(rng.IntN(3)), Start: t(), End: t()}}
	}
	return tr
}

func sortByT(l *timeline.Lanes) {
	slices.SortFunc(l.Read, func(a, b timeline.PageEvent) int { return cmp.Compare(a.T, b.T) })
	slices.SortFunc(l.Write, func(a, b timeline.PageEvent) int { return cmp.Compare(a.T, b.T) })
	slices.SortFunc(l.Lock, func(a, b timeline.LockInterval) int { return cmp.Compare(a.T, b.T) })
	slices.SortFunc(l.Wait, func(a, b timeline.WaitInterval) int { return cmp.Compare(a.T, b.T) })
	slices.SortFunc(l.Memory, func(a, b timeline.MemoryEvent) int { return cmp.Compare(a.T, b.T) })
	slices.SortFunc(l.Split, func(a, b timeline.SplitEvent) int { return cmp.Compare(a.T, b.T) })
	slices.SortFunc(l.Log, func(a, b timeline.LogEvent) int { return cmp.Compare(a.T, b.T) })
	slices.SortFunc(l.IO, func(a, b timeline.IOInterval) int { return cmp.Compare(a.T, b.T) })
}

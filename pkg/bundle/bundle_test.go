package bundle

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/internal/testbomb"
	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/sizelimit"
	"github.com/queryreplay/queryreplay/pkg/timeline"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

var update = flag.Bool("update", false, "rewrite testdata/bundle/small.json")

// goldenName is a session name as the tracer writes them.
const goldenName = "queryreplay_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b"

// syntheticTrace builds a real timeline from the stand-in's generated trace
// (no server involved).
func syntheticTrace(t *testing.T) *timeline.Trace {
	t.Helper()
	g, err := standin.GenerateTrace(40, 2)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := showplan.ParseBytes([]byte(g.PlanXML))
	if err != nil {
		t.Fatal(err)
	}
	b, err := timeline.NewBuilder(plan, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, e := range g.Events {
		all.WriteString(e.XML)
		all.WriteByte('\n')
	}
	for ev, err := range xe.NewDecoder(strings.NewReader(all.String())).All() {
		if err != nil {
			t.Fatal(err)
		}
		b.Add(&ev)
	}
	tr, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Lanes.Read) == 0 || len(tr.Operators) == 0 {
		t.Fatalf("synthetic trace is empty: %+v", tr.Summary)
	}
	return tr
}

func TestBundleRoundTrip(t *testing.T) {
	tr := syntheticTrace(t)
	b := &Bundle{SQL: "SELECT 1", Server: ServerInfo{ProductVersion: "14.0.3192.2", EngineEdition: 3, SPID: 51},
		Run:    RunInfo{Session: goldenName, StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Events: []string{"sqlserver.physical_page_read"}},
		Result: Result{Rows: []int64{3}, Events: 200, Warnings: []string{"w"}}, Trace: tr}
	dir := t.TempDir()
	for _, name := range []string{"trace.json", "trace.json.gz"} {
		path := filepath.Join(dir, name)
		if err := Save(path, b); err != nil {
			t.Fatal(err)
		}
		raw, _ := os.ReadFile(path)
		gz := len(raw) > 2 && raw[0] == 0x1f && raw[1] == 0x8b
		if gz != strings.HasSuffix(name, ".gz") {
			t.Fatalf("%s: gzip=%v", name, gz)
		}
		got, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(b)
		c, _ := json.Marshal(got)
		if !bytes.Equal(a, c) {
			t.Fatalf("%s: round trip changed the bundle", name)
		}
	}
	// The trace part is exactly the timeline's JSON (queryreplay timeline --json).
	var generic map[string]json.RawMessage
	var buf bytes.Buffer
	if err := Write(&buf, b); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf.Bytes(), &generic); err != nil {
		t.Fatal(err)
	}
	var fromBundle, direct any
	json.Unmarshal(generic["trace"], &fromBundle)
	d, _ := json.Marshal(tr)
	json.Unmarshal(d, &direct)
	a, _ := json.Marshal(fromBundle)
	c, _ := json.Marshal(direct)
	if !bytes.Equal(a, c) {
		t.Fatal("the bundle's trace part differs from the timeline JSON")
	}
}

func TestBundleErrors(t *testing.T) {
	cases := map[string]string{
		`{"format":"queryreplay-trace","version":4,"trace":{}}`: "version 4 is not supported",
		`{"format":"queryreplay-trace","version":0,"trace":{}}`: "version 0 is not supported",
		`{"format":"other","version":1}`:                        `format is "other"`,
		`not json`:                                              "not JSON",
		`{"format":"queryreplay-trace","version":1}`:            "no trace",
	}
	for in, want := range cases {
		_, err := Read(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadBundle(%s) = %v, want %q", in, err, want)
		}
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"format":"queryreplay-trace","version":9}`))
	zw.Close()
	if _, err := Read(&gz); err == nil || !strings.Contains(err.Error(), "version 9") {
		t.Errorf("gzip bundle with a bad version: %v", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("loading a missing file succeeded")
	}
	// A failed save leaves nothing under the name.
	if err := Save(filepath.Join(t.TempDir(), "no", "dir", "x.json"), &Bundle{}); err == nil {
		t.Error("saving into a missing directory succeeded")
	}
}

// TestBundleVersion1File checks that a version-1 bundle written earlier
// (testdata/bundle/small.json, also the fuzz seed) still loads: saved traces
// must stay readable. -update rewrites it from the current writer.
func TestBundleVersion1File(t *testing.T) {
	path := filepath.Join("testdata", "bundle", "small.json")
	if *update {
		tr := syntheticTrace(t)
		b := &Bundle{SQL: "SELECT 1", Server: ServerInfo{ProductVersion: "14.0.3192.2", EngineEdition: 3, SPID: 51},
			Run: RunInfo{Session: goldenName, StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}, Result: Result{Rows: []int64{1}}, Trace: tr}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := Save(path, b); err != nil {
			t.Fatal(err)
		}
	}
	b, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if b.Version != 1 || b.Run.Session != goldenName || b.Server.SPID != 51 || len(b.RawTrace) < 1000 {
		t.Fatalf("loaded %+v", b)
	}
	var tr struct {
		Operators []json.RawMessage `json:"operators"`
		Lanes     struct {
			Read []json.RawMessage `json:"read"`
		} `json:"lanes"`
	}
	if err := json.Unmarshal(b.RawTrace, &tr); err != nil || len(tr.Operators) == 0 || len(tr.Lanes.Read) == 0 {
		t.Fatalf("trace part: %v, %d operators, %d reads", err, len(tr.Operators), len(tr.Lanes.Read))
	}
	if b.Trace == nil || len(b.Trace.Operators) != len(tr.Operators) || len(b.Trace.Lanes.Read) != len(tr.Lanes.Read) {
		t.Fatalf("the trace part did not load as a timeline.Trace: %+v", b.Trace)
	}
}

func FuzzReadBundle(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "bundle", "*.json"))
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"format":"queryreplay-trace","version":1,"trace":{"operators":[]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := Write(&out, b); err != nil {
			t.Fatalf("a bundle that was read cannot be written: %v", err)
		}
		again, err := Read(&out)
		if err != nil {
			t.Fatalf("a written bundle cannot be read back: %v", err)
		}
		x, _ := json.Marshal(b)
		y, _ := json.Marshal(again)
		if !bytes.Equal(x, y) {
			t.Fatal("write/read round trip changed the bundle")
		}
	})
}

// TestReadBundleGzipBomb: a megabyte of gzip that expands to a gigabyte
// (whitespace, or one huge string value) fails with an error naming the
// limit, and costs memory in proportion to the limit, not to the bomb.
func TestReadBundleGzipBomb(t *testing.T) {
	const expand = 1 << 30
	bombs := map[string][]byte{
		"whitespace": testbomb.Gzip("{", ' ', expand),
		"string":     testbomb.Gzip(testbomb.BundlePrefix, 'A', expand),
	}
	for name, bomb := range bombs {
		for _, o := range []ReadOptions{{MaxBytes: 8 << 20, Knob: "--max-bundle-mb"}, {}} {
			limit := o.limit().Limit
			var err error
			alloc := testbomb.Alloc(func() { _, err = ReadLimit(bytes.NewReader(bomb), o) })
			var se *sizelimit.Error
			if !errors.As(err, &se) || se.Limit != limit || !strings.Contains(err.Error(), sizelimit.Format(limit)) ||
				!strings.Contains(err.Error(), o.Knob) || !strings.Contains(err.Error(), "bundle's JSON, decompressed,") {
				t.Fatalf("%s bomb (%s), limit %d: %v", name, testbomb.Describe(bomb, expand), limit, err)
			}
			if alloc > 4*uint64(limit) {
				t.Errorf("%s bomb, limit %d: allocated %d bytes", name, limit, alloc)
			}
		}
	}
}

// TestReadBundleLimitEdge: a bundle of exactly the limit reads, one byte
// more does not, compressed or not.
func TestReadBundleLimitEdge(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "bundle", "small.json"))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	zw.Close()
	for name, in := range map[string][]byte{"plain": data, "gzip": gz.Bytes()} {
		if _, err := ReadLimit(bytes.NewReader(in), ReadOptions{MaxBytes: int64(len(data))}); err != nil {
			t.Errorf("%s bundle at the limit: %v", name, err)
		}
		_, err := ReadLimit(bytes.NewReader(in), ReadOptions{MaxBytes: int64(len(data)) - 1})
		if !errors.Is(err, sizelimit.ErrTooLarge) {
			t.Errorf("%s bundle one byte over the limit: %v", name, err)
		}
	}
	path := filepath.Join(t.TempDir(), "b.json")
	os.WriteFile(path, data, 0o600)
	if _, err := LoadLimit(path, ReadOptions{MaxBytes: 100, Knob: "--knob"}); !errors.Is(err, sizelimit.ErrTooLarge) ||
		!strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "--knob") {
		t.Errorf("LoadBundleLimit over the limit: %v", err)
	}
}

// FuzzReadBundleLimit: under a small limit, any input (plain, or gzip of
// the fuzzed bytes) either is too large — exactly when its JSON is longer
// than the limit — or reads as ReadBundle reads it.
func FuzzReadBundleLimit(f *testing.F) {
	f.Add([]byte(`{"format":"queryreplay-trace","version":1,"trace":{"operators":[]}}`), false, uint16(70))
	f.Add([]byte(`{"format":"queryreplay-trace","version":1,"trace":{"operators":[]}}`), true, uint16(69))
	f.Add([]byte(`{"format":"queryreplay-trace","version":1,"sql":"`+strings.Repeat(" ", 300)), true, uint16(64))
	f.Fuzz(func(t *testing.T, data []byte, compress bool, limit uint16) {
		in := data
		if compress {
			var gz bytes.Buffer
			zw := gzip.NewWriter(&gz)
			zw.Write(data)
			zw.Close()
			in = gz.Bytes()
		} else if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
			return // its length is not its JSON's
		}
		max := int64(limit) + 1
		got, err := ReadLimit(bytes.NewReader(in), ReadOptions{MaxBytes: max})
		if int64(len(data)) > max {
			if !errors.Is(err, sizelimit.ErrTooLarge) {
				t.Fatalf("%d bytes over a limit of %d: %v", len(data), max, err)
			}
			return
		}
		want, werr := Read(bytes.NewReader(in))
		if (err == nil) != (werr == nil) {
			t.Fatalf("within the limit: %v; unlimited: %v", err, werr)
		}
		if err == nil {
			x, _ := json.Marshal(got)
			y, _ := json.Marshal(want)
			if !bytes.Equal(x, y) {
				t.Fatal("the limit changed what was read")
			}
		}
	})
}

// TestBundleStatementsRoundTrip: a version 2 bundle keeps its statement
// tree (each node's text, parent and trace) through save and read.
func TestBundleStatementsRoundTrip(t *testing.T) {
	b := &Bundle{Format: Format, Version: Version, SQL: "EXEC dbo.P", RawTrace: []byte(`{"schema":3}`),
		Statements: []timeline.Statement{{ID: 0, Parent: -1, Kind: "batch"},
			{ID: 1, Parent: 0, Kind: "statement", Text: "SELECT 1", NestLevel: 1, OffsetStart: 40, OffsetEnd: 56, Rows: 1,
				Trace: &timeline.Trace{Schema: timeline.Schema, Statement: "SELECT 1"}}}}
	var buf bytes.Buffer
	if err := Write(&buf, b); err != nil {
		t.Fatal(err)
	}
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Statements) != 2 || got.Statements[1].Text != "SELECT 1" || got.Statements[1].Parent != 0 ||
		got.Statements[1].OffsetEnd != 56 || got.Statements[1].Trace == nil || got.Statements[1].Trace.Statement != "SELECT 1" {
		t.Errorf("statements after a round trip = %+v", got.Statements)
	}
}

// statementsBundle is a split batch as the tracer assembles it: Trace is
// the first planned statement's timeline with the session's losses, the
// statement keeps its own (no losses of its own).
func statementsBundle(t *testing.T) (*Bundle, *timeline.Trace) {
	tr := syntheticTrace(t)
	st := *tr
	tr.Summary.Lost = 2
	second := timeline.Trace{Schema: timeline.Schema, Statement: "SELECT 2", Start: 0, End: 10}
	return &Bundle{SQL: "SELECT 1; SELECT 2", Run: RunInfo{Session: goldenName}, Plan: "<ShowPlanXML/>", Trace: tr,
		Statements: []timeline.Statement{{ID: 0, Parent: -1, Kind: "batch", Trace: &timeline.Trace{Schema: timeline.Schema}},
			{ID: 1, Parent: 0, Kind: "statement", Text: "SELECT 1", Plan: "<ShowPlanXML/>", Trace: &st},
			{ID: 2, Parent: 0, Kind: "statement", Text: "SELECT 2", OffsetStart: 18, OffsetEnd: -1, Plan: "<ShowPlanXML/>", Trace: &second}}}, &st
}

// Issue 30 review: the bundle stored the first statement's timeline twice,
// as Trace and inside Statements. It is stored once; reading gives both
// back, each as it was.
func TestBundleStoresThePrimaryTimelineOnce(t *testing.T) {
	b, st := statementsBundle(t)
	var buf bytes.Buffer
	if err := Write(&buf, b); err != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()
	// independent of the reader: the JSON has the operators of that
	// timeline once, and the statement's trace is not there
	var wire struct {
		Version    int                          `json:"version"`
		Trace      json.RawMessage              `json:"trace"`
		Statements []map[string]json.RawMessage `json:"statements"`
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		t.Fatal(err)
	}
	if _, ok := wire.Statements[1]["trace"]; ok {
		t.Errorf("statement 1's timeline is stored beside the bundle's trace")
	}
	if _, ok := wire.Statements[2]["trace"]; !ok {
		t.Errorf("statement 2's own timeline was left out")
	}
	var top struct {
		Operators []json.RawMessage `json:"operators"`
	}
	if err := json.Unmarshal(wire.Trace, &top); err != nil || len(top.Operators) != len(st.Operators) || wire.Version < 3 {
		t.Errorf("version %d, the bundle's trace has %d operators (%v), want the statement's %d", wire.Version, len(top.Operators), err, len(st.Operators))
	}
	got, err := Read(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if got.Statements[1].Trace == nil || !reflect.DeepEqual(*got.Statements[1].Trace, *st) {
		t.Fatalf("statement 1's timeline after a round trip differs from the one written")
	}
	if got.Trace.Summary.Lost != 2 || got.Statements[1].Trace.Summary.Lost != 0 {
		t.Errorf("losses: trace %d, statement %d; want 2 and 0", got.Trace.Summary.Lost, got.Statements[1].Trace.Summary.Lost)
	}
	// saving a loaded bundle writes the same bytes
	var again bytes.Buffer
	if err := Write(&again, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), raw) {
		t.Errorf("a loaded bundle saved again differs from the file it came from")
	}
	// a statement whose timeline is not the bundle's (one plan: Trace is
	// the whole batch's) keeps its own
	b2, _ := statementsBundle(t)
	b2.Statements[1].Trace.End++
	buf.Reset()
	if err := Write(&buf, b2); err != nil {
		t.Fatal(err)
	}
	got2, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got2.Statements[1].Trace == nil || got2.Statements[1].Trace.End != b2.Statements[1].Trace.End {
		t.Errorf("a statement timeline unlike the bundle's was not kept")
	}
}

// TestBundleVersion3StatementsFile: the version 3 file (also a fuzz seed)
// loads with statement 1's timeline rebuilt from the bundle's trace.
func TestBundleVersion3StatementsFile(t *testing.T) {
	b, err := Load(filepath.Join("testdata", "bundle", "statements_v3.json"))
	if err != nil {
		t.Fatal(err)
	}
	one := b.Statements[1].Trace
	if b.Version != 3 || one == nil || len(one.Operators) == 0 || len(one.Operators) != len(b.Trace.Operators) || one.Summary.Lost != 0 || b.Trace.Summary.Lost != 2 {
		t.Fatalf("version %d, statement 1 timeline %v", b.Version, one != nil)
	}
}

// TestBundleVersion2StatementsFile: a version 2 bundle (both timelines
// stored, written before the format kept the first once) still loads with
// every statement's timeline.
func TestBundleVersion2StatementsFile(t *testing.T) {
	b, err := Load(filepath.Join("testdata", "bundle", "statements_v2.json"))
	if err != nil {
		t.Fatal(err)
	}
	if b.Version != 2 || len(b.Statements) != 3 || b.Trace == nil {
		t.Fatalf("loaded version %d, %d statements, trace %v", b.Version, len(b.Statements), b.Trace != nil)
	}
	one := b.Statements[1].Trace
	if one == nil || len(one.Operators) == 0 || len(one.Operators) != len(b.Trace.Operators) || b.Statements[2].Trace.Statement != "SELECT 2" {
		t.Errorf("statement timelines of a version 2 file: %+v", b.Statements)
	}
}

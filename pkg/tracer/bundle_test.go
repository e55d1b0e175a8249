package tracer

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

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
	if _, err := decodeAll(strings.NewReader(all.String()), b.Add); err != nil {
		t.Fatal(err)
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
		if err := SaveBundle(path, b); err != nil {
			t.Fatal(err)
		}
		raw, _ := os.ReadFile(path)
		gz := len(raw) > 2 && raw[0] == 0x1f && raw[1] == 0x8b
		if gz != strings.HasSuffix(name, ".gz") {
			t.Fatalf("%s: gzip=%v", name, gz)
		}
		got, err := LoadBundle(path)
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
	if err := WriteBundle(&buf, b); err != nil {
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
		`{"format":"queryreplay-trace","version":2,"trace":{}}`: "version 2 is not supported",
		`{"format":"other","version":1}`:                        `format is "other"`,
		`not json`:                                              "not JSON",
		`{"format":"queryreplay-trace","version":1}`:            "no trace",
	}
	for in, want := range cases {
		_, err := ReadBundle(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadBundle(%s) = %v, want %q", in, err, want)
		}
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"format":"queryreplay-trace","version":9}`))
	zw.Close()
	if _, err := ReadBundle(&gz); err == nil || !strings.Contains(err.Error(), "version 9") {
		t.Errorf("gzip bundle with a bad version: %v", err)
	}
	if _, err := LoadBundle(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("loading a missing file succeeded")
	}
	// A failed save leaves nothing under the name.
	if err := SaveBundle(filepath.Join(t.TempDir(), "no", "dir", "x.json"), &Bundle{}); err == nil {
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
		if err := SaveBundle(path, b); err != nil {
			t.Fatal(err)
		}
	}
	b, err := LoadBundle(path)
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
		b, err := ReadBundle(bytes.NewReader(data))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := WriteBundle(&out, b); err != nil {
			t.Fatalf("a bundle that was read cannot be written: %v", err)
		}
		again, err := ReadBundle(&out)
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

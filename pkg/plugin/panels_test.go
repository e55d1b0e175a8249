package plugin

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/queryreplay/queryreplay/internal/symfixture"
	"github.com/queryreplay/queryreplay/pkg/frames"
)

var updatePanels = flag.Bool("update-panels", false, "rewrite testdata/frames/panels.json from a stand-in trace")

// panelsFile holds real frames for the jest tests that run Grafana's own
// code on them (src/contract/panels.test.ts): what this datasource answers,
// per output, for one trace of the stand-in with call stacks.
var panelsFile = filepath.Join("..", "..", "testdata", "frames", "panels.json")

// TestBuiltInPanelOutputs traces the stand-in's key lookup with call
// stacks, asks for each output Grafana's built-in panels read, and checks
// the frames both as built now and as committed for jest (with
// -update-panels it rewrites the file first; a trace's ids and times
// differ run to run, so the file is checked by these rules, not by bytes).
func TestBuiltInPanelOutputs(t *testing.T) {
	fx, sym := symfixture.ServeTest(t)
	f := startWithModules(t, "sql2022", fx.Builds)
	d := f.datasource(t, "ds1", map[string]any{"allowBufferPoolClear": true, "symbolServers": []string{sym.URL}, "symbolCacheDir": t.TempDir()})
	ctx := context.Background()
	tr := ok(t, run(t, d, ctx, query("A", map[string]any{"queryType": "trace", "sql": seekSQL, "maxDataPoints": 100_000,
		"frames":  []string{frames.GroupTrace, frames.GroupLanes},
		"options": map[string]any{"callStacks": true, "clearBufferPool": true, "disableReadAhead": true}}))["A"])
	id := traceIDOf(t, tr)
	panels := map[string]data.Frames{"default": tr}
	for _, o := range frames.Outputs {
		panels[o] = ok(t, run(t, d, ctx, query("B", map[string]any{"queryType": "bundle", "traceId": id, "output": o,
			"maxDataPoints": 100_000}))["B"])
	}
	checkPanels(t, panels)
	if *updatePanels {
		writePanels(t, panels)
	}
	checkPanels(t, readPanels(t))
}

func writePanels(t *testing.T, panels map[string]data.Frames) {
	t.Helper()
	raw := map[string][]json.RawMessage{}
	for k, fs := range panels {
		for _, f := range fs {
			b, err := data.FrameToJSON(f, data.IncludeAll)
			if err != nil {
				t.Fatal(err)
			}
			raw[k] = append(raw[k], b)
		}
	}
	out, err := json.MarshalIndent(raw, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(panelsFile, append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readPanels(t *testing.T) map[string]data.Frames {
	t.Helper()
	b, err := os.ReadFile(panelsFile)
	if err != nil {
		t.Fatalf("%v (go test ./pkg/plugin -run TestBuiltInPanelOutputs -update-panels writes it)", err)
	}
	var raw map[string][]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	out := map[string]data.Frames{}
	for k, fs := range raw {
		for _, r := range fs {
			f := &data.Frame{}
			if err := json.Unmarshal(r, f); err != nil {
				t.Fatalf("%s: %v", k, err)
			}
			out[k] = append(out[k], f)
		}
	}
	return out
}

func frameNames(fs data.Frames) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

func int64s(t *testing.T, f *data.Frame, name string) []int64 {
	t.Helper()
	fl, _ := f.FieldByName(name)
	if fl == nil {
		t.Fatalf("frame %s has no field %s", f.Name, name)
	}
	out := make([]int64, fl.Len())
	for i := range out {
		v, ok := fl.ConcreteAt(i)
		if !ok {
			t.Fatalf("%s.%s row %d is null", f.Name, name, i)
		}
		switch n := v.(type) {
		case int64:
			out[i] = n
		case time.Time:
			out[i] = n.UnixMilli()
		default:
			t.Fatalf("%s.%s row %d is %T", f.Name, name, i, v)
		}
	}
	return out
}

func distinct(vs []int64) int {
	s := slices.Clone(vs)
	slices.Sort(s)
	return len(slices.Compact(s))
}

// checkPanels is the Go side's own reading of each panel's rule
// (docs/frames.md §3.12), independent of the jest tests.
func checkPanels(t *testing.T, p map[string]data.Frames) {
	t.Helper()
	// a plain query's first frame is the trace: the Flame Graph cannot draw it
	if n := frameNames(p["default"]); len(n) == 0 || n[0] != "trace" {
		t.Fatalf("default frames %v", n)
	}
	fg := p[frames.OutputFlameGraph]
	if n := frameNames(fg); !slices.Equal(n, []string{"callstacks"}) {
		t.Fatalf("flameGraph frames %v", n)
	}
	levels, values, selfs := int64s(t, fg[0], "level"), int64s(t, fg[0], "value"), int64s(t, fg[0], "self")
	if len(levels) < 3 || levels[0] != 0 {
		t.Fatalf("flame graph levels %v: want a root and real stacks", levels)
	}
	for i := 1; i < len(levels); i++ {
		// nested-set order: a row is the child of the nearest row above it one level up
		if levels[i] < 1 || levels[i] > levels[i-1]+1 || selfs[i] > values[i] {
			t.Fatalf("flame graph row %d: level %d after %d, value %d self %d", i, levels[i], levels[i-1], values[i], selfs[i])
		}
	}
	ng := p[frames.OutputNodeGraph]
	if n := frameNames(ng); !slices.Equal(n, []string{"nodes", "edges"}) {
		t.Fatalf("nodeGraph frames %v", n)
	}
	if n := frameNames(p[frames.OutputTable]); !slices.Equal(n, []string{"operators"}) || p[frames.OutputTable][0].Rows() != ng[0].Rows() {
		t.Fatalf("table frames %v", n)
	}
	checkScaled(t, p[frames.OutputStateTimeline], p["default"])
}

// checkScaled: on the State Timeline output a row's time is its µs offset
// from the trace start in ms, so the read lane keeps one x value per
// distinct µs start; on the real clock (the default frames) the same reads
// share milliseconds.
func checkScaled(t *testing.T, st, real data.Frames) {
	t.Helper()
	n := frameNames(st)
	k := slices.Index(n, "lane_read")
	if k < 1 || len(n) != k+8 || !strings.HasPrefix(n[0], "phases_") || !strings.HasPrefix(n[k-1], "phases_") {
		t.Fatalf("stateTimeline frames %v: want each operator's phases, then the eight lanes", n)
	}
	read := st[k]
	var origin int64
	c := custom(t, read)["timeBase"].(map[string]any)
	origin = int64(c["originUs"].(float64))
	for _, f := range st {
		us, ms := int64s(t, f, "startUs"), int64s(t, f, "start")
		for i := range us {
			if ms[i] != us[i]-origin {
				t.Fatalf("%s row %d: start %d ms, want %d (startUs %d − origin %d)", f.Name, i, ms[i], us[i]-origin, us[i], origin)
			}
		}
	}
	var readReal *data.Frame
	for _, f := range real {
		if f.Name == "lane_read" {
			readReal = f
		}
	}
	us := distinct(int64s(t, read, "startUs"))
	if got := distinct(int64s(t, read, "start")); got != us || us < 2 {
		t.Fatalf("scaled read lane: %d x values for %d distinct µs", got, us)
	}
	if readReal == nil || distinct(int64s(t, readReal, "start")) >= distinct(int64s(t, readReal, "startUs")) {
		t.Fatal("the traced reads do not share milliseconds on the real clock: the scaled time base shows nothing here")
	}
}

// The State Timeline output's time range is on the scaled clock: a zoom
// there is the window of the same µs; an explicit window still wins, and
// other outputs keep the real clock.
func TestStateTimelineRangeIsOnTheScaledClock(t *testing.T) {
	at := func(ms int64) time.Time { return frames.ScaledEpoch.Add(time.Duration(ms) * time.Millisecond) }
	span := traceSpan{zero: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), start: -20, end: 1000}
	tr := backend.TimeRange{From: at(100), To: at(200)}
	for _, qt := range []string{QueryBundle, QueryView, QueryTrace} {
		r := Query{QueryType: qt, Output: frames.OutputStateTimeline, TimeRange: tr}.frameRequest(span)
		if r.Window == nil || *r.Window != (frames.Window{FromUs: 80, ToUs: 180}) {
			t.Errorf("%s: window %v, want 80–180 µs", qt, r.Window)
		}
	}
	own := &frames.Window{FromUs: 5, ToUs: 6}
	if r := (Query{QueryType: QueryView, Output: frames.OutputStateTimeline, TimeRange: tr, Window: own}).frameRequest(span); r.Window != own {
		t.Errorf("explicit window replaced by %v", r.Window)
	}
	if r := (Query{QueryType: QueryBundle, Output: frames.OutputTable, TimeRange: tr}).frameRequest(span); r.Window != nil {
		t.Errorf("table output got window %v", r.Window)
	}
}

package plugin

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/queryreplay/queryreplay/pkg/findings"
)

// A trace comes with its findings frame; two stored traces compare
// operator by operator, with both sides' frames after the comparison.
func TestFindingsFrameAndCompareQuery(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "ds1", nil)
	spill := "SELECT l.OrderID, l.ProductID, l.Quantity, l.Price FROM dbo.OrderLines AS l ORDER BY l.Price DESC, l.OrderID OPTION (MAX_GRANT_PERCENT = 0.01)"
	fits := "SELECT l.OrderID, l.ProductID, l.Quantity, l.Price FROM dbo.OrderLines AS l ORDER BY l.Price DESC, l.OrderID"
	rs := run(t, d, bg, query("A", map[string]any{"sql": spill}), query("B", map[string]any{"sql": fits}))
	fa, fb := ok(t, rs["A"]), ok(t, rs["B"])
	if fa[1].Name != "findings" {
		t.Fatalf("second frame %q, want findings", fa[1].Name)
	}
	fr := frameNamed(t, fa, "findings")
	rules, _ := fr.FieldByName("rule")
	var got []string
	for i := range fr.Rows() {
		got = append(got, rules.At(i).(string))
	}
	if !strings.Contains(strings.Join(got, ","), "spill") {
		t.Errorf("findings of the spilling sort: %v", got)
	}
	if cfg, ok := custom(t, fr)["config"].(map[string]any); !ok || cfg["readShare"] != findings.DefaultConfig().ReadShare {
		t.Errorf("findings meta %+v", custom(t, fr))
	}
	idA, idB := traceIDOf(t, fa), traceIDOf(t, fb)
	cs := ok(t, run(t, d, bg, query("C", map[string]any{"queryType": "compare", "traceIds": []string{idA, idB}, "maxDataPoints": 500}))["C"])
	if n := names(cs); len(n) < 4 || n[0] != "compare" || n[1] != "compare_operators" || !slices.Contains(n, "lane_read_b") || !slices.Contains(n, "operators_a") {
		t.Fatalf("compare frames: %v", names(cs))
	}
	verdict, _ := cs[1].FieldByName("verdict")
	var verdicts []string
	for i := range cs[1].Rows() {
		verdicts = append(verdicts, verdict.At(i).(string))
	}
	if !strings.Contains(strings.Join(verdicts, "|"), "Sort: spills 1 → 0") {
		t.Errorf("verdicts %q", verdicts)
	}
	if ids := fmt.Sprint(custom(t, cs[0])["traceIds"]); ids != fmt.Sprint([]string{idA, idB}) {
		t.Errorf("traceIds %v", ids)
	}
	if s := f.sessions(t); len(s) != 0 {
		t.Fatalf("sessions left: %v", s)
	}
}

func names(fs data.Frames) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

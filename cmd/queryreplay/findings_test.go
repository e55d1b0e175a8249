package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/compare"
	"github.com/queryreplay/queryreplay/pkg/findings"
)

// traceBundle traces sql on the stand-in with the trace command and
// returns the bundle's path.
func traceBundle(t *testing.T, dsn, name, sql string, args ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".json.gz")
	code, out, errs := runTraceCmd(t, "", append([]string{"--dsn", dsn, "--sql", sql, "-q", "-o", path}, args...)...)
	if code != 0 {
		t.Fatalf("trace %s: exit %d\n%s\n%s", name, code, out, errs)
	}
	return path
}

// sortSpillSQL is a sort whose 512 KB grant is too small.
const sortSpillSQL = "SELECT l.OrderID, l.ProductID, l.Quantity, l.Price FROM dbo.OrderLines AS l ORDER BY l.Price DESC, l.OrderID OPTION (MAX_GRANT_PERCENT = 0.01)"

func TestFindingsCommand(t *testing.T) {
	srv := startTraceStandin(t)
	spill := traceBundle(t, srv.DSN, "sort_spill", sortSpillSQL)

	code, out, errs := runCLI(t, "findings", spill)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"Findings (", "WARNING   Sort spilled to tempdb (single pass)", "rule spill", "Hint: ", "See: https://learn.microsoft.com/"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}

	code, out, errs = runCLI(t, "findings", "--json", spill)
	if code != 0 {
		t.Fatalf("--json: exit %d: %s", code, errs)
	}
	var rep findings.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	var got *findings.Finding
	for i := range rep.Findings {
		if rep.Findings[i].Rule == "spill" {
			got = &rep.Findings[i]
		}
	}
	// The sort's 512 KB grant is too small: SortSpillDetails WritesToTempDb
	// on the Sort (node 0), a sort_warning event tied to it.
	b, err := bundle.Load(spill)
	if err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Operators[0].NodeID != 0 || got.EvidenceTotal != 1 || got.Evidence[0].Lane != "memory" ||
		b.Trace.Lanes.Memory[got.Evidence[0].Index].Kind != "sort_warning" {
		t.Fatalf("spill finding %+v", got)
	}
	if v, ok := got.Number("tempdbPagesWritten"); !ok || v <= 0 {
		t.Errorf("tempdb pages %v %v", v, ok)
	}

	// Thresholds: from a file and from --set; a bad one is a usage error.
	cfg := filepath.Join(t.TempDir(), "thresholds.json")
	os.WriteFile(cfg, []byte(`{"minRowsRead": 5}`), 0o644)
	if code, out, errs := runCLI(t, "findings", "--json", "--config", cfg, "--set", "maxEvidence=3", spill); code != 0 ||
		!strings.Contains(out, `"minRowsRead": 5`) || !strings.Contains(out, `"maxEvidence": 3`) {
		t.Errorf("config: exit %d %s", code, errs)
	}
	for _, bad := range [][]string{{"--set", "readShare"}, {"--set", "nope=1"}, {"--config", filepath.Join(t.TempDir(), "missing.json")}, {}} {
		args := append([]string{"findings"}, bad...)
		if len(bad) > 0 {
			args = append(args, spill)
		}
		if code, _, errs := runCLI(t, args...); code != 2 || errs == "" {
			t.Errorf("%v: exit %d stderr %q", bad, code, errs)
		}
	}
	if code, _, errs := runCLI(t, "findings", filepath.Join(t.TempDir(), "none.json.gz")); code != 1 || !strings.Contains(errs, "none.json.gz") {
		t.Errorf("missing bundle: exit %d %q", code, errs)
	}
	if code, out, _ := runCLI(t, "findings", "--thresholds"); code != 0 || !strings.Contains(out, "reads-concentrated") || !strings.Contains(out, "readShare") {
		t.Errorf("--thresholds: exit %d\n%s", code, out)
	}
}

func TestCompareCommand(t *testing.T) {
	srv := startTraceStandin(t)
	// With blocker sampling on (the default): the sampler's statements run
	// mid-batch, and "the same query" must still trace the same.
	spill := traceBundle(t, srv.DSN, "sort_spill", sortSpillSQL)
	again := traceBundle(t, srv.DSN, "sort_spill_again", sortSpillSQL)
	lookup := traceBundle(t, srv.DSN, "lookup", "SELECT o.OrderID, o.OrderDate, o.Amount FROM dbo.Orders AS o WHERE o.CustomerID = 42")

	code, out, errs := runCLI(t, "compare", spill, again)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"A: sort_spill.json.gz (2 operators)", "B: sort_spill_again.json.gz (2 operators)", "the plans have the same shape", "Verdicts:", "[0→0] Sort"} {
		if !strings.Contains(out, want) {
			t.Errorf("same query: lacks %q:\n%s", want, out)
		}
	}
	code, out, errs = runCLI(t, "compare", "--json", spill, lookup)
	if code != 0 {
		t.Fatalf("--json: exit %d: %s", code, errs)
	}
	var r compare.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("--json: %v", err)
	}
	// Different queries share nothing: the sort and its scan go, the
	// nested loops, seek and lookup come.
	if r.Counts.Removed+r.Counts.Replaced == 0 || r.Counts.Added+r.Counts.Replaced == 0 || r.ReadsSource != "logical" {
		t.Errorf("counts %+v source %s", r.Counts, r.ReadsSource)
	}
	if code, _, errs := runCLI(t, "compare", spill); code != 2 || errs == "" {
		t.Errorf("one bundle: exit %d", code)
	}
	if code, _, _ := runCLI(t, "compare", spill, filepath.Join(t.TempDir(), "x.json")); code != 1 {
		t.Errorf("missing bundle: exit %d", code)
	}
}

// queryreplay trace prints the findings under its summary, exactly as
// queryreplay findings prints them for the saved bundle.
func TestTraceFindingsUnderSummary(t *testing.T) {
	srv := startTraceStandin(t)
	path := filepath.Join(t.TempDir(), "sort_spill.json.gz")
	code, printed, errs := runTraceCmd(t, "", "--dsn", srv.DSN, "--sql", sortSpillSQL, "-o", path)
	if code != 0 {
		t.Fatalf("trace: exit %d\n%s\n%s", code, printed, errs)
	}
	_, alone, _ := runCLI(t, "findings", path)
	if !strings.Contains(alone, "Sort spilled to tempdb") {
		t.Fatalf("findings of the sort spill:\n%s", alone)
	}
	summary := strings.Index(printed, "Rows")
	under := strings.LastIndex(printed, "\n"+alone)
	if summary < 0 || under < summary || under+1+len(alone) != len(printed) {
		t.Errorf("trace output does not end with the findings under its summary:\n%s\nfindings alone:\n%s", printed, alone)
	}
	var out strings.Builder
	out.Reset()
	writeTraceFindings(&out, &bundle.Bundle{})
	if out.Len() != 0 {
		t.Errorf("a bundle without a timeline printed %q", out.String())
	}
}

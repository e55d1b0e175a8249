package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const planTestdata = "../../pkg/showplan/testdata/plans"

func runPlan(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &env{stdout: &stdout, stderr: &stderr, stdin: strings.NewReader("")})
	return code, stdout.String(), stderr.String()
}

// inspectJSON mirrors the documented JSON shape of `plan inspect --json`.
type inspectJSON struct {
	Statements []struct {
		Type  string `json:"type"`
		Text  string `json:"text"`
		Nodes []struct {
			ID             int    `json:"id"`
			Parent         *int   `json:"parent"`
			Children       []int  `json:"children"`
			PhysicalOp     string `json:"physicalOp"`
			LogicalOp      string `json:"logicalOp"`
			Behavior       string `json:"behavior"`
			BlockingInputs []int  `json:"blockingInputs"`
			Rule           string `json:"rule"`
			KeyLookup      bool   `json:"keyLookup"`
			Object         *struct {
				Database, Schema, Table, Index, IndexKind, Storage string
			} `json:"object"`
			EstimateRows float64 `json:"estimateRows"`
			Actual       *struct {
				Rows          int64 `json:"rows"`
				Executions    int64 `json:"executions"`
				ElapsedMs     *int64
				CPUMs         *int64 `json:"cpuMs"`
				LogicalReads  int64  `json:"logicalReads"`
				PhysicalReads int64  `json:"physicalReads"`
				Threads       []struct {
					Thread int `json:"thread"`
				} `json:"threads"`
			} `json:"actual"`
			Warnings []struct {
				Kind string `json:"kind"`
			} `json:"warnings"`
		} `json:"nodes"`
	} `json:"statements"`
}

func TestPlanInspectJSON(t *testing.T) {
	path := filepath.Join(planTestdata, "performancestudio", "key_lookup_plan.sqlplan")
	code, stdout, stderr := runPlan(t, "plan", "inspect", "--json", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc inspectJSON
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, stdout)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Statements) != 1 {
		t.Fatalf("statements = %d", len(doc.Statements))
	}
	st := doc.Statements[0]
	if want := bytes.Count(raw, []byte("<RelOp ")); len(st.Nodes) != want {
		t.Errorf("nodes = %d, file has %d RelOps", len(st.Nodes), want)
	}
	if st.Type != "SELECT" || !strings.Contains(st.Text, "[dbo].[Users]") {
		t.Errorf("statement %q %q", st.Type, st.Text)
	}
	root := st.Nodes[0]
	if root.Parent != nil || root.PhysicalOp != "Nested Loops" || len(root.Children) != 2 || root.Behavior != "streaming" || root.Object != nil {
		t.Errorf("root node = %+v", root)
	}
	lookup := st.Nodes[2]
	if lookup.ID != 4 || !lookup.KeyLookup || lookup.Parent == nil || *lookup.Parent != 0 ||
		lookup.Object == nil || lookup.Object.Table != "Users" || lookup.Object.Index != "PK_Users_Id" {
		t.Errorf("key lookup node = %+v", lookup)
	}
	if a := lookup.Actual; a == nil || a.Rows != 1 || a.Executions != 117 || a.LogicalReads != 319 || len(a.Threads) != 1 || a.CPUMs == nil {
		t.Errorf("key lookup actual = %+v", lookup.Actual)
	}
	if lookup.Rule == "" || lookup.BlockingInputs == nil || lookup.Warnings == nil {
		t.Errorf("rule, blockingInputs and warnings must always be present: %+v", lookup)
	}
}

func TestPlanInspectJSONHashJoinSemantics(t *testing.T) {
	path := filepath.Join(planTestdata, "html-query-plan", "columns_with_no_statistics.sqlplan")
	code, stdout, stderr := runPlan(t, "plan", "inspect", "--json", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc inspectJSON
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	join := doc.Statements[0].Nodes[0]
	if join.PhysicalOp != "Hash Match" || join.Behavior != "hybrid" || len(join.BlockingInputs) != 1 || join.BlockingInputs[0] != join.Children[0] {
		t.Errorf("hash join = %+v", join)
	}
	if !strings.Contains(join.Rule, "first child") {
		t.Errorf("rule %q does not name the build input decision", join.Rule)
	}
	if w := doc.Statements[0].Nodes[2].Warnings; len(w) != 1 || w[0].Kind != "ColumnsWithNoStatistics" {
		t.Errorf("warnings of node 2 = %+v", w)
	}
}

// planOutputHas runs plan with args and checks the output holds every want.
func planOutputHas(t *testing.T, args []string, wants ...string) {
	t.Helper()
	code, stdout, stderr := runPlan(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	for _, want := range wants {
		if !strings.Contains(stdout, want) {
			t.Errorf("%v: output lacks %q:\n%s", args, want, stdout)
		}
	}
}

func TestPlanInspectTree(t *testing.T) {
	planOutputHas(t, []string{"plan", "inspect", filepath.Join(planTestdata, "performancestudio", "key_lookup_plan.sqlplan")},
		"Statement 1: SELECT",
		"\n  [0] Nested Loops (Inner Join)",
		"\n    [4] Key Lookup dbo.Users.PK_Users_Id AS u  {streaming}",
		"seek: [u].[Reputation] = (942)")
}

func TestPlanInspectErrors(t *testing.T) {
	notPlan := filepath.Join(t.TempDir(), "not-a-plan.xml")
	if err := os.WriteFile(notPlan, []byte(`<?xml version="1.0"?><events/>`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"plan", "inspect", filepath.Join(t.TempDir(), "missing.sqlplan")}, 1, "missing.sqlplan"},
		{[]string{"plan", "inspect", "--json", notPlan}, 1, "no ShowPlanXML element"},
		{[]string{"plan", "inspect"}, 2, "FILE"},
	} {
		code, stdout, stderr := runPlan(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q (stdout %q); want exit %d mentioning %q", tc.args, code, stderr, stdout, tc.code, tc.want)
		}
	}
}

// TestPlanInspectRules: --rules prints each operator's semantics with its
// reason, caveat and source, so a reader can check every decision.
func TestPlanInspectRules(t *testing.T) {
	planOutputHas(t, []string{"plan", "inspect", "--rules", filepath.Join(planTestdata, "html-query-plan", "window_spool.sqlplan")},
		"[4] Window Spool (Window Spool): streaming",
		"caveat: with a RANGE frame",
		"source: showplan operator reference, Window Spool: https://learn.microsoft.com/",
		"[0] Sort (Distinct Sort): blocking on [1]")
}

func TestPlanInspectRulesAndJSONConflict(t *testing.T) {
	code, _, errOut := runPlan(t, "plan", "inspect", "--rules", "--json", filepath.Join(planTestdata, "html-query-plan", "window_spool.sqlplan"))
	if code != 2 || !strings.Contains(errOut, "choose one") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

package showplan

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The expected values below are read by eye from the plan files named in
// each case (attribute values as written in the XML).

func TestKeyLookupAndPredicates(t *testing.T) {
	st := mustParse(t, "performancestudio/key_lookup_plan.sqlplan").Statements[0]
	lookup := st.OperatorByID(4)
	if lookup == nil || !lookup.IsKeyLookup || lookup.DisplayName != "Key Lookup" || lookup.PhysicalOp != "Clustered Index Seek" {
		t.Fatalf("node 4 should be a Key Lookup (Clustered Index Seek, Lookup=1): %+v", lookup)
	}
	if o := lookup.Object; o == nil || o.Table != "Users" || o.Index != "PK_Users_Id" || o.Alias != "u" || o.IndexKind != "Clustered" {
		t.Errorf("key lookup object = %+v", lookup.Object)
	}
	if !slices.Equal(lookup.SeekPredicates, []string{"[u].[Id] = [StackOverflow2013].[dbo].[Users].[Id] as [u].[Id]"}) {
		t.Errorf("key lookup seek = %q", lookup.SeekPredicates)
	}
	if !strings.Contains(lookup.Predicate, "N'Eggs McLaren'") {
		t.Errorf("key lookup residual = %q", lookup.Predicate)
	}
	seek := st.OperatorByID(2)
	if seek.IsKeyLookup || seek.Object == nil || seek.Object.Index != "Reputation" {
		t.Errorf("node 2 should be the index seek on Reputation: %+v", seek)
	}
	if !slices.Equal(seek.SeekPredicates, []string{"[u].[Reputation] = (942)"}) {
		t.Errorf("index seek predicate = %q", seek.SeekPredicates)
	}
	if a := lookup.Actual; a == nil || a.Rows != 1 || a.Executions != 117 || a.LogicalReads != 319 {
		t.Errorf("key lookup actuals = %+v", lookup.Actual)
	}
	if root := st.Root; root.Object != nil {
		t.Errorf("the nested loops join must not inherit a child's object, got %+v", root.Object)
	}
}

func TestObjectsAreOwnOnly(t *testing.T) {
	// Joins, sorts, exchanges and other non-access operators never carry an
	// Object of their own, in any real plan.
	noObject := map[string]bool{"Hash": true, "NestedLoops": true, "Merge": true, "Sort": true, "TopSort": true,
		"Parallelism": true, "ComputeScalar": true, "Filter": true, "Top": true, "StreamAggregate": true, "Concat": true}
	checked := 0
	for _, path := range realPlans(t) {
		plan := parseFile(t, path)
		for _, st := range plan.Statements {
			for _, op := range st.Operators {
				if noObject[op.Element] {
					checked++
					if op.Object != nil {
						t.Errorf("%s node %d (%s) has object %+v", path, op.NodeID, op.PhysicalOp, op.Object)
					}
				}
			}
		}
	}
	if checked < 300 {
		t.Fatalf("only %d non-access operators checked", checked)
	}
}

func TestWideInsertMaintainsSeveralIndexes(t *testing.T) {
	root := mustParse(t, "performancestudio/multi_index_insert_plan.sqlplan").Statements[0].Root
	if root.PhysicalOp != "Clustered Index Insert" || root.Object == nil || root.Object.Index != "PK_Users_Id" {
		t.Fatalf("root = %s %+v", root.PhysicalOp, root.Object)
	}
	var names []string
	for _, o := range root.Objects[1:] {
		names = append(names, o.Index)
	}
	if len(names) < 2 || names[0] != "a0" || names[1] != "a1" {
		t.Errorf("other indexes maintained = %v", names)
	}
}

func TestParallelSpillPlan(t *testing.T) {
	st := mustParse(t, "performancestudio/excellent-parallel-spill.sqlplan").Statements[0]
	if st.DOP != 4 || st.Type != "SELECT" {
		t.Errorf("DOP %d type %q", st.DOP, st.Type)
	}
	if st.TimeStats == nil || st.TimeStats.ElapsedMs != 225870 || st.TimeStats.CPUMs != 172222 {
		t.Errorf("time stats = %+v", st.TimeStats)
	}
	if len(st.WaitStats) != 8 || st.WaitStats[7] != (Wait{Type: "CXPACKET", TimeMs: 2238553, Count: 14203}) {
		t.Errorf("waits = %+v", st.WaitStats)
	}
	if st.MemoryGrant == nil || st.MemoryGrant.GrantedKB != 7424 || st.MemoryGrant.MaxUsedKB != 7424 {
		t.Errorf("grant = %+v", st.MemoryGrant)
	}
	repartition := st.OperatorByID(2)
	var spill, exchange *Warning
	for i, w := range repartition.Warnings {
		switch w.Kind {
		case "SpillToTempDb":
			spill = &repartition.Warnings[i]
		case "ExchangeSpillDetails":
			exchange = &repartition.Warnings[i]
		}
	}
	if spill == nil || spill.Attributes["SpillLevel"] != "0" || spill.Attributes["SpilledThreadCount"] != "4" {
		t.Errorf("spill warning = %+v", spill)
	}
	if exchange == nil || exchange.Attributes["WritesToTempDb"] != "5786565" {
		t.Errorf("exchange spill = %+v", exchange)
	}
	scan := st.OperatorByID(3)
	if scan.Actual == nil || scan.Actual.Threads != 5 || scan.Actual.Rows != 2465713 || scan.Actual.LogicalReads != 44690 {
		t.Errorf("scan actuals = %+v", scan.Actual)
	}
	var sum int64
	var longest int64
	for _, th := range scan.Threads {
		sum += th.Rows
		longest = max(longest, th.ElapsedMs)
	}
	if sum != scan.Actual.Rows || longest != scan.Actual.ElapsedMs {
		t.Errorf("totals disagree with threads: rows %d vs %d, elapsed %d vs %d", sum, scan.Actual.Rows, longest, scan.Actual.ElapsedMs)
	}
}

func TestSortAndHashSpills(t *testing.T) {
	for _, tc := range []struct {
		file, kind string
		node       int
		writes     string
	}{
		{"performancestudio/spill_plan.sqlplan", "SortSpillDetails", 11, "1512936"},
		{"html-query-plan/HashSpillDetails.sqlplan", "HashSpillDetails", 2, "10040"},
		{"performancestudio/row-count-spool-slow.sqlplan", "HashSpillDetails", 6, "188928"},
	} {
		op := mustParse(t, tc.file).Statements[0].OperatorByID(tc.node)
		found := false
		for _, w := range op.Warnings {
			if w.Kind == tc.kind && w.Attributes["WritesToTempDb"] == tc.writes {
				found = true
			}
		}
		if !found {
			t.Errorf("%s node %d: no %s with WritesToTempDb=%s in %+v", tc.file, tc.node, tc.kind, tc.writes, op.Warnings)
		}
	}
}

func TestStatementLevelFacts(t *testing.T) {
	plan := mustParse(t, "html-query-plan/stack_overflow-inequality_index.sqlplan")
	st := plan.Statements[0]
	if len(st.MissingIndexes) != 1 {
		t.Fatalf("missing index groups = %+v", st.MissingIndexes)
	}
	mi := st.MissingIndexes[0]
	want := MissingIndex{Database: "StackOverflow_2017", Schema: "dbo", Table: "Posts",
		Equality: []string{"PostTypeId"}, Inequality: []string{"Score"}, Include: []string{"CommentCount", "OwnerUserId"}}
	if mi.Impact != 96.3324 || len(mi.Indexes) != 1 || !missingIndexEqual(mi.Indexes[0], want) {
		t.Errorf("missing index = %+v", mi)
	}
	kinds := map[string]bool{}
	for _, w := range st.Warnings {
		kinds[w.Kind] = true
	}
	if !kinds["Wait"] || !kinds["MemoryGrantWarning"] {
		t.Errorf("statement warnings = %+v", st.Warnings)
	}
	st = mustParse(t, "performancestudio/key_lookup_plan.sqlplan").Statements[0]
	if st.QueryHash == "" || st.QueryPlanHash == "" || !strings.HasPrefix(st.QueryHash, "0x") {
		t.Errorf("hashes %q %q", st.QueryHash, st.QueryPlanHash)
	}
}

func missingIndexEqual(a, b MissingIndex) bool {
	return a.Database == b.Database && a.Schema == b.Schema && a.Table == b.Table &&
		slices.Equal(a.Equality, b.Equality) && slices.Equal(a.Inequality, b.Inequality) && slices.Equal(a.Include, b.Include)
}

func TestWarningsCountMatchesFile(t *testing.T) {
	// Oracle: every child element of a <Warnings> element plus every Warnings
	// attribute set to true/1, counted with regular expressions.
	warningsRe := regexp.MustCompile(`(?s)<(?:\w+:)?Warnings\b([^>]*?)(/?)>(.*?)</(?:\w+:)?Warnings>|<(?:\w+:)?Warnings\b([^>]*?)/>`)
	childRe := regexp.MustCompile(`<(?:\w+:)?(\w+)\b`)
	flagRe := regexp.MustCompile(`\w+="(?:1|true)"`)
	total := 0
	for _, path := range realPlans(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, m := range warningsRe.FindAllStringSubmatch(oracleText(t, data), -1) {
			want += len(flagRe.FindAllString(m[1]+m[4], -1))
			// Direct children only: ColumnReference lives inside
			// ColumnsWithNoStatistics.
			for _, c := range childRe.FindAllStringSubmatch(m[3], -1) {
				if c[1] != "ColumnReference" {
					want++
				}
			}
		}
		plan, err := ParseBytes(data)
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for _, st := range plan.Statements {
			got += len(st.Warnings)
			for _, op := range st.Operators {
				for _, w := range op.Warnings {
					if w.Kind != "ImplicitConversion" {
						got++
					}
				}
			}
		}
		if got != want {
			t.Errorf("%s: %d warnings parsed, file has %d", path, got, want)
		}
		total += want
	}
	if total < 30 { // 35 when counted with Python during development
		t.Errorf("the oracle found only %d warnings in all plans", total)
	}
}

func TestColumnsWithNoStatistics(t *testing.T) {
	op := mustParse(t, "html-query-plan/columns_with_no_statistics.sqlplan").Statements[0].OperatorByID(2)
	if len(op.Warnings) != 1 || op.Warnings[0].Kind != "ColumnsWithNoStatistics" ||
		!slices.Equal(op.Warnings[0].Columns, []string{"[sub].[TestTableB_Id]"}) {
		t.Errorf("warnings = %+v", op.Warnings)
	}
}

func TestImplicitConversionWarnings(t *testing.T) {
	st := mustParse(t, "performancestudio/convert_implicit_plan.sqlplan").Statements[0]
	if len(st.Warnings) != 1 || st.Warnings[0].Kind != "PlanAffectingConvert" || st.Warnings[0].Attributes["ConvertIssue"] != "Seek Plan" {
		t.Errorf("statement warnings = %+v", st.Warnings)
	}
	op := st.OperatorByID(3)
	if len(op.Warnings) != 1 || op.Warnings[0].Kind != "ImplicitConversion" || !strings.Contains(op.Warnings[0].Text, "CONVERT_IMPLICIT(nvarchar(40)") {
		t.Errorf("node 3 warnings = %+v", op.Warnings)
	}
}

func TestCursorOperationsBecomeStatements(t *testing.T) {
	plan := mustParse(t, "html-query-plan/Cursors-Keyset_Cursor.sqlplan")
	var ops []string
	for _, st := range plan.Statements {
		if st.Element == "StmtCursor" && st.Type == "DECLARE CURSOR" {
			ops = append(ops, st.CursorOperation)
			if st.Root == nil || st.Root.NodeID != 0 {
				t.Errorf("cursor operation %s without its own root", st.CursorOperation)
			}
		}
	}
	if !slices.Equal(ops, []string{"PopulateQuery", "FetchQuery"}) {
		t.Errorf("DECLARE CURSOR operations = %v", ops)
	}
}

func TestNestedStatementsKnowTheirParent(t *testing.T) {
	plan := mustParse(t, "html-query-plan/Cursors-Keyset_Cursor.sqlplan")
	var update *Statement
	for _, st := range plan.Statements {
		if st.Type == "UPDATE CURSOR" {
			update = st
		}
	}
	if update == nil {
		t.Fatal("no UPDATE CURSOR statement")
	}
	// UPDATE CURSOR sits in Then of a COND inside a COND inside a COND.
	depth := 0
	for i := update.ParentIndex; i >= 0; i = plan.Statements[i].ParentIndex {
		if plan.Statements[i].Type != "COND" {
			t.Errorf("ancestor %d is %q, want COND", i, plan.Statements[i].Type)
		}
		depth++
	}
	if depth != 3 {
		t.Errorf("UPDATE CURSOR nesting depth = %d, want 3", depth)
	}
	if len(update.Operators) != 3 {
		t.Errorf("UPDATE CURSOR operators = %d", len(update.Operators))
	}
}

func TestSQLServer2005PlanThatFailsXSDValidation(t *testing.T) {
	// issue1.sqlplan (Version 1.0, build 9.00.5057.00) is the one real plan
	// that fails the 1.550 XSD (ScalarExpressionList missing a child); it
	// must still parse.
	plan := mustParse(t, "html-query-plan/issue1.sqlplan")
	if plan.Version != "1.0" || plan.Build != "9.00.5057.00" {
		t.Errorf("version %q build %q", plan.Version, plan.Build)
	}
	st := plan.Statements[0]
	if st.Root == nil || st.Root.PhysicalOp != "Top" || len(st.Operators) < 10 {
		t.Fatalf("root %+v, %d operators", st.Root, len(st.Operators))
	}
	if seek := st.OperatorByID(7); seek == nil || len(seek.SeekPredicates) != 1 || !strings.Contains(seek.SeekPredicates[0], "[OwnerID] = (12138)") {
		t.Errorf("2005 seek predicate not read: %+v", seek)
	}
}

func TestAdaptiveAndBatchModeJoins(t *testing.T) {
	st := mustParse(t, "html-query-plan/adaptive_join.sqlplan").Statements[0]
	aj := st.Root
	if aj.PhysicalOp != "Adaptive Join" || !aj.IsAdaptive || aj.AdaptiveThresholdRows <= 0 || len(aj.HashKeysBuild) == 0 {
		t.Errorf("adaptive join = %+v", aj)
	}
	if aj.Semantics.Behavior != Hybrid || !slices.Equal(aj.Semantics.BlockingInputs, []int{2}) {
		t.Errorf("adaptive join semantics = %+v", aj.Semantics)
	}
	if aj.EstimatedJoinType != "Nested Loops" || aj.ActualJoinType != "Nested Loops" {
		t.Errorf("adaptive join types: estimated %q actual %q", aj.EstimatedJoinType, aj.ActualJoinType)
	}
	if len(aj.Children) != 3 {
		t.Errorf("adaptive join has %d inputs, want 3", len(aj.Children))
	}
	if scan := st.OperatorByID(2); scan.ExecutionMode != "Batch" {
		t.Errorf("node 2 mode = %q", scan.ExecutionMode)
	}

	st = mustParse(t, "html-query-plan/batch_hash_table_build.sqlplan").Statements[0]
	build := st.OperatorByID(11)
	if build.PhysicalOp != "Batch Hash Table Build" || build.Semantics.Behavior != Blocking || !slices.Equal(build.Semantics.BlockingInputs, []int{12}) {
		t.Errorf("batch hash table build = %s %+v", build.PhysicalOp, build.Semantics)
	}
	join := st.OperatorByID(9)
	if join.Semantics.Behavior != Hybrid || !slices.Equal(join.Semantics.BlockingInputs, []int{10}) {
		t.Errorf("batch hash join semantics = %+v", join.Semantics)
	}
}

func TestOwnCost(t *testing.T) {
	for _, path := range realPlans(t) {
		plan := parseFile(t, path)
		for _, st := range plan.Statements {
			for _, op := range st.Operators {
				children := 0.0
				for _, c := range op.Children {
					children += c.SubtreeCost
				}
				if op.OwnCost < 0 || (op.OwnCost > 0 && op.OwnCost+children-op.SubtreeCost > 1e-9) {
					t.Errorf("%s node %d: own %g, subtree %g, children %g", path, op.NodeID, op.OwnCost, op.SubtreeCost, children)
				}
			}
		}
	}
}

func TestRangeSeekPredicates(t *testing.T) {
	plan := mustParse(t, "html-query-plan/rid_lookup.sqlplan")
	var seeks []string
	for _, op := range plan.Statements[0].Operators {
		seeks = append(seeks, op.SeekPredicates...)
	}
	want := "[AdventureWorks2012].[dbo].[DatabaseLog].[DatabaseLogID] >= (195) AND [AdventureWorks2012].[dbo].[DatabaseLog].[DatabaseLogID] <= (198)"
	if !slices.Contains(seeks, want) {
		t.Errorf("seek predicates %q lack %q", seeks, want)
	}
	// IsNotNull carries its column directly (XSD SingleColumnReferenceType).
	const doc = `<ShowPlanXML><BatchSequence><Batch><Statements><StmtSimple StatementType="SELECT"><QueryPlan>
<RelOp NodeId="0" PhysicalOp="Index Seek" LogicalOp="Index Seek"><OutputList/><IndexScan><Object Table="[T]" Index="[IX]"/>
<SeekPredicates><SeekPredicateNew><SeekKeys><IsNotNull><ColumnReference Table="[T]" Column="c"/></IsNotNull></SeekKeys></SeekPredicateNew></SeekPredicates>
</IndexScan></RelOp></QueryPlan></StmtSimple></Statements></Batch></BatchSequence></ShowPlanXML>`
	p, err := ParseBytes([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Statements[0].Root.SeekPredicates; !slices.Equal(got, []string{"[T].[c] IS NOT NULL"}) {
		t.Errorf("IsNotNull seek = %q", got)
	}
}

func TestAutoStatsStatementIsMarked(t *testing.T) {
	// An automatic statistics update query (its shape is general knowledge;
	// docs/design/tracing.md §7.1 names the StatMan and _MS_UPDSTATS_TBL markers).
	const doc = `<ShowPlanXML><BatchSequence><Batch><Statements>
<StmtSimple StatementType="SELECT STATMAN" StatementText="SELECT StatMan([SC0]) FROM (SELECT TOP 100 PERCENT [c] AS [SC0] FROM [dbo].[T] WITH (READUNCOMMITTED) ORDER BY [SC0]) AS _MS_UPDSTATS_TBL"/>
<StmtSimple StatementType="SELECT" StatementText="SELECT c FROM dbo.T"/>
</Statements></Batch></BatchSequence></ShowPlanXML>`
	plan, err := ParseBytes([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Statements[0].IsStatsMaintenance || plan.Statements[1].IsStatsMaintenance {
		t.Errorf("stats maintenance flags: %v %v", plan.Statements[0].IsStatsMaintenance, plan.Statements[1].IsStatsMaintenance)
	}
}

package callstack

import (
	"slices"
	"strings"
	"testing"
)

func TestClassifyRealFrames(t *testing.T) {
	c := DefaultClassifier()
	for _, tc := range []struct {
		module, symbol  string
		badge, category string
		infra           bool
		operator        string
		planOps         []string
	}{
		// From realdata/callstack/resolved_LOCK_HASH.txt and resolved_AV.txt.
		{"sqldk", "XeSosPkg::spinlock_backoff::Publish", "SQL OS", "XEventInfrastructure", true, "", nil},
		{"sqlmin", "Spinlock<143,7,1>::SpinToAcquireWithExponentialBackoff", "Storage Engine", "Spinlock", false, "", nil},
		{"sqlmin", "lck_lockInternal", "Storage Engine", "Locking", false, "", nil},
		{"sqlmin", "MDL::LockGenericLocal", "Storage Engine", "Locking", false, "", nil},
		{"sqlmin", "CMEDCacheEntryFactory::GetProxiedCacheEntryById", "Storage Engine", "Metadata", false, "", nil},
		{"sqlmin", "XactLockInfo::ReleaseAll", "Storage Engine", "Locking", false, "", nil},
		{"sqlmin", "SqlAutoReadOnlyXact::`scalar deleting destructor'", "Storage Engine", "TransactionManagement", false, "", nil},
		{"sqllang", "CMsqlExecContext::ExecuteStmts<1,1>", "Query Processor", "QueryExecution", false, "", nil},
		{"sqllang", "process_request", "Query Processor", "QueryExecution", false, "", nil},
		{"sqldk", "SOS_Scheduler::RunTask", "SQL OS", "SqlOs", true, "", nil},
		{"sqldk", "SystemThreadDispatcher::ProcessWorker", "SQL OS", "WorkerManagement", true, "", nil},
		{"KERNEL32", "BaseThreadInitThunk", "System", "System", true, "", nil},
		{"C:\\Windows\\SYSTEM32\\ntdll.dll", "", "System", "Unknown", true, "", nil},
		{"sqllang.dll", "CXStmtSelect::XretExecute", "Query Processor", "StatementExecution", false, "SELECT", []string{"SELECT"}},
		// Iterators and the most-specific rule.
		{"sqlmin", "CQScanNLJoinNew::GetRow", "Storage Engine", "QueryOperator", false, "Nested Loops", []string{"Nested Loops"}},
		{"sqlmin", "CQScanHash::ConsumeBuild", "Storage Engine", "PhysicalOperator", false, "Hash Match Build", []string{"Hash Match"}},
		{"sqlmin", "CQScanHashAggNew::GetRow", "Storage Engine", "PhysicalOperator", false, "Hash Match (Aggregate)", []string{"Hash Match"}},
		{"sqlmin", "CQScanTableScanNew::GetRow", "Storage Engine", "QueryOperator", false, "Row Read", []string{"Table Scan", "*Index Scan"}},
		{"sqlmin", "CQueryScan::GetRow", "Storage Engine", "QueryOperator", false, "Iterator", nil},
		{"sqlmin", "BTreeMgr::Seek", "Storage Engine", "IndexAccess", false, "", nil},
		{"sqlmin", "sql::BTreeMgr::Seek", "Storage Engine", "IndexAccess", false, "", nil},                // innermost class matches
		{"sqldk", "XeSosPkg::spinlock_backoff::Backoff", "SQL OS", "XEventInfrastructure", true, "", nil}, // full class beats inner "Spinlock*"
		{"sqlmin", "BPool::Get", "Storage Engine", "BufferPool", false, "", nil},
		{"sqlmin", "RowsetNewSS::FetchNextRow", "Storage Engine", "RowAccess", false, "Row Iterator", nil},
		{"someother", "Foo::Bar", "Unknown", "Unknown", false, "", nil},
	} {
		got := c.Classify(tc.module, tc.symbol)
		if got.ModuleBadge != tc.badge || got.Category != tc.category || got.Infrastructure != tc.infra ||
			got.OperatorBadge != tc.operator || !slices.Equal(got.PlanOperators, tc.planOps) {
			t.Errorf("Classify(%s, %s) = %+v\nwant badge %q category %q infra %v operator %q %q",
				tc.module, tc.symbol, got, tc.badge, tc.category, tc.infra, tc.operator, tc.planOps)
		}
	}
	if !c.Classify("sqlmin", "BPool::Get").Barrier || c.Classify("sqlmin", "BPool::GetPage").Barrier {
		t.Error("barrier rule must match BPool::Get exactly")
	}
	if got := c.Classify("sqlmin", "BTreeMgr::Seek").CategoryDisplay; got != "Index Access" {
		t.Errorf("display %q", got)
	}
}

func TestClassifierOverrides(t *testing.T) {
	base := DefaultClassifier()
	over, err := ParseRules(`
[modules]
sqlmin | My Engine
hkengine | In-Memory OLTP
[categories]
Hekaton | Hekaton | no
[symbols]
* | BTree* | * | Hekaton   # same specificity as the default rule: the override wins the tie
`, base)
	if err != nil {
		t.Fatal(err)
	}
	if got := over.Classify("sqlmin", "BTreeMgr::Seek"); got.ModuleBadge != "My Engine" || got.Category != "Hekaton" {
		t.Errorf("override not applied: %+v", got)
	}
	if got := over.Classify("hkengine", "HkRowAlloc"); got.ModuleBadge != "In-Memory OLTP" {
		t.Errorf("new module: %+v", got)
	}
	if got := base.Classify("sqlmin", "BTreeMgr::Seek"); got.ModuleBadge != "Storage Engine" || got.Category != "IndexAccess" {
		t.Errorf("base modified: %+v", got)
	}
	for _, bad := range []string{
		"sqlmin | x",                        // outside a section
		"[symbols]\n* | * | NoSuchCategory", // wrong cell count
		"[symbols]\n* | X* | * | Nope",      // unknown category
		"[categories]\nA | B | maybe",
		"[operators]\nsqlmin | X | Y",
	} {
		if _, err := ParseRules(bad, base); err == nil || !strings.Contains(err.Error(), "rules") {
			t.Errorf("ParseRules(%q) err = %v", bad, err)
		}
	}
}

// TestRuleIndexAgreesWithFullScan: the prefix index must pick the same rule
// as testing every rule, for names built from every rule's own literals.
func TestRuleIndexAgreesWithFullScan(t *testing.T) {
	c := DefaultClassifier()
	var names []string
	for _, r := range c.symbols {
		cl, fn := strings.Trim(r.class.text, "*"), strings.Trim(r.function.text, "*")
		for _, n := range []string{cl + "::" + fn, cl + "X::" + fn + "Y", "ns::" + cl + "::" + fn, fn, cl, "Q" + cl + "::Z" + fn, strings.ToUpper(cl) + "::" + strings.ToLower(fn)} {
			names = append(names, strings.TrimPrefix(strings.TrimSuffix(n, "::"), "::"))
		}
	}
	for _, mod := range []string{"sqlmin", "sqllang", "sqldk", "qds", "hkengine", "xtp_p_1", "other"} {
		for _, n := range append(names, "") {
			s := newSubject(mod, n)
			full := best(c.symbols, s)
			idx := c.symIndex.best(c.symbols, s)
			if full != idx {
				t.Fatalf("%s!%s: index picks %+v, full scan %+v", mod, n, idx, full)
			}
		}
	}
}

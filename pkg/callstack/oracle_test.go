package callstack

import (
	"strings"
	"testing"
)

// oracleCategories is what a SQL Server internals engineer files each frame
// of SQLCallStackResolver's symbolised outputs (testdata/resolved_*.txt)
// under, written from the frames' meaning and not from the rules: the test
// walks every frame of the oracles and fails on any frame missing here, so
// a new oracle frame forces a decision.
var oracleCategories = map[string]string{
	// Extended Events producers: infrastructure.
	"sqldk!XeSosPkg::spinlock_backoff::Publish": "XEventInfrastructure",
	"sqllang!XeSqlPkg::error_reported::Publish": "XEventInfrastructure",
	"sqllang!ErrorReportedAutoPublish::Publish": "XEventInfrastructure",
	// Spinlocks are their own category (not latches).
	"sqldk!SpinlockBase::Sleep":                                     "Spinlock",
	"sqldk!SpinlockBase::Backoff":                                   "Spinlock",
	"sqlmin!Spinlock<143,7,1>::SpinToAcquireWithExponentialBackoff": "Spinlock",
	// The lock manager: lock calls, metadata locks, a transaction's lock list.
	"sqlmin!lck_lockInternal":                       "Locking",
	"sqlmin!MDL::LockGenericLocal":                  "Locking",
	"sqlmin!MDL::LockGenericIdsLocal":               "Locking",
	"sqlmin!XactLockInfo::ReleaseUnconditionalSafe": "Locking",
	"sqlmin!XactLockInfo::ReleaseAll":               "Locking",
	// Transactions.
	"sqlmin!XdesRMReadOnly::UnInit":                            "TransactionManagement",
	"sqlmin!ReadOnlyXactImp::Rollback":                         "TransactionManagement",
	"sqlmin!SqlAutoReadOnlyXact::Rollback":                     "TransactionManagement",
	"sqlmin!SqlAutoReadOnlyXact::`scalar deleting destructor'": "TransactionManagement",
	// Metadata.
	"sqlmin!CMEDCacheEntryFactory::GetProxiedCacheEntryById": "Metadata",
	"sqlmin!CMEDProxyDatabase::GetOwnerByOwnerId":            "Metadata",
	// Permission checks.
	"sqllang!CSECAccessAuditBase::SetSecurable":   "Security",
	"sqllang!CSECManager::_AccessCheck":           "Security",
	"sqllang!CSECManager::AccessCheck":            "Security",
	"sqllang!FHasEntityPermissionsWithAuditState": "Security",
	"sqllang!FHasEntityPermissions":               "Security",
	// The plan cache: the object found by the cache lookup.
	"sqllang!CSQLObject::FPostCacheLookup": "PlanCache",
	// Batch and statement execution: CStmt* Xret*/Ersq* methods execute.
	"sqllang!CSQLSource::Transform":                    "QueryExecution",
	"sqllang!CSQLSource::Execute":                      "QueryExecution",
	"sqllang!CStmtExecProc::XretLocalExec":             "QueryExecution",
	"sqllang!CStmtExecProc::XretExecExecute":           "QueryExecution",
	"sqllang!CXStmtExecProc::XretExecute":              "QueryExecution",
	"sqllang!CMsqlExecContext::ExecuteStmts<1,1>":      "QueryExecution",
	"sqllang!CMsqlExecContext::FExecute":               "QueryExecution",
	"sqllang!process_request":                          "QueryExecution",
	"sqllang!process_commands_internal":                "QueryExecution",
	"sqllang!process_messages":                         "QueryExecution",
	"sqllang!CStmtCreateTable::XretCreateTableExecute": "QueryExecution",
	"sqllang!CXStmtCreateTableDDL::XretExecute":        "QueryExecution",
	// DDL work below the statement.
	"sqllang!CTableCreate::LCreateImpl":    "Ddl",
	"sqllang!CTableCreate::CreateRelation": "Ddl",
	"sqllang!E_CNSTCRT::Execute":           "Ddl",
	"sqllang!E_CNSTINDEX::Execute":         "Ddl",
	"sqllang!CIndexDef::CreateIndex":       "Ddl",
	// Errors.
	"sqllang!CErrorReportingManager::CwchFormatAndPrint": "ErrorHandling",
	"sqllang!HkError::HandleException":                   "ErrorHandling",
	"sqllang!MapHkHResultToSqlError":                     "ErrorHandling",
	"sqllang!HkError::CreateErrorHelper":                 "ErrorHandling",
	"sqllang!HkError::CreateError":                       "ErrorHandling",
	// In-Memory OLTP: the engine, its runtime, natively compiled modules and
	// the interop that runs them.
	"hkengine!HkRowAlloc":                                                     "InMemoryOLTP",
	"xtp_p_5_597577167_185186125354548_1+0xe9fc":                              "InMemoryOLTP",
	"xtp_p_5_597577167_185186125354548_1+0xe653":                              "InMemoryOLTP",
	"hkruntime!CAutoRefc<HkStorageInterface>::~CAutoRefc<HkStorageInterface>": "InMemoryOLTP",
	"sqllang!HkProc::CallRuntimeExecutionFunction":                            "InMemoryOLTP",
	"sqllang!HkProc::FExecuteInternal<0>":                                     "InMemoryOLTP",
	// SQLOS.
	"sqldk!SOS_Task::Param::Execute":              "SqlOs",
	"sqldk!SOS_Scheduler::RunTask":                "SqlOs",
	"sqldk!SOS_Scheduler::ProcessTasks":           "SqlOs",
	"sqldk!SchedulerManager::WorkerEntryPoint":    "SqlOs",
	"sqldk!SchedulerManager::ThreadEntryPoint":    "SqlOs",
	"sqldk!SystemThread::RunWorker":               "SqlOs",
	"sqldk!SystemThreadDispatcher::ProcessWorker": "WorkerManagement",
	// Unsymbolised Windows frames: no category, System module.
	"kernel32+0x11fe4": "Unknown",
	"ntdll+0x6efb1":    "Unknown",
}

var oracleModuleBadges = map[string]string{
	"sqldk": "SQL OS", "sqllang": "Query Processor", "sqlmin": "Storage Engine", "kernel32": "System", "ntdll": "System",
	"hkengine": "In-Memory OLTP", "hkruntime": "In-Memory OLTP", "xtp_p_5_597577167_185186125354548_1": "In-Memory OLTP",
}

func oracleKey(f Frame) string {
	if f.Symbol != "" {
		return f.ModuleName() + "!" + f.Symbol
	}
	return f.String()
}

func TestClassifyOracleFrames(t *testing.T) {
	c := DefaultClassifier()
	seen := map[string]bool{}
	for _, file := range []string{"resolved_LOCK_HASH.txt", "resolved_OOM.txt", "resolved_AV.txt"} {
		stacks, err := Parse(readTestdata(t, file), ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range stacks {
			for _, f := range s.Frames {
				k := oracleKey(f)
				seen[k] = true
				want, ok := oracleCategories[k]
				if !ok {
					t.Errorf("%s: frame %s has no expected category", file, k)
					continue
				}
				got := c.Classify(f.Module, f.Symbol)
				if got.Category != want {
					t.Errorf("%s: %s classified %s, want %s", file, k, got.Category, want)
				}
				if b := oracleModuleBadges[f.ModuleName()]; got.ModuleBadge != b {
					t.Errorf("%s: %s module badge %q, want %q", file, k, got.ModuleBadge, b)
				}
				if wantInfra := want == "XEventInfrastructure" || want == "SqlOs" || want == "WorkerManagement" || f.ModuleName() == "kernel32" || f.ModuleName() == "ntdll"; got.Infrastructure != wantInfra {
					t.Errorf("%s: %s infrastructure %v, want %v", file, k, got.Infrastructure, wantInfra)
				}
			}
		}
	}
	for k := range oracleCategories {
		if !seen[k] {
			t.Errorf("expected category for %s, which no oracle frame has", k)
		}
	}
}

// TestSpinlockOwner: the LOCK_HASH spinlock is the lock manager's — both
// oracle stacks reach it from lock calls (lck_lockInternal, XactLockInfo).
func TestSpinlockOwner(t *testing.T) {
	stacks, err := Parse(readTestdata(t, "resolved_LOCK_HASH.txt"), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := &Resolver{Classifier: DefaultClassifier()}
	for si, s := range stacks {
		var res []Resolved
		for _, f := range s.Frames {
			x, err := r.Resolve(t.Context(), f)
			if err != nil {
				t.Fatal(err)
			}
			res = append(res, x)
		}
		AttributeSpinlocks(res)
		spins := 0
		for _, x := range res {
			if x.Class.Category == "Spinlock" {
				spins++
				if x.Owner != "Locking" {
					t.Errorf("stack %d: %s owner %q, want Locking", si, x, x.Owner)
				}
			} else if x.Owner != "" {
				t.Errorf("stack %d: non-spinlock %s has owner %q", si, x, x.Owner)
			}
		}
		if spins < 2 {
			t.Errorf("stack %d: %d spinlock frames", si, spins)
		}
	}
}

// TestRuleFixes covers the rules issue 13 found wrong: free-function rules
// written in the class column, CStmt execution methods, Query Store, XE
// producers.
func TestRuleFixes(t *testing.T) {
	c := DefaultClassifier()
	for _, tc := range []struct{ module, symbol, category, badge string }{
		{"sqlmin", "lck_ProduceExtendedEvent", "XEventInfrastructure", "Storage Engine"},
		{"sqlmin", "lck_ProduceExtendedEventForLockAcquired", "XEventInfrastructure", "Storage Engine"},
		{"sqllang", "ExecuteCommandsInAutoTransaction", "TransactionManagement", "Query Processor"},
		{"sqlmin", "GetDataLock", "Locking", "Storage Engine"},
		{"sqlmin", "AcquireLockForRead", "Locking", "Storage Engine"},
		{"sqllang", "EvGetEventClassInfo", "Tracing", "Query Processor"},
		{"sqlmin", "WaitLogWritten", "Logging", "Storage Engine"},
		{"sqlmin", "GetRowForKeyValue", "RowAccess", "Storage Engine"},
		{"sqllang", "CStmtQuery::ErsqExecuteQuery", "QueryExecution", "Query Processor"},
		{"sqllang", "sql::CStmtQuery::ErsqExecuteQuery", "QueryExecution", "Query Processor"},
		{"sqllang", "CStmtSelect::XretExecute", "QueryExecution", "Query Processor"},
		{"sqllang", "CStmtExecProc::XretExecExecute", "QueryExecution", "Query Processor"},
		{"sqllang", "CStmtSelect::Init", "Compilation", "Query Processor"},
		{"qds", "CQDSManager::StoreRuntimeStats", "QueryStore", "Query Store"},
		{"qds", "", "QueryStore", "Query Store"},
		{"hkengine", "HkCursorRangeGetNext", "InMemoryOLTP", "In-Memory OLTP"},
		{"xtp_t_5_1237579447_185186123456789", "", "InMemoryOLTP", "In-Memory OLTP"},
		{"sqlmin", "LockHashTable::Spinlock", "Locking", "Storage Engine"},
	} {
		got := c.Classify(tc.module, tc.symbol)
		if got.Category != tc.category || got.ModuleBadge != tc.badge {
			t.Errorf("Classify(%s, %s) = %s / %s, want %s / %s", tc.module, tc.symbol, got.Category, got.ModuleBadge, tc.category, tc.badge)
		}
	}
	if !c.Classify("sqlmin", "lck_ProduceExtendedEvent").Infrastructure {
		t.Error("XE producer not infrastructure")
	}
	if got := c.Classify("sqlmin", "Spinlock<143,7,1>::SpinToAcquireWithExponentialBackoff"); got.Category == "Latching" || !strings.Contains(got.CategoryDisplay, "Spinlock") {
		t.Errorf("spinlock classified %+v", got)
	}
}

func TestXEProducersAreInfrastructure(t *testing.T) {
	c := DefaultClassifier()
	for _, sym := range []string{"lck_ProduceExtendedEvent", "LockManager::ProduceExtendedEventForAcquire", "ErrorReportedAutoPublish::Send", "XeSqlPkg::lock_acquired::Publish"} {
		if got := c.Classify("sqlmin", sym); got.Category != "XEventInfrastructure" || !got.Infrastructure {
			t.Errorf("Classify(%s) = %s infra %v", sym, got.Category, got.Infrastructure)
		}
	}
}

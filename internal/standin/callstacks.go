package standin

import (
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/queryreplay/queryreplay/internal/standin/engine"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/standin/xevents"
)

// Call stacks of the stand-in's events.
//
// package0.callstack and package0.callstack_rva carry the frames of the
// code that fired the event, innermost first (docs/design/event-fields.md §4). The
// stand-in builds them from what it is doing when it emits the event: the
// event kind (a page read goes through the buffer pool and its latch, a
// lock through the lock manager, a wait through the SOS scheduler, a spill
// through the sort or hash code) under the GetRow frames of the plan
// operators being executed (leaf first, each wrapped in the profiling
// iterator an actual plan uses) under the statement and the worker thread.
// The function names are those of SQL Server's public symbols as
// SQLCallStackResolver prints them (realdata/callstack/resolved_*.txt);
// they are the stand-in's own invention where no real stack shows the
// frame, chosen so pkg/callstack's rules classify them as a SQL Server
// engineer would.
//
// Each module's functions are laid out in name order, 0x100 bytes apart
// from RVA 0x1000 (StackModules): exactly where a PDB built from naked
// functions of 256 bytes puts them (internal/symfixture), so the frames
// resolve to these names through a real PDB. A frame's RVA points inside
// its function, as a return address does. The module builds (PDB GUID and
// age) are Options.ModuleBuilds, or ones derived from the persona.
//
// Like SQL Server, a stack holds at most maxStackFrames frames: the
// outermost (thread start, request loop) are cut from deep ones.

// maxStackFrames is the depth of package0.callstack ("16-frame callstack",
// its XE description; docs/design/event-fields.md §4).
const maxStackFrames = 16

// ModuleBuild is the PDB identity of one module build: GUID (registry
// form) and age, as a callstack_rva frame and the module's PE debug
// directory carry them.
type ModuleBuild struct {
	GUID string
	Age  uint32
}

// StackModule describes one module the stand-in's call stacks name.
type StackModule struct {
	// Name is the short name (sqlmin); File the loaded file (sqlmin.dll);
	// PDB the PDB's file name (sqlmin.pdb).
	Name, File, PDB string
	// Functions are the module's functions in layout order: Functions[i]
	// starts at RVA FirstFunctionRVA + i*FunctionSize. Names are qualified
	// C++ names ("BPool::ReadPage").
	Functions []string
}

// Layout of every module's functions.
const (
	FirstFunctionRVA = 0x1000
	FunctionSize     = 0x100
)

// frameRef is one frame before layout: a module and a function.
type frameRef struct{ module, function string }

func fr(module, function string) frameRef { return frameRef{module, function} }

// threadBase is the worker's stack below the request, outermost last.
var threadBase = []frameRef{
	fr("sqllang", "CSQLSource::Execute"), fr("sqllang", "process_request"), fr("sqllang", "process_commands_internal"),
	fr("sqllang", "process_messages"), fr("sqldk", "SOS_Task::Param::Execute"), fr("sqldk", "SOS_Scheduler::RunTask"),
	fr("sqldk", "SOS_Scheduler::ProcessTasks"), fr("sqldk", "SchedulerManager::WorkerEntryPoint"),
	fr("sqldk", "SystemThread::RunWorker"), fr("sqldk", "SystemThreadDispatcher::ProcessWorker"),
	fr("sqldk", "SchedulerManager::ThreadEntryPoint"), fr("kernel32", "BaseThreadInitThunk"), fr("ntdll", "RtlUserThreadStart"),
}

// statementFrames run one statement of a batch (CXStmt<type>::XretExecute
// is the statement node in pkg/callstack's operator rules).
func statementFrames(stmt string, query bool) []frameRef {
	var out []frameRef
	if query {
		out = append(out, fr("sqlmin", "CQueryScan::GetRow"), fr("sqllang", "CXStmtQuery::ErsqExecuteQuery"))
	}
	return append(out, fr("sqllang", "CXStmt"+stmt+"::XretExecute"), fr("sqllang", "CMsqlExecContext::ExecuteStmts"),
		fr("sqllang", "CMsqlExecContext::FExecute"))
}

// operatorFrame is the iterator method an operator runs while its input
// (child index child, -1 for the operator's own work) produces the event;
// the classes are SQL Server's iterators (pkg/callstack's operator rules
// map them back to plan operators).
func operatorFrame(op *engine.PlanNode, child int) frameRef {
	p := op.Physical
	switch {
	case strings.HasSuffix(p, "Scan") && p != "Constant Scan":
		return fr("sqlmin", "CQScanRowsetNew::GetRowWithPrefetch")
	case strings.HasSuffix(p, "Seek"), strings.HasSuffix(p, "Lookup"):
		return fr("sqlmin", "CQScanRangeNew::GetRow")
	case p == "Nested Loops":
		return fr("sqlmin", "CQScanNLJoinTrivialNew::GetRow")
	case p == "Hash Match" && strings.Contains(op.Logical, "Aggregate"):
		return fr("sqlmin", "CQScanHashAggNew::GetRow")
	case p == "Hash Match" && child == 0:
		return fr("sqlmin", "CQScanHash::ConsumeBuild")
	case p == "Hash Match":
		return fr("sqlmin", "CQScanHash::ConsumeProbe")
	case p == "Merge Join":
		return fr("sqlmin", "CQScanMergeJoinNew::GetRow")
	case strings.HasSuffix(p, "Sort"):
		return fr("sqlmin", "CQScanSortNew::BuildSortTable")
	case p == "Stream Aggregate":
		return fr("sqlmin", "CQScanStreamAggregateNew::GetRowHelper")
	case p == "Parallelism":
		return fr("sqlmin", "CQScanExchangeNew::GetRow")
	case strings.HasSuffix(p, "Update"), strings.HasSuffix(p, "Insert"), strings.HasSuffix(p, "Delete"), strings.HasSuffix(p, "Merge"):
		return fr("sqlmin", "CQScanUpdateNew::GetRow")
	case p == "Constant Scan":
		return fr("sqlmin", "CQScanConstScanNew::GetRow")
	case p == "Filter":
		return fr("sqlmin", "CQScanFilterNew::GetRowHelper")
	case p == "Top":
		return fr("sqlmin", "CQScanTopNew::GetRow")
	case strings.HasSuffix(p, "Spool"):
		return fr("sqlmin", "CQScanSpoolNew::GetRow")
	case p == "Concatenation":
		return fr("sqlmin", "CQScanConcatNew::GetRow")
	case p == "Compute Scalar":
		return fr("sqlmin", "CQScanComputeScalarNew::GetRow")
	case p == "Segment":
		return fr("sqlmin", "CQScanSegmentNew::GetRow")
	case p == "Sequence Project":
		return fr("sqlmin", "CQScanSeqProjectNew::GetRow")
	}
	return fr("sqlmin", "CQueryScan::GetRow")
}

// accessFrames are how a scan, seek or lookup reaches its rows, and a
// modification its rows' places.
func accessFrames(op *engine.PlanNode) []frameRef {
	if op == nil {
		return nil
	}
	p := op.Physical
	switch {
	case strings.HasSuffix(p, "Seek"), strings.HasSuffix(p, "Lookup"):
		return []frameRef{fr("sqlmin", "BTreeMgr::Seek"), fr("sqlmin", "IndexDataSetSession::SetStartPosition"), fr("sqlmin", "RowsetNewSS::FetchNextRow")}
	case strings.HasSuffix(p, "Scan") && p != "Constant Scan":
		return []frameRef{fr("sqlmin", "IndexDataSetSession::GetNextRowValuesInternal"), fr("sqlmin", "RowsetNewSS::FetchNextRow")}
	case strings.HasSuffix(p, "Update"), strings.HasSuffix(p, "Insert"), strings.HasSuffix(p, "Delete"):
		return []frameRef{fr("sqlmin", "IndexDataSetSession::InsertRowInternal"), fr("sqlmin", "RowsetNewSS::InsertRow")}
	}
	return nil
}

func publish(pkg, event string) frameRef {
	if pkg == "sqlos" {
		return fr("sqldk", "XeSosPkg::"+event+"::Publish")
	}
	return fr("sqlmin", "XeSqlPkg::"+event+"::Publish")
}

// suspend is a task waiting in the SOS scheduler.
var suspend = []frameRef{fr("sqldk", "SOS_Task::PreWait"), fr("sqldk", "SOS_Scheduler::SuspendNonPreemptive"), fr("sqldk", "WaitableBase::Wait")}

// bufferFix fixes a page in the buffer pool.
var bufferFix = []frameRef{fr("sqlmin", "BPool::Get"), fr("sqlmin", "FixPageNotThruLinkage")}

// eventFrames are the frames of the code that fires ev (innermost first),
// above the operator's.
func eventFrames(ev *xevents.EventData, leaf *engine.PlanNode) []frameRef {
	out := []frameRef{publish(ev.Pkg, ev.Name)}
	switch ev.Name {
	case "physical_page_read":
		out = append(out, fr("sqlmin", "BPool::ReadPage"))
		out = append(out, bufferFix...)
		out = append(out, accessFrames(leaf)...)
	case "physical_page_write":
		out = append(out, fr("sqlmin", "BPool::WritePageNoLatch"), fr("sqlmin", "BPool::FlushCache"), fr("sqlmin", "CheckpointDB2"))
	case "lock_acquired", "lock_escalation":
		out = append(out, fr("sqlmin", "lck_ProduceExtendedEvent"), fr("sqlmin", "lck_lockInternal"), fr("sqlmin", "GetLock"))
		out = append(out, accessFrames(leaf)...)
	case "lock_released":
		out = append(out, fr("sqlmin", "lck_ProduceExtendedEvent"), fr("sqlmin", "lck_unlockInternal"), fr("sqlmin", "XactLockInfo::ReleaseUnconditionalSafe"))
		out = append(out, accessFrames(leaf)...)
	case "wait_info", "wait_completed":
		out = append(out, suspend...)
		out = append(out, waitFrames(waitType(ev), leaf)...)
	case "sort_warning":
		out = append(out, fr("sqlmin", "CQScanSortNew::SpillRun"))
	case "hash_warning", "hash_spill_details":
		out = append(out, fr("sqlmin", "CHashWorkfilePartitionGroup::SpillPartition"))
	case "page_split":
		out = append(out, fr("sqlmin", "PageSplitter::DoSplit"), fr("sqlmin", "BTreeMgr::InsertRow"))
		out = append(out, accessFrames(leaf)...)
	case "transaction_log":
		out = append(out, fr("sqlmin", "SQLServerLogMgr::AppendLogRequest"), fr("sqlmin", "XdesRMReadWrite::GenerateLogRec"))
		out = append(out, accessFrames(leaf)...)
	case "log_flush_complete":
		out = append(out, fr("sqlmin", "SQLServerLogMgr::FlushToLSN"), fr("sqlmin", "XdesRMFull::Commit"))
	case "file_read":
		out = append(out, fr("sqlmin", "FCB::AsyncRead"), fr("sqlmin", "BPool::ReadPage"))
		out = append(out, bufferFix...)
		out = append(out, accessFrames(leaf)...)
	case "file_read_completed", "file_write_completed":
		// an I/O completion runs on the worker that polls for it, below
		// the wait for the page latch
		out = append(out, fr("sqlmin", "FCBIoRequest::Complete"), fr("sqldk", "SOS_Scheduler::ProcessIOCompletions"), fr("sqldk", "SOS_Scheduler::SuspendNonPreemptive"),
			fr("sqlmin", "LatchBase::Suspend"), fr("sqlmin", "BUF::AcquireLatch"))
		out = append(out, bufferFix...)
		out = append(out, accessFrames(leaf)...)
	}
	return out
}

// waitFrames are the code that waits, by wait type.
func waitFrames(wt string, leaf *engine.PlanNode) []frameRef {
	switch {
	case strings.HasPrefix(wt, "PAGEIOLATCH_"), strings.HasPrefix(wt, "PAGELATCH_"):
		out := []frameRef{fr("sqlmin", "LatchBase::Suspend"), fr("sqlmin", "LatchBase::AcquireInternal"), fr("sqlmin", "BUF::AcquireLatch")}
		out = append(out, bufferFix...)
		return append(out, accessFrames(leaf)...)
	case strings.HasPrefix(wt, "LCK_M_"):
		out := []frameRef{fr("sqlmin", "LockOwner::Sleep"), fr("sqlmin", "lck_lockInternal"), fr("sqlmin", "GetLock")}
		return append(out, accessFrames(leaf)...)
	case wt == "IO_COMPLETION":
		return []frameRef{fr("sqlmin", "CQScanSortNew::SpillRun")}
	case wt == "CXPACKET", wt == "CXCONSUMER", wt == "CXSYNC_PORT":
		return []frameRef{fr("sqlmin", "CXPort::Pull"), fr("sqlmin", "CXPipe::Pull")}
	case wt == "WRITELOG":
		return []frameRef{fr("sqlmin", "SQLServerLogMgr::WaitLogWritten"), fr("sqlmin", "XdesRMFull::Commit")}
	case wt == "RESOURCE_SEMAPHORE":
		return []frameRef{fr("sqlmin", "MemoryGrantResource::Wait"), fr("sqllang", "CQueryExecContext::ReserveMemory")}
	}
	return nil
}

func waitType(ev *xevents.EventData) string {
	for _, f := range ev.Fields {
		if f.Name == "wait_type" {
			return f.Text
		}
	}
	return ""
}

// stackOf builds the frames of ev: the event's own code, the operators
// being executed (ops, root first), the statement and the thread.
func stackOf(ev *xevents.EventData, ops []*engine.PlanNode, profiled string) []frameRef {
	var leaf *engine.PlanNode
	if len(ops) > 0 {
		leaf = ops[len(ops)-1]
	}
	out := eventFrames(ev, leaf)
	for i := len(ops) - 1; i >= 0; i-- {
		child := -1
		if i+1 < len(ops) {
			child = slices.Index(ops[i].Children, ops[i+1])
		}
		out = append(out, operatorFrame(ops[i], child), fr("sqlmin", profiled+"::GetRow"))
	}
	stmt, query := "Select", len(ops) > 0
	if len(ops) > 0 {
		switch l := ops[0].Logical; l {
		case "Insert", "Update", "Delete", "Merge":
			stmt = l
		}
	}
	out = append(out, statementFrames(stmt, query)...)
	out = append(out, threadBase...)
	if len(out) > maxStackFrames {
		out = out[:maxStackFrames]
	}
	return out
}

// moduleInfo is one row of sys.dm_os_loaded_modules.
type moduleInfo struct {
	name, path, pdb, description string
	base                         uint64
	stacks                       bool // its functions appear in call stacks
}

// loadedModules are the modules of the stand-in's process, in load order.
// Real base addresses differ on every start (ASLR); these are fixed.
var loadedModules = []moduleInfo{
	{name: "sqlservr", path: "sqlservr.exe", description: "SQL Server Windows NT - 64 Bit", base: 0x00007FF6E0900000},
	{name: "ntdll", path: `C:\Windows\SYSTEM32\ntdll.dll`, description: "NT Layer DLL", base: 0x00007FFEB6A20000, stacks: true},
	{name: "kernel32", path: `C:\Windows\System32\KERNEL32.DLL`, description: "Windows NT BASE API Client DLL", base: 0x00007FFEB5D30000, stacks: true},
	{name: "kernelbase", path: `C:\Windows\System32\KERNELBASE.dll`, description: "Windows NT BASE API Client DLL", base: 0x00007FFEB3C90000},
	{name: "sqlos", path: "SQLOS.dll", description: "SQL Server OS shim", base: 0x00007FFEA9E70000},
	{name: "sqldk", path: "sqldk.dll", description: "SQL Server Windows NT - 64 Bit", base: 0x00007FFEA9A60000, stacks: true},
	{name: "sqlmin", path: "sqlmin.dll", description: "SQL Server Windows NT - 64 Bit", base: 0x00007FFEA5E10000, stacks: true},
	{name: "sqllang", path: "sqllang.dll", description: "SQL Server Windows NT - 64 Bit", base: 0x00007FFEA3B50000, stacks: true},
	{name: "sqltses", path: "SqlTsEs.dll", description: "SQL Server Windows NT - 64 Bit", base: 0x00007FFEA2D40000},
	{name: "qds", path: "qds.dll", description: "SQL Server Query Store", base: 0x00007FFEA2870000},
	{name: "sqlevn70", path: `Resources\1033\sqlevn70.rll`, description: "SQL Server Resources", base: 0x000001E4A0BD0000},
}

// binDir is where the persona's binaries would be.
func (p *Persona) binDir() string {
	major := p.Version.Major
	return fmt.Sprintf(`C:\Program Files\Microsoft SQL Server\MSSQL%d.MSSQLSERVER\MSSQL\Binn\`, major)
}

// fileVersion is file_version as sys.dm_os_loaded_modules prints it
// (x.x:x.x; https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-os-loaded-modules-transact-sql).
func (p *Persona) fileVersion(m moduleInfo) string {
	if m.name == "ntdll" || m.name == "kernel32" || m.name == "kernelbase" {
		return "10.0:17763.1"
	}
	v := strings.Split(p.ProductVersion, ".")
	for len(v) < 4 {
		v = append(v, "0")
	}
	return v[0] + "." + v[1] + ":" + v[2] + "." + v[3]
}

// stackModel lays out the functions and renders stacks for one server.
type stackModel struct {
	modules  map[string]*StackModule
	rvas     map[frameRef]uint32
	builds   map[string]ModuleBuild
	bases    map[string]uint64
	rva      bool   // the persona has package0.callstack_rva
	profiled string // the profiling iterator of actual plans
	cache    map[string]*xevents.Stack
}

// StackModules lists the modules whose functions the stand-in's call
// stacks name, with each module's functions in layout order.
func StackModules() []StackModule {
	byName := map[string]map[string]bool{}
	add := func(fs []frameRef) {
		for _, f := range fs {
			if byName[f.module] == nil {
				byName[f.module] = map[string]bool{}
			}
			byName[f.module][f.function] = true
		}
	}
	add(allFrames())
	var out []StackModule
	for _, m := range loadedModules {
		fns := byName[m.name]
		if !m.stacks || len(fns) == 0 {
			continue
		}
		sm := StackModule{Name: m.name, File: m.path[strings.LastIndexAny(m.path, `\`)+1:], PDB: m.name + ".pdb"}
		for f := range fns {
			sm.Functions = append(sm.Functions, f)
		}
		sort.Strings(sm.Functions)
		out = append(out, sm)
	}
	return out
}

// allFrames is every frame any stack can hold.
func allFrames() []frameRef {
	var out []frameRef
	out = append(out, threadBase...)
	for _, stmt := range []string{"Select", "Insert", "Update", "Delete", "Merge"} {
		out = append(out, statementFrames(stmt, true)...)
	}
	out = append(out, fr("sqlmin", "CQScanProfileNew::GetRow"), fr("sqlmin", "CQScanLightProfileNew::GetRow"))
	for _, p := range []string{"Clustered Index Scan", "Clustered Index Seek", "Key Lookup", "Nested Loops", "Hash Match", "Merge Join",
		"Sort", "Stream Aggregate", "Parallelism", "Clustered Index Update", "Constant Scan", "Filter", "Top", "Table Spool", "Concatenation", "Segment",
		"Compute Scalar", "Sequence Project", "Assert"} {
		for _, logical := range []string{"Inner Join", "Aggregate"} {
			op := &engine.PlanNode{Physical: p, Logical: logical}
			out = append(out, operatorFrame(op, 0), operatorFrame(op, 1))
			out = append(out, accessFrames(op)...)
		}
	}
	for _, ev := range []xevents.EventData{{Name: "physical_page_read", Pkg: "sqlserver"}, {Name: "physical_page_write", Pkg: "sqlserver"},
		{Name: "lock_acquired", Pkg: "sqlserver"}, {Name: "lock_released", Pkg: "sqlserver"}, {Name: "lock_escalation", Pkg: "sqlserver"},
		{Name: "sort_warning", Pkg: "sqlserver"}, {Name: "hash_warning", Pkg: "sqlserver"}, {Name: "hash_spill_details", Pkg: "sqlserver"},
		{Name: "page_split", Pkg: "sqlserver"}, {Name: "transaction_log", Pkg: "sqlserver"}, {Name: "log_flush_complete", Pkg: "sqlserver"},
		{Name: "wait_info", Pkg: "sqlos"}, {Name: "wait_completed", Pkg: "sqlos"}} {
		out = append(out, eventFrames(&ev, nil)...)
	}
	for name, def := range xevents.Events {
		ev := xevents.EventData{Name: name, Pkg: def.Pkg}
		out = append(out, eventFrames(&ev, nil)...)
	}
	for _, wt := range []string{"PAGEIOLATCH_SH", "LCK_M_S", "IO_COMPLETION", "CXPACKET", "WRITELOG", "RESOURCE_SEMAPHORE"} {
		out = append(out, waitFrames(wt, nil)...)
	}
	return out
}

func newStackModel(p *Persona, builds map[string]ModuleBuild) *stackModel {
	m := &stackModel{modules: map[string]*StackModule{}, rvas: map[frameRef]uint32{}, builds: map[string]ModuleBuild{},
		bases: map[string]uint64{}, rva: p.CallstackRVA, profiled: "CQScanProfileNew", cache: map[string]*xevents.Stack{}}
	if p.Version.Major >= 15 {
		// lightweight profiling v3 is on by default from SQL Server 2019
		// (docs/design/event-fields.md §5)
		m.profiled = "CQScanLightProfileNew"
	}
	for _, sm := range StackModules() {
		sm := sm
		m.modules[sm.Name] = &sm
		for i, f := range sm.Functions {
			m.rvas[frameRef{sm.Name, f}] = uint32(FirstFunctionRVA + i*FunctionSize)
		}
		b, ok := builds[sm.Name]
		if !ok {
			b = defaultBuild(p, sm.Name)
		}
		m.builds[sm.Name] = b
	}
	for _, lm := range loadedModules {
		m.bases[lm.name] = lm.base
	}
	return m
}

// defaultBuild derives a stable GUID for a module of the persona's build.
func defaultBuild(p *Persona, module string) ModuleBuild {
	h := sha1.Sum([]byte(p.ProductVersion + "/" + module))
	g := fmt.Sprintf("%08X-%04X-%04X-%04X-%012X", binary.BigEndian.Uint32(h[0:4]), binary.BigEndian.Uint16(h[4:6]),
		binary.BigEndian.Uint16(h[6:8]), binary.BigEndian.Uint16(h[8:10]), h[10:16])
	return ModuleBuild{GUID: g, Age: 2}
}

// offsetIn is where inside its function a frame's return address lies.
func offsetIn(f frameRef) uint32 {
	h := sha1.Sum([]byte(f.module + "!" + f.function))
	return 0x10 + uint32(binary.BigEndian.Uint16(h[:2]))%0xC0&^3
}

// render returns the stack of ev under ops, rendering each distinct stack once.
func (m *stackModel) render(ev *xevents.EventData, ops []*engine.PlanNode) *xevents.Stack {
	frames := stackOf(ev, ops, m.profiled)
	var key strings.Builder
	for _, f := range frames {
		key.WriteString(f.module)
		key.WriteByte('!')
		key.WriteString(f.function)
		key.WriteByte('\n')
	}
	if r, ok := m.cache[key.String()]; ok {
		return r
	}
	r := &xevents.Stack{}
	var addrs, rva strings.Builder
	for i, f := range frames {
		off := m.rvas[f] + offsetIn(f)
		fmt.Fprintf(&addrs, "0x%016X\n", m.bases[f.module]+uint64(off))
		sm, b := m.modules[f.module], m.builds[f.module]
		fmt.Fprintf(&rva, `<frame id="%02X" pdb="%s" age="%d" guid="%s" module="%s" rva="0x%X" />`+"\n", i, sm.PDB, b.Age, strings.ToLower(b.GUID), sm.File, off)
	}
	r.Addrs, r.RVAXML = strings.TrimRight(addrs.String(), "\n"), strings.TrimRight(rva.String(), "\n")
	if len(m.cache) < 4096 {
		m.cache[key.String()] = r
	}
	return r
}

// loadedModulesView is sys.dm_os_loaded_modules
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-os-loaded-modules-transact-sql):
// VIEW SERVER STATE (VIEW SERVER PERFORMANCE STATE from SQL Server 2022),
// checked by checkViewServerState (permissions.go).
func loadedModulesView(x *execCtx, _ *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("base_address", engine.TVarBin(8), "file_version", engine.TNVar(23), "product_version", engine.TNVar(23), "debug", engine.TBit,
		"patched", engine.TBit, "prerelease", engine.TBit, "private_build", engine.TBit, "special_build", engine.TBit, "language", engine.TInt,
		"company", engine.TNVar(256), "description", engine.TNVar(256), "name", engine.TNVar(255))}
	if err := x.checkViewServerState(); err != nil {
		return nil, err
	}
	p := x.srv.persona
	for _, m := range loadedModules {
		path := m.path
		if !strings.Contains(path, `:\`) {
			path = p.binDir() + path
		}
		base := make([]byte, 8)
		binary.BigEndian.PutUint64(base, m.base)
		company := "Microsoft Corporation"
		v := p.fileVersion(m)
		r.Rows = append(r.Rows, []any{base, v, v, false, false, false, false, false, int64(1033), company, m.description, path})
	}
	return r, nil
}

// wantsStack tells whether a session event's actions include a call stack.
func wantsStack(actions []sqlfront.XEName) bool {
	for _, a := range actions {
		if a.Name == "callstack" || a.Name == "callstack_rva" {
			return true
		}
	}
	return false
}

// enterOp and leaveOp track the operators being executed (runCtx's open,
// next and close), whose frames the events' stacks hold; a statement that
// gives up the server latch takes its operators with it (swapOps).
func (s *Server) enterOp(op *engine.PlanNode) { s.curOps = append(s.curOps, op) }

// swapOps replaces the operators being executed, returning the previous.
func (s *Server) swapOps(ops []*engine.PlanNode) []*engine.PlanNode {
	prev := s.curOps
	s.curOps = ops
	return prev
}

func (s *Server) leaveOp() {
	if len(s.curOps) > 0 {
		s.curOps = s.curOps[:len(s.curOps)-1]
	}
}

package tracer

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/callstack"
	"github.com/queryreplay/queryreplay/pkg/sqlconn"
	"github.com/queryreplay/queryreplay/pkg/tsql"
)

// ModificationPolicy says whether data modifications may be traced at all.
type ModificationPolicy int

const (
	// ModificationsRollback (the default) traces INSERT, UPDATE, DELETE, MERGE
	// and SELECT INTO inside a named transaction that is always rolled back.
	ModificationsRollback ModificationPolicy = iota
	// ModificationsRefuse refuses every modification.
	ModificationsRefuse
)

// Policy is the operator's configuration of what a trace may do to the
// server; the per-trace Options can only ask for what it allows.
type Policy struct {
	// AllowClearBufferPool permits CHECKPOINT + DBCC DROPCLEANBUFFERS, which
	// empties the buffer pool of the whole instance. Default false.
	AllowClearBufferPool bool
	// Modifications decides whether data modifications are traced (always
	// rolled back) or refused. Default: rollback mode.
	Modifications ModificationPolicy
}

// Default limits.
const (
	DefaultMaxEvents     = 1_000_000
	DefaultMaxFileSizeMB = 256
	DefaultGracePeriod   = 15 * time.Minute
	DefaultMaxLockRows   = 2000
	// DefaultMaxLockScanPages bounds the index a key-lock lookup may scan:
	// 25,600 pages of 8 KB, 200 MB.
	DefaultMaxLockScanPages = 25600
	// DefaultTimeout bounds a traced batch when Options.Timeout is 0. A
	// batch that outlives its timeout is stopped: its session stopped at
	// once, the traced session KILLed, QueryReplay's transaction rolled back.
	DefaultTimeout = 5 * time.Minute
)

// Options describe one trace.
type Options struct {
	// SQL is the batch to trace: one batch, no GO separators.
	SQL string
	// Params, when set, make SQL a parameterized statement (as the plan
	// cache holds one, pkg/sqlconn): it runs through sys.sp_executesql with
	// Params.Decl as its @params and the values passed positionally, every
	// one of them a typed argument of the request — nothing is spliced into
	// SQL. The request is an RPC, so the trace has no sql_batch_starting
	// event (its timeline starts at its earliest event).
	Params *sqlconn.Params
	// Database, when set, is the database the query runs in (USE before it).
	Database string
	// ClearBufferPool runs CHECKPOINT + DBCC DROPCLEANBUFFERS before START so
	// that reads are physical. Needs Policy.AllowClearBufferPool.
	ClearBufferPool bool
	// DisableReadAhead turns trace flag 652 on for the session; it is always
	// turned off again afterwards.
	DisableReadAhead bool
	// Events chooses the optional event groups.
	Events bundle.EventGroups
	// CallStacks adds package0.callstack (package0.callstack_rva where the
	// server has it, SQL Server 2022+) to the storage events.
	CallStacks bool
	// SymbolServers are symbol servers (http(s) URLs or symbol-store
	// directories) the call stacks' PDBs are downloaded from after the
	// run, into SymbolCacheDir (default: the user cache directory). With
	// no servers nothing is downloaded: a cache directory alone is read
	// offline, and with neither the frames stay module+RVA. Downloads
	// are bounded by SymbolTimeout (0: DefaultSymbolTimeout); failures are
	// reported in Result.Resolution and never fail the trace.
	SymbolServers  []string
	SymbolCacheDir string
	SymbolTimeout  time.Duration
	// ModuleIdentities gives modules their PDB identity (by short name:
	// sqlmin) for call stacks that carry none — package0.callstack before
	// SQL Server 2022 prints addresses only (callstack.ParseModuleInfo
	// reads SQLCallStackResolver's module-info lines).
	ModuleIdentities map[string]callstack.ModuleKey
	// MaxPageHeaders bounds how many touched pages' headers (type, B-tree
	// level, previous/next page) are read after the run (0:
	// DefaultMaxPageHeaders; negative: none).
	MaxPageHeaders int
	// MaxPageNames bounds how many touched pages are named (page →
	// allocation unit → object and index) after the run: one
	// sys.dm_db_page_info lookup each (0: DefaultMaxPageNames; negative:
	// none).
	MaxPageNames int
	// UndocumentedPageAllocations lets the tracer name pages and read
	// their headers from the undocumented
	// sys.dm_db_database_page_allocations on servers without
	// sys.dm_db_page_info (before SQL Server 2019). That function walks
	// every allocation of the database, so it never runs unless asked.
	UndocumentedPageAllocations bool
	// Timeout bounds the traced batch (0: DefaultTimeout). When it passes,
	// the session is stopped at once and the traced session KILLed from
	// QueryReplay's control connection; cleanup always runs.
	Timeout time.Duration
	// MaxEvents bounds the events read back (and the ring_buffer size on
	// Azure SQL Database); the rest is reported as truncated. 0: default.
	MaxEvents int
	// MaxFileSizeMB bounds the event files on the server (two rollover files
	// of half the size each); events lost to the cap are reported. 0: default.
	MaxFileSizeMB int
	// MaxLockRows bounds how many key-lock hashes are resolved to rows
	// (0: DefaultMaxLockRows; negative: none). %%lockres%% cannot be sought,
	// so every batch of 2,000 hashes costs a full scan of its index; the
	// rest is reported as unresolved.
	MaxLockRows int
	// MaxLockScanPages bounds the size of an index whose key locks are
	// resolved to rows (0: DefaultMaxLockScanPages; negative: no bound). A
	// lookup scans its whole index, so a larger index is skipped with a
	// note rather than read on a production server.
	MaxLockScanPages int
	// TraceDirectory overrides the server directory of the event file
	// (default: the directory of the SQL Server error log). It is a path on
	// the server, which the service account must be able to write.
	TraceDirectory string
	// GracePeriod is how old a leftover queryreplay_* session must be before
	// the sweep drops it when it cannot tell the session's owner (a name
	// without one, or a login that cannot see other sessions); a session
	// whose owner is gone is dropped at once, one whose owner is alive never
	// (0: DefaultGracePeriod).
	GracePeriod time.Duration
	// BlockerInterval is how often, while the batch runs, the control
	// connection reads sys.dm_exec_requests to learn which session blocks
	// it (0: DefaultBlockerInterval; negative: never). MaxBlockerSamples
	// bounds the blocking intervals kept (0: DefaultMaxBlockerSamples;
	// negative: none sampled). BlockerStatements also reads each blocking
	// session's last batch (sys.dm_exec_input_buffer) into the bundle: off
	// by default, as it is another user's SQL; it is never logged.
	BlockerInterval   time.Duration
	MaxBlockerSamples int
	BlockerStatements bool
	// Progress, when set, receives progress reports (never query text). It
	// may be called from more than one goroutine at a time.
	Progress func(Progress)
	// Live, when set, makes the trace live (live.go): while the batch runs
	// the events are read back incrementally and the operators' progress
	// polled, and each LiveUpdate is handed to Live, from one goroutine.
	Live func(LiveUpdate)

	// ReadBack chooses how the event file is read back (server-scoped
	// sessions; a ring_buffer is always read as XML). Default: ReadBackAuto.
	ReadBack ReadBackMode

	// readBackAgain (tests) reads the events a second time with another
	// mode and hands over that bundle.
	readBackAgain *readBackAgain

	// scopeOverride forces a session scope (tests of the ring_buffer path
	// against a server whose EngineEdition is not 5).
	scopeOverride *Scope

	// cleanupBudget replaces cleanupTimeout (tests).
	cleanupBudget time.Duration

	// skipClassifier (tests) runs a batch the classifier would refuse, to
	// prove that the checks behind it hold on their own.
	skipClassifier bool
}

type readBackAgain struct {
	mode ReadBackMode
	got  func(*bundle.Bundle, error)
}

// ReadBackMode says how a trace's event files are read back.
type ReadBackMode int

const (
	// ReadBackAuto fetches the binary .xel files when the login may
	// (ADMINISTER BULK OPERATIONS) and they can be listed, and otherwise —
	// on any refusal or error of that path — reads the XML.
	ReadBackAuto ReadBackMode = iota
	// ReadBackXML reads event XML with sys.fn_xe_file_target_read_file.
	ReadBackXML
	// ReadBackBinary fetches the .xel files with OPENROWSET(BULK …,
	// SINGLE_BLOB) and decodes them locally; a refusal fails the trace.
	ReadBackBinary
)

var readBackNames = [...]string{"auto", "xml", "binary"}

func (m ReadBackMode) String() string {
	if m >= 0 && int(m) < len(readBackNames) {
		return readBackNames[m]
	}
	return fmt.Sprintf("ReadBackMode(%d)", int(m))
}

// ParseReadBack reads "auto", "xml" or "binary".
func ParseReadBack(s string) (ReadBackMode, error) {
	for i, n := range readBackNames {
		if strings.EqualFold(s, n) {
			return ReadBackMode(i), nil
		}
	}
	return 0, fmt.Errorf("read-back mode %q: want auto, xml or binary", s)
}

// Progress is a report on a running trace.
type Progress struct {
	Step    string        // e.g. "running", "reading events"
	Rows    int64         // rows drained so far
	Events  int64         // events read back so far
	Elapsed time.Duration // since the trace began
}

// withDefaults returns o with zero limits replaced by the defaults.
func (o Options) withDefaults() Options {
	// A leading byte-order mark is the file's encoding, not SQL: the
	// classifier skips it, and the server must not see it either.
	o.SQL = strings.TrimPrefix(o.SQL, "\uFEFF")
	if o.MaxEvents == 0 {
		o.MaxEvents = DefaultMaxEvents
	}
	if o.MaxFileSizeMB == 0 {
		o.MaxFileSizeMB = DefaultMaxFileSizeMB
	}
	if o.GracePeriod == 0 {
		o.GracePeriod = DefaultGracePeriod
	}
	if o.MaxLockScanPages == 0 {
		o.MaxLockScanPages = DefaultMaxLockScanPages
	}
	if o.MaxLockRows == 0 {
		o.MaxLockRows = DefaultMaxLockRows
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.BlockerInterval == 0 {
		o.BlockerInterval = DefaultBlockerInterval
	}
	if o.MaxBlockerSamples == 0 {
		o.MaxBlockerSamples = DefaultMaxBlockerSamples
	}
	return o
}

// Validate checks o against p and classifies the SQL. It returns the
// classification, or a *RefusedError (or a plain error for nonsense values).
func (o Options) Validate(p Policy) (tsql.Classification, error) {
	var errs []error
	if strings.TrimSpace(o.SQL) == "" {
		return tsql.Classification{}, &tsql.RefusedError{Reason: "no SQL to trace"}
	}
	if o.MaxEvents < 0 {
		errs = append(errs, fmt.Errorf("max events must not be negative (got %d)", o.MaxEvents))
	}
	if o.MaxFileSizeMB < 0 {
		errs = append(errs, fmt.Errorf("max file size must not be negative (got %d MB)", o.MaxFileSizeMB))
	}
	if o.Timeout < 0 {
		errs = append(errs, fmt.Errorf("timeout must not be negative (got %s)", o.Timeout))
	}
	if o.GracePeriod < 0 {
		errs = append(errs, fmt.Errorf("grace period must not be negative (got %s)", o.GracePeriod))
	}
	if strings.ContainsAny(o.TraceDirectory, "\x00\r\n*?") {
		errs = append(errs, fmt.Errorf("trace directory %q holds a character no server path can have", o.TraceDirectory))
	}
	if o.ReadBack < ReadBackAuto || o.ReadBack > ReadBackBinary {
		errs = append(errs, fmt.Errorf("read-back mode %d is not auto, xml or binary", int(o.ReadBack)))
	}
	if strings.ContainsRune(o.Database, 0) {
		errs = append(errs, errors.New("database name holds a NUL character"))
	}
	if o.Params != nil {
		if list, err := sqlconn.ParseDeclarations(o.Params.Decl); err != nil {
			errs = append(errs, fmt.Errorf("parameters: %w", err))
		} else if len(list) != len(o.Params.List) {
			errs = append(errs, fmt.Errorf("parameters: %d declared, %d values", len(list), len(o.Params.List)))
		}
	}
	if len(errs) > 0 {
		return tsql.Classification{}, errors.Join(errs...)
	}
	if o.ClearBufferPool && !p.AllowClearBufferPool {
		return tsql.Classification{}, &tsql.RefusedError{Reason: "clearing the buffer pool (CHECKPOINT + DBCC DROPCLEANBUFFERS) empties the cache of the whole instance; the configuration does not allow it (allow it explicitly, on a test server only)"}
	}
	// User procedure calls are listed, not refused: the run reads and
	// classifies their definitions before anything starts (procedures.go).
	c, err := tsql.ClassifyWith(o.SQL, tsql.Options{UserProcedures: true})
	if err != nil {
		return c, err
	}
	if c.Modification && p.Modifications == ModificationsRefuse {
		return c, &tsql.RefusedError{Reason: fmt.Sprintf("the batch modifies data (%s) and the configuration refuses modifications", strings.Join(c.Verbs, ", "))}
	}
	return c, nil
}

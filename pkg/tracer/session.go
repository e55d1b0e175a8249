package tracer

import (
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/sqlconn"
	"github.com/queryreplay/queryreplay/pkg/tsql"
)

// SessionPrefix starts the name of every session this package creates. It is
// not the reference tool's "QueryReplay_" prefix, so the two tools never sweep
// each other's sessions (docs/design/tracing.md §1.1).
const SessionPrefix = "queryreplay_"

// NewSessionName returns queryreplay_<32 hex>. The 32 hex digits are a UUID
// version 7 (RFC 9562): its first 48 bits are the creation time in Unix
// milliseconds, so the orphan sweep can tell a session's age from its name
// alone — sys.server_event_sessions has no creation time, and a session that
// was created but never started is not in sys.dm_xe_sessions at all.
// Traces name their sessions with NewOwnedSessionName.
func NewSessionName() (string, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return "", fmt.Errorf("new session name: %w", err)
	}
	return SessionPrefix + hex.EncodeToString(id[:]), nil
}

// SessionOwner is the session that owns a trace session — the tracer's
// control connection: its session id and login time
// (sys.dm_exec_sessions.login_time,
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-sessions-transact-sql).
// Together they name one connection for the server's lifetime: an id is
// reused by later connections, an (id, login time) pair is not.
type SessionOwner struct {
	SPID      int
	LoginTime time.Time
}

// loginKey is a login time as the session name encodes it: 17 digits,
// yyyymmddhhmmss and milliseconds (datetime is precise to 1/300 s).
func loginKey(t time.Time) string {
	return strings.Replace(t.UTC().Format("20060102150405.000"), ".", "", 1)
}

// NewOwnedSessionName returns queryreplay_<32 hex>_<owner id>_<owner login
// time>: NewSessionName's name with its owner, so that a sweep drops the
// session as soon as its owner is gone, and never while it is alive. At
// most 68 characters (a session name is a sysname, 128).
func NewOwnedSessionName(owner SessionOwner) (string, error) {
	if owner.SPID <= 0 || owner.LoginTime.IsZero() {
		return "", fmt.Errorf("new session name: no owner session (id %d, login time %v)", owner.SPID, owner.LoginTime)
	}
	name, err := NewSessionName()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s_%d_%s", name, owner.SPID, loginKey(owner.LoginTime)), nil
}

// SessionCreated returns the creation time encoded in a session name made by
// NewSessionName or NewOwnedSessionName, and false for any other name.
func SessionCreated(name string) (time.Time, bool) {
	hexPart, _, ok := splitSessionName(name)
	if !ok {
		return time.Time{}, false
	}
	b, _ := hex.DecodeString(hexPart)
	ms := int64(b[0])<<40 | int64(b[1])<<32 | int64(b[2])<<24 | int64(b[3])<<16 | int64(b[4])<<8 | int64(b[5])
	return time.UnixMilli(ms), true
}

// SessionOwnerOf returns the owner encoded in a name made by
// NewOwnedSessionName: its session id and its login time as loginKey
// writes it.
func SessionOwnerOf(name string) (spid int, login string, ok bool) {
	_, owner, ok := splitSessionName(name)
	if !ok || owner == "" {
		return 0, "", false
	}
	id, login, found := strings.Cut(owner, "_")
	n, err := strconv.Atoi(id)
	if !found || err != nil || n <= 0 || len(login) != 17 || strings.Trim(login, "0123456789") != "" {
		return 0, "", false
	}
	return n, login, true
}

// generatedName is exactly the grammar of the names NewSessionName and
// NewOwnedSessionName write: the prefix, 32 lower-case hex digits, and
// optionally _<owner session id>_<17-digit login time>. Anchored at both
// ends and ASCII only, so a name the server returns — which anyone allowed
// to create an event session can choose — is acted on only when it is one
// this package could have made (issue 23: a look-alike name carrying
// "*/ UPDATE … /*" once reached the sweep's SQL).
var generatedName = regexp.MustCompile(`^queryreplay_([0-9a-f]{32})(?:_([1-9][0-9]{0,9})_([0-9]{17}))?$`)

// splitSessionName splits queryreplay_<32 hex>[_<id>_<login>] into the hex
// and the owner (<id>_<login>). Case-sensitive on purpose: the reference
// tool's sessions are named QueryReplay_<GUID v4>, and a case-insensitive
// LIKE lists them too; the exporter's queryreplay_exporter_<target> never
// has 32 hex digits after the prefix. The hex must be a UUID version 7,
// whose first 48 bits are the creation time.
func splitSessionName(name string) (hexPart, owner string, ok bool) {
	m := generatedName.FindStringSubmatch(name)
	if m == nil {
		return "", "", false
	}
	b, err := hex.DecodeString(m[1])
	if err != nil || b[6]>>4 != 7 {
		return "", "", false
	}
	if m[2] != "" {
		owner = m[2] + "_" + m[3]
	}
	return m[1], owner, true
}

// IsGeneratedSessionName tells whether name is exactly one that
// NewSessionName or NewOwnedSessionName could have written. The sweep acts
// on no other name.
func IsGeneratedSessionName(name string) bool {
	_, _, ok := splitSessionName(name)
	return ok
}

// exporterSessionPrefix starts the exporter's sessions, which no trace
// sweep may touch (docs/design/contracts.md §1).
const exporterSessionPrefix = "queryreplay_exporter_"

// Scope is where a session lives (pkg/sqlconn, shared with the exporter).
type Scope = sqlconn.Scope

const (
	// ScopeServer: ON SERVER with an event_file target.
	ScopeServer = sqlconn.ScopeServer
	// ScopeDatabase: ON DATABASE with a ring_buffer target (Azure SQL Database).
	ScopeDatabase = sqlconn.ScopeDatabase
)

// SessionSpec is everything the session DDL depends on.
type SessionSpec struct {
	Name  string
	SPID  int
	Scope Scope
	// Events and Modification choose the events; Modification adds
	// sqlserver.transaction_log.
	Events       bundle.EventGroups
	Modification bool
	// CallStacks adds package0.callstack, or package0.callstack_rva when
	// CallstackRVA is set (SQL Server 2022+).
	CallStacks   bool
	CallstackRVA bool
	// RingBuffer: a ring_buffer target instead of the event file, on a
	// server session (Azure SQL Managed Instance, whose event_file target
	// writes only to Azure Blob Storage). Database-scoped sessions always
	// use one.
	RingBuffer bool
	// Directory is the server directory of the event file (ScopeServer).
	Directory     string
	MaxFileSizeMB int
	// MaxEvents bounds the ring_buffer (ScopeDatabase).
	MaxEvents int
	// Omit lists events and actions (package.name) the server refused to
	// this session (availability.go); they are left out of the DDL.
	Omit []string
}

// sessionEvent is one ADD EVENT clause.
type sessionEvent struct {
	name string
	// storage events get the call stack; the batch, plan, profile and
	// transaction events do not (they fire once per statement and the stack
	// would only make them bigger, docs/design/tracing.md §1.4).
	stack bool
	// set is the event's SET clause (customizable columns).
	set string
}

// Events returns the qualified event names of the session, in DDL order.
func (s SessionSpec) eventList() []sessionEvent {
	ev := []sessionEvent{
		{name: "sqlserver.sql_batch_starting"},
		{name: "sqlserver.sql_batch_completed"},
		// Statement boundaries: each statement of the batch
		// (sql_statement_*) and of the modules it calls (sp_statement_*),
		// with its offsets, nest level, object and its own duration, rows
		// and reads; with the tsql_stack action they give each event its
		// statement (pkg/timeline/statements.go,
		// https://learn.microsoft.com/en-us/sql/relational-databases/extended-events/quick-start-extended-events-in-sql-server).
		{name: "sqlserver.sql_statement_starting"},
		{name: "sqlserver.sql_statement_completed"},
		{name: "sqlserver.sp_statement_starting"},
		{name: "sqlserver.sp_statement_completed"},
		{name: "sqlserver.query_post_execution_showplan"},
		{name: "sqlserver.query_thread_profile"},
		{name: "sqlserver.physical_page_read", stack: true},
		{name: "sqlserver.physical_page_write", stack: true},
	}
	g := s.Events
	if g.Locks {
		// collect_resource_description gives the %%lockres%% text of a KEY
		// lock, e.g. "(8194443284a0)", which key-hash resolution looks up.
		ev = append(ev,
			sessionEvent{name: "sqlserver.lock_acquired", stack: true, set: "collect_resource_description = (1)"},
			sessionEvent{name: "sqlserver.lock_released", stack: true, set: "collect_resource_description = (1)"},
			sessionEvent{name: "sqlserver.lock_escalation", stack: true})
	}
	if g.Waits {
		ev = append(ev, sessionEvent{name: "sqlos.wait_info", stack: true})
	}
	if g.Memory {
		ev = append(ev,
			sessionEvent{name: "sqlserver.query_memory_grant_usage"},
			sessionEvent{name: "sqlserver.sort_warning", stack: true},
			sessionEvent{name: "sqlserver.hash_warning", stack: true},
			sessionEvent{name: "sqlserver.hash_spill_details", stack: true},
			sessionEvent{name: "sqlserver.exchange_spill", stack: true})
	}
	if g.Splits {
		ev = append(ev, sessionEvent{name: "sqlserver.page_split", stack: true})
	}
	if g.Log {
		ev = append(ev, sessionEvent{name: "sqlserver.log_flush_complete", stack: true})
	}
	if g.FileIO {
		ev = append(ev,
			sessionEvent{name: "sqlserver.file_read", stack: true},
			sessionEvent{name: "sqlserver.file_read_completed", stack: true},
			sessionEvent{name: "sqlserver.file_write_completed", stack: true})
	}
	if s.Modification {
		ev = append(ev,
			sessionEvent{name: "sqlserver.transaction_log", stack: true},
			sessionEvent{name: "sqlserver.sql_transaction"})
	}
	return ev
}

// EventNames lists the session's events (package.name), in DDL order.
func (s SessionSpec) EventNames() []string {
	var out []string
	for _, e := range s.eventList() {
		out = append(out, e.name)
	}
	return out
}

// TracedEvents lists the events the session carries: EventNames without
// those the server refused (Omit).
func (s SessionSpec) TracedEvents() []string {
	var out []string
	for _, e := range s.events() {
		out = append(out, e.name)
	}
	return out
}

// events is eventList without the omitted events.
func (s SessionSpec) events() []sessionEvent {
	var out []sessionEvent
	for _, e := range s.eventList() {
		if !slices.Contains(s.Omit, e.name) {
			out = append(out, e)
		}
	}
	return out
}

// stackAction is the call-stack action of the storage events, "" for none.
func (s SessionSpec) stackAction() string {
	switch {
	case !s.CallStacks:
		return ""
	case s.CallstackRVA:
		return "package0.callstack_rva"
	}
	return "package0.callstack"
}

// actionNames lists the actions the session may carry, omitted ones
// included.
func (s SessionSpec) actionNames() []string {
	out := slices.Clone(baseActions)
	if a := s.stackAction(); a != "" {
		out = append(out, a)
	}
	return out
}

// baseActions go on every event. event_sequence orders events and reveals
// lost ones; plan_handle ties events to the plan; tsql_stack ties each
// event to its statement (the sql_handle and statement offsets of every
// frame of the T-SQL call stack, innermost first: one statement of a batch
// or of a procedure it called); transaction_id and task_address pair locks
// and waits; database_id scopes page ids. A server that refuses tsql_stack
// (Msg 25744) traces without it: every event then stays on the batch, with
// the first plan's timeline as before.
var baseActions = []string{
	"package0.event_sequence",
	"sqlserver.session_id",
	"sqlserver.database_id",
	"sqlserver.plan_handle",
	"sqlserver.tsql_stack",
	"sqlserver.transaction_id",
	"sqlos.task_address",
}

// Marker returns the comment every auxiliary statement of the tracer carries
// once the session exists; the session's predicate drops any event whose
// sql_text contains the session name, so the tracer never traces itself.
//
// Only a name this package generated (lower-case letters, digits and _,
// checked by IsGeneratedSessionName) is ever written into the comment, so
// no text can close it; any other name gets no marker at all.
func (s SessionSpec) Marker() string {
	if !IsGeneratedSessionName(s.Name) {
		return ""
	}
	return "/* " + s.Name + " */ "
}

// pathSeparator is / for a Linux server directory, \ otherwise.
func pathSeparator(dir string) string {
	if strings.HasPrefix(dir, "/") {
		return "/"
	}
	return `\`
}

// FilePath is the event_file target's file name: <dir><sep><name>.xel.
// Trailing separators of dir are trimmed.
func (s SessionSpec) FilePath() string {
	dir := strings.TrimRight(s.Directory, `\/`)
	return dir + pathSeparator(s.Directory) + s.Name + ".xel"
}

// ReadPattern is the argument of sys.fn_xe_file_target_read_file: the file
// path with * before the extension, because SQL Server names the files
// <name>_0_<FILETIME>.xel (docs/design/tracing.md §3). Only the final ".xel" is
// replaced, never one inside the directory name.
func (s SessionSpec) ReadPattern() string {
	p := s.FilePath()
	return strings.TrimSuffix(p, ".xel") + "*.xel"
}

// Session options, chosen rather than left at the defaults (docs/design/tracing.md
// §1.6, §17 item 4). Documented at
// https://learn.microsoft.com/en-us/sql/t-sql/statements/create-event-session-transact-sql
//
//   - MAX_MEMORY: 16 MB, 64 MB with call stacks (the stack action makes every
//     storage event several times bigger). The default 4 MB fills quickly
//     with page-level events.
//   - EVENT_RETENTION_MODE = NO_EVENT_LOSS on SQL Server: the session is
//     filtered to the traced session's id, so only the traced query can ever
//     wait for buffer space, and a complete trace is worth that. On Azure SQL
//     Database, whose guidance is to avoid NO_EVENT_LOSS, ALLOW_SINGLE_EVENT_LOSS
//     is used and losses are reported (event_sequence gaps, dropped counts).
//   - MAX_DISPATCH_LATENCY = 1 SECONDS: STOP flushes anyway; the short latency
//     matters for the ring_buffer, which is read while the session runs.
//   - MEMORY_PARTITION_MODE = NONE: one traced session needs no per-CPU
//     buffers (and AWS RDS requires NONE, docs/design/exporter.md §9.4).
//   - TRACK_CAUSALITY = OFF: package0.event_sequence already orders events.
//   - STARTUP_STATE = OFF: a session left behind by a crash must never start
//     again with the server; the orphan sweep drops it.
//   - MAX_EVENT_SIZE = 16 MB with MAX_MEMORY 16 MB: an event must fit in one
//     of the session's three buffers (MAX_MEMORY / 3, about 5.3 MB) or it is
//     dropped, and the actual plan of a big query can be larger; the page
//     requires MAX_EVENT_SIZE ≥ MAX_MEMORY, and it costs two buffers of that
//     size while the trace runs. With call stacks the 64 MB session's
//     buffers (21 MB) already hold any plan.
func (s SessionSpec) withClause() string {
	mem, eventSize := 16, ", MAX_EVENT_SIZE = 16 MB"
	if s.CallStacks {
		mem, eventSize = 64, ""
	}
	retention := "NO_EVENT_LOSS"
	if s.Scope == ScopeDatabase {
		retention = "ALLOW_SINGLE_EVENT_LOSS"
	}
	return fmt.Sprintf("WITH (MAX_MEMORY = %d MB%s, EVENT_RETENTION_MODE = %s, MAX_DISPATCH_LATENCY = 1 SECONDS, "+
		"MEMORY_PARTITION_MODE = NONE, TRACK_CAUSALITY = OFF, STARTUP_STATE = OFF)", mem, eventSize, retention)
}

// ringMaxMemoryKB is the ring_buffer's max_memory, as recommended on
// https://learn.microsoft.com/en-us/sql/t-sql/statements/create-event-session-transact-sql.
const ringMaxMemoryKB = 2048

// UsesRingBuffer tells whether the session's target is a ring_buffer.
func (s SessionSpec) UsesRingBuffer() bool { return s.Scope == ScopeDatabase || s.RingBuffer }

// CreateDDL returns the CREATE EVENT SESSION statement.
func (s SessionSpec) CreateDDL() string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE EVENT SESSION %s ON %s\n", tsql.QuoteName(s.Name), s.Scope.Keyword())
	// session_id first: the cheapest test rejects other sessions' events
	// before sql_text is even looked at. The text test uses the documented
	// comparator, NOT sqlserver.like_i_sql_unicode_string(…) — the grammar
	// documents no NOT LIKE
	// (https://learn.microsoft.com/en-us/sql/t-sql/statements/create-event-session-transact-sql).
	pred := fmt.Sprintf("WHERE (sqlserver.session_id = (%d) AND NOT sqlserver.like_i_sql_unicode_string(sqlserver.sql_text, %s))",
		s.SPID, tsql.QuoteString("%"+s.Name+"%"))
	// package0.callstack: frames as module+offset or addresses;
	// package0.callstack_rva (SQL Server 2022+): <frame> elements with PDB
	// identity and RVA (docs/design/tracing.md §14.1, docs/design/symbols-and-xel.md §8).
	stack := s.stackAction()
	for i, e := range s.events() {
		if i > 0 {
			b.WriteString(",\n")
		}
		var actions []string
		for _, a := range baseActions {
			if !slices.Contains(s.Omit, a) {
				actions = append(actions, a)
			}
		}
		if e.stack && stack != "" && !slices.Contains(s.Omit, stack) {
			actions = append(actions, stack)
		}
		fmt.Fprintf(&b, "ADD EVENT %s (", e.name)
		if e.set != "" {
			fmt.Fprintf(&b, "SET %s ", e.set)
		}
		fmt.Fprintf(&b, "ACTION (%s) %s)", strings.Join(actions, ", "), pred)
	}
	b.WriteString("\n")
	// Targets: https://learn.microsoft.com/en-us/sql/relational-databases/extended-events/targets-for-extended-events-in-sql-server
	if s.UsesRingBuffer() {
		// ring_buffer: max_events_limit bounds the events kept; the oldest go
		// first, which shows as an event_sequence gap. max_memory 2048 KB is
		// what the CREATE EVENT SESSION page recommends so that target_data,
		// capped near 4 MB with the NEWEST events left out, is not
		// truncated: the ring drops its oldest events instead (reported as
		// dropped), and the plan and the batch's completion, which fire
		// last, survive.
		fmt.Fprintf(&b, "ADD TARGET package0.ring_buffer (SET max_events_limit = (%d), max_memory = (%d))\n",
			s.MaxEvents, ringMaxMemoryKB)
	} else {
		// Two rollover files of half the cap each: a trace over the cap
		// keeps its newest events, and the lost head shows as the first
		// event_sequence being above 1 (reported, never silent: §17 item 4).
		half := s.MaxFileSizeMB / 2
		if half < 1 {
			half = 1
		}
		fmt.Fprintf(&b, "ADD TARGET package0.event_file (SET filename = %s, max_file_size = (%d), max_rollover_files = (2))\n",
			tsql.QuoteString(s.FilePath()), half)
	}
	b.WriteString(s.withClause())
	return b.String()
}

// StartDDL, StopDDL and DropDDL return the other session statements, each
// carrying the marker. DropDDL checks the catalog first so that a cleanup
// retried from a fresh connection never fails on a session already gone.
func (s SessionSpec) StartDDL() string {
	return s.Marker() + "ALTER EVENT SESSION " + tsql.QuoteName(s.Name) + " ON " + s.Scope.Keyword() + " STATE = START"
}

func (s SessionSpec) StopDDL() string {
	return s.Marker() + "ALTER EVENT SESSION " + tsql.QuoteName(s.Name) + " ON " + s.Scope.Keyword() + " STATE = STOP"
}

func (s SessionSpec) DropDDL() string {
	return dropSessionSQL(s.Name, s.Scope)
}

// dropSessionSQL drops a session if it exists; dropping a running session
// stops it first (DROP EVENT SESSION,
// https://learn.microsoft.com/en-us/sql/t-sql/statements/drop-event-session-transact-sql;
// catalogs sys.server_event_sessions and, on Azure SQL Database,
// sys.database_event_sessions:
// https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-database-event-sessions-azure-sql-database).
//
// The statement carries no comment: the name reaches it only through
// QuoteString and QuoteName, which are safe for any text, and the sweep
// passes it only names that IsGeneratedSessionName accepts.
func dropSessionSQL(name string, scope Scope) string {
	view := "sys.server_event_sessions"
	if scope == ScopeDatabase {
		view = "sys.database_event_sessions"
	}
	return "IF EXISTS (SELECT 1 FROM " + view + " WHERE name = " + tsql.QuoteString(name) + ") " +
		"DROP EVENT SESSION " + tsql.QuoteName(name) + " ON " + scope.Keyword()
}

// TransactionName is the name of the modification transaction: "qr_" and
// the session's first 28 hex digits, 31 characters — under the 32-character
// limit of transaction names
// (https://learn.microsoft.com/en-us/sql/t-sql/language-elements/begin-transaction-transact-sql).
// It does not contain the session name, so it is not the marker.
func (s SessionSpec) TransactionName() string {
	h := strings.TrimPrefix(s.Name, SessionPrefix)
	if len(h) > 28 {
		h = h[:28]
	}
	return "qr_" + h
}

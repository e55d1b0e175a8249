package exporter

import (
	"fmt"
	"slices"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/sqlconn"
	"github.com/queryreplay/queryreplay/pkg/tsql"
)

// SessionPrefix starts the name of every exporter session:
// queryreplay_exporter_<target name>_<owner id> (owner.go; the TEAM
// contract keeps the prefix). The tracer's sweep only drops sessions it made
// (queryreplay_<32 hex>), and this package drops only its own targets'
// exact names and, in its sweep, names that parse exactly as an exporter's
// whose owner connection is gone.
const SessionPrefix = "queryreplay_exporter_"

// AppName is the client application name of every exporter connection. The
// session's predicate drops events whose sqlserver.client_app_name is this,
// so the exporter never counts its own reads and waits.
const AppName = sqlconn.ExporterApp

// sessionSpec is everything the session DDL depends on, resolved against
// one server (scope, database ids, map keys).
type sessionSpec struct {
	name   string
	scope  sqlconn.Scope
	target string // event_file or ring_buffer
	// file is the event_file filename as given to the DDL.
	file                string
	maxFileMB, rollover int
	ringEvents, ringKB  int
	maxMemoryMB         int
	latencySec          int
	startup             bool
	groups              []string
	databaseIDs         []uint64
	waitEvent           string // wait_info or wait_completed
	waitEndOpcode       uint64 // event_opcode key of End
	hasEndOpcode        bool
	waitMinMs           uint64
	waitRanges          []keyRange
	waitLeftOut         []keyRange // the complement of waitRanges among the server's wait types
	waitAll             bool
}

// sessionEvent is one ADD EVENT clause.
type sessionEvent struct {
	name    string
	set     string
	actions []string
	pred    []string // ANDed with the common predicate
}

// Actions: event_sequence orders events and reveals losses and duplicates;
// database_id labels them; query_hash ties spills and reads to the plan
// cache (sqlserver.query_hash is uint64 in XE, binary(8) in
// sys.dm_exec_query_stats).
var (
	baseActions  = []string{"package0.event_sequence", "sqlserver.database_id"}
	queryActions = []string{"package0.event_sequence", "sqlserver.database_id", "sqlserver.query_hash"}
)

// events lists the ADD EVENT clauses of the spec's groups, in group order.
func (s *sessionSpec) events() []sessionEvent {
	var out []sessionEvent
	for _, g := range EventGroupNames {
		if !slices.Contains(s.groups, g) {
			continue
		}
		switch g {
		case GroupReads:
			out = append(out,
				sessionEvent{name: "sqlserver.physical_page_read", actions: queryActions},
				sessionEvent{name: "sqlserver.physical_page_write", actions: queryActions})
		case GroupWaits:
			out = append(out, sessionEvent{name: "sqlos." + s.waitEvent, actions: baseActions, pred: s.waitPredicates()})
		case GroupSpills:
			out = append(out,
				sessionEvent{name: "sqlserver.sort_warning", actions: queryActions},
				sessionEvent{name: "sqlserver.hash_warning", actions: queryActions},
				sessionEvent{name: "sqlserver.exchange_spill", actions: queryActions})
		case GroupSplits:
			out = append(out, sessionEvent{name: "sqlserver.page_split", actions: baseActions})
		case GroupMemory:
			out = append(out, sessionEvent{name: "sqlserver.query_memory_grant_usage", actions: queryActions})
		case GroupLog:
			out = append(out, sessionEvent{name: "sqlserver.log_flush_complete", actions: baseActions})
		case GroupStatements:
			// collect_statement = 0: the statement text would make every
			// event many times bigger, and the exporter never needs it
			// (statements come from the plan cache, for the top queries).
			out = append(out, sessionEvent{name: "sqlserver.sql_statement_completed", set: "collect_statement = (0)", actions: queryActions})
		}
	}
	return out
}

// waitPredicates: End events only (wait_info fires at both ends, the
// duration is on End; event_opcode map [R]), the minimum duration (ms) and
// the wait type key ranges.
func (s *sessionSpec) waitPredicates() []string {
	var p []string
	if s.waitEvent == "wait_info" && s.hasEndOpcode {
		p = append(p, fmt.Sprintf("opcode = (%d)", s.waitEndOpcode))
	}
	if s.waitMinMs > 0 {
		p = append(p, fmt.Sprintf("duration >= (%d)", s.waitMinMs))
	}
	if !s.waitAll {
		p = append(p, s.waitTypePredicate())
	}
	return p
}

// waitTypePredicate keeps the chosen wait types: as their key ranges, or,
// when shorter, as NOT the ranges left out (the server's events carry
// only keys of its own map, so both keep the same events).
func (s *sessionSpec) waitTypePredicate() string {
	kept := rangePredicate("wait_type", s.waitRanges)
	if len(s.waitLeftOut) > 0 {
		if not := "NOT " + rangePredicate("wait_type", s.waitLeftOut); len(not) < len(kept) {
			return not
		}
	}
	return kept
}

// maxPredicateChars is the documented limit on an event's predicate:
// "Predicates are limited to 3,000 characters"
// (https://learn.microsoft.com/en-us/sql/t-sql/statements/create-event-session-transact-sql).
const maxPredicateChars = 3000

// predicateText is the WHERE clause of one event, as createDDL writes it.
func (s *sessionSpec) predicateText(e sessionEvent) string {
	pred := append(append([]string(nil), s.commonPredicate()...), e.pred...)
	return "(" + strings.Join(pred, " AND ") + ")"
}

// databasesPredicateChars is the longest common predicate n databases can
// make, before the server's ids are known: each id at its widest (a
// database_id is at most 32767, the instance's database limit).
func databasesPredicateChars(n int) int {
	s := sessionSpec{databaseIDs: make([]uint64, n)}
	for i := range s.databaseIDs {
		s.databaseIDs[i] = 32767
	}
	return len(s.predicateText(sessionEvent{}))
}

// checkPredicates refuses a session whose predicate would pass the
// documented limit, naming the settings that grew it, before the server
// refuses the DDL with a message that names neither.
func (s *sessionSpec) checkPredicates() error {
	for _, e := range s.events() {
		n := len([]rune(s.predicateText(e)))
		if n <= maxPredicateChars {
			continue
		}
		dbPart := 0
		if len(s.databaseIDs) > 0 {
			dbPart = len(s.commonPredicate()[len(s.commonPredicate())-1])
		}
		why := fmt.Sprintf("databases (%d listed: %d characters)", len(s.databaseIDs), dbPart)
		if len(e.pred) > 0 {
			why += fmt.Sprintf(" and the wait filters waits.include, waits.exclude and waits.exclude_benign (%d characters)", len(strings.Join(e.pred, " AND ")))
		}
		return fmt.Errorf("the predicate of event %s would be %d characters, over the documented %d (CREATE EVENT SESSION): it is grown by %s; "+
			"list fewer databases, or fewer or broader wait patterns (a * pattern covers a run of types)", e.name, n, maxPredicateChars, why)
	}
	return nil
}

// commonPredicate keeps QueryReplay's own connections out — the
// exporter's (polls, probes) and every trace's (sqlconn.TraceApp: the
// datasource, the CLI), so replaying a query that spilled never counts as
// a production spill nor re-arms the alert — and, when the target lists
// databases, only their events.
func (s *sessionSpec) commonPredicate() []string {
	var p []string
	for _, app := range sqlconn.OwnApps() {
		p = append(p, "sqlserver.client_app_name <> "+tsql.QuoteString(app))
	}
	if len(s.databaseIDs) > 0 {
		parts := make([]string, len(s.databaseIDs))
		for i, id := range s.databaseIDs {
			parts[i] = fmt.Sprintf("sqlserver.database_id = (%d)", id)
		}
		p = append(p, "("+strings.Join(parts, " OR ")+")")
	}
	return p
}

// createDDL returns CREATE EVENT SESSION
// (https://learn.microsoft.com/en-us/sql/t-sql/statements/create-event-session-transact-sql).
//
// Options: ALLOW_SINGLE_EVENT_LOSS, so that the session never slows the
// server down (losses are counted, not hidden); MEMORY_PARTITION_MODE =
// NONE (AWS RDS requires it, docs/design/exporter.md §9.4); TRACK_CAUSALITY =
// OFF (event_sequence orders events); MAX_DISPATCH_LATENCY = the configured
// latency, so a poll sees events at most that old; STARTUP_STATE as
// configured (OFF by default: the exporter starts its session itself).
func (s *sessionSpec) createDDL() string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE EVENT SESSION %s ON %s\n", tsql.QuoteName(s.name), scopeKeyword(s.scope))
	for i, e := range s.events() {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, "ADD EVENT %s (", e.name)
		if e.set != "" {
			fmt.Fprintf(&b, "SET %s ", e.set)
		}
		fmt.Fprintf(&b, "ACTION (%s) WHERE %s)", strings.Join(e.actions, ", "), s.predicateText(e))
	}
	b.WriteString("\n")
	// Targets: https://learn.microsoft.com/en-us/sql/relational-databases/extended-events/targets-for-extended-events-in-sql-server
	if s.target == "ring_buffer" {
		fmt.Fprintf(&b, "ADD TARGET package0.ring_buffer (SET max_events_limit = (%d), max_memory = (%d))\n", s.ringEvents, s.ringKB)
	} else {
		fmt.Fprintf(&b, "ADD TARGET package0.event_file (SET filename = %s, max_file_size = (%d), max_rollover_files = (%d))\n",
			tsql.QuoteString(s.file), s.maxFileMB, s.rollover)
	}
	startup := "OFF"
	if s.startup {
		startup = "ON"
	}
	fmt.Fprintf(&b, "WITH (MAX_MEMORY = %d MB, EVENT_RETENTION_MODE = ALLOW_SINGLE_EVENT_LOSS, MAX_DISPATCH_LATENCY = %d SECONDS, "+
		"MEMORY_PARTITION_MODE = NONE, TRACK_CAUSALITY = OFF, STARTUP_STATE = %s)", s.maxMemoryMB, s.latencySec, startup)
	return b.String()
}

func scopeKeyword(s sqlconn.Scope) string {
	if s == sqlconn.ScopeDatabase {
		return "DATABASE"
	}
	return "SERVER"
}

// startDDL starts the session (ALTER EVENT SESSION … STATE = START,
// https://learn.microsoft.com/en-us/sql/t-sql/statements/alter-event-session-transact-sql).
func (s *sessionSpec) startDDL() string {
	return "ALTER EVENT SESSION " + tsql.QuoteName(s.name) + " ON " + scopeKeyword(s.scope) + " STATE = START"
}

// stopDDL stops the session, which writes its buffered events to its
// targets (ALTER EVENT SESSION … STATE = STOP, same page as startDDL).
func (s *sessionSpec) stopDDL() string {
	return "ALTER EVENT SESSION " + tsql.QuoteName(s.name) + " ON " + scopeKeyword(s.scope) + " STATE = STOP"
}

// dropDDL drops the session if it exists (DROP EVENT SESSION stops it first,
// https://learn.microsoft.com/en-us/sql/t-sql/statements/drop-event-session-transact-sql).
func (s *sessionSpec) dropDDL() string {
	return "IF EXISTS (SELECT 1 FROM " + catalogView(s.scope) + " WHERE name = " + tsql.QuoteString(s.name) + ") " +
		"DROP EVENT SESSION " + tsql.QuoteName(s.name) + " ON " + scopeKeyword(s.scope)
}

// catalogView is where session definitions live: sys.server_event_sessions
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-server-event-sessions-transact-sql)
// or, on Azure SQL Database, sys.database_event_sessions.
func catalogView(s sqlconn.Scope) string {
	if s == sqlconn.ScopeDatabase {
		return "sys.database_event_sessions"
	}
	return "sys.server_event_sessions"
}

// runtimeViews are the running sessions and their targets:
// sys.dm_xe_sessions and sys.dm_xe_session_targets
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-sessions-transact-sql,
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-session-targets-transact-sql),
// or their database-scoped equivalents on Azure SQL Database.
func runtimeViews(s sqlconn.Scope) (sessions, targets string) {
	if s == sqlconn.ScopeDatabase {
		return "sys.dm_xe_database_sessions", "sys.dm_xe_database_session_targets"
	}
	return "sys.dm_xe_sessions", "sys.dm_xe_session_targets"
}

// stateQuery reads the running session's start time, XE's dropped count and
// its target's data (event_file: the current file name; ring_buffer: the
// events).
func (s *sessionSpec) stateQuery() string {
	sessions, targets := runtimeViews(s.scope)
	return "SELECT s.create_time, s.dropped_event_count, t.target_data FROM " + sessions + " AS s JOIN " + targets +
		" AS t ON t.event_session_address = s.address WHERE s.name = " + tsql.QuoteString(s.name) +
		" AND t.target_name = " + tsql.QuoteString(s.target)
}

// existsQuery tells whether the session is defined (running or not).
func (s *sessionSpec) existsQuery() string {
	return "SELECT COUNT(*) FROM " + catalogView(s.scope) + " WHERE name = " + tsql.QuoteString(s.name)
}

// defaultFileName is the event_file filename for a configured path: the
// path itself when it names a .xel file, the session's file inside it when
// it is a directory or a blob container URL, or a bare file name (which SQL
// Server puts in its log directory) when empty.
func defaultFileName(path, session string) string {
	switch {
	case path == "":
		return session + ".xel"
	case strings.HasSuffix(strings.ToLower(path), ".xel"):
		return path
	case isBlobURL(path) || strings.HasSuffix(path, "/") || !strings.Contains(path, `\`):
		return strings.TrimRight(path, `/`) + "/" + session + ".xel"
	default:
		return strings.TrimRight(path, `\`) + `\` + session + ".xel"
	}
}

package exporter

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"

	"github.com/queryreplay/queryreplay/pkg/sqlconn"
)

// Session ownership. Every exporter process names each target's session
// queryreplay_exporter_<target>_<owner id>, where the owner id is 16
// lowercase hex digits drawn at random when the target is initialised. The
// process keeps one idle connection per target open whose application name
// is queryreplay-exporter-owner-<owner id>; as long as that connection
// exists (sys.dm_exec_sessions.program_name), the session is alive. This is
// the tracer's owner rule (pkg/tracer: owner session id and login time) with
// an owner that survives a killed connection: the exporter reconnects its
// owner under the same name, so its session keeps its name and its files.
//
// So two exporters on one server never touch each other's sessions (each
// drops only its own exact name), and a crashed exporter's session is
// dropped by the next exporter's sweep once its owner connection is gone.

// ownerIDLen is the length of an owner id in hex digits.
const ownerIDLen = 16

// OwnerAppPrefix starts the application name of every owner connection.
const OwnerAppPrefix = "queryreplay-exporter-owner-"

// sessionNamePattern is the exact, anchored form of an exporter session
// name. A name read from the server is acted on only when it matches it.
// The target part is greedy, but the suffix has a fixed length, so the
// split is unambiguous.
var sessionNamePattern = regexp.MustCompile(`^queryreplay_exporter_([A-Za-z0-9_]{1,64})_([0-9a-f]{16})$`)

// ownerAppPattern is the exact form of an owner connection's program_name.
var ownerAppPattern = regexp.MustCompile(`^queryreplay-exporter-owner-([0-9a-f]{16})$`)

// newOwnerID draws a fresh owner id.
func newOwnerID() (string, error) {
	var b [ownerIDLen / 2]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("new owner id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// OwnedSessionName returns the session name of a target owned by id.
func OwnedSessionName(target, id string) string { return SessionPrefix + target + "_" + id }

// ParseSessionName splits an exporter session name into its target and
// owner id; ok is false for any name the exporter could not have made.
func ParseSessionName(name string) (target, id string, ok bool) {
	m := sessionNamePattern.FindStringSubmatch(name)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// ownerApp is the application name of the owner connection of id.
func ownerApp(id string) string { return OwnerAppPrefix + id }

// ownerOf returns the owner id of an owner connection's program_name.
func ownerOf(program string) (string, bool) {
	m := ownerAppPattern.FindStringSubmatch(program)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// owner holds the idle connection that keeps a target's session alive in
// the eyes of other exporters' sweeps.
type owner struct {
	id, dsn string
	db      *sql.DB
	conn    *sql.Conn
}

// openOwner connects the owner connection of id. It runs no statement, so
// no session ever counts it.
func openOwner(ctx context.Context, dsn, id string) (*owner, error) {
	o := &owner{id: id, dsn: withApp(dsn, ownerApp(id))}
	if err := o.reconnect(ctx); err != nil {
		return nil, err
	}
	return o, nil
}

// reconnect replaces the owner connection (the server killed it). The pool
// goes too: an idle connection the server killed looks good to database/sql
// until used, and the owner never uses it.
func (o *owner) reconnect(ctx context.Context) error {
	o.close()
	db, err := sql.Open("sqlserver", o.dsn)
	if err != nil {
		return fmt.Errorf("owner connection: %w", err)
	}
	db.SetMaxOpenConns(1)
	c, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return fmt.Errorf("owner connection: %w", err)
	}
	o.db, o.conn = db, c
	return nil
}

func (o *owner) close() {
	if o == nil || o.db == nil {
		return
	}
	_ = o.conn.Close()
	_ = o.db.Close()
	o.db, o.conn = nil, nil
}

// liveOwners lists the owner ids whose connection is open now. A login that
// lacks VIEW SERVER STATE (VIEW DATABASE STATE on Azure SQL Database) sees
// only its own session in sys.dm_exec_sessions, so canSee is false and no
// owner may be judged gone.
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-sessions-transact-sql#permissions
func liveOwners(ctx context.Context, q querier, scope sqlconn.Scope) (map[string]bool, bool, error) {
	perms := "SELECT HAS_PERMS_BY_NAME(NULL, NULL, N'VIEW SERVER STATE'), HAS_PERMS_BY_NAME(NULL, NULL, N'VIEW SERVER PERFORMANCE STATE')"
	if scope == sqlconn.ScopeDatabase {
		perms = "SELECT HAS_PERMS_BY_NAME(DB_NAME(), N'DATABASE', N'VIEW DATABASE STATE'), HAS_PERMS_BY_NAME(DB_NAME(), N'DATABASE', N'VIEW DATABASE PERFORMANCE STATE')"
	}
	var state, perf sql.NullInt64
	rows, err := q.QueryContext(ctx, perms)
	if err != nil {
		return nil, false, fmt.Errorf("check VIEW SERVER STATE: %w", err)
	}
	if rows.Next() {
		err = rows.Scan(&state, &perf)
	}
	rows.Close()
	if err != nil {
		return nil, false, fmt.Errorf("check VIEW SERVER STATE: %w", err)
	}
	if state.Int64 != 1 && perf.Int64 != 1 {
		return nil, false, nil
	}
	live := map[string]bool{}
	err = eachRow(ctx, q, "SELECT program_name FROM sys.dm_exec_sessions WHERE program_name LIKE N'queryreplay-exporter-owner-%'",
		func(rows *sql.Rows) error {
			var p sql.NullString
			if err := rows.Scan(&p); err != nil {
				return err
			}
			if id, ok := ownerOf(p.String); ok {
				live[id] = true
			}
			return nil
		})
	if err != nil {
		return nil, false, fmt.Errorf("list owner connections: %w", err)
	}
	return live, true, nil
}

// exporterSessions lists the sessions whose names parse as an exporter's.
func exporterSessions(ctx context.Context, q querier, scope sqlconn.Scope) ([]string, error) {
	var names []string
	err := eachRow(ctx, q, "SELECT name FROM "+catalogView(scope)+" WHERE name LIKE N'queryreplay[_]exporter[_]%'",
		func(rows *sql.Rows) error {
			var n string
			if err := rows.Scan(&n); err != nil {
				return err
			}
			if _, _, ok := ParseSessionName(n); ok {
				names = append(names, n)
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("list exporter sessions: %w", err)
	}
	return names, nil
}

// sweepDecision is what the sweep would do with the exporter sessions it
// found, given the owners alive.
type sweepDecision struct {
	drop    []string
	orphans map[string][]string // target -> owner ids of its orphaned sessions
}

// decideSweep drops a session only when its name parses exactly and its
// owner is gone; keep names the sessions never to drop (an adopted one).
func decideSweep(names []string, live map[string]bool, keep map[string]bool) sweepDecision {
	d := sweepDecision{orphans: map[string][]string{}}
	for _, n := range names {
		target, id, ok := ParseSessionName(n)
		if !ok || live[id] || keep[n] {
			continue
		}
		d.orphans[target] = append(d.orphans[target], id)
		d.drop = append(d.drop, n)
	}
	return d
}

// dropSessionDDL drops a named session; the name goes through QUOTENAME
// and string quoting, never into a comment.
func dropSessionDDL(name string, scope sqlconn.Scope) string {
	return (&sessionSpec{name: name, scope: scope}).dropDDL()
}

// sweepExporterSessions drops the exporter sessions whose owner connection
// is gone, except keep. It never judges an owner gone when the login cannot
// see other sessions.
func sweepExporterSessions(ctx context.Context, q querier, scope sqlconn.Scope, keep map[string]bool) ([]string, error) {
	names, err := exporterSessions(ctx, q, scope)
	if err != nil || len(names) == 0 {
		return nil, err
	}
	live, canSee, err := liveOwners(ctx, q, scope)
	if err != nil || !canSee {
		return nil, err
	}
	var dropped []string
	var errs []error
	for _, n := range decideSweep(names, live, keep).drop {
		if _, err := q.ExecContext(ctx, dropSessionDDL(n, scope)); err != nil {
			errs = append(errs, fmt.Errorf("drop orphaned exporter session: %w", err))
			continue
		}
		dropped = append(dropped, n)
	}
	return dropped, errors.Join(errs...)
}

// ownerAlive tells whether the owner connection of id is open now, as other
// exporters would see it; true when it cannot be seen (nothing to act on).
func ownerAlive(ctx context.Context, q querier, scope sqlconn.Scope, id string) (bool, error) {
	live, canSee, err := liveOwners(ctx, q, scope)
	if err != nil || !canSee {
		return true, err
	}
	return live[id], nil
}

// takeOwnership names the target's session. A target keeps its owner (and
// so its session name) for the life of the process. At the first
// initialisation, with drop_session_on_shutdown false, it adopts the
// orphaned session a previous exporter of the same target name left (its
// owner connection gone), so the session and its files carry on; otherwise
// it draws a fresh owner id. Then it sweeps the sessions of exporters that
// are gone.
func (t *target) takeOwnership(ctx context.Context, s *sessionSpec) error {
	if t.owner == nil {
		id, err := t.chooseOwnerID(ctx, s.scope)
		if err != nil {
			return err
		}
		o, err := openOwner(ctx, t.cfg.dsn, id)
		if err != nil {
			return err
		}
		t.owner = o
	}
	s.name = OwnedSessionName(t.cfg.Name, t.owner.id)
	dropped, err := sweepExporterSessions(ctx, t.db, s.scope, map[string]bool{s.name: true})
	for _, n := range dropped {
		t.log.Info("dropped an orphaned exporter session", "session", n)
	}
	if err != nil {
		// the sweep is housekeeping: the target's own session goes on
		t.log.Warn("sweep of orphaned exporter sessions failed", "err", err)
	}
	return nil
}

// chooseOwnerID adopts an orphan of this target's name when sessions are
// kept across restarts, else draws a new id.
func (t *target) chooseOwnerID(ctx context.Context, scope sqlconn.Scope) (string, error) {
	if t.global.DropSessionOnShutdown == nil || *t.global.DropSessionOnShutdown {
		return newOwnerID()
	}
	names, err := exporterSessions(ctx, t.db, scope)
	if err != nil {
		return "", err
	}
	live, canSee, err := liveOwners(ctx, t.db, scope)
	if err != nil {
		return "", err
	}
	if canSee {
		for _, id := range decideSweep(names, live, nil).orphans[t.cfg.Name] {
			t.adopted = true
			return id, nil
		}
	}
	return newOwnerID()
}

// keepOwner reconnects the owner connection when the server no longer lists
// it (killed), before another exporter's sweep could judge the session
// orphaned; the session keeps its name.
func (t *target) keepOwner(ctx context.Context) error {
	if t.owner == nil || t.spec == nil {
		return nil
	}
	alive, err := ownerAlive(ctx, t.db, t.spec.scope, t.owner.id)
	if err != nil {
		return err
	}
	if alive {
		return nil
	}
	t.log.Warn("the session's owner connection is gone; reconnecting it", "session", t.spec.name)
	return t.owner.reconnect(ctx)
}

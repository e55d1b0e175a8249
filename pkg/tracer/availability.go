package tracer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	mssql "github.com/microsoft/go-mssqldb"
)

// Azure SQL Database refuses a database-scoped session whole when one of
// its events (Msg 25743) or actions (Msg 25744) is not available to
// database-scoped sessions; which ones are is not fully documented (the
// lock events and sqlserver.server_principal_name are reported, others are
// in question:
// https://learn.microsoft.com/en-us/azure/azure-sql/database/xevent-db-diff-from-svr).
// sys.dm_xe_objects lists them anyway, so the tracer learns it from the
// refusal: it leaves the named event or action out, says so in the
// bundle's warnings, and creates the session again. The trace's own core
// (the batch and plan events, the event_sequence action) is never left
// out: without it there is no timeline, and the trace fails instead.
const (
	errNumEventUnavailable  = 25743
	errNumActionUnavailable = 25744
)

// coreActions are the actions a trace cannot do without.
var coreActions = []string{"package0.event_sequence", "sqlserver.session_id"}

// unavailableObject returns the event or action a 25743/25744 refusal
// names, when it is one of spec's and may be left out.
func unavailableObject(err error, spec SessionSpec) (kind, name string, ok bool) {
	var se mssql.Error
	if !errors.As(err, &se) || (se.Number != errNumEventUnavailable && se.Number != errNumActionUnavailable) {
		return "", "", false
	}
	name, ok = quotedName(se.Message)
	if !ok {
		return "", "", false
	}
	name = strings.ToLower(name)
	if se.Number == errNumEventUnavailable {
		ok = slices.Contains(spec.EventNames(), name) && !slices.Contains(coreEvents, name)
		return "event", name, ok
	}
	ok = slices.Contains(spec.actionNames(), name) && !slices.Contains(coreActions, name)
	return "action", name, ok
}

// quotedName is the first '…' quoted text of a message, at most 128
// characters (an XE object name is nvarchar(60), qualified twice over).
func quotedName(msg string) (string, bool) {
	i := strings.IndexByte(msg, '\'')
	if i < 0 {
		return "", false
	}
	j := strings.IndexByte(msg[i+1:], '\'')
	if j <= 0 || j > 128 {
		return "", false
	}
	return msg[i+1 : i+1+j], true
}

// createSession sends CREATE EVENT SESSION; on a 25743/25744 refusal it
// leaves the named event or action out and tries again, each time with
// one object fewer, so the loop ends after at most as many tries as the
// session has events and actions.
func (r *run) createSession(ctx context.Context) error {
	limit := len(r.spec.EventNames()) + len(r.spec.actionNames()) + 1
	for range limit {
		err := r.exec(ctx, "create event session", r.spec.Marker()+r.spec.CreateDDL())
		kind, name, ok := unavailableObject(err, r.spec)
		if !ok {
			return err
		}
		r.spec.Omit = append(r.spec.Omit, name)
		r.t.log.Warn("the server refused an event session object; tracing without it", "kind", kind, "name", name)
		r.warn("the server does not offer the %s %s to this session (Msg %d): the trace ran without it",
			kind, name, map[string]int{"event": errNumEventUnavailable, "action": errNumActionUnavailable}[kind])
	}
	return fmt.Errorf("create event session: still refused after leaving out %s", strings.Join(r.spec.Omit, ", "))
}

// errNumUseOtherDatabase is Azure SQL Database's refusal of USE for any
// database but the connection's: "connect to the database instead"
// (https://learn.microsoft.com/en-us/sql/t-sql/language-elements/use-transact-sql).
const errNumUseOtherDatabase = 40508

// useError explains a USE refused by Azure SQL Database.
func useError(err error, db string) error {
	var se mssql.Error
	if errors.As(err, &se) && se.Number == errNumUseOtherDatabase {
		return fmt.Errorf("Azure SQL Database cannot switch to database %q (Msg 40508): name it as the database of the connection string instead: %w", db, err)
	}
	return err
}

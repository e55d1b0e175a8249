package standin

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/queryreplay/queryreplay/internal/standin/engine"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/tds"
)

// What pkg/tracer's safety tests need from the stand-in (issue 12): the SET
// options that change how later statements run, the transaction id, KILL
// from another connection, Service Broker statements answered honestly,
// and a fault that ends a batch's transaction the way a trigger could.

// sessionModes are the SET options whose effect on later statements is
// modelled here.
type sessionModes struct {
	// https://learn.microsoft.com/en-us/sql/t-sql/statements/set-noexec-transact-sql:
	// statements are compiled, not executed, until SET NOEXEC OFF (which is
	// itself executed).
	noexec bool
	// https://learn.microsoft.com/en-us/sql/t-sql/statements/set-parseonly-transact-sql:
	// set at parse time; statements are parsed only, until SET PARSEONLY OFF.
	parseonly bool
	// https://learn.microsoft.com/en-us/sql/t-sql/statements/set-fmtonly-transact-sql:
	// only metadata is returned; no rows are processed or sent.
	fmtonly bool
	// https://learn.microsoft.com/en-us/sql/t-sql/statements/set-rowcount-transact-sql:
	// processing stops after this many rows (SELECT results, and the rows
	// UPDATE, DELETE and INSERT affect); 0 is no limit.
	rowcount int64
	// https://learn.microsoft.com/en-us/sql/t-sql/statements/set-textsize-transact-sql:
	// bytes of varchar(max), nvarchar(max) and varbinary(max) values a
	// SELECT returns. 0 here is unlimited: drivers that log in with the
	// ODBC flag (go-mssqldb, FreeTDS, tedious) get 2147483647; SET TEXTSIZE
	// 0 resets to the 4 KB default, -1 to unlimited.
	textsize int64
}

// setSessionMode executes the SET options modelled here; handled is false
// for any other option.
func (x *execCtx) setSessionMode(option, value string) (handled bool, err *sqlfront.SQLError) {
	m := &x.conn.modes
	switch option {
	case "NOEXEC":
		m.noexec = value == "ON"
	case "PARSEONLY":
		m.parseonly = value == "ON"
	case "FMTONLY":
		m.fmtonly = value == "ON"
	case "ROWCOUNT", "TEXTSIZE":
		n, perr := strconv.ParseInt(value, 10, 64)
		if perr != nil {
			return true, sqlfront.ErrSyntaxNear(value)
		}
		if option == "ROWCOUNT" {
			m.rowcount = max(n, 0)
			return true, nil
		}
		switch {
		case n < 0 || n >= 2147483647:
			m.textsize = 0
		case n == 0:
			m.textsize = 4096
		default:
			m.textsize = n
		}
	default:
		return false, nil
	}
	return true, nil
}

// execUnderModes runs st as SET NOEXEC, PARSEONLY and FMTONLY have it run;
// done is false when st runs normally.
func (x *execCtx) execUnderModes(st sqlfront.Stmt) (done bool, err error) {
	m := x.conn.modes
	if !m.noexec && !m.parseonly && !m.fmtonly {
		return false, nil
	}
	if s, ok := st.(*sqlfront.SetOptionStmt); ok {
		if m.fmtonly {
			return false, nil // SET statements run under FMTONLY
		}
		for _, o := range s.Options {
			if o == "NOEXEC" || o == "PARSEONLY" {
				return false, nil // the statements that turn the modes off
			}
		}
		return true, nil
	}
	if !m.fmtonly {
		return true, nil // compiled or parsed, not executed
	}
	switch s := st.(type) {
	case *sqlfront.SelectStmt:
		// metadata only: the result's columns, no rows (limitRows)
		return true, x.execSelect(s)
	case *sqlfront.BlockStmt:
		for _, inner := range s.Stmts {
			if err := x.exec(inner); err != nil {
				return true, err
			}
		}
		return true, nil
	case *sqlfront.IfStmt:
		// no condition is evaluated: both branches describe their results
		if err := x.exec(s.Then); err != nil || s.Else == nil {
			return true, err
		}
		return true, x.exec(s.Else)
	}
	return true, nil
}

// limitRows applies FMTONLY, ROWCOUNT and TEXTSIZE to a result set about to
// be sent.
func (x *execCtx) limitRows(rel *engine.Relation) *engine.Relation {
	m := x.conn.modes
	rows := rel.Rows
	switch {
	case m.fmtonly:
		rows = nil
	case m.rowcount > 0 && int64(len(rows)) > m.rowcount:
		rows = rows[:m.rowcount]
	}
	if m.textsize > 0 {
		cut := make([][]any, len(rows))
		for i, r := range rows {
			cut[i] = r
			copied := false
			for j, v := range r {
				t := rel.Cols[j].Typ
				if t.Size != 0 || t.Kind != sqlfront.TypeNVarChar && t.Kind != sqlfront.TypeVarBinary {
					continue
				}
				if w, ok := truncateText(v, m.textsize); ok {
					if !copied {
						cut[i], copied = append([]any(nil), r...), true
					}
					cut[i][j] = w
				}
			}
		}
		rows = cut
	}
	if len(rows) == len(rel.Rows) && m.textsize == 0 {
		return rel
	}
	out := *rel
	out.Rows = rows
	if len(rel.Srcs) >= len(rows) {
		out.Srcs = rel.Srcs[:len(rows)]
	}
	return &out
}

// truncateText cuts a max-type value to n bytes (UTF-16 for nvarchar).
func truncateText(v any, n int64) (any, bool) {
	switch s := v.(type) {
	case string:
		chars := int(n / 2)
		if utf8.RuneCountInString(s) <= chars {
			return nil, false
		}
		return string([]rune(s)[:chars]), true
	case []byte:
		if int64(len(s)) <= n {
			return nil, false
		}
		return s[:n], true
	}
	return nil, false
}

// limitDML applies SET ROWCOUNT to the rows an UPDATE, DELETE or INSERT
// is about to change.
func (x *execCtx) limitDML(rows [][]any) [][]any {
	if n := x.conn.modes.rowcount; n > 0 && int64(len(rows)) > n {
		return rows[:n]
	}
	return rows
}

// currentTransactionID implements CURRENT_TRANSACTION_ID()
// (https://learn.microsoft.com/en-us/sql/t-sql/functions/current-transaction-id-transact-sql),
// the id sys.dm_tran_current_transaction shows.
func (x *execCtx) currentTransactionID() int64 {
	if x.conn.txn != nil {
		return x.conn.txn.id
	}
	return x.srv.nextTxn + 1 // the statement's own autocommit transaction
}

// dmTranSessionTransactions is sys.dm_tran_session_transactions
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-tran-session-transactions-transact-sql):
// one row per session with an open transaction.
func dmTranSessionTransactions(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("session_id", engine.TInt, "transaction_id", engine.TBigInt, "is_user_transaction", engine.TBit, "open_transaction_count", engine.TInt)}
	all := x.checkViewState() == nil
	for _, id := range x.srv.sessionIDs() {
		c := x.srv.conns[id]
		if c.txn == nil || !all && c != x.conn {
			continue // without VIEW SERVER STATE a login sees its own session only
		}
		r.Rows = append(r.Rows, []any{int64(id), c.txn.id, c.txn.explicit, int64(c.txn.depth)})
	}
	return r, nil
}

// sessionIDs lists the connected sessions in order (caller holds the lock).
func (s *Server) sessionIDs() []int {
	return slices.Sorted(maps.Keys(s.conns))
}

// execKill ends another session as KILL does: it needs ALTER ANY
// CONNECTION (sysadmin here), refuses the caller's own session and unknown
// ones with SQL Server's messages, rolls back the victim's transaction and
// aborts its running request.
func (x *execCtx) execKill(s *sqlfront.KillStmt) error {
	n := s.SPID
	if !x.conn.sysadmin {
		return sqlfront.NewError(6102, 14, "User does not have permission to use the KILL statement.")
	}
	if int(n) == x.conn.spid {
		return sqlfront.NewError(6104, 16, "Cannot use KILL to kill your own process.")
	}
	victim, ok := x.srv.conns[int(n)]
	if !ok {
		return sqlfront.NewError(6106, 16, "Process ID %d is not an active process ID.", n)
	}
	x.srv.killLocked(victim)
	return x.done(tds.CmdNone, tds.NoCount)
}

// killLocked ends a session (caller holds the server lock): its open
// transaction rolls back, its request is aborted, its SPID is free.
func (s *Server) killLocked(c *connState) {
	if c.txn != nil {
		x := &execCtx{srv: s, conn: c}
		x.rollbackAll()
	}
	c.kill()
	delete(s.conns, c.spid)
}

// execBroker answers as SQL Server does without the queue or conversation:
// Msg 208 for a queue, Msg 8426 for a conversation handle.
func (x *execCtx) execBroker(s *sqlfront.BrokerStmt) error {
	if s.Queue != "" {
		return engine.ErrInvalidObject(s.Queue)
	}
	env := &engine.EvalEnv{X: x}
	v, err := env.Eval(s.Handle)
	if err != nil {
		return err
	}
	return sqlfront.NewError(8426, 16, "The conversation handle \"%s\" is not found.", strings.ToUpper(engine.ValueString(v)))
}

// commitTrigger ends, or ends and replaces, the transaction of the
// connection whose batch matches, after the batch's statements ran — as a
// trigger that commits (and begins a new transaction) would, invisibly to
// anything that reads only the batch text. It is engine state (Server's
// commitTriggers, under the server lock), not a tdsfault rule: it changes
// the session's transaction, which no wrapper around the handler can reach.
type commitTrigger struct {
	match   string
	replace bool
}

// EndTransactionIn commits the open transaction of the next batch whose
// text contains match, once its statements ran (a trigger that commits).
func (f *Faults) EndTransactionIn(match string) { f.addCommitTrigger(&commitTrigger{match: match}) }

// ReplaceTransactionIn commits the open transaction of the next batch
// whose text contains match and begins a new one in its place (a trigger
// that commits and begins again, leaving @@TRANCOUNT at 1).
func (f *Faults) ReplaceTransactionIn(match string) {
	f.addCommitTrigger(&commitTrigger{match: match, replace: true})
}

func (f *Faults) addCommitTrigger(r *commitTrigger) {
	s := f.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commitTriggers = append(s.commitTriggers, r)
}

// fireCommitTrigger applies the first commit trigger matching the batch
// (caller holds the server lock).
func (x *execCtx) fireCommitTrigger() {
	s := x.srv
	var hit *commitTrigger
	for i, r := range s.commitTriggers {
		if strings.Contains(strings.ToLower(x.sql), strings.ToLower(r.match)) {
			hit = r
			s.commitTriggers = append(s.commitTriggers[:i], s.commitTriggers[i+1:]...)
			break
		}
	}
	if hit == nil || x.conn.txn == nil {
		return
	}
	for x.conn.txn != nil {
		x.commitTxn(true)
	}
	if hit.replace {
		x.beginTxn("user_transaction", true)
	}
}

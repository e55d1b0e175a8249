package standin

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/engine"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/standin/xevents"
	"github.com/queryreplay/queryreplay/internal/tds"
)

// execCtx carries one request (batch or RPC) through execution.
type execCtx struct {
	ctx       context.Context
	srv       *Server
	conn      *connState
	w         tds.ResultWriter
	sql       string
	params    map[string]any
	ec        *xevents.EventCtx
	stats     batchStats
	stmtStart time.Time
	stmtText  string // the statement being executed (scenarios match on it)
	inSets    map[*sqlfront.InExpr]*engine.InSet
	lastPlan  string
	// schemaOnly makes table-valued functions return their columns only
	schemaOnly bool
	subplans   map[*sqlfront.SelectStmt]iter // subqueries evaluated outside a plan
	subRun     *runCtx
	upd        *updateScan // the UPDATE/DELETE search running (ulocks.go)
	// nest, module, modText: the procedure (or sp_executesql text) being
	// run, and how deep (procs.go)
	nest    int
	module  *procedure
	modText string
	// stmtLocks counts the statement's row and page locks per HoBT for
	// lock escalation (escalation.go).
	stmtLocks map[int64]*stmtLockCount
	// frames is the T-SQL call stack of the tsql_stack action (tsqlstack.go)
	frames []tsqlFrame
}

type batchStats struct {
	logicalReads, physicalReads, writes, rows int64
}

// Batch implements tds.SessionHandler.
func (c *connState) Batch(ctx context.Context, b *tds.Batch, w tds.ResultWriter) error {
	if b.ResetConnection {
		c.reset()
	}
	return c.run(ctx, b.SQL, nil, w, false)
}

// RPC implements tds.SessionHandler: sp_executesql
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-stored-procedures/sp-executesql-transact-sql)
// runs its statement with the parameters bound as variables; any other
// procedure is Msg 2812.
func (c *connState) RPC(ctx context.Context, call *tds.RPCCall, w tds.ResultWriter) error {
	if call.ResetConnection {
		c.reset()
	}
	return c.rpc(ctx, call, w) // prepared.go
}

func normalizeParam(v any) any {
	switch x := v.(type) {
	case int64, float64, string, []byte, bool, nil, time.Time:
		return x
	case tds.Decimal:
		f, _ := strconv.ParseFloat(x.String(), 64)
		return f
	case tds.UUID:
		return x.String()
	}
	return fmt.Sprint(v)
}

// Transaction implements tds.SessionHandler (TM requests from BeginTx,
// Commit and Rollback).
func (c *connState) Transaction(ctx context.Context, req *tds.TransactionRequest, w tds.ResultWriter) error {
	s := c.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	s.useClock(c)
	x := &execCtx{ctx: ctx, srv: s, conn: c, w: w, ec: c.eventCtx()}
	switch req.Kind {
	case tds.TxBegin:
		x.beginTxn(req.Name, false)
	case tds.TxCommit:
		if c.txn == nil {
			return toTDS(engine.ErrNoBeginForCommit())
		}
		x.commitTxn(false)
		if req.BeginNew {
			x.beginTxn(req.NewName, false)
		}
	case tds.TxRollback:
		if c.txn == nil {
			return toTDS(engine.ErrNoBeginForRollback())
		}
		if req.Name != "" && !strings.EqualFold(req.Name, c.txn.name) {
			// a rollback to a savepoint: the transaction stays open
			if err := x.rollbackToSavepoint(req.Name); err != nil {
				return toTDS(err)
			}
			return nil
		}
		x.rollbackAll()
		if req.BeginNew {
			x.beginTxn(req.NewName, false)
		}
	case tds.TxSave:
		if err := x.saveTxn(req.Name); err != nil {
			return toTDS(err)
		}
	default:
		return toTDS(sqlfront.ErrUnsupported(req.Kind.String()))
	}
	return nil
}

func (c *connState) reset() {
	c.srv.mu.Lock()
	defer c.srv.mu.Unlock()
	c.srv.useClock(c)
	if c.txn != nil {
		x := &execCtx{srv: c.srv, conn: c}
		x.rollbackAll()
	}
	c.vars = map[string]any{}
	c.nocount, c.statsXML, c.xactAbort = false, false, false
	c.flags = nil
	c.modes = sessionModes{}
	c.db = c.loginDB
}

// abortsBatch tells compile-time errors (syntax, name resolution), which
// end the whole batch, from run-time statement errors (constraint
// violations, conversions, divide by zero, DDL refusals), after which SQL
// Server goes on with the next statement.
func abortsBatch(e *sqlfront.SQLError) bool {
	switch e.Number {
	case 1205, 102, 103, 105, 113, 137, 147, 156, 174, 195, 207, 208, 209, 216, 263, 911, 1014, 8120, 8158, 10709, 2715,
		701, 4104, 4108, 4112, 4113, 8121, 8155, 1011, 205, 252, 240, 246, 239, 116, 130, 144, 145, 1033, 1087, 1062, 10741, 8110, 2705, 1038, 155, 4194, 10756, 10752, 10759, 310, 10713, 10711:
		return true
	}
	return e.Class >= 20
}

func toTDS(e *sqlfront.SQLError) *tds.Error {
	return &tds.Error{Number: e.Number, Severity: e.Class, State: e.State, Line: e.Line, Message: e.Message, Server: serverName}
}

// run executes a batch: parse everything first (a syntax error runs
// nothing, as in SQL Server), then each statement in order.
func (c *connState) run(ctx context.Context, sql string, params map[string]any, w tds.ResultWriter, rpc bool) error {
	s := c.srv
	if c.isKilled() {
		return tds.ErrDropConnection
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() { c.live = nil }() // no query runs once the batch is over (queryprofiles.go)
	s.useClock(c)
	if c.killed {
		// KILLed between the check above and here: it must never run
		return tds.ErrDropConnection
	}

	c.batches++
	c.lastBatch = sql // sys.dm_exec_input_buffer (requests.go)
	x := &execCtx{ctx: ctx, srv: s, conn: c, w: w, sql: sql, params: params}
	defer func() {
		c.reads += x.stats.logicalReads
		c.writes += x.stats.writes
	}()
	x.ec = c.eventCtx()
	x.ec.SQLText = sql
	start := s.now()
	s.dispatchDue()
	startEvent := "sql_batch_starting"
	if rpc {
		startEvent = "rpc_starting"
	}
	if s.anySessionRunning() {
		if rpc {
			s.emit(x.ec, &xevents.EventData{Name: startEvent, Pkg: "sqlserver", Time: start, Fields: []xevents.Field{xevents.FStr("object_name", "sp_executesql"), xevents.FStr("statement", sql), xevents.Field{Name: "data_stream", Typ: "binary_data", Pkg: "package0"}}})
		} else {
			s.emit(x.ec, &xevents.EventData{Name: startEvent, Pkg: "sqlserver", Time: start, Fields: []xevents.Field{xevents.FStr("batch_text", sql)}})
		}
	}
	stmts, spans, perr := sqlfront.ParseBatchSpans(sql)
	x.pushFrame(batchHandle(sql))
	var runErr, stmtErr *sqlfront.SQLError
	if perr != nil {
		runErr = perr
	} else {
		for i, st := range stmts {
			if err := ctx.Err(); err != nil {
				c.attention(start)
				return err
			}
			x.stmtText = sql[spans[i].Start:spans[i].End]
			x.stmtLocks = nil // escalation counts per statement
			x.statementEvent("sql_statement_starting", spans[i], nil)
			before := x.stats
			err := x.exec(st)
			if _, ok := err.(returnSignal); ok { // RETURN ends the batch (procs.go)
				x.statementEvent("sql_statement_completed", spans[i], &before)
				break
			}
			var se *sqlfront.SQLError
			if c.killed {
				return tds.ErrDropConnection // KILLed while it ran or waited
			}
			if err != nil && !errors.As(err, &se) || se != nil && se.Number == 0 {
				// cancelled (ATTENTION) while running or waiting for a lock
				if ctx.Err() != nil {
					c.attention(start)
					return ctx.Err()
				}
				return err
			}
			if se != nil && se.Number == 1205 && c.txn != nil {
				// the deadlock victim's transaction is rolled back
				x.rollbackAll()
				if err := w.RollbackTransaction(); err != nil {
					return err
				}
			}
			x.statementEvent("sql_statement_completed", spans[i], &before)
			if se != nil {
				se.Line = int32(spans[i].Line)
				if abortsBatch(se) || c.xactAbort {
					runErr = se
					break
				}
				// a statement-level error: report it and go on with the
				// next statement, as SQL Server does
				x.emitError(se)
				if err := w.Error(toTDS(se)); err != nil {
					return err
				}
				if err := w.Done(tds.Done{Command: tds.CmdNone, RowCount: tds.NoCount}); err != nil {
					return err
				}
				stmtErr = se
			}
		}
	}

	x.popFrame()          // the batch's completion is on no statement
	x.fireCommitTrigger() // safety.go: a trigger that commits, set up by Faults.EndTransactionIn
	if runErr != nil {
		x.emitError(runErr)
		if c.xactAbort && c.txn != nil {
			x.rollbackAll()
			_ = w.RollbackTransaction()
		}
	}
	if s.anySessionRunning() {
		end := s.advance(40 * time.Microsecond)
		result := "OK"
		if runErr != nil || stmtErr != nil {
			result = "Error"
		}
		dur := end.Sub(start).Microseconds()
		x.ec.TxnID = 0
		if c.txn != nil {
			x.ec.TxnID = c.txn.id
		}
		fields := []xevents.Field{xevents.FUint("cpu_time", "uint64", dur*7/10), xevents.FUint("duration", "uint64", dur),
			xevents.FUint("physical_reads", "uint64", x.stats.physicalReads), xevents.FUint("logical_reads", "uint64", x.stats.logicalReads),
			xevents.FUint("writes", "uint64", x.stats.writes), xevents.FUint("row_count", "uint64", x.stats.rows),
			xevents.FMap("result", "statement_result", "sqlserver", result)}
		if rpc {
			fields = append(fields, xevents.FUint("connection_reset_option", "uint16", 0), xevents.FStr("object_name", "sp_executesql"), xevents.FStr("statement", sql),
				xevents.Field{Name: "data_stream", Typ: "binary_data", Pkg: "package0"}, xevents.Field{Name: "output_parameters", Typ: "binary_data", Pkg: "package0"})
			s.emit(x.ec, &xevents.EventData{Name: "rpc_completed", Pkg: "sqlserver", Time: end, Fields: fields})
		} else {
			fields = append(fields, xevents.FStr("batch_text", sql))
			s.emit(x.ec, &xevents.EventData{Name: "sql_batch_completed", Pkg: "sqlserver", Time: end, Fields: fields})
		}
	}
	if runErr != nil {
		return toTDS(runErr)
	}
	return nil
}

// statementEvent emits sql_statement_starting/completed (fields as in the
// real 2018 event XML, docs/design/event-fields.md; offsets in bytes of the UTF-16
// batch text).
func (x *execCtx) statementEvent(name string, sp sqlfront.StmtSpan, before *batchStats) {
	s := x.srv
	if !s.anySessionRunning() {
		return
	}
	text := x.sql[sp.Start:sp.End]
	off := int64(2 * len([]rune(x.sql[:sp.Start])))
	offEnd := off + int64(2*len([]rune(text))) - 2
	ts := s.advance(3 * time.Microsecond)
	if before == nil {
		x.atStatement(sp.Line, off, offEnd, ts)
	}
	var fields []xevents.Field
	if before != nil {
		dur := ts.Sub(x.statementBegan()).Microseconds()
		rows := x.stats.rows - before.rows // rows returned or affected (finishDML)
		fields = []xevents.Field{xevents.FUint("duration", "int64", dur), xevents.FUint("cpu_time", "uint64", dur*7/10),
			xevents.FUint("physical_reads", "uint64", x.stats.physicalReads-before.physicalReads), xevents.FUint("logical_reads", "uint64", x.stats.logicalReads-before.logicalReads),
			xevents.FUint("writes", "uint64", x.stats.writes-before.writes), xevents.FUint("row_count", "uint64", rows), xevents.FUint("last_row_count", "uint64", rows)}
	} else {
		x.stmtStart = ts
	}
	fields = append(fields, xevents.FUint("line_number", "int32", int64(sp.Line)), xevents.FUint("offset", "int32", off), xevents.FUint("offset_end", "int32", offEnd), xevents.FStr("statement", text))
	if before != nil {
		fields = append(fields, xevents.Field{Name: "parameterized_plan_handle", Typ: "binary_data", Pkg: "package0"})
	}
	s.emit(x.ec, &xevents.EventData{Name: name, Pkg: "sqlserver", Time: ts, Fields: fields})
}

// attention fires the attention event for a request the client cancelled
// (caller holds the server lock).
func (c *connState) attention(since time.Time) {
	s := c.srv
	if !s.anySessionRunning() {
		return
	}
	now := s.now()
	s.emit(c.eventCtx(), &xevents.EventData{Name: "attention", Pkg: "sqlserver", Time: s.advance(5 * time.Microsecond), Fields: []xevents.Field{
		xevents.FUint("duration", "uint64", now.Sub(since).Microseconds()), xevents.FUint("request_id", "uint32", 0)}})
}

func (x *execCtx) emitError(e *sqlfront.SQLError) {
	if !x.srv.anySessionRunning() {
		return
	}
	x.srv.emit(x.ec, &xevents.EventData{Name: "error_reported", Pkg: "sqlserver", Time: x.srv.advance(5 * time.Microsecond), Fields: []xevents.Field{
		xevents.FUint("error_number", "int32", int64(e.Number)), xevents.FUint("severity", "int32", int64(e.Class)), xevents.FUint("state", "int32", int64(e.State)),
		xevents.FBool("user_defined", false), xevents.FMap("category", "error_category", "sqlserver", "SERVER"),
		{Name: "destination", Typ: "error_destination", Pkg: "sqlserver", Value: "0x00000002", Text: "USER"},
		xevents.FBool("is_intercepted", false), xevents.FStr("message", e.Message)}})
}

// done ends a statement with its row count (respecting SET NOCOUNT).
func (x *execCtx) done(cmd tds.Command, n int64) error {
	x.conn.rowcount = n
	if x.conn.nocount || n < 0 {
		return x.w.Done(tds.Done{Command: cmd, RowCount: tds.NoCount})
	}
	return x.w.Done(tds.Done{Command: cmd, RowCount: n})
}

func (x *execCtx) info(num int32, class uint8, msg string) error {
	return x.w.Info(&tds.Error{Number: num, Severity: class, State: 1, Line: 1, Message: msg, Server: serverName})
}

// sendRelation writes a result set.
func (x *execCtx) sendRelation(rel *engine.Relation) error {
	rel = x.limitRows(rel)
	cols := make([]tds.Column, len(rel.Cols))
	for i, c := range rel.Cols {
		cols[i] = tds.Column{Name: c.Name, TypeInfo: tdsType(c.Typ)}
	}
	if err := x.w.Columns(cols...); err != nil {
		return err
	}
	for _, r := range rel.Rows {
		vals := make([]any, len(r))
		for i, v := range r {
			vals[i] = wireValue(v, rel.Cols[i].Typ)
		}
		if err := x.w.Row(vals...); err != nil {
			return err
		}
	}
	x.stats.rows += int64(len(rel.Rows))
	return x.done(tds.CmdSelect, int64(len(rel.Rows)))
}

func tdsType(t sqlfront.SQLType) tds.TypeInfo {
	switch t.Kind {
	case sqlfront.TypeInt:
		return tds.TypeInfo{Type: tds.TypeInt}
	case sqlfront.TypeBigInt:
		return tds.TypeInfo{Type: tds.TypeBigInt}
	case sqlfront.TypeSmallInt:
		return tds.TypeInfo{Type: tds.TypeSmallInt}
	case sqlfront.TypeTinyInt:
		return tds.TypeInfo{Type: tds.TypeTinyInt}
	case sqlfront.TypeBit:
		return tds.TypeInfo{Type: tds.TypeBit}
	case sqlfront.TypeFloat:
		return tds.TypeInfo{Type: tds.TypeFloat}
	case sqlfront.TypeNVarChar:
		if t.Size == 0 || t.Size > 4000 {
			return tds.TypeInfo{Type: tds.TypeNVarChar, Length: tds.Max}
		}
		return tds.TypeInfo{Type: tds.TypeNVarChar, Length: t.Size}
	case sqlfront.TypeVarBinary:
		if t.Size == 0 || t.Size > 8000 {
			return tds.TypeInfo{Type: tds.TypeVarBinary, Length: tds.Max}
		}
		return tds.TypeInfo{Type: tds.TypeVarBinary, Length: t.Size}
	case sqlfront.TypeDateTime2:
		return tds.TypeInfo{Type: tds.TypeDateTime2, Scale: 7}
	case sqlfront.TypeUniqueIdentifier:
		return tds.TypeInfo{Type: tds.TypeUniqueIdentifier}
	case sqlfront.TypeXML:
		return tds.TypeInfo{Type: tds.TypeXML}
	case sqlfront.TypeDate:
		return tds.TypeInfo{Type: tds.TypeDate}
	case sqlfront.TypeDecimal:
		return tds.TypeInfo{Type: tds.TypeDecimal, Precision: uint8(max(1, min(t.Size, 38))), Scale: uint8(min(t.Scale, 38))}
	}
	return tds.TypeInfo{Type: tds.TypeNVarChar, Length: tds.Max}
}

// wireValue coerces a value to its column's declared type.
func wireValue(v any, t sqlfront.SQLType) any {
	if v == nil {
		return nil
	}
	cv, err := engine.ConvertValue(v, t)
	if err != nil {
		return engine.ValueString(v)
	}
	if t.Kind == sqlfront.TypeNVarChar || t.Kind == sqlfront.TypeXML {
		if b, ok := v.([]byte); ok {
			return string(b)
		}
	}
	if t.Kind == sqlfront.TypeUniqueIdentifier {
		return engine.ValueString(v)
	}
	return cv
}

func (x *execCtx) variable(name string) (any, *sqlfront.SQLError) {
	c := x.conn
	switch strings.ToUpper(name) {
	case "@@SPID":
		return int64(c.spid), nil
	case "@@VERSION":
		return x.srv.persona.VersionString, nil
	case "@@SERVERNAME":
		return serverName, nil
	case "@@SERVICENAME":
		return "MSSQLSERVER", nil
	case "@@TRANCOUNT":
		if c.txn == nil {
			return int64(0), nil
		}
		return int64(c.txn.depth), nil
	case "@@ROWCOUNT":
		return c.rowcount, nil
	case "@@ERROR":
		return int64(0), nil
	case "@@LANGUAGE":
		return "us_english", nil
	case "@@MAX_PRECISION":
		return int64(38), nil
	case "@@LOCK_TIMEOUT":
		return c.lockTimeoutMs, nil
	case "@@OPTIONS":
		return int64(5496), nil
	}
	if v, ok := x.params[strings.ToLower(name)]; ok {
		return v, nil
	}
	if v, ok := c.vars[strings.ToLower(name)]; ok {
		return v, nil
	}
	return nil, engine.ErrMustDeclare(name)
}

// exec executes one statement; the longer kinds have their own exec methods.
func (x *execCtx) exec(st sqlfront.Stmt) error {
	if done, err := x.execUnderModes(st); done {
		return err
	}
	c := x.conn
	switch s := st.(type) {
	case *sqlfront.SelectStmt:
		return x.execSelect(s)
	case *sqlfront.InsertStmt:
		return x.execInsert(s)
	case *sqlfront.UpdateStmt:
		return x.execUpdate(s)
	case *sqlfront.DeleteStmt:
		return x.execDelete(s)
	case *sqlfront.BlockStmt:
		return x.execBlock(s)
	case *sqlfront.IfStmt:
		return x.execIf(s)
	case *sqlfront.BeginTranStmt:
		if len(s.Name) > 32 {
			return sqlfront.NewError(103, 15, "The identifier that starts with '%s' is too long. Maximum length is 32.", s.Name[:32])
		}
		x.beginTxn(s.Name, true)
		return x.done(tds.CmdNone, tds.NoCount)
	case *sqlfront.SaveTranStmt:
		if err := x.saveTxn(s.Name); err != nil {
			return err
		}
		return x.done(tds.CmdNone, tds.NoCount)
	case *sqlfront.CommitStmt:
		if c.txn == nil {
			return engine.ErrNoBeginForCommit()
		}
		x.commitTxn(true)
		return x.done(tds.CmdNone, tds.NoCount)
	case *sqlfront.RollbackStmt:
		return x.execRollback(s)
	case *sqlfront.SetOptionStmt:
		return x.execSetOptions(s)
	case *sqlfront.DeclareStmt:
		return x.execDeclare(s)
	case *sqlfront.SetVarStmt:
		return x.execSetVar(s)
	case *sqlfront.CheckpointStmt:
		x.checkpoint()
		return x.done(tds.CmdNone, tds.NoCount)
	case *sqlfront.DBCCStmt:
		return x.execDBCC(s)
	case *sqlfront.UseStmt:
		return x.execUse(s)
	case *sqlfront.WaitforStmt:
		return x.execWaitfor(s)
	case *sqlfront.ExecStmt:
		return x.execProcCall(s) // procs.go
	case *sqlfront.CreateProcStmt:
		return x.execCreateProc(s)
	case *sqlfront.DropProcStmt:
		return x.execDropProc(s)
	case *sqlfront.ReturnStmt:
		return x.execReturn(s)
	case *sqlfront.WhileStmt:
		return x.execWhile(s)
	case *sqlfront.LoopControlStmt:
		return loopControl{s.Break}
	case *sqlfront.MergeStmt:
		return x.execMerge(s)
	case *sqlfront.CreateTableStmt:
		return x.execCreateTable(s)
	case *sqlfront.DropTableStmt:
		return x.execDropTable(s)
	case *sqlfront.TruncateStmt:
		return x.execTruncate(s)
	case *sqlfront.KillStmt:
		return x.execKill(s)
	case *sqlfront.BrokerStmt:
		return x.execBroker(s)
	case *sqlfront.PrintStmt:
		return x.execPrint(s)
	case *sqlfront.CreateEventSessionStmt:
		return x.createSession(s)
	case *sqlfront.AlterEventSessionStmt:
		return x.alterSession(s)
	case *sqlfront.DropEventSessionStmt:
		return x.dropSession(s)
	}
	return sqlfront.ErrUnsupported(fmt.Sprintf("%T", st))
}

// execBlock runs a BEGIN … END block's statements in order, stopping at
// the first error.
func (x *execCtx) execBlock(s *sqlfront.BlockStmt) error {
	for _, inner := range s.Stmts {
		if err := x.exec(inner); err != nil {
			return err
		}
	}
	return nil
}

// execIf runs IF … ELSE: UNKNOWN takes the ELSE branch, as FALSE does.
func (x *execCtx) execIf(s *sqlfront.IfStmt) error {
	env := &engine.EvalEnv{X: x}
	v, err := env.Eval(s.Cond)
	if err != nil {
		return err
	}
	if b, _ := engine.Truth(v); b {
		return x.exec(s.Then)
	} else if s.Else != nil {
		return x.exec(s.Else)
	}
	return nil
}

// execRollback rolls back to a named savepoint, or the whole transaction.
func (x *execCtx) execRollback(s *sqlfront.RollbackStmt) error {
	c := x.conn
	if c.txn == nil {
		return engine.ErrNoBeginForRollback()
	}
	if s.Name != "" && !strings.EqualFold(s.Name, c.txn.name) {
		if err := x.rollbackToSavepoint(s.Name); err != nil {
			return err
		}
		return x.done(tds.CmdNone, tds.NoCount)
	}
	x.rollbackAll()
	if err := x.w.RollbackTransaction(); err != nil {
		return err
	}
	return x.done(tds.CmdNone, tds.NoCount)
}

// execSetOptions applies SET session options; options the stand-in cannot
// honour when ON are an error rather than silently ignored.
func (x *execCtx) execSetOptions(s *sqlfront.SetOptionStmt) error {
	c := x.conn
	for _, o := range s.Options {
		if handled, err := x.setSessionMode(o, s.Value); handled {
			if err != nil {
				return err
			}
			continue
		}
		switch o {
		case "LOCK_TIMEOUT":
			n, err := strconv.ParseInt(s.Value, 10, 64)
			if err != nil || n < -1 {
				return sqlfront.ErrSyntaxNear(s.Value)
			}
			c.lockTimeoutMs = n
			continue
		case "TRANSACTION ISOLATION LEVEL":
			c.readUncommitted = s.Value == "READ UNCOMMITTED"
			continue
		case "NOCOUNT":
			c.nocount = s.Value == "ON"
		case "STATISTICS XML":
			c.statsXML = s.Value == "ON"
		case "XACT_ABORT":
			c.xactAbort = s.Value == "ON"
		case "ANSI_NULLS", "ANSI_PADDING", "ANSI_WARNINGS", "ARITHABORT", "CONCAT_NULL_YIELDS_NULL", "QUOTED_IDENTIFIER",
			"NUMERIC_ROUNDABORT", "ANSI_NULL_DFLT_ON", "ANSI_DEFAULTS", "CURSOR_CLOSE_ON_COMMIT", "IMPLICIT_TRANSACTIONS",
			"DEADLOCK_PRIORITY", "DATEFIRST", "DATEFORMAT",
			"LANGUAGE", "STATISTICS IO", "STATISTICS TIME", "STATISTICS PROFILE", "SHOWPLAN_XML":
			if o == "SHOWPLAN_XML" || o == "STATISTICS PROFILE" || o == "IMPLICIT_TRANSACTIONS" || o == "ANSI_DEFAULTS" {
				if s.Value == "ON" {
					return sqlfront.ErrUnsupported("SET " + o)
				}
			}
		default:
			return sqlfront.ErrSyntaxNear(o)
		}
	}
	return nil
}

// execDeclare declares variables and table variables, with their initial
// Values converted to the declared type.
func (x *execCtx) execDeclare(s *sqlfront.DeclareStmt) error {
	c := x.conn
	for _, d := range s.Vars {
		if d.Table != nil {
			if err := x.declareTable(d.Name, d.Table); err != nil {
				return err
			}
			continue
		}
		c.sqlState().varTypes[strings.ToLower(d.Name)] = d.Type
		var v any
		if d.Init != nil {
			env := &engine.EvalEnv{X: x}
			iv, err := env.Eval(d.Init)
			if err != nil {
				return err
			}
			if v, err = engine.ConvertValue(iv, d.Type); err != nil {
				return err
			}
		}
		c.vars[strings.ToLower(d.Name)] = v
	}
	return nil
}

// execSetVar assigns a variable or an RPC parameter.
func (x *execCtx) execSetVar(s *sqlfront.SetVarStmt) error {
	c := x.conn
	if _, ok := x.params[strings.ToLower(s.Var)]; ok {
		// an RPC parameter (sp_executesql OUTPUT parameters are set so)
		env := &engine.EvalEnv{X: x}
		v, err := env.Eval(s.Expr)
		if err != nil {
			return err
		}
		x.params[strings.ToLower(s.Var)] = v
		return nil
	}
	if _, ok := c.vars[strings.ToLower(s.Var)]; !ok {
		return engine.ErrMustDeclare(s.Var)
	}
	env := &engine.EvalEnv{X: x}
	v, err := env.Eval(s.Expr)
	if err != nil {
		return err
	}
	if t, ok := x.varType(s.Var); ok {
		if v, err = engine.ConvertValue(v, t); err != nil {
			return err
		}
	}
	c.vars[strings.ToLower(s.Var)] = v
	return nil
}

// execUse switches the connection's database.
func (x *execCtx) execUse(s *sqlfront.UseStmt) error {
	c := x.conn
	db := x.srv.dbByName(s.DB)
	if db == nil {
		return engine.ErrDatabaseMissing(s.DB)
	}
	if err := x.srv.checkUse(c.db.name, db.name); err != nil {
		return err
	}
	c.db = db
	x.ec.DBID, x.ec.DBName = db.id, db.name
	return x.w.SetDatabase(db.name)
}

// execWaitfor sleeps for WAITFOR DELAY without holding the server lock,
// ending early when the batch is cancelled or the session is killed.
func (x *execCtx) execWaitfor(s *sqlfront.WaitforStmt) error {
	d, err := parseDelay(s.Delay)
	if err != nil {
		return err
	}
	x.srv.mu.Unlock()
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-x.ctx.Done():
		t.Stop()
		x.srv.mu.Lock()
		x.srv.useClock(x.conn)
		return x.ctx.Err()
	case <-x.conn.killCh:
		t.Stop()
		x.srv.mu.Lock()
		x.srv.useClock(x.conn)
		return tds.ErrDropConnection // the caller sees c.killed and drops the connection
	}
	x.srv.mu.Lock()
	x.srv.useClock(x.conn)
	x.srv.now() // the delay took real time
	return nil
}

// execPrint sends PRINT's text as an informational message.
func (x *execCtx) execPrint(s *sqlfront.PrintStmt) error {
	env := &engine.EvalEnv{X: x}
	v, err := env.Eval(s.Expr)
	if err != nil {
		return err
	}
	return x.info(0, 0, engine.ValueString(v))
}

func parseDelay(s string) (time.Duration, *sqlfront.SQLError) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, sqlfront.NewError(148, 15, "Incorrect time syntax in time string '%s' used with WAITFOR.", s)
	}
	var total time.Duration
	units := []time.Duration{time.Hour, time.Minute}
	for i := 0; i < 2; i++ {
		n, err := strconv.Atoi(parts[i])
		if err != nil {
			return 0, sqlfront.NewError(148, 15, "Incorrect time syntax in time string '%s' used with WAITFOR.", s)
		}
		total += time.Duration(n) * units[i]
	}
	if len(parts) == 3 {
		f, err := strconv.ParseFloat(parts[2], 64)
		if err != nil {
			return 0, sqlfront.NewError(148, 15, "Incorrect time syntax in time string '%s' used with WAITFOR.", s)
		}
		total += time.Duration(f * float64(time.Second))
	}
	return total, nil
}

// execDBCC supports DROPCLEANBUFFERS, TRACEON, TRACEOFF and TRACESTATUS, as
// documented at https://learn.microsoft.com/en-us/sql/t-sql/database-console-commands/dbcc-dropcleanbuffers-transact-sql
// and https://learn.microsoft.com/en-us/sql/t-sql/database-console-commands/dbcc-traceon-transact-sql
func (x *execCtx) execDBCC(s *sqlfront.DBCCStmt) error {
	c := x.conn
	quiet := false
	for _, w := range s.With {
		if w != "NO_INFOMSGS" {
			return sqlfront.ErrSyntaxNear(w)
		}
		quiet = true
	}
	if !c.sysadmin {
		return sqlfront.NewError(2571, 14, "User '%s' does not have permission to run DBCC %s.", c.user, strings.ToLower(s.Command))
	}
	switch s.Command {
	case "DROPCLEANBUFFERS":
		for p, dirty := range x.srv.cached {
			if !dirty {
				delete(x.srv.cached, p)
			}
		}
	case "TRACEON", "TRACEOFF":
		global := false
		var flagsSet []int
		env := &engine.EvalEnv{X: x}
		for _, a := range s.Args {
			v, err := env.Eval(a)
			if err != nil {
				return err
			}
			n, ok := v.(int64)
			if !ok {
				return sqlfront.NewError(2520, 16, "Could not find database '%s'. The database either does not exist, or was dropped before a statement tried to use it.", engine.ValueString(v))
			}
			if n == -1 {
				global = true
				continue
			}
			flagsSet = append(flagsSet, int(n))
		}
		if len(flagsSet) == 0 {
			return sqlfront.ErrSyntaxNear(")")
		}
		for _, f := range flagsSet {
			on := s.Command == "TRACEON"
			if global {
				if on {
					x.srv.globalFlags[f] = true
				} else {
					delete(x.srv.globalFlags, f)
				}
			} else {
				if c.flags == nil {
					c.flags = map[int]bool{}
				}
				if on {
					c.flags[f] = true
				} else {
					delete(c.flags, f)
				}
			}
		}
	case "TRACESTATUS":
		rel := &engine.Relation{Cols: []engine.RelCol{{Name: "TraceFlag", Typ: engine.TSmallInt}, {Name: "Status", Typ: engine.TSmallInt}, {Name: "Global", Typ: engine.TSmallInt}, {Name: "Session", Typ: engine.TSmallInt}}}
		seen := map[int]bool{}
		for f := range x.srv.globalFlags {
			seen[f] = true
		}
		for f := range c.flags {
			seen[f] = true
		}
		for f := range seen {
			rel.Rows = append(rel.Rows, []any{int64(f), int64(1), engine.BoolInt(x.srv.globalFlags[f]), engine.BoolInt(c.flags[f])})
			rel.Srcs = append(rel.Srcs, nil)
		}
		if err := x.sendRelation(rel); err != nil {
			return err
		}
	default:
		return sqlfront.NewError(2526, 16, "Incorrect DBCC statement. Check the documentation for the correct DBCC syntax and options.")
	}
	if !quiet {
		if err := x.info(2528, 10, "DBCC execution completed. If DBCC printed error messages, contact your system administrator."); err != nil {
			return err
		}
	}
	return x.done(tds.CmdNone, tds.NoCount)
}

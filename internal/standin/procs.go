package standin

import (
	"fmt"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/engine"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/standin/xevents"
	"github.com/queryreplay/queryreplay/internal/tds"
)

// Stored procedures: CREATE/ALTER/DROP PROCEDURE, EXEC of a user procedure
// (named, positional, DEFAULT and OUTPUT arguments, the return status,
// nesting) and EXEC sp_executesql inside a batch. Each statement of a
// procedure runs as a statement of its own: its own actual plan
// (query_post_execution_showplan fires once per statement executed, with
// the module's object id and nest level:
// https://learn.microsoft.com/en-us/sql/relational-databases/performance/display-an-actual-execution-plan)
// and its own sp_statement_starting/completed events, whose offsets are in
// the module's text
// (https://learn.microsoft.com/en-us/sql/relational-databases/extended-events/quick-start-extended-events-in-sql-server).

// procedure is one stored procedure of a database.
type procedure struct {
	objectID   int64
	schema     string
	name       string
	definition string // the CREATE statement's text, as sys.sql_modules keeps it
	encrypted  bool   // WITH ENCRYPTION: definition reads NULL
	created    time.Time
	modified   time.Time
}

func (p *procedure) fullName() string { return p.schema + "." + p.name }

// maxNesting is SQL Server's limit on nested procedure calls (Msg 217,
// https://learn.microsoft.com/en-us/sql/t-sql/functions/nestlevel-transact-sql).
const maxNesting = 32

// procKey is a procedure's key in database.procs.
func procKey(schema, name string) string { return strings.ToLower(schema + "." + name) }

// procName splits a one- to three-part name into its database, schema
// (dbo by default) and name.
func (x *execCtx) procName(parts []string) (*engine.Database, string, string, *sqlfront.SQLError) {
	db, schema := x.conn.db, "dbo"
	switch len(parts) {
	case 3:
		if parts[0] != "" {
			if db = x.srv.dbByName(parts[0]); db == nil {
				return nil, "", "", engine.ErrDatabaseMissing(parts[0])
			}
		}
		fallthrough
	case 2:
		if s := parts[len(parts)-2]; s != "" {
			schema = s
		}
	case 1:
	default:
		return nil, "", "", engine.ErrProcNotFound(strings.Join(parts, "."))
	}
	return db, schema, parts[len(parts)-1], nil
}

// lookupProc finds a procedure by its parts.
func (x *execCtx) lookupProc(parts []string) (*procedure, *sqlfront.SQLError) {
	db, schema, name, err := x.procName(parts)
	if err != nil {
		return nil, err
	}
	return procsOf(db)[procKey(schema, name)], nil
}

// procByID finds a procedure of db by object id.
func procByID(db *engine.Database, id int64) *procedure {
	for _, p := range procsOf(db) {
		if p.objectID == id {
			return p
		}
	}
	return nil
}

// execCreateProc creates or alters a procedure. Only dbo holds procedures
// in the stand-in (Msg 2760 for another schema, as for a schema that does
// not exist).
func (x *execCtx) execCreateProc(s *sqlfront.CreateProcStmt) error {
	db, schema, name, err := x.procName(s.Name)
	if err != nil {
		return err
	}
	if !strings.EqualFold(schema, "dbo") {
		return sqlfront.NewError(2760, 16, "The specified schema name \"%s\" either does not exist or you do not have permission to use it.", schema)
	}
	key := procKey("dbo", name)
	old := procsOf(db)[key]
	now := x.srv.now()
	switch {
	case old != nil && !s.Alter && !s.OrAlter:
		return sqlfront.NewError(2714, 16, "There is already an object named '%s' in the database.", name)
	case old == nil && s.Alter:
		return sqlfront.NewError(208, 16, "Invalid object name '%s'.", strings.Join(s.Name, "."))
	case old == nil && db.Table("dbo", name) != nil:
		return sqlfront.NewError(2714, 16, "There is already an object named '%s' in the database.", name)
	}
	p := &procedure{schema: "dbo", name: name, definition: x.stmtText, encrypted: s.Encrypted, created: now, modified: now}
	if old != nil {
		p.objectID, p.created = old.objectID, old.created
	} else {
		eng := x.srv.engine()
		eng.nextObject += 16
		p.objectID = eng.nextObject
	}
	if procsOf(db) == nil {
		db.Procs = map[string]*procedure{}
	}
	procsOf(db)[key] = p
	return x.done(tds.CmdNone, tds.NoCount)
}

// execDropProc drops procedures (Msg 3701 for one that does not exist).
func (x *execCtx) execDropProc(s *sqlfront.DropProcStmt) error {
	for _, n := range s.Names {
		db, schema, name, err := x.procName(n)
		if err != nil {
			return err
		}
		key := procKey(schema, name)
		if procsOf(db)[key] == nil {
			if s.IfExists {
				continue
			}
			return sqlfront.NewError(3701, 11, "Cannot drop the procedure '%s', because it does not exist or you do not have permission.", strings.Join(n, "."))
		}
		delete(procsOf(db), key)
	}
	return x.done(tds.CmdNone, tds.NoCount)
}

// returnSignal carries RETURN from a statement up to its procedure (or the
// batch, which it ends).
type returnSignal struct{ status int64 }

func (returnSignal) Error() string { return "RETURN" }

func (x *execCtx) execReturn(s *sqlfront.ReturnStmt) error {
	var status int64
	if s.Value != nil {
		v, err := (&engine.EvalEnv{X: x}).Eval(s.Value)
		if err != nil {
			return err
		}
		n, cerr := engine.ConvertValue(v, engine.TInt)
		if cerr != nil {
			return cerr
		}
		if i, ok := n.(int64); ok {
			status = i
		}
	}
	return returnSignal{status}
}

// execProcCall runs EXEC: sp_executesql, or a user procedure.
func (x *execCtx) execProcCall(s *sqlfront.ExecStmt) error {
	last := strings.ToLower(s.Proc[len(s.Proc)-1])
	if last == "sp_executesql" && (len(s.Proc) == 1 || strings.EqualFold(s.Proc[len(s.Proc)-2], "sys")) {
		return x.execExecuteSQL(s)
	}
	p, err := x.lookupProc(s.Proc)
	if err != nil {
		return err
	}
	if p == nil {
		return engine.ErrProcNotFound(strings.Join(s.Proc, "."))
	}
	if x.nest >= maxNesting {
		return sqlfront.NewError(217, 16, "Maximum stored procedure, function, trigger, or view nesting level exceeded (limit %d).", maxNesting)
	}
	parsed, perr := parseProc(p.definition)
	if perr != nil {
		return perr
	}
	values, err := x.bindProcArgs(p, parsed, s)
	if err != nil {
		return err
	}
	status, outs, runErr := x.runModule(p, parsed, values)
	if runErr != nil {
		return runErr
	}
	return x.afterCall(s, parsed, outs, status)
}

// parseProc reads a stored definition back.
func parseProc(def string) (*sqlfront.CreateProcStmt, *sqlfront.SQLError) {
	stmts, _, err := sqlfront.ParseBatchSpans(def)
	if err != nil {
		return nil, err
	}
	if len(stmts) != 1 {
		return nil, sqlfront.ErrUnsupported("procedure definition")
	}
	cp, ok := stmts[0].(*sqlfront.CreateProcStmt)
	if !ok {
		return nil, sqlfront.ErrUnsupported("procedure definition")
	}
	return cp, nil
}

// bindProcArgs evaluates the arguments in the caller's scope and binds
// them by position, then by name; a parameter without a value takes its
// default (Msg 201 when it has none, Msg 8144/8145 for extra or unknown
// arguments: https://learn.microsoft.com/en-us/sql/t-sql/language-elements/execute-transact-sql).
func (x *execCtx) bindProcArgs(p *procedure, cp *sqlfront.CreateProcStmt, s *sqlfront.ExecStmt) (map[string]any, *sqlfront.SQLError) {
	values := map[string]any{}
	set := map[string]bool{}
	for i, a := range s.Named {
		name := a.Name
		if name == "" {
			if i >= len(cp.Params) {
				return nil, sqlfront.NewError(8144, 16, "Procedure or function %s has too many arguments specified.", p.name)
			}
			name = cp.Params[i].Name
		}
		k := strings.ToLower(name)
		found := false
		for _, prm := range cp.Params {
			if strings.EqualFold(prm.Name, name) {
				found = true
				if a.Value == nil {
					break // DEFAULT
				}
				v, err := (&engine.EvalEnv{X: x}).Eval(a.Value)
				if err != nil {
					return nil, err
				}
				if v, err = engine.ConvertValue(v, prm.Type); err != nil {
					return nil, err
				}
				values[k], set[k] = v, true
			}
		}
		if !found {
			return nil, sqlfront.NewError(8145, 16, "%s is not a parameter for procedure %s.", name, p.name)
		}
	}
	for _, prm := range cp.Params {
		k := strings.ToLower(prm.Name)
		if set[k] {
			continue
		}
		if prm.Default == nil {
			if prm.Output {
				values[k] = nil
				continue
			}
			return nil, sqlfront.NewError(201, 16, "Procedure or function '%s' expects parameter '%s', which was not supplied.", p.name, prm.Name)
		}
		v, err := (&engine.EvalEnv{X: x}).Eval(prm.Default)
		if err != nil {
			return nil, err
		}
		if v, err = engine.ConvertValue(v, prm.Type); err != nil {
			return nil, err
		}
		values[k] = v
	}
	return values, nil
}

// moduleFrame is what a running module changes in its execCtx, restored
// when it returns.
type moduleFrame struct {
	vars     map[string]any
	types    map[string]sqlfront.SQLType
	params   map[string]any
	stmtText string
	module   *procedure
	modText  string
}

// enterScope gives the module its own variables (its parameters), as a
// procedure or sp_executesql has.
func (x *execCtx) enterScope(vars map[string]any, types map[string]sqlfront.SQLType) moduleFrame {
	st := x.conn.sqlState()
	f := moduleFrame{vars: x.conn.vars, types: st.varTypes, params: x.params, stmtText: x.stmtText, module: x.module, modText: x.modText}
	x.conn.vars, st.varTypes, x.params = vars, types, nil
	x.nest++
	return f
}

func (x *execCtx) leaveScope(f moduleFrame) {
	x.conn.vars, x.conn.sqlState().varTypes, x.params = f.vars, f.types, f.params
	x.stmtText, x.module, x.modText = f.stmtText, f.module, f.modText
	x.nest--
}

// runModule runs a procedure's statements in its own scope and returns its
// status and its variables (for OUTPUT).
func (x *execCtx) runModule(p *procedure, cp *sqlfront.CreateProcStmt, values map[string]any) (int64, map[string]any, error) {
	types := map[string]sqlfront.SQLType{}
	for _, prm := range cp.Params {
		types[strings.ToLower(prm.Name)] = prm.Type
	}
	f := x.enterScope(values, types)
	vars := x.conn.vars
	defer x.leaveScope(f)
	x.module, x.modText = p, p.definition
	status, err := x.runStatements(cp.Body, cp.Spans, p.definition)
	return status, vars, err
}

// runStatements runs a module's statements, each with its own
// sp_statement events; RETURN ends them.
func (x *execCtx) runStatements(body []sqlfront.Stmt, spans []sqlfront.StmtSpan, text string) (int64, error) {
	if x.module != nil {
		x.pushFrame(moduleHandle(x.conn.db.ID, x.module.objectID))
	} else {
		x.pushFrame(batchHandle(text))
	}
	defer x.popFrame()
	for i, st := range body {
		x.stmtText = text[spans[i].Start:spans[i].End]
		x.moduleStatementEvent("sp_statement_starting", text, spans[i], nil)
		before := x.stats
		err := x.exec(st)
		x.moduleStatementEvent("sp_statement_completed", text, spans[i], &before)
		if rs, ok := err.(returnSignal); ok {
			return rs.status, nil
		}
		if err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// afterCall copies OUTPUT arguments and the return status to the caller's
// variables.
func (x *execCtx) afterCall(s *sqlfront.ExecStmt, cp *sqlfront.CreateProcStmt, outs map[string]any, status int64) error {
	for i, a := range s.Named {
		v, ok := a.Value.(*sqlfront.VarRef)
		if !a.Output || !ok {
			continue
		}
		name := a.Name
		if name == "" && i < len(cp.Params) {
			name = cp.Params[i].Name
		}
		if err := x.assignVar(v.Name, outs[strings.ToLower(name)]); err != nil {
			return err
		}
	}
	if s.Status != "" {
		if err := x.assignVar(s.Status, status); err != nil {
			return err
		}
	}
	return nil
}

// assignVar sets a declared variable of the current scope.
func (x *execCtx) assignVar(name string, v any) error {
	k := strings.ToLower(name)
	if _, ok := x.conn.vars[k]; !ok {
		return engine.ErrMustDeclare(name)
	}
	if t, ok := x.varType(name); ok {
		cv, err := engine.ConvertValue(v, t)
		if err != nil {
			return err
		}
		v = cv
	}
	x.conn.vars[k] = v
	return nil
}

// execExecuteSQL runs EXEC sp_executesql @stmt [, @params, values…] inside
// a batch: the statement in a scope of its own whose variables are the
// declared parameters, bound by position, then by name
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-stored-procedures/sp-executesql-transact-sql).
func (x *execCtx) execExecuteSQL(s *sqlfront.ExecStmt) error {
	if len(s.Named) == 0 || s.Named[0].Value == nil {
		return sqlfront.NewError(201, 16, "Procedure or function 'sp_executesql' expects parameter '@statement', which was not supplied.")
	}
	env := &engine.EvalEnv{X: x}
	sv, err := env.Eval(s.Named[0].Value)
	if err != nil {
		return err
	}
	stmt, _ := sv.(string)
	decls := ""
	if len(s.Named) > 1 && s.Named[1].Value != nil {
		dv, err := env.Eval(s.Named[1].Value)
		if err != nil {
			return err
		}
		decls, _ = dv.(string)
	}
	vars, types, berr := x.bindExecuteSQL(decls, s.Named[min(2, len(s.Named)):])
	if berr != nil {
		return berr
	}
	stmts, spans, perr := sqlfront.ParseBatchSpans(stmt)
	if perr != nil {
		return perr
	}
	if x.nest >= maxNesting {
		return sqlfront.NewError(217, 16, "Maximum stored procedure, function, trigger, or view nesting level exceeded (limit %d).", maxNesting)
	}
	f := x.enterScope(vars, types)
	defer x.leaveScope(f)
	x.module, x.modText = nil, stmt
	_, rerr := x.runStatements(stmts, spans, stmt)
	return rerr
}

// bindExecuteSQL declares sp_executesql's parameters (through DECLARE, so
// that their types read as the batch's do) and binds the values.
func (x *execCtx) bindExecuteSQL(decls string, args []sqlfront.ExecArg) (map[string]any, map[string]sqlfront.SQLType, error) {
	vars, types := map[string]any{}, map[string]sqlfront.SQLType{}
	if strings.TrimSpace(decls) == "" {
		if len(args) > 0 {
			return nil, nil, sqlfront.NewError(8144, 16, "Procedure or function sp_executesql has too many arguments specified.")
		}
		return vars, types, nil
	}
	list, perr := parseParamDecls(decls)
	if perr != nil {
		return nil, nil, perr
	}
	var b strings.Builder
	for i, d := range list {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(d.name + " " + d.typ)
	}
	stmts, _, perr := sqlfront.ParseBatchSpans("DECLARE " + b.String())
	if perr != nil {
		return nil, nil, perr
	}
	dec, ok := stmts[0].(*sqlfront.DeclareStmt)
	if !ok || len(stmts) != 1 {
		return nil, nil, sqlfront.ErrSyntaxNear(decls)
	}
	for _, v := range dec.Vars {
		types[strings.ToLower(v.Name)] = v.Type
		vars[strings.ToLower(v.Name)] = nil
	}
	for i, a := range args {
		name := strings.ToLower(a.Name)
		if name == "" {
			if i >= len(list) {
				return nil, nil, sqlfront.NewError(8144, 16, "Procedure or function sp_executesql has too many arguments specified.")
			}
			name = list[i].name
		}
		t, ok := types[name]
		if !ok {
			return nil, nil, sqlfront.NewError(8145, 16, "%s is not a parameter for procedure sp_executesql.", a.Name)
		}
		if a.Value == nil {
			continue
		}
		v, err := (&engine.EvalEnv{X: x}).Eval(a.Value)
		if err != nil {
			return nil, nil, err
		}
		if v, err = engine.ConvertValue(v, t); err != nil {
			return nil, nil, err
		}
		vars[name] = v
	}
	return vars, types, nil
}

// moduleStatementEvent emits sp_statement_starting/completed for a
// statement of a module: offsets in bytes of the module's UTF-16 text,
// its object id and nest level.
func (x *execCtx) moduleStatementEvent(name, text string, sp sqlfront.StmtSpan, before *batchStats) {
	s := x.srv
	if !s.anySessionRunning() {
		return
	}
	stmt := text[sp.Start:sp.End]
	off := int64(2 * len([]rune(text[:sp.Start])))
	offEnd := off + int64(2*len([]rune(stmt))) - 2
	ts := s.advance(3 * time.Microsecond)
	if before == nil {
		x.atStatement(sp.Line, off, offEnd, ts)
	}
	var objectID int64
	objectType, objectName := "ADHOC", ""
	if x.module != nil {
		objectID, objectType, objectName = x.module.objectID, "PROC", x.module.name
	}
	fields := []xevents.Field{xevents.FUint("source_database_id", "uint32", int64(x.conn.db.ID)), xevents.FUint("object_id", "int32", objectID),
		xevents.FMap("object_type", "object_type", "sqlserver", objectType), xevents.FUint("nest_level", "uint32", int64(x.nest)),
		xevents.FUint("line_number", "int32", int64(sp.Line)), xevents.FUint("offset", "int32", off), xevents.FUint("offset_end", "int32", offEnd),
		xevents.FStr("object_name", objectName), xevents.FStr("statement", stmt)}
	if before != nil {
		dur := ts.Sub(x.statementBegan()).Microseconds()
		rows := x.stats.rows - before.rows + x.stats.writes - before.writes
		fields = append(fields, xevents.FUint("duration", "uint64", dur), xevents.FUint("cpu_time", "uint64", dur*7/10),
			xevents.FUint("physical_reads", "uint64", x.stats.physicalReads-before.physicalReads), xevents.FUint("logical_reads", "uint64", x.stats.logicalReads-before.logicalReads),
			xevents.FUint("writes", "uint64", x.stats.writes-before.writes), xevents.FUint("row_count", "uint64", rows), xevents.FUint("last_row_count", "uint64", rows))
	} else {
		x.stmtStart = ts
	}
	s.emit(x.ec, &xevents.EventData{Name: name, Pkg: "sqlserver", Time: ts, Fields: fields})
}

// showplanObject is what the actual plan of the current statement says
// about the module it runs in: ADHOC at nest level 0 for a batch's
// statement, PROC with the procedure's id and level inside one.
func (x *execCtx) showplanObject() (objectType string, objectID, nest int64, name string) {
	if x.module != nil {
		return "PROC", x.module.objectID, int64(x.nest), x.module.name
	}
	return "ADHOC", 0, int64(x.nest), ""
}

// demoProcedures are created in the demo database at start, through the
// same CREATE PROCEDURE path a client's batch takes.
var demoProcedures = []string{
	"CREATE PROCEDURE dbo.CustomerOrders @region nvarchar(20) = N'West', @minAmount money = 0\nAS\nSET NOCOUNT ON;\n" +
		"SELECT c.CustomerID, c.Name FROM dbo.Customers AS c WHERE c.Region = @region;\n" +
		"SELECT o.OrderID, o.CustomerID, o.Amount FROM dbo.Orders AS o WHERE o.Amount > @minAmount AND o.CustomerID IN (SELECT c.CustomerID FROM dbo.Customers AS c WHERE c.Region = @region);",
	"CREATE PROCEDURE dbo.RegionReport @region nvarchar(20)\nAS\nSELECT COUNT(*) AS Customers FROM dbo.Customers WHERE Region = @region;\n" +
		"EXEC dbo.CustomerOrders @region = @region, @minAmount = 4000;",
}

// installDemoProcedures creates demoProcedures in db.
func installDemoProcedures(db *engine.Database, created time.Time) {
	if procsOf(db) == nil {
		db.Procs = map[string]*procedure{}
	}
	for i, def := range demoProcedures {
		cp, err := parseProc(def)
		if err != nil {
			panic(fmt.Sprintf("demo procedure %d: %v", i, err))
		}
		name := cp.Name[len(cp.Name)-1]
		procsOf(db)[procKey("dbo", name)] = &procedure{objectID: int64(709577566 + 32*i), schema: "dbo", name: name, definition: def, created: created, modified: created}
	}
}

// procObjectID is OBJECT_ID of a procedure's name (nil when none).
func (x *execCtx) procObjectID(name string) any {
	parts, err := sqlfront.NameParts(name)
	if err != nil || len(parts) == 0 {
		return nil
	}
	p, perr := x.lookupProc(parts)
	if perr != nil || p == nil {
		return nil
	}
	return p.objectID
}

// procNamePart is OBJECT_NAME or OBJECT_SCHEMA_NAME of a procedure.
func procNamePart(p *procedure, fn string) string {
	if fn == "OBJECT_SCHEMA_NAME" {
		return p.schema
	}
	return p.name
}

// objectDefinition is OBJECT_DEFINITION: the module's text, NULL for an
// encrypted module, a table or an unknown id
// (https://learn.microsoft.com/en-us/sql/t-sql/functions/object-definition-transact-sql).
func (x *execCtx) objectDefinition(v any) any {
	id, _ := engine.ConvertValue(v, engine.TBigInt)
	n, ok := id.(int64)
	if !ok {
		return nil
	}
	p := procByID(x.conn.db, n)
	if p == nil || p.encrypted {
		return nil
	}
	return p.definition
}

// procObjectRows are sys.objects' rows of the procedures, type P.
func procObjectRows(db *engine.Database) [][]any {
	var rows [][]any
	for _, p := range procsOf(db) {
		rows = append(rows, []any{p.name, p.objectID, nil, int64(1), int64(0), "P ", "SQL_STORED_PROCEDURE", p.created, p.modified, false})
	}
	return rows
}

// tablesOnly is sys.tables: sys.objects' user tables.
func tablesOnly(v viewFunc) viewFunc {
	return func(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
		r, err := v(x, db)
		if err != nil {
			return nil, err
		}
		kept := r.Rows[:0]
		for _, row := range r.Rows {
			if row[5] == "U " {
				kept = append(kept, row)
			}
		}
		r.Rows = kept
		return r, nil
	}
}

// sqlModulesView is sys.sql_modules: definition is NULL for a module
// created WITH ENCRYPTION
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-sql-modules-transact-sql).
func sqlModulesView(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("object_id", engine.TInt, "definition", engine.TNVar(0), "uses_ansi_nulls", engine.TBit, "uses_quoted_identifier", engine.TBit,
		"is_schema_bound", engine.TBit, "execute_as_principal_id", engine.TInt)}
	for _, p := range procsOf(db) {
		var def any = p.definition
		if p.encrypted {
			def = nil
		}
		r.Rows = append(r.Rows, []any{p.objectID, def, true, true, false, nil})
	}
	return r, nil
}

// proceduresView is sys.procedures
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-procedures-transact-sql).
func proceduresView(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("name", engine.TSysname, "object_id", engine.TInt, "schema_id", engine.TInt, "type", engine.TNVar(2), "type_desc", engine.TNVar(60), "create_date", engine.TDT2, "modify_date", engine.TDT2)}
	for _, p := range procsOf(db) {
		r.Rows = append(r.Rows, []any{p.name, p.objectID, int64(1), "P ", "SQL_STORED_PROCEDURE", p.created, p.modified})
	}
	return r, nil
}

// triggersView is sys.triggers: the stand-in has no triggers, so it is
// empty, with the columns a reader filters on
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-triggers-transact-sql).
func triggersView(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
	return &engine.Relation{Cols: cols("name", engine.TSysname, "object_id", engine.TInt, "parent_class", engine.TTinyInt, "parent_class_desc", engine.TNVar(60), "parent_id", engine.TInt,
		"type", engine.TNVar(2), "type_desc", engine.TNVar(60), "is_disabled", engine.TBit, "is_instead_of_trigger", engine.TBit)}, nil
}

// DemoProcedures returns the definitions of the procedures the demo
// database holds, for the release check that the compose sample database
// creates the same ones.
func DemoProcedures() []string {
	return append([]string(nil), demoProcedures...)
}

// procsOf is db's stored procedures by procKey: the engine's Database
// carries them for the server without knowing their type.
func procsOf(db *engine.Database) map[string]*procedure {
	m, _ := db.Procs.(map[string]*procedure)
	return m
}

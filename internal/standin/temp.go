package standin

import (
	"errors"
	"fmt"
	"strings"

	"github.com/queryreplay/queryreplay/internal/standin/engine"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/tds"
)

// Tables made at run time: #temporary tables (session-scoped, in tempdb),
// @table variables (batch-scoped, not undone by ROLLBACK, as SQL Server
// documents), and permanent tables from CREATE TABLE or SELECT INTO. A
// table without a PRIMARY KEY is a heap: it gets a hidden row id as its
// key, and plans show Table Scan / Table Insert for it. CREATE and DROP
// inside a transaction are undone by its ROLLBACK.
// https://learn.microsoft.com/en-us/sql/t-sql/data-types/table-transact-sql

// sessionSQL is the query engine's per-session state.
type sessionSQL struct {
	temps     map[string]*engine.Table
	tableVars map[string]*engine.Table
	varTypes  map[string]sqlfront.SQLType
	ddl       []ddlUndo
}

type ddlUndo struct {
	txnID int64
	undo  func()
}

// tableInfo is what the stand-in keeps about a table beyond its columns.
type tableInfo struct {
	identity     int // column position, -1 when none
	nextIdentity int64
	defaults     map[int]sqlfront.Expr
	tableVar     bool
	heap         bool
	nextRid      int64
}

func (c *connState) sqlState() *sessionSQL {
	if c.sqls == nil {
		c.sqls = &sessionSQL{temps: map[string]*engine.Table{}, tableVars: map[string]*engine.Table{}, varTypes: map[string]sqlfront.SQLType{}}
	}
	return c.sqls
}

// tempdbPageBase keeps tempdb's page ids apart from the demo database's
// in the one buffer pool map.
const tempdbPageBase = 4_000_000

// tableInfo returns what the engine keeps about a run-time table (nil
// for the demo tables).
func (x *execCtx) tableInfo(t *engine.Table) *tableInfo {
	return x.srv.engine().tables[t]
}

func isTableVar(t *engine.Table) bool { return strings.HasPrefix(t.Name, "@") }

func (x *execCtx) isIdentity(t *engine.Table, col int) bool {
	ti := x.tableInfo(t)
	return ti != nil && ti.identity == col
}

// fillDefaults sets the identity value, hidden row id and DEFAULTs of a
// new row.
func (x *execCtx) fillDefaults(t *engine.Table, row []any, given map[int]bool) *sqlfront.SQLError {
	ti := x.tableInfo(t)
	if ti == nil {
		return nil
	}
	if ti.identity >= 0 {
		ti.nextIdentity++
		row[ti.identity] = ti.nextIdentity
	}
	if ti.heap {
		ti.nextRid++
		row[len(row)-1] = ti.nextRid
	}
	env := &engine.EvalEnv{X: x}
	for c, e := range ti.defaults {
		if given[c] || row[c] != nil {
			continue
		}
		v, err := env.Eval(e)
		if err != nil {
			return err
		}
		if row[c], err = engine.ConvertValue(v, t.Columns[c].Type); err != nil {
			return err
		}
	}
	return nil
}

// newTable builds a table from column definitions in db.
func (x *execCtx) newTable(db *engine.Database, name string, cols []sqlfront.ColumnDef, pk []string) (*engine.Table, *sqlfront.SQLError) {
	eng := x.srv.engine()
	if db.ID == 2 && db.NextPage < tempdbPageBase {
		db.NextPage = tempdbPageBase
		db.NextHobt = 50000
	}
	eng.nextObject += 16
	objectID := eng.nextObject
	if strings.HasPrefix(name, "#") || strings.HasPrefix(name, "@") {
		objectID = -objectID
	}
	t := &engine.Table{DB: db, ObjectID: objectID, Schema: "dbo", Name: name, Created: x.srv.now()}
	ti := &tableInfo{identity: -1, defaults: map[int]sqlfront.Expr{}}
	seen := map[string]bool{}
	size := 11
	for i, c := range cols {
		if seen[strings.ToLower(c.Name)] {
			return nil, sqlfront.NewError(2705, 16, "Column names in each table must be unique. Column name '%s' in table '%s' is specified more than once.", c.Name, name)
		}
		seen[strings.ToLower(c.Name)] = true
		t.Columns = append(t.Columns, engine.TableColumn{Column: engine.Column{Name: c.Name, Type: c.Type}, NotNull: c.NotNull, AvgSize: engine.TypeSize(c.Type)})
		size += engine.TypeSize(c.Type)
		if c.PrimaryKey {
			pk = append(pk, c.Name)
		}
		if c.Identity {
			ti.identity = i
		}
		if c.Default != nil {
			ti.defaults[i] = c.Default
		}
	}
	if len(pk) > 1 {
		for _, c := range cols {
			if c.PrimaryKey {
				return nil, sqlfront.NewError(8110, 16, "Cannot add multiple PRIMARY KEY constraints to table '%s'.", name)
			}
		}
	}
	for _, k := range pk {
		i := t.Column(k)
		if i < 0 {
			return nil, sqlfront.NewError(1911, 16, "Column name '%s' does not exist in the target table or view.", k)
		}
		t.Columns[i].NotNull = true
		t.PK = append(t.PK, i)
	}
	ixName := ""
	if len(t.PK) == 0 {
		// a heap: a hidden row id orders the rows
		ti.heap = true
		t.Columns = append(t.Columns, engine.TableColumn{Column: engine.Column{Name: "%%rid", Type: engine.TBigInt}, NotNull: true, AvgSize: 8})
		t.PK = []int{len(t.Columns) - 1}
	} else {
		ixName = fmt.Sprintf("PK__%s__%X", strings.Trim(name, "#@"), uint32(objectID))
		t.PKName = ixName
	}
	t.RowBytes = size
	t.AddIndex(1, ixName, t.PK, true, !ti.heap)
	t.Indexes[0].Layout()
	ti.tableVar = strings.HasPrefix(name, "@")
	eng.tables[t] = ti
	return t, nil
}

func (x *execCtx) tempdb() *engine.Database { return x.srv.dbByID(2) }

// execCreateTable runs CREATE TABLE.
func (x *execCtx) execCreateTable(s *sqlfront.CreateTableStmt) error {
	t, err := x.createTable(s.Name, s.Columns, s.PK)
	if err != nil {
		return err
	}
	_ = t
	return nil
}

func (x *execCtx) createTable(parts []string, cols []sqlfront.ColumnDef, pk []string) (*engine.Table, *sqlfront.SQLError) {
	name := parts[len(parts)-1]
	st := x.conn.sqlState()
	if strings.HasPrefix(name, "#") {
		if len(name) > 116 {
			return nil, sqlfront.NewError(193, 15, "The object or column name starting with '%s' is too long. The maximum length is 116 characters.", name[:116])
		}
		key := strings.ToLower(name)
		if st.temps[key] != nil {
			return nil, sqlfront.NewError(2714, 16, "There is already an object named '%s' in the database.", name)
		}
		t, err := x.newTable(x.tempdb(), name, cols, pk)
		if err != nil {
			return nil, err
		}
		st.temps[key] = t
		x.onRollback(func() { delete(st.temps, key) })
		return t, nil
	}
	db := x.conn.db
	if len(parts) == 3 {
		if db = x.srv.dbByName(parts[0]); db == nil {
			return nil, engine.ErrDatabaseMissing(parts[0])
		}
	}
	schema := "dbo"
	if len(parts) >= 2 && parts[len(parts)-2] != "" {
		schema = parts[len(parts)-2]
	}
	if db.Table(schema, name) != nil {
		return nil, sqlfront.NewError(2714, 16, "There is already an object named '%s' in the database.", name)
	}
	t, err := x.newTable(db, name, cols, pk)
	if err != nil {
		return nil, err
	}
	t.Schema = schema
	db.Tables = append(db.Tables, t)
	x.onRollback(func() { dropFromDB(db, t) })
	return t, nil
}

func dropFromDB(db *engine.Database, t *engine.Table) {
	for i, have := range db.Tables {
		if have == t {
			db.Tables = append(db.Tables[:i], db.Tables[i+1:]...)
			return
		}
	}
}

// onRollback registers the undo of a DDL change for the session's open
// transaction (nothing to do outside one: autocommit DDL is permanent).
func (x *execCtx) onRollback(undo func()) {
	if x.conn.txn == nil {
		return
	}
	st := x.conn.sqlState()
	st.ddl = append(st.ddl, ddlUndo{txnID: x.conn.txn.id, undo: undo})
}

// undoDDL reverts the DDL of transaction id, newest first (called when it
// rolls back), and forgets it when it commits.
func (c *connState) undoDDL(id int64, rollback bool) {
	st := c.sqls
	if st == nil {
		return
	}
	var kept []ddlUndo
	for i := len(st.ddl) - 1; i >= 0; i-- {
		d := st.ddl[i]
		if d.txnID != id {
			kept = append([]ddlUndo{d}, kept...)
			continue
		}
		if rollback {
			d.undo()
		}
	}
	st.ddl = kept
}

func (x *execCtx) execDropTable(s *sqlfront.DropTableStmt) error {
	st := x.conn.sqlState()
	for _, parts := range s.Names {
		name := parts[len(parts)-1]
		if strings.HasPrefix(name, "#") {
			key := strings.ToLower(name)
			t := st.temps[key]
			if t == nil {
				if s.IfExists {
					continue
				}
				return sqlfront.NewError(3701, 11, "Cannot drop the table '%s', because it does not exist or you do not have permission.", name)
			}
			delete(st.temps, key)
			x.onRollback(func() { st.temps[key] = t })
			continue
		}
		t, _, err := x.resolveTable(parts)
		if err != nil || t == nil {
			if s.IfExists {
				continue
			}
			return sqlfront.NewError(3701, 11, "Cannot drop the table '%s', because it does not exist or you do not have permission.", strings.Join(parts, "."))
		}
		if x.tableInfo(t) == nil {
			// the demo tables are the stand-in's fixture
			return sqlfront.NewError(3701, 11, "Cannot drop the table '%s', because it does not exist or you do not have permission.", strings.Join(parts, "."))
		}
		db := t.DB
		dropFromDB(db, t)
		x.onRollback(func() { db.Tables = append(db.Tables, t) })
	}
	return nil
}

func (x *execCtx) execTruncate(s *sqlfront.TruncateStmt) error {
	t, err := x.dmlTable(s.Table)
	if err != nil {
		return err
	}
	rows := append([][]any{}, t.Rows...)
	mark := x.undoMark()
	for i, row := range rows {
		if err := x.dmlTick(i); err != nil {
			x.undoSince(mark)
			return err
		}
		if isTableVar(t) {
			x.removeRow(t, row)
			continue
		}
		if err := x.modify(t, "delete", row, nil); err != nil {
			return err
		}
	}
	x.endAutocommit()
	return nil
}

// declareTable runs DECLARE @t TABLE (…).
func (x *execCtx) declareTable(name string, def *sqlfront.CreateTableStmt) *sqlfront.SQLError {
	st := x.conn.sqlState()
	key := strings.ToLower(name)
	if st.tableVars[key] != nil {
		return sqlfront.NewError(134, 15, "The variable name '%s' has already been declared. Variable names must be unique within a query batch or stored procedure.", name)
	}
	t, err := x.newTable(x.tempdb(), name, def.Columns, def.PK)
	if err != nil {
		return err
	}
	st.tableVars[key] = t
	return nil
}

// execSelectInto runs SELECT … INTO: the new table takes the query's
// columns, then its rows (Table Insert in the plan).
func (x *execCtx) execSelectInto(s *sqlfront.SelectStmt) error {
	into := s.Into
	inner := *s
	inner.Into = nil
	r := engine.NewRunCtx(x)
	it, schema, visible, p, err := x.planStatement(r, &inner, s)
	if err != nil {
		return err
	}
	var cols []sqlfront.ColumnDef
	for i := 0; i < visible; i++ {
		c := schema.Cols[i]
		if c.Name == "" {
			return sqlfront.NewError(1038, 15, "An object or column name is missing or empty. For SELECT INTO statements, verify each column has a name. For other statements, look for empty alias names. Aliases defined as \"\" or [] are not allowed. Change the alias to a valid name.")
		}
		cols = append(cols, sqlfront.ColumnDef{Name: c.Name, Type: c.Typ})
	}
	t, err := x.createTable(into, cols, nil)
	if err != nil {
		return err
	}
	root := dmlNode(t, "Insert", it.Node())
	q, err := x.beginQuery(r, root, "SELECT INTO", p.Opts)
	if err != nil {
		return err
	}
	rows, err := x.collect(r, it)
	if err != nil {
		x.endQuery(q, 0)
		return err
	}
	var newRows [][]any
	colIdx := make([]int, visible)
	for i := range colIdx {
		colIdx[i] = i
	}
	for _, vals := range rows {
		row, err := x.buildInsertRow(t, colIdx, vals[:visible])
		if err != nil {
			x.endQuery(q, 0)
			return err
		}
		newRows = append(newRows, row)
	}
	if err := x.insertRows(t, newRows); err != nil {
		x.endQuery(q, 0)
		return err
	}
	return x.finishDML(q, tds.CmdSelect, int64(len(newRows)), false)
}

// execMerge runs MERGE: every source row is matched against the target
// with the ON condition; matched rows take the first WHEN MATCHED clause
// whose condition holds, unmatched source rows WHEN NOT MATCHED [BY
// TARGET], unmatched target rows WHEN NOT MATCHED BY SOURCE.
func (x *execCtx) execMerge(s *sqlfront.MergeStmt) error {
	t, err := x.dmlTable(s.Target)
	if err != nil {
		return err
	}
	qual := strings.ToLower(s.Alias)
	if qual == "" {
		qual = strings.ToLower(s.Target[len(s.Target)-1])
	}
	r := engine.NewRunCtx(x)
	p := engine.NewPlanner(x, r)
	p.StmtRoot = s
	p.Opts = sqlfront.QueryOptions{MaxRecursion: -1}
	src, err := p.PlanFromWhere(&sqlfront.SelectStmt{From: s.Source})
	if err != nil {
		return err
	}
	tgt, err := p.PlanFromWhere(&sqlfront.SelectStmt{From: &sqlfront.TableName{Parts: s.Target, Alias: s.Alias}})
	if err != nil {
		return err
	}
	joined := &engine.Relation{Cols: append(append([]engine.RelCol{}, tgt.Node().Schema.Cols...), src.Node().Schema.Cols...)}
	for _, c := range s.Clauses {
		if c.Cond != nil {
			if err := p.Resolves(c.Cond, joined); err != nil {
				return err
			}
		}
	}
	if err := p.Resolves(s.On, joined); err != nil {
		return err
	}
	join := &engine.PlanNode{Physical: "Hash Match", Logical: engine.MergeJoinKind(s), Schema: joined, EstExecs: 1, Children: []*engine.PlanNode{tgt.Node(), src.Node()}}
	join.Details = func(b *engine.XMLBuilder) {
		b.Open("Hash")
		b.Empty("DefinedValues")
		b.Children(join)
		b.Close()
	}
	root := dmlNode(t, "Merge", join)
	q, err := x.dmlRun(r, root, "MERGE", p.Opts)
	if err != nil {
		return err
	}
	n, err := x.runMerge(r, s, t, qual, tgt, src, joined, join)
	if err != nil {
		x.endQuery(q, 0)
		return err
	}
	return x.finishDML(q, tds.CmdNone, n, isTableVar(t))
}

func (x *execCtx) runMerge(r *engine.RunCtx, s *sqlfront.MergeStmt, t *engine.Table, qual string, tgt, src engine.Iter, joined *engine.Relation, join *engine.PlanNode) (int64, *sqlfront.SQLError) {
	actions, err := x.mergeActions(r, s, t, qual, tgt, src, joined, join)
	if err != nil {
		return 0, err
	}
	join.Counters(0).Rows = int64(len(actions))
	join.End = x.srv.clock
	return x.applyMerge(s, t, qual, joined, actions)
}

// mergeAction is what MERGE does for one source/target pairing.
type mergeAction struct {
	clause *sqlfront.MergeClause
	target []any
	row    []any
}

// mergeActions matches the source rows with the target rows and picks
// the clause each pairing (or unmatched row) takes.
func (x *execCtx) mergeActions(r *engine.RunCtx, s *sqlfront.MergeStmt, t *engine.Table, qual string, tgt, src engine.Iter, joined *engine.Relation, join *engine.PlanNode) ([]mergeAction, *sqlfront.SQLError) {
	join.Opened, join.Start = true, x.srv.clock
	join.Counters(0).Executions++
	targets, err := x.collectTuples(r, tgt)
	if err != nil {
		return nil, err
	}
	sources, err := x.collectTuples(r, src)
	if err != nil {
		return nil, err
	}
	matchedBy := make([]int, len(targets))
	env := &engine.EvalEnv{X: x, Rel: joined}
	combine := func(tv, sv []any) []any {
		row := make([]any, len(joined.Cols))
		copy(row, tv)
		copy(row[len(tgt.Node().Schema.Cols):], sv)
		return row
	}
	var actions []mergeAction
	pick := func(matched, bySource bool, row []any) (*sqlfront.MergeClause, *sqlfront.SQLError) {
		for i := range s.Clauses {
			c := &s.Clauses[i]
			if c.Matched != matched || !matched && c.BySource != bySource {
				continue
			}
			if c.Cond != nil {
				env.Row = row
				v, err := env.Eval(c.Cond)
				if err != nil {
					return nil, err
				}
				if b, _ := engine.Truth(v); !b {
					continue
				}
			}
			return c, nil
		}
		return nil, nil
	}
	for _, sv := range sources {
		found := false
		for ti, tv := range targets {
			row := combine(tv.Vals, sv.Vals)
			env.Row = row
			v, err := env.Eval(s.On)
			if err != nil {
				return nil, err
			}
			if b, _ := engine.Truth(v); !b {
				continue
			}
			found = true
			matchedBy[ti]++
			if matchedBy[ti] > 1 {
				return nil, sqlfront.NewError(8672, 16, "The MERGE statement attempted to UPDATE or DELETE the same row more than once. This happens when a target row matches more than one source row. A MERGE statement cannot UPDATE/DELETE the same row of the target table multiple times. Refine the ON clause to ensure a target row matches at most one source row, or use the GROUP BY clause to group the source rows.")
			}
			c, err := pick(true, false, row)
			if err != nil {
				return nil, err
			}
			if c != nil {
				actions = append(actions, mergeAction{c, mergeTargetRow(tv, t, qual), row})
			}
		}
		if !found {
			row := combine(make([]any, len(tgt.Node().Schema.Cols)), sv.Vals)
			c, err := pick(false, false, row)
			if err != nil {
				return nil, err
			}
			if c != nil {
				actions = append(actions, mergeAction{c, nil, row})
			}
		}
	}
	for ti, tv := range targets {
		if matchedBy[ti] > 0 {
			continue
		}
		row := combine(tv.Vals, make([]any, len(src.Node().Schema.Cols)))
		c, err := pick(false, true, row)
		if err != nil {
			return nil, err
		}
		if c != nil {
			actions = append(actions, mergeAction{c, mergeTargetRow(tv, t, qual), row})
		}
	}
	return actions, nil
}

// applyMerge carries out the chosen actions.
func (x *execCtx) applyMerge(s *sqlfront.MergeStmt, t *engine.Table, qual string, joined *engine.Relation, actions []mergeAction) (int64, *sqlfront.SQLError) {
	env := &engine.EvalEnv{X: x, Rel: joined}
	var n int64
	for _, a := range actions {
		env.Row = a.row
		switch a.clause.Action {
		case "INSERT":
			colIdx, err := x.insertColumns(t, a.clause.Columns)
			if err != nil {
				return 0, err
			}
			if len(colIdx) != len(a.clause.Values) {
				return 0, engine.ErrColumnCount()
			}
			vals := make([]any, len(a.clause.Values))
			for i, e := range a.clause.Values {
				v, err := env.Eval(e)
				if err != nil {
					return 0, err
				}
				vals[i] = v
			}
			row, err := x.buildInsertRow(t, colIdx, vals)
			if err != nil {
				return 0, err
			}
			if err := x.insertRows(t, [][]any{row}); err != nil {
				return 0, err
			}
		case "UPDATE":
			u := &sqlfront.UpdateStmt{Table: []string{qual}, Sets: a.clause.Sets, From: s.Source}
			if _, err := x.applyUpdates(t, u, []target{{row: a.target, env: &engine.EvalEnv{X: x, Rel: joined, Row: a.row}}}); err != nil {
				return 0, err
			}
		case "DELETE":
			if isTableVar(t) {
				x.removeRow(t, a.target)
			} else if err := x.modify(t, "delete", a.target, nil); err != nil {
				return 0, err
			}
		}
		n++
	}
	return n, nil
}

func mergeTargetRow(tv *engine.Tuple, t *engine.Table, qual string) []any {
	for _, s := range tv.Srcs {
		if sourceTable(s) == t {
			return s.Row
		}
	}
	return nil
}

func (x *execCtx) collectTuples(r *engine.RunCtx, it engine.Iter) ([]*engine.Tuple, *sqlfront.SQLError) {
	return r.Drain(it, nil, 0, true)
}

// loopControl carries BREAK or CONTINUE from a statement up to its WHILE.
type loopControl struct{ brk bool }

func (l loopControl) Error() string { return map[bool]string{true: "BREAK", false: "CONTINUE"}[l.brk] }

// execWhile runs WHILE cond body: the condition is evaluated before every
// iteration; each iteration lets other sessions run and stops on cancel.
// https://learn.microsoft.com/en-us/sql/t-sql/language-elements/while-transact-sql
func (x *execCtx) execWhile(s *sqlfront.WhileStmt) error {
	for {
		v, err := (&engine.EvalEnv{X: x}).Eval(s.Cond)
		if err != nil {
			return err
		}
		if b, _ := engine.Truth(v); !b {
			return nil
		}
		if err := x.exec(s.Body); err != nil {
			var lc loopControl
			if errors.As(err, &lc) {
				if lc.brk {
					return nil
				}
				continue
			}
			return err
		}
		if err := x.yield(); err != nil {
			return err
		}
	}
}

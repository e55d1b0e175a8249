package standin

import (
	"math"
	"strings"

	"github.com/queryreplay/queryreplay/internal/standin/engine"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/tds"
)

// Data modification: INSERT (VALUES, SELECT, DEFAULT VALUES), UPDATE and
// DELETE (with FROM, TOP), MERGE. The rows to change are found by a plan
// like any query's (seeks, scans, joins), then locked, re-read and changed
// inside the session's transaction, with log records and index
// maintenance; the plan's top operator is the Clustered Index (or Table)
// Insert/Update/Delete/Merge SQL Server would show.

// dmlTable resolves the target of a modification.
func (x *execCtx) dmlTable(parts []string) (*engine.Table, *sqlfront.SQLError) {
	if len(parts) >= 2 && strings.EqualFold(parts[len(parts)-2], "sys") {
		return nil, sqlfront.NewError(259, 16, "Ad hoc updates to system catalogs are not allowed.")
	}
	t, view, err := x.resolveTable(parts)
	if err != nil {
		return nil, err
	}
	if view != nil || t == nil {
		return nil, sqlfront.NewError(259, 16, "Ad hoc updates to system catalogs are not allowed.")
	}
	return t, nil
}

// dmlNode is the plan's top operator for a modification of t.
func dmlNode(t *engine.Table, logical string, child *engine.PlanNode) *engine.PlanNode {
	ix := t.Indexes[0]
	phys := "Clustered Index " + logical
	if ix.Name == "" {
		phys = "Table " + logical
	}
	n := &engine.PlanNode{Physical: phys, Logical: logical, Schema: &engine.Relation{}, EstExecs: 1, Index: ix, Objects: t.Indexes}
	if child != nil {
		n.Children = []*engine.PlanNode{child}
		n.EstRows = child.EstRows
		n.SubtreeCost = child.SubtreeCost + 0.01
	}
	n.EstIO = 0.01
	n.EstCPU = 0.000001 * math.Max(n.EstRows, 1)
	n.Details = func(b *engine.XMLBuilder) {
		b.Open("Update", "DMLRequestSort", "false")
		b.Object(ix, "")
		for _, other := range t.Indexes[1:] {
			if logical != "Update" {
				b.Object(other, "")
			}
		}
		b.Children(n)
		b.Close()
	}
	return n
}

// dmlRun wraps a modification's plan execution with its query-level events.
// The modification operator is driven here, not through runCtx: it opens
// (and runs once) when the statement starts and ends with the last change.
func (x *execCtx) dmlRun(r *engine.RunCtx, root *engine.PlanNode, stype string, opts sqlfront.QueryOptions) (*queryRun, *sqlfront.SQLError) {
	q, err := x.beginQuery(r, root, stype, opts)
	if err == nil && !root.Opened {
		root.Opened, root.Start = true, x.srv.clock
		root.Counters(0).Executions = max(root.Counters(0).Executions, 1)
	}
	return q, err
}

// finishDML ends a modification: the autocommit transaction commits, the
// plan and row count go out. The rows affected count in the batch's and
// the statement's row_count as SQL Server's completed events count them
// (the same figure the DONE token carries).
func (x *execCtx) finishDML(q *queryRun, cmd tds.Command, n int64, isTableVar bool) error {
	q.root.Counters(0).Rows = n
	x.stats.rows += n
	q.root.End = x.srv.clock
	x.endQuery(q, n)
	if !isTableVar {
		x.endAutocommit()
	}
	if err := x.done(cmd, n); err != nil {
		return err
	}
	return x.sendStatsXML()
}

func (x *execCtx) execInsert(s *sqlfront.InsertStmt) error {
	t, err := x.dmlTable(s.Table)
	if err != nil {
		return err
	}
	colIdx, err := x.insertColumns(t, s.Columns)
	if err != nil {
		return err
	}
	r := engine.NewRunCtx(x)
	var src engine.Iter
	var opts sqlfront.QueryOptions
	if s.Sel != nil {
		var visible int
		var p *engine.Planner
		if src, _, visible, p, err = x.planStatement(r, s.Sel, s); err != nil {
			return err
		}
		opts = p.Opts
		if visible != len(colIdx) {
			if visible > len(colIdx) {
				return engine.ErrColumnCount()
			}
			return sqlfront.NewError(120, 15, "The select list for the INSERT statement contains fewer items than the insert list. The number of SELECT values must match the number of INSERT columns.")
		}
	} else {
		for _, row := range s.Rows {
			if row != nil && len(row) != len(colIdx) {
				if len(row) > len(colIdx) {
					return engine.ErrColumnCount()
				}
				return sqlfront.NewError(109, 15, "There are more columns in the INSERT statement than values specified in the VALUES clause. The number of values in the VALUES clause must match the number of columns specified in the INSERT statement.")
			}
		}
		n := &engine.PlanNode{Physical: "Constant Scan", Logical: "Constant Scan", Schema: &engine.Relation{}, EstRows: float64(len(s.Rows)), EstExecs: 1}
		src = &insertValuesIter{n: n, rows: s.Rows}
	}
	root := dmlNode(t, "Insert", src.Node())
	q, err := x.dmlRun(r, root, "INSERT", opts)
	if err != nil {
		return err
	}
	rows, err := x.collect(r, src)
	if err != nil {
		x.endQuery(q, 0)
		return err
	}
	var newRows [][]any
	for _, vals := range rows {
		row, err := x.buildInsertRow(t, colIdx, vals)
		if err != nil {
			x.endQuery(q, 0)
			return err
		}
		newRows = append(newRows, row)
	}
	newRows = x.limitDML(newRows) // SET ROWCOUNT, safety.go
	if err := x.insertRows(t, newRows); err != nil {
		x.endQuery(q, 0)
		return err
	}
	return x.finishDML(q, tds.CmdInsert, int64(len(newRows)), isTableVar(t))
}

// insertValuesIter evaluates INSERT … VALUES rows (nil: DEFAULT VALUES).
type insertValuesIter struct {
	n    *engine.PlanNode
	rows [][]sqlfront.Expr
	i    int
	env  engine.EvalEnv
}

func (v *insertValuesIter) Node() *engine.PlanNode { return v.n }
func (v *insertValuesIter) Open(r *engine.RunCtx, outer *engine.EvalEnv) *sqlfront.SQLError {
	v.i, v.env = 0, engine.EvalEnv{X: r.X, Outer: outer}
	return nil
}
func (v *insertValuesIter) Next(r *engine.RunCtx) (*engine.Tuple, *sqlfront.SQLError) {
	if v.i >= len(v.rows) {
		return nil, nil
	}
	row := v.rows[v.i]
	v.i++
	if row == nil {
		return &engine.Tuple{Vals: nil}, nil
	}
	vals := make([]any, len(row))
	for i, e := range row {
		if lit, ok := e.(*sqlfront.ColRef); ok && len(lit.Parts) == 1 && strings.EqualFold(lit.Parts[0], "DEFAULT") {
			vals[i] = defaultMarker{}
			continue
		}
		x, err := v.env.Eval(e)
		if err != nil {
			return nil, err
		}
		vals[i] = x
	}
	return &engine.Tuple{Vals: vals}, nil
}
func (v *insertValuesIter) Close(r *engine.RunCtx) {}

// defaultMarker stands for DEFAULT in a VALUES list.
type defaultMarker struct{}

// insertColumns maps an INSERT column list to table column positions.
func (x *execCtx) insertColumns(t *engine.Table, names []string) ([]int, *sqlfront.SQLError) {
	var colIdx []int
	if len(names) == 0 {
		for i, c := range t.Columns {
			if strings.HasPrefix(c.Name, "%%") || x.isIdentity(t, i) {
				continue
			}
			colIdx = append(colIdx, i)
		}
		return colIdx, nil
	}
	for _, c := range names {
		i := t.Column(c)
		if i < 0 || strings.HasPrefix(c, "%%") {
			return nil, engine.ErrInvalidColumn(c)
		}
		if x.isIdentity(t, i) {
			return nil, sqlfront.NewError(544, 16, "Cannot insert explicit value for identity column in table '%s' when IDENTITY_INSERT is set to OFF.", t.Name)
		}
		colIdx = append(colIdx, i)
	}
	return colIdx, nil
}

// collect runs a plan to the end and returns its rows.
func (x *execCtx) collect(r *engine.RunCtx, it engine.Iter) ([][]any, *sqlfront.SQLError) {
	ts, err := r.Drain(it, nil, 0, true)
	if err != nil {
		return nil, err
	}
	rows := make([][]any, len(ts))
	for i, t := range ts {
		rows[i] = t.Vals
	}
	return rows, nil
}

// buildInsertRow converts a row of values to the table's columns, with
// defaults, identity values and NOT NULL checks.
func (x *execCtx) buildInsertRow(t *engine.Table, colIdx []int, vals []any) ([]any, *sqlfront.SQLError) {
	row := make([]any, len(t.Columns))
	given := map[int]bool{}
	for i, v := range vals {
		c := colIdx[i]
		if _, isDefault := v.(defaultMarker); isDefault {
			continue
		}
		cv, err := engine.ConvertValue(v, t.Columns[c].Type)
		if err != nil {
			return nil, err
		}
		row[c] = cv
		given[c] = true
	}
	if err := x.fillDefaults(t, row, given); err != nil {
		return nil, err
	}
	for i, c := range t.Columns {
		if row[i] == nil && c.NotNull {
			return nil, engine.ErrNotNull(c.Name, t.DB.Name+"."+t.FullName())
		}
	}
	return row, nil
}

// insertRows inserts rows into t: locked and logged in the transaction,
// or directly for a table variable (which no rollback undoes).
func (x *execCtx) insertRows(t *engine.Table, rows [][]any) *sqlfront.SQLError {
	if isTableVar(t) {
		for _, row := range rows {
			if _, dup := t.FindRow(t.KeyOf(row)); dup {
				return engine.ErrDuplicateKey(t.PKName, t.FullName(), keyText(t, row))
			}
			x.insertRow(t, row)
		}
		return nil
	}
	mark := x.undoMark()
	for i, row := range rows {
		if err := x.dmlTick(i); err != nil {
			x.undoSince(mark)
			return err
		}
		// the key lock first: an uncommitted insert of the same key by
		// another transaction makes this one wait, then fail as duplicate
		if err := x.lockRow(t, row); err != nil {
			x.undoSince(mark)
			return err
		}
		if _, dup := t.FindRow(t.KeyOf(row)); dup {
			x.undoSince(mark)
			return engine.ErrDuplicateKey(t.PKName, t.FullName(), keyText(t, row))
		}
		if err := x.modify(t, "insert", nil, row); err != nil {
			x.undoSince(mark)
			return err
		}
	}
	return nil
}

func keyText(t *engine.Table, row []any) string {
	var parts []string
	for _, k := range t.KeyOf(row) {
		parts = append(parts, engine.ValueString(k))
	}
	return strings.Join(parts, ", ")
}

func (x *execCtx) undoMark() int {
	if x.conn.txn == nil {
		return 0
	}
	return len(x.conn.txn.undo)
}

// reread fetches the current version of a row by its key.
func (x *execCtx) reread(t *engine.Table, stale []any, where sqlfront.Expr) ([]any, bool) {
	i, ok := t.FindRow(t.KeyOf(stale))
	if !ok {
		return nil, false
	}
	row := t.Rows[i]
	if where == nil {
		return row, true
	}
	v, err := (&engine.EvalEnv{X: x, Rel: engine.TableSchema(t, strings.ToLower(t.Name)), Row: row}).Eval(where)
	if err != nil {
		return nil, false
	}
	b, _ := engine.Truth(v)
	return row, b
}

// dmlTick lets other sessions run, and stops on cancel or KILL, every 256
// rows a modification changes, or sooner when another session waits for
// the latch (latch.go).
func (x *execCtx) dmlTick(i int) *sqlfront.SQLError {
	if due := x.srv.mu.tick(); !due && i%engine.YieldEvery != engine.YieldEvery-1 {
		return nil
	}
	return x.yield()
}

// lockAndReread locks a row a modification will change (a table
// variable takes no locks): X on its clustered key (the U lock of the
// search converted), IX on its page. Then it reads the row's current
// version: another transaction may have changed or removed it while this
// one waited. The nonclustered entries are locked when they change
// (modify).
func (x *execCtx) lockAndReread(t *engine.Table, stale []any, where sqlfront.Expr) ([]any, bool, *sqlfront.SQLError) {
	if !isTableVar(t) {
		if err := x.lockEntry(x.ensureTxn(), t, t.Indexes[0], stale); err != nil {
			return nil, false, err
		}
	}
	row, ok := x.reread(t, stale, where)
	return row, ok, nil
}

// target is a row a modification will change, with the row of the FROM
// clause it was found in (for SET expressions).
type target struct {
	row []any
	env *engine.EvalEnv
}

// findTargets plans and runs the search for the rows an UPDATE or DELETE
// changes: FROM (or the table alone) and WHERE, at most TOP rows, each
// target row once.
func (x *execCtx) findTargets(r *engine.RunCtx, t *engine.Table, name []string, from sqlfront.TableRef, where sqlfront.Expr, top sqlfront.Expr, opts sqlfront.QueryOptions, st sqlfront.Stmt) (engine.Iter, func() ([]target, *sqlfront.SQLError), *sqlfront.SQLError) {
	qual := strings.ToLower(name[len(name)-1])
	if from == nil {
		from = &sqlfront.TableName{Parts: name}
	}
	sel := &sqlfront.SelectStmt{From: from, Where: where, Opts: opts}
	p := engine.NewPlanner(x, r)
	p.StmtRoot = st
	p.Opts = engine.MergeOptions(sqlfront.QueryOptions{MaxRecursion: -1}, opts)
	it, err := p.PlanFromWhere(sel)
	if err != nil {
		return nil, nil, err
	}
	var limit int64 = -1
	if n := x.conn.modes.rowcount; n > 0 {
		limit = n // SET ROWCOUNT, safety.go
	}
	if top != nil {
		v, err := (&engine.EvalEnv{X: x}).Eval(top)
		if err != nil {
			return nil, nil, err
		}
		n, ok := v.(int64)
		if !ok || n < 0 {
			return nil, nil, sqlfront.NewError(1014, 15, "A TOP or FETCH clause contains an invalid value.")
		}
		if limit < 0 || n < limit {
			limit = n
		}
	}
	schema := it.Node().Schema
	run := func() (out []target, err *sqlfront.SQLError) {
		if !isTableVar(t) {
			// the rows are read under U locks (ulocks.go); those of rows
			// that are not targets go when the search ends
			x.upd = &updateScan{tbl: t, taken: map[heldLock]bool{}}
			defer func() {
				if err == nil {
					x.updFinish(out)
				}
				x.upd = nil
			}()
		}
		if err := r.Open(it, nil); err != nil {
			return nil, err
		}
		defer r.Close(it)
		seen := map[string]bool{}
		for limit < 0 || int64(len(out)) < limit {
			tp, err := r.Next(it)
			if err != nil {
				return nil, err
			}
			if tp == nil {
				break
			}
			var row []any
			for _, s := range tp.Srcs {
				if sourceTable(s) == t && (s.Qual == qual || strings.EqualFold(t.Name, name[len(name)-1])) {
					row = s.Row
					break
				}
			}
			if row == nil {
				continue
			}
			k := keyText(t, row)
			if seen[k] {
				continue
			}
			seen[k] = true
			if err := r.Hold(tp); err != nil {
				return nil, err
			}
			out = append(out, target{row: row, env: &engine.EvalEnv{X: x, Rel: schema, Row: tp.Vals, Srcs: tp.Srcs}})
		}
		return out, nil
	}
	return it, run, nil
}

// resolveTarget finds the table an UPDATE/DELETE … FROM changes: the name
// may be an alias of the FROM clause.
func (x *execCtx) resolveTarget(name []string, from sqlfront.TableRef) (*engine.Table, *sqlfront.SQLError) {
	if from != nil && len(name) == 1 {
		var found *sqlfront.TableName
		var walk func(r sqlfront.TableRef)
		walk = func(r sqlfront.TableRef) {
			switch v := r.(type) {
			case *sqlfront.JoinRef:
				walk(v.Left)
				walk(v.Right)
			case *sqlfront.TableName:
				if strings.EqualFold(v.Alias, name[0]) {
					found = v
				}
			}
		}
		walk(from)
		if found != nil {
			return x.dmlTable(found.Parts)
		}
	}
	return x.dmlTable(name)
}

func (x *execCtx) execUpdate(s *sqlfront.UpdateStmt) error {
	t, err := x.resolveTarget(s.Table, s.From)
	if err != nil {
		return err
	}
	for _, set := range s.Sets {
		if t.Column(set.Column) < 0 || strings.HasPrefix(set.Column, "%%") {
			return engine.ErrInvalidColumn(set.Column)
		}
		if x.isIdentity(t, t.Column(set.Column)) {
			return sqlfront.NewError(8102, 16, "Cannot update identity column '%s'.", set.Column)
		}
	}
	if !isTableVar(t) && s.From == nil {
		if err := x.waitWhile(func() *connState { return x.dmlBlocker(t, s.Where) }, "LCK_M_U"); err != nil {
			return err
		}
	}
	r := engine.NewRunCtx(x)
	it, run, err := x.findTargets(r, t, s.Table, s.From, s.Where, s.Top, s.Opts, s)
	if err != nil {
		return err
	}
	root := dmlNode(t, "Update", it.Node())
	q, err := x.dmlRun(r, root, "UPDATE", s.Opts)
	if err != nil {
		return err
	}
	targets, err := run()
	if err != nil {
		x.endQuery(q, 0)
		return err
	}
	n, err := x.applyUpdates(t, s, targets)
	if err != nil {
		x.endQuery(q, 0)
		return err
	}
	return x.finishDML(q, tds.CmdUpdate, n, isTableVar(t))
}

// applyUpdates changes the target rows: lock, re-read, compute the SET
// Values, check them, then write all changes.
func (x *execCtx) applyUpdates(t *engine.Table, s *sqlfront.UpdateStmt, targets []target) (int64, *sqlfront.SQLError) {
	type change struct{ before, after []any }
	var changes []change
	mark := x.undoMark()
	where := s.Where
	if s.From != nil {
		where = nil
	}
	for i, tg := range targets {
		if err := x.dmlTick(i); err != nil {
			x.undoSince(mark)
			return 0, err
		}
		row, ok, err := x.lockAndReread(t, tg.row, where)
		if err != nil {
			x.undoSince(mark)
			return 0, err
		}
		if !ok {
			continue
		}
		after := append([]any{}, row...)
		env := tg.env
		if s.From == nil {
			env = &engine.EvalEnv{X: x, Rel: engine.TableSchema(t, strings.ToLower(s.Table[len(s.Table)-1])), Row: row}
		}
		for _, set := range s.Sets {
			i := t.Column(set.Column)
			v, err := env.Eval(set.Expr)
			if err != nil {
				x.undoSince(mark)
				return 0, err
			}
			cv, err := engine.ConvertValue(v, t.Columns[i].Type)
			if err != nil {
				x.undoSince(mark)
				return 0, err
			}
			if cv == nil && t.Columns[i].NotNull {
				x.undoSince(mark)
				return 0, sqlfront.NewError(515, 16, "Cannot insert the value NULL into column '%s', table '%s'; column does not allow nulls. UPDATE fails.", t.Columns[i].Name, t.DB.Name+"."+t.FullName())
			}
			after[i] = cv
		}
		changes = append(changes, change{row, after})
	}
	for _, ch := range changes {
		if isTableVar(t) {
			x.replaceRow(t, ch.before, ch.after)
			continue
		}
		if err := x.modify(t, "update", ch.before, ch.after); err != nil {
			x.undoSince(mark)
			return 0, err
		}
	}
	return int64(len(changes)), nil
}

func (x *execCtx) execDelete(s *sqlfront.DeleteStmt) error {
	t, err := x.resolveTarget(s.Table, s.From)
	if err != nil {
		return err
	}
	if !isTableVar(t) && s.From == nil {
		if err := x.waitWhile(func() *connState { return x.dmlBlocker(t, s.Where) }, "LCK_M_U"); err != nil {
			return err
		}
	}
	r := engine.NewRunCtx(x)
	it, run, err := x.findTargets(r, t, s.Table, s.From, s.Where, s.Top, s.Opts, s)
	if err != nil {
		return err
	}
	root := dmlNode(t, "Delete", it.Node())
	q, err := x.dmlRun(r, root, "DELETE", s.Opts)
	if err != nil {
		return err
	}
	targets, err := run()
	if err != nil {
		x.endQuery(q, 0)
		return err
	}
	where := s.Where
	if s.From != nil {
		where = nil
	}
	mark := x.undoMark()
	var deleted int64
	for i, tg := range targets {
		if err := x.dmlTick(i); err != nil {
			x.undoSince(mark)
			x.endQuery(q, 0)
			return err
		}
		if isTableVar(t) {
			x.removeRow(t, tg.row)
			deleted++
			continue
		}
		row, ok, err := x.lockAndReread(t, tg.row, where)
		if err != nil {
			x.undoSince(mark)
			x.endQuery(q, 0)
			return err
		}
		if !ok {
			continue
		}
		if err := x.modify(t, "delete", row, nil); err != nil {
			x.undoSince(mark)
			x.endQuery(q, 0)
			return err
		}
		deleted++
	}
	return x.finishDML(q, tds.CmdDelete, deleted, isTableVar(t))
}

// sourceTable is the base table a row of a plan came from, nil when it
// came from no table.
func sourceTable(s engine.RowSource) *engine.Table {
	if ix, ok := s.Ix.(*engine.Index); ok && ix != nil {
		return ix.Tbl
	}
	return nil
}

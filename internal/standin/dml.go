package standin

import (
	"strings"

	"github.com/queryreplay/queryreplay/internal/tds"
)

func (x *execCtx) execSelect(s *selectStmt) error {
	sc := x.srv.scenarioFor(x.stmtText)
	rel, err := x.runSelect(s, nil)
	if err != nil {
		return err
	}
	if sc != nil {
		x.simulate(sc, len(rel.rows))
	}
	if err := x.sendRelation(rel); err != nil {
		return err
	}
	return x.sendStatsXML(sc)
}

// sendStatsXML returns the actual plan as an extra result set when SET
// STATISTICS XML is ON, as SQL Server does
// (https://learn.microsoft.com/en-us/sql/t-sql/statements/set-statistics-xml-transact-sql).
func (x *execCtx) sendStatsXML(sc *Scenario) error {
	if !x.conn.statsXML || sc == nil || x.lastPlan == "" {
		return nil
	}
	rel := &relation{cols: []relCol{{name: "Microsoft SQL Server 2005 XML Showplan", typ: tXML}}, rows: [][]any{{x.lastPlan}}}
	return x.sendRelation(rel)
}

func (x *execCtx) dmlTable(parts []string) (*table, *SQLError) {
	display := strings.Join(parts, ".")
	db := x.conn.db
	if len(parts) == 3 {
		db = x.srv.dbByName(parts[0])
		if db == nil {
			return nil, errDatabaseMissing(parts[0])
		}
	}
	schema := ""
	if len(parts) >= 2 {
		schema = parts[len(parts)-2]
	}
	if strings.EqualFold(schema, "sys") {
		return nil, sqlErr(259, 16, "Ad hoc updates to system catalogs are not allowed.")
	}
	t := db.table(schema, parts[len(parts)-1])
	if t == nil {
		return nil, errInvalidObject(display)
	}
	return t, nil
}

func (x *execCtx) execInsert(s *insertStmt) error {
	t, err := x.dmlTable(s.Table)
	if err != nil {
		return err
	}
	colIdx := make([]int, 0, len(t.columns))
	if len(s.Columns) == 0 {
		for i := range t.columns {
			colIdx = append(colIdx, i)
		}
	} else {
		for _, c := range s.Columns {
			i := t.column(c)
			if i < 0 {
				return errInvalidColumn(c)
			}
			colIdx = append(colIdx, i)
		}
	}
	var newRows [][]any
	for _, vals := range s.Rows {
		if len(vals) != len(colIdx) {
			if len(vals) > len(colIdx) {
				return errColumnCount()
			}
			return sqlErr(109, 15, "There are more columns in the INSERT statement than values specified in the VALUES clause. The number of values in the VALUES clause must match the number of columns specified in the INSERT statement.")
		}
		row := make([]any, len(t.columns))
		env := &evalEnv{x: x}
		for i, e := range vals {
			v, err := env.eval(e)
			if err != nil {
				return err
			}
			cv, err := convertValue(v, t.columns[colIdx[i]].Type)
			if err != nil {
				return err
			}
			row[colIdx[i]] = cv
		}
		for i, c := range t.columns {
			if row[i] == nil && c.NotNull {
				return errNotNull(c.Name, t.db.name+"."+t.fullName())
			}
		}
		newRows = append(newRows, row)
	}
	newRows = x.limitDML(newRows) // SET ROWCOUNT, safety.go
	sc := x.srv.scenarioFor(x.stmtText)
	var st *simState
	if sc != nil {
		st = x.simStart(sc, len(newRows))
	}
	mark := x.undoMark()
	for _, row := range newRows {
		// the key lock first: an uncommitted insert of the same key by
		// another transaction makes this one wait, then fail as duplicate
		if err := x.lockRow(t, row); err != nil {
			x.undoSince(mark)
			return err
		}
		if _, dup := t.findRow(t.keyOf(row)); dup {
			var parts []string
			for _, k := range t.keyOf(row) {
				parts = append(parts, valueString(k))
			}
			x.undoSince(mark)
			return errDuplicateKey(t.pkName, t.fullName(), strings.Join(parts, ", "))
		}
		if err := x.modify(t, "insert", nil, row); err != nil {
			x.undoSince(mark)
			return err
		}
	}
	if st != nil {
		x.simFinish(st)
	}
	x.endAutocommit()
	if err := x.done(tds.CmdInsert, int64(len(newRows))); err != nil {
		return err
	}
	return x.sendStatsXML(sc)
}

func (x *execCtx) undoMark() int {
	if x.conn.txn == nil {
		return 0
	}
	return len(x.conn.txn.undo)
}

// reread fetches the current version of a row by its key and checks it
// still satisfies where.
func (x *execCtx) reread(t *table, stale []any, where expr) ([]any, bool) {
	i, ok := t.findRow(t.keyOf(stale))
	if !ok {
		return nil, false
	}
	row := t.rows[i]
	if where == nil {
		return row, true
	}
	rel := &relation{}
	for _, c := range t.columns {
		rel.cols = append(rel.cols, relCol{qual: strings.ToLower(t.name), name: c.Name, typ: c.Type})
	}
	v, err := (&evalEnv{x: x, rel: rel, row: row}).eval(where)
	if err != nil {
		return nil, false
	}
	b, _ := truth(v)
	return row, b
}

func (x *execCtx) matchingRows(t *table, where expr) ([][]any, *SQLError) {
	if err := x.waitWhile(func() *connState { return x.dmlBlocker(t, where) }, "LCK_M_U"); err != nil {
		return nil, err
	}
	rel := &relation{}
	for _, c := range t.columns {
		rel.cols = append(rel.cols, relCol{qual: strings.ToLower(t.name), name: c.Name, typ: c.Type})
	}
	var out [][]any
	for _, row := range t.rows {
		if where != nil {
			env := &evalEnv{x: x, rel: rel, row: row}
			v, err := env.eval(where)
			if err != nil {
				return nil, err
			}
			if b, _ := truth(v); !b {
				continue
			}
		}
		out = append(out, row)
	}
	return x.limitDML(out), nil // SET ROWCOUNT, safety.go
}

func (x *execCtx) execUpdate(s *updateStmt) error {
	t, err := x.dmlTable(s.Table)
	if err != nil {
		return err
	}
	rows, err := x.matchingRows(t, s.Where)
	if err != nil {
		return err
	}
	rel := &relation{}
	for _, c := range t.columns {
		rel.cols = append(rel.cols, relCol{name: c.Name, typ: c.Type})
	}
	type change struct{ before, after []any }
	var changes []change
	// a scenario's read phase (the seek that finds the rows) comes first
	sc := x.srv.scenarioFor(x.stmtText)
	var st *simState
	if sc != nil {
		st = x.simStart(sc, len(rows))
	}
	mark := x.undoMark()
	for _, stale := range rows {
		// lock, then re-read: another transaction may have changed or
		// removed the row while this one waited
		if err := x.lockRow(t, stale); err != nil {
			x.undoSince(mark)
			return err
		}
		row, ok := x.reread(t, stale, s.Where)
		if !ok {
			continue
		}
		after := append([]any{}, row...)
		env := &evalEnv{x: x, rel: rel, row: row}
		for _, set := range s.Sets {
			i := t.column(set.Column)
			if i < 0 {
				return errInvalidColumn(set.Column)
			}
			v, err := env.eval(set.Expr)
			if err != nil {
				return err
			}
			cv, err := convertValue(v, t.columns[i].Type)
			if err != nil {
				return err
			}
			if cv == nil && t.columns[i].NotNull {
				return sqlErr(515, 16, "Cannot insert the value NULL into column '%s', table '%s'; column does not allow nulls. UPDATE fails.", t.columns[i].Name, t.db.name+"."+t.fullName())
			}
			after[i] = cv
		}
		changes = append(changes, change{row, after})
	}
	for _, ch := range changes {
		if err := x.modify(t, "update", ch.before, ch.after); err != nil {
			x.undoSince(mark)
			return err
		}
	}
	if st != nil {
		x.simFinish(st)
	}
	x.endAutocommit()
	if err := x.done(tds.CmdUpdate, int64(len(changes))); err != nil {
		return err
	}
	return x.sendStatsXML(sc)
}

func (x *execCtx) execDelete(s *deleteStmt) error {
	t, err := x.dmlTable(s.Table)
	if err != nil {
		return err
	}
	rows, err := x.matchingRows(t, s.Where)
	if err != nil {
		return err
	}
	sc := x.srv.scenarioFor(x.stmtText)
	var st *simState
	if sc != nil {
		st = x.simStart(sc, len(rows))
	}
	mark := x.undoMark()
	deleted := 0
	for _, stale := range rows {
		if err := x.lockRow(t, stale); err != nil {
			x.undoSince(mark)
			return err
		}
		row, ok := x.reread(t, stale, s.Where)
		if !ok {
			continue
		}
		if err := x.modify(t, "delete", row, nil); err != nil {
			x.undoSince(mark)
			return err
		}
		deleted++
	}
	if st != nil {
		x.simFinish(st)
	}
	x.endAutocommit()
	if err := x.done(tds.CmdDelete, int64(deleted)); err != nil {
		return err
	}
	return x.sendStatsXML(sc)
}

package sqlfront

import (
	"encoding/hex"
	"strconv"
	"strings"
)

// reserved lists the T-SQL reserved keywords the parser meets; SQL Server
// reports a misplaced one as Msg 156 ("near the keyword") instead of Msg 102.
// https://learn.microsoft.com/en-us/sql/t-sql/language-elements/reserved-keywords-transact-sql
var reserved = map[string]bool{
	"ADD": true, "ALL": true, "ALTER": true, "AND": true, "ANY": true, "AS": true, "ASC": true, "BEGIN": true,
	"BETWEEN": true, "BY": true, "CASE": true, "CHECKPOINT": true, "COMMIT": true, "CREATE": true, "CROSS": true,
	"DBCC": true, "DECLARE": true, "DELETE": true, "DESC": true, "DISTINCT": true, "DROP": true, "ELSE": true,
	"END": true, "EXEC": true, "EXECUTE": true, "EXISTS": true, "FROM": true, "FULL": true, "GROUP": true,
	"HAVING": true, "IF": true, "IN": true, "INDEX": true, "INNER": true, "INSERT": true, "INTO": true, "IS": true,
	"JOIN": true, "LEFT": true, "LIKE": true, "NOT": true, "NULL": true, "ON": true, "OPTION": true, "OR": true,
	"ORDER": true, "OUTER": true, "PRINT": true, "RIGHT": true, "ROLLBACK": true, "SELECT": true, "SET": true,
	"TABLE": true, "THEN": true, "TOP": true, "TRAN": true, "TRANSACTION": true, "UPDATE": true, "USE": true,
	"VALUES": true, "WAITFOR": true, "WHEN": true, "WHERE": true, "WITH": true, "OFF": false,
	"UNION": true, "EXCEPT": true, "INTERSECT": true, "OVER": true, "FETCH": true, "PERCENT": true, "MERGE": true,
	"TRUNCATE": true, "PRIMARY": true, "KEY": true, "DEFAULT": true, "CONSTRAINT": true, "IDENTITY": true,
	"WHILE": true, "RETURN": true, "BREAK": true, "CONTINUE": true, "CLUSTERED": true, "NONCLUSTERED": true, "UNIQUE": true, "CHECK": true,
	"FOREIGN": true, "REFERENCES": true, "PIVOT": true, "UNPIVOT": true, "SOME": true,
}

type parser struct {
	toks  []token
	i     int
	loops int // WHILE bodies being parsed (BREAK/CONTINUE are valid inside)
	depth int // expressions being parsed, bounded by maxNesting
}

// ParseBatch parses a whole batch into statements.
func ParseBatch(src string) ([]Stmt, *SQLError) {
	stmts, _, err := ParseBatchSpans(src)
	return stmts, err
}

// StmtSpan locates a statement in its batch (byte offsets, 1-based line),
// for the statement-level XE events.
type StmtSpan struct {
	Start, End, Line int
}

func ParseBatchSpans(src string) ([]Stmt, []StmtSpan, *SQLError) {
	toks, err := lex(src)
	if err != nil {
		return nil, nil, err
	}
	p := &parser{toks: toks}
	var out []Stmt
	var spans []StmtSpan
	for {
		for p.peek().isOp(";") {
			p.i++
		}
		if p.peek().kind == tokEOF {
			return out, spans, nil
		}
		first := p.peek()
		if len(out) > 0 && p.isProcDDL() {
			return nil, nil, errFirstInBatch(first.line) // parse_proc.go
		}
		var s Stmt
		var err *SQLError
		if len(out) == 0 && p.bareProcCall() {
			s, err = p.execCall("") // parse_proc.go
		} else {
			s, err = p.statement()
		}
		if err != nil {
			if err.Line == 1 {
				err.Line = int32(p.peek().line)
			}
			return nil, nil, err
		}
		last := p.toks[p.i-1]
		out = append(out, s)
		spans = append(spans, StmtSpan{Start: first.pos, End: last.pos + len(last.raw), Line: first.line})
	}
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) peekAt(k int) token {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return p.toks[len(p.toks)-1]
}
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

// fail reports the current token the way SQL Server does.
func (p *parser) fail() *SQLError {
	t := p.peek()
	var e *SQLError
	switch {
	case t.kind == tokEOF:
		prev := token{}
		if p.i > 0 {
			prev = p.toks[p.i-1]
		}
		if prev.kind == tokIdent && reserved[prev.kw()] {
			e = errSyntaxNearKeyword(prev.kw())
		} else {
			e = ErrSyntaxNear(prev.display())
		}
	case t.kind == tokIdent && reserved[t.kw()]:
		e = errSyntaxNearKeyword(t.kw())
	default:
		e = ErrSyntaxNear(t.display())
	}
	e.Line = int32(t.line)
	return e
}

func (p *parser) accept(kw string) bool {
	if p.peek().is(kw) {
		p.i++
		return true
	}
	return false
}

func (p *parser) acceptOp(op string) bool {
	if p.peek().isOp(op) {
		p.i++
		return true
	}
	return false
}

func (p *parser) expect(kw string) *SQLError {
	if !p.accept(kw) {
		return p.fail()
	}
	return nil
}

func (p *parser) expectOp(op string) *SQLError {
	if !p.acceptOp(op) {
		return p.fail()
	}
	return nil
}

// ident reads one identifier (plain non-reserved, or quoted).
func (p *parser) ident() (string, *SQLError) {
	t := p.peek()
	if t.kind == tokQuoted || (t.kind == tokIdent && !reserved[t.kw()]) {
		p.i++
		return t.text, nil
	}
	return "", p.fail()
}

// multiName reads a dotted name such as db.schema.table (empty middle parts
// allowed: db..table).
func (p *parser) multiName() ([]string, *SQLError) {
	first, err := p.ident()
	if err != nil {
		return nil, err
	}
	parts := []string{first}
	for p.peek().isOp(".") {
		p.i++
		if p.peek().isOp(".") {
			parts = append(parts, "")
			continue
		}
		n, err := p.ident()
		if err != nil {
			return nil, err
		}
		parts = append(parts, n)
	}
	return parts, nil
}

// statement parses one statement, dispatching on its first keyword.
func (p *parser) statement() (Stmt, *SQLError) {
	t := p.peek()
	if t.kind != tokIdent {
		if t.isOp("(") && p.parenthesisedQuery() {
			return p.selectStatement()
		}
		return nil, p.fail()
	}
	switch t.kw() {
	case "SELECT", "WITH":
		return p.selectStatement()
	case "MERGE":
		return p.mergeStatement()
	case "TRUNCATE":
		return p.truncateStatement()
	case "INSERT":
		return p.insertStatement()
	case "UPDATE":
		return p.updateStatement()
	case "DELETE":
		return p.deleteStatement()
	case "BEGIN":
		return p.beginStatement()
	case "SAVE": // SAVE TRAN[SACTION] savepoint
		return p.saveTranStatement()
	case "COMMIT", "ROLLBACK":
		return p.endTranStatement(t)
	case "WHILE":
		return p.whileStatement()
	case "BREAK", "CONTINUE":
		return p.loopControlStatement(t)
	case "IF":
		return p.ifStatement()
	case "SET":
		return p.setStatement()
	case "DECLARE":
		return p.declareStatement()
	case "CHECKPOINT":
		p.i++
		if p.peek().kind == tokNumber {
			p.i++ // CHECKPOINT duration
		}
		return &CheckpointStmt{}, nil
	case "DBCC":
		return p.dbccStatement()
	case "USE":
		p.i++
		db, err := p.ident()
		if err != nil {
			return nil, err
		}
		return &UseStmt{DB: db}, nil
	case "WAITFOR":
		return p.waitforStatement()
	case "EXEC", "EXECUTE":
		return p.execStatement()
	case "KILL":
		return p.killStatement() // parse_admin.go
	case "RECEIVE", "SEND":
		return p.brokerStatement() // parse_admin.go
	case "END":
		if p.peekAt(1).is("CONVERSATION") {
			return p.brokerStatement()
		}
	case "PRINT":
		p.i++
		e, err := p.expression()
		if err != nil {
			return nil, err
		}
		return &PrintStmt{Expr: e}, nil
	case "RETURN":
		return p.returnStmt() // parse_proc.go
	case "CREATE":
		if p.isProcDDL() {
			return p.createProc() // parse_proc.go
		}
		if p.peekAt(1).is("EVENT") {
			return p.createEventSession()
		}
		if p.peekAt(1).is("TABLE") {
			p.i += 2
			return p.createTable()
		}
	case "ALTER":
		if p.isProcDDL() {
			return p.createProc()
		}
		if p.peekAt(1).is("EVENT") {
			return p.alterEventSession()
		}
	case "DROP":
		if p.peekAt(1).is("PROC") || p.peekAt(1).is("PROCEDURE") {
			return p.dropProc()
		}
		if p.peekAt(1).is("EVENT") {
			return p.dropEventSession()
		}
		if p.peekAt(1).is("TABLE") {
			p.i += 2
			return p.dropTable()
		}
	}
	return nil, p.fail()
}

// truncateStatement parses TRUNCATE TABLE name.
func (p *parser) truncateStatement() (Stmt, *SQLError) {
	p.i++
	if err := p.expect("TABLE"); err != nil {
		return nil, err
	}
	name, err := p.tableObjectName()
	if err != nil {
		return nil, err
	}
	return &TruncateStmt{Table: name}, nil
}

// beginStatement parses BEGIN TRAN[SACTION] [name] and BEGIN … END blocks;
// BEGIN TRY and BEGIN DISTRIBUTED are syntax errors here.
func (p *parser) beginStatement() (Stmt, *SQLError) {
	p.i++
	if p.accept("TRAN") || p.accept("TRANSACTION") {
		name := ""
		if nt := p.peek(); nt.kind == tokIdent && !reserved[nt.kw()] || nt.kind == tokQuoted {
			name = nt.text
			p.i++
		}
		return &BeginTranStmt{Name: name}, nil
	}
	if p.peek().is("TRY") || p.peek().is("DISTRIBUTED") {
		return nil, p.fail()
	}
	var block BlockStmt
	for !p.peek().is("END") {
		if p.peek().kind == tokEOF {
			return nil, p.fail()
		}
		if p.acceptOp(";") {
			continue
		}
		s, err := p.statement()
		if err != nil {
			return nil, err
		}
		block.Stmts = append(block.Stmts, s)
	}
	p.i++
	return &block, nil
}

// saveTranStatement parses SAVE TRAN[SACTION] savepoint (run by internal/standin/savepoint.go).
func (p *parser) saveTranStatement() (Stmt, *SQLError) {
	p.i++
	if !p.accept("TRAN") && !p.accept("TRANSACTION") {
		return nil, p.fail()
	}
	nt := p.peek()
	if !(nt.kind == tokIdent && !reserved[nt.kw()] || nt.kind == tokQuoted) {
		return nil, p.fail()
	}
	p.i++
	return &SaveTranStmt{Name: nt.text}, nil
}

// endTranStatement parses COMMIT and ROLLBACK [TRAN[SACTION] | WORK] [name];
// t is the COMMIT or ROLLBACK keyword.
func (p *parser) endTranStatement(t token) (Stmt, *SQLError) {
	p.i++
	if !(p.accept("TRAN") || p.accept("TRANSACTION")) {
		p.accept("WORK")
	}
	name := ""
	if nt := p.peek(); nt.kind == tokIdent && !reserved[nt.kw()] || nt.kind == tokQuoted {
		name = nt.text
		p.i++
	}
	if asciiEqualFold(t.text, "COMMIT") {
		return &CommitStmt{Name: name}, nil
	}
	return &RollbackStmt{Name: name}, nil
}

// whileStatement parses WHILE cond statement, counting loop depth so that
// BREAK and CONTINUE know whether they are inside one.
func (p *parser) whileStatement() (Stmt, *SQLError) {
	p.i++
	cond, err := p.expression()
	if err != nil {
		return nil, err
	}
	p.loops++
	body, err := p.statement()
	p.loops--
	if err != nil {
		return nil, err
	}
	return &WhileStmt{Cond: cond, Body: body}, nil
}

// loopControlStatement parses BREAK and CONTINUE (t), Msg 135/136 outside
// a WHILE.
func (p *parser) loopControlStatement(t token) (Stmt, *SQLError) {
	p.i++
	if p.loops == 0 {
		if asciiEqualFold(t.text, "BREAK") {
			return nil, NewError(135, 15, "Cannot use a BREAK statement outside the scope of a WHILE statement.")
		}
		return nil, NewError(136, 15, "Cannot use a CONTINUE statement outside the scope of a WHILE statement.")
	}
	return &LoopControlStmt{Break: asciiEqualFold(t.text, "BREAK")}, nil
}

// ifStatement parses IF cond statement [ELSE statement].
func (p *parser) ifStatement() (Stmt, *SQLError) {
	p.i++
	cond, err := p.expression()
	if err != nil {
		return nil, err
	}
	then, err := p.statement()
	if err != nil {
		return nil, err
	}
	s := &IfStmt{Cond: cond, Then: then}
	p.acceptOp(";")
	if p.accept("ELSE") {
		if s.Else, err = p.statement(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// waitforStatement parses WAITFOR DELAY 'time'; WAITFOR (RECEIVE …) is
// Service Broker's (parse_admin.go).
func (p *parser) waitforStatement() (Stmt, *SQLError) {
	if p.peekAt(1).isOp("(") {
		return p.brokerStatement() // WAITFOR (RECEIVE …), parse_admin.go
	}
	p.i++
	if err := p.expect("DELAY"); err != nil {
		return nil, err
	}
	d := p.next()
	if d.kind != tokString {
		p.i--
		return nil, p.fail()
	}
	return &WaitforStmt{Delay: d.text}, nil
}

// execStatement parses EXEC[UTE] proc [@name =] arg, ….
func (p *parser) execStatement() (Stmt, *SQLError) {
	p.i++
	status := ""
	if p.peek().kind == tokVariable && p.peekAt(1).isOp("=") {
		status = p.next().text
		p.i++
	}
	return p.execCall(status) // parse_proc.go
}

// startsStatement reports whether the current token begins a new statement,
// which T-SQL allows without a separating semicolon.
func (p *parser) startsStatement() bool {
	t := p.peek()
	if t.kind != tokIdent {
		return false
	}
	switch t.kw() {
	case "SELECT", "INSERT", "UPDATE", "DELETE", "BEGIN", "COMMIT", "ROLLBACK", "SAVE", "IF", "SET", "DECLARE",
		"CHECKPOINT", "DBCC", "USE", "WAITFOR", "EXEC", "EXECUTE", "PRINT", "CREATE", "ALTER", "DROP", "END", "ELSE",
		"MERGE", "TRUNCATE", "WHILE", "BREAK", "CONTINUE", "RETURN",
		"KILL", "RECEIVE", "SEND":
		return true
	}
	return false
}

func (p *parser) failAt(i int) *SQLError {
	save := p.i
	p.i = i
	e := p.fail()
	p.i = save
	return e
}

func (p *parser) selectItem() (SelectItem, *SQLError) {
	if p.acceptOp("*") {
		return SelectItem{Star: true}, nil
	}
	// alias.* form
	if (p.peek().kind == tokIdent || p.peek().kind == tokQuoted) && p.peekAt(1).isOp(".") && p.peekAt(2).isOp("*") {
		q := p.next().text
		p.i += 2
		return SelectItem{Star: true, StarQual: q}, nil
	}
	// alias = expr form
	if (p.peek().kind == tokQuoted || p.peek().kind == tokIdent && !reserved[p.peek().kw()]) && p.peekAt(1).isOp("=") {
		alias := p.next().text
		p.i++
		e, err := p.expression()
		if err != nil {
			return SelectItem{}, err
		}
		return SelectItem{Expr: e, Alias: alias}, nil
	}
	e, err := p.expression()
	if err != nil {
		return SelectItem{}, err
	}
	item := SelectItem{Expr: e}
	if p.accept("AS") {
		t := p.next()
		if t.kind != tokIdent && t.kind != tokQuoted && t.kind != tokString {
			p.i--
			return item, p.fail()
		}
		item.Alias = t.text
	} else if t := p.peek(); t.kind == tokQuoted || t.kind == tokString || t.kind == tokIdent && !reserved[t.kw()] {
		p.i++
		item.Alias = t.text
	}
	return item, nil
}

func (p *parser) tableSources() (TableRef, *SQLError) {
	left, err := p.tableSource()
	if err != nil {
		return nil, err
	}
	for {
		switch {
		case p.acceptOp(","):
			right, err := p.tableSource()
			if err != nil {
				return nil, err
			}
			left = &JoinRef{Left: left, Right: right, Kind: "CROSS"}
		case p.peek().is("JOIN") || p.peek().is("INNER") || isJoinHint(p.peek()) && p.peekAt(1).is("JOIN"):
			p.accept("INNER")
			hint := p.joinHint()
			if err := p.expect("JOIN"); err != nil {
				return nil, err
			}
			right, err := p.tableSource()
			if err != nil {
				return nil, err
			}
			if err := p.expect("ON"); err != nil {
				return nil, err
			}
			on, err := p.expression()
			if err != nil {
				return nil, err
			}
			left = &JoinRef{Left: left, Right: right, Kind: "INNER", On: on, Hint: hint}
		case p.peek().is("LEFT") || p.peek().is("RIGHT") || p.peek().is("FULL"):
			kind := p.next().kw()
			p.accept("OUTER")
			hint := p.joinHint()
			if err := p.expect("JOIN"); err != nil {
				return nil, err
			}
			right, err := p.tableSource()
			if err != nil {
				return nil, err
			}
			if err := p.expect("ON"); err != nil {
				return nil, err
			}
			on, err := p.expression()
			if err != nil {
				return nil, err
			}
			left = &JoinRef{Left: left, Right: right, Kind: kind, On: on, Hint: hint}
		case p.peek().is("CROSS"):
			p.i++
			kind := "CROSS"
			if p.accept("APPLY") {
				kind = "APPLY"
			} else if err := p.expect("JOIN"); err != nil {
				return nil, err
			}
			right, err := p.tableSource()
			if err != nil {
				return nil, err
			}
			left = &JoinRef{Left: left, Right: right, Kind: kind}
		case p.peek().is("OUTER") && p.peekAt(1).is("APPLY"):
			p.i += 2
			right, err := p.tableSource()
			if err != nil {
				return nil, err
			}
			left = &JoinRef{Left: left, Right: right, Kind: "OUTER APPLY"}
		default:
			return left, nil
		}
	}
}

func (p *parser) alias() (string, *SQLError) {
	if p.accept("AS") {
		return p.ident()
	}
	t := p.peek()
	if t.kind == tokQuoted || t.kind == tokIdent && !reserved[t.kw()] && !isJoinWord(t.text) {
		p.i++
		return t.text, nil
	}
	return "", nil
}

func isJoinHint(t token) bool {
	return t.is("LOOP") || t.is("HASH") || t.is("MERGE") || t.is("REMOTE")
}

// joinHint reads an optional LOOP/HASH/MERGE join hint.
func (p *parser) joinHint() string {
	if isJoinHint(p.peek()) && p.peekAt(1).is("JOIN") {
		return p.next().kw()
	}
	return ""
}

// parenthesisedQuery tells whether "(" starts a query: the first token
// after the opening parentheses is SELECT or WITH.
func (p *parser) parenthesisedQuery() bool {
	k := p.i
	for p.toks[k].isOp("(") {
		if k-p.i > maxNesting {
			return true // parsed as a query, which raises Msg 191
		}
		k++
	}
	return p.toks[k].is("SELECT") || p.toks[k].is("WITH")
}

func isJoinWord(s string) bool {
	switch asciiUpper(s) {
	case "APPLY", "OUTER", "CROSS", "LEFT", "INNER", "JOIN", "FULL", "RIGHT", "LOOP", "HASH", "MERGE", "OFFSET", "WINDOW":
		return true
	}
	return false
}

// tableSource parses one FROM item: a derived table or VALUES constructor,
// a table-valued function, or a table name with its alias and hints.
func (p *parser) tableSource() (TableRef, *SQLError) {
	if p.acceptOp("(") {
		return p.derivedTable()
	}
	name, err := p.tableObjectName()
	if err != nil {
		return nil, err
	}
	if p.acceptOp("(") {
		return p.tableFunction(name)
	}
	t := &TableName{Parts: name}
	if t.Alias, err = p.alias(); err != nil {
		return nil, err
	}
	if p.peek().is("WITH") && p.peekAt(1).isOp("(") {
		if err := p.tableHints(t); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// DerivedTable parses a parenthesised query or VALUES constructor after its
// "(", then its required alias and optional column list.
func (p *parser) derivedTable() (TableRef, *SQLError) {
	d := &DerivedTable{}
	switch {
	case p.peek().is("SELECT") || p.peek().is("WITH") || p.peek().isOp("(") && p.parenthesisedQuery():
		sel, err := p.selectStatement()
		if err != nil {
			return nil, err
		}
		d.Sel = sel
	case p.accept("VALUES"):
		if err := p.valuesRows(d); err != nil {
			return nil, err
		}
	default:
		return nil, p.fail()
	}
	if err := p.expectOp(")"); err != nil {
		return nil, err
	}
	a, err := p.alias()
	if err != nil {
		return nil, err
	}
	if a == "" {
		return nil, p.fail()
	}
	d.Alias = a
	if p.acceptOp("(") {
		for {
			c, err := p.ident()
			if err != nil {
				return nil, err
			}
			d.Columns = append(d.Columns, c)
			if !p.acceptOp(",") {
				break
			}
		}
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
	}
	if d.Values != nil && len(d.Columns) != len(d.Values[0]) {
		return nil, NewError(8158, 16, "'%s' has more columns than were specified in the column list.", d.Alias)
	}
	return d, nil
}

// valuesRows parses a table value constructor's rows, which must all have
// the same number of columns.
func (p *parser) valuesRows(d *DerivedTable) *SQLError {
	for {
		if err := p.expectOp("("); err != nil {
			return err
		}
		var row []Expr
		for {
			e, err := p.expression()
			if err != nil {
				return err
			}
			row = append(row, e)
			if !p.acceptOp(",") {
				break
			}
		}
		if err := p.expectOp(")"); err != nil {
			return err
		}
		if len(d.Values) > 0 && len(row) != len(d.Values[0]) {
			return NewError(10709, 16, "The number of columns for each row in a table value constructor must be the same.")
		}
		d.Values = append(d.Values, row)
		if !p.acceptOp(",") {
			break
		}
	}
	return nil
}

// tableFunction parses a table-valued function's arguments after its "("
// and its alias.
func (p *parser) tableFunction(name []string) (TableRef, *SQLError) {
	f := &TableFunc{Parts: name}
	var err *SQLError
	if len(name) == 1 && strings.EqualFold(name[0], "OPENROWSET") && p.accept("BULK") {
		// OPENROWSET(BULK N'path', SINGLE_BLOB): only the single-value
		// form is emulated
		e, err := p.expression()
		if err != nil {
			return nil, err
		}
		f.Args = []Expr{e}
		if err := p.expectOp(","); err != nil {
			return nil, err
		}
		if !p.accept("SINGLE_BLOB") {
			return nil, p.fail()
		}
		f.Bulk = "SINGLE_BLOB"
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
		if f.Alias, err = p.alias(); err != nil {
			return nil, err
		}
		return f, nil
	}
	if !p.peek().isOp(")") {
		for {
			e, err := p.expression()
			if err != nil {
				return nil, err
			}
			f.Args = append(f.Args, e)
			if !p.acceptOp(",") {
				break
			}
		}
	}
	if err := p.expectOp(")"); err != nil {
		return nil, err
	}
	if f.Alias, err = p.alias(); err != nil {
		return nil, err
	}
	return f, nil
}

// tableHints parses WITH (INDEX(...) | INDEX = ... | hint, ...) after a table name.
func (p *parser) tableHints(t *TableName) *SQLError {
	p.i += 2
	for {
		switch {
		case p.accept("INDEX"):
			if p.acceptOp("(") {
				h := p.next()
				if h.kind != tokIdent && h.kind != tokQuoted && h.kind != tokNumber {
					p.i--
					return p.fail()
				}
				t.IndexHint = h.text
				if err := p.expectOp(")"); err != nil {
					return err
				}
			} else if p.acceptOp("=") {
				h := p.next()
				t.IndexHint = h.text
			} else {
				return p.fail()
			}
		case p.peek().kind == tokIdent:
			t.Hints = append(t.Hints, p.next().kw())
		default:
			return p.fail()
		}
		if !p.acceptOp(",") {
			break
		}
	}
	if err := p.expectOp(")"); err != nil {
		return err
	}
	return nil
}

func (p *parser) insertStatement() (Stmt, *SQLError) {
	p.i++
	p.accept("INTO")
	name, err := p.tableObjectName()
	if err != nil {
		return nil, err
	}
	s := &InsertStmt{Table: name}
	if p.peek().isOp("(") && !p.parenthesisedQuery() {
		p.i++
		if s.Columns, err = p.identList(); err != nil {
			return nil, err
		}
	}
	if p.peek().is("SELECT") || p.peek().is("WITH") || p.peek().isOp("(") {
		if s.Sel, err = p.selectStatement(); err != nil {
			return nil, err
		}
		return s, nil
	}
	if p.peek().is("DEFAULT") && p.peekAt(1).is("VALUES") {
		p.i += 2
		s.Rows = [][]Expr{nil}
		return s, nil
	}
	if err := p.expect("VALUES"); err != nil {
		return nil, err
	}
	for {
		if err := p.expectOp("("); err != nil {
			return nil, err
		}
		var row []Expr
		for {
			e, err := p.expression()
			if err != nil {
				return nil, err
			}
			row = append(row, e)
			if !p.acceptOp(",") {
				break
			}
		}
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
		s.Rows = append(s.Rows, row)
		if !p.acceptOp(",") {
			break
		}
	}
	return s, nil
}

// dmlTop reads an optional TOP (n) of UPDATE/DELETE.
func (p *parser) dmlTop() (Expr, *SQLError) {
	if !p.accept("TOP") {
		return nil, nil
	}
	var top Expr
	var percent, ties bool
	if err := p.topClause(&top, &percent, &ties); err != nil {
		return nil, err
	}
	if percent || ties {
		return nil, p.failAt(p.i - 1)
	}
	return top, nil
}

// dmlTail parses the optional FROM, WHERE and OPTION of UPDATE/DELETE.
func (p *parser) dmlTail(from *TableRef, where *Expr, opts *QueryOptions) *SQLError {
	var err *SQLError
	if p.accept("FROM") {
		if *from, err = p.tableSources(); err != nil {
			return err
		}
	}
	if p.accept("WHERE") {
		if p.peek().is("CURRENT") {
			return p.fail() // cursors are not emulated
		}
		if *where, err = p.expression(); err != nil {
			return err
		}
	}
	if p.accept("OPTION") {
		return p.queryOptions(opts)
	}
	return nil
}

func (p *parser) updateStatement() (Stmt, *SQLError) {
	p.i++
	top, err := p.dmlTop()
	if err != nil {
		return nil, err
	}
	name, err := p.tableObjectName()
	if err != nil {
		return nil, err
	}
	s := &UpdateStmt{Top: top, Table: name, Opts: QueryOptions{MaxRecursion: -1}}
	if p.peek().is("WITH") && p.peekAt(1).isOp("(") {
		// table hints on the target (ROWLOCK, …) change nothing here
		for !p.acceptOp(")") {
			if p.next().kind == tokEOF {
				return nil, p.fail()
			}
		}
	}
	if err := p.expect("SET"); err != nil {
		return nil, err
	}
	for {
		col, err := p.multiName()
		if err != nil {
			return nil, err
		}
		op := p.peek()
		if !(op.isOp("=") || op.isOp("+=") || op.isOp("-=") || op.isOp("*=") || op.isOp("/=")) {
			return nil, p.fail()
		}
		p.i++
		e, err := p.expression()
		if err != nil {
			return nil, err
		}
		if op.text != "=" {
			e = &BinaryExpr{Op: op.text[:1], L: &ColRef{Parts: col}, R: e}
		}
		s.Sets = append(s.Sets, setClause{Column: col[len(col)-1], Expr: e})
		if !p.acceptOp(",") {
			break
		}
	}
	if err := p.dmlTail(&s.From, &s.Where, &s.Opts); err != nil {
		return nil, err
	}
	return s, nil
}

func (p *parser) deleteStatement() (Stmt, *SQLError) {
	p.i++
	top, err := p.dmlTop()
	if err != nil {
		return nil, err
	}
	p.accept("FROM")
	name, err := p.tableObjectName()
	if err != nil {
		return nil, err
	}
	s := &DeleteStmt{Top: top, Table: name, Opts: QueryOptions{MaxRecursion: -1}}
	if err := p.dmlTail(&s.From, &s.Where, &s.Opts); err != nil {
		return nil, err
	}
	return s, nil
}

// setStatement handles SET <option>[, <option>] ON|OFF, SET TRANSACTION
// ISOLATION LEVEL …, SET LOCK_TIMEOUT n and SET @var = expr.
func (p *parser) setStatement() (Stmt, *SQLError) {
	p.i++
	if p.peek().kind == tokVariable {
		v := p.next().text
		if err := p.expectOp("="); err != nil {
			return nil, err
		}
		e, err := p.expression()
		if err != nil {
			return nil, err
		}
		return &SetVarStmt{Var: v, Expr: e}, nil
	}
	if p.accept("TRANSACTION") {
		if err := p.expect("ISOLATION"); err != nil {
			return nil, err
		}
		if err := p.expect("LEVEL"); err != nil {
			return nil, err
		}
		var words []string
		for p.peek().kind == tokIdent && !p.startsStatement() {
			words = append(words, p.next().kw())
		}
		level := strings.Join(words, " ")
		switch level {
		case "READ UNCOMMITTED", "READ COMMITTED", "REPEATABLE READ", "SNAPSHOT", "SERIALIZABLE":
			return &SetOptionStmt{Options: []string{"TRANSACTION ISOLATION LEVEL"}, Value: level}, nil
		}
		return nil, p.fail()
	}
	var opts []string
	for {
		t := p.next()
		if t.kind != tokIdent {
			p.i--
			return nil, p.fail()
		}
		opt := t.kw()
		if opt == "STATISTICS" {
			t2 := p.next()
			opt += " " + t2.kw()
		}
		opts = append(opts, opt)
		if !p.acceptOp(",") {
			break
		}
	}
	if len(opts) == 1 {
		switch opts[0] {
		case "LOCK_TIMEOUT", "DEADLOCK_PRIORITY", "ROWCOUNT", "TEXTSIZE", "DATEFIRST", "LANGUAGE", "DATEFORMAT":
			v := p.next()
			if v.kind == tokOp && v.text == "-" {
				v = p.next()
				v.text = "-" + v.text
			}
			if v.kind == tokEOF {
				return nil, p.fail()
			}
			return &SetOptionStmt{Options: opts, Value: v.text}, nil
		}
	}
	switch {
	case p.accept("ON"):
		return &SetOptionStmt{Options: opts, Value: "ON"}, nil
	case p.accept("OFF"):
		return &SetOptionStmt{Options: opts, Value: "OFF"}, nil
	}
	return nil, p.fail()
}

func (p *parser) declareStatement() (Stmt, *SQLError) {
	p.i++
	s := &DeclareStmt{}
	for {
		v := p.next()
		if v.kind != tokVariable {
			p.i--
			return nil, p.fail()
		}
		p.accept("AS")
		if p.accept("TABLE") {
			t, err := p.columnDefs([]string{v.text})
			if err != nil {
				return nil, err
			}
			s.Vars = append(s.Vars, declareVar{Name: v.text, Table: t})
			if !p.acceptOp(",") {
				break
			}
			continue
		}
		typ, err := p.typeName()
		if err != nil {
			return nil, err
		}
		d := declareVar{Name: v.text, Type: typ}
		if p.acceptOp("=") {
			if d.Init, err = p.expression(); err != nil {
				return nil, err
			}
		}
		s.Vars = append(s.Vars, d)
		if !p.acceptOp(",") {
			break
		}
	}
	return s, nil
}

func (p *parser) typeName() (SQLType, *SQLError) {
	t := p.next()
	if t.kind != tokIdent && t.kind != tokQuoted {
		p.i--
		return SQLType{}, p.fail()
	}
	name := t.text
	if p.peek().isOp(".") && strings.EqualFold(name, "sys") || strings.EqualFold(name, "dbo") && p.peek().isOp(".") {
		p.i++
		n := p.next()
		name = n.text
	}
	size, scale, max := 0, -1, false
	if p.acceptOp("(") {
		a := p.next()
		switch {
		case a.is("MAX"):
			max = true
		case a.kind == tokNumber:
			size, _ = strconv.Atoi(a.text)
		default:
			p.i--
			return SQLType{}, p.fail()
		}
		if p.acceptOp(",") {
			sc := p.next()
			if sc.kind != tokNumber {
				p.i--
				return SQLType{}, p.fail()
			}
			scale, _ = strconv.Atoi(sc.text)
		}
		if err := p.expectOp(")"); err != nil {
			return SQLType{}, err
		}
	}
	typ, ok := parseTypeName(name, size, max)
	if !ok {
		return SQLType{}, NewError(2715, 16, "Column, parameter, or variable #1: Cannot find data type %s.", name)
	}
	if typ.Kind == TypeDecimal {
		typ = decimalType(name, size, scale)
	}
	return typ, nil
}

func (p *parser) dbccStatement() (Stmt, *SQLError) {
	p.i++
	t := p.next()
	if t.kind != tokIdent {
		p.i--
		return nil, p.fail()
	}
	s := &DBCCStmt{Command: t.kw()}
	if p.acceptOp("(") {
		if !p.peek().isOp(")") {
			for {
				e, err := p.expression()
				if err != nil {
					return nil, err
				}
				s.Args = append(s.Args, e)
				if !p.acceptOp(",") {
					break
				}
			}
		}
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
	}
	if p.accept("WITH") {
		for {
			o := p.next()
			if o.kind != tokIdent {
				p.i--
				return nil, p.fail()
			}
			s.With = append(s.With, o.kw())
			if !p.acceptOp(",") {
				break
			}
		}
	}
	return s, nil
}

// Expressions, lowest precedence first.

// maxNesting bounds how deeply expressions (parentheses, function
// arguments, subqueries) nest. SQL Server refuses a statement nested too
// deeply with Msg 191, severity 15
// (https://learn.microsoft.com/en-us/sql/relational-databases/errors-events/database-engine-events-and-errors-0-to-999);
// the depth at which it does is not documented, only that subqueries nest
// 32 deep at most
// (https://learn.microsoft.com/en-us/sql/sql-server/maximum-capacity-specifications-for-sql-server).
// The stand-in raises it past 256 nested expressions, which no everyday
// query reaches, and so never recurses or rescans without bound.
const maxNesting = 256

func (p *parser) expression() (Expr, *SQLError) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxNesting {
		return nil, errNestedTooDeeply()
	}
	return p.orExpr()
}

func (p *parser) orExpr() (Expr, *SQLError) {
	l, err := p.andExpr()
	if err != nil {
		return nil, err
	}
	for p.accept("OR") {
		r, err := p.andExpr()
		if err != nil {
			return nil, err
		}
		l = &BinaryExpr{Op: "OR", L: l, R: r}
	}
	return l, nil
}

func (p *parser) andExpr() (Expr, *SQLError) {
	l, err := p.notExpr()
	if err != nil {
		return nil, err
	}
	for p.accept("AND") {
		r, err := p.notExpr()
		if err != nil {
			return nil, err
		}
		l = &BinaryExpr{Op: "AND", L: l, R: r}
	}
	return l, nil
}

func (p *parser) notExpr() (Expr, *SQLError) {
	if p.accept("NOT") {
		e, err := p.notExpr()
		if err != nil {
			return nil, err
		}
		return &UnaryExpr{Op: "NOT", E: e}, nil
	}
	return p.predicate()
}

func (p *parser) predicate() (Expr, *SQLError) {
	if p.accept("EXISTS") {
		if err := p.expectOp("("); err != nil {
			return nil, err
		}
		sel, err := p.selectStatement()
		if err != nil {
			return nil, err
		}
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
		return &ExistsExpr{Sel: sel}, nil
	}
	l, err := p.additive()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	if t.kind == tokOp {
		switch t.text {
		case "=", "<>", "!=", "<", ">", "<=", ">=", "!<", "!>":
			p.i++
			op := t.text
			if (p.peek().is("ANY") || p.peek().is("SOME") || p.peek().is("ALL")) && p.peekAt(1).isOp("(") {
				all := p.next().is("ALL")
				p.i++
				sel, err := p.selectStatement()
				if err != nil {
					return nil, err
				}
				if err := p.expectOp(")"); err != nil {
					return nil, err
				}
				if op == "!=" {
					op = "<>"
				}
				return &QuantifiedExpr{E: l, Op: op, All: all, Sel: sel}, nil
			}
			r, err := p.additive()
			if err != nil {
				return nil, err
			}
			switch op {
			case "!=":
				op = "<>"
			case "!<":
				op = ">="
			case "!>":
				op = "<="
			}
			return &BinaryExpr{Op: op, L: l, R: r}, nil
		}
	}
	not := false
	if t.is("NOT") && (p.peekAt(1).is("LIKE") || p.peekAt(1).is("IN") || p.peekAt(1).is("BETWEEN")) {
		not = true
		p.i++
	}
	switch {
	case p.accept("IS"):
		n := p.accept("NOT")
		if err := p.expect("NULL"); err != nil {
			return nil, err
		}
		return &IsNullExpr{E: l, Not: n}, nil
	case p.accept("LIKE"):
		r, err := p.additive()
		if err != nil {
			return nil, err
		}
		like := &LikeExpr{E: l, Pattern: r, Not: not}
		if p.accept("ESCAPE") {
			if like.Escape, err = p.additive(); err != nil {
				return nil, err
			}
		}
		return like, nil
	case p.accept("IN"):
		if err := p.expectOp("("); err != nil {
			return nil, err
		}
		in := &InExpr{E: l, Not: not}
		if p.peek().is("SELECT") || p.peek().is("WITH") || p.peek().isOp("(") && p.parenthesisedQuery() {
			sel, err := p.selectStatement()
			if err != nil {
				return nil, err
			}
			in.Sub = sel
		} else {
			for {
				e, err := p.expression()
				if err != nil {
					return nil, err
				}
				in.List = append(in.List, e)
				if !p.acceptOp(",") {
					break
				}
			}
		}
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
		return in, nil
	case p.accept("BETWEEN"):
		lo, err := p.additive()
		if err != nil {
			return nil, err
		}
		if err := p.expect("AND"); err != nil {
			return nil, err
		}
		hi, err := p.additive()
		if err != nil {
			return nil, err
		}
		return &BetweenExpr{E: l, Lo: lo, Hi: hi, Not: not}, nil
	}
	if not {
		return nil, p.fail()
	}
	return l, nil
}

func (p *parser) additive() (Expr, *SQLError) {
	l, err := p.multiplicative()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind == tokOp && (t.text == "+" || t.text == "-" || t.text == "&" || t.text == "|" || t.text == "^") {
			p.i++
			r, err := p.multiplicative()
			if err != nil {
				return nil, err
			}
			l = &BinaryExpr{Op: t.text, L: l, R: r}
			continue
		}
		return l, nil
	}
}

func (p *parser) multiplicative() (Expr, *SQLError) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind == tokOp && (t.text == "*" || t.text == "/" || t.text == "%") {
			p.i++
			r, err := p.unary()
			if err != nil {
				return nil, err
			}
			l = &BinaryExpr{Op: t.text, L: l, R: r}
			continue
		}
		return l, nil
	}
}

func (p *parser) unary() (Expr, *SQLError) {
	if p.acceptOp("-") {
		e, err := p.unary()
		if err != nil {
			return nil, err
		}
		if lit, ok := e.(*Literal); ok {
			switch v := lit.V.(type) {
			case int64:
				return &Literal{V: -v}, nil
			case float64:
				return &Literal{V: -v}, nil
			}
		}
		return &UnaryExpr{Op: "-", E: e}, nil
	}
	if p.acceptOp("+") {
		return p.unary()
	}
	if p.acceptOp("~") {
		e, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &UnaryExpr{Op: "~", E: e}, nil
	}
	return p.primary()
}

func (p *parser) primary() (Expr, *SQLError) {
	t := p.peek()
	switch t.kind {
	case tokNumber:
		p.i++
		if strings.ContainsAny(t.text, ".eE") {
			f, err := strconv.ParseFloat(t.text, 64)
			if err != nil {
				return nil, ErrSyntaxNear(t.text)
			}
			return &Literal{V: f}, nil
		}
		n, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			f, _ := strconv.ParseFloat(t.text, 64)
			return &Literal{V: f}, nil
		}
		return &Literal{V: n}, nil
	case tokString:
		p.i++
		return &Literal{V: t.text}, nil
	case tokHex:
		p.i++
		s := t.text
		if len(s)%2 == 1 {
			s = "0" + s
		}
		b, _ := hex.DecodeString(s)
		if b == nil {
			b = []byte{}
		}
		return &Literal{V: b}, nil
	case tokVariable:
		p.i++
		return &VarRef{Name: t.text}, nil
	case tokPseudo:
		p.i++
		return &PseudoCol{Name: t.text}, nil
	case tokOp:
		if t.text == "(" {
			if p.parenthesisedQuery() {
				p.i++
				sel, err := p.selectStatement()
				if err != nil {
					return nil, err
				}
				if err := p.expectOp(")"); err != nil {
					return nil, err
				}
				return &SubqueryExpr{Sel: sel}, nil
			}
			p.i++
			e, err := p.expression()
			if err != nil {
				return nil, err
			}
			if err := p.expectOp(")"); err != nil {
				return nil, err
			}
			return e, nil
		}
		return nil, p.fail()
	case tokQuoted:
		return p.nameOrCall()
	case tokIdent:
		switch t.kw() {
		case "NULL":
			p.i++
			return &Literal{V: nil}, nil
		case "CASE":
			return p.caseExpression()
		case "CAST", "TRY_CAST":
			p.i++
			if err := p.expectOp("("); err != nil {
				return nil, err
			}
			e, err := p.expression()
			if err != nil {
				return nil, err
			}
			if err := p.expect("AS"); err != nil {
				return nil, err
			}
			typ, err := p.typeName()
			if err != nil {
				return nil, err
			}
			if err := p.expectOp(")"); err != nil {
				return nil, err
			}
			return &CastExpr{E: e, T: typ, Try: asciiEqualFold(t.text, "TRY_CAST")}, nil
		case "CONVERT", "TRY_CONVERT":
			p.i++
			if err := p.expectOp("("); err != nil {
				return nil, err
			}
			typ, err := p.typeName()
			if err != nil {
				return nil, err
			}
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
			e, err := p.expression()
			if err != nil {
				return nil, err
			}
			c := &CastExpr{E: e, T: typ, Try: asciiEqualFold(t.text, "TRY_CONVERT")}
			if p.acceptOp(",") {
				if c.Style, err = p.expression(); err != nil {
					return nil, err
				}
			}
			if err := p.expectOp(")"); err != nil {
				return nil, err
			}
			return c, nil
		case "IIF":
			if !p.peekAt(1).isOp("(") {
				break
			}
			p.i += 2
			cond, err := p.expression()
			if err != nil {
				return nil, err
			}
			var vals [2]Expr
			for k := range vals {
				if err := p.expectOp(","); err != nil {
					return nil, err
				}
				if vals[k], err = p.expression(); err != nil {
					return nil, err
				}
			}
			if err := p.expectOp(")"); err != nil {
				return nil, err
			}
			return &CaseExpr{Whens: []whenClause{{Cond: cond, Result: vals[0]}}, Else: vals[1]}, nil
		}
		if reserved[t.kw()] && !(asciiEqualFold(t.text, "LEFT") || asciiEqualFold(t.text, "RIGHT")) {
			return nil, p.fail()
		}
		return p.nameOrCall()
	}
	return nil, p.fail()
}

func (p *parser) nameOrCall() (Expr, *SQLError) {
	var parts []string
	first := p.next()
	parts = append(parts, first.text)
	for p.peek().isOp(".") {
		p.i++
		t := p.peek()
		switch t.kind {
		case tokIdent, tokQuoted:
			p.i++
			parts = append(parts, t.text)
		case tokPseudo:
			p.i++
			return &PseudoCol{Name: t.text, Qual: strings.Join(parts, ".")}, nil
		default:
			return nil, p.fail()
		}
	}
	if p.peek().isOp("(") {
		p.i++
		f := &FuncCall{Name: asciiUpper(strings.Join(parts, "."))}
		if p.acceptOp("*") {
			f.Star = true
		} else if !p.peek().isOp(")") {
			if p.accept("DISTINCT") {
				f.Distinct = true
			}
			for {
				e, err := p.expression()
				if err != nil {
					return nil, err
				}
				f.Args = append(f.Args, e)
				if !p.acceptOp(",") {
					break
				}
			}
		}
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
		if datePartFunc(f.Name) && len(f.Args) > 0 {
			// the first argument is a date part keyword, not a column
			if c, ok := f.Args[0].(*ColRef); ok && len(c.Parts) == 1 {
				f.Args[0] = &Literal{V: asciiUpper(c.Parts[0])}
			}
		}
		if p.peek().is("WITHIN") && p.peekAt(1).is("GROUP") {
			p.i += 2
			if err := p.expectOp("("); err != nil {
				return nil, err
			}
			if err := p.expect("ORDER"); err != nil {
				return nil, err
			}
			if err := p.expect("BY"); err != nil {
				return nil, err
			}
			items, err := p.orderList()
			if err != nil {
				return nil, err
			}
			f.Within = items
			if err := p.expectOp(")"); err != nil {
				return nil, err
			}
		}
		if p.peek().is("OVER") {
			return p.overClause(f)
		}
		return f, nil
	}
	return &ColRef{Parts: parts}, nil
}

func (p *parser) caseExpression() (Expr, *SQLError) {
	p.i++
	c := &CaseExpr{}
	var err *SQLError
	if !p.peek().is("WHEN") {
		if c.Operand, err = p.expression(); err != nil {
			return nil, err
		}
	}
	for p.accept("WHEN") {
		var w whenClause
		if w.Cond, err = p.expression(); err != nil {
			return nil, err
		}
		if err := p.expect("THEN"); err != nil {
			return nil, err
		}
		if w.Result, err = p.expression(); err != nil {
			return nil, err
		}
		c.Whens = append(c.Whens, w)
	}
	if len(c.Whens) == 0 {
		return nil, p.fail()
	}
	if p.accept("ELSE") {
		if c.Else, err = p.expression(); err != nil {
			return nil, err
		}
	}
	if err := p.expect("END"); err != nil {
		return nil, err
	}
	return c, nil
}

// datePartFunc names the functions whose first argument is a date part
// (DATEADD(day, …)).
func datePartFunc(name string) bool {
	switch name {
	case "DATEADD", "DATEDIFF", "DATEDIFF_BIG", "DATEPART", "DATENAME", "DATETRUNC":
		return true
	}
	return false
}

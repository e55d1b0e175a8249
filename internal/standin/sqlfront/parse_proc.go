package sqlfront

import "strings"

// Stored procedures: CREATE/ALTER/DROP PROCEDURE, EXEC with named,
// positional and OUTPUT arguments, RETURN.
// https://learn.microsoft.com/en-us/sql/t-sql/statements/create-procedure-transact-sql
// https://learn.microsoft.com/en-us/sql/t-sql/language-elements/execute-transact-sql

// ProcParam is one declared parameter of a procedure.
type ProcParam struct {
	Name    string
	Type    SQLType
	Default Expr // nil without one
	Output  bool
}

// CreateProcStmt is CREATE [OR ALTER] / ALTER PROCEDURE. Its body runs to
// the end of the batch; the definition is the statement's text.
type CreateProcStmt struct {
	Name      []string
	Alter     bool // ALTER PROCEDURE
	OrAlter   bool // CREATE OR ALTER
	Params    []ProcParam
	Encrypted bool   // WITH ENCRYPTION
	ExecuteAs string // WITH EXECUTE AS <principal>
	Body      []Stmt
	Spans     []StmtSpan // of Body, in the batch's text
}

// DropProcStmt is DROP PROC[EDURE] [IF EXISTS] name [, …].
type DropProcStmt struct {
	IfExists bool
	Names    [][]string
}

// ReturnStmt is RETURN [integer_expression].
type ReturnStmt struct{ Value Expr }

// ExecArg is one argument of EXEC.
type ExecArg struct {
	Name   string // @p when passed by name
	Value  Expr   // nil for DEFAULT
	Output bool
}

func (*CreateProcStmt) stmtNode() {}
func (*DropProcStmt) stmtNode()   {}
func (*ReturnStmt) stmtNode()     {}

// isProcDDL tells whether the statement at the current token is CREATE /
// ALTER / CREATE OR ALTER PROC[EDURE].
func (p *parser) isProcDDL() bool {
	k := 1
	if p.peek().is("CREATE") && p.peekAt(1).is("OR") && p.peekAt(2).is("ALTER") {
		k = 3
	} else if !p.peek().is("CREATE") && !p.peek().is("ALTER") {
		return false
	}
	return p.peekAt(k).is("PROC") || p.peekAt(k).is("PROCEDURE")
}

// createProc parses the header and the body (every statement to the end of
// the batch).
func (p *parser) createProc() (Stmt, *SQLError) {
	s := &CreateProcStmt{}
	switch {
	case p.accept("ALTER"):
		s.Alter = true
	case p.accept("CREATE"):
		if p.accept("OR") {
			if err := p.expect("ALTER"); err != nil {
				return nil, err
			}
			s.OrAlter = true
		}
	}
	p.i++ // PROC / PROCEDURE
	name, err := p.multiName()
	if err != nil {
		return nil, err
	}
	s.Name = name
	if s.Params, err = p.procParams(); err != nil {
		return nil, err
	}
	if err := p.procOptions(s); err != nil {
		return nil, err
	}
	if p.accept("FOR") {
		if err := p.expect("REPLICATION"); err != nil {
			return nil, err
		}
	}
	if err := p.expect("AS"); err != nil {
		return nil, err
	}
	for {
		for p.peek().isOp(";") {
			p.i++
		}
		if p.peek().kind == tokEOF {
			break
		}
		if p.isProcDDL() {
			return nil, errFirstInBatch(p.peek().line)
		}
		first := p.peek()
		st, err := p.statement()
		if err != nil {
			return nil, err
		}
		last := p.toks[p.i-1]
		s.Body = append(s.Body, st)
		s.Spans = append(s.Spans, StmtSpan{Start: first.pos, End: last.pos + len(last.raw), Line: first.line})
	}
	if len(s.Body) == 0 {
		return nil, p.fail()
	}
	return s, nil
}

// errFirstInBatch is Msg 111: CREATE/ALTER PROCEDURE must be the first
// statement of its batch
// (https://learn.microsoft.com/en-us/sql/t-sql/statements/create-procedure-transact-sql#limitations-and-restrictions).
func errFirstInBatch(line int) *SQLError {
	e := NewError(111, 15, "'CREATE/ALTER PROCEDURE' must be the first statement in a query batch.")
	e.Line = int32(line)
	return e
}

// procParams parses [(] @p [AS] type [VARYING] [NULL] [= default] [OUT[PUT]] [READONLY], … [)].
func (p *parser) procParams() ([]ProcParam, *SQLError) {
	paren := p.peek().isOp("(") && p.peekAt(1).kind == tokVariable
	if paren {
		p.i++
	}
	var out []ProcParam
	for p.peek().kind == tokVariable {
		if len(out) >= 2100 {
			return nil, NewError(180, 15, "There are too many parameters in this CREATE PROCEDURE statement. The maximum number is 2100.")
		}
		v := p.next()
		p.accept("AS")
		typ, err := p.typeName()
		if err != nil {
			return nil, err
		}
		prm := ProcParam{Name: v.text, Type: typ}
		p.accept("VARYING")
		p.accept("NULL")
		if p.acceptOp("=") {
			if prm.Default, err = p.expression(); err != nil {
				return nil, err
			}
		}
		prm.Output = p.accept("OUT") || p.accept("OUTPUT")
		p.accept("READONLY")
		for _, q := range out {
			if strings.EqualFold(q.Name, prm.Name) {
				return nil, NewError(134, 15, "The variable name '%s' has already been declared. Variable names must be unique within a query batch or stored procedure.", prm.Name)
			}
		}
		out = append(out, prm)
		if !p.acceptOp(",") {
			break
		}
	}
	if paren && !p.acceptOp(")") {
		return nil, p.fail()
	}
	return out, nil
}

// procOptions parses WITH ENCRYPTION | RECOMPILE | EXECUTE AS …, ….
func (p *parser) procOptions(s *CreateProcStmt) *SQLError {
	if !p.accept("WITH") {
		return nil
	}
	for {
		switch {
		case p.accept("ENCRYPTION"):
			s.Encrypted = true
		case p.accept("RECOMPILE"), p.accept("SCHEMABINDING"), p.accept("NATIVE_COMPILATION"):
		case p.accept("EXECUTE"), p.accept("EXEC"):
			if err := p.expect("AS"); err != nil {
				return err
			}
			t := p.next()
			if t.kind != tokIdent && t.kind != tokString {
				p.i--
				return p.fail()
			}
			s.ExecuteAs = t.text
		default:
			return p.fail()
		}
		if !p.acceptOp(",") {
			return nil
		}
	}
}

// dropProc parses DROP PROC[EDURE] [IF EXISTS] name [, …].
func (p *parser) dropProc() (Stmt, *SQLError) {
	p.i += 2
	s := &DropProcStmt{}
	if p.peek().is("IF") && p.peekAt(1).is("EXISTS") {
		p.i += 2
		s.IfExists = true
	}
	for {
		n, err := p.multiName()
		if err != nil {
			return nil, err
		}
		s.Names = append(s.Names, n)
		if !p.acceptOp(",") {
			return s, nil
		}
	}
}

// returnStmt parses RETURN [expression].
func (p *parser) returnStmt() (Stmt, *SQLError) {
	p.i++
	s := &ReturnStmt{}
	if t := p.peek(); t.kind != tokEOF && !t.isOp(";") && !p.startsStatement() && !t.is("END") {
		e, err := p.expression()
		if err != nil {
			return nil, err
		}
		s.Value = e
	}
	return s, nil
}

// execArgs parses EXEC's arguments: [@name =] {value | @var [OUTPUT] | DEFAULT}, ….
func (p *parser) execArgs(s *ExecStmt) *SQLError {
	for p.peek().kind != tokEOF && !p.peek().isOp(";") && !p.startsStatement() {
		var a ExecArg
		if p.peek().kind == tokVariable && p.peekAt(1).isOp("=") {
			a.Name = p.next().text
			p.i++
		}
		if !p.accept("DEFAULT") {
			e, err := p.expression()
			if err != nil {
				return err
			}
			a.Value = e
		}
		a.Output = p.accept("OUTPUT") || p.accept("OUT")
		s.Args = append(s.Args, a.Value)
		s.Named = append(s.Named, a)
		if !p.acceptOp(",") {
			break
		}
	}
	if p.accept("WITH") {
		if err := p.expect("RECOMPILE"); err != nil {
			return err
		}
	}
	return nil
}

// execCall parses a procedure's name and arguments (after EXEC, or bare).
func (p *parser) execCall(status string) (Stmt, *SQLError) {
	name, err := p.multiName()
	if err != nil {
		return nil, err
	}
	s := &ExecStmt{Proc: name, Status: status}
	if err := p.execArgs(s); err != nil {
		return nil, err
	}
	return s, nil
}

// statementWords begin statements the parser knows but startsStatement
// does not list.
var statementWords = map[string]bool{"WITH": true, "SAVE": true, "KILL": true, "RECEIVE": true, "SEND": true, "END": true, "GO": true}

// bareProcCall tells whether the batch's first statement is a procedure
// name without EXEC, which SQL Server runs as a call
// (https://learn.microsoft.com/en-us/sql/t-sql/language-elements/execute-transact-sql):
// a name that is not a reserved keyword, not followed by ( or :.
func (p *parser) bareProcCall() bool {
	t := p.peek()
	if t.kind != tokQuoted && (t.kind != tokIdent || reserved[t.kw()] || p.startsStatement() || statementWords[t.kw()]) {
		return false
	}
	next := p.peekAt(1)
	return !next.isOp("(") && !next.isOp(":") && !next.isOp("=")
}

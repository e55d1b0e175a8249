package tsql

import (
	"fmt"
	"slices"
	"strings"
)

// Options change what Classify accepts.
type Options struct {
	// UserProcedures lets EXEC call a user procedure: the call is listed
	// in Classification.Calls instead of refused, and the caller must read
	// that procedure's definition and classify it (ClassifyModule), with
	// every procedure it calls, before the batch runs. Without a caller
	// that does, a user procedure's statements are unknown, so Classify
	// refuses it.
	UserProcedures bool
}

// Name is a multi-part object name as written (unquoted parts).
type Name struct {
	Parts []string
}

// Quoted is the name with every part through QuoteName: what OBJECT_ID
// takes as a parameter. Never spliced into a statement.
func (n Name) Quoted() string {
	q := make([]string, len(n.Parts))
	for i, p := range n.Parts {
		q[i] = QuoteName(p)
	}
	return strings.Join(q, ".")
}

func (n Name) String() string { return strings.Join(n.Parts, ".") }

// Call is one call of a user procedure found in a batch or a module.
type Call struct {
	Proc      Name
	Line      int
	Statement string
}

// maxExecuteSQLNesting bounds sp_executesql statements nested in the
// statements of sp_executesql (each level is classified in turn).
const maxExecuteSQLNesting = 8

// whyExtended is why an extended procedure (%s: its name) is refused.
const whyExtended = "%s is an extended procedure: it runs code outside SQL Server (a DLL), which no rollback undoes and QueryReplay cannot inspect"

// whyDynamic is why dynamic SQL whose text is not a literal is refused.
const whyDynamic = "sp_executesql runs dynamic SQL: its statement must be a string literal (N'…') for QueryReplay to classify it; a variable or an expression is refused"

// userCall checks a call of a user procedure (parts: its upper-case name
// parts; the name starts at code[j-…]) and lists it in the Calls.
func (c *classifier) userCall(stmt, j int, parts []string) error {
	proc := parts[len(parts)-1]
	switch {
	case strings.HasPrefix(proc, "XP_"):
		return c.refuse(stmt, fmt.Sprintf(whyExtended, c.callName(j-2*len(parts)+1)))
	case strings.HasPrefix(proc, "SP_") || len(parts) == 2 && parts[0] == "SYS":
		return c.refuse(stmt, fmt.Sprintf("%s (%s is a system procedure that is not one of them)", whyExec, c.callName(j-2*len(parts)+1)))
	}
	if c.sym(j) == ";" && j+1 < len(c.code) && c.code[j+1].Kind == TokNumber {
		// EXEC p;2 runs group number 2 of a numbered procedure, whose
		// text OBJECT_DEFINITION does not return
		// (https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-numbered-procedures-transact-sql)
		return c.refuse(stmt, "a numbered procedure (name;number) is refused: QueryReplay reads only a procedure's own definition")
	}
	var name Name
	for i := j - 2*len(parts) + 1; i < j; i += 2 {
		name.Parts = append(name.Parts, c.name(i))
	}
	if err := c.checkArguments(stmt, j, proc); err != nil {
		return err
	}
	c.out.Calls = append(c.out.Calls, Call{Proc: name, Line: c.code[stmt].Line, Statement: c.statementText(stmt)})
	return nil
}

// checkExecuteSQL checks sp_executesql, whose arguments start at code[j]:
// its statement must be a string literal, classified like the batch it
// runs; the rest are its declarations and values, constants or variables.
func (c *classifier) checkExecuteSQL(stmt, j int) error {
	if j < len(c.code) && c.code[j].Kind == TokVariable && c.sym(j+1) == "=" {
		j += 2
	}
	if j >= len(c.code) || c.code[j].Kind != TokString {
		return c.refuse(stmt, whyDynamic)
	}
	if c.nest >= maxExecuteSQLNesting {
		return c.refuse(stmt, fmt.Sprintf("sp_executesql is nested more than %d deep", maxExecuteSQLNesting))
	}
	inner, err := classify(c.code[j].Value, c.opt, c.nest+1)
	if err != nil {
		reason := err.Error()
		if re, ok := err.(*RefusedError); ok {
			reason = re.Reason
		}
		return c.refuse(stmt, "the statement sp_executesql runs is refused: "+reason)
	}
	c.merge(inner)
	j++
	if c.sym(j) == "," {
		if err := c.checkDeclarations(stmt, j+1); err != nil {
			return err
		}
		return c.checkArguments(stmt, j+1, "SP_EXECUTESQL")
	}
	if !c.endsStatement(j) {
		return c.refuse(stmt, fmt.Sprintf("the call of sp_executesql is followed by %s, which QueryReplay does not allow there", c.code[j].Text))
	}
	return nil
}

// checkDeclarations checks sp_executesql's second argument, from code[j]
// ([@params =] N'…'): SQL Server compiles it as the statement's parameter
// list, so it must be a literal made only of declarations
// (@name [AS] type[(n[, m])] [OUTPUT | OUT | READONLY], …). A later
// argument passed by name (@c = 1) means there is none.
func (c *classifier) checkDeclarations(stmt, j int) error {
	if j < len(c.code) && c.code[j].Kind == TokVariable && c.sym(j+1) == "=" {
		if upperASCII(c.code[j].Text) != "@PARAMS" {
			return nil
		}
		j += 2
	}
	if j >= len(c.code) || c.code[j].Kind != TokString {
		return c.refuse(stmt, "sp_executesql's parameter declarations must be a string literal (N'@c int, …') for QueryReplay to read them")
	}
	if !plainDeclarations(c.code[j].Value) {
		return c.refuse(stmt, "sp_executesql's parameter declarations hold more than declarations (@name type [OUTPUT], …)")
	}
	return nil
}

// plainDeclarations tells whether decl is only a list of parameter
// declarations: variables, type names, sizes, commas, parentheses, dots.
func plainDeclarations(decl string) bool {
	toks, err := Tokenize(decl)
	if err != nil {
		return false
	}
	for _, t := range toks {
		switch t.Kind {
		case TokVariable, TokNumber, TokQuotedName:
		case TokWord:
			if _, reserved := reservedKeywords[t.Upper]; reserved && t.Upper != "AS" {
				return false
			}
		case TokSymbol:
			if t.Text != "," && t.Text != "(" && t.Text != ")" && t.Text != "." {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// merge adds what an inner classification found to c's.
func (c *classifier) merge(in Classification) {
	for _, v := range in.Verbs {
		c.verb(v)
	}
	for _, w := range in.Warnings {
		c.warn(w)
	}
	c.out.Calls = append(c.out.Calls, in.Calls...)
	c.out.Targets = append(c.out.Targets, in.Targets...)
}

// Merge adds what another classification found (a called procedure's, a
// trigger's) to c.
func (c *Classification) Merge(in Classification) {
	if in.Modification {
		c.Modification = true
	}
	for _, v := range in.Verbs {
		if !slices.Contains(c.Verbs, v) {
			c.Verbs = append(c.Verbs, v)
		}
	}
	for _, w := range in.Warnings {
		if !slices.Contains(c.Warnings, w) {
			c.Warnings = append(c.Warnings, w)
		}
	}
	c.Calls = append(c.Calls, in.Calls...)
	c.Targets = append(c.Targets, in.Targets...)
}

// target records the table the modifying verb at code[k] changes: the
// name after INSERT [TOP (n)] [INTO], UPDATE [TOP (n)], DELETE [TOP (n)]
// [FROM], MERGE [TOP (n)] [INTO]. Table variables and #temp tables have no
// triggers; anything that is not a name (MERGE's WHEN … THEN INSERT) is
// skipped.
func (c *classifier) target(k int) {
	j := k + 1
	if c.word(j) == "TOP" && c.sym(j+1) == "(" {
		j = c.closing(j+1) + 1
	}
	if w := c.word(j); w == "INTO" || w == "FROM" {
		j++
	}
	var n Name
	for c.isNamePart(j) {
		if c.code[j].Kind == TokWord {
			if _, reserved := reservedKeywords[c.code[j].Upper]; reserved {
				return
			}
		}
		n.Parts = append(n.Parts, c.name(j))
		if c.sym(j+1) != "." {
			break
		}
		j += 2
	}
	if len(n.Parts) == 0 || strings.HasPrefix(n.Parts[len(n.Parts)-1], "#") {
		return
	}
	c.out.Targets = append(c.out.Targets, n)
}

// Module is the header of a procedure's or trigger's definition, as
// OBJECT_DEFINITION returns it.
type Module struct {
	Kind string // PROCEDURE or TRIGGER
	// ExecuteAs is the principal of WITH EXECUTE AS ("" without it).
	ExecuteAs     string
	ExecuteAsLine int
	// BodyPos is the byte offset of the body (after AS) in the definition.
	BodyPos int
}

// ParseModule reads the header of CREATE [OR ALTER] PROCEDURE/TRIGGER … AS
// (https://learn.microsoft.com/en-us/sql/t-sql/statements/create-procedure-transact-sql,
// https://learn.microsoft.com/en-us/sql/t-sql/statements/create-trigger-transact-sql):
// the body begins after the first AS outside parentheses that is neither a
// parameter's (@p AS int) nor EXECUTE AS's.
func ParseModule(def string) (Module, error) {
	toks, err := Tokenize(def)
	if err != nil {
		return Module{}, err
	}
	code := toks[:0]
	for _, t := range toks {
		if t.Kind != TokComment {
			code = append(code, t)
		}
	}
	word := func(i int) string {
		if i >= 0 && i < len(code) && code[i].Kind == TokWord {
			return code[i].Upper
		}
		return ""
	}
	i := 0
	switch {
	case word(0) == "CREATE" && word(1) == "OR" && word(2) == "ALTER":
		i = 3
	case word(0) == "CREATE", word(0) == "ALTER":
		i = 1
	default:
		return Module{}, fmt.Errorf("the definition does not begin with CREATE or ALTER")
	}
	var m Module
	switch word(i) {
	case "PROC", "PROCEDURE":
		m.Kind = "PROCEDURE"
	case "TRIGGER":
		m.Kind = "TRIGGER"
	default:
		return Module{}, fmt.Errorf("the definition is not a procedure's or a trigger's")
	}
	depth := 0
	for i++; i < len(code); i++ {
		t := code[i]
		switch {
		case t.Kind == TokSymbol && t.Text == "(":
			depth++
		case t.Kind == TokSymbol && t.Text == ")":
			depth = max(depth-1, 0)
		case depth > 0 || t.Kind != TokWord || t.Upper != "AS":
		case code[i-1].Kind == TokVariable:
		case word(i-1) == "EXECUTE" || word(i-1) == "EXEC":
			if i+1 < len(code) {
				m.ExecuteAs, m.ExecuteAsLine = code[i+1].Text, code[i-1].Line
			}
		default:
			if i+1 >= len(code) {
				return Module{}, fmt.Errorf("the definition has no body")
			}
			m.BodyPos = code[i+1].Pos
			return m, nil
		}
	}
	return Module{}, fmt.Errorf("the definition has no AS before its body")
}

// ClassifyModule classifies every statement of a procedure's or trigger's
// definition with the batch allowlist (user procedure calls listed, as
// with Options.UserProcedures). A module with EXECUTE AS is refused: its
// statements run as another principal. Lines in a refusal are the
// definition's.
func ClassifyModule(def string) (Module, Classification, error) {
	if len(def) > MaxBatchBytes {
		return Module{}, Classification{}, &RefusedError{Reason: fmt.Sprintf("the definition is %d bytes; QueryReplay reads definitions of at most %d bytes", len(def), MaxBatchBytes)}
	}
	m, err := ParseModule(def)
	if err != nil {
		return m, Classification{}, &RefusedError{Reason: "the definition cannot be read safely: " + err.Error()}
	}
	if m.ExecuteAs != "" {
		return m, Classification{}, &RefusedError{
			Reason: fmt.Sprintf("line %d (WITH EXECUTE AS %s): the module runs as another principal; %s", m.ExecuteAsLine, m.ExecuteAs, whySecurity),
			Line:   m.ExecuteAsLine, Statement: "WITH EXECUTE AS " + m.ExecuteAs,
		}
	}
	c, err := ClassifyWith(maskHeader(def, m.BodyPos), Options{UserProcedures: true})
	return m, c, err
}

// maskHeader blanks the definition before pos, keeping its line breaks,
// so that the body classifies alone with the definition's lines and
// offsets.
func maskHeader(def string, pos int) string {
	b := []byte(def)
	for i := 0; i < pos && i < len(b); i++ {
		if b[i] != '\n' && b[i] != '\r' {
			b[i] = ' '
		}
	}
	return string(b)
}

// ExecuteSQL is a batch that is one call of sp_executesql with literal
// arguments: the form ORMs send and Profiler captures.
type ExecuteSQL struct {
	Statement string // the statement it runs
	Params    string // its declarations ("" without)
	Args      []Arg
}

// Arg is one value passed to sp_executesql.
type Arg struct {
	Name    string // @c, or "" when passed by position
	Literal string // 42, N'West', NULL, -1.5, 0x0A
}

// SplitExecuteSQL reads a batch that is exactly
// EXEC [sys.]sp_executesql N'stmt' [, N'decl' [, [@p =] literal …]] [;]
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-stored-procedures/sp-executesql-transact-sql).
// ok is false for any other batch.
func SplitExecuteSQL(src string) (ExecuteSQL, bool) {
	if len(src) > MaxBatchBytes {
		return ExecuteSQL{}, false
	}
	toks, err := Tokenize(src)
	if err != nil {
		return ExecuteSQL{}, false
	}
	var code []Token
	for _, t := range toks {
		if t.Kind != TokComment {
			code = append(code, t)
		}
	}
	for len(code) > 0 && code[len(code)-1].Kind == TokSymbol && code[len(code)-1].Text == ";" {
		code = code[:len(code)-1]
	}
	p := &splitter{code: code}
	if w := p.word(); w != "EXEC" && w != "EXECUTE" {
		return ExecuteSQL{}, false
	}
	w := p.word()
	if w == "SYS" {
		if !p.symbol(".") {
			return ExecuteSQL{}, false
		}
		w = p.word()
	}
	if w != "SP_EXECUTESQL" {
		return ExecuteSQL{}, false
	}
	var out ExecuteSQL
	stmt, ok := p.stringArg("@STMT")
	if !ok {
		return ExecuteSQL{}, false
	}
	out.Statement = stmt
	if p.done() {
		return out, true
	}
	if !p.symbol(",") {
		return ExecuteSQL{}, false
	}
	if out.Params, ok = p.stringArg("@PARAMS"); !ok {
		return ExecuteSQL{}, false
	}
	for !p.done() {
		if !p.symbol(",") {
			return ExecuteSQL{}, false
		}
		a, ok := p.literalArg()
		if !ok {
			return ExecuteSQL{}, false
		}
		out.Args = append(out.Args, a)
	}
	return out, true
}

// splitter walks the tokens of one sp_executesql call.
type splitter struct {
	code []Token
	i    int
}

func (p *splitter) done() bool { return p.i >= len(p.code) }

// word consumes a word (or quoted name) and returns it upper-case.
func (p *splitter) word() string {
	if p.done() || p.code[p.i].Kind != TokWord && p.code[p.i].Kind != TokQuotedName {
		return ""
	}
	t := p.code[p.i]
	p.i++
	if t.Kind == TokQuotedName {
		return upperASCII(t.Value)
	}
	return t.Upper
}

func (p *splitter) symbol(s string) bool {
	if p.done() || p.code[p.i].Kind != TokSymbol || p.code[p.i].Text != s {
		return false
	}
	p.i++
	return true
}

// stringArg reads [name =] N'…'.
func (p *splitter) stringArg(name string) (string, bool) {
	if !p.done() && p.code[p.i].Kind == TokVariable && p.i+1 < len(p.code) && p.code[p.i+1].Text == "=" {
		if upperASCII(p.code[p.i].Text) != name {
			return "", false
		}
		p.i += 2
	}
	if p.done() || p.code[p.i].Kind != TokString {
		return "", false
	}
	p.i++
	return p.code[p.i-1].Value, true
}

// literalArg reads [@name =] literal, where a literal is a string, a
// number (with a sign), or NULL.
func (p *splitter) literalArg() (Arg, bool) {
	var a Arg
	if !p.done() && p.code[p.i].Kind == TokVariable && p.i+1 < len(p.code) && p.code[p.i+1].Text == "=" {
		a.Name = p.code[p.i].Text
		p.i += 2
	}
	sign := ""
	if !p.done() && p.code[p.i].Kind == TokSymbol && (p.code[p.i].Text == "-" || p.code[p.i].Text == "+") {
		sign = p.code[p.i].Text
		p.i++
	}
	if p.done() {
		return a, false
	}
	t := p.code[p.i]
	switch {
	case t.Kind == TokString && sign == "", t.Kind == TokNumber && !strings.HasPrefix(t.Text, "$"):
	case t.Kind == TokWord && t.Upper == "NULL" && sign == "":
	default:
		return a, false
	}
	p.i++
	a.Literal = sign + t.Text
	return a, true
}

package tsql

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Classification is what the safety classifier found in a batch.
type Classification struct {
	// Modification: the batch changes data (INSERT, UPDATE, DELETE, MERGE,
	// SELECT INTO, TRUNCATE TABLE, #temp DDL). Every batch runs inside
	// QueryReplay's rolled-back transaction; a modification also gets the
	// transaction_log event and its log records.
	Modification bool
	// Verbs lists the modifying statements found, e.g. ["UPDATE"].
	Verbs []string
	// Warnings are side effects a rollback does not undo but that change no
	// rows (identity values, sequence numbers).
	Warnings []string
	// Calls are the user procedures the batch calls (ClassifyWith with
	// Options.UserProcedures only): the batch is safe only if each of
	// their definitions is (ClassifyModule), which the caller must check
	// before running it.
	Calls []Call
	// Targets are the tables (as written) that INSERT, UPDATE, DELETE and
	// MERGE change, whose triggers the caller must classify too; an alias
	// or a CTE name is listed as written, which resolves to no table.
	Targets []Name
}

// Classify decides from the statements a batch is made of whether it may be
// traced (see keywords.go for the allowlist, docs/security.md for the
// rules in words). A refused batch is a *RefusedError naming the statement,
// its line and why; otherwise the classification says whether the batch
// modifies data.
func Classify(src string) (Classification, error) {
	return ClassifyWith(src, Options{})
}

// ClassifyWith is Classify with options.
func ClassifyWith(src string, opt Options) (Classification, error) {
	return classify(src, opt, 0)
}

func classify(src string, opt Options, depth int) (Classification, error) {
	if len(src) > MaxBatchBytes {
		return Classification{}, &RefusedError{Reason: fmt.Sprintf("the batch is %d bytes; QueryReplay traces batches of at most %d bytes (tsql.MaxBatchBytes)", len(src), MaxBatchBytes)}
	}
	toks, err := Tokenize(src)
	if err != nil {
		line := 0
		if se, ok := err.(*SyntaxError); ok {
			line = se.Line
		}
		return Classification{}, &RefusedError{Reason: "the batch cannot be read safely: " + err.Error(), Line: line}
	}
	c := &classifier{src: src, warned: map[string]bool{}, opt: opt, nest: depth}
	c.code = toks[:0] // comments dropped in place: no second copy of the tokens
	for _, t := range toks {
		if t.Kind != TokComment {
			c.code = append(c.code, t)
		}
	}
	if err := c.run(); err != nil {
		return Classification{}, err
	}
	return c.out, nil
}

// MaxBatchBytes bounds the batch Classify reads (and so every trace): 1 MiB
// of text is far more than a query to trace needs, and the classifier's
// time and memory grow linearly with it.
const MaxBatchBytes = 1 << 20

// classifier is one run of Classify over the batch's tokens, comments
// dropped.
type classifier struct {
	src      string
	code     []Token
	out      Classification
	warned   map[string]bool
	lastVerb string // the statement an INTO belongs to
	depth    int    // parentheses open at the current token
	closeAt  []int  // for RAISERROR: index of the ) closing each (, computed once
	opt      Options
	nest     int // sp_executesql statements this batch is nested in
}

func (c *classifier) run() error {
	if err := c.checkStart(); err != nil {
		return err
	}
	for k := 0; k < len(c.code); k++ {
		if err := c.checkToken(k); err != nil {
			return err
		}
	}
	return nil
}

// word returns the upper-case text of code[k] when it is a word.
func (c *classifier) word(k int) string {
	if k >= 0 && k < len(c.code) && c.code[k].Kind == TokWord {
		return c.code[k].Upper
	}
	return ""
}

// sym returns the text of code[k] when it is a symbol.
func (c *classifier) sym(k int) string {
	if k >= 0 && k < len(c.code) && c.code[k].Kind == TokSymbol {
		return c.code[k].Text
	}
	return ""
}

func (c *classifier) isNamePart(k int) bool {
	return k >= 0 && k < len(c.code) && (c.code[k].Kind == TokWord || c.code[k].Kind == TokQuotedName)
}

// name returns the unquoted text of a name part.
func (c *classifier) name(k int) string {
	if c.code[k].Kind == TokQuotedName {
		return c.code[k].Value
	}
	return c.code[k].Text
}

func (c *classifier) verb(v string) {
	c.out.Modification = true
	if !slices.Contains(c.out.Verbs, v) {
		c.out.Verbs = append(c.out.Verbs, v)
	}
}

func (c *classifier) warn(w string) {
	if !c.warned[w] {
		c.warned[w] = true
		c.out.Warnings = append(c.out.Warnings, w)
	}
}

// checkStart: a batch's first statement may be a procedure name without
// EXEC, so the batch must begin with a statement keyword, or be a call of
// a read-only procedure.
func (c *classifier) checkStart() error {
	k := 0
	for c.sym(k) == ";" {
		k++
	}
	if k >= len(c.code) || c.sym(k) == "(" {
		return nil
	}
	t := c.code[k]
	switch {
	case t.Kind == TokWord && batchStarters[t.Upper]:
		return nil
	case t.Kind == TokWord && reservedKeywords[t.Upper].allowed:
		return c.refuse(k, fmt.Sprintf("a batch must begin with a statement; this one begins with %s", t.Upper))
	case t.Kind == TokWord && reservedKeywords[t.Upper] != (keywordRule{}),
		t.Kind == TokWord && (c.statementWord(k) || c.brokerStatement(k)):
		return nil // refused with its own reason by checkToken
	case t.Kind == TokWord || t.Kind == TokQuotedName:
		return c.checkCall(k, k, fmt.Sprintf("the batch begins with %s, which SQL Server runs as a call of that procedure (a batch's first statement needs no EXEC)", c.callName(k)))
	}
	return c.refuse(k, "a batch must begin with a statement")
}

// checkToken applies the rules that hold wherever a token stands.
func (c *classifier) checkToken(k int) error {
	t := c.code[k]
	switch {
	case t.Kind == TokSymbol && t.Text == ";":
		c.lastVerb = ""
		return nil
	case t.Kind == TokSymbol && t.Text == "(":
		c.depth++
	case t.Kind == TokSymbol && t.Text == ")":
		c.depth = max(c.depth-1, 0)
	}
	if err := c.checkLockHint(k); err != nil {
		return err
	}
	if err := c.checkFourPart(k); err != nil {
		return err
	}
	if t.Kind != TokWord {
		return nil
	}
	if t.Upper == "GO" && t.LineStart && (t.LineEnd || k+1 < len(c.code) && c.code[k+1].Kind == TokNumber && c.code[k+1].LineEnd && c.code[k+1].Line == t.Line) {
		// GO [count] alone on its line is the client's batch separator.
		return c.refuse(k, "GO separates several batches; trace one batch at a time (QueryReplay's session and transaction span exactly one batch)")
	}
	if rule, ok := reservedKeywords[t.Upper]; ok {
		switch {
		case rule.contextual:
			return c.contextual(k)
		case !rule.allowed:
			return c.refuse(k, rule.why)
		}
		return c.allowedWord(k)
	}
	if c.statementWord(k) {
		return c.refuse(k, nonReservedStatements[t.Upper].why)
	}
	if c.brokerStatement(k) {
		return c.refuse(k, whyBroker)
	}
	switch {
	case t.Upper == "OUTPUT":
		c.lastVerb = "OUTPUT"
	case t.Upper == "NEXT" && c.word(k+1) == "VALUE" && c.word(k+2) == "FOR":
		c.warn("sequence numbers drawn with NEXT VALUE FOR are not given back by ROLLBACK")
	}
	return nil
}

// nonReservedStatements are refused statements whose first word is not
// reserved (so it can be a name elsewhere): the statement is recognised by
// its first word and the next one ("" matches any next token).
var nonReservedStatements = map[string]struct {
	next []string
	why  string
}{
	"MOVE":    {[]string{"CONVERSATION"}, whyBroker},
	"GET":     {[]string{"CONVERSATION"}, whyBroker},
	"COPY":    {[]string{"INTO"}, "COPY INTO loads files into tables and is refused"},
	"RENAME":  {[]string{"OBJECT", "DATABASE"}, whyDDL},
	"ENABLE":  {[]string{"TRIGGER"}, whyDDL},
	"DISABLE": {[]string{"TRIGGER"}, whyDDL},
}

// statementWord tells whether the word code[k] starts one of the refused
// nonReservedStatements.
func (c *classifier) statementWord(k int) bool {
	s, ok := nonReservedStatements[c.word(k)]
	return ok && (s.next == nil || slices.Contains(s.next, c.word(k+1)))
}

// allowedWord records what an allowed keyword says about the batch.
func (c *classifier) allowedWord(k int) error {
	switch w := c.code[k].Upper; w {
	case "INSERT", "MERGE":
		c.warn("identity values consumed by an insert are not given back by ROLLBACK")
		c.verb(w)
		c.lastVerb = w
		c.target(k)
	case "DELETE":
		c.verb(w)
		c.lastVerb = w
		c.target(k)
	case "SELECT", "FETCH":
		c.lastVerb = w
	case "INTO":
		// Every INTO writes rows: INSERT INTO and MERGE INTO are counted
		// with their verb, OUTPUT … INTO with its DML statement (and here,
		// in case OUTPUT was only an alias), any other is SELECT … INTO in
		// whichever form (alias = col, col AS alias, after a UNION branch,
		// into a #temp table: a table is created and filled, if only to be
		// rolled back).
		switch prev := c.word(k - 1); {
		case prev == "INSERT" || prev == "MERGE":
		case c.lastVerb == "OUTPUT" && c.out.Modification:
		default:
			c.verb("SELECT INTO")
		}
	case "RAISERROR":
		return c.checkRaiserror(k)
	}
	return nil
}

// contextual decides the keywords that are allowed in some shapes only.
func (c *classifier) contextual(k int) error {
	w, next := c.code[k].Upper, c.word(k+1)
	switch w {
	case "BEGIN":
		switch next {
		case "TRAN", "TRANSACTION":
			return c.refuse(k, "BEGIN TRANSACTION inside the batch would nest in QueryReplay's transaction; a COMMIT of it would escape the trace's rollback")
		case "DISTRIBUTED":
			return c.refuse(k, "BEGIN DISTRIBUTED TRANSACTION reaches other servers")
		case "DIALOG", "CONVERSATION":
			return c.refuse(k, whyBroker)
		}
	case "END":
	case "TRAN", "TRANSACTION":
		if c.word(k-1) != "SET" || next != "ISOLATION" {
			return c.refuse(k, "transaction statements are refused: the batch runs inside QueryReplay's transaction, which only QueryReplay may end")
		}
	case "STATISTICS":
		if c.word(k-1) == "UPDATE" {
			return c.refuse(k-1, "UPDATE STATISTICS is maintenance, not a query, and is refused")
		}
		if c.word(k-1) != "SET" {
			return c.refuse(k, whyDDL)
		}
	case "USE":
		if next != "HINT" && next != "PLAN" { // OPTION (USE HINT …), OPTION (USE PLAN …)
			return c.refuse(k, "USE would change the database under QueryReplay; pass the database as an option instead")
		}
	case "WAITFOR":
		if next != "DELAY" && next != "TIME" {
			return c.refuse(k, "only WAITFOR DELAY and WAITFOR TIME may be traced; WAITFOR (RECEIVE …) and WAITFOR (GET CONVERSATION GROUP …) are Service Broker statements")
		}
	case "UPDATE":
		switch {
		case next == "STATISTICS":
			return c.refuse(k, "UPDATE STATISTICS is maintenance, not a query, and is refused")
		case c.sym(k+1) == "(":
			// the UPDATE() function of triggers
		default:
			c.verb("UPDATE")
			c.lastVerb = "UPDATE"
			c.target(k)
		}
	case "TRUNCATE":
		if next == "TABLE" {
			c.verb("TRUNCATE TABLE")
			c.lastVerb = "TRUNCATE"
		}
	case "CREATE":
		return c.checkCreate(k)
	case "DROP":
		return c.checkDrop(k)
	case "EXEC", "EXECUTE":
		return c.checkExec(k)
	case "SET":
		return c.checkSet(k)
	}
	return nil
}

// checkCreate allows CREATE TABLE #t and CREATE [UNIQUE] [[NON]CLUSTERED]
// INDEX i ON #t: a #temp table is private to the session and its DDL rolls
// back with QueryReplay's transaction.
func (c *classifier) checkCreate(k int) error {
	j := k + 1
	if c.word(j) == "TABLE" {
		if c.isTempName(j + 1) {
			c.verb("CREATE TABLE #temp")
			return nil
		}
		return c.refuse(k, whyDDL)
	}
	if c.word(j) == "UNIQUE" {
		j++
	}
	if w := c.word(j); w == "CLUSTERED" || w == "NONCLUSTERED" {
		j++
	}
	if c.word(j) == "INDEX" && c.isNamePart(j+1) && c.word(j+2) == "ON" && c.isTempName(j+3) {
		c.verb("CREATE INDEX on #temp")
		return nil
	}
	return c.refuse(k, whyDDL)
}

// checkDrop allows DROP TABLE [IF EXISTS] #a[, #b …]: every name must be a
// #temp table.
func (c *classifier) checkDrop(k int) error {
	j := k + 1
	if c.word(j) != "TABLE" {
		return c.refuse(k, whyDDL)
	}
	j++
	if c.word(j) == "IF" && c.word(j+1) == "EXISTS" {
		j += 2
	}
	for {
		if !c.isTempName(j) {
			what := "the end of the batch"
			if j < len(c.code) {
				what = c.code[j].Text
			}
			return c.refuse(k, fmt.Sprintf("%s (%s is not a #temp table)", whyDDL, what))
		}
		j++
		if c.sym(j) != "," {
			break
		}
		j++
	}
	c.verb("DROP TABLE #temp")
	return nil
}

// isTempName tells whether code[k] is a one-part name of a #temp table.
func (c *classifier) isTempName(k int) bool {
	return c.isNamePart(k) && strings.HasPrefix(c.name(k), "#") && c.sym(k+1) != "." && c.sym(k-1) != "."
}

// checkExec allows EXEC [@status =] <read-only procedure> <arguments>.
func (c *classifier) checkExec(k int) error {
	j := k + 1
	switch {
	case c.word(j) == "AS":
		return c.refuse(k, whySecurity)
	case c.sym(j) == "(":
		return c.refuse(k, "EXEC (…) runs dynamic SQL that QueryReplay cannot inspect")
	case j < len(c.code) && c.code[j].Kind == TokVariable && c.sym(j+1) == "=":
		j += 2
	}
	if !c.isNamePart(j) {
		return c.refuse(k, whyExec)
	}
	return c.checkCall(k, j, fmt.Sprintf("%s (%s is not one of them)", whyExec, c.callName(j)))
}

// callName is the dotted procedure name starting at code[k], for messages.
func (c *classifier) callName(k int) string {
	var parts []string
	for c.isNamePart(k) || c.sym(k) == "." {
		if c.sym(k) == "." {
			if c.sym(k-1) == "." || len(parts) == 0 {
				parts = append(parts, "")
			}
		} else {
			parts = append(parts, c.code[k].Text)
		}
		k++
		if c.isNamePart(k-1) && c.sym(k) != "." {
			break
		}
	}
	return strings.Join(parts, ".")
}

// checkCall checks a procedure call whose name starts at code[j] (stmt is
// the statement's first token, for the message): the procedure must be a
// read-only one, unqualified or in schema sys, and its arguments constants
// or variables.
func (c *classifier) checkCall(stmt, j int, why string) error {
	if full := c.callName(j); c.opt.UserProcedures && strings.HasPrefix(upperASCII(full[strings.LastIndex(full, ".")+1:]), "XP_") {
		return c.refuse(stmt, fmt.Sprintf(whyExtended, full))
	}
	var parts []string
	for {
		if !c.isNamePart(j) {
			return c.refuse(stmt, why)
		}
		parts = append(parts, upperASCII(c.name(j)))
		j++
		if c.sym(j) != "." {
			break
		}
		j++
	}
	proc := parts[len(parts)-1]
	if proc == "SP_EXECUTESQL" && (len(parts) == 1 || len(parts) == 2 && parts[0] == "SYS") {
		return c.checkExecuteSQL(stmt, j)
	}
	if c.opt.UserProcedures && !readOnlyProcedures[proc] {
		return c.userCall(stmt, j, parts)
	}
	if len(parts) > 2 || len(parts) == 2 && parts[0] != "SYS" || !readOnlyProcedures[proc] {
		return c.refuse(stmt, why)
	}
	return c.checkArguments(stmt, j, proc)
}

// checkArguments checks the arguments of a call from code[j]: constants
// or variables, each optionally named and OUTPUT.
func (c *classifier) checkArguments(stmt, j int, proc string) error {
	for {
		if c.endsStatement(j) {
			return nil
		}
		if j < len(c.code) && c.code[j].Kind == TokVariable && c.sym(j+1) == "=" {
			j += 2
		}
		if s := c.sym(j); s == "-" || s == "+" {
			j++
		}
		if !c.isArgument(j) {
			return c.refuse(stmt, fmt.Sprintf("the call of %s may have only constants and variables as arguments", proc))
		}
		j++
		if w := c.word(j); w == "OUTPUT" || w == "OUT" {
			j++
		}
		if c.sym(j) != "," {
			if c.endsStatement(j) {
				return nil
			}
			return c.refuse(stmt, fmt.Sprintf("the call of %s is followed by %s, which QueryReplay does not allow there", proc, c.code[j].Text))
		}
		j++
	}
}

func (c *classifier) isArgument(j int) bool {
	if j >= len(c.code) {
		return false
	}
	switch t := c.code[j]; t.Kind {
	case TokString, TokNumber, TokVariable, TokQuotedName:
		return true
	case TokWord:
		_, reserved := reservedKeywords[t.Upper]
		return !reserved || t.Upper == "DEFAULT" || t.Upper == "NULL"
	}
	return false
}

// endsStatement: the end of the batch, a semicolon, or a reserved keyword
// (which begins the next statement and is checked on its own).
func (c *classifier) endsStatement(j int) bool {
	if j >= len(c.code) || c.sym(j) == ";" {
		return true
	}
	_, reserved := reservedKeywords[c.word(j)]
	return reserved || c.word(j) == "THROW"
}

// checkSet allows SET @variable, the SET clause of UPDATE, and the harmless
// SET options. Every item of an option list is checked
// (SET STATISTICS IO, XACT_ABORT ON is XACT_ABORT ON too).
func (c *classifier) checkSet(k int) error {
	j := k + 1
	if j >= len(c.code) {
		return nil
	}
	if c.code[j].Kind == TokVariable {
		return nil
	}
	if !c.isNamePart(j) {
		return c.refuse(k, "SET must be followed by a variable or an option")
	}
	if c.isAssignment(j + 1) {
		return nil // UPDATE … SET column = …
	}
	if c.code[j].Kind == TokQuotedName {
		return c.refuse(k, "SET must be followed by a variable or an option")
	}
	items, value, err := c.setItems(k)
	if err != nil {
		return err
	}
	for _, o := range items {
		if err := c.checkSetItem(k, o, value, len(items)); err != nil {
			return err
		}
	}
	return nil
}

// setItems reads the option list of the SET at code[k]: the indexes of its
// option words (STATISTICS and TRANSACTION take their following words with
// them) and the index of the value after the list.
func (c *classifier) setItems(k int) (items []int, value int, err error) {
	j := k + 1
	for {
		if c.word(j) == "" {
			return nil, 0, c.refuse(k, "SET must be followed by a variable or an option")
		}
		items = append(items, j)
		switch c.word(j) {
		case "STATISTICS":
			j++ // its kind: IO, TIME, XML, PROFILE
		case "TRANSACTION":
			j += 3 // ISOLATION LEVEL <level>, checked with the item
		}
		j++
		if c.sym(j) != "," {
			break
		}
		j++
	}
	if c.sym(j+1) == "," {
		return nil, 0, c.refuse(k, "a SET statement has one value; give each option its own SET")
	}
	return items, j, nil
}

// statisticsKinds are the words SET STATISTICS takes; after STATISTICS they
// may also stand alone in the list (SET STATISTICS IO, TIME ON).
var statisticsKinds = map[string]bool{"IO": true, "TIME": true, "XML": true, "PROFILE": true}

// checkSetItem checks one option of the SET at code[k]; n is the number of
// options in its list.
func (c *classifier) checkSetItem(k, o, value, n int) error {
	name := c.code[o].Upper
	if statisticsKinds[name] && c.word(k+1) == "STATISTICS" && o > k+1 {
		name = "STATISTICS"
		o-- // checked as STATISTICS <kind>
	}
	opt, ok := harmlessSetOptions[name]
	if !ok {
		return c.refuse(k, fmt.Sprintf("SET %s is not among the SET options a traced batch may change (docs/security.md lists them)", name))
	}
	switch name {
	case "TRANSACTION":
		if c.word(o+1) != "ISOLATION" || c.word(o+2) != "LEVEL" || n > 1 {
			return c.refuse(k, "transaction statements are refused: the batch runs inside QueryReplay's transaction, which only QueryReplay may end")
		}
		return nil
	case "STATISTICS":
		if w := c.word(o + 1); !statisticsKinds[w] {
			return c.refuse(k, fmt.Sprintf("SET STATISTICS %s is not among the SET options a traced batch may change", w))
		}
	}
	if n > 1 && c.word(value) != "ON" && c.word(value) != "OFF" {
		return c.refuse(k, "a SET list of several options takes ON or OFF")
	}
	if opt.refuseOn != "" && c.word(value) != "OFF" {
		return c.refuse(k, opt.refuseOn)
	}
	return nil
}

// isAssignment: code[j] starts =, +=, -=, *=, /=, %=, &=, ^=, |= or is the
// . of column.method or table.column.
func (c *classifier) isAssignment(j int) bool {
	switch c.sym(j) {
	case "=", ".":
		return true
	case "+", "-", "*", "/", "%", "&", "^", "|":
		return c.sym(j+1) == "="
	}
	return false
}

// checkRaiserror refuses RAISERROR … WITH LOG, which writes to the server's
// error log and the Windows application log, outside any transaction
// (https://learn.microsoft.com/en-us/sql/t-sql/language-elements/raiserror-transact-sql).
func (c *classifier) checkRaiserror(k int) error {
	j := k + 1
	if c.sym(j) != "(" {
		return nil
	}
	j = c.closing(j)
	if c.word(j+1) != "WITH" {
		return nil
	}
	for j += 2; c.word(j) != "" || c.sym(j) == ","; j++ {
		if c.word(j) == "LOG" {
			return c.refuse(k, "RAISERROR … WITH LOG writes to the server's error log, which no rollback undoes")
		}
	}
	return nil
}

// closing returns the index of the ) that closes the ( at code[j] (or the
// end of the batch). The matches are computed in one pass the first time,
// so that nested RAISERROR(RAISERROR(… stays linear.
func (c *classifier) closing(j int) int {
	if c.closeAt == nil {
		c.closeAt = make([]int, len(c.code))
		var open []int
		for i := range c.code {
			c.closeAt[i] = len(c.code)
			switch c.sym(i) {
			case "(":
				open = append(open, i)
			case ")":
				if n := len(open); n > 0 {
					c.closeAt[open[n-1]] = i
					open = open[:n-1]
				}
			}
		}
	}
	return c.closeAt[j]
}

// checkFourPart refuses a four-part name, server.database.schema.object —
// with empty parts too (Srv.Db..Orders): it reaches a linked server, whose
// changes QueryReplay's rollback does not cover. It looks at each dotted
// chain once, from its first token.
func (c *classifier) checkFourPart(k int) error {
	inChain := func(i int) bool { return c.isNamePart(i) || c.sym(i) == "." }
	continues := c.sym(k-1) == "." || c.isNamePart(k-1) && c.sym(k) == "."
	if !inChain(k) || continues {
		return nil
	}
	dots, lastDot := 0, false
	prevPart := false
	for i := k; i < len(c.code); i++ {
		if c.sym(i) == "." {
			dots++
			prevPart, lastDot = false, true
			continue
		}
		if !c.isNamePart(i) || prevPart {
			break
		}
		prevPart, lastDot = true, false
	}
	if lastDot {
		dots-- // a.b.c.* : the star is not a part
	}
	if dots >= 3 {
		return c.refuse(k, "a four-part name reaches a linked server, whose changes QueryReplay's rollback does not cover")
	}
	return nil
}

// refuse builds the refusal for the statement holding code[k].
func (c *classifier) refuse(k int, why string) error {
	if k >= len(c.code) {
		k = len(c.code) - 1
	}
	t := c.code[k]
	stmt := c.statementText(k)
	note := ""
	if k > 0 {
		if p := c.code[k-1]; p.Kind == TokNumber && p.Pos+len(p.Text) == t.Pos && t.Kind == TokWord {
			note = fmt.Sprintf(" (SQL Server reads %q as the number %s followed by %s)", p.Text+t.Text, p.Text, t.Text)
		}
	}
	return &RefusedError{
		Reason:    fmt.Sprintf("line %d (%s): %s%s", t.Line, stmt, why, note),
		Line:      t.Line,
		Statement: stmt,
	}
}

// statementText is the statement holding code[k], shortened: from the
// nearest statement start before it to the next one after it.
func (c *classifier) statementText(k int) string {
	start := k
	for start > 0 && !c.startsStatement(start) {
		start--
	}
	end := k + 1
	for end < len(c.code) && !c.startsStatement(end) {
		end++
	}
	first, last := c.code[start], c.code[end-1]
	text := strings.Join(strings.Fields(c.src[first.Pos:last.Pos+len(last.Text)]), " ")
	if utf8.RuneCountInString(text) > 80 {
		r := []rune(text)
		text = string(r[:79]) + "…"
	}
	return text
}

// statementWords begin a statement wherever they stand; SELECT, INSERT,
// UPDATE, DELETE, MERGE and SET do unless they continue one. Only messages
// use this: the rules above never depend on where a statement begins.
var statementWords = map[string]bool{
	"COMMIT": true, "ROLLBACK": true, "SAVE": true, "EXEC": true, "EXECUTE": true, "DECLARE": true, "PRINT": true,
	"RAISERROR": true, "THROW": true, "RETURN": true, "BREAK": true, "CONTINUE": true, "GOTO": true, "WAITFOR": true,
	"CREATE": true, "DROP": true, "ALTER": true, "TRUNCATE": true, "DBCC": true, "KILL": true, "BACKUP": true,
	"RESTORE": true, "GRANT": true, "DENY": true, "REVOKE": true, "CHECKPOINT": true, "RECONFIGURE": true,
	"SHUTDOWN": true, "OPEN": true, "CLOSE": true, "DEALLOCATE": true, "BULK": true, "RECEIVE": true, "SEND": true,
	"IF": true, "WHILE": true, "READTEXT": true, "WRITETEXT": true, "UPDATETEXT": true, "SETUSER": true,
	"REVERT": true, "BEGIN": true, "MOVE": true, "GET": true,
}

func (c *classifier) startsStatement(k int) bool {
	if k == 0 || c.sym(k) == ";" || c.sym(k-1) == ";" {
		return true
	}
	w := c.word(k)
	if statementWords[w] {
		return true
	}
	prev := c.word(k - 1)
	switch w {
	case "SELECT":
		return c.sym(k-1) != "(" && c.sym(k-1) != ")" && prev != "UNION" && prev != "ALL" && prev != "EXCEPT" && prev != "INTERSECT"
	case "INSERT", "UPDATE", "DELETE", "MERGE":
		return c.sym(k-1) != ")" && prev != "THEN" && prev != "BULK"
	case "SET":
		return c.setStartsStatement(k)
	case "USE":
		return c.word(k+1) != "HINT" && c.word(k+1) != "PLAN"
	}
	return false
}

// setStartsStatement: SET begins a statement when a variable or an option
// follows it (not a column assignment of UPDATE).
func (c *classifier) setStartsStatement(k int) bool {
	return k+1 < len(c.code) && (c.code[k+1].Kind == TokVariable || c.isNamePart(k+1) && !c.isAssignment(k+2))
}

// exclusiveLockHints are the table hints that take exclusive or update
// locks (https://learn.microsoft.com/en-us/sql/t-sql/queries/hints-transact-sql-table).
// Held until QueryReplay's rollback, at the end of the trace, they block
// every other session that touches the table for as long as the batch
// runs (with a WAITFOR, minutes). The shared-lock hints (HOLDLOCK,
// SERIALIZABLE, REPEATABLEREAD, TABLOCK, PAGLOCK) are allowed: they hold
// no more than SET TRANSACTION ISOLATION LEVEL SERIALIZABLE does, and block
// writers only, until the trace's timeout at the latest.
var exclusiveLockHints = map[string]bool{"XLOCK": true, "UPDLOCK": true, "TABLOCKX": true}

// checkLockHint refuses an exclusive or update lock hint wherever table
// hints stand: WITH (…) and old-style (…) after a table in any FROM, JOIN,
// subquery, CTE or DML target, and OPTION (TABLE HINT (…)). A hint is a
// bare word inside parentheses; a column of that name is quoted
// ([XLOCK]) or qualified (t.XLOCK), or stands outside parentheses.
func (c *classifier) checkLockHint(k int) error {
	t := c.code[k]
	if t.Kind != TokWord || c.depth == 0 || !exclusiveLockHints[t.Upper] {
		return nil
	}
	if c.sym(k-1) == "." || c.sym(k+1) == "." || c.sym(k+1) == "(" {
		return nil
	}
	return c.refuse(k, fmt.Sprintf("the table hint %s takes exclusive or update locks, which QueryReplay's transaction would hold until the trace ends, blocking other sessions; traced batches may not take them (if this is a column, qualify or quote it)", t.Upper))
}

// brokerStatement tells whether the word code[k] begins a Service Broker
// statement. RECEIVE, SEND and CONVERSATION are not reserved: as names
// (a column, an alias, t.Send) they are allowed, so the statement is told
// from what follows the word
// (https://learn.microsoft.com/en-us/sql/t-sql/statements/receive-transact-sql,
// send-transact-sql, end-conversation-transact-sql and siblings).
func (c *classifier) brokerStatement(k int) bool {
	w := c.word(k)
	if w != "RECEIVE" && w != "SEND" && w != "CONVERSATION" && w != "DIALOG" {
		return false
	}
	if c.sym(k-1) == "." || c.sym(k+1) == "." || c.word(k-1) == "AS" {
		return false // a qualified name or an alias
	}
	switch w {
	case "SEND": // SEND ON CONVERSATION …
		return c.word(k+1) == "ON" && c.word(k+2) == "CONVERSATION"
	case "RECEIVE": // RECEIVE [TOP (n)] <columns> FROM <queue>
		return c.startsOperand(k+1) || c.sym(k+1) == "*" && (c.word(k+2) == "FROM" || c.sym(k+2) == ",")
	case "DIALOG": // BEGIN DIALOG [CONVERSATION], refused with BEGIN
		return false
	}
	// END / MOVE / GET CONVERSATION …, BEGIN CONVERSATION TIMER
	switch c.word(k - 1) {
	case "END", "MOVE", "GET", "BEGIN":
		return c.startsOperand(k+1) || c.word(k+1) == "GROUP"
	}
	return false
}

// startsOperand: code[j] can begin a column list or handle (a variable, a
// constant, a name that is not a reserved keyword, "(", or TOP), which a
// name or alias in its place would not be followed by.
func (c *classifier) startsOperand(j int) bool {
	if j >= len(c.code) {
		return false
	}
	switch t := c.code[j]; t.Kind {
	case TokVariable, TokString, TokNumber, TokQuotedName:
		return true
	case TokWord:
		_, reserved := reservedKeywords[t.Upper]
		return !reserved || t.Upper == "TOP"
	}
	return c.sym(j) == "("
}

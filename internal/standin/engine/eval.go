package engine

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/standin/xevents"
)

// Relation is an intermediate or final row set of a SELECT.
type Relation struct {
	Cols []RelCol
	Rows [][]any
	Srcs [][]RowSource // per row: the base-table rows it came from (for %%lockres%%, %%physloc%%)

	// As the schema of a plan operator's output: resolved column
	// references, and the expressions (aggregates, window functions,
	// subqueries, grouping expressions) an operator below computed into a
	// column of this relation.
	cache map[*sqlfront.ColRef]int // -1: not a column of this relation
	Subst map[sqlfront.Expr]int
}

// LookupRef resolves a column reference in this relation only: its
// position, -1 when absent, or Msg 209 when ambiguous. Results are cached.
func (r *Relation) LookupRef(c *sqlfront.ColRef) (int, *sqlfront.SQLError) {
	if i, ok := r.cache[c]; ok {
		return i, nil
	}
	name := c.Parts[len(c.Parts)-1]
	qual := ""
	if len(c.Parts) > 1 {
		qual = strings.ToLower(c.Parts[len(c.Parts)-2])
	}
	found := -1
	for i, col := range r.Cols {
		if strings.EqualFold(col.Name, name) && (qual == "" || col.Qual == qual) {
			if found >= 0 {
				return 0, ErrAmbiguousColumn(name)
			}
			found = i
		}
	}
	if r.cache == nil {
		r.cache = map[*sqlfront.ColRef]int{}
	}
	r.cache[c] = found
	return found, nil
}

type RelCol struct {
	Qual string // lower-case table alias or name
	Name string
	Typ  sqlfront.SQLType

	Hidden    bool          // carried for a sort, not sent to the client
	OrderExpr sqlfront.Expr // the ORDER BY expression a hidden column holds
	Base      *ColBase      // the base-table column it reads, for showplan column references
}

// ColBase names a column's table for showplan ColumnReference elements.
type ColBase struct {
	Db, Schema, Table, Alias string
}

type RowSource struct {
	Qual string
	Ix   RowIndex
	Row  []any
}

// EvalEnv resolves names while evaluating an expression.
type EvalEnv struct {
	X     Host
	Rel   *Relation
	Row   []any
	Srcs  []RowSource
	Outer *EvalEnv
	group [][]any // rows of the current group when aggregating
	gsrcs [][]RowSource
	aggOK bool
}

func (env *EvalEnv) lookupColumn(parts []string) (any, sqlfront.SQLType, *sqlfront.SQLError) {
	name := parts[len(parts)-1]
	qual := ""
	if len(parts) > 1 {
		qual = strings.ToLower(parts[len(parts)-2])
	}
	for e := env; e != nil; e = e.Outer {
		if e.Rel == nil {
			continue
		}
		found := -1
		for i, c := range e.Rel.Cols {
			if strings.EqualFold(c.Name, name) && (qual == "" || c.Qual == qual) {
				if found >= 0 {
					return nil, sqlfront.SQLType{}, ErrAmbiguousColumn(name)
				}
				found = i
			}
		}
		if found >= 0 {
			if e.Row == nil {
				return nil, e.Rel.Cols[found].Typ, nil
			}
			return e.Row[found], e.Rel.Cols[found].Typ, nil
		}
	}
	return nil, sqlfront.SQLType{}, ErrInvalidColumn(strings.Join(parts, "."))
}

// column evaluates a column reference through the scope chain.
func (env *EvalEnv) column(c *sqlfront.ColRef) (any, *sqlfront.SQLError) {
	for e := env; e != nil; e = e.Outer {
		if e.Rel == nil {
			continue
		}
		i, err := e.Rel.LookupRef(c)
		if err != nil {
			return nil, err
		}
		if i >= 0 {
			if e.Row == nil {
				return nil, nil
			}
			return e.Row[i], nil
		}
	}
	return nil, ErrInvalidColumn(strings.Join(c.Parts, "."))
}

// Truth is SQL's three-valued logic: nil means UNKNOWN.
func Truth(v any) (bool, bool) {
	switch x := v.(type) {
	case nil:
		return false, false
	case bool:
		return x, true
	case int64:
		return x != 0, true
	}
	return false, false
}

// Eval evaluates an expression against the row in scope; each expression
// kind with more than a line of logic has its own method below.
func (env *EvalEnv) Eval(e sqlfront.Expr) (any, *sqlfront.SQLError) {
	if env.Rel != nil && env.Rel.Subst != nil && env.Row != nil {
		if i, ok := env.Rel.Subst[e]; ok {
			return env.Row[i], nil
		}
	}
	switch x := e.(type) {
	case *sqlfront.Literal:
		return x.V, nil
	case *sqlfront.VarRef:
		return env.X.Variable(x.Name)
	case *sqlfront.ColRef:
		return env.column(x)
	case *sqlfront.PseudoCol:
		return env.pseudo(x)
	case *sqlfront.CastExpr:
		return env.cast(x)
	case *sqlfront.UnaryExpr:
		return env.unary(x)
	case *sqlfront.BinaryExpr:
		return env.binary(x)
	case *sqlfront.IsNullExpr:
		v, err := env.Eval(x.E)
		if err != nil {
			return nil, err
		}
		return (v == nil) != x.Not, nil
	case *sqlfront.LikeExpr:
		return env.like(x)
	case *sqlfront.BetweenExpr:
		return env.between(x)
	case *sqlfront.InExpr:
		return env.in(x)
	case *sqlfront.CaseExpr:
		return env.caseWhen(x)
	case *sqlfront.SubqueryExpr:
		return env.scalarSubquery(x)
	case *sqlfront.ExistsExpr:
		rows, err := env.X.SubqueryRows(x.Sel, env, 1)
		if err != nil {
			return nil, err
		}
		return len(rows) > 0, nil
	case *sqlfront.QuantifiedExpr:
		return env.quantified(x)
	case *sqlfront.WindowExpr:
		return nil, sqlfront.NewError(4108, 15, "Windowed functions can only appear in the SELECT or ORDER BY clauses.")
	case *sqlfront.FuncCall:
		return env.call(x)
	}
	return nil, sqlfront.ErrUnsupported(fmt.Sprintf("%T", e))
}

// cast evaluates CAST, CONVERT and their TRY_ forms.
func (env *EvalEnv) cast(x *sqlfront.CastExpr) (any, *sqlfront.SQLError) {
	v, err := env.Eval(x.E)
	if err != nil {
		return nil, err
	}
	var style int64 = -1
	if x.Style != nil {
		sv, err := env.Eval(x.Style)
		if err != nil {
			return nil, err
		}
		if n, ok := sv.(int64); ok {
			style = n
		}
	}
	out, cerr := convertStyled(v, x.T, style)
	if cerr != nil && x.Try {
		return nil, nil
	}
	return out, cerr
}

// unary evaluates NOT, unary minus and bitwise NOT.
func (env *EvalEnv) unary(x *sqlfront.UnaryExpr) (any, *sqlfront.SQLError) {
	v, err := env.Eval(x.E)
	if err != nil {
		return nil, err
	}
	switch x.Op {
	case "NOT":
		b, known := Truth(v)
		if !known {
			return nil, nil
		}
		return !b, nil
	case "-":
		switch n := v.(type) {
		case int64:
			return -n, nil
		case float64:
			return -n, nil
		case nil:
			return nil, nil
		}
		return nil, ErrConversion("nvarchar", ValueString(v), "int")
	case "~":
		if n, ok := v.(int64); ok {
			return ^n, nil
		}
		return nil, nil
	}
	return nil, sqlfront.ErrUnsupported(fmt.Sprintf("%T", x))
}

// like evaluates LIKE with its optional ESCAPE.
func (env *EvalEnv) like(x *sqlfront.LikeExpr) (any, *sqlfront.SQLError) {
	v, err := env.Eval(x.E)
	if err != nil {
		return nil, err
	}
	p, err := env.Eval(x.Pattern)
	if err != nil {
		return nil, err
	}
	if v == nil || p == nil {
		return nil, nil
	}
	pat := ValueString(p)
	if x.Escape != nil {
		ev, err := env.Eval(x.Escape)
		if err != nil {
			return nil, err
		}
		pat = escapeLike(pat, ValueString(ev))
	}
	return LikeMatch(ValueString(v), pat) != x.Not, nil
}

// between evaluates [NOT] BETWEEN.
func (env *EvalEnv) between(x *sqlfront.BetweenExpr) (any, *sqlfront.SQLError) {
	v, err := env.Eval(x.E)
	if err != nil {
		return nil, err
	}
	lo, err := env.Eval(x.Lo)
	if err != nil {
		return nil, err
	}
	hi, err := env.Eval(x.Hi)
	if err != nil {
		return nil, err
	}
	if v == nil || lo == nil || hi == nil {
		return nil, nil
	}
	c1, err := CompareValues(v, lo)
	if err != nil {
		return nil, err
	}
	c2, err := CompareValues(v, hi)
	if err != nil {
		return nil, err
	}
	return (c1 >= 0 && c2 <= 0) != x.Not, nil
}

// in evaluates [NOT] IN over a list or a subquery, NULL as SQL's three-valued logic says.
func (env *EvalEnv) in(x *sqlfront.InExpr) (any, *sqlfront.SQLError) {
	v, err := env.Eval(x.E)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, nil
	}
	if set := constantInSet(env.X, x, env); set != nil {
		if set.members[JoinKey(v)] {
			return !x.Not, nil
		}
		if set.hasNull {
			return nil, nil
		}
		return x.Not, nil
	}
	list := x.List
	var values []any
	if x.Sub != nil {
		rows, err := env.X.SubqueryRows(x.Sub, env, 0)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			values = append(values, r[0])
		}
	} else {
		for _, a := range list {
			av, err := env.Eval(a)
			if err != nil {
				return nil, err
			}
			values = append(values, av)
		}
	}
	sawNull := false
	for _, av := range values {
		if av == nil {
			sawNull = true
			continue
		}
		c, err := CompareValues(v, av)
		if err != nil {
			return nil, err
		}
		if c == 0 {
			return !x.Not, nil
		}
	}
	if sawNull {
		return nil, nil
	}
	return x.Not, nil
}

// caseWhen evaluates simple and searched CASE.
func (env *EvalEnv) caseWhen(x *sqlfront.CaseExpr) (any, *sqlfront.SQLError) {
	var operand any
	if x.Operand != nil {
		v, err := env.Eval(x.Operand)
		if err != nil {
			return nil, err
		}
		operand = v
	}
	for _, w := range x.Whens {
		c, err := env.Eval(w.Cond)
		if err != nil {
			return nil, err
		}
		hit := false
		if x.Operand != nil {
			if operand != nil && c != nil {
				cmp, err := CompareValues(operand, c)
				if err != nil {
					return nil, err
				}
				hit = cmp == 0
			}
		} else {
			hit, _ = Truth(c)
		}
		if hit {
			return env.Eval(w.Result)
		}
	}
	if x.Else != nil {
		return env.Eval(x.Else)
	}
	return nil, nil
}

// scalarSubquery evaluates a subquery used as a value: at most one row.
func (env *EvalEnv) scalarSubquery(x *sqlfront.SubqueryExpr) (any, *sqlfront.SQLError) {
	rows, err := env.X.SubqueryRows(x.Sel, env, 2)
	if err != nil {
		return nil, err
	}
	switch len(rows) {
	case 0:
		return nil, nil
	case 1:
		return rows[0][0], nil
	}
	return nil, ErrSubqueryMultipleRows()
}

// call evaluates a function call: aggregates are not allowed here, lazy
// functions evaluate their own arguments, the rest get theirs evaluated first.
func (env *EvalEnv) call(x *sqlfront.FuncCall) (any, *sqlfront.SQLError) {
	if IsAggregateName(x.Name) {
		return nil, ErrAggregateInWhere()
	}
	if lazy, ok := env.lazyFunc(x); ok {
		return lazy()
	}
	args := make([]any, len(x.Args))
	for i, a := range x.Args {
		v, err := env.Eval(a)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	return scalarFunc(env.X, x.Name, args)
}

// InSet is a precomputed IN list of constants (literals and variables),
// so that WHERE %%lockres%% IN (@h0, …, @h1999) costs one lookup per row.
type InSet struct {
	members map[string]bool
	hasNull bool
}

// constantInSet returns the set for a long IN list of constants, built once
// per request; nil when the list is short or not constant.
func constantInSet(h Host, in *sqlfront.InExpr, env *EvalEnv) *InSet {
	if in.Sub != nil || len(in.List) < 8 {
		return nil
	}
	cache := h.InSetCache()
	if set, ok := cache[in]; ok {
		return set
	}
	set := &InSet{members: map[string]bool{}}
	for _, e := range in.List {
		switch e.(type) {
		case *sqlfront.Literal, *sqlfront.VarRef:
		default:
			return nil
		}
		v, err := env.Eval(e)
		if err != nil {
			return nil
		}
		if v == nil {
			set.hasNull = true
			continue
		}
		set.members[JoinKey(v)] = true
	}
	cache[in] = set
	return set
}

func (env *EvalEnv) binary(x *sqlfront.BinaryExpr) (any, *sqlfront.SQLError) {
	if x.Op == "AND" || x.Op == "OR" {
		l, err := env.Eval(x.L)
		if err != nil {
			return nil, err
		}
		lb, lk := Truth(l)
		if x.Op == "AND" && lk && !lb {
			return false, nil
		}
		if x.Op == "OR" && lk && lb {
			return true, nil
		}
		r, err := env.Eval(x.R)
		if err != nil {
			return nil, err
		}
		rb, rk := Truth(r)
		if x.Op == "AND" {
			if rk && !rb {
				return false, nil
			}
			if lk && rk {
				return true, nil
			}
			return nil, nil
		}
		if rk && rb {
			return true, nil
		}
		if lk && rk {
			return false, nil
		}
		return nil, nil
	}
	l, err := env.Eval(x.L)
	if err != nil {
		return nil, err
	}
	r, err := env.Eval(x.R)
	if err != nil {
		return nil, err
	}
	if l == nil || r == nil {
		return nil, nil
	}
	switch x.Op {
	case "=", "<>", "<", ">", "<=", ">=":
		c, err := CompareValues(l, r)
		if err != nil {
			return nil, err
		}
		return xevents.CmpOp(x.Op, c), nil
	}
	// arithmetic and string concatenation
	if ls, ok := l.(string); ok && x.Op == "+" {
		if rs, ok := r.(string); ok {
			return ls + rs, nil
		}
	}
	if lb, ok := l.([]byte); ok && x.Op == "+" {
		if rb, ok := r.([]byte); ok {
			return append(append([]byte{}, lb...), rb...), nil
		}
	}
	if lt, ok := l.(time.Time); ok {
		if n, ok := r.(int64); ok && (x.Op == "+" || x.Op == "-") {
			if x.Op == "-" {
				n = -n
			}
			return lt.AddDate(0, 0, int(n)), nil
		}
	}
	ln, lf, lerr := numeric(l)
	rn, rf, rerr := numeric(r)
	if lerr != nil {
		return nil, lerr
	}
	if rerr != nil {
		return nil, rerr
	}
	if lf || rf {
		a, b := toFloat(l), toFloat(r)
		switch x.Op {
		case "+":
			return a + b, nil
		case "-":
			return a - b, nil
		case "*":
			return a * b, nil
		case "/":
			if b == 0 {
				return nil, ErrDivideByZero()
			}
			return a / b, nil
		case "%":
			if b == 0 {
				return nil, ErrDivideByZero()
			}
			return math.Mod(a, b), nil
		}
	}
	switch x.Op {
	case "+":
		return ln + rn, nil
	case "-":
		return ln - rn, nil
	case "*":
		return ln * rn, nil
	case "/":
		if rn == 0 {
			return nil, ErrDivideByZero()
		}
		return ln / rn, nil
	case "%":
		if rn == 0 {
			return nil, ErrDivideByZero()
		}
		return ln % rn, nil
	case "&":
		return ln & rn, nil
	case "|":
		return ln | rn, nil
	case "^":
		return ln ^ rn, nil
	}
	return nil, sqlfront.ErrSyntaxNear(x.Op)
}

func numeric(v any) (int64, bool, *sqlfront.SQLError) {
	switch x := v.(type) {
	case int64:
		return x, false, nil
	case float64:
		return 0, true, nil
	case bool:
		return BoolInt(x), false, nil
	case string:
		f, err := ToNumber(x, "int")
		if err != nil {
			return 0, false, err
		}
		if f == math.Trunc(f) && !strings.Contains(x, ".") {
			return int64(f), false, nil
		}
		return 0, true, nil
	}
	return 0, false, ErrConversion(TypeOfValue(v).String(), ValueString(v), "int")
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case bool:
		return float64(BoolInt(x))
	case string:
		f, _ := ToNumber(x, "float")
		return f
	}
	return 0
}

func (env *EvalEnv) pseudo(p *sqlfront.PseudoCol) (any, *sqlfront.SQLError) {
	var src *RowSource
	for i := range env.Srcs {
		if p.Qual == "" || strings.EqualFold(env.Srcs[i].Qual, p.Qual) {
			if src != nil && p.Qual == "" {
				return nil, ErrAmbiguousColumn(p.Name)
			}
			src = &env.Srcs[i]
		}
	}
	if src == nil || src.Ix == nil {
		if env.Row == nil {
			return nil, nil
		}
		return nil, ErrInvalidColumn(p.Name)
	}
	switch p.Name {
	case "%%lockres%%":
		return src.Ix.LockRes(src.Row), nil
	case "%%physloc%%":
		return src.Ix.PhysLoc(src.Row), nil
	}
	return nil, ErrInvalidColumn(p.Name)
}

// StaticType gives the declared type of simple expressions (columns, CASTs,
// known functions) so result metadata does not depend on the data.
func StaticType(e sqlfront.Expr, rel *Relation) (sqlfront.SQLType, bool) {
	switch x := e.(type) {
	case *sqlfront.ColRef:
		env := &EvalEnv{Rel: rel}
		_, t, err := env.lookupColumn(x.Parts)
		if err == nil && t.Kind != 0 {
			return t, true
		}
	case *sqlfront.CastExpr:
		return x.T, true
	case *sqlfront.PseudoCol:
		if x.Name == "%%physloc%%" {
			return TVarBin(8), true
		}
		return TNVar(14), true
	case *sqlfront.FuncCall:
		switch x.Name {
		case "COUNT":
			return TInt, true
		case "COUNT_BIG":
			return TBigInt, true
		case "DB_ID", "OBJECT_ID", "SCHEMA_ID", "HAS_PERMS_BY_NAME", "IS_SRVROLEMEMBER", "LEN", "CHARINDEX", "PATINDEX":
			return TInt, true
		case "DB_NAME", "OBJECT_NAME", "SCHEMA_NAME", "SUSER_NAME", "SUSER_SNAME", "USER_NAME", "QUOTENAME":
			return TNVar(128), true
		case "OBJECT_DEFINITION":
			return TNVar(0), true
		case "@@SPID":
			return TSmallInt, true
		}
	case *sqlfront.VarRef:
		switch strings.ToUpper(x.Name) {
		case "@@SPID":
			return TSmallInt, true
		case "@@VERSION":
			return TNVar(300), true
		case "@@TRANCOUNT", "@@ROWCOUNT", "@@ERROR":
			return TInt, true
		case "@@SERVERNAME":
			return TNVar(128), true
		}
	}
	return sqlfront.SQLType{}, false
}

// LikeMatch implements LIKE with %, _ and [set] wildcards, case-insensitive.
func LikeMatch(s, pattern string) bool {
	return likeRunes([]rune(strings.ToUpper(s)), []rune(strings.ToUpper(pattern)))
}

func likeRunes(s, p []rune) bool {
	for len(p) > 0 {
		switch p[0] {
		case '%':
			for len(p) > 0 && p[0] == '%' {
				p = p[1:]
			}
			if len(p) == 0 {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if likeRunes(s[i:], p) {
					return true
				}
			}
			return false
		case '_':
			if len(s) == 0 {
				return false
			}
			s, p = s[1:], p[1:]
		case '[':
			end := -1
			for j := 1; j < len(p); j++ {
				if p[j] == ']' {
					end = j
					break
				}
			}
			if end < 0 || len(s) == 0 {
				return false
			}
			set := p[1:end]
			neg := len(set) > 0 && set[0] == '^'
			if neg {
				set = set[1:]
			}
			match := false
			for j := 0; j < len(set); j++ {
				if j+2 < len(set) && set[j+1] == '-' {
					if s[0] >= set[j] && s[0] <= set[j+2] {
						match = true
					}
					j += 2
				} else if set[j] == s[0] {
					match = true
				}
			}
			if match == neg {
				return false
			}
			s, p = s[1:], p[end+1:]
		default:
			if len(s) == 0 || s[0] != p[0] {
				return false
			}
			s, p = s[1:], p[1:]
		}
	}
	return len(s) == 0
}

// JoinKey normalises a value for hashing the way compareValues equates
// Values: numbers by value, strings case-insensitively without trailing
// spaces.
func JoinKey(v any) string {
	switch x := v.(type) {
	case int64:
		return "n" + strconv.FormatFloat(float64(x), 'g', -1, 64)
	case float64:
		return "n" + strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return "n" + strconv.FormatInt(BoolInt(x), 10)
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
			return "n" + strconv.FormatFloat(f, 'g', -1, 64)
		}
		return "s" + strings.ToUpper(strings.TrimRight(x, " "))
	}
	return "x" + ValueString(v)
}

func IsAggregateName(name string) bool {
	switch name {
	case "COUNT", "COUNT_BIG", "SUM", "MIN", "MAX", "AVG", "STRING_AGG", "STDEV", "STDEVP", "VAR", "VARP", "CHECKSUM_AGG":
		return true
	}
	return false
}

// Physloc encodes %%physloc%%: page id (4 bytes LE), file id (2 bytes LE),
// slot (2 bytes LE), as sys.fn_PhysLocFormatter decodes it.
func Physloc(page int32, file, slot int) []byte {
	return []byte{byte(page), byte(page >> 8), byte(page >> 16), byte(page >> 24), byte(file), byte(file >> 8), byte(slot), byte(slot >> 8)}
}

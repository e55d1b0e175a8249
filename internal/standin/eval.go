package standin

import (
	"fmt"
	"github.com/queryreplay/queryreplay/internal/standin/engine"
	"math"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/standin/xevents"
)

// relation is an intermediate or final row set of a SELECT.
type relation struct {
	cols []relCol
	rows [][]any
	srcs [][]rowSource // per row: the base-table rows it came from (for %%lockres%%, %%physloc%%)

	// As the schema of a plan operator's output: resolved column
	// references, and the expressions (aggregates, window functions,
	// subqueries, grouping expressions) an operator below computed into a
	// column of this relation.
	cache map[*sqlfront.ColRef]int // -1: not a column of this relation
	subst map[sqlfront.Expr]int
}

// lookupRef resolves a column reference in this relation only: its
// position, -1 when absent, or Msg 209 when ambiguous. Results are cached.
func (r *relation) lookupRef(c *sqlfront.ColRef) (int, *sqlfront.SQLError) {
	if i, ok := r.cache[c]; ok {
		return i, nil
	}
	name := c.Parts[len(c.Parts)-1]
	qual := ""
	if len(c.Parts) > 1 {
		qual = strings.ToLower(c.Parts[len(c.Parts)-2])
	}
	found := -1
	for i, col := range r.cols {
		if strings.EqualFold(col.name, name) && (qual == "" || col.qual == qual) {
			if found >= 0 {
				return 0, engine.ErrAmbiguousColumn(name)
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

type relCol struct {
	qual string // lower-case table alias or name
	name string
	typ  sqlfront.SQLType

	hidden    bool          // carried for a sort, not sent to the client
	orderExpr sqlfront.Expr // the ORDER BY expression a hidden column holds
	base      *colBase      // the base-table column it reads, for showplan column references
}

// colBase names a column's table for showplan ColumnReference elements.
type colBase struct {
	db, schema, table, alias string
}

type rowSource struct {
	qual string
	ix   *index
	row  []any
}

// evalEnv resolves names while evaluating an expression.
type evalEnv struct {
	x     *execCtx
	rel   *relation
	row   []any
	srcs  []rowSource
	outer *evalEnv
	group [][]any // rows of the current group when aggregating
	gsrcs [][]rowSource
	aggOK bool
}

func (env *evalEnv) lookupColumn(parts []string) (any, sqlfront.SQLType, *sqlfront.SQLError) {
	name := parts[len(parts)-1]
	qual := ""
	if len(parts) > 1 {
		qual = strings.ToLower(parts[len(parts)-2])
	}
	for e := env; e != nil; e = e.outer {
		if e.rel == nil {
			continue
		}
		found := -1
		for i, c := range e.rel.cols {
			if strings.EqualFold(c.name, name) && (qual == "" || c.qual == qual) {
				if found >= 0 {
					return nil, sqlfront.SQLType{}, engine.ErrAmbiguousColumn(name)
				}
				found = i
			}
		}
		if found >= 0 {
			if e.row == nil {
				return nil, e.rel.cols[found].typ, nil
			}
			return e.row[found], e.rel.cols[found].typ, nil
		}
	}
	return nil, sqlfront.SQLType{}, engine.ErrInvalidColumn(strings.Join(parts, "."))
}

// column evaluates a column reference through the scope chain.
func (env *evalEnv) column(c *sqlfront.ColRef) (any, *sqlfront.SQLError) {
	for e := env; e != nil; e = e.outer {
		if e.rel == nil {
			continue
		}
		i, err := e.rel.lookupRef(c)
		if err != nil {
			return nil, err
		}
		if i >= 0 {
			if e.row == nil {
				return nil, nil
			}
			return e.row[i], nil
		}
	}
	return nil, engine.ErrInvalidColumn(strings.Join(c.Parts, "."))
}

// truth is SQL's three-valued logic: nil means UNKNOWN.
func truth(v any) (bool, bool) {
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

// eval evaluates an expression against the row in scope; each expression
// kind with more than a line of logic has its own method below.
func (env *evalEnv) eval(e sqlfront.Expr) (any, *sqlfront.SQLError) {
	if env.rel != nil && env.rel.subst != nil && env.row != nil {
		if i, ok := env.rel.subst[e]; ok {
			return env.row[i], nil
		}
	}
	switch x := e.(type) {
	case *sqlfront.Literal:
		return x.V, nil
	case *sqlfront.VarRef:
		return env.x.variable(x.Name)
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
		v, err := env.eval(x.E)
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
		rows, err := env.x.subqueryRows(x.Sel, env, 1)
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
func (env *evalEnv) cast(x *sqlfront.CastExpr) (any, *sqlfront.SQLError) {
	v, err := env.eval(x.E)
	if err != nil {
		return nil, err
	}
	var style int64 = -1
	if x.Style != nil {
		sv, err := env.eval(x.Style)
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
func (env *evalEnv) unary(x *sqlfront.UnaryExpr) (any, *sqlfront.SQLError) {
	v, err := env.eval(x.E)
	if err != nil {
		return nil, err
	}
	switch x.Op {
	case "NOT":
		b, known := truth(v)
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
		return nil, engine.ErrConversion("nvarchar", engine.ValueString(v), "int")
	case "~":
		if n, ok := v.(int64); ok {
			return ^n, nil
		}
		return nil, nil
	}
	return nil, sqlfront.ErrUnsupported(fmt.Sprintf("%T", x))
}

// like evaluates LIKE with its optional ESCAPE.
func (env *evalEnv) like(x *sqlfront.LikeExpr) (any, *sqlfront.SQLError) {
	v, err := env.eval(x.E)
	if err != nil {
		return nil, err
	}
	p, err := env.eval(x.Pattern)
	if err != nil {
		return nil, err
	}
	if v == nil || p == nil {
		return nil, nil
	}
	pat := engine.ValueString(p)
	if x.Escape != nil {
		ev, err := env.eval(x.Escape)
		if err != nil {
			return nil, err
		}
		pat = escapeLike(pat, engine.ValueString(ev))
	}
	return likeMatch(engine.ValueString(v), pat) != x.Not, nil
}

// between evaluates [NOT] BETWEEN.
func (env *evalEnv) between(x *sqlfront.BetweenExpr) (any, *sqlfront.SQLError) {
	v, err := env.eval(x.E)
	if err != nil {
		return nil, err
	}
	lo, err := env.eval(x.Lo)
	if err != nil {
		return nil, err
	}
	hi, err := env.eval(x.Hi)
	if err != nil {
		return nil, err
	}
	if v == nil || lo == nil || hi == nil {
		return nil, nil
	}
	c1, err := engine.CompareValues(v, lo)
	if err != nil {
		return nil, err
	}
	c2, err := engine.CompareValues(v, hi)
	if err != nil {
		return nil, err
	}
	return (c1 >= 0 && c2 <= 0) != x.Not, nil
}

// in evaluates [NOT] IN over a list or a subquery, NULL as SQL's three-valued logic says.
func (env *evalEnv) in(x *sqlfront.InExpr) (any, *sqlfront.SQLError) {
	v, err := env.eval(x.E)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, nil
	}
	if set := env.x.constantInSet(x, env); set != nil {
		if set.members[joinKey(v)] {
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
		rows, err := env.x.subqueryRows(x.Sub, env, 0)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			values = append(values, r[0])
		}
	} else {
		for _, a := range list {
			av, err := env.eval(a)
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
		c, err := engine.CompareValues(v, av)
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
func (env *evalEnv) caseWhen(x *sqlfront.CaseExpr) (any, *sqlfront.SQLError) {
	var operand any
	if x.Operand != nil {
		v, err := env.eval(x.Operand)
		if err != nil {
			return nil, err
		}
		operand = v
	}
	for _, w := range x.Whens {
		c, err := env.eval(w.Cond)
		if err != nil {
			return nil, err
		}
		hit := false
		if x.Operand != nil {
			if operand != nil && c != nil {
				cmp, err := engine.CompareValues(operand, c)
				if err != nil {
					return nil, err
				}
				hit = cmp == 0
			}
		} else {
			hit, _ = truth(c)
		}
		if hit {
			return env.eval(w.Result)
		}
	}
	if x.Else != nil {
		return env.eval(x.Else)
	}
	return nil, nil
}

// scalarSubquery evaluates a subquery used as a value: at most one row.
func (env *evalEnv) scalarSubquery(x *sqlfront.SubqueryExpr) (any, *sqlfront.SQLError) {
	rows, err := env.x.subqueryRows(x.Sel, env, 2)
	if err != nil {
		return nil, err
	}
	switch len(rows) {
	case 0:
		return nil, nil
	case 1:
		return rows[0][0], nil
	}
	return nil, engine.ErrSubqueryMultipleRows()
}

// call evaluates a function call: aggregates are not allowed here, lazy
// functions evaluate their own arguments, the rest get theirs evaluated first.
func (env *evalEnv) call(x *sqlfront.FuncCall) (any, *sqlfront.SQLError) {
	if isAggregateName(x.Name) {
		return nil, engine.ErrAggregateInWhere()
	}
	if lazy, ok := env.lazyFunc(x); ok {
		return lazy()
	}
	args := make([]any, len(x.Args))
	for i, a := range x.Args {
		v, err := env.eval(a)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	return env.x.scalarFunc(x.Name, args)
}

// inSet is a precomputed IN list of constants (literals and variables),
// so that WHERE %%lockres%% IN (@h0, …, @h1999) costs one lookup per row.
type inSet struct {
	members map[string]bool
	hasNull bool
}

// constantInSet returns the set for a long IN list of constants, built once
// per request; nil when the list is short or not constant.
func (x *execCtx) constantInSet(in *sqlfront.InExpr, env *evalEnv) *inSet {
	if in.Sub != nil || len(in.List) < 8 {
		return nil
	}
	if set, ok := x.inSets[in]; ok {
		return set
	}
	set := &inSet{members: map[string]bool{}}
	for _, e := range in.List {
		switch e.(type) {
		case *sqlfront.Literal, *sqlfront.VarRef:
		default:
			return nil
		}
		v, err := env.eval(e)
		if err != nil {
			return nil
		}
		if v == nil {
			set.hasNull = true
			continue
		}
		set.members[joinKey(v)] = true
	}
	if x.inSets == nil {
		x.inSets = map[*sqlfront.InExpr]*inSet{}
	}
	x.inSets[in] = set
	return set
}

func (env *evalEnv) binary(x *sqlfront.BinaryExpr) (any, *sqlfront.SQLError) {
	if x.Op == "AND" || x.Op == "OR" {
		l, err := env.eval(x.L)
		if err != nil {
			return nil, err
		}
		lb, lk := truth(l)
		if x.Op == "AND" && lk && !lb {
			return false, nil
		}
		if x.Op == "OR" && lk && lb {
			return true, nil
		}
		r, err := env.eval(x.R)
		if err != nil {
			return nil, err
		}
		rb, rk := truth(r)
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
	l, err := env.eval(x.L)
	if err != nil {
		return nil, err
	}
	r, err := env.eval(x.R)
	if err != nil {
		return nil, err
	}
	if l == nil || r == nil {
		return nil, nil
	}
	switch x.Op {
	case "=", "<>", "<", ">", "<=", ">=":
		c, err := engine.CompareValues(l, r)
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
				return nil, engine.ErrDivideByZero()
			}
			return a / b, nil
		case "%":
			if b == 0 {
				return nil, engine.ErrDivideByZero()
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
			return nil, engine.ErrDivideByZero()
		}
		return ln / rn, nil
	case "%":
		if rn == 0 {
			return nil, engine.ErrDivideByZero()
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
		return engine.BoolInt(x), false, nil
	case string:
		f, err := engine.ToNumber(x, "int")
		if err != nil {
			return 0, false, err
		}
		if f == math.Trunc(f) && !strings.Contains(x, ".") {
			return int64(f), false, nil
		}
		return 0, true, nil
	}
	return 0, false, engine.ErrConversion(engine.TypeOfValue(v).String(), engine.ValueString(v), "int")
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case bool:
		return float64(engine.BoolInt(x))
	case string:
		f, _ := engine.ToNumber(x, "float")
		return f
	}
	return 0
}

func (env *evalEnv) pseudo(p *sqlfront.PseudoCol) (any, *sqlfront.SQLError) {
	var src *rowSource
	for i := range env.srcs {
		if p.Qual == "" || strings.EqualFold(env.srcs[i].qual, p.Qual) {
			if src != nil && p.Qual == "" {
				return nil, engine.ErrAmbiguousColumn(p.Name)
			}
			src = &env.srcs[i]
		}
	}
	if src == nil || src.ix == nil {
		if env.row == nil {
			return nil, nil
		}
		return nil, engine.ErrInvalidColumn(p.Name)
	}
	switch p.Name {
	case "%%lockres%%":
		return src.ix.keyHash(src.row), nil
	case "%%physloc%%":
		page, slot := src.ix.location(src.ix.entryPos(src.row))
		return physloc(page, 1, slot), nil
	}
	return nil, engine.ErrInvalidColumn(p.Name)
}

// staticType gives the declared type of simple expressions (columns, CASTs,
// known functions) so result metadata does not depend on the data.
func staticType(e sqlfront.Expr, rel *relation) (sqlfront.SQLType, bool) {
	switch x := e.(type) {
	case *sqlfront.ColRef:
		env := &evalEnv{rel: rel}
		_, t, err := env.lookupColumn(x.Parts)
		if err == nil && t.Kind != 0 {
			return t, true
		}
	case *sqlfront.CastExpr:
		return x.T, true
	case *sqlfront.PseudoCol:
		if x.Name == "%%physloc%%" {
			return engine.TVarBin(8), true
		}
		return engine.TNVar(14), true
	case *sqlfront.FuncCall:
		switch x.Name {
		case "COUNT":
			return engine.TInt, true
		case "COUNT_BIG":
			return engine.TBigInt, true
		case "DB_ID", "OBJECT_ID", "SCHEMA_ID", "HAS_PERMS_BY_NAME", "IS_SRVROLEMEMBER", "LEN", "CHARINDEX", "PATINDEX":
			return engine.TInt, true
		case "DB_NAME", "OBJECT_NAME", "SCHEMA_NAME", "SUSER_NAME", "SUSER_SNAME", "USER_NAME", "QUOTENAME":
			return engine.TNVar(128), true
		case "OBJECT_DEFINITION":
			return engine.TNVar(0), true
		case "@@SPID":
			return engine.TSmallInt, true
		}
	case *sqlfront.VarRef:
		switch strings.ToUpper(x.Name) {
		case "@@SPID":
			return engine.TSmallInt, true
		case "@@VERSION":
			return engine.TNVar(300), true
		case "@@TRANCOUNT", "@@ROWCOUNT", "@@ERROR":
			return engine.TInt, true
		case "@@SERVERNAME":
			return engine.TNVar(128), true
		}
	}
	return sqlfront.SQLType{}, false
}

// likeMatch implements LIKE with %, _ and [set] wildcards, case-insensitive.
func likeMatch(s, pattern string) bool {
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

package standin

import (
	"fmt"
	"strings"

	"github.com/queryreplay/queryreplay/internal/standin/engine"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// Expression analysis for the planner: conjuncts, the columns an
// expression uses, subqueries inside it, and its static result type.

// conjuncts splits e at top-level ANDs.
func conjuncts(e sqlfront.Expr) []sqlfront.Expr {
	if e == nil {
		return nil
	}
	if b, ok := e.(*sqlfront.BinaryExpr); ok && b.Op == "AND" {
		return append(conjuncts(b.L), conjuncts(b.R)...)
	}
	return []sqlfront.Expr{e}
}

// andAll joins conjuncts back into one predicate (nil for none).
func andAll(es []sqlfront.Expr) sqlfront.Expr {
	var out sqlfront.Expr
	for _, e := range es {
		if out == nil {
			out = e
		} else {
			out = &sqlfront.BinaryExpr{Op: "AND", L: out, R: e}
		}
	}
	return out
}

// visit walks e without entering subqueries, calling fn for every node;
// fn returns false to skip a node's children.
func visit(e sqlfront.Expr, fn func(sqlfront.Expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	switch x := e.(type) {
	case *sqlfront.FuncCall:
		for _, a := range x.Args {
			visit(a, fn)
		}
		for _, o := range x.Within {
			visit(o.Expr, fn)
		}
	case *sqlfront.WindowExpr:
		visit(x.F, fn)
		for _, p := range x.PartitionBy {
			visit(p, fn)
		}
		for _, o := range x.OrderBy {
			visit(o.Expr, fn)
		}
	case *sqlfront.CastExpr:
		visit(x.E, fn)
		visit(x.Style, fn)
	case *sqlfront.UnaryExpr:
		visit(x.E, fn)
	case *sqlfront.BinaryExpr:
		visit(x.L, fn)
		visit(x.R, fn)
	case *sqlfront.IsNullExpr:
		visit(x.E, fn)
	case *sqlfront.InExpr:
		visit(x.E, fn)
		for _, a := range x.List {
			visit(a, fn)
		}
	case *sqlfront.LikeExpr:
		visit(x.E, fn)
		visit(x.Pattern, fn)
		visit(x.Escape, fn)
	case *sqlfront.BetweenExpr:
		visit(x.E, fn)
		visit(x.Lo, fn)
		visit(x.Hi, fn)
	case *sqlfront.CaseExpr:
		visit(x.Operand, fn)
		for _, w := range x.Whens {
			visit(w.Cond, fn)
			visit(w.Result, fn)
		}
		visit(x.Else, fn)
	case *sqlfront.QuantifiedExpr:
		visit(x.E, fn)
	}
}

// subqueriesOf lists the subquery-bearing nodes of e (scalar subqueries,
// EXISTS, IN (SELECT …), ANY/ALL), outermost first, not nested ones.
func subqueriesOf(e sqlfront.Expr) []sqlfront.Expr {
	var out []sqlfront.Expr
	visit(e, func(n sqlfront.Expr) bool {
		switch x := n.(type) {
		case *sqlfront.SubqueryExpr, *sqlfront.ExistsExpr, *sqlfront.QuantifiedExpr:
			out = append(out, n)
			return false
		case *sqlfront.InExpr:
			if x.Sub != nil {
				out = append(out, n)
				return false
			}
		}
		return true
	})
	return out
}

func hasSubquery(e sqlfront.Expr) bool { return len(subqueriesOf(e)) > 0 }

// colRefsOf lists the column references of e outside subqueries.
func colRefsOf(e sqlfront.Expr) []*sqlfront.ColRef {
	var out []*sqlfront.ColRef
	visit(e, func(n sqlfront.Expr) bool {
		if c, ok := n.(*sqlfront.ColRef); ok {
			out = append(out, c)
		}
		return true
	})
	return out
}

// aggregatesOf lists the aggregate calls of e that are not inside a window
// function or subquery.
func aggregatesOf(e sqlfront.Expr) []*sqlfront.FuncCall {
	var out []*sqlfront.FuncCall
	visit(e, func(n sqlfront.Expr) bool {
		switch x := n.(type) {
		case *sqlfront.WindowExpr:
			// the window's own function is not a grouped aggregate, but its
			// arguments may be (SUM(SUM(x)) OVER ())
			for _, a := range x.F.Args {
				out = append(out, aggregatesOf(a)...)
			}
			for _, p := range x.PartitionBy {
				out = append(out, aggregatesOf(p)...)
			}
			for _, o := range x.OrderBy {
				out = append(out, aggregatesOf(o.Expr)...)
			}
			return false
		case *sqlfront.FuncCall:
			if engine.IsAggregateName(x.Name) {
				out = append(out, x)
				return false
			}
		}
		return true
	})
	return out
}

func windowsOf(e sqlfront.Expr) []*sqlfront.WindowExpr {
	var out []*sqlfront.WindowExpr
	visit(e, func(n sqlfront.Expr) bool {
		if w, ok := n.(*sqlfront.WindowExpr); ok {
			out = append(out, w)
			return false
		}
		return true
	})
	return out
}

// shape renders an expression structurally with its column references
// resolved against rel (so o.OrderID and OrderID match when they are the
// same column): the key for matching GROUP BY expressions and deduplicating
// aggregates.
func shape(e sqlfront.Expr, rel *engine.Relation) string {
	var b strings.Builder
	shapeTo(&b, e, rel)
	return b.String()
}

func shapeTo(b *strings.Builder, e sqlfront.Expr, rel *engine.Relation) {
	switch x := e.(type) {
	case nil:
		b.WriteString("nil")
	case *sqlfront.ColRef:
		if rel != nil {
			if i, err := rel.LookupRef(x); err == nil && i >= 0 {
				fmt.Fprintf(b, "c%d", i)
				return
			}
		}
		b.WriteString("col:" + strings.ToLower(strings.Join(x.Parts, ".")))
	case *sqlfront.Literal:
		fmt.Fprintf(b, "lit:%T:%v", x.V, x.V)
	case *sqlfront.VarRef:
		b.WriteString("var:" + strings.ToLower(x.Name))
	case *sqlfront.FuncCall:
		fmt.Fprintf(b, "%s(%t,%t", x.Name, x.Star, x.Distinct)
		for _, a := range x.Args {
			b.WriteByte(',')
			shapeTo(b, a, rel)
		}
		b.WriteByte(')')
	case *sqlfront.CastExpr:
		b.WriteString("cast(")
		shapeTo(b, x.E, rel)
		fmt.Fprintf(b, ",%s,%t)", x.T, x.Try)
	case *sqlfront.BinaryExpr:
		b.WriteByte('(')
		shapeTo(b, x.L, rel)
		b.WriteString(x.Op)
		shapeTo(b, x.R, rel)
		b.WriteByte(')')
	case *sqlfront.UnaryExpr:
		b.WriteString(x.Op + "(")
		shapeTo(b, x.E, rel)
		b.WriteByte(')')
	case *sqlfront.CaseExpr:
		b.WriteString("case(")
		shapeTo(b, x.Operand, rel)
		for _, w := range x.Whens {
			b.WriteString(";")
			shapeTo(b, w.Cond, rel)
			b.WriteString(":")
			shapeTo(b, w.Result, rel)
		}
		b.WriteString(";")
		shapeTo(b, x.Else, rel)
		b.WriteByte(')')
	default:
		fmt.Fprintf(b, "%T:%p", e, e)
	}
}

// typeOf is the static type of e over rel (and the outer scopes): the
// result metadata must be known before the first row exists.
func (p *planner) typeOf(e sqlfront.Expr, rel *engine.Relation) sqlfront.SQLType {
	if rel != nil && rel.Subst != nil {
		if i, ok := rel.Subst[e]; ok {
			return rel.Cols[i].Typ
		}
	}
	switch x := e.(type) {
	case *sqlfront.Literal:
		switch v := x.V.(type) {
		case nil:
			return engine.TInt
		case string:
			n := len([]rune(v))
			if n == 0 {
				n = 1
			}
			if n > 4000 {
				return engine.TNMax
			}
			return engine.TNVar(n)
		case float64:
			return engine.TFloat
		}
		return engine.TypeOfValue(x.V)
	case *sqlfront.ColRef:
		for s := p.scopeFor(rel); s != nil; s = s.parent {
			if s.rel == nil {
				continue
			}
			if i, err := s.rel.LookupRef(x); err == nil && i >= 0 {
				return s.rel.Cols[i].Typ
			}
		}
		return engine.TInt
	case *sqlfront.VarRef:
		if t, ok := p.x.varType(x.Name); ok {
			return t
		}
		if t, ok := engine.StaticType(x, nil); ok {
			return t
		}
		v, err := p.x.variable(x.Name)
		if err == nil && v != nil {
			return engine.TypeOfValue(v)
		}
		return engine.TInt
	case *sqlfront.CastExpr:
		if x.T.Kind == sqlfront.TypeNVarChar && x.T.Size == 30 {
			// CAST(x AS varchar) without a length: 30 characters
			return x.T
		}
		return x.T
	case *sqlfront.PseudoCol:
		return map[bool]sqlfront.SQLType{true: engine.TVarBin(8), false: engine.TNVar(14)}[x.Name == "%%physloc%%"]
	case *sqlfront.UnaryExpr:
		if x.Op == "NOT" {
			return engine.TBit
		}
		return p.typeOf(x.E, rel)
	case *sqlfront.BinaryExpr:
		switch x.Op {
		case "AND", "OR", "=", "<>", "<", ">", "<=", ">=":
			return engine.TBit
		}
		return arithType(x.Op, p.typeOf(x.L, rel), p.typeOf(x.R, rel))
	case *sqlfront.IsNullExpr, *sqlfront.LikeExpr, *sqlfront.BetweenExpr, *sqlfront.InExpr, *sqlfront.ExistsExpr, *sqlfront.QuantifiedExpr:
		return engine.TBit
	case *sqlfront.CaseExpr:
		var t sqlfront.SQLType
		for _, w := range x.Whens {
			t = widerType(t, p.typeOf(w.Result, rel), w.Result)
		}
		if x.Else != nil {
			t = widerType(t, p.typeOf(x.Else, rel), x.Else)
		}
		if t.Kind == 0 {
			return engine.TInt
		}
		return t
	case *sqlfront.SubqueryExpr:
		if sub := p.subTypes[x.Sel]; sub != nil && len(sub.Cols) > 0 {
			return sub.Cols[0].Typ
		}
		return engine.TInt
	case *sqlfront.WindowExpr:
		return p.windowType(x, rel)
	case *sqlfront.FuncCall:
		return p.funcType(x, rel)
	}
	return engine.TNVar(4000)
}

// typePrecedence orders types as SQL Server's data type precedence does
// (higher wins in an expression).
func typePrecedence(k sqlfront.TypeKind) int {
	switch k {
	case sqlfront.TypeDateTime2:
		return 20
	case sqlfront.TypeDate:
		return 19
	case sqlfront.TypeFloat:
		return 18
	case sqlfront.TypeDecimal:
		return 16
	case sqlfront.TypeBigInt:
		return 14
	case sqlfront.TypeInt:
		return 13
	case sqlfront.TypeSmallInt:
		return 12
	case sqlfront.TypeTinyInt:
		return 11
	case sqlfront.TypeBit:
		return 10
	case sqlfront.TypeUniqueIdentifier:
		return 8
	case sqlfront.TypeNVarChar:
		return 6
	case sqlfront.TypeVarBinary:
		return 2
	}
	return 1
}

// widerType is the result type of combining a and b (CASE branches,
// COALESCE arguments, UNION columns). A NULL literal does not count.
func widerType(a, b sqlfront.SQLType, bExpr sqlfront.Expr) sqlfront.SQLType {
	if lit, ok := bExpr.(*sqlfront.Literal); ok && lit.V == nil {
		return a
	}
	if a.Kind == 0 {
		return b
	}
	if a.Kind == b.Kind {
		if a.Kind == sqlfront.TypeNVarChar || a.Kind == sqlfront.TypeVarBinary {
			if a.Size == 0 || b.Size == 0 {
				return sqlfront.SQLType{Kind: a.Kind}
			}
			if b.Size > a.Size {
				return b
			}
		}
		if a.Kind == sqlfront.TypeDecimal && (b.Scale > a.Scale || b.Size > a.Size) {
			return sqlfront.SQLType{Kind: sqlfront.TypeDecimal, Size: max(a.Size, b.Size), Scale: max(a.Scale, b.Scale)}
		}
		return a
	}
	if typePrecedence(b.Kind) > typePrecedence(a.Kind) {
		return b
	}
	return a
}

func arithType(op string, l, r sqlfront.SQLType) sqlfront.SQLType {
	if op == "+" && l.Kind == sqlfront.TypeNVarChar && r.Kind == sqlfront.TypeNVarChar {
		if l.Size == 0 || r.Size == 0 || l.Size+r.Size > 4000 {
			return engine.TNMax
		}
		return engine.TNVar(l.Size + r.Size)
	}
	if (l.Kind == sqlfront.TypeDateTime2 || l.Kind == sqlfront.TypeDate) && (op == "+" || op == "-") {
		return l
	}
	t := widerType(l, r, nil)
	if t.Kind == sqlfront.TypeNVarChar {
		// the string converts to the other operand's type
		if l.Kind != sqlfront.TypeNVarChar {
			return l
		}
		return r
	}
	if t.Kind == sqlfront.TypeDecimal {
		ls, rs := l.Scale, r.Scale
		switch op {
		case "*":
			return sqlfront.SQLType{Kind: sqlfront.TypeDecimal, Size: 38, Scale: min(ls+rs, 12)}
		case "/":
			return sqlfront.SQLType{Kind: sqlfront.TypeDecimal, Size: 38, Scale: 6}
		}
		return sqlfront.SQLType{Kind: sqlfront.TypeDecimal, Size: 38, Scale: max(ls, rs)}
	}
	if t.Kind == sqlfront.TypeBit || t.Kind == sqlfront.TypeTinyInt || t.Kind == sqlfront.TypeSmallInt {
		return engine.TInt
	}
	return t
}

func (p *planner) windowType(w *sqlfront.WindowExpr, rel *engine.Relation) sqlfront.SQLType {
	switch w.F.Name {
	case "ROW_NUMBER", "RANK", "DENSE_RANK", "NTILE", "COUNT_BIG":
		return engine.TBigInt
	case "COUNT":
		return engine.TInt
	case "PERCENT_RANK", "CUME_DIST":
		return engine.TFloat
	case "LAG", "LEAD", "FIRST_VALUE", "LAST_VALUE", "MIN", "MAX":
		if len(w.F.Args) > 0 {
			return p.typeOf(w.F.Args[0], rel)
		}
	}
	return p.funcType(w.F, rel)
}

// funcType gives the result type of a built-in function.
func (p *planner) funcType(f *sqlfront.FuncCall, rel *engine.Relation) sqlfront.SQLType {
	arg := func(i int) sqlfront.SQLType {
		if i < len(f.Args) {
			return p.typeOf(f.Args[i], rel)
		}
		return engine.TInt
	}
	switch strings.TrimPrefix(f.Name, "SYS.") {
	case "SERVERPROPERTY", "CONNECTIONPROPERTY", "SESSIONPROPERTY", "DATABASEPROPERTYEX":
		// sql_variant: typed as the value the constant argument gives
		if v, ok := p.constValue(f); ok {
			return engine.TypeOfValue(v)
		}
		return engine.TNVar(128)
	case "COUNT":
		return engine.TInt
	case "COUNT_BIG":
		return engine.TBigInt
	case "SUM":
		t := arg(0)
		switch t.Kind {
		case sqlfront.TypeTinyInt, sqlfront.TypeSmallInt, sqlfront.TypeInt, sqlfront.TypeBit:
			return engine.TInt
		case sqlfront.TypeDecimal:
			return sqlfront.SQLType{Kind: sqlfront.TypeDecimal, Size: 38, Scale: t.Scale}
		}
		return t
	case "AVG":
		t := arg(0)
		switch t.Kind {
		case sqlfront.TypeTinyInt, sqlfront.TypeSmallInt, sqlfront.TypeInt, sqlfront.TypeBit:
			return engine.TInt
		case sqlfront.TypeDecimal:
			return sqlfront.SQLType{Kind: sqlfront.TypeDecimal, Size: 38, Scale: max(t.Scale, 6)}
		}
		return t
	case "MIN", "MAX", "ISNULL", "ABS", "FIRST_VALUE", "LAST_VALUE", "LAG", "LEAD":
		return arg(0)
	case "CEILING", "FLOOR", "ROUND", "SIGN":
		t := arg(0)
		if t.Kind == sqlfront.TypeDecimal && f.Name != "ROUND" {
			return sqlfront.SQLType{Kind: sqlfront.TypeDecimal, Size: t.Size, Scale: 0}
		}
		return t
	case "DATETRUNC":
		return arg(1)
	case "COALESCE", "GREATEST", "LEAST":
		var t sqlfront.SQLType
		for _, a := range f.Args {
			t = widerType(t, p.typeOf(a, rel), a)
		}
		if t.Kind == 0 {
			return engine.TInt
		}
		return t
	case "NULLIF":
		return arg(0)
	case "CHOOSE":
		var t sqlfront.SQLType
		for _, a := range f.Args[min(1, len(f.Args)):] {
			t = widerType(t, p.typeOf(a, rel), a)
		}
		return t
	case "STDEV", "STDEVP", "VAR", "VARP", "POWER", "SQRT", "LOG", "LOG10", "EXP", "PI", "RAND", "SQUARE", "SIN", "COS", "TAN", "ATAN", "DEGREES", "RADIANS":
		if f.Name == "POWER" {
			return arg(0)
		}
		return engine.TFloat
	case "LEN", "CHARINDEX", "PATINDEX", "DATEDIFF", "DATEPART", "YEAR", "MONTH", "DAY", "DB_ID", "OBJECT_ID", "SCHEMA_ID",
		"HAS_PERMS_BY_NAME", "IS_SRVROLEMEMBER", "IS_MEMBER", "GROUPING_ID", "ISNUMERIC", "DATALENGTH", "ASCII", "UNICODE", "ISDATE", "CHECKSUM", "BINARY_CHECKSUM", "@@SPID":
		return engine.TInt
	case "GROUPING":
		return engine.TTinyInt
	case "DATEDIFF_BIG", "CURRENT_TRANSACTION_ID":
		return engine.TBigInt
	case "GETDATE", "SYSDATETIME", "CURRENT_TIMESTAMP", "GETUTCDATE", "SYSUTCDATETIME", "DATETIMEFROMPARTS", "SMALLDATETIMEFROMPARTS", "DATETIME2FROMPARTS", "TODATETIMEOFFSET", "SWITCHOFFSET", "SYSDATETIMEOFFSET":
		return engine.TDT2
	case "DATEADD":
		t := arg(2)
		if t.Kind == sqlfront.TypeNVarChar {
			return engine.TDT2
		}
		return t
	case "EOMONTH", "DATEFROMPARTS":
		return engine.TDate
	case "OBJECT_DEFINITION":
		return engine.TNVar(0)
	case "DB_NAME", "OBJECT_NAME", "OBJECT_SCHEMA_NAME", "SCHEMA_NAME", "SUSER_NAME", "SUSER_SNAME", "USER_NAME", "QUOTENAME", "ORIGINAL_LOGIN", "SYSTEM_USER", "CURRENT_USER", "HOST_NAME", "APP_NAME":
		return engine.TNVar(128)
	case "DATENAME":
		return engine.TNVar(30)
	case "NEWID":
		return engine.TGUID
	case "LEFT", "RIGHT", "SUBSTRING", "UPPER", "LOWER", "LTRIM", "RTRIM", "TRIM", "REVERSE", "REPLACE", "STUFF", "TRANSLATE":
		t := arg(0)
		if t.Kind != sqlfront.TypeNVarChar {
			return engine.TNVar(4000)
		}
		return t
	case "REPLICATE", "SPACE", "CONCAT", "CONCAT_WS", "STRING_AGG", "FORMAT", "STR", "CHAR", "NCHAR", "FN_PHYSLOCFORMATTER", "FN_VARBINTOHEXSTR", "STRING_ESCAPE":
		if f.Name == "STRING_AGG" || f.Name == "REPLICATE" {
			t := arg(0)
			if t.Size == 0 || t.Kind != sqlfront.TypeNVarChar {
				return engine.TNMax
			}
			return engine.TNVar(4000)
		}
		return engine.TNVar(4000)
	case "IIF":
		return widerType(arg(1), arg(2), nil)
	}
	// a function this table does not type: with constant arguments, the
	// type of the value it gives
	if v, ok := p.constValue(f); ok {
		return engine.TypeOfValue(v)
	}
	return engine.TNVar(4000)
}

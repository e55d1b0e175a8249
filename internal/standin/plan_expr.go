package standin

import (
	"fmt"
	"strings"
)

// Expression analysis for the planner: conjuncts, the columns an
// expression uses, subqueries inside it, and its static result type.

// conjuncts splits e at top-level ANDs.
func conjuncts(e expr) []expr {
	if e == nil {
		return nil
	}
	if b, ok := e.(*binaryExpr); ok && b.Op == "AND" {
		return append(conjuncts(b.L), conjuncts(b.R)...)
	}
	return []expr{e}
}

// andAll joins conjuncts back into one predicate (nil for none).
func andAll(es []expr) expr {
	var out expr
	for _, e := range es {
		if out == nil {
			out = e
		} else {
			out = &binaryExpr{Op: "AND", L: out, R: e}
		}
	}
	return out
}

// visit walks e without entering subqueries, calling fn for every node;
// fn returns false to skip a node's children.
func visit(e expr, fn func(expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	switch x := e.(type) {
	case *funcCall:
		for _, a := range x.Args {
			visit(a, fn)
		}
		for _, o := range x.Within {
			visit(o.Expr, fn)
		}
	case *windowExpr:
		visit(x.F, fn)
		for _, p := range x.PartitionBy {
			visit(p, fn)
		}
		for _, o := range x.OrderBy {
			visit(o.Expr, fn)
		}
	case *castExpr:
		visit(x.E, fn)
		visit(x.Style, fn)
	case *unaryExpr:
		visit(x.E, fn)
	case *binaryExpr:
		visit(x.L, fn)
		visit(x.R, fn)
	case *isNullExpr:
		visit(x.E, fn)
	case *inExpr:
		visit(x.E, fn)
		for _, a := range x.List {
			visit(a, fn)
		}
	case *likeExpr:
		visit(x.E, fn)
		visit(x.Pattern, fn)
		visit(x.Escape, fn)
	case *betweenExpr:
		visit(x.E, fn)
		visit(x.Lo, fn)
		visit(x.Hi, fn)
	case *caseExpr:
		visit(x.Operand, fn)
		for _, w := range x.Whens {
			visit(w.Cond, fn)
			visit(w.Result, fn)
		}
		visit(x.Else, fn)
	case *quantifiedExpr:
		visit(x.E, fn)
	}
}

// subqueriesOf lists the subquery-bearing nodes of e (scalar subqueries,
// EXISTS, IN (SELECT …), ANY/ALL), outermost first, not nested ones.
func subqueriesOf(e expr) []expr {
	var out []expr
	visit(e, func(n expr) bool {
		switch x := n.(type) {
		case *subqueryExpr, *existsExpr, *quantifiedExpr:
			out = append(out, n)
			return false
		case *inExpr:
			if x.Sub != nil {
				out = append(out, n)
				return false
			}
		}
		return true
	})
	return out
}

func hasSubquery(e expr) bool { return len(subqueriesOf(e)) > 0 }

// colRefsOf lists the column references of e outside subqueries.
func colRefsOf(e expr) []*colRef {
	var out []*colRef
	visit(e, func(n expr) bool {
		if c, ok := n.(*colRef); ok {
			out = append(out, c)
		}
		return true
	})
	return out
}

func isAggregateName(name string) bool {
	switch name {
	case "COUNT", "COUNT_BIG", "SUM", "MIN", "MAX", "AVG", "STRING_AGG", "STDEV", "STDEVP", "VAR", "VARP", "CHECKSUM_AGG":
		return true
	}
	return false
}

// aggregatesOf lists the aggregate calls of e that are not inside a window
// function or subquery.
func aggregatesOf(e expr) []*funcCall {
	var out []*funcCall
	visit(e, func(n expr) bool {
		switch x := n.(type) {
		case *windowExpr:
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
		case *funcCall:
			if isAggregateName(x.Name) {
				out = append(out, x)
				return false
			}
		}
		return true
	})
	return out
}

func windowsOf(e expr) []*windowExpr {
	var out []*windowExpr
	visit(e, func(n expr) bool {
		if w, ok := n.(*windowExpr); ok {
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
func shape(e expr, rel *relation) string {
	var b strings.Builder
	shapeTo(&b, e, rel)
	return b.String()
}

func shapeTo(b *strings.Builder, e expr, rel *relation) {
	switch x := e.(type) {
	case nil:
		b.WriteString("nil")
	case *colRef:
		if rel != nil {
			if i, err := rel.lookupRef(x); err == nil && i >= 0 {
				fmt.Fprintf(b, "c%d", i)
				return
			}
		}
		b.WriteString("col:" + strings.ToLower(strings.Join(x.Parts, ".")))
	case *literal:
		fmt.Fprintf(b, "lit:%T:%v", x.V, x.V)
	case *varRef:
		b.WriteString("var:" + strings.ToLower(x.Name))
	case *funcCall:
		fmt.Fprintf(b, "%s(%t,%t", x.Name, x.Star, x.Distinct)
		for _, a := range x.Args {
			b.WriteByte(',')
			shapeTo(b, a, rel)
		}
		b.WriteByte(')')
	case *castExpr:
		b.WriteString("cast(")
		shapeTo(b, x.E, rel)
		fmt.Fprintf(b, ",%s,%t)", x.T, x.Try)
	case *binaryExpr:
		b.WriteByte('(')
		shapeTo(b, x.L, rel)
		b.WriteString(x.Op)
		shapeTo(b, x.R, rel)
		b.WriteByte(')')
	case *unaryExpr:
		b.WriteString(x.Op + "(")
		shapeTo(b, x.E, rel)
		b.WriteByte(')')
	case *caseExpr:
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
func (p *planner) typeOf(e expr, rel *relation) SQLType {
	if rel != nil && rel.subst != nil {
		if i, ok := rel.subst[e]; ok {
			return rel.cols[i].typ
		}
	}
	switch x := e.(type) {
	case *literal:
		switch v := x.V.(type) {
		case nil:
			return tInt
		case string:
			n := len([]rune(v))
			if n == 0 {
				n = 1
			}
			if n > 4000 {
				return tNMax
			}
			return tNVar(n)
		case float64:
			return tFloat
		}
		return typeOfValue(x.V)
	case *colRef:
		for s := p.scopeFor(rel); s != nil; s = s.parent {
			if s.rel == nil {
				continue
			}
			if i, err := s.rel.lookupRef(x); err == nil && i >= 0 {
				return s.rel.cols[i].typ
			}
		}
		return tInt
	case *varRef:
		if t, ok := p.x.varType(x.Name); ok {
			return t
		}
		if t, ok := staticType(x, nil); ok {
			return t
		}
		v, err := p.x.variable(x.Name)
		if err == nil && v != nil {
			return typeOfValue(v)
		}
		return tInt
	case *castExpr:
		if x.T.Kind == TypeNVarChar && x.T.Size == 30 {
			// CAST(x AS varchar) without a length: 30 characters
			return x.T
		}
		return x.T
	case *pseudoCol:
		return map[bool]SQLType{true: tVarBin(8), false: tNVar(14)}[x.Name == "%%physloc%%"]
	case *unaryExpr:
		if x.Op == "NOT" {
			return tBit
		}
		return p.typeOf(x.E, rel)
	case *binaryExpr:
		switch x.Op {
		case "AND", "OR", "=", "<>", "<", ">", "<=", ">=":
			return tBit
		}
		return arithType(x.Op, p.typeOf(x.L, rel), p.typeOf(x.R, rel))
	case *isNullExpr, *likeExpr, *betweenExpr, *inExpr, *existsExpr, *quantifiedExpr:
		return tBit
	case *caseExpr:
		var t SQLType
		for _, w := range x.Whens {
			t = widerType(t, p.typeOf(w.Result, rel), w.Result)
		}
		if x.Else != nil {
			t = widerType(t, p.typeOf(x.Else, rel), x.Else)
		}
		if t.Kind == 0 {
			return tInt
		}
		return t
	case *subqueryExpr:
		if sub := p.subTypes[x.Sel]; sub != nil && len(sub.cols) > 0 {
			return sub.cols[0].typ
		}
		return tInt
	case *windowExpr:
		return p.windowType(x, rel)
	case *funcCall:
		return p.funcType(x, rel)
	}
	return tNVar(4000)
}

// typePrecedence orders types as SQL Server's data type precedence does
// (higher wins in an expression).
func typePrecedence(k TypeKind) int {
	switch k {
	case TypeDateTime2:
		return 20
	case TypeDate:
		return 19
	case TypeFloat:
		return 18
	case TypeDecimal:
		return 16
	case TypeBigInt:
		return 14
	case TypeInt:
		return 13
	case TypeSmallInt:
		return 12
	case TypeTinyInt:
		return 11
	case TypeBit:
		return 10
	case TypeUniqueIdentifier:
		return 8
	case TypeNVarChar:
		return 6
	case TypeVarBinary:
		return 2
	}
	return 1
}

// widerType is the result type of combining a and b (CASE branches,
// COALESCE arguments, UNION columns). A NULL literal does not count.
func widerType(a, b SQLType, bExpr expr) SQLType {
	if lit, ok := bExpr.(*literal); ok && lit.V == nil {
		return a
	}
	if a.Kind == 0 {
		return b
	}
	if a.Kind == b.Kind {
		if a.Kind == TypeNVarChar || a.Kind == TypeVarBinary {
			if a.Size == 0 || b.Size == 0 {
				return SQLType{Kind: a.Kind}
			}
			if b.Size > a.Size {
				return b
			}
		}
		if a.Kind == TypeDecimal && (b.Scale > a.Scale || b.Size > a.Size) {
			return SQLType{Kind: TypeDecimal, Size: max(a.Size, b.Size), Scale: max(a.Scale, b.Scale)}
		}
		return a
	}
	if typePrecedence(b.Kind) > typePrecedence(a.Kind) {
		return b
	}
	return a
}

func arithType(op string, l, r SQLType) SQLType {
	if op == "+" && l.Kind == TypeNVarChar && r.Kind == TypeNVarChar {
		if l.Size == 0 || r.Size == 0 || l.Size+r.Size > 4000 {
			return tNMax
		}
		return tNVar(l.Size + r.Size)
	}
	if (l.Kind == TypeDateTime2 || l.Kind == TypeDate) && (op == "+" || op == "-") {
		return l
	}
	t := widerType(l, r, nil)
	if t.Kind == TypeNVarChar {
		// the string converts to the other operand's type
		if l.Kind != TypeNVarChar {
			return l
		}
		return r
	}
	if t.Kind == TypeDecimal {
		ls, rs := l.Scale, r.Scale
		switch op {
		case "*":
			return SQLType{Kind: TypeDecimal, Size: 38, Scale: min(ls+rs, 12)}
		case "/":
			return SQLType{Kind: TypeDecimal, Size: 38, Scale: 6}
		}
		return SQLType{Kind: TypeDecimal, Size: 38, Scale: max(ls, rs)}
	}
	if t.Kind == TypeBit || t.Kind == TypeTinyInt || t.Kind == TypeSmallInt {
		return tInt
	}
	return t
}

func (p *planner) windowType(w *windowExpr, rel *relation) SQLType {
	switch w.F.Name {
	case "ROW_NUMBER", "RANK", "DENSE_RANK", "NTILE", "COUNT_BIG":
		return tBigInt
	case "COUNT":
		return tInt
	case "PERCENT_RANK", "CUME_DIST":
		return tFloat
	case "LAG", "LEAD", "FIRST_VALUE", "LAST_VALUE", "MIN", "MAX":
		if len(w.F.Args) > 0 {
			return p.typeOf(w.F.Args[0], rel)
		}
	}
	return p.funcType(w.F, rel)
}

// funcType gives the result type of a built-in function.
func (p *planner) funcType(f *funcCall, rel *relation) SQLType {
	arg := func(i int) SQLType {
		if i < len(f.Args) {
			return p.typeOf(f.Args[i], rel)
		}
		return tInt
	}
	switch strings.TrimPrefix(f.Name, "SYS.") {
	case "SERVERPROPERTY", "CONNECTIONPROPERTY", "SESSIONPROPERTY", "DATABASEPROPERTYEX":
		// sql_variant: typed as the value the constant argument gives
		if v, ok := p.constValue(f); ok {
			return typeOfValue(v)
		}
		return tNVar(128)
	case "COUNT":
		return tInt
	case "COUNT_BIG":
		return tBigInt
	case "SUM":
		t := arg(0)
		switch t.Kind {
		case TypeTinyInt, TypeSmallInt, TypeInt, TypeBit:
			return tInt
		case TypeDecimal:
			return SQLType{Kind: TypeDecimal, Size: 38, Scale: t.Scale}
		}
		return t
	case "AVG":
		t := arg(0)
		switch t.Kind {
		case TypeTinyInt, TypeSmallInt, TypeInt, TypeBit:
			return tInt
		case TypeDecimal:
			return SQLType{Kind: TypeDecimal, Size: 38, Scale: max(t.Scale, 6)}
		}
		return t
	case "MIN", "MAX", "ISNULL", "ABS", "FIRST_VALUE", "LAST_VALUE", "LAG", "LEAD":
		return arg(0)
	case "CEILING", "FLOOR", "ROUND", "SIGN":
		t := arg(0)
		if t.Kind == TypeDecimal && f.Name != "ROUND" {
			return SQLType{Kind: TypeDecimal, Size: t.Size, Scale: 0}
		}
		return t
	case "DATETRUNC":
		return arg(1)
	case "COALESCE", "GREATEST", "LEAST":
		var t SQLType
		for _, a := range f.Args {
			t = widerType(t, p.typeOf(a, rel), a)
		}
		if t.Kind == 0 {
			return tInt
		}
		return t
	case "NULLIF":
		return arg(0)
	case "CHOOSE":
		var t SQLType
		for _, a := range f.Args[min(1, len(f.Args)):] {
			t = widerType(t, p.typeOf(a, rel), a)
		}
		return t
	case "STDEV", "STDEVP", "VAR", "VARP", "POWER", "SQRT", "LOG", "LOG10", "EXP", "PI", "RAND", "SQUARE", "SIN", "COS", "TAN", "ATAN", "DEGREES", "RADIANS":
		if f.Name == "POWER" {
			return arg(0)
		}
		return tFloat
	case "LEN", "CHARINDEX", "PATINDEX", "DATEDIFF", "DATEPART", "YEAR", "MONTH", "DAY", "DB_ID", "OBJECT_ID", "SCHEMA_ID",
		"HAS_PERMS_BY_NAME", "IS_SRVROLEMEMBER", "IS_MEMBER", "GROUPING_ID", "ISNUMERIC", "DATALENGTH", "ASCII", "UNICODE", "ISDATE", "CHECKSUM", "BINARY_CHECKSUM", "@@SPID":
		return tInt
	case "GROUPING":
		return tTinyInt
	case "DATEDIFF_BIG", "CURRENT_TRANSACTION_ID":
		return tBigInt
	case "GETDATE", "SYSDATETIME", "CURRENT_TIMESTAMP", "GETUTCDATE", "SYSUTCDATETIME", "DATETIMEFROMPARTS", "SMALLDATETIMEFROMPARTS", "DATETIME2FROMPARTS", "TODATETIMEOFFSET", "SWITCHOFFSET", "SYSDATETIMEOFFSET":
		return tDT2
	case "DATEADD":
		t := arg(2)
		if t.Kind == TypeNVarChar {
			return tDT2
		}
		return t
	case "EOMONTH", "DATEFROMPARTS":
		return tDate
	case "DB_NAME", "OBJECT_NAME", "OBJECT_SCHEMA_NAME", "SCHEMA_NAME", "SUSER_NAME", "SUSER_SNAME", "USER_NAME", "QUOTENAME", "ORIGINAL_LOGIN", "SYSTEM_USER", "CURRENT_USER", "HOST_NAME", "APP_NAME":
		return tNVar(128)
	case "DATENAME":
		return tNVar(30)
	case "NEWID":
		return tGUID
	case "LEFT", "RIGHT", "SUBSTRING", "UPPER", "LOWER", "LTRIM", "RTRIM", "TRIM", "REVERSE", "REPLACE", "STUFF", "TRANSLATE":
		t := arg(0)
		if t.Kind != TypeNVarChar {
			return tNVar(4000)
		}
		return t
	case "REPLICATE", "SPACE", "CONCAT", "CONCAT_WS", "STRING_AGG", "FORMAT", "STR", "CHAR", "NCHAR", "FN_PHYSLOCFORMATTER", "FN_VARBINTOHEXSTR", "STRING_ESCAPE":
		if f.Name == "STRING_AGG" || f.Name == "REPLICATE" {
			t := arg(0)
			if t.Size == 0 || t.Kind != TypeNVarChar {
				return tNMax
			}
			return tNVar(4000)
		}
		return tNVar(4000)
	case "IIF":
		return widerType(arg(1), arg(2), nil)
	}
	// a function this table does not type: with constant arguments, the
	// type of the value it gives
	if v, ok := p.constValue(f); ok {
		return typeOfValue(v)
	}
	return tNVar(4000)
}

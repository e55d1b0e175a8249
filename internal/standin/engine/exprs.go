package engine

import (
	"fmt"
	"strings"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// Expression analysis the planner and the engine share: conjuncts, the
// columns, aggregates, windows and subqueries an expression holds, its
// shape, and SQL Server's data type precedence for results.

// Conjuncts splits e at top-level ANDs.
func Conjuncts(e sqlfront.Expr) []sqlfront.Expr {
	if e == nil {
		return nil
	}
	if b, ok := e.(*sqlfront.BinaryExpr); ok && b.Op == "AND" {
		return append(Conjuncts(b.L), Conjuncts(b.R)...)
	}
	return []sqlfront.Expr{e}
}

// AndAll joins conjuncts back into one predicate (nil for none).
func AndAll(es []sqlfront.Expr) sqlfront.Expr {
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

// Visit walks e without entering subqueries, calling fn for every node;
// fn returns false to skip a node's children.
func Visit(e sqlfront.Expr, fn func(sqlfront.Expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	switch x := e.(type) {
	case *sqlfront.FuncCall:
		for _, a := range x.Args {
			Visit(a, fn)
		}
		for _, o := range x.Within {
			Visit(o.Expr, fn)
		}
	case *sqlfront.WindowExpr:
		Visit(x.F, fn)
		for _, p := range x.PartitionBy {
			Visit(p, fn)
		}
		for _, o := range x.OrderBy {
			Visit(o.Expr, fn)
		}
	case *sqlfront.CastExpr:
		Visit(x.E, fn)
		Visit(x.Style, fn)
	case *sqlfront.UnaryExpr:
		Visit(x.E, fn)
	case *sqlfront.BinaryExpr:
		Visit(x.L, fn)
		Visit(x.R, fn)
	case *sqlfront.IsNullExpr:
		Visit(x.E, fn)
	case *sqlfront.InExpr:
		Visit(x.E, fn)
		for _, a := range x.List {
			Visit(a, fn)
		}
	case *sqlfront.LikeExpr:
		Visit(x.E, fn)
		Visit(x.Pattern, fn)
		Visit(x.Escape, fn)
	case *sqlfront.BetweenExpr:
		Visit(x.E, fn)
		Visit(x.Lo, fn)
		Visit(x.Hi, fn)
	case *sqlfront.CaseExpr:
		Visit(x.Operand, fn)
		for _, w := range x.Whens {
			Visit(w.Cond, fn)
			Visit(w.Result, fn)
		}
		Visit(x.Else, fn)
	case *sqlfront.QuantifiedExpr:
		Visit(x.E, fn)
	}
}

// SubqueriesOf lists the subquery-bearing nodes of e (scalar subqueries,
// EXISTS, IN (SELECT …), ANY/ALL), outermost first, not nested ones.
func SubqueriesOf(e sqlfront.Expr) []sqlfront.Expr {
	var out []sqlfront.Expr
	Visit(e, func(n sqlfront.Expr) bool {
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

func HasSubquery(e sqlfront.Expr) bool { return len(SubqueriesOf(e)) > 0 }

// ColRefsOf lists the column references of e outside subqueries.
func ColRefsOf(e sqlfront.Expr) []*sqlfront.ColRef {
	var out []*sqlfront.ColRef
	Visit(e, func(n sqlfront.Expr) bool {
		if c, ok := n.(*sqlfront.ColRef); ok {
			out = append(out, c)
		}
		return true
	})
	return out
}

// AggregatesOf lists the aggregate calls of e that are not inside a window
// function or subquery.
func AggregatesOf(e sqlfront.Expr) []*sqlfront.FuncCall {
	var out []*sqlfront.FuncCall
	Visit(e, func(n sqlfront.Expr) bool {
		switch x := n.(type) {
		case *sqlfront.WindowExpr:
			// the window's own function is not a grouped aggregate, but its
			// arguments may be (SUM(SUM(x)) OVER ())
			for _, a := range x.F.Args {
				out = append(out, AggregatesOf(a)...)
			}
			for _, p := range x.PartitionBy {
				out = append(out, AggregatesOf(p)...)
			}
			for _, o := range x.OrderBy {
				out = append(out, AggregatesOf(o.Expr)...)
			}
			return false
		case *sqlfront.FuncCall:
			if IsAggregateName(x.Name) {
				out = append(out, x)
				return false
			}
		}
		return true
	})
	return out
}

func WindowsOf(e sqlfront.Expr) []*sqlfront.WindowExpr {
	var out []*sqlfront.WindowExpr
	Visit(e, func(n sqlfront.Expr) bool {
		if w, ok := n.(*sqlfront.WindowExpr); ok {
			out = append(out, w)
			return false
		}
		return true
	})
	return out
}

// Shape renders an expression structurally with its column references
// resolved against rel (so o.OrderID and OrderID match when they are the
// same column): the key for matching GROUP BY expressions and deduplicating
// aggregates.
func Shape(e sqlfront.Expr, rel *Relation) string {
	var b strings.Builder
	shapeTo(&b, e, rel)
	return b.String()
}

func shapeTo(b *strings.Builder, e sqlfront.Expr, rel *Relation) {
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

// WiderType is the result type of combining a and b (CASE branches,
// COALESCE arguments, UNION columns). A NULL literal does not count.
func WiderType(a, b sqlfront.SQLType, bExpr sqlfront.Expr) sqlfront.SQLType {
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

func ArithType(op string, l, r sqlfront.SQLType) sqlfront.SQLType {
	if op == "+" && l.Kind == sqlfront.TypeNVarChar && r.Kind == sqlfront.TypeNVarChar {
		if l.Size == 0 || r.Size == 0 || l.Size+r.Size > 4000 {
			return TNMax
		}
		return TNVar(l.Size + r.Size)
	}
	if (l.Kind == sqlfront.TypeDateTime2 || l.Kind == sqlfront.TypeDate) && (op == "+" || op == "-") {
		return l
	}
	t := WiderType(l, r, nil)
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
		return TInt
	}
	return t
}

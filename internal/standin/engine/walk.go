package engine

import (
	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// walkSelect calls fn for every expression of s and of every query nested
// in it (subqueries, derived tables, CTEs, set operation branches).
func walkSelect(s *sqlfront.SelectStmt, fn func(sqlfront.Expr)) {
	WalkSelectWith(s, fn, nil)
}

// WalkSelectWith calls fn for every expression of s and of every query
// nested in it, and selFn (when set) for s and every nested query.
func WalkSelectWith(s *sqlfront.SelectStmt, fn func(sqlfront.Expr), selFn func(*sqlfront.SelectStmt)) {
	if s == nil {
		return
	}
	if selFn != nil {
		selFn(s)
	}
	for _, c := range s.With {
		WalkSelectWith(c.Sel, fn, selFn)
	}
	WalkSelectWith(s.Left, fn, selFn)
	WalkSelectWith(s.Right, fn, selFn)
	var ex func(e sqlfront.Expr)
	ex = func(e sqlfront.Expr) {
		Visit(e, func(n sqlfront.Expr) bool {
			fn(n)
			switch x := n.(type) {
			case *sqlfront.SubqueryExpr:
				WalkSelectWith(x.Sel, fn, selFn)
			case *sqlfront.ExistsExpr:
				WalkSelectWith(x.Sel, fn, selFn)
			case *sqlfront.InExpr:
				WalkSelectWith(x.Sub, fn, selFn)
			case *sqlfront.QuantifiedExpr:
				WalkSelectWith(x.Sel, fn, selFn)
			}
			return true
		})
	}
	for _, it := range s.Items {
		ex(it.Expr)
	}
	var ref func(r sqlfront.TableRef)
	ref = func(r sqlfront.TableRef) {
		switch t := r.(type) {
		case *sqlfront.JoinRef:
			ref(t.Left)
			ref(t.Right)
			ex(t.On)
		case *sqlfront.DerivedTable:
			WalkSelectWith(t.Sel, fn, selFn)
			for _, row := range t.Values {
				for _, e := range row {
					ex(e)
				}
			}
		case *sqlfront.TableFunc:
			for _, a := range t.Args {
				ex(a)
			}
		}
	}
	if s.From != nil {
		ref(s.From)
	}
	ex(s.Where)
	for _, g := range s.GroupBy {
		ex(g)
	}
	ex(s.Having)
	for _, o := range s.OrderBy {
		ex(o.Expr)
	}
	ex(s.Top)
	ex(s.Offset)
	ex(s.Fetch)
}

// walkStatement walks every expression of a statement.
func walkStatement(st sqlfront.Stmt, fn func(sqlfront.Expr), selFn func(*sqlfront.SelectStmt)) {
	switch s := st.(type) {
	case *sqlfront.SelectStmt:
		WalkSelectWith(s, fn, selFn)
	case *sqlfront.UpdateStmt:
		for _, set := range s.Sets {
			visitAll(set.Expr, fn, selFn)
		}
		visitAll(s.Where, fn, selFn)
		if s.From != nil {
			WalkSelectWith(&sqlfront.SelectStmt{From: s.From}, fn, selFn)
		}
		fn(&sqlfront.ColRef{Parts: []string{"*"}})
	case *sqlfront.DeleteStmt:
		visitAll(s.Where, fn, selFn)
		if s.From != nil {
			WalkSelectWith(&sqlfront.SelectStmt{From: s.From}, fn, selFn)
		}
	case *sqlfront.InsertStmt:
		WalkSelectWith(s.Sel, fn, selFn)
	case *sqlfront.MergeStmt:
		WalkSelectWith(&sqlfront.SelectStmt{From: s.Source, Where: s.On}, fn, selFn)
		for _, c := range s.Clauses {
			visitAll(c.Cond, fn, selFn)
			for _, set := range c.Sets {
				visitAll(set.Expr, fn, selFn)
			}
			for _, v := range c.Values {
				visitAll(v, fn, selFn)
			}
		}
	}
}

func visitAll(e sqlfront.Expr, fn func(sqlfront.Expr), selFn func(*sqlfront.SelectStmt)) {
	WalkSelectWith(&sqlfront.SelectStmt{Where: e}, fn, selFn)
}

package sqlfront

import (
	"strconv"
	"strings"
)

// Query expressions: WITH common table expressions, set operations,
// query specifications with TOP/INTO/GROUP BY grouping sets, ORDER BY,
// OFFSET … FETCH and OPTION hints, as documented at
// https://learn.microsoft.com/en-us/sql/t-sql/queries/select-transact-sql.

// selectStatement parses a whole query expression: [WITH …] body [ORDER BY]
// [OFFSET … FETCH] [OPTION (…)].
func (p *parser) selectStatement() (*SelectStmt, *SQLError) {
	var with []*CTEDef
	if p.peek().is("WITH") {
		var err *SQLError
		if with, err = p.cteList(); err != nil {
			return nil, err
		}
	}
	q, err := p.queryExpr()
	if err != nil {
		return nil, err
	}
	if len(with) > 0 {
		q.With = with
	}
	if err := p.orderAndOffset(q); err != nil {
		return nil, err
	}
	if p.accept("OPTION") {
		if err := p.queryOptions(&q.Opts); err != nil {
			return nil, err
		}
		q.MaxDOP = q.Opts.MaxDOP
	}
	return q, nil
}

// cteList parses WITH name [(cols)] AS (query) [, …].
func (p *parser) cteList() ([]*CTEDef, *SQLError) {
	p.i++ // WITH
	var out []*CTEDef
	for {
		name, err := p.ident()
		if err != nil {
			return nil, err
		}
		c := &CTEDef{Name: name}
		if p.acceptOp("(") {
			if c.Columns, err = p.identList(); err != nil {
				return nil, err
			}
		}
		if err := p.expect("AS"); err != nil {
			return nil, err
		}
		if err := p.expectOp("("); err != nil {
			return nil, err
		}
		if c.Sel, err = p.selectStatement(); err != nil {
			return nil, err
		}
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
		out = append(out, c)
		if !p.acceptOp(",") {
			return out, nil
		}
	}
}

// identList reads "a, b, c)" (the opening parenthesis already read).
func (p *parser) identList() ([]string, *SQLError) {
	var out []string
	for {
		c, err := p.ident()
		if err != nil {
			return nil, err
		}
		out = append(out, c)
		if !p.acceptOp(",") {
			break
		}
	}
	return out, p.expectOp(")")
}

// queryExpr: term { UNION [ALL] | EXCEPT term } (INTERSECT binds tighter).
func (p *parser) queryExpr() (*SelectStmt, *SQLError) {
	l, err := p.queryTerm()
	if err != nil {
		return nil, err
	}
	for p.peek().is("UNION") || p.peek().is("EXCEPT") {
		op := p.next().kw()
		all := op == "UNION" && p.accept("ALL")
		r, err := p.queryTerm()
		if err != nil {
			return nil, err
		}
		l = &SelectStmt{Op: op, All: all, Left: l, Right: r, Opts: QueryOptions{MaxRecursion: -1}}
	}
	return l, nil
}

func (p *parser) queryTerm() (*SelectStmt, *SQLError) {
	l, err := p.queryPrimary()
	if err != nil {
		return nil, err
	}
	for p.accept("INTERSECT") {
		r, err := p.queryPrimary()
		if err != nil {
			return nil, err
		}
		l = &SelectStmt{Op: "INTERSECT", Left: l, Right: r, Opts: QueryOptions{MaxRecursion: -1}}
	}
	return l, nil
}

func (p *parser) queryPrimary() (*SelectStmt, *SQLError) {
	p.depth++ // ((((SELECT …)))) nests as expressions do (maxNesting)
	defer func() { p.depth-- }()
	if p.depth > maxNesting {
		return nil, errNestedTooDeeply()
	}
	if p.acceptOp("(") {
		q, err := p.selectStatement()
		if err != nil {
			return nil, err
		}
		return q, p.expectOp(")")
	}
	return p.querySpec()
}

// querySpec parses SELECT … [INTO] [FROM] [WHERE] [GROUP BY] [HAVING].
func (p *parser) querySpec() (*SelectStmt, *SQLError) {
	if err := p.expect("SELECT"); err != nil {
		return nil, err
	}
	s := &SelectStmt{Opts: QueryOptions{MaxRecursion: -1}}
	if p.accept("DISTINCT") {
		s.Distinct = true
	} else {
		p.accept("ALL")
	}
	if p.accept("TOP") {
		if err := p.topClause(&s.Top, &s.TopPercent, &s.WithTies); err != nil {
			return nil, err
		}
	}
	for {
		item, err := p.selectItem()
		if err != nil {
			return nil, err
		}
		s.Items = append(s.Items, item)
		if !p.acceptOp(",") {
			break
		}
	}
	var err *SQLError
	if p.accept("INTO") {
		if s.Into, err = p.tableObjectName(); err != nil {
			return nil, err
		}
	}
	if p.accept("FROM") {
		if s.From, err = p.tableSources(); err != nil {
			return nil, err
		}
	}
	if p.accept("WHERE") {
		if s.Where, err = p.expression(); err != nil {
			return nil, err
		}
	}
	if p.peek().is("GROUP") {
		p.i++
		if err := p.expect("BY"); err != nil {
			return nil, err
		}
		if err := p.groupBy(s); err != nil {
			return nil, err
		}
	}
	if p.accept("HAVING") {
		if s.Having, err = p.expression(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// topClause parses TOP n | TOP (expr) [PERCENT] [WITH TIES].
func (p *parser) topClause(top *Expr, percent, ties *bool) *SQLError {
	var err *SQLError
	if p.acceptOp("(") {
		if *top, err = p.expression(); err != nil {
			return err
		}
		if err := p.expectOp(")"); err != nil {
			return err
		}
	} else {
		t := p.next()
		if t.kind != tokNumber {
			p.i--
			return p.fail()
		}
		if strings.ContainsAny(t.text, ".eE") {
			f, _ := strconv.ParseFloat(t.text, 64)
			*top = &Literal{V: f}
		} else {
			n, _ := strconv.ParseInt(t.text, 10, 64)
			*top = &Literal{V: n}
		}
	}
	if p.accept("PERCENT") {
		*percent = true
	}
	if p.peek().is("WITH") && p.peekAt(1).is("TIES") {
		p.i += 2
		*ties = true
	}
	return nil
}

// tableObjectName reads a table name: a multi-part name, #temp or @table.
func (p *parser) tableObjectName() ([]string, *SQLError) {
	if t := p.peek(); t.kind == tokVariable {
		p.i++
		return []string{t.text}, nil
	}
	return p.multiName()
}

// orderAndOffset parses ORDER BY …, OFFSET n ROWS [FETCH NEXT n ROWS ONLY].
func (p *parser) orderAndOffset(q *SelectStmt) *SQLError {
	if p.peek().is("ORDER") {
		p.i++
		if err := p.expect("BY"); err != nil {
			return err
		}
		items, err := p.orderList()
		if err != nil {
			return err
		}
		q.OrderBy = items
	}
	if !p.peek().is("OFFSET") {
		return nil
	}
	if len(q.OrderBy) == 0 {
		return p.fail()
	}
	p.i++
	var err *SQLError
	if q.Offset, err = p.additive(); err != nil {
		return err
	}
	if !p.accept("ROWS") && !p.accept("ROW") {
		return p.fail()
	}
	if p.accept("FETCH") {
		if !p.accept("NEXT") && !p.accept("FIRST") {
			return p.fail()
		}
		if q.Fetch, err = p.additive(); err != nil {
			return err
		}
		if !p.accept("ROWS") && !p.accept("ROW") {
			return p.fail()
		}
		if err := p.expect("ONLY"); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) orderList() ([]OrderItem, *SQLError) {
	var out []OrderItem
	for {
		e, err := p.expression()
		if err != nil {
			return nil, err
		}
		item := OrderItem{Expr: e}
		if p.accept("DESC") {
			item.Desc = true
		} else {
			p.accept("ASC")
		}
		out = append(out, item)
		if !p.acceptOp(",") {
			return out, nil
		}
	}
}

// QueryOptions parses the list of OPTION (…) hints (the "(" is next).
func (p *parser) queryOptions(o *QueryOptions) *SQLError {
	if err := p.expectOp("("); err != nil {
		return err
	}
	number := func() (float64, *SQLError) {
		t := p.next()
		if t.kind != tokNumber {
			p.i--
			return 0, p.fail()
		}
		f, _ := strconv.ParseFloat(t.text, 64)
		return f, nil
	}
	for {
		var err *SQLError
		var n float64
		switch {
		case p.accept("MAXDOP"):
			n, err = number()
			o.MaxDOP = int(n)
		case p.accept("MAXRECURSION"):
			n, err = number()
			o.MaxRecursion = int(n)
			if n < 0 || n > 32767 {
				return NewError(310, 15, "The value %d specified for the MAXRECURSION option exceeds the allowed maximum of 32767.", int(n))
			}
		case p.accept("RECOMPILE"):
			o.Recompile = true
		case p.peek().is("LOOP") || p.peek().is("HASH") || p.peek().is("MERGE"):
			o.Join = p.next().kw()
			err = p.expect("JOIN")
		case p.accept("FORCE"):
			o.ForceOrder = true
			err = p.expect("ORDER")
		case p.accept("MIN_GRANT_PERCENT"), p.accept("MAX_GRANT_PERCENT"):
			name := p.toks[p.i-1].kw()
			if err = p.expectOp("="); err != nil {
				return err
			}
			if n, err = number(); err == nil {
				if n < 0 || n > 100 {
					return NewError(102, 15, "Incorrect syntax near '%s'.", name)
				}
				if name == "MIN_GRANT_PERCENT" {
					o.MinGrant = n
				} else {
					o.MaxGrant = n
				}
			}
		case p.accept("OPTIMIZE"):
			if err = p.expect("FOR"); err == nil {
				err = p.expect("UNKNOWN")
			}
		default:
			return p.fail()
		}
		if err != nil {
			return err
		}
		if !p.acceptOp(",") {
			break
		}
	}
	return p.expectOp(")")
}

// groupBy parses the GROUP BY list with ROLLUP, CUBE, GROUPING SETS and ()
// (https://learn.microsoft.com/en-us/sql/t-sql/queries/select-group-by-transact-sql):
// every element yields a list of grouping sets, and the elements combine
// as a cross product.
func (p *parser) groupBy(s *SelectStmt) *SQLError {
	keys := map[string]int{}
	index := func(e Expr) int {
		k := exprKey(e)
		if i, ok := keys[k]; ok {
			return i
		}
		keys[k] = len(s.GroupBy)
		s.GroupBy = append(s.GroupBy, e)
		return len(s.GroupBy) - 1
	}
	sets := [][]int{{}}
	special := false
	for {
		elem, kind, err := p.groupElement(index)
		if err != nil {
			return err
		}
		if kind != "" {
			special = true
			if s.GroupKind == "" || s.GroupKind == kind {
				s.GroupKind = kind
			} else {
				s.GroupKind = "GROUPING SETS"
			}
		}
		var next [][]int
		for _, a := range sets {
			for _, b := range elem {
				next = append(next, append(append([]int{}, a...), b...))
			}
		}
		sets = next
		if !p.acceptOp(",") {
			break
		}
	}
	if special {
		s.GroupingSets = sets
	}
	return nil
}

// groupElement parses one GROUP BY element into its grouping sets.
func (p *parser) groupElement(index func(Expr) int) ([][]int, string, *SQLError) {
	switch {
	case p.peek().is("ROLLUP") && p.peekAt(1).isOp("("), p.peek().is("CUBE") && p.peekAt(1).isOp("("):
		kind := p.next().kw()
		p.i++
		parts, err := p.groupParts(index)
		if err != nil {
			return nil, "", err
		}
		var sets [][]int
		if kind == "ROLLUP" {
			for n := len(parts); n >= 0; n-- {
				var set []int
				for _, part := range parts[:n] {
					set = append(set, part...)
				}
				sets = append(sets, set)
			}
		} else {
			for mask := (1 << len(parts)) - 1; mask >= 0; mask-- {
				var set []int
				for i, part := range parts {
					if mask&(1<<(len(parts)-1-i)) != 0 {
						set = append(set, part...)
					}
				}
				sets = append(sets, set)
			}
		}
		return sets, kind, nil
	case p.peek().is("GROUPING") && p.peekAt(1).is("SETS"):
		p.i += 2
		if err := p.expectOp("("); err != nil {
			return nil, "", err
		}
		var sets [][]int
		for {
			elem, _, err := p.groupElement(index)
			if err != nil {
				return nil, "", err
			}
			sets = append(sets, elem...)
			if !p.acceptOp(",") {
				break
			}
		}
		return sets, "GROUPING SETS", p.expectOp(")")
	case p.peek().isOp("(") && p.peekAt(1).isOp(")"):
		p.i += 2
		return [][]int{{}}, "GROUPING SETS", nil
	case p.peek().isOp("(") && p.isCompositeGroup():
		p.i++
		parts, err := p.groupParts(index)
		if err != nil {
			return nil, "", err
		}
		var set []int
		for _, part := range parts {
			set = append(set, part...)
		}
		return [][]int{set}, "", nil
	}
	e, err := p.expression()
	if err != nil {
		return nil, "", err
	}
	return [][]int{{index(e)}}, "", nil
}

// isCompositeGroup tells a composite element "(a, b)" from a parenthesised
// expression "(a + b)": a comma at depth one.
func (p *parser) isCompositeGroup() bool {
	depth := 0
	for k := p.i; k < len(p.toks); k++ {
		t := p.toks[k]
		switch {
		case t.isOp("("):
			depth++
		case t.isOp(")"):
			depth--
			if depth == 0 {
				return false
			}
		case t.isOp(",") && depth == 1:
			return true
		case t.kind == tokEOF:
			return false
		}
	}
	return false
}

// groupParts reads "a, (b, c), d)" as a list of column groups.
func (p *parser) groupParts(index func(Expr) int) ([][]int, *SQLError) {
	var parts [][]int
	for {
		if p.peek().isOp("(") && p.isCompositeGroup() {
			p.i++
			var part []int
			for {
				e, err := p.expression()
				if err != nil {
					return nil, err
				}
				part = append(part, index(e))
				if !p.acceptOp(",") {
					break
				}
			}
			if err := p.expectOp(")"); err != nil {
				return nil, err
			}
			parts = append(parts, part)
		} else {
			e, err := p.expression()
			if err != nil {
				return nil, err
			}
			parts = append(parts, []int{index(e)})
		}
		if !p.acceptOp(",") {
			break
		}
	}
	return parts, p.expectOp(")")
}

// overClause parses OVER ([PARTITION BY …] [ORDER BY …] [ROWS|RANGE …]).
func (p *parser) overClause(f *FuncCall) (Expr, *SQLError) {
	p.i++ // OVER
	if err := p.expectOp("("); err != nil {
		return nil, err
	}
	w := &WindowExpr{F: f}
	if p.accept("PARTITION") {
		if err := p.expect("BY"); err != nil {
			return nil, err
		}
		for {
			e, err := p.expression()
			if err != nil {
				return nil, err
			}
			w.PartitionBy = append(w.PartitionBy, e)
			if !p.acceptOp(",") {
				break
			}
		}
	}
	if p.peek().is("ORDER") {
		p.i++
		if err := p.expect("BY"); err != nil {
			return nil, err
		}
		items, err := p.orderList()
		if err != nil {
			return nil, err
		}
		w.OrderBy = items
	}
	if p.peek().is("ROWS") || p.peek().is("RANGE") {
		fr := &windowFrame{Rows: asciiEqualFold(p.next().text, "ROWS")}
		var err *SQLError
		if p.accept("BETWEEN") {
			if fr.Start, err = p.frameBound(); err != nil {
				return nil, err
			}
			if err := p.expect("AND"); err != nil {
				return nil, err
			}
			if fr.End, err = p.frameBound(); err != nil {
				return nil, err
			}
		} else {
			if fr.Start, err = p.frameBound(); err != nil {
				return nil, err
			}
			fr.End = FrameBound{Kind: 0}
		}
		if !fr.Rows && (fr.Start.Kind == -1 || fr.Start.Kind == 1 || fr.End.Kind == -1 || fr.End.Kind == 1) {
			return nil, NewError(4194, 16, "RANGE is only supported with UNBOUNDED and CURRENT ROW window frame delimiters.")
		}
		if len(w.OrderBy) == 0 {
			return nil, NewError(10756, 15, "Window frame with ROWS or RANGE must have an ORDER BY clause.")
		}
		w.Frame = fr
	}
	if err := p.expectOp(")"); err != nil {
		return nil, err
	}
	return w, nil
}

func (p *parser) frameBound() (FrameBound, *SQLError) {
	switch {
	case p.accept("UNBOUNDED"):
		if p.accept("PRECEDING") {
			return FrameBound{Kind: -2}, nil
		}
		if p.accept("FOLLOWING") {
			return FrameBound{Kind: 2}, nil
		}
	case p.accept("CURRENT"):
		if p.accept("ROW") {
			return FrameBound{Kind: 0}, nil
		}
	case p.peek().kind == tokNumber:
		n, _ := strconv.ParseInt(p.next().text, 10, 64)
		if p.accept("PRECEDING") {
			return FrameBound{Kind: -1, N: n}, nil
		}
		if p.accept("FOLLOWING") {
			return FrameBound{Kind: 1, N: n}, nil
		}
	}
	return FrameBound{}, p.fail()
}

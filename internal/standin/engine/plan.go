package engine

import (
	"strings"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// The planner turns a parsed query into operators. Its choices follow what
// SQL Server's optimizer picks on data like the demo database's: seeks
// where a predicate is sargable on an index's leading key (with key
// lookups when the index does not cover), merge joins of inputs ordered on
// the join key, nested loops when the outer side is small and the inner
// can be sought, hash joins otherwise; stream aggregates over ordered input
// and for scalar aggregates, hash aggregates otherwise; a Sort only where
// the input is not already in the required order.

// Planner plans one statement for the request that runs it (Exec): it
// binds names, estimates rows from statistics and chooses the operators.
type Planner struct {
	x          Exec
	r          *RunCtx
	Scope      *PScope // the enclosing queries' scopes (correlation)
	ctes       []map[string]*cteBinding
	Opts       sqlfront.QueryOptions
	correlated bool // a column resolved in an enclosing query's scope
	subTypes   map[*sqlfront.SelectStmt]*Relation
	Parallel   bool
	itemPos    []int         // output position of each select item of the spec being planned
	StmtRoot   sqlfront.Stmt // the statement being planned (for the columns a query uses)
}

// PScope is one level of name resolution at plan time.
type PScope struct {
	Rel    *Relation
	Parent *PScope
}

// cteBinding is a WITH name visible to the query.
type cteBinding struct {
	def       *sqlfront.CTEDef
	recursive bool
	working   *recursiveWork // set while the recursive member is planned
	schema    *Relation
}

// NewPlanner starts planning a statement that r will run.
func NewPlanner(x Exec, r *RunCtx) *Planner {
	return &Planner{x: x, r: r, subTypes: map[*sqlfront.SelectStmt]*Relation{}}
}

// child returns a planner for a subquery: it sees the enclosing scope.
func (p *Planner) child(outer *Relation) *Planner {
	q := &Planner{x: p.x, r: p.r, ctes: p.ctes, Opts: p.Opts, subTypes: p.subTypes, StmtRoot: p.StmtRoot}
	q.Scope = &PScope{Rel: outer, Parent: p.Scope}
	return q
}

func (p *Planner) scopeFor(rel *Relation) *PScope {
	return &PScope{Rel: rel, Parent: p.Scope}
}

func (p *Planner) newNode(physical, logical string, schema *Relation, children ...Iter) *PlanNode {
	n := &PlanNode{Physical: physical, Logical: logical, Schema: schema, EstExecs: 1}
	for _, c := range children {
		n.Children = append(n.Children, c.Node())
	}
	return n
}

// Resolves checks, at plan time, that every column e references exists in
// rel or an enclosing scope (Msg 207/209), noting outer references.
func (p *Planner) Resolves(e sqlfront.Expr, rel *Relation) *sqlfront.SQLError {
	var refs []*sqlfront.ColRef
	Visit(e, func(n sqlfront.Expr) bool {
		if rel != nil && rel.Subst != nil {
			if _, ok := rel.Subst[n]; ok {
				return false
			}
		}
		if c, ok := n.(*sqlfront.ColRef); ok {
			refs = append(refs, c)
		}
		return true
	})
	for _, c := range refs {
		found := false
		for s, depth := p.scopeFor(rel), 0; s != nil; s, depth = s.Parent, depth+1 {
			if s.Rel == nil {
				continue
			}
			i, err := s.Rel.LookupRef(c)
			if err != nil {
				return err
			}
			if i >= 0 {
				found = true
				if depth > 0 {
					p.correlated = true
				}
				break
			}
		}
		if !found {
			return ErrInvalidColumn(strings.Join(c.Parts, "."))
		}
	}
	return nil
}

// PlanQuery plans a query expression. It returns the root operator, its
// output schema and how many leading columns are visible (the rest are
// ORDER BY keys carried for the sort).
func (p *Planner) PlanQuery(s *sqlfront.SelectStmt) (Iter, *Relation, int, *sqlfront.SQLError) {
	if len(s.With) > 0 {
		scope := map[string]*cteBinding{}
		p.ctes = append(append([]map[string]*cteBinding{}, p.ctes...), scope)
		for _, c := range s.With {
			key := strings.ToLower(c.Name)
			if _, dup := scope[key]; dup {
				return nil, nil, 0, sqlfront.NewError(239, 16, "Duplicate common table expression name '%s' was specified.", c.Name)
			}
			scope[key] = &cteBinding{def: c, recursive: referencesTable(c.Sel, c.Name)}
		}
	}
	if s.Opts.MaxDOP != 0 || s.Opts.Join != "" || s.Opts.MinGrant != 0 || s.Opts.MaxGrant != 0 || s.Opts.MaxRecursion >= 0 {
		p.Opts = MergeOptions(p.Opts, s.Opts)
	}
	if s.Op != "" {
		return p.planSetOp(s)
	}
	return p.planSpec(s)
}

// MergeOptions combines two sets of query hints; b's win where both
// set one.
func MergeOptions(a, b sqlfront.QueryOptions) sqlfront.QueryOptions {
	if b.MaxDOP != 0 {
		a.MaxDOP = b.MaxDOP
	}
	if b.Join != "" {
		a.Join = b.Join
	}
	if b.MinGrant != 0 {
		a.MinGrant = b.MinGrant
	}
	if b.MaxGrant != 0 {
		a.MaxGrant = b.MaxGrant
	}
	if b.MaxRecursion >= 0 {
		a.MaxRecursion = b.MaxRecursion
	}
	a.Recompile = a.Recompile || b.Recompile
	a.ForceOrder = a.ForceOrder || b.ForceOrder
	return a
}

// referencesTable tells whether a query names the table name anywhere in
// a FROM (a recursive CTE's self-reference).
func referencesTable(s *sqlfront.SelectStmt, name string) bool {
	if s == nil {
		return false
	}
	if s.Op != "" {
		return referencesTable(s.Left, name) || referencesTable(s.Right, name)
	}
	var inRef func(r sqlfront.TableRef) bool
	inRef = func(r sqlfront.TableRef) bool {
		switch t := r.(type) {
		case *sqlfront.TableName:
			return len(t.Parts) == 1 && strings.EqualFold(t.Parts[0], name)
		case *sqlfront.JoinRef:
			return inRef(t.Left) || inRef(t.Right)
		case *sqlfront.DerivedTable:
			return t.Sel != nil && referencesTable(t.Sel, name)
		}
		return false
	}
	return s.From != nil && inRef(s.From)
}

func (p *Planner) lookupCTE(name string) *cteBinding {
	for i := len(p.ctes) - 1; i >= 0; i-- {
		if b, ok := p.ctes[i][strings.ToLower(name)]; ok {
			return b
		}
	}
	return nil
}

// outItem is one output column of a query specification.
type outItem struct {
	e      sqlfront.Expr
	name   string
	hidden bool
}

// planSpec plans SELECT … FROM … WHERE … GROUP BY … HAVING … ORDER BY.
func (p *Planner) planSpec(s *sqlfront.SelectStmt) (Iter, *Relation, int, *sqlfront.SQLError) {
	in, err := p.PlanFromWhere(s)
	if err != nil {
		return nil, nil, 0, err
	}
	items, err := p.expandItems(s, in.Node().Schema)
	if err != nil {
		return nil, nil, 0, err
	}
	if p.aggregating(s, items) {
		if in, err = p.planAggregation(s, in, items); err != nil {
			return nil, nil, 0, err
		}
	} else if err := p.checkNoGrouping(s, items); err != nil {
		return nil, nil, 0, err
	}
	if in, err = p.planWindows(in, items, s.OrderBy); err != nil {
		return nil, nil, 0, err
	}
	items = p.addOrderKeys(s, items, in.Node().Schema)
	var exprs []sqlfront.Expr
	for _, it := range items {
		exprs = append(exprs, it.e)
	}
	if in, err = p.planSubqueries(in, exprs); err != nil {
		return nil, nil, 0, err
	}
	visible := 0
	for _, it := range items {
		if !it.hidden {
			visible++
		}
	}
	if in, err = p.project(in, items); err != nil {
		return nil, nil, 0, err
	}
	if s.Distinct {
		if in, err = p.planDistinct(in, visible); err != nil {
			return nil, nil, 0, err
		}
	}
	in, err = p.planOrderTop(s, in, visible)
	if err != nil {
		return nil, nil, 0, err
	}
	return in, in.Node().Schema, visible, nil
}

// expandItems turns the select list into output items (* expanded).
func (p *Planner) expandItems(s *sqlfront.SelectStmt, src *Relation) ([]outItem, *sqlfront.SQLError) {
	var items []outItem
	p.itemPos = p.itemPos[:0]
	for _, it := range s.Items {
		p.itemPos = append(p.itemPos, len(items))
		if it.Star {
			if s.From == nil {
				return nil, sqlfront.NewError(263, 16, "Must specify table to select from.")
			}
			n := 0
			for _, c := range src.Cols {
				if c.Hidden {
					continue
				}
				if it.StarQual == "" || strings.EqualFold(c.Qual, it.StarQual) {
					items = append(items, outItem{e: &sqlfront.ColRef{Parts: []string{c.Qual, c.Name}}, name: c.Name})
					n++
				}
			}
			if n == 0 {
				return nil, ErrInvalidObject(it.StarQual)
			}
			continue
		}
		oi := outItem{e: it.Expr, name: it.Alias}
		if oi.name == "" {
			switch c := it.Expr.(type) {
			case *sqlfront.ColRef:
				oi.name = c.Parts[len(c.Parts)-1]
			}
		}
		items = append(items, oi)
	}
	return items, nil
}

func (p *Planner) aggregating(s *sqlfront.SelectStmt, items []outItem) bool {
	if len(s.GroupBy) > 0 || s.Having != nil {
		return true
	}
	for _, it := range items {
		if len(AggregatesOf(it.e)) > 0 {
			return true
		}
	}
	for _, o := range s.OrderBy {
		if len(AggregatesOf(o.Expr)) > 0 {
			return true
		}
	}
	return false
}

// checkNoGrouping rejects GROUPING() outside an aggregate query.
func (p *Planner) checkNoGrouping(s *sqlfront.SelectStmt, items []outItem) *sqlfront.SQLError {
	for _, it := range items {
		var bad *sqlfront.SQLError
		Visit(it.e, func(n sqlfront.Expr) bool {
			if f, ok := n.(*sqlfront.FuncCall); ok && (f.Name == "GROUPING" || f.Name == "GROUPING_ID") {
				bad = sqlfront.NewError(8120, 16, "Column '%s' is invalid in the select list because it is not contained in either an aggregate function or the GROUP BY clause.", f.Name)
			}
			return true
		})
		if bad != nil {
			return bad
		}
	}
	return nil
}

// addOrderKeys appends ORDER BY expressions that are not select items as
// hidden items, and rewrites ordinal and alias references.
func (p *Planner) addOrderKeys(s *sqlfront.SelectStmt, items []outItem, src *Relation) []outItem {
	for i, o := range s.OrderBy {
		if _, ok := orderItemIndex(o.Expr, items); ok {
			continue
		}
		// an expression equal to a select item sorts by that item
		found := false
		for _, it := range items {
			if Shape(it.e, src) == Shape(o.Expr, src) {
				found = true
				break
			}
		}
		if !found {
			items = append(items, outItem{e: s.OrderBy[i].Expr, name: "", hidden: true})
		}
	}
	return items
}

// orderItemIndex resolves ORDER BY n and ORDER BY alias to a select item.
func orderItemIndex(e sqlfront.Expr, items []outItem) (int, bool) {
	if lit, ok := e.(*sqlfront.Literal); ok {
		if n, ok := lit.V.(int64); ok && n >= 1 && int(n) <= len(items) {
			return int(n) - 1, true
		}
	}
	if c, ok := e.(*sqlfront.ColRef); ok && len(c.Parts) == 1 {
		for j, it := range items {
			if !it.hidden && it.name != "" && strings.EqualFold(it.name, c.Parts[0]) {
				if _, isCol := it.e.(*sqlfront.ColRef); !isCol || true {
					return j, true
				}
			}
		}
	}
	return 0, false
}

// project computes the output items: a Compute Scalar when any item is an
// expression, a column selection otherwise (which SQL Server does not show
// as an operator).
func (p *Planner) project(in Iter, items []outItem) (Iter, *sqlfront.SQLError) {
	src := in.Node().Schema
	out := &Relation{}
	computed := false
	for _, it := range items {
		if err := p.Resolves(it.e, src); err != nil {
			return nil, err
		}
		col := RelCol{Name: it.name, Typ: p.typeOf(it.e, src), Hidden: it.hidden}
		if it.hidden {
			col.OrderExpr = it.e
		}
		if c, ok := it.e.(*sqlfront.ColRef); ok {
			if i, _ := src.LookupRef(c); i >= 0 {
				col.Qual = src.Cols[i].Qual
				col.Base = src.Cols[i].Base
			}
		} else if _, ok := src.Subst[it.e]; !ok {
			computed = true
		}
		out.Cols = append(out.Cols, col)
	}
	exprs := make([]sqlfront.Expr, len(items))
	for i, it := range items {
		exprs[i] = it.e
	}
	return &projectIter{n: p.projectNode(in, out, computed), in: in, exprs: exprs}, nil
}

func (p *Planner) projectNode(in Iter, out *Relation, computed bool) *PlanNode {
	n := p.newNode("Compute Scalar", "Compute Scalar", out, in)
	n.EstRows = in.Node().EstRows
	n.EstCPU = 0.0000001 * n.EstRows
	n.Hidden = !computed
	return n
}

// planOrderTop adds the Sort, Top and OFFSET/FETCH of a query.
func (p *Planner) planOrderTop(s *sqlfront.SelectStmt, in Iter, visible int) (Iter, *sqlfront.SQLError) {
	schema := in.Node().Schema
	items := make([]outItem, len(schema.Cols))
	for i, c := range schema.Cols {
		items[i] = outItem{e: &sqlfront.ColRef{Parts: []string{c.Name}}, name: c.Name, hidden: c.Hidden}
	}
	var keys []sortKey
	if len(s.OrderBy) > 0 {
		var err *sqlfront.SQLError
		if keys, err = p.orderKeysOut(s, schema); err != nil {
			return nil, err
		}
	}
	var top, offset, fetch sqlfront.Expr = s.Top, s.Offset, s.Fetch
	if top != nil && offset != nil {
		return nil, sqlfront.NewError(10741, 15, "A TOP can not be used in the same query or sub-query as a OFFSET.")
	}
	if s.WithTies && len(keys) == 0 {
		return nil, sqlfront.NewError(1062, 16, "The TOP N WITH TIES clause is not allowed without a corresponding ORDER BY clause.")
	}
	if len(keys) > 0 && !orderedBy(in, keys) {
		in = p.sortOp(in, keys, top, s.TopPercent || s.WithTies || offset != nil)
	}
	if top != nil || offset != nil {
		in = p.topOp(in, top, s.TopPercent, s.WithTies, keys, offset, fetch)
	}
	return in, nil
}

// orderKeysOut resolves the ORDER BY of s against its projected output.
func (p *Planner) orderKeysOut(s *sqlfront.SelectStmt, schema *Relation) ([]sortKey, *sqlfront.SQLError) {
	var keys []sortKey
	hiddenAt := 0
	for i, c := range schema.Cols {
		if c.Hidden {
			hiddenAt = i
			break
		}
		hiddenAt = i + 1
	}
	visibleItems := 0
	for _, c := range schema.Cols {
		if !c.Hidden {
			visibleItems++
		}
	}
	for _, o := range s.OrderBy {
		if lit, ok := o.Expr.(*sqlfront.Literal); ok {
			if n, ok := lit.V.(int64); ok {
				if n < 1 || int(n) > visibleItems {
					return nil, sqlfront.NewError(108, 16, "The ORDER BY position number %d is out of range of the number of items in the select list.", n)
				}
				keys = append(keys, sortKey{col: int(n) - 1, desc: o.Desc})
				continue
			}
		}
		j := p.orderTarget(s, o.Expr, schema, hiddenAt)
		if j < 0 {
			return nil, ErrInvalidColumn(exprText(o.Expr))
		}
		keys = append(keys, sortKey{col: j, desc: o.Desc})
	}
	return keys, nil
}

// orderTarget finds the output column an ORDER BY expression sorts by:
// a select item by alias or equal expression, else its hidden key column.
func (p *Planner) orderTarget(s *sqlfront.SelectStmt, e sqlfront.Expr, schema *Relation, hiddenAt int) int {
	if c, ok := e.(*sqlfront.ColRef); ok && len(c.Parts) == 1 {
		for j, col := range schema.Cols {
			if !col.Hidden && strings.EqualFold(col.Name, c.Parts[0]) {
				return j
			}
		}
	}
	if s.Op == "" {
		for j, it := range s.Items {
			if it.Star || j >= len(schema.Cols) {
				continue
			}
			if it.Expr == e {
				return p.itemColumn(s, j)
			}
		}
		// matching select item expression or a hidden key
		for k, col := range schema.Cols {
			if col.Hidden && col.OrderExpr == e {
				return k
			}
		}
		for j, it := range s.Items {
			if !it.Star && sameExpr(it.Expr, e) {
				return p.itemColumn(s, j)
			}
		}
	}
	if c, ok := e.(*sqlfront.ColRef); ok {
		if i, _ := schema.LookupRef(c); i >= 0 {
			return i
		}
	}
	return -1
}

// itemColumn maps the j-th select item to its output column (stars expand
// to several).
func (p *Planner) itemColumn(s *sqlfront.SelectStmt, j int) int {
	if j < len(p.itemPos) {
		return p.itemPos[j]
	}
	return j
}

// sameExpr compares two expressions structurally (columns by name).
func sameExpr(a, b sqlfront.Expr) bool { return Shape(a, nil) == Shape(b, nil) }

// exprText renders an expression for an error message.
func exprText(e sqlfront.Expr) string {
	switch x := e.(type) {
	case *sqlfront.ColRef:
		return strings.Join(x.Parts, ".")
	case *sqlfront.Literal:
		return ValueString(x.V)
	}
	return "expression"
}

// Gather puts the Gather Streams of a parallel plan below the operators
// that must run serially (Top, and a final column selection), merging in
// sort order when the parallel part ends with a Sort.
func (p *Planner) Gather(it Iter) Iter {
	switch t := it.(type) {
	case *topIter:
		t.in = p.Gather(t.in)
		t.n.Children = []*PlanNode{t.in.Node()}
		return t
	case *projectIter:
		if t.n.Hidden {
			t.in = p.Gather(t.in)
			t.n.Children = []*PlanNode{t.in.Node()}
			return t
		}
	}
	var order []sortKey
	if s, ok := it.(*sortIter); ok {
		order = s.keys
	}
	g := p.exchange(it, "Gather Streams", nil, order)
	for _, c := range g.Node().Children {
		c.Walk(func(n *PlanNode) { n.parallel = true })
	}
	for _, s := range p.scansOf(it) {
		s.dop = p.Opts.MaxDOP
	}
	return g
}

// scansOf lists the scan operators in a plan.
func (p *Planner) scansOf(it Iter) []*scanIter {
	var out []*scanIter
	var walk func(it Iter)
	walk = func(it Iter) {
		switch t := it.(type) {
		case *scanIter:
			if !t.lookup {
				out = append(out, t)
			}
		case *nlIter:
			walk(t.outer)
			walk(t.inner)
		case *hashJoinIter:
			walk(t.build)
			walk(t.probe)
		case *mergeJoinIter:
			walk(t.left)
			walk(t.right)
		case *filterIter:
			walk(t.in)
		case *projectIter:
			walk(t.in)
		case *sortIter:
			walk(t.in)
		case *topIter:
			walk(t.in)
		case *aggIter:
			walk(t.in)
		case *distinctIter:
			walk(t.in)
		case *exchangeIter:
			walk(t.in)
		case *windowIter:
			walk(t.in)
		case *renameIter:
			walk(t.in)
		case *positionIter:
			walk(t.in)
		case *concatIter:
			for _, c := range t.ins {
				walk(c)
			}
		}
	}
	walk(it)
	return out
}

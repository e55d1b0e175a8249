package standin

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// relation is an intermediate or final row set of a SELECT.
type relation struct {
	cols []relCol
	rows [][]any
	srcs [][]rowSource // per row: the base-table rows it came from (for %%lockres%%, %%physloc%%)
}

type relCol struct {
	qual string // lower-case table alias or name
	name string
	typ  SQLType
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

func (env *evalEnv) lookupColumn(parts []string) (any, SQLType, *SQLError) {
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
					return nil, SQLType{}, errAmbiguousColumn(name)
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
	return nil, SQLType{}, errInvalidColumn(strings.Join(parts, "."))
}

func isAggregate(name string) bool {
	switch name {
	case "COUNT", "COUNT_BIG", "SUM", "MIN", "MAX", "AVG":
		return true
	}
	return false
}

func containsAggregate(e expr) bool {
	found := false
	walkExpr(e, func(x expr) {
		if f, ok := x.(*funcCall); ok && isAggregate(f.Name) {
			found = true
		}
	})
	return found
}

func walkExpr(e expr, fn func(expr)) {
	if e == nil {
		return
	}
	fn(e)
	switch x := e.(type) {
	case *funcCall:
		for _, a := range x.Args {
			walkExpr(a, fn)
		}
	case *castExpr:
		walkExpr(x.E, fn)
	case *unaryExpr:
		walkExpr(x.E, fn)
	case *binaryExpr:
		walkExpr(x.L, fn)
		walkExpr(x.R, fn)
	case *isNullExpr:
		walkExpr(x.E, fn)
	case *inExpr:
		walkExpr(x.E, fn)
		for _, a := range x.List {
			walkExpr(a, fn)
		}
	case *likeExpr:
		walkExpr(x.E, fn)
		walkExpr(x.Pattern, fn)
	case *betweenExpr:
		walkExpr(x.E, fn)
		walkExpr(x.Lo, fn)
		walkExpr(x.Hi, fn)
	case *caseExpr:
		walkExpr(x.Operand, fn)
		for _, w := range x.Whens {
			walkExpr(w.Cond, fn)
			walkExpr(w.Result, fn)
		}
		walkExpr(x.Else, fn)
	}
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

func (env *evalEnv) eval(e expr) (any, *SQLError) {
	switch x := e.(type) {
	case *literal:
		return x.V, nil
	case *varRef:
		return env.x.variable(x.Name)
	case *colRef:
		v, _, err := env.lookupColumn(x.Parts)
		return v, err
	case *pseudoCol:
		return env.pseudo(x)
	case *castExpr:
		v, err := env.eval(x.E)
		if err != nil {
			return nil, err
		}
		return convertValue(v, x.T)
	case *unaryExpr:
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
			return nil, errConversion("nvarchar", valueString(v), "int")
		case "~":
			if n, ok := v.(int64); ok {
				return ^n, nil
			}
			return nil, nil
		}
	case *binaryExpr:
		return env.binary(x)
	case *isNullExpr:
		v, err := env.eval(x.E)
		if err != nil {
			return nil, err
		}
		return (v == nil) != x.Not, nil
	case *likeExpr:
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
		return likeMatch(valueString(v), valueString(p)) != x.Not, nil
	case *betweenExpr:
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
		c1, err := compareValues(v, lo)
		if err != nil {
			return nil, err
		}
		c2, err := compareValues(v, hi)
		if err != nil {
			return nil, err
		}
		return (c1 >= 0 && c2 <= 0) != x.Not, nil
	case *inExpr:
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
			rel, err := env.x.runSelect(x.Sub, env)
			if err != nil {
				return nil, err
			}
			for _, r := range rel.rows {
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
			c, err := compareValues(v, av)
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
	case *caseExpr:
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
					cmp, err := compareValues(operand, c)
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
	case *subqueryExpr:
		rel, err := env.x.runSelect(x.Sel, env)
		if err != nil {
			return nil, err
		}
		switch len(rel.rows) {
		case 0:
			return nil, nil
		case 1:
			return rel.rows[0][0], nil
		}
		return nil, errSubqueryMultipleRows()
	case *existsExpr:
		rel, err := env.x.runSelect(x.Sel, env)
		if err != nil {
			return nil, err
		}
		return len(rel.rows) > 0, nil
	case *funcCall:
		if isAggregate(x.Name) {
			return env.aggregate(x)
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
	return nil, errUnsupported(fmt.Sprintf("%T", e))
}

// inSet is a precomputed IN list of constants (literals and variables),
// so that WHERE %%lockres%% IN (@h0, …, @h1999) costs one lookup per row.
type inSet struct {
	members map[string]bool
	hasNull bool
}

// constantInSet returns the set for a long IN list of constants, built once
// per request; nil when the list is short or not constant.
func (x *execCtx) constantInSet(in *inExpr, env *evalEnv) *inSet {
	if in.Sub != nil || len(in.List) < 8 {
		return nil
	}
	if set, ok := x.inSets[in]; ok {
		return set
	}
	set := &inSet{members: map[string]bool{}}
	for _, e := range in.List {
		switch e.(type) {
		case *literal, *varRef:
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
		x.inSets = map[*inExpr]*inSet{}
	}
	x.inSets[in] = set
	return set
}

func (env *evalEnv) binary(x *binaryExpr) (any, *SQLError) {
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
		c, err := compareValues(l, r)
		if err != nil {
			return nil, err
		}
		return cmpOp(x.Op, c), nil
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
				return nil, errDivideByZero()
			}
			return a / b, nil
		case "%":
			if b == 0 {
				return nil, errDivideByZero()
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
			return nil, errDivideByZero()
		}
		return ln / rn, nil
	case "%":
		if rn == 0 {
			return nil, errDivideByZero()
		}
		return ln % rn, nil
	case "&":
		return ln & rn, nil
	case "|":
		return ln | rn, nil
	case "^":
		return ln ^ rn, nil
	}
	return nil, errSyntaxNear(x.Op)
}

func numeric(v any) (int64, bool, *SQLError) {
	switch x := v.(type) {
	case int64:
		return x, false, nil
	case float64:
		return 0, true, nil
	case bool:
		return boolInt(x), false, nil
	case string:
		f, err := toNumber(x, "int")
		if err != nil {
			return 0, false, err
		}
		if f == math.Trunc(f) && !strings.Contains(x, ".") {
			return int64(f), false, nil
		}
		return 0, true, nil
	}
	return 0, false, errConversion(typeOfValue(v).String(), valueString(v), "int")
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case bool:
		return float64(boolInt(x))
	case string:
		f, _ := toNumber(x, "float")
		return f
	}
	return 0
}

func (env *evalEnv) aggregate(f *funcCall) (any, *SQLError) {
	if !env.aggOK {
		return nil, errAggregateInWhere()
	}
	var count int64
	var sum float64
	var isFloat bool
	var sumInt int64
	var best any
	seen := map[string]bool{}
	for i, r := range env.group {
		if f.Star {
			count++
			continue
		}
		sub := &evalEnv{x: env.x, rel: env.rel, row: r, outer: env.outer}
		if env.gsrcs != nil {
			sub.srcs = env.gsrcs[i]
		}
		v, err := sub.eval(f.Args[0])
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		if f.Distinct {
			k := valueString(v)
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		count++
		switch f.Name {
		case "SUM", "AVG":
			switch n := v.(type) {
			case int64:
				sumInt += n
				sum += float64(n)
			case float64:
				isFloat = true
				sum += n
			default:
				return nil, sqlErr(8117, 16, "Operand data type %s is invalid for %s operator.", typeOfValue(v), strings.ToLower(f.Name))
			}
		case "MIN", "MAX":
			if best == nil {
				best = v
				continue
			}
			c, err := compareValues(v, best)
			if err != nil {
				return nil, err
			}
			if f.Name == "MIN" && c < 0 || f.Name == "MAX" && c > 0 {
				best = v
			}
		}
	}
	switch f.Name {
	case "COUNT", "COUNT_BIG":
		return count, nil
	case "SUM":
		if count == 0 {
			return nil, nil
		}
		if isFloat {
			return sum, nil
		}
		return sumInt, nil
	case "AVG":
		if count == 0 {
			return nil, nil
		}
		if isFloat {
			return sum / float64(count), nil
		}
		return sumInt / count, nil
	}
	return best, nil
}

func (env *evalEnv) pseudo(p *pseudoCol) (any, *SQLError) {
	var src *rowSource
	for i := range env.srcs {
		if p.Qual == "" || strings.EqualFold(env.srcs[i].qual, p.Qual) {
			if src != nil && p.Qual == "" {
				return nil, errAmbiguousColumn(p.Name)
			}
			src = &env.srcs[i]
		}
	}
	if src == nil || src.ix == nil {
		if env.row == nil {
			return nil, nil
		}
		return nil, errInvalidColumn(p.Name)
	}
	switch p.Name {
	case "%%lockres%%":
		return src.ix.keyHash(src.row), nil
	case "%%physloc%%":
		page, slot := src.ix.location(src.ix.entryPos(src.row))
		return physloc(page, 1, slot), nil
	}
	return nil, errInvalidColumn(p.Name)
}

// runSelect evaluates a SELECT into a relation. outer is the enclosing
// environment for correlated subqueries (nil at top level).
func (x *execCtx) runSelect(s *selectStmt, outer *evalEnv) (*relation, *SQLError) {
	src := &relation{}
	if s.From != nil {
		var err *SQLError
		src, err = x.tableSource(s.From, outer)
		if err != nil {
			return nil, err
		}
	} else {
		src.rows = [][]any{{}}
		src.srcs = [][]rowSource{nil}
	}
	// WHERE
	if s.Where != nil {
		if containsAggregate(s.Where) {
			return nil, errAggregateInWhere()
		}
		var rows [][]any
		var srcs [][]rowSource
		for i, r := range src.rows {
			env := &evalEnv{x: x, rel: src, row: r, srcs: src.srcs[i], outer: outer}
			v, err := env.eval(s.Where)
			if err != nil {
				return nil, err
			}
			if b, _ := truth(v); b {
				rows = append(rows, r)
				srcs = append(srcs, src.srcs[i])
			}
		}
		src = &relation{cols: src.cols, rows: rows, srcs: srcs}
	}
	// expand select items
	type outItem struct {
		e     expr
		name  string
		typ   SQLType
		typed bool
	}
	var items []outItem
	for _, it := range s.Items {
		if it.Star {
			if s.From == nil {
				return nil, sqlErr(263, 16, "Must specify table to select from.")
			}
			n := 0
			for _, c := range src.cols {
				if it.StarQual == "" || strings.EqualFold(c.qual, it.StarQual) {
					items = append(items, outItem{e: &colRef{Parts: []string{c.qual, c.name}}, name: c.name, typ: c.typ, typed: true})
					n++
				}
			}
			if n == 0 {
				return nil, errInvalidObject(it.StarQual)
			}
			continue
		}
		oi := outItem{e: it.Expr, name: it.Alias}
		if oi.name == "" {
			if c, ok := it.Expr.(*colRef); ok {
				oi.name = c.Parts[len(c.Parts)-1]
			}
		}
		if t, ok := staticType(it.Expr, src); ok {
			oi.typ, oi.typed = t, true
		}
		items = append(items, oi)
	}
	aggregating := len(s.GroupBy) > 0
	for _, it := range items {
		if containsAggregate(it.e) {
			aggregating = true
		}
	}
	if s.Having != nil {
		aggregating = true
	}
	var out []outRow
	if aggregating {
		// group
		groups := map[string]int{}
		var order []string
		var members [][]int
		for i, r := range src.rows {
			env := &evalEnv{x: x, rel: src, row: r, srcs: src.srcs[i], outer: outer}
			var key strings.Builder
			for _, g := range s.GroupBy {
				v, err := env.eval(g)
				if err != nil {
					return nil, err
				}
				key.WriteString(strings.ToUpper(valueString(v)))
				key.WriteByte(0)
				if v == nil {
					key.WriteByte(1)
				}
			}
			k := key.String()
			gi, ok := groups[k]
			if !ok {
				gi = len(order)
				groups[k] = gi
				order = append(order, k)
				members = append(members, nil)
			}
			members[gi] = append(members[gi], i)
		}
		if len(s.GroupBy) == 0 && len(members) == 0 {
			members = append(members, nil) // aggregate over no rows yields one row
		}
		groupKeys := map[string]bool{}
		for _, g := range s.GroupBy {
			groupKeys[exprKey(g)] = true
		}
		for _, it := range items {
			if err := checkGrouped(it.e, groupKeys); err != nil {
				return nil, err
			}
		}
		for _, m := range members {
			env := &evalEnv{x: x, rel: src, outer: outer, aggOK: true}
			for _, i := range m {
				env.group = append(env.group, src.rows[i])
				env.gsrcs = append(env.gsrcs, src.srcs[i])
			}
			if len(m) > 0 {
				env.row = src.rows[m[0]]
				env.srcs = src.srcs[m[0]]
			} else {
				env.row = make([]any, len(src.cols))
			}
			if s.Having != nil {
				v, err := env.eval(s.Having)
				if err != nil {
					return nil, err
				}
				if b, _ := truth(v); !b {
					continue
				}
			}
			vals := make([]any, len(items))
			for j, it := range items {
				v, err := env.eval(it.e)
				if err != nil {
					return nil, err
				}
				vals[j] = v
			}
			out = append(out, outRow{vals, env})
		}
	} else {
		for i, r := range src.rows {
			env := &evalEnv{x: x, rel: src, row: r, srcs: src.srcs[i], outer: outer}
			vals := make([]any, len(items))
			for j, it := range items {
				v, err := env.eval(it.e)
				if err != nil {
					return nil, err
				}
				vals[j] = v
			}
			out = append(out, outRow{vals, env})
		}
	}
	if s.Distinct {
		seen := map[string]bool{}
		var kept []outRow
		for _, r := range out {
			var k strings.Builder
			for _, v := range r.vals {
				fmt.Fprintf(&k, "%T:%s|", v, strings.ToUpper(valueString(v)))
			}
			if !seen[k.String()] {
				seen[k.String()] = true
				kept = append(kept, r)
			}
		}
		out = kept
	}
	if len(s.OrderBy) > 0 {
		keys := make([][]any, len(out))
		for i, r := range out {
			for _, o := range s.OrderBy {
				var v any
				resolved := false
				if c, ok := o.Expr.(*colRef); ok && len(c.Parts) == 1 {
					for j, it := range items {
						if strings.EqualFold(it.name, c.Parts[0]) {
							v, resolved = r.vals[j], true
							break
						}
					}
				}
				if lit, ok := o.Expr.(*literal); ok {
					if n, ok := lit.V.(int64); ok {
						if n < 1 || int(n) > len(items) {
							return nil, sqlErr(108, 16, "The ORDER BY position number %d is out of range of the number of items in the select list.", n)
						}
						v, resolved = r.vals[n-1], true
					}
				}
				if !resolved {
					var err *SQLError
					if v, err = r.env.eval(o.Expr); err != nil {
						return nil, err
					}
				}
				keys[i] = append(keys[i], v)
			}
		}
		idx := make([]int, len(out))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool {
			for k, o := range s.OrderBy {
				va, vb := keys[idx[a]][k], keys[idx[b]][k]
				var c int
				switch {
				case va == nil && vb == nil:
					c = 0
				case va == nil:
					c = -1
				case vb == nil:
					c = 1
				default:
					c, _ = compareValues(va, vb)
				}
				if o.Desc {
					c = -c
				}
				if c != 0 {
					return c < 0
				}
			}
			return false
		})
		sorted := make([]outRow, len(out))
		for i, j := range idx {
			sorted[i] = out[j]
		}
		out = sorted
	}
	if s.Top != nil {
		env := &evalEnv{x: x, outer: outer}
		v, err := env.eval(s.Top)
		if err != nil {
			return nil, err
		}
		n, ok := v.(int64)
		if !ok || n < 0 {
			return nil, sqlErr(1014, 15, "A TOP or FETCH clause contains an invalid value.")
		}
		if int(n) < len(out) {
			out = out[:n]
		}
	}
	res := &relation{}
	for j, it := range items {
		t := it.typ
		if !it.typed {
			t = inferType(out, j)
		}
		res.cols = append(res.cols, relCol{name: it.name, typ: t})
	}
	for _, r := range out {
		res.rows = append(res.rows, r.vals)
		res.srcs = append(res.srcs, r.env.srcs)
	}
	return res, nil
}

type outRow struct {
	vals []any
	env  *evalEnv
}

// inferType derives a column type from its values when the expression has
// no static type.
func inferType(rows []outRow, j int) SQLType {
	var t SQLType
	for _, r := range rows {
		v := r.vals[j]
		if v == nil {
			continue
		}
		vt := typeOfValue(v)
		switch {
		case t.Kind == 0:
			t = vt
		case t.Kind == TypeInt && vt.Kind == TypeBigInt:
			t = vt
		case t.Kind == TypeNVarChar && vt.Kind == TypeNVarChar && vt.Size == 0:
			t = vt
		}
	}
	if t.Kind == 0 {
		return tInt
	}
	return t
}

// exprKey renders an expression structurally, for GROUP BY matching.
func exprKey(e expr) string {
	switch x := e.(type) {
	case *colRef:
		return "col:" + strings.ToLower(x.Parts[len(x.Parts)-1])
	case *literal:
		return fmt.Sprintf("lit:%v", x.V)
	case *funcCall:
		var parts []string
		for _, a := range x.Args {
			parts = append(parts, exprKey(a))
		}
		return x.Name + "(" + strings.Join(parts, ",") + ")"
	case *castExpr:
		return "cast(" + exprKey(x.E) + "," + x.T.String() + ")"
	case *binaryExpr:
		return "(" + exprKey(x.L) + x.Op + exprKey(x.R) + ")"
	case *varRef:
		return "var:" + strings.ToLower(x.Name)
	}
	return fmt.Sprintf("%T:%p", e, e)
}

// checkGrouped rejects a column outside aggregates that is not grouped (Msg 8120).
func checkGrouped(e expr, groupKeys map[string]bool) *SQLError {
	if e == nil || groupKeys[exprKey(e)] {
		return nil
	}
	switch x := e.(type) {
	case *funcCall:
		if isAggregate(x.Name) {
			return nil
		}
		for _, a := range x.Args {
			if err := checkGrouped(a, groupKeys); err != nil {
				return err
			}
		}
	case *colRef:
		return errNotInGroupBy(strings.Join(x.Parts, "."))
	case *castExpr:
		return checkGrouped(x.E, groupKeys)
	case *binaryExpr:
		if err := checkGrouped(x.L, groupKeys); err != nil {
			return err
		}
		return checkGrouped(x.R, groupKeys)
	case *unaryExpr:
		return checkGrouped(x.E, groupKeys)
	case *caseExpr:
		for _, w := range x.Whens {
			if err := checkGrouped(w.Cond, groupKeys); err != nil {
				return err
			}
			if err := checkGrouped(w.Result, groupKeys); err != nil {
				return err
			}
		}
		return checkGrouped(x.Else, groupKeys)
	}
	return nil
}

// staticType gives the declared type of simple expressions (columns, CASTs,
// known functions) so result metadata does not depend on the data.
func staticType(e expr, rel *relation) (SQLType, bool) {
	switch x := e.(type) {
	case *colRef:
		env := &evalEnv{rel: rel}
		_, t, err := env.lookupColumn(x.Parts)
		if err == nil && t.Kind != 0 {
			return t, true
		}
	case *castExpr:
		return x.T, true
	case *pseudoCol:
		if x.Name == "%%physloc%%" {
			return tVarBin(8), true
		}
		return tNVar(14), true
	case *funcCall:
		switch x.Name {
		case "COUNT":
			return tInt, true
		case "COUNT_BIG":
			return tBigInt, true
		case "DB_ID", "OBJECT_ID", "SCHEMA_ID", "HAS_PERMS_BY_NAME", "IS_SRVROLEMEMBER", "LEN", "CHARINDEX", "PATINDEX":
			return tInt, true
		case "DB_NAME", "OBJECT_NAME", "SCHEMA_NAME", "SUSER_NAME", "SUSER_SNAME", "USER_NAME", "QUOTENAME":
			return tNVar(128), true
		case "@@SPID":
			return tSmallInt, true
		}
	case *varRef:
		switch strings.ToUpper(x.Name) {
		case "@@SPID":
			return tSmallInt, true
		case "@@VERSION":
			return tNVar(300), true
		case "@@TRANCOUNT", "@@ROWCOUNT", "@@ERROR":
			return tInt, true
		case "@@SERVERNAME":
			return tNVar(128), true
		}
	}
	return SQLType{}, false
}

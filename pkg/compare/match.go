package compare

import (
	"hash/fnv"
	"slices"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/findings"
)

// How a pair was matched (see the package doc).
const (
	HowIdentical  = "identical"
	HowSameObject = "same-object"
	HowReplaced   = "replaced"
	HowContainer  = "container"
	HowRoot       = "root"
	HowChildren   = "children"
)

// minDice is the share of matched descendants that makes two operators of
// one family a container match.
const minDice = 0.5

// OpMatch pairs operator A[a] with B[b] (indices into the inputs).
type OpMatch struct {
	A, B int
	How  string
}

// node is one operator in a tree.
type node struct {
	i            int // index in the input
	parent       int // node index, -1 at a root
	children     []int
	label        string // physical|logical, "|lookup" for key and RID lookups
	lookup       bool
	physical     string
	logical      string
	table, index string // lower case; table includes the schema
	pre, depth   int
	size, height int
	hash         uint64
	sig          string
}

type tree struct {
	nodes []node
	order []int // node indices in pre-order
	roots []int
}

// newTree builds the operator tree of ops from their Parent links. An
// operator whose parent is unknown, is itself, or closes a cycle becomes a
// root; of operators sharing a node id, the first is the parent.
func newTree(ops []findings.OperatorStats) *tree {
	t := &tree{nodes: make([]node, len(ops))}
	byID := map[int]int{}
	for i, o := range ops {
		if _, dup := byID[o.NodeID]; !dup {
			byID[o.NodeID] = i
		}
		// A key lookup is a Clustered Index Seek in the plan XML; its role
		// (fetching each outer row's columns) is not a seek's.
		lookup := strings.Contains(o.Name, "Lookup") || o.PhysicalOp == "RID Lookup"
		label := o.PhysicalOp + "|" + o.LogicalOp
		if lookup {
			label += "|lookup"
		}
		t.nodes[i] = node{i: i, parent: -1, label: label, lookup: lookup, physical: o.PhysicalOp, logical: o.LogicalOp,
			table: strings.ToLower(joinTable(o.Schema, o.Table)), index: strings.ToLower(o.Index)}
	}
	for i, o := range ops {
		if o.Parent == nil {
			continue
		}
		if p, ok := byID[*o.Parent]; ok && p != i {
			t.nodes[i].parent = p
		}
	}
	// Cut cycles: walk up from each node; a walk that returns to a node of
	// its own path makes that node a root.
	state := make([]uint8, len(ops)) // 0 new, 1 on the path, 2 done
	for i := range t.nodes {
		var path []int
		n := i
		for n >= 0 && state[n] == 0 {
			state[n] = 1
			path = append(path, n)
			n = t.nodes[n].parent
		}
		if n >= 0 && state[n] == 1 {
			t.nodes[n].parent = -1
		}
		for _, p := range path {
			state[p] = 2
		}
	}
	for i := range t.nodes {
		if p := t.nodes[i].parent; p >= 0 {
			t.nodes[p].children = append(t.nodes[p].children, i)
		} else {
			t.roots = append(t.roots, i)
		}
	}
	for _, r := range t.roots {
		t.walk(r, 0)
	}
	return t
}

func joinTable(schema, table string) string {
	if schema == "" || table == "" {
		return table
	}
	return schema + "." + table
}

// walk numbers n's subtree in pre-order and computes sizes, heights and
// shape hashes.
func (t *tree) walk(n, depth int) {
	nd := &t.nodes[n]
	nd.pre, nd.depth = len(t.order), depth
	t.order = append(t.order, n)
	size, height := 1, 0
	var sig strings.Builder
	sig.WriteString("(" + nd.label + "@" + nd.table + "." + nd.index)
	for _, c := range nd.children {
		t.walk(c, depth+1)
		size += t.nodes[c].size
		height = max(height, t.nodes[c].height+1)
		sig.WriteString(t.nodes[c].sig)
	}
	sig.WriteString(")")
	nd = &t.nodes[n]
	nd.size, nd.height, nd.sig = size, height, sig.String()
	h := fnv.New64a()
	h.Write([]byte(nd.sig))
	nd.hash = h.Sum64()
}

// desc reports whether d is in a's subtree (d ≠ a).
func (t *tree) desc(a, d int) bool {
	pa, pd := t.nodes[a].pre, t.nodes[d].pre
	return pd > pa && pd < pa+t.nodes[a].size
}

// signature is the whole tree's shape, for the canonical order.
func (t *tree) signature() string {
	var b strings.Builder
	for _, r := range t.roots {
		b.WriteString(t.nodes[r].sig)
	}
	return b.String()
}

// matcher holds the two trees and the mapping built so far.
type matcher struct {
	a, b     *tree
	ab, ba   []int // partner index or -1
	how      map[int]string
	sequence []int // A nodes in the order they were matched
}

// Match pairs the operators of two plans (see the package doc). The result
// is in A's plan order.
func Match(a, b []findings.OperatorStats) []OpMatch {
	ta, tb := newTree(a), newTree(b)
	swapped := ta.signature() > tb.signature()
	if swapped {
		ta, tb = tb, ta
	}
	m := &matcher{a: ta, b: tb, ab: fill(len(ta.nodes)), ba: fill(len(tb.nodes)), how: map[int]string{}}
	m.identical()
	m.objects()
	m.containers()
	m.rootsMatch()
	m.recover()
	var out []OpMatch
	for x, y := range m.ab {
		if y < 0 {
			continue
		}
		p := OpMatch{A: x, B: y, How: m.how[x]}
		if swapped {
			p.A, p.B = y, x
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(p, q OpMatch) int { return p.A - q.A })
	return out
}

func fill(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = -1
	}
	return s
}

func (m *matcher) pair(x, y int, how string) {
	m.ab[x], m.ba[y] = y, x
	m.how[x] = how
	m.sequence = append(m.sequence, x)
}

func (m *matcher) free(x, y int) bool { return m.ab[x] < 0 && m.ba[y] < 0 }

// parentsMatched: x's parent is matched to y's parent.
func (m *matcher) parentsMatched(x, y int) bool {
	px, py := m.a.nodes[x].parent, m.b.nodes[y].parent
	return px >= 0 && py >= 0 && m.ab[px] == py
}

// ancestry counts equal labels on the two ancestor paths, nearest first,
// up to three levels; matched parents count double.
func (m *matcher) ancestry(x, y int) int {
	s := 0
	if m.parentsMatched(x, y) {
		s += 2
	}
	px, py := m.a.nodes[x].parent, m.b.nodes[y].parent
	for range 3 {
		if px < 0 || py < 0 {
			break
		}
		if m.a.nodes[px].label == m.b.nodes[py].label {
			s++
		}
		px, py = m.a.nodes[px].parent, m.b.nodes[py].parent
	}
	return s
}

// distance is how far apart two nodes sit: depth and relative position.
func (m *matcher) distance(x, y int) float64 {
	nx, ny := m.a.nodes[x], m.b.nodes[y]
	rel := func(pre, n int) float64 {
		if n <= 1 {
			return 0
		}
		return float64(pre) / float64(n-1)
	}
	d := float64(abs(nx.depth - ny.depth))
	return d + abs64f(rel(nx.pre, len(m.a.nodes))-rel(ny.pre, len(m.b.nodes)))
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func abs64f(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// candidate is a possible pair with its ranking keys.
type candidate struct {
	x, y     int
	tier     int // lower first
	ancestry int // higher first
	distance float64
}

func (m *matcher) rank(c []candidate) {
	slices.SortStableFunc(c, func(p, q candidate) int {
		switch {
		case p.tier != q.tier:
			return p.tier - q.tier
		case p.ancestry != q.ancestry:
			return q.ancestry - p.ancestry
		case p.distance != q.distance:
			if p.distance < q.distance {
				return -1
			}
			return 1
		case p.x != q.x:
			return m.a.nodes[p.x].pre - m.a.nodes[q.x].pre
		}
		return m.b.nodes[p.y].pre - m.b.nodes[q.y].pre
	})
}

// identical matches equal-shaped subtrees, tallest first.
func (m *matcher) identical() {
	maxH := 0
	for _, n := range m.a.nodes {
		maxH = max(maxH, n.height)
	}
	for h := maxH; h >= 0; h-- {
		var c []candidate
		for _, x := range m.a.order {
			nx := m.a.nodes[x]
			if nx.height != h || m.ab[x] >= 0 {
				continue
			}
			for _, y := range m.b.order {
				ny := m.b.nodes[y]
				if ny.height == h && m.ba[y] < 0 && ny.hash == nx.hash && ny.sig == nx.sig {
					c = append(c, candidate{x: x, y: y, ancestry: m.ancestry(x, y), distance: m.distance(x, y)})
				}
			}
		}
		m.rank(c)
		for _, p := range c {
			if m.free(p.x, p.y) && m.subtreeFree(p.x, p.y) {
				m.pairSubtree(p.x, p.y)
			}
		}
	}
}

func (m *matcher) subtreeFree(x, y int) bool {
	nx, ny := m.a.nodes[x], m.b.nodes[y]
	for k := range nx.size {
		if m.ab[m.a.order[nx.pre+k]] >= 0 || m.ba[m.b.order[ny.pre+k]] >= 0 {
			return false
		}
	}
	return true
}

// pairSubtree matches two identical subtrees node for node (their pre-order
// sequences line up because their shapes are equal).
func (m *matcher) pairSubtree(x, y int) {
	nx, ny := m.a.nodes[x], m.b.nodes[y]
	for k := range nx.size {
		m.pair(m.a.order[nx.pre+k], m.b.order[ny.pre+k], HowIdentical)
	}
}

func isAccess(physical string) bool {
	return strings.Contains(physical, "Scan") || strings.Contains(physical, "Seek") || strings.Contains(physical, "Lookup")
}

// objects pairs leftover operators on the same table (see the package doc).
func (m *matcher) objects() {
	var c []candidate
	for _, x := range m.a.order {
		nx := m.a.nodes[x]
		if nx.table == "" || m.ab[x] >= 0 {
			continue
		}
		for _, y := range m.b.order {
			ny := m.b.nodes[y]
			if ny.table != nx.table || m.ba[y] >= 0 || nx.lookup != ny.lookup {
				continue
			}
			tier := 0
			switch {
			case nx.index == ny.index && nx.label == ny.label:
				tier = 1
			case nx.index == ny.index:
				tier = 2
			case isAccess(nx.physical) && isAccess(ny.physical):
				tier = 3
			default:
				continue
			}
			pm := 1
			if m.parentsMatched(x, y) {
				pm = 0
			}
			c = append(c, candidate{x: x, y: y, tier: tier*2 + pm, ancestry: m.ancestry(x, y), distance: m.distance(x, y)})
		}
	}
	m.rank(c)
	for _, p := range c {
		if m.free(p.x, p.y) {
			how := HowReplaced
			if p.tier <= 3 {
				how = HowSameObject
			}
			m.pair(p.x, p.y, how)
		}
	}
}

// family groups operators that can stand in for each other.
func family(n node) string {
	if n.lookup {
		return "lookup"
	}
	switch n.physical {
	case "Nested Loops", "Merge Join", "Adaptive Join":
		return "join"
	case "Hash Match":
		if strings.Contains(n.logical, "Aggregate") || strings.Contains(n.logical, "Distinct") {
			return "aggregate"
		}
		return "join"
	case "Stream Aggregate":
		return "aggregate"
	}
	return "op:" + n.physical
}

// containers matches leftover inner operators bottom-up by their matched
// descendants.
func (m *matcher) containers() {
	// Lowest first: a node's height exceeds its descendants', so each node
	// comes after all of them.
	post := slices.Clone(m.a.order)
	slices.SortStableFunc(post, func(p, q int) int { return m.a.nodes[p].height - m.a.nodes[q].height })
	for _, x := range post {
		nx := m.a.nodes[x]
		if m.ab[x] >= 0 || nx.size == 1 {
			continue
		}
		best, bestDice, bestSame := -1, 0.0, false
		for _, y := range m.b.order {
			ny := m.b.nodes[y]
			if m.ba[y] >= 0 || ny.size == 1 || family(nx) != family(ny) {
				continue
			}
			d := m.dice(x, y)
			same := nx.label == ny.label
			if d > bestDice || d == bestDice && same && !bestSame {
				best, bestDice, bestSame = y, d, same
			}
		}
		if best >= 0 && bestDice >= minDice {
			m.pair(x, best, HowContainer)
		}
	}
}

// dice is 2·|matched descendant pairs| / (|desc x| + |desc y|).
func (m *matcher) dice(x, y int) float64 {
	nx, ny := m.a.nodes[x], m.b.nodes[y]
	common := 0
	for k := 1; k < nx.size; k++ {
		d := m.a.order[nx.pre+k]
		if p := m.ab[d]; p >= 0 && m.b.desc(y, p) {
			common++
		}
	}
	return 2 * float64(common) / float64(nx.size-1+ny.size-1)
}

// rootsMatch pairs the plans' roots when each side has one root left and
// they are of one family.
func (m *matcher) rootsMatch() {
	if len(m.a.roots) == 0 || len(m.b.roots) == 0 {
		return
	}
	x, y := m.a.roots[0], m.b.roots[0]
	if m.free(x, y) && family(m.a.nodes[x]) == family(m.b.nodes[y]) {
		m.pair(x, y, HowRoot)
	}
}

// recover pairs leftover children of matched pairs, top-down.
func (m *matcher) recover() {
	for i := 0; i < len(m.sequence); i++ {
		x := m.sequence[i]
		y := m.ab[x]
		var cx, cy []int
		for _, c := range m.a.nodes[x].children {
			if m.ab[c] < 0 {
				cx = append(cx, c)
			}
		}
		for _, c := range m.b.nodes[y].children {
			if m.ba[c] < 0 {
				cy = append(cy, c)
			}
		}
		for _, p := range m.lcs(cx, cy) {
			m.pair(p[0], p[1], HowChildren)
		}
		var lx, ly []int
		for _, c := range cx {
			if m.ab[c] < 0 {
				lx = append(lx, c)
			}
		}
		for _, c := range cy {
			if m.ba[c] < 0 {
				ly = append(ly, c)
			}
		}
		if len(lx) == 1 && len(ly) == 1 && family(m.a.nodes[lx[0]]) == family(m.b.nodes[ly[0]]) {
			m.pair(lx[0], ly[0], HowChildren)
		}
	}
}

// lcs returns the longest common subsequence of two child lists by label.
func (m *matcher) lcs(cx, cy []int) [][2]int {
	n, k := len(cx), len(cy)
	if n == 0 || k == 0 {
		return nil
	}
	dp := make([][]int, n+1)
	for i := range dp {
		dp[i] = make([]int, k+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := k - 1; j >= 0; j-- {
			if m.a.nodes[cx[i]].label == m.b.nodes[cy[j]].label {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	var out [][2]int
	for i, j := 0, 0; i < n && j < k; {
		switch {
		case m.a.nodes[cx[i]].label == m.b.nodes[cy[j]].label:
			out = append(out, [2]int{cx[i], cy[j]})
			i++
			j++
		case dp[i+1][j] >= dp[i][j+1]:
			i++
		default:
			j++
		}
	}
	return out
}

package callstack

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
)

//go:embed rules.txt
var defaultRules string

// Classification is what the rules say about one frame.
type Classification struct {
	// ModuleBadge is the module's display category ("Storage Engine",
	// "Query Processor", "SQL OS", …; "Unknown" when no rule matches).
	ModuleBadge string
	// Category is the symbol category's name and display text
	// ("IndexAccess", "Index Access"); "Unknown" when no rule matches.
	Category        string
	CategoryDisplay string
	// Infrastructure marks frames a UI may hide: Extended Events publishing,
	// tracing, scheduling, worker management, I/O infrastructure, SQL OS and
	// system frames.
	Infrastructure bool
	// OperatorBadge and PlanOperators name the plan operator an iterator
	// frame belongs to (CQScanNLJoinNew::GetRow → "Nested Loops"); the plan
	// operators are showplan PhysicalOp patterns.
	OperatorBadge string
	PlanOperators []string
	// Barrier marks where a storage unit of work starts (BPool::Get).
	Barrier bool
}

// Classifier applies classification rules. The zero value classifies
// everything as Unknown; use DefaultClassifier.
type Classifier struct {
	mu      sync.Mutex
	memo    map[string]map[string]*Classification // module → symbol → result
	memoLen int
	badges  map[string]string // module → module badge

	modules    []rule
	categories map[string]category
	symbols    []rule
	symIndex   ruleIndex
	opIndex    ruleIndex
	operators  []rule
	barriers   []rule
}

type category struct {
	display string
	infra   bool
}

type rule struct {
	module, class, function pattern
	value                   string // module badge, category name, or operator badge
	planOps                 []string
	order                   int
}

// DefaultClassifier returns a classifier with the embedded rules.
func DefaultClassifier() *Classifier {
	c, err := ParseRules(defaultRules, nil)
	if err != nil {
		panic("embedded rules.txt: " + err.Error()) // a build-time defect, caught by the tests
	}
	return c
}

// ParseRules reads rules in the rules.txt format. With a base classifier,
// the new rules are added after the base ones: a module rule for the same
// pattern replaces the base entry, symbol/operator rules are appended and
// so win ties. The base is not modified.
func ParseRules(text string, base *Classifier) (*Classifier, error) {
	c := &Classifier{categories: map[string]category{}}
	order := 0
	if base != nil {
		c.modules = append(c.modules, base.modules...)
		c.symbols = append(c.symbols, base.symbols...)
		c.operators = append(c.operators, base.operators...)
		c.barriers = append(c.barriers, base.barriers...)
		for k, v := range base.categories {
			c.categories[k] = v
		}
		order = len(c.modules) + len(c.symbols) + len(c.operators) + len(c.barriers)
	}
	section := ""
	for n, raw := range strings.Split(text, "\n") {
		line := raw
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = strings.ToLower(line[1 : len(line)-1])
			continue
		}
		cells := strings.Split(line, "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		errf := func(format string, args ...any) error {
			return fmt.Errorf("rules line %d (%q): %s", n+1, raw, fmt.Sprintf(format, args...))
		}
		order++
		switch section {
		case "modules":
			if len(cells) != 2 || cells[0] == "" || cells[1] == "" {
				return nil, errf("want module | badge")
			}
			r := rule{module: newPattern(cells[0]), class: newPattern("*"), function: newPattern("*"), value: cells[1], order: order}
			replaced := false
			for i := range c.modules {
				if strings.EqualFold(c.modules[i].module.text, cells[0]) {
					c.modules[i] = r
					replaced = true
				}
			}
			if !replaced {
				c.modules = append(c.modules, r)
			}
		case "categories":
			if len(cells) != 3 || cells[0] == "" {
				return nil, errf("want name | display | yes/no")
			}
			infra, ok := map[string]bool{"yes": true, "no": false}[strings.ToLower(cells[2])]
			if !ok {
				return nil, errf("infrastructure must be yes or no, not %q", cells[2])
			}
			c.categories[cells[0]] = category{display: cells[1], infra: infra}
		case "symbols":
			if len(cells) != 4 || cells[3] == "" {
				return nil, errf("want module | class | function | category")
			}
			c.symbols = append(c.symbols, rule{module: newPattern(cells[0]), class: newPattern(cells[1]), function: newPattern(cells[2]), value: cells[3], order: order})
		case "operators":
			if len(cells) != 5 {
				return nil, errf("want module | class | function | badge | plan operators")
			}
			r := rule{module: newPattern(cells[0]), class: newPattern(cells[1]), function: newPattern(cells[2]), value: cells[3], order: order}
			for _, op := range strings.Split(cells[4], ",") {
				if op = strings.TrimSpace(op); op != "" {
					r.planOps = append(r.planOps, op)
				}
			}
			c.operators = append(c.operators, r)
		case "barriers":
			if len(cells) != 3 {
				return nil, errf("want module | class | function")
			}
			c.barriers = append(c.barriers, rule{module: newPattern(cells[0]), class: newPattern(cells[1]), function: newPattern(cells[2]), order: order})
		default:
			return nil, errf("rule outside a known [section]")
		}
	}
	c.symIndex = newRuleIndex(c.symbols)
	c.opIndex = newRuleIndex(c.operators)
	for _, r := range c.symbols {
		if _, ok := c.categories[r.value]; !ok {
			return nil, fmt.Errorf("rules: symbol rule %s|%s|%s names unknown category %q", r.module.text, r.class.text, r.function.text, r.value)
		}
	}
	return c, nil
}

// Classify classifies a frame given its module name (any form: path,
// extension and case are ignored) and its name-only symbol
// (Class::Method, Namespace::Class::Method or a free function; "" for an
// unresolved frame, which only module-wide rules — class and function both
// "*" — classify). Results are memoised per (module, symbol), so a call
// stack's repeated frames cost one map lookup; the returned PlanOperators
// slice is shared and must not be modified.
func (c *Classifier) Classify(module, symbol string) Classification {
	return *c.classifyShared(module, symbol)
}

var unknownClass = Classification{ModuleBadge: "Unknown", Category: "Unknown", CategoryDisplay: "Unknown"}

// classifyShared returns the memoised classification; callers must not
// modify it.
func (c *Classifier) classifyShared(module, symbol string) *Classification {
	if c == nil {
		u := unknownClass
		return &u
	}
	c.mu.Lock()
	bySymbol := c.memo[module]
	out, ok := bySymbol[symbol]
	c.mu.Unlock()
	if ok {
		return out
	}
	cl := c.classify(module, symbol)
	out = &cl
	c.mu.Lock()
	if c.memo == nil || c.memoLen >= maxMemo {
		c.memo, c.memoLen = map[string]map[string]*Classification{}, 0
	}
	if c.memo[module] == nil {
		c.memo[module] = map[string]*Classification{}
	}
	c.memo[module][symbol] = out
	c.memoLen++
	c.mu.Unlock()
	return out
}

// maxMemo bounds the memo; when full it starts afresh (a 100,000-frame
// input has a few thousand distinct functions).
const maxMemo = 1 << 17

// subject is a frame's names, split once for all rules. Patterns compare
// ASCII case-insensitively, so nothing is lower-cased (or allocated) here.
type subject struct {
	mod, class, inner, fn string
	free, unresolved      bool
}

func newSubject(module, symbol string) subject {
	class, fn := SplitSymbol(symbol)
	s := subject{mod: NormalizeModule(module), class: class, fn: fn, free: class == "", unresolved: symbol == ""}
	if scope, last := SplitSymbol(class); scope != "" {
		s.inner = last
	}
	return s
}

func (c *Classifier) classify(module, symbol string) Classification {
	out := unknownClass
	s := newSubject(module, symbol)
	out.ModuleBadge = c.moduleBadge(s)
	if r := c.symIndex.best(c.symbols, s); r != nil {
		out.Category = r.value
		cat := c.categories[r.value]
		out.CategoryDisplay, out.Infrastructure = cat.display, cat.infra
	}
	if !s.unresolved {
		var badge, ops *rule
		var badgeM, opsM match
		c.opIndex.each(c.operators, s, func(r *rule, m match) {
			if r.value != "" && (badge == nil || m.beats(badgeM)) {
				badge, badgeM = r, m
			}
			if len(r.planOps) > 0 && (ops == nil || m.beats(opsM)) {
				ops, opsM = r, m
			}
		})
		if badge != nil {
			out.OperatorBadge = badge.value
		}
		if ops != nil {
			out.PlanOperators = ops.planOps
		}
		out.Barrier = best(c.barriers, s) != nil
	}
	if out.ModuleBadge == "System" {
		out.Infrastructure = true
	}
	return out
}

// moduleBadge returns the module rule's badge, memoised per module name
// (a stack has a handful of modules).
func (c *Classifier) moduleBadge(s subject) string {
	c.mu.Lock()
	badge, ok := c.badges[s.mod]
	c.mu.Unlock()
	if ok {
		return badge
	}
	badge = "Unknown"
	if r := best(c.modules, subject{mod: s.mod, unresolved: true}); r != nil {
		badge = r.value
	}
	c.mu.Lock()
	if c.badges == nil || len(c.badges) >= maxMemo {
		c.badges = map[string]string{}
	}
	c.badges[s.mod] = badge
	c.mu.Unlock()
	return badge
}

// best returns the most specific matching rule.
func best(rules []rule, s subject) *rule {
	var b *rule
	var bm match
	for i := range rules {
		r := &rules[i]
		if m, ok := r.matches(s); ok && (b == nil || m.beats(bm)) {
			b, bm = r, m
		}
	}
	return b
}

// ruleIndex narrows the rules a frame is tested against: rules whose class
// (or, with a "*" class, function) pattern is exact or a prefix can only
// match names that start with the pattern's first letter, so they are kept
// in buckets by that letter; the rest are always tried. With some 250
// symbol rules this makes a classification a few dozen pattern tests.
type ruleIndex struct {
	always  []int
	byClass map[[2]byte][]int
	byFunc  map[[2]byte][]int
}

// bucket is the index key of a literal: its first two bytes, lower case
// (one byte and a zero for one-letter literals, which are then always
// tried).
func bucket(s string) ([2]byte, bool) {
	if len(s) < 2 {
		return [2]byte{}, false
	}
	return [2]byte{lowerByte(s[0]), lowerByte(s[1])}, true
}

func newRuleIndex(rules []rule) ruleIndex {
	x := ruleIndex{byClass: map[[2]byte][]int{}, byFunc: map[[2]byte][]int{}}
	for i, r := range rules {
		cb, cok := bucket(r.class.lit)
		fb, fok := bucket(r.function.lit)
		switch {
		case (r.class.kind == '=' || r.class.kind == '^') && cok:
			x.byClass[cb] = append(x.byClass[cb], i)
		case r.class.kind == '*' && (r.function.kind == '=' || r.function.kind == '^') && fok:
			x.byFunc[fb] = append(x.byFunc[fb], i)
		default:
			x.always = append(x.always, i)
		}
	}
	return x
}

// best returns the most specific rule matching s among the candidates.
func (x *ruleIndex) best(rules []rule, s subject) *rule {
	var b *rule
	var bm match
	x.each(rules, s, func(r *rule, m match) {
		if b == nil || m.beats(bm) {
			b, bm = r, m
		}
	})
	return b
}

// each calls fn for every candidate rule that matches s.
func (x *ruleIndex) each(rules []rule, s subject, fn func(*rule, match)) {
	try := func(idx []int) {
		for _, i := range idx {
			if m, ok := rules[i].matches(s); ok {
				fn(&rules[i], m)
			}
		}
	}
	try(x.always)
	if s.unresolved {
		return
	}
	cb, cok := bucket(s.class)
	if cok {
		try(x.byClass[cb])
	}
	if ib, ok := bucket(s.inner); ok && (!cok || ib != cb) {
		try(x.byClass[ib])
	}
	if fb, ok := bucket(s.fn); ok {
		if s.free && (!cok || fb != cb) {
			try(x.byClass[fb])
		}
		try(x.byFunc[fb])
	}
}

// match is how a rule matched: the specificity levels that count, whether
// only the innermost class matched, the literal length, and the rule order.
type match struct {
	module, class, function int
	inner                   bool
	lit, order              int
}

// matches tests a rule against a frame.
//
// The class pattern is tried against the scope-qualified class and, failing
// that, against the innermost class name (inner is then set), so that
// namespaced symbols (sql::BTreeMgr::Seek) meet rules written for bare class
// names. A free function has no class: a rule that names something in the
// class column and "*" as function (lck_ProduceExtendedEvent*,
// ExecuteCommandsInAutoTransaction*) is then matched against the function
// name, and counts as a function rule. An unresolved frame (no symbol) is
// matched only by module-wide rules.
func (r *rule) matches(s subject) (match, bool) {
	if !r.module.match(s.mod) {
		return match{}, false
	}
	m := match{module: r.module.level, class: r.class.level, function: r.function.level, order: r.order,
		lit: len(r.module.lit) + len(r.class.lit) + len(r.function.lit)}
	if s.unresolved {
		return m, r.class.kind == '*' && r.function.kind == '*'
	}
	if s.free && r.class.kind != '*' && r.function.kind == '*' {
		m.class, m.function = 0, r.class.level
		return m, r.class.match(s.fn)
	}
	if !r.function.match(s.fn) {
		return m, false
	}
	if r.class.match(s.class) {
		return m, true
	}
	if s.inner != "" && r.class.match(s.inner) {
		m.inner = true
		return m, true
	}
	return m, false
}

// beats orders matches: total specificity, then function, class and module
// specificity, then a full-class match over an inner-class one, then the
// longer literal text, then the later rule.
func (m match) beats(o match) bool {
	for _, pair := range [...][2]int{{m.module + m.class + m.function, o.module + o.class + o.function},
		{m.function, o.function}, {m.class, o.class}, {m.module, o.module},
		{boolInt(!m.inner), boolInt(!o.inner)}, {m.lit, o.lit}} {
		if pair[0] != pair[1] {
			return pair[0] > pair[1]
		}
	}
	return m.order > o.order
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pattern is a glob of one of the forms exact, X*, *X, *X*, * (matching is
// case-insensitive). level ranks specificity: * 0, *X* 1, X* and *X 2,
// exact 3. An empty pattern (unset class in a module rule) matches anything.
type pattern struct {
	text  string
	lit   string // lower-case literal part
	kind  byte   // '=', '^' (prefix), '$' (suffix), '~' (contains), '*'
	level int
}

func newPattern(s string) pattern {
	p := pattern{text: s}
	starts, ends := strings.HasPrefix(s, "*"), strings.HasSuffix(s, "*")
	lit := strings.ToLower(strings.Trim(s, "*"))
	p.lit = lit
	switch {
	case s == "" || lit == "":
		p.kind, p.level, p.lit = '*', 0, ""
	case starts && ends:
		p.kind, p.level = '~', 1
	case ends:
		p.kind, p.level = '^', 2
	case starts:
		p.kind, p.level = '$', 2
	default:
		p.kind, p.level = '=', 3
	}
	return p
}

// match tests s, ignoring ASCII case (the literal is lower case).
func (p pattern) match(s string) bool {
	switch p.kind {
	case '*':
		return true
	case '^':
		return len(s) >= len(p.lit) && equalFoldLower(s[:len(p.lit)], p.lit)
	case '$':
		return len(s) >= len(p.lit) && equalFoldLower(s[len(s)-len(p.lit):], p.lit)
	case '~':
		for i := 0; i+len(p.lit) <= len(s); i++ {
			if lowerByte(s[i]) == p.lit[0] && equalFoldLower(s[i:i+len(p.lit)], p.lit) {
				return true
			}
		}
		return false
	}
	return len(s) == len(p.lit) && equalFoldLower(s, p.lit)
}

// equalFoldLower compares s with a lower-case literal of the same length.
func equalFoldLower(s, lower string) bool {
	for i := 0; i < len(s); i++ {
		if lowerByte(s[i]) != lower[i] {
			return false
		}
	}
	return true
}

func lowerByte(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// SplitSymbol splits a name-only symbol into class and method at the last
// "::" that is not inside template brackets; backticks and apostrophes are
// removed from the class part (docs/design/tracing.md §14.4). A free function has an
// empty class.
func SplitSymbol(symbol string) (class, method string) {
	depth := 0
	split := -1
	for i := 0; i+1 < len(symbol); i++ {
		switch symbol[i] {
		case '<':
			depth++
		case '>':
			if depth > 0 {
				depth--
			}
		case ':':
			if depth == 0 && symbol[i+1] == ':' {
				split = i
				i++
			}
		}
	}
	if split < 0 {
		return "", symbol
	}
	class = symbol[:split]
	if strings.IndexByte(class, '`') >= 0 || strings.IndexByte(class, '\'') >= 0 {
		class = strings.Map(func(r rune) rune {
			if r == '`' || r == '\'' {
				return -1
			}
			return r
		}, class)
	}
	return class, symbol[split+2:]
}

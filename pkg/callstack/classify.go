package callstack

import (
	_ "embed"
	"fmt"
	"strings"
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
	modules    []rule
	categories map[string]category
	symbols    []rule
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
			r := rule{module: newPattern(cells[0]), value: cells[1], order: order}
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
	for _, r := range c.symbols {
		if _, ok := c.categories[r.value]; !ok {
			return nil, fmt.Errorf("rules: symbol rule %s|%s|%s names unknown category %q", r.module.text, r.class.text, r.function.text, r.value)
		}
	}
	return c, nil
}

// Classify classifies a frame given its module name (any form: path,
// extension and case are ignored) and its name-only symbol
// (Class::Method, Namespace::Class::Method or a free function).
func (c *Classifier) Classify(module, symbol string) Classification {
	mod := NormalizeModule(module)
	class, fn := SplitSymbol(symbol)
	out := Classification{ModuleBadge: "Unknown", Category: "Unknown", CategoryDisplay: "Unknown"}
	if c == nil {
		return out
	}
	if r := best(c.modules, mod, "", ""); r != nil {
		out.ModuleBadge = r.value
	}
	if symbol != "" {
		if r := best(c.symbols, mod, class, fn); r != nil {
			out.Category = r.value
			cat := c.categories[r.value]
			out.CategoryDisplay, out.Infrastructure = cat.display, cat.infra
		}
		var badge, ops *rule
		var badgeInner, opsInner bool
		for i := range c.operators {
			r := &c.operators[i]
			ok, inner := r.matches(mod, class, fn)
			if !ok {
				continue
			}
			if r.value != "" && (badge == nil || beats(r, inner, badge, badgeInner)) {
				badge, badgeInner = r, inner
			}
			if len(r.planOps) > 0 && (ops == nil || beats(r, inner, ops, opsInner)) {
				ops, opsInner = r, inner
			}
		}
		if badge != nil {
			out.OperatorBadge = badge.value
		}
		if ops != nil {
			out.PlanOperators = append([]string(nil), ops.planOps...)
		}
		out.Barrier = best(c.barriers, mod, class, fn) != nil
	}
	if out.ModuleBadge == "System" {
		out.Infrastructure = true
	}
	return out
}

// best returns the most specific matching rule.
func best(rules []rule, mod, class, fn string) *rule {
	var b *rule
	bInner := false
	for i := range rules {
		r := &rules[i]
		ok, inner := r.matches(mod, class, fn)
		if ok && (b == nil || beats(r, inner, b, bInner)) {
			b, bInner = r, inner
		}
	}
	return b
}

// matches tests the class pattern against the scope-qualified class and,
// failing that, against the innermost class name (inner is then true), so
// that namespaced symbols (sql::BTreeMgr::Seek) meet rules written for bare
// class names. A match on the full class beats an inner-only match of equal
// specificity.
func (r *rule) matches(mod, class, fn string) (ok, inner bool) {
	if !r.module.match(mod) || !r.function.match(fn) {
		return false, false
	}
	if r.class.match(class) {
		return true, false
	}
	if scope, last := SplitSymbol(class); scope != "" && r.class.match(last) {
		return true, true
	}
	return false, false
}

// beats orders rules: total specificity, then function, class and module
// specificity, then a full-class match over an inner-class one, then the
// longer literal text, then the later rule.
func beats(r *rule, rInner bool, o *rule, oInner bool) bool {
	rt := r.module.level + r.class.level + r.function.level
	ot := o.module.level + o.class.level + o.function.level
	for _, pair := range [][2]int{{rt, ot}, {r.function.level, o.function.level}, {r.class.level, o.class.level}, {r.module.level, o.module.level},
		{boolInt(!rInner), boolInt(!oInner)},
		{len(r.module.lit) + len(r.class.lit) + len(r.function.lit), len(o.module.lit) + len(o.class.lit) + len(o.function.lit)}} {
		if pair[0] != pair[1] {
			return pair[0] > pair[1]
		}
	}
	return r.order > o.order
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

func (p pattern) match(s string) bool {
	if p.kind == '*' {
		return true
	}
	s = strings.ToLower(s)
	switch p.kind {
	case '^':
		return strings.HasPrefix(s, p.lit)
	case '$':
		return strings.HasSuffix(s, p.lit)
	case '~':
		return strings.Contains(s, p.lit)
	}
	return s == p.lit
}

// SplitSymbol splits a name-only symbol into class and method at the last
// "::" that is not inside template brackets; backticks and apostrophes are
// removed from the class part (xe-tracing.md §14.4). A free function has an
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
	class = strings.NewReplacer("`", "", "'", "").Replace(symbol[:split])
	return class, symbol[split+2:]
}

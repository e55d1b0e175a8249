package pdb

import (
	"strconv"
	"strings"
)

// Undecorate returns the "name only" form of an MSVC-decorated name — the
// scope-qualified function or variable name without return type, parameters,
// calling convention or access — as DIA's get_undecoratedNameEx with
// UNDNAME_NAME_ONLY prints it: "?ErsqExecuteQuery@CStmtQuery@sql@@QEAAHH@Z" →
// "sql::CStmtQuery::ErsqExecuteQuery", "?SpinToAcquire@?$Spinlock@$0IP@$06$00@@SAHH@Z"
// → "Spinlock<143,7,1>::SpinToAcquire". Template arguments print without
// class/struct keywords and with "," between them, as in SQLCallStackResolver
// output (realdata/callstack/resolved_*.txt). Nested names — function-local
// statics, lambdas and their (templated) call operators, symbols used as
// template arguments ($1, $E, $H, $I, $J) — print the way llvm-undname prints
// them, nested declaration in full: "?calls@?1??f@@YAHH@Z@4HA" →
// "`int __cdecl f(int)'::`2'::calls". TestUndecorateNestedAgainstLLVMUndname
// checks thousands of compiler-made names against llvm-undname. Names that
// are not decorated, or use encodings this decoder does not know, are
// returned unchanged.
func Undecorate(name string) string {
	if len(name) < 2 || name[0] != '?' {
		return name
	}
	if strings.HasPrefix(name, "??_C@_") {
		return "`string'"
	}
	d := &undecorator{s: name, pos: 1}
	out, ok := d.symbol()
	if !ok || out == "" {
		return name
	}
	return out
}

// undecorator holds the parse state. names and types are the two
// back-reference tables of the MSVC scheme (digits 0–9 refer to them).
type undecorator struct {
	s     string
	pos   int
	names []string
	types []string
	depth int
}

const maxUndecorateDepth = 64

// maxUndecoratedLen bounds every composed name: back-references can nest
// template instances so that output grows exponentially with input length.
const maxUndecoratedLen = 4096

func (d *undecorator) peek() byte {
	if d.pos < len(d.s) {
		return d.s[d.pos]
	}
	return 0
}

func (d *undecorator) eat(prefix string) bool {
	if strings.HasPrefix(d.s[d.pos:], prefix) {
		d.pos += len(prefix)
		return true
	}
	return false
}

func (d *undecorator) next() (byte, bool) {
	if d.pos >= len(d.s) {
		return 0, false
	}
	c := d.s[d.pos]
	d.pos++
	return c, true
}

func (d *undecorator) remember(name string) {
	if len(d.names) < 10 {
		d.names = append(d.names, name)
	}
}

// symbol parses a qualified name after the leading '?' and, when it is a
// conversion operator, the type encoding that supplies its target type.
func (d *undecorator) symbol() (string, bool) {
	d.depth++
	defer func() { d.depth-- }()
	if d.depth > maxUndecorateDepth {
		return "", false
	}
	first, conversion, ok := d.unqualifiedName(false)
	if !ok {
		return "", false
	}
	scopes, ok := d.scopes()
	if !ok {
		return "", false
	}
	// Constructors and destructors take their name from the enclosing class.
	if len(scopes) > 0 {
		class := scopes[0]
		switch first {
		case "\x00ctor":
			first = class
		case "\x00dtor":
			first = "~" + class
		}
	} else if first == "\x00ctor" || first == "\x00dtor" {
		return "", false
	}
	if conversion {
		ret, ok := d.conversionTarget()
		if !ok {
			first = "operator <conversion>"
		} else {
			first = "operator " + ret
		}
	}
	// Scopes were collected innermost first; print outermost first.
	var b strings.Builder
	for i := len(scopes) - 1; i >= 0; i-- {
		b.WriteString(scopes[i])
		b.WriteString("::")
	}
	b.WriteString(first)
	if b.Len() > maxUndecoratedLen {
		return "", false
	}
	return b.String(), true
}

func sumLen(ss []string) int {
	n := 0
	for _, s := range ss {
		n += len(s)
	}
	return n
}

// scopes parses scope names up to the terminating '@', innermost first.
func (d *undecorator) scopes() ([]string, bool) {
	var out []string
	for {
		if d.pos >= len(d.s) {
			return nil, false
		}
		if d.eat("@") {
			return out, true
		}
		s, ok := d.scopeName()
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
}

func (d *undecorator) scopeName() (string, bool) {
	c := d.peek()
	switch {
	case c >= '0' && c <= '9':
		d.pos++
		i := int(c - '0')
		if i >= len(d.names) {
			return "", false
		}
		return d.names[i], true
	case strings.HasPrefix(d.s[d.pos:], "?$"):
		return d.templateName(true)
	case strings.HasPrefix(d.s[d.pos:], "?A0x"), strings.HasPrefix(d.s[d.pos:], "?A"):
		// Anonymous namespace: ?A0x<hash>@ (or ?A@ in older compilers).
		end := strings.IndexByte(d.s[d.pos:], '@')
		if end < 0 {
			return "", false
		}
		d.remember(d.s[d.pos : d.pos+end])
		d.pos += end + 1
		return "`anonymous namespace'", true
	case c == '?':
		// Local scope: ?<number>?<nested symbol> → `nested'::`number', the
		// nested symbol printed in full, as llvm-undname prints it
		// (`int __cdecl sql::f(void)'::`2').
		d.pos++
		n, ok := d.number()
		if !ok {
			return "", false
		}
		if d.peek() != '?' {
			return "`" + strconv.FormatInt(n, 10) + "'", true
		}
		d.pos++
		nested, ok := d.nestedSymbol()
		if !ok {
			return "", false
		}
		return "`" + nested + "'::`" + strconv.FormatInt(n, 10) + "'", true
	default:
		return d.simpleName()
	}
}

// nestedSymbol parses a complete decorated symbol (with its own leading
// '?') embedded in a name, and renders it in full. It shares the
// back-reference tables of the symbol around it, as MSVC's scheme does.
func (d *undecorator) nestedSymbol() (string, bool) {
	if !d.eat("?") {
		return "", false
	}
	return d.fullSymbol()
}

// symbolWithEncoding parses name + type encoding and returns the name
// (dynamic initializers name their object so).
func (d *undecorator) symbolWithEncoding() (string, bool) {
	name, ok := d.symbol()
	if !ok {
		return "", false
	}
	if !d.skipEncoding() {
		return "", false
	}
	return name, true
}

// fullSymbol parses name + type encoding after a symbol's '?' and renders
// the whole declaration as llvm-undname does: access, storage, return type,
// calling convention, parameters and qualifiers for functions; type and
// name for variables.
func (d *undecorator) fullSymbol() (string, bool) {
	name, ok := d.symbol()
	if !ok {
		return "", false
	}
	out, ok := d.renderEncoding(name)
	if !ok || len(out) > maxUndecoratedLen {
		return "", false
	}
	return out, true
}

var variableAccess = [...]string{"private: static ", "protected: static ", "public: static ", "", ""}

// renderEncoding renders the encoding that follows name.
func (d *undecorator) renderEncoding(name string) (string, bool) {
	c := d.peek()
	switch {
	case c >= '0' && c <= '4': // variables: storage class, type, qualifiers
		d.pos++
		t, ok := d.typ()
		if !ok {
			return "", false
		}
		for d.eat("E") || d.eat("I") || d.eat("F") {
		}
		cv, ok := d.next()
		if !ok {
			return "", false
		}
		return variableAccess[c-'0'] + withCV(t, cv) + " " + name, true
	case c == '6' || c == '7':
		save := d.pos
		if !d.skipEncoding() {
			d.pos = save
			return "", false
		}
		return "const " + name, true
	case c == '8' || c == '9':
		d.pos++
		return name, true
	case strings.HasPrefix(d.s[d.pos:], "$B"): // vcall thunk: ??_9Class@@$B<offset>A<cc>
		d.pos += 2
		n, ok := d.number()
		if !ok || !d.eat("A") {
			return "", false
		}
		cc, ok := d.callingConvention()
		if !ok {
			return "", false
		}
		return "[thunk]: " + cc + " " + name + "{" + strconv.FormatInt(n, 10) + ", {flat}}", true
	}
	return d.renderFunction(name)
}

// functionClasses maps the function-class letter to llvm-undname's access
// and storage words.
var functionClasses = map[byte]struct {
	access, kind string
	this, thunk  bool
}{
	'A': {"private: ", "", true, false}, 'B': {"private: ", "", true, false},
	'C': {"private: ", "static ", false, false}, 'D': {"private: ", "static ", false, false},
	'E': {"private: ", "virtual ", true, false}, 'F': {"private: ", "virtual ", true, false},
	'G': {"private: ", "virtual ", true, true}, 'H': {"private: ", "virtual ", true, true},
	'I': {"protected: ", "", true, false}, 'J': {"protected: ", "", true, false},
	'K': {"protected: ", "static ", false, false}, 'L': {"protected: ", "static ", false, false},
	'M': {"protected: ", "virtual ", true, false}, 'N': {"protected: ", "virtual ", true, false},
	'O': {"protected: ", "virtual ", true, true}, 'P': {"protected: ", "virtual ", true, true},
	'Q': {"public: ", "", true, false}, 'R': {"public: ", "", true, false},
	'S': {"public: ", "static ", false, false}, 'T': {"public: ", "static ", false, false},
	'U': {"public: ", "virtual ", true, false}, 'V': {"public: ", "virtual ", true, false},
	'W': {"public: ", "virtual ", true, true}, 'X': {"public: ", "virtual ", true, true},
	'Y': {"", "", false, false}, 'Z': {"", "", false, false},
}

var callingConventions = map[byte]string{
	'A': "__cdecl", 'B': "__cdecl", 'C': "__pascal", 'D': "__pascal", 'E': "__thiscall", 'F': "__thiscall",
	'G': "__stdcall", 'H': "__stdcall", 'I': "__fastcall", 'J': "__fastcall", 'M': "__clrcall",
	'O': "__eabi", 'Q': "__vectorcall", 'S': "__regcall",
}

func (d *undecorator) callingConvention() (string, bool) {
	c, ok := d.next()
	if !ok {
		return "", false
	}
	cc, ok := callingConventions[c]
	return cc, ok
}

// renderFunction renders a function encoding: access, storage, return
// type, calling convention, name (with a thunk's adjustment), parameters,
// this-qualifiers.
func (d *undecorator) renderFunction(name string) (string, bool) {
	c, ok := d.next()
	if !ok {
		return "", false
	}
	prefix, suffix := "", ""
	fc, known := functionClasses[c]
	switch {
	case known && fc.thunk:
		n, ok := d.number()
		if !ok {
			return "", false
		}
		prefix, suffix = "[thunk]: ", "`adjustor{"+strconv.FormatInt(n, 10)+"}'"
	case !known && c == '$':
		c2, ok := d.next()
		if !ok || c2 < '0' || c2 > '5' {
			return "", false
		}
		a, ok1 := d.number()
		b, ok2 := d.number()
		if !ok1 || !ok2 {
			return "", false
		}
		fc = functionClasses[[...]byte{'E', 'E', 'M', 'M', 'U', 'U'}[c2-'0']]
		prefix, suffix = "[thunk]: ", "`vtordisp{"+strconv.FormatInt(a, 10)+", "+strconv.FormatInt(b, 10)+"}'"
	case !known:
		return "", false
	}
	quals := ""
	if fc.this {
		for d.eat("E") || d.eat("I") || d.eat("F") {
		}
		ref := ""
		if d.eat("G") {
			ref = " &"
		} else if d.eat("H") {
			ref = " &&"
		}
		cv, ok := d.next()
		if !ok || cv < 'A' || cv > 'D' {
			return "", false
		}
		quals = withCV("", cv) + ref
	}
	cc, ok := d.callingConvention()
	if !ok {
		return "", false
	}
	ret := ""
	if !d.eat("@") {
		if ret, ok = d.returnType(); !ok {
			return "", false
		}
		ret += " "
	}
	ps, ok := d.params()
	if !ok {
		return "", false
	}
	d.eat("_E")
	if !d.eat("Z") {
		return "", false
	}
	if sumLen(ps)+len(name)+len(ret) > maxUndecoratedLen {
		return "", false
	}
	return prefix + fc.access + fc.kind + ret + cc + " " + name + suffix + "(" + strings.Join(ps, ", ") + ")" + quals, true
}

func (d *undecorator) simpleName() (string, bool) {
	end := strings.IndexByte(d.s[d.pos:], '@')
	if end <= 0 {
		return "", false
	}
	n := d.s[d.pos : d.pos+end]
	d.pos += end + 1
	d.remember(n)
	return n, true
}

// templateName parses ?$name@args@ and, when memorize is set, remembers the
// whole instance as one name: templates are remembered as scopes and type
// names, not as a symbol's own name (llvm-undname's rule; a function
// template's instance is never a back-reference target). Argument
// back-references start afresh inside the template.
func (d *undecorator) templateName(memorize bool) (string, bool) {
	d.pos += 2
	outerNames, outerTypes := d.names, d.types
	d.names, d.types = nil, nil
	name, conv, ok := d.unqualifiedName(false)
	if ok && conv {
		name = "operator <conversion>"
	}
	var args []string
	for ok {
		if d.pos >= len(d.s) {
			ok = false
			break
		}
		if d.eat("@") {
			break
		}
		var a string
		var skip bool
		a, skip, ok = d.templateArg()
		if ok && !skip {
			args = append(args, a)
		}
	}
	d.names, d.types = outerNames, outerTypes
	if !ok {
		return "", false
	}
	if n := len(name) + len(args) + sumLen(args); n > maxUndecoratedLen {
		return "", false
	}
	inst := name + "<" + strings.Join(args, ",")
	if strings.HasSuffix(inst, ">") {
		inst += " "
	}
	inst += ">"
	if memorize {
		d.remember(inst)
	}
	return inst, true
}

// unqualifiedName parses the first name component. Special names (operators,
// constructors) are introduced by '?' (the symbol's own leading '?' has
// already been consumed, so "??0" arrives here as "?0").
func (d *undecorator) unqualifiedName(memorizeTemplate bool) (name string, conversion, ok bool) {
	if strings.HasPrefix(d.s[d.pos:], "?$") {
		n, ok := d.templateName(memorizeTemplate)
		return n, false, ok
	}
	if d.peek() == '?' {
		d.pos++
		return d.specialName()
	}
	if c := d.peek(); c >= '0' && c <= '9' {
		d.pos++
		i := int(c - '0')
		if i >= len(d.names) {
			return "", false, false
		}
		return d.names[i], false, true
	}
	n, ok := d.simpleName()
	return n, false, ok
}

var operatorNames = map[byte]string{
	'2': "operator new", '3': "operator delete", '4': "operator=", '5': "operator>>", '6': "operator<<",
	'7': "operator!", '8': "operator==", '9': "operator!=", 'A': "operator[]", 'C': "operator->",
	'D': "operator*", 'E': "operator++", 'F': "operator--", 'G': "operator-", 'H': "operator+",
	'I': "operator&", 'J': "operator->*", 'K': "operator/", 'L': "operator%", 'M': "operator<",
	'N': "operator<=", 'O': "operator>", 'P': "operator>=", 'Q': "operator,", 'R': "operator()",
	'S': "operator~", 'T': "operator^", 'U': "operator|", 'V': "operator&&", 'W': "operator||",
	'X': "operator*=", 'Y': "operator+=", 'Z': "operator-=",
}

var underscoreNames = map[byte]string{
	'0': "operator/=", '1': "operator%=", '2': "operator>>=", '3': "operator<<=", '4': "operator&=",
	'5': "operator|=", '6': "operator^=", '7': "`vftable'", '8': "`vbtable'", '9': "`vcall'",
	'A': "`typeof'", 'B': "`local static guard'", 'D': "`vbase destructor'",
	'E': "`vector deleting destructor'", 'F': "`default constructor closure'",
	'G': "`scalar deleting destructor'", 'H': "`vector constructor iterator'",
	'I': "`vector destructor iterator'", 'J': "`vector vbase constructor iterator'",
	'K': "`virtual displacement map'", 'L': "`eh vector constructor iterator'",
	'M': "`eh vector destructor iterator'", 'N': "`eh vector vbase constructor iterator'",
	'O': "`copy constructor closure'", 'S': "`local vftable'", 'T': "`local vftable constructor closure'",
	'U': "operator new[]", 'V': "operator delete[]", 'X': "`placement delete closure'",
	'Y': "`placement delete[] closure'",
}

func (d *undecorator) specialName() (string, bool, bool) {
	c, ok := d.next()
	if !ok {
		return "", false, false
	}
	switch {
	case c == '0':
		return "\x00ctor", false, true
	case c == '1':
		return "\x00dtor", false, true
	case c == 'B':
		return "", true, true
	case c == '_':
		c2, ok := d.next()
		if !ok {
			return "", false, false
		}
		if c2 == '_' {
			c3, ok := d.next()
			if !ok {
				return "", false, false
			}
			switch c3 {
			case 'E': // ??__E name @ … dynamic initializer for 'name'
				inner, ok := d.dynamicTarget()
				return "`dynamic initializer for '" + inner + "''", false, ok
			case 'F':
				inner, ok := d.dynamicTarget()
				return "`dynamic atexit destructor for '" + inner + "''", false, ok
			case 'K':
				n, ok := d.simpleName()
				return "operator \"\"" + n, false, ok
			case 'L':
				return "operator co_await", false, true
			case 'M':
				return "operator<=>", false, true
			}
			return "", false, false
		}
		if c2 == 'R' { // RTTI descriptors: ??_R0 … ??_R4
			if c3, ok := d.next(); ok {
				switch c3 {
				case '0':
					return "`RTTI Type Descriptor'", false, d.skipType()
				case '1':
					for range 4 {
						if _, ok := d.number(); !ok {
							return "", false, false
						}
					}
					return "`RTTI Base Class Descriptor'", false, true
				case '2':
					return "`RTTI Base Class Array'", false, true
				case '3':
					return "`RTTI Class Hierarchy Descriptor'", false, true
				case '4':
					return "`RTTI Complete Object Locator'", false, true
				}
			}
			return "", false, false
		}
		if n, ok := underscoreNames[c2]; ok {
			return n, false, true
		}
		return "", false, false
	}
	if n, ok := operatorNames[c]; ok {
		return n, false, true
	}
	return "", false, false
}

// dynamicTarget parses the object named by a dynamic initializer: either a
// nested decorated name (?x@@3HA) or a plain name followed by '@'.
func (d *undecorator) dynamicTarget() (string, bool) {
	if d.peek() == '?' {
		d.pos++
		return d.symbolWithEncoding()
	}
	return d.simpleName()
}

// number parses an encoded integer: [?]digit (1–10) or hex letters A–P
// terminated by '@'.
func (d *undecorator) number() (int64, bool) {
	neg := d.eat("?")
	c := d.peek()
	if c >= '0' && c <= '9' {
		d.pos++
		v := int64(c-'0') + 1
		if neg {
			v = -v
		}
		return v, true
	}
	var v uint64
	digits := 0
	for {
		c, ok := d.next()
		if !ok {
			return 0, false
		}
		if c == '@' {
			break
		}
		if c < 'A' || c > 'P' || digits >= 16 {
			return 0, false
		}
		v = v<<4 | uint64(c-'A')
		digits++
	}
	if neg {
		return -int64(v), true
	}
	return int64(v), true
}

// templateArg parses one template argument. skip is true for empty packs.
func (d *undecorator) templateArg() (arg string, skip, ok bool) {
	switch {
	case d.eat("$$V"), d.eat("$$Z"), d.eat("$$$V"), d.eat("$S"):
		return "", true, true
	case d.eat("$0"):
		n, ok := d.number()
		return strconv.FormatInt(n, 10), false, ok
	case d.eat("$1"):
		if d.peek() == '?' {
			n, ok := d.nestedSymbol()
			return "&" + n, false, ok
		}
		n, ok := d.number()
		return strconv.FormatInt(n, 10), false, ok
	case strings.HasPrefix(d.s[d.pos:], "$E?"):
		d.pos += 2
		n, ok := d.nestedSymbol()
		return n, false, ok
	case d.eat("$H"), d.eat("$I"), d.eat("$J"):
		// Pointer to member function of a class with multiple ($H), virtual
		// ($I) or unknown ($J) inheritance: the function and 1–3 offsets.
		extra := int(d.s[d.pos-1] - 'G')
		if d.peek() != '?' {
			return "", false, false
		}
		n, ok := d.nestedSymbol()
		if !ok {
			return "", false, false
		}
		out := "{" + n
		for range extra {
			v, ok := d.number()
			if !ok {
				return "", false, false
			}
			out += ", " + strconv.FormatInt(v, 10)
		}
		return out + "}", false, true
	case d.eat("$F"), d.eat("$G"):
		// Pointer to data member with inheritance offsets: 2 or 3 numbers.
		count := int(d.s[d.pos-1]-'F') + 2
		var vs []string
		for range count {
			v, ok := d.number()
			if !ok {
				return "", false, false
			}
			vs = append(vs, strconv.FormatInt(v, 10))
		}
		return "{" + strings.Join(vs, ", ") + "}", false, true
	case d.eat("$D"):
		n, ok := d.number()
		return "`template-parameter" + strconv.FormatInt(n, 10) + "'", false, ok
	case d.eat("$Q"):
		n, ok := d.number()
		return "`non-type-template-parameter" + strconv.FormatInt(n, 10) + "'", false, ok
	case d.eat("$M"):
		if !d.skipType() {
			return "", false, false
		}
		return d.templateArg()
	case d.eat("$2"):
		if _, ok := d.number(); !ok {
			return "", false, false
		}
		n, ok := d.number()
		return strconv.FormatInt(n, 10), false, ok
	}
	t, ok := d.typ()
	return t, false, ok
}

// conversionTarget parses the function encoding of a conversion operator
// up to its return type, which names the operator.
func (d *undecorator) conversionTarget() (string, bool) {
	save := d.pos
	defer func() { d.pos = save }()
	hasThis, ok := d.functionClass()
	if !ok {
		return "", false
	}
	if hasThis && !d.thisQualifiers() {
		return "", false
	}
	if _, ok := d.next(); !ok { // calling convention
		return "", false
	}
	return d.returnType()
}

// functionClass parses the access/kind character of a function encoding and
// reports whether the function has a this pointer.
func (d *undecorator) functionClass() (hasThis, ok bool) {
	c, ok := d.next()
	if !ok {
		return false, false
	}
	switch c {
	case 'A', 'B', 'E', 'F', 'I', 'J', 'M', 'N', 'Q', 'R', 'U', 'V':
		return true, true
	case 'C', 'D', 'K', 'L', 'S', 'T', 'Y', 'Z':
		return false, true
	case 'G', 'H', 'O', 'P', 'W', 'X': // adjustor thunks carry an offset
		_, ok := d.number()
		return true, ok
	case '$':
		c2, ok := d.next()
		if !ok {
			return false, false
		}
		switch c2 {
		case '0', '1', '2', '3', '4', '5': // vtordisp thunks
			if _, ok := d.number(); !ok {
				return false, false
			}
			_, ok := d.number()
			return true, ok
		case 'R': // vtordispex
			for range 4 {
				if _, ok := d.number(); !ok {
					return false, false
				}
			}
			d.eat("0") // older encodings: none
			return true, true
		}
	}
	return false, false
}

func (d *undecorator) thisQualifiers() bool {
	for d.eat("E") || d.eat("I") || d.eat("F") || d.eat("G") || d.eat("H") {
	}
	c, ok := d.next()
	return ok && c >= 'A' && c <= 'D'
}

func (d *undecorator) returnType() (string, bool) {
	if d.eat("@") {
		return "", true
	}
	if d.eat("?") {
		cv, ok := d.next()
		if !ok {
			return "", false
		}
		t, ok := d.typ()
		return withCV(t, cv), ok
	}
	return d.typ()
}

// skipEncoding consumes the type encoding that follows a decorated name:
// a function signature or a variable's storage and type.
func (d *undecorator) skipEncoding() bool {
	c := d.peek()
	switch {
	case c >= '0' && c <= '4': // variables: storage class, type, cv
		d.pos++
		if !d.skipType() {
			return false
		}
		_, ok := d.next()
		return ok
	case c == '6' || c == '7': // vftable / vbtable: cv + optional scope list
		d.pos++
		if _, ok := d.next(); !ok {
			return false
		}
		for d.pos < len(d.s) && d.peek() != '@' {
			if _, ok := d.scopes(); !ok {
				return false
			}
		}
		return d.eat("@")
	case c == '8', c == '9':
		d.pos++
		return true
	}
	hasThis, ok := d.functionClass()
	if !ok {
		return false
	}
	if hasThis && !d.thisQualifiers() {
		return false
	}
	if _, ok := d.next(); !ok {
		return false
	}
	if _, ok := d.returnType(); !ok {
		return false
	}
	return d.skipParamsAndThrow()
}

func (d *undecorator) skipParamsAndThrow() bool {
	if _, ok := d.params(); !ok {
		return false
	}
	// Exception specification: Z (none) or _E (noexcept) followed by Z.
	d.eat("_E")
	return d.eat("Z")
}

// params parses a function parameter list, remembering multi-character
// parameter types for back-references.
func (d *undecorator) params() ([]string, bool) {
	if d.eat("X") {
		return []string{"void"}, true
	}
	var out []string
	for {
		switch {
		case d.pos >= len(d.s):
			return nil, false
		case d.eat("@"):
			return out, true
		case d.eat("Z"):
			return append(out, "..."), true
		}
		start := d.pos
		c := d.peek()
		if c >= '0' && c <= '9' {
			d.pos++
			i := int(c - '0')
			if i >= len(d.types) {
				return nil, false
			}
			out = append(out, d.types[i])
			if sumLen(out) > maxUndecoratedLen {
				return nil, false
			}
			continue
		}
		t, ok := d.typ()
		if !ok {
			return nil, false
		}
		if d.pos-start > 1 && len(d.types) < 10 {
			d.types = append(d.types, t)
		}
		out = append(out, t)
		if sumLen(out) > maxUndecoratedLen {
			return nil, false
		}
	}
}

func (d *undecorator) skipType() bool {
	_, ok := d.typ()
	return ok
}

var primitiveTypes = map[byte]string{
	'C': "signed char", 'D': "char", 'E': "unsigned char", 'F': "short", 'G': "unsigned short",
	'H': "int", 'I': "unsigned int", 'J': "long", 'K': "unsigned long", 'M': "float",
	'N': "double", 'O': "long double", 'X': "void", 'Z': "...",
}

var extendedTypes = map[byte]string{
	'D': "__int8", 'E': "unsigned __int8", 'F': "__int16", 'G': "unsigned __int16", 'H': "__int32",
	'I': "unsigned __int32", 'J': "__int64", 'K': "unsigned __int64", 'L': "__int128",
	'M': "unsigned __int128", 'N': "bool", 'Q': "char8_t", 'S': "char16_t", 'U': "char32_t", 'W': "wchar_t",
}

// typ parses one type and renders it the way undname does, minus the
// class/struct/union/enum keywords.
func (d *undecorator) typ() (string, bool) {
	d.depth++
	defer func() { d.depth-- }()
	if d.depth > maxUndecorateDepth {
		return "", false
	}
	c, ok := d.next()
	if !ok {
		return "", false
	}
	if t, ok := primitiveTypes[c]; ok {
		return t, true
	}
	switch c {
	case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		i := int(c - '0')
		if i >= len(d.types) {
			return "", false
		}
		return d.types[i], true
	case '_':
		c2, ok := d.next()
		if !ok {
			return "", false
		}
		t, ok := extendedTypes[c2]
		return t, ok
	case 'T', 'U', 'V':
		return d.className()
	case 'W':
		if _, ok := d.next(); !ok { // underlying type, '4' = int
			return "", false
		}
		return d.className()
	case 'P', 'Q', 'R', 'S':
		return d.pointer("*", c)
	case 'A', 'B':
		return d.pointer("&", c)
	case 'Y':
		return d.array()
	case '?':
		if c := d.peek(); c == '<' || c >= '0' && c <= '9' {
			// A named placeholder type, ?<auto>@@, or a back-reference to
			// one, ?6@.
			n, _, ok := d.unqualifiedName(true)
			return n, ok && d.eat("@")
		}
		cv, ok := d.next()
		if !ok {
			return "", false
		}
		t, ok := d.typ()
		return withCV(t, cv), ok
	case '$':
		switch {
		case d.eat("$Q"), d.eat("$R"):
			return d.pointer("&&", 'A')
		case d.eat("$C"):
			cv, ok := d.next()
			if !ok {
				return "", false
			}
			t, ok := d.typ()
			return withCV(t, cv), ok
		case d.eat("$A6"), d.eat("$A8@@6"):
			return d.functionType("")
		case d.eat("$T"):
			return "std::nullptr_t", true
		case d.eat("$B"):
			if !d.eat("Y") {
				return "", false
			}
			return d.array()
		case d.eat("$Y"):
			return d.className()
		}
	}
	return "", false
}

func (d *undecorator) className() (string, bool) {
	first, conv, ok := d.unqualifiedName(true)
	if !ok || conv {
		return "", false
	}
	scopes, ok := d.scopes()
	if !ok {
		return "", false
	}
	var b strings.Builder
	for i := len(scopes) - 1; i >= 0; i-- {
		b.WriteString(scopes[i])
		b.WriteString("::")
	}
	b.WriteString(first)
	if b.Len() > maxUndecoratedLen {
		return "", false
	}
	return b.String(), true
}

// pointer parses pointer/reference modifiers and the pointee. self is the
// pointer letter already consumed (P, Q, R, S for pointers whose own cv is
// none, const, volatile, const volatile; A, B for references).
func (d *undecorator) pointer(sym string, self byte) (string, bool) {
	for d.eat("E") || d.eat("I") || d.eat("F") {
	}
	if d.eat("6") { // pointer to function
		return d.functionType("(__cdecl " + sym + ")")
	}
	if d.eat("8") { // pointer to member function
		class, ok := d.className()
		if !ok || !d.thisQualifiers() {
			return "", false
		}
		return d.functionType("(__cdecl " + class + "::" + sym + ")")
	}
	cv, ok := d.next()
	if !ok {
		return "", false
	}
	var memberOf string
	if cv >= 'Q' && cv <= 'T' { // pointer to data member
		if memberOf, ok = d.className(); !ok {
			return "", false
		}
		memberOf += "::"
	}
	t, ok := d.typ()
	if !ok {
		return "", false
	}
	if i := strings.IndexByte(t, '['); i >= 0 && strings.HasSuffix(t, "]") { // pointer to array: int (*)[3]
		return strings.TrimSpace(t[:i]) + " (" + memberOf + sym + ")" + t[i:], true
	}
	out := withCV(t, cv) + " " + memberOf + sym
	switch self {
	case 'Q':
		out += " const"
	case 'R':
		out += " volatile"
	case 'S':
		out += " const volatile"
	}
	return out, true
}

// withCV appends the const/volatile qualifiers encoded by cv.
func withCV(t string, cv byte) string {
	switch cv {
	case 'B', 'J', 'N', 'R':
		return t + " const"
	case 'C', 'G', 'K', 'O', 'S':
		return t + " volatile"
	case 'D', 'H', 'L', 'P', 'T':
		return t + " const volatile"
	}
	return t
}

func (d *undecorator) functionType(declarator string) (string, bool) {
	if _, ok := d.next(); !ok { // calling convention
		return "", false
	}
	ret, ok := d.returnType()
	if !ok {
		return "", false
	}
	ps, ok := d.params()
	if !ok {
		return "", false
	}
	d.eat("_E")
	if !d.eat("Z") || len(ret)+len(declarator)+sumLen(ps) > maxUndecoratedLen {
		return "", false
	}
	return strings.TrimSpace(ret+" "+declarator) + "(" + strings.Join(ps, ",") + ")", true
}

func (d *undecorator) array() (string, bool) {
	n, ok := d.number()
	if !ok || n < 0 || n > 16 {
		return "", false
	}
	var dims strings.Builder
	for range n {
		v, ok := d.number()
		if !ok {
			return "", false
		}
		dims.WriteString("[" + strconv.FormatInt(v, 10) + "]")
	}
	t, ok := d.typ()
	if !ok {
		return "", false
	}
	return t + " " + dims.String(), true
}

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
// output (realdata/callstack/resolved_*.txt). Names that are not decorated, or
// use encodings this decoder does not know, are returned unchanged.
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
	first, conversion, ok := d.unqualifiedName()
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
		return d.templateName()
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
		// Local scope: ?<number>?<nested symbol> → `nested'::`number'.
		d.pos++
		if d.peek() == '?' {
			d.pos++
			nested, ok := d.nestedSymbol()
			if !ok {
				return "", false
			}
			return "`" + nested + "'", true
		}
		n, ok := d.number()
		if !ok {
			return "", false
		}
		if d.peek() == '?' {
			d.pos++
			nested, ok := d.nestedSymbol()
			if !ok {
				return "", false
			}
			return "`" + nested + "'::`" + strconv.FormatInt(n, 10) + "'", true
		}
		return "`" + strconv.FormatInt(n, 10) + "'", true
	default:
		return d.simpleName()
	}
}

// nestedSymbol parses a complete decorated symbol embedded in a scope and
// returns its name; its type encoding is consumed and dropped.
func (d *undecorator) nestedSymbol() (string, bool) {
	saveNames := d.names
	name, ok := d.symbolWithEncoding()
	d.names = saveNames
	return name, ok
}

// symbolWithEncoding parses name + type encoding (used for nested symbols
// and template arguments that reference symbols).
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

// templateName parses ?$name@args@ and remembers the whole instance as one
// name. Argument back-references start afresh inside the template.
func (d *undecorator) templateName() (string, bool) {
	d.pos += 2
	outerNames, outerTypes := d.names, d.types
	d.names, d.types = nil, nil
	name, conv, ok := d.unqualifiedName()
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
	d.remember(inst)
	return inst, true
}

// unqualifiedName parses the first name component. Special names (operators,
// constructors) are introduced by '?' (the symbol's own leading '?' has
// already been consumed, so "??0" arrives here as "?0").
func (d *undecorator) unqualifiedName() (name string, conversion, ok bool) {
	if strings.HasPrefix(d.s[d.pos:], "?$") {
		n, ok := d.templateName()
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
		if d.eat("?") {
			n, ok := d.symbolWithEncoding()
			return "&" + n, false, ok
		}
		n, ok := d.number()
		return strconv.FormatInt(n, 10), false, ok
	case d.eat("$E?"):
		n, ok := d.symbolWithEncoding()
		return n, false, ok
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
	case d.eat("$F"), d.eat("$G"), d.eat("$H"), d.eat("$I"), d.eat("$J"):
		return "", false, false
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
	first, conv, ok := d.unqualifiedName()
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

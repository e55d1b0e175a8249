package xe

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"time"
	"unsafe"
)

// The fast paths of the decoder: the exact shapes SQL Server writes, read
// with as few passes over the bytes as possible. Each either decodes its
// element completely — with the same result the generic code would give —
// or touches nothing and reports false, and the generic code (decoder.go)
// then reads the element from the same position: whitespace inside tags,
// other attribute orders, entities, comments, split CDATA, anything unusual
// goes that way, and so does a buffer that ends too early (the generic code
// asks for more input). TestFastPathMatchesGeneric and FuzzFastPath hold
// the two to the same results.

const (
	litDataEnd     = "</data>"
	litActionEnd   = "</action>"
	litValueStart  = "<value>"
	litValueEnd    = "</value>"
	litTextStart   = "<text>"
	litTextEnd     = "</text>"
	litTypeStart   = "<type "
	litNameAttr    = `name="`
	litNameAttrSp  = ` name="`
	litTagEndValue = "><value>"
	litPkgAttrSp   = ` package="`
	litTSAttrSp    = ` timestamp="`
	litPkgAttr     = `package="`
	litTSAttr      = `timestamp="`
)

// fastPathsOff turns the fast paths off (tests compare the two ways).
var fastPathsOff = false

// quickField reads <data>/<action> (p just after the tag name) when it has
// the shape
//
//	name="N"[ package="P"]>[<type name="T" package="TP"/>]<value>V</value>[<text>X</text>]</data>
//
// with V and X plain text without '&' or '\r', or one CDATA section
// without '\r'.
func (d *Decoder) quickField(b []byte, p int, action bool) (int, bool) {
	name, q, ok := quickFieldName(b, p)
	if !ok {
		return 0, false
	}
	interned := d.internBytes(name)
	if end, ok := d.numberField(b, q, action, interned); ok {
		return end, true
	}
	sh := fieldShape{recent: &d.recentPkgs}
	if !sh.scan(b, q, action) {
		return 0, false
	}
	d.addQuickField(b, &sh, interned, action)
	return sh.end, true
}

// numberField is the commonest field of all, read and added to the event
// at once: from just after its name attribute,
//
//	[ package="P"]><value>DIGITS</value></data>
//
// with one to 19 digits (a number classify reads as KindUint) and, for an
// action, P one of the last packages seen (recentPackage).
func (d *Decoder) numberField(b []byte, q int, action bool, name string) (int, bool) {
	pkg := ""
	if action {
		var ok bool
		if !hasLit(b, q, kPkgAttrSp, litPkgAttrSp) {
			return 0, false
		}
		if pkg, q, ok = d.recentPackage(b, q+len(litPkgAttrSp)); !ok {
			return 0, false
		}
	}
	if !has8(b, q, kTagEndValue) {
		return 0, false
	}
	s := q + len(litTagEndValue)
	u, i := readDigits(b, s)
	if i == s || i-s > 19 || !has8(b, i, kValueEnd) {
		return 0, false
	}
	e := i + len(litValueEnd)
	switch {
	case !action && has8(b, e, kDataEnd):
		e += len(litDataEnd)
	case action && has8(b, e, kActionEnd8) && e+8 < len(b) && b[e+8] == '>':
		e += len(litActionEnd)
	default:
		return 0, false
	}
	f := d.appendField(action)
	f.Name, f.Package = name, pkg
	f.Value.Raw, f.Value.Kind, f.Value.bits = unsafe.String(&b[s], i-s), KindUint, u
	return e, true
}

// recentPackage reports whether b[q:] (just after a field's package=")
// holds one of the last two field packages read and its closing quote, and
// returns it and the position after the quote. Actions alternate between
// a few packages (package0, sqlserver, sqlos), so two cover most.
func (d *Decoder) recentPackage(b []byte, q int) (string, int, bool) {
	return recentIn(&d.recentPkgs, b, q)
}

func recentIn(recent *[2]quotedName, b []byte, q int) (string, int, bool) {
	w8 := word8(b, q)
	for i := range recent {
		if n := &recent[i]; n.s != "" && n.at(w8, b, q) {
			return n.s, q + len(n.s) + 1, true
		}
	}
	return "", 0, false
}

// rememberPackage makes pkg the first package recentPackage tries.
func (d *Decoder) rememberPackage(pkg string) {
	if pkg != "" {
		d.recentPkgs[1], d.recentPkgs[0] = d.recentPkgs[0], newQuotedName(pkg)
	}
}

// quotedName is a name as an attribute value holds it, with its closing
// quote, packed so that at compares it with the input 8 bytes at a time.
type quotedName struct {
	s          string
	head, tail packed // the first 8 and the next 8 bytes of s + `"`
	long       bool   // s + `"` is longer than 8 bytes
}

func newQuotedName(s string) quotedName {
	q := s + `"`
	n := quotedName{s: s, head: pack8(q[:min(len(q), 8)])}
	if len(q) > 8 {
		n.long, n.tail = true, pack8(q[8:min(len(q), 16)])
	}
	return n
}

// at reports whether b[q:] starts with the name and its closing quote;
// w8 is word8(b, q), read once for all the names tried there. Most calls
// are for another name and end at the first compare.
func (n *quotedName) at(w8 word, b []byte, q int) bool {
	return (!w8.ok || w8.v&n.head.mask == n.head.v) && n.atRest(b, q)
}

// word is 8 bytes of the input, little-endian, when ok (there were 8).
type word struct {
	v  uint64
	ok bool
}

func word8(b []byte, q int) word {
	if q < 0 || len(b)-q < 8 {
		return word{}
	}
	return word{binary.LittleEndian.Uint64(b[q : q+8]), true}
}

// atRest is at once the first 8 bytes match (or fewer are left); kept out
// of line so that at stays small.
//
//go:noinline
func (n *quotedName) atRest(b []byte, q int) bool {
	if q >= 0 && len(b)-q >= 16 {
		switch {
		case !n.long:
			return true
		case binary.LittleEndian.Uint64(b[q+8:])&n.tail.mask != n.tail.v:
			return false
		case len(n.s) < 16:
			return true
		}
	}
	e := q + len(n.s)
	return q >= 0 && e < len(b) && b[e] == '"' && string(b[q:e]) == n.s
}

// quickFieldName reads the ` name="N"` that opens a <data>/<action> in the
// fast path's shape, and returns N and the position after it.
func quickFieldName(b []byte, p int) ([]byte, int, bool) {
	if fastPathsOff || !has8(b, p, kNameAttr) {
		return nil, 0, false
	}
	name, q, ok := quickAttrValue(b, p+len(litNameAttrSp))
	if !ok || len(name) == 0 {
		return nil, 0, false
	}
	return name, q, true
}

// fieldShape is where the parts of a <data>/<action> in the fast path's
// shape are, from just after its name attribute to the end of the element.
type fieldShape struct {
	// recent are the packages to look for first (recentPackage); known
	// is the one found, pkg holds the package otherwise.
	recent           *[2]quotedName
	known            string
	pkg, typ, typPkg []byte
	val, text        span
	hint             contentHint
	num              digits
	hasText          bool
	end              int // after the end tag
}

// scan finds the parts of the rest of a field from q (just after its name
// attribute), touching nothing; false when the field has another shape.
func (sh *fieldShape) scan(b []byte, q int, action bool) bool {
	var ok bool
	if q < len(b) && b[q] == ' ' {
		if !has8(b, q+1, kPkgAttr) || q+1+len(litPkgAttr) >= len(b) || b[q+len(litPkgAttr)] != '"' {
			return false
		}
		q += 1 + len(litPkgAttr)
		if known, next, found := recentIn(sh.recent, b, q); found {
			sh.known, q = known, next
		} else if sh.pkg, q, ok = quickAttrValue(b, q); !ok {
			return false
		}
	}
	if q >= len(b) || b[q] != '>' {
		return false
	}
	q++
	if has8(b, q, kTypeStart) {
		if sh.typ, q, ok = quickAttr(b, q+len(litTypeStart), litNameAttr); !ok || q >= len(b) || b[q] != ' ' {
			return false
		}
		if sh.typPkg, q, ok = quickAttr(b, q+1, litPkgAttr); !ok || match(b, q, "/>") != 1 {
			return false
		}
		q += 2
	}
	if !has8(b, q, kValueStart) {
		return false
	}
	if sh.val, sh.hint, sh.num, q, ok = quickContent(b, q+len(litValueStart), kValueEnd, len(litValueEnd)); !ok {
		return false
	}
	if has8(b, q, kTextStart) {
		if sh.text, _, _, q, ok = quickContent(b, q+len(litTextStart), kTextEnd, len(litTextEnd)); !ok {
			return false
		}
		sh.hasText = true
	}
	if !action {
		sh.end = q + len(litDataEnd)
		return has8(b, q, kDataEnd)
	}
	sh.end = q + len(litActionEnd)
	return has8(b, q, kActionEnd8) && q+8 < len(b) && b[q+8] == '>'
}

// addQuickField adds a field scanned by fieldShape.scan to the event.
func (d *Decoder) addQuickField(b []byte, sh *fieldShape, name string, action bool) {
	var pkg, typ, typPkg string
	switch {
	case sh.known != "":
		pkg = sh.known
	case sh.pkg != nil:
		pkg = d.internBytes(sh.pkg)
		d.rememberPackage(pkg)
	}
	if sh.typ != nil {
		typ, typPkg = d.internBytes(sh.typ), d.internBytes(sh.typPkg)
	}
	var kind Kind
	var bits uint64
	if sh.hint == hintText && sh.typ == nil && sh.num.ok {
		kind, bits = KindUint, sh.num.v // what classify says of a short run of digits
	} else {
		kind, bits = kindOf(typ, d.bytesOf(b, sh.val), sh.hint)
	}
	f := d.appendField(action)
	f.set(name, pkg, typ, typPkg, kind, bits, sh.hasText)
	f.Value.Raw = d.view(b, sh.val)
	if sh.hasText {
		f.Value.Text = d.view(b, sh.text)
	}
}

// digits is a value's text read as a decimal number on the way: ok when it
// is 1 to 19 digits (so it fits in a uint64) and nothing else.
type digits struct {
	v  uint64
	ok bool
}

// quickContent reads the content of <value> or <text> (p just after its
// start tag) up to and including the end tag (end: its packed bytes, n its
// length), when it is plain text without '&' or '\r' or one CDATA section
// without '\r'.
func quickContent(b []byte, p int, end packed, n int) (span, contentHint, digits, int, bool) {
	if p < len(b) && b[p] == '<' {
		if has8(b, p, kCDATA8) && p+8 < len(b) && b[p+8] == '[' {
			s := p + len(litCDATA)
			j := bytes.Index(b[s:], bLitCDATAEnd)
			if j < 0 || bytes.IndexByte(b[s:s+j], '\r') >= 0 {
				return span{}, 0, digits{}, 0, false
			}
			q := s + j + len(litCDATAEnd)
			if !has8(b, q, end) {
				return span{}, 0, digits{}, 0, false
			}
			var sp span
			if j > 0 {
				sp = span{off: s, n: j, inBuf: true}
			}
			return sp, hintCDATA, digits{}, q + n, true
		}
		if !has8(b, p, end) {
			return span{}, 0, digits{}, 0, false
		}
		return span{}, hintEmpty, digits{}, p + n, true
	}
	u, i := readDigits(b, p)
	num := digits{u, i > p && i-p <= 19}
	for i < len(b) && !textSpecial[b[i]] {
		i++
		num.ok = false
	}
	if !has8(b, i, end) || i == p {
		return span{}, 0, digits{}, 0, false
	}
	return span{off: p, n: i - p, inBuf: true}, hintText, num, i + n, true
}

// readDigits reads the decimal digits from b[p:] as a number (wrapping
// past 20 digits: callers accept at most 19) and returns it with the
// position after them.
func readDigits(b []byte, p int) (uint64, int) {
	var u uint64
	for p < len(b) {
		c := b[p] - '0'
		if c > 9 {
			break
		}
		u = u*10 + uint64(c)
		p++
	}
	return u, p
}

// has8 reports whether b[p:] starts with the literal packed in lit (see
// pack8), reading 8 bytes at once: false when fewer than 8 bytes are left,
// so the generic code then decides.
func has8(b []byte, p int, lit packed) bool {
	if p < 0 || len(b)-p < 8 {
		return false
	}
	return binary.LittleEndian.Uint64(b[p:p+8])&lit.mask == lit.v
}

// hasLit reports whether b[p:] starts with lit, longer than 8 bytes, whose
// first 8 are packed in first.
func hasLit(b []byte, p int, first packed, lit string) bool {
	return has8(b, p, first) && len(b)-p >= len(lit) && string(b[p+8:p+len(lit)]) == lit[8:]
}

// packed is up to 8 bytes of a literal, little-endian, with the mask of
// the bytes that count.
type packed struct{ v, mask uint64 }

func pack8(lit string) packed {
	if len(lit) > 8 {
		panic("pack8: literal longer than 8 bytes")
	}
	var buf [8]byte
	copy(buf[:], lit)
	mask := ^uint64(0)
	if len(lit) < 8 {
		mask = 1<<(8*len(lit)) - 1
	}
	return packed{binary.LittleEndian.Uint64(buf[:]), mask}
}

var (
	kNameAttr    = pack8(litNameAttrSp)
	kPkgAttr     = pack8(litPkgAttr[:8])
	kTypeStart   = pack8(litTypeStart)
	kValueStart  = pack8(litValueStart)
	kValueEnd    = pack8(litValueEnd)
	kTextStart   = pack8(litTextStart)
	kTextEnd     = pack8(litTextEnd)
	kDataEnd     = pack8(litDataEnd)
	kActionEnd8  = pack8(litActionEnd[:8])
	kCDATA8      = pack8(litCDATA[:8])
	kPkgAttrSp   = pack8(litPkgAttrSp[:8])
	kTSAttrSp    = pack8(litTSAttrSp[:8])
	kDataTag     = pack8(litData + litNameAttrSp[:2])
	kActionTag   = pack8(litAction + " ")
	kEventEnd    = pack8(litEventClose + ">")
	kEventTag    = pack8(litEventOpen + litNameAttrSp[:2])
	kTagEndValue = pack8(litTagEndValue)
)

// quickAttrValue reads an attribute value from s (just after its opening
// '"') up to the closing '"', when it holds nothing to decode. It looks at
// eight bytes at a time.
func quickAttrValue(b []byte, s int) ([]byte, int, bool) {
	i := s
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i : i+8])
		if m := byteIn(w, '"') | byteIn(w, '&') | byteIn(w, '<') | byteIn(w, '\''); m != 0 {
			i += bits.TrailingZeros64(m) / 8
			break
		}
	}
	for i < len(b) && !attrStop[b[i]] {
		i++
	}
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	return b[s:i], i + 1, true
}

// byteIn has the high bit of the first byte of w (little-endian) that is
// c set, and perhaps bits of later bytes: its lowest set bit is exact.
func byteIn(w uint64, c byte) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	x := w ^ (ones * uint64(c))
	return (x - ones) &^ x & highs
}

// quickEventTag reads the attributes of an <event> start tag (p just after
// "<event") when they are exactly ` name="N" package="P" timestamp="T">`
// with nothing to decode, and returns the position after the '>'.
func (d *Decoder) quickEventTag(b []byte, p int) (int, bool) {
	if fastPathsOff || !has8(b, p, kNameAttr) {
		return 0, false
	}
	q := p + len(litNameAttrSp)
	name, q, ok := d.recentEventName(b, q)
	if !ok || !hasLit(b, q, kPkgAttrSp, litPkgAttrSp) {
		return 0, false
	}
	q += len(litPkgAttrSp)
	pkg := d.lastEventPkg
	if e := q + len(pkg); pkg != "" && e < len(b) && b[e] == '"' && string(b[q:e]) == pkg {
		q = e + 1
	} else {
		var raw []byte
		if raw, q, ok = quickAttrValue(b, q); !ok {
			return 0, false
		}
		pkg = d.internBytes(raw)
		d.lastEventPkg = pkg
	}
	if !hasLit(b, q, kTSAttrSp, litTSAttrSp) {
		return 0, false
	}
	ts, q, ok := quickAttrValue(b, q+len(litTSAttrSp))
	if !ok || q >= len(b) || b[q] != '>' {
		return 0, false
	}
	d.evName, d.evPkg = name, pkg
	d.ts = span{off: offsetIn(b, ts), n: len(ts), inBuf: true}
	d.haveTS = true
	return q + 1, true
}

// recentEventName reads an event's name attribute value at q (after its
// opening quote) when it has nothing to decode, trying the last few event
// names first (found without looking for where the name ends), and returns
// it interned with the position after its closing quote.
func (d *Decoder) recentEventName(b []byte, q int) (string, int, bool) {
	for _, n := range d.recentEvents {
		if e := q + len(n); n != "" && e < len(b) && b[e] == '"' && string(b[q:e]) == n {
			return n, e + 1, true
		}
	}
	raw, next, ok := quickAttrValue(b, q)
	if !ok || len(raw) == 0 {
		return "", 0, false
	}
	name := d.internBytes(raw)
	copy(d.recentEvents[1:], d.recentEvents[:])
	d.recentEvents[0] = name
	return name, next, true
}

// timestamp parses an event's timestamp attribute as parseTimestamp does.
// Events come in bursts within one second, so the date and time of day (the
// first 19 bytes) are parsed once per second and only the fraction and zone
// per event.
func (d *Decoder) timestamp(raw []byte) (time.Time, error) {
	b := trimSpaceBytes(raw)
	if fastPathsOff {
		return parseTimestamp(b)
	}
	if len(b) < 19 || !d.tsPrefixSet || string(b[:19]) != string(d.tsPrefix[:]) {
		base, err := parseTimestampPrefix(b)
		if err != nil {
			return time.Time{}, err
		}
		copy(d.tsPrefix[:], b[:19])
		d.tsBase, d.tsPrefixSet = base, true
	}
	return finishTimestamp(d.tsBase, b[19:])
}

package xe

// Byte-level scanning primitives of the event XML vocabulary. They work on a
// buffer window and report errNeedMore when the window ends too early, so
// the decoder can read more input and run the unit again.

import (
	"bytes"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

var (
	bLitEventOpen  = []byte(litEventOpen)
	bLitCommentEnd = []byte(litCommentEnd)
	bLitPIEnd      = []byte(litPIEnd)
	bLitCDATAEnd   = []byte(litCDATAEnd)
)

const (
	litEventOpen  = "<event"
	litRingOpen   = "<RingBufferTarget"
	litRingClose  = "</RingBufferTarget"
	litComment    = "<!--"
	litCommentEnd = "-->"
	litPI         = "<?"
	litPIEnd      = "?>"
	litCDATA      = "<![CDATA["
	litCDATAEnd   = "]]>"
	litBOM        = "\xEF\xBB\xBF"
	litData       = "<data"
	litAction     = "<action"
	litEventClose = "</event"
	litType       = "<type"
	litValue      = "<value"
	litText       = "<text"
	litDOCTYPE    = "<!"
)

// match reports whether b[p:] starts with lit: 1 yes, 0 no, -1 cannot tell
// yet (b ends first).
func match(b []byte, p int, lit string) int {
	n := len(b) - p
	if n >= len(lit) {
		// A byte loop beats a memequal call for these short literals.
		c := b[p : p+len(lit)]
		for i := 0; i < len(lit); i++ {
			if c[i] != lit[i] {
				return 0
			}
		}
		return 1
	}
	if string(b[p:]) == lit[:n] {
		return -1
	}
	return 0
}

// matchTag is match for a tag name: lit must be followed by a name end.
func matchTag(b []byte, p int, lit string) int {
	m := match(b, p, lit)
	if m != 1 {
		return m
	}
	q := p + len(lit)
	if q >= len(b) {
		return -1
	}
	if isNameEnd(b[q]) {
		return 1
	}
	return 0
}

// textSpecial marks the bytes that end or complicate character data.
var textSpecial = [256]bool{'<': true, '&': true, '\r': true}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

func isNameEnd(c byte) bool { return isSpace(c) || c == '>' || c == '/' }

// offsetIn returns the offset of sub (a subslice of b) within b.
func offsetIn(b, sub []byte) int {
	if len(sub) == 0 {
		return 0
	}
	return int(uintptr(unsafe.Pointer(unsafe.SliceData(sub))) - uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}

// tagAt returns the start of the tag at b[p] ("<name" or "</name"), for
// error messages; ok is false when the buffer ends first.
func tagAt(b []byte, p int) (string, bool) {
	q := p + 1
	if q < len(b) && b[q] == '/' {
		q++
	}
	for q < len(b) && !isNameEnd(b[q]) && q-p < 64 {
		q++
	}
	if q >= len(b) {
		return string(b[p:]), false
	}
	return string(b[p:q]), true
}

func skipSpace(b []byte, p int) int {
	for p < len(b) && isSpace(b[p]) {
		p++
	}
	return p
}

// attrStop marks the bytes that end the fast scan of an attribute value.
var attrStop = [256]bool{'"': true, '<': true, '&': true, '\'': true}

// quickAttr reads the attribute at b[p] when it is exactly lit (e.g.
// `name="`) followed by a value with nothing to decode. ok is false when
// the generic path must decide (other attribute, entities, end of buffer).
func quickAttr(b []byte, p int, lit string) (val []byte, next int, ok bool) {
	if len(b)-p <= len(lit) || string(b[p:p+len(lit)]) != lit {
		return nil, 0, false
	}
	s := p + len(lit)
	i := s
	for i < len(b) && !attrStop[b[i]] {
		i++
	}
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	return b[s:i], i + 1, true
}

// attr reads one attribute at b[p] (not whitespace, not '>' or '/'). It
// returns the name, the raw (undecoded) value, and the position after it.
func attr(b []byte, p int) (name, val []byte, next int, err error) {
	s := p
	for p < len(b) && !isSpace(b[p]) && b[p] != '=' && b[p] != '>' && b[p] != '/' {
		p++
	}
	if p >= len(b) {
		return nil, nil, 0, errNeedMore
	}
	name = b[s:p]
	if len(name) == 0 {
		return nil, nil, 0, synErr(s, "malformed attribute")
	}
	p = skipSpace(b, p)
	if p >= len(b) {
		return nil, nil, 0, errNeedMore
	}
	if b[p] != '=' {
		return nil, nil, 0, synErr(p, "attribute %q has no value", string(name))
	}
	p = skipSpace(b, p+1)
	if p >= len(b) {
		return nil, nil, 0, errNeedMore
	}
	q := b[p]
	if q != '"' && q != '\'' {
		return nil, nil, 0, synErr(p, "attribute %q value is not quoted", string(name))
	}
	i := bytes.IndexByte(b[p+1:], q)
	if i < 0 {
		return nil, nil, 0, errNeedMore
	}
	val = b[p+1 : p+1+i]
	if bytes.IndexByte(val, '<') >= 0 {
		return nil, nil, 0, synErr(p, "'<' in the value of attribute %q", string(name))
	}
	return name, val, p + 1 + i + 1, nil
}

// scanXML finds the end of well-formed element content starting at p that
// is closed by </elem>. It returns where the content ends (the '<' of the
// end tag) and the position after the end tag.
func scanXML(b []byte, p int, elem string) (int, int, error) {
	var stack [64][]byte
	var deep int // depth beyond the stack's capacity is still counted
	depth := 0
	for {
		i := bytes.IndexByte(b[p:], '<')
		if i < 0 {
			return 0, 0, errNeedMore
		}
		p += i
		if p+1 >= len(b) {
			return 0, 0, errNeedMore
		}
		switch b[p+1] {
		case '!':
			if m := match(b, p, litCDATA); m != 0 {
				if m < 0 {
					return 0, 0, errNeedMore
				}
				j := bytes.Index(b[p+len(litCDATA):], bLitCDATAEnd)
				if j < 0 {
					return 0, 0, errNeedMore
				}
				p += len(litCDATA) + j + len(litCDATAEnd)
				continue
			}
			if m := match(b, p, litComment); m != 0 {
				if m < 0 {
					return 0, 0, errNeedMore
				}
				j := bytes.Index(b[p+4:], bLitCommentEnd)
				if j < 0 {
					return 0, 0, errNeedMore
				}
				p += 4 + j + 3
				continue
			}
			return 0, 0, synErr(p, "unexpected markup in XML value")
		case '?':
			j := bytes.Index(b[p+2:], bLitPIEnd)
			if j < 0 {
				return 0, 0, errNeedMore
			}
			p += 2 + j + 2
			continue
		case '/':
			s := p + 2
			q := s
			for q < len(b) && !isNameEnd(b[q]) {
				q++
			}
			r := skipSpace(b, q)
			if r >= len(b) {
				return 0, 0, errNeedMore
			}
			if b[r] != '>' || q == s {
				return 0, 0, synErr(p, "malformed end tag in XML value")
			}
			name := b[s:q]
			if depth == 0 {
				if string(name) != elem {
					return 0, 0, synErr(p, "end tag </%s> does not match <%s>", name, elem)
				}
				return p, r + 1, nil
			}
			depth--
			if depth < len(stack) && string(stack[depth]) != string(name) {
				return 0, 0, synErr(p, "end tag </%s> does not match <%s>", name, stack[depth])
			}
			p = r + 1
		default:
			s := p + 1
			q := s
			for q < len(b) && !isNameEnd(b[q]) {
				q++
			}
			if q >= len(b) {
				return 0, 0, errNeedMore
			}
			if q == s {
				return 0, 0, synErr(p, "malformed start tag in XML value")
			}
			name := b[s:q]
			// Walk the attributes, respecting quotes ('>' may appear inside).
			r := q
			for {
				r = skipSpace(b, r)
				if r >= len(b) {
					return 0, 0, errNeedMore
				}
				c := b[r]
				if c == '>' {
					if depth < len(stack) {
						stack[depth] = name
					} else {
						deep++
					}
					depth++
					p = r + 1
					break
				}
				if c == '/' {
					if r+1 >= len(b) {
						return 0, 0, errNeedMore
					}
					if b[r+1] != '>' {
						return 0, 0, synErr(r, "malformed empty-element tag in XML value")
					}
					p = r + 2
					break
				}
				_, _, next, err := attr(b, r)
				if err != nil {
					return 0, 0, err
				}
				r = next
			}
		}
	}
}

func appendNormalizedNewlines(dst, seg []byte) []byte {
	for {
		i := bytes.IndexByte(seg, '\r')
		if i < 0 {
			return append(dst, seg...)
		}
		dst = append(dst, seg[:i]...)
		dst = append(dst, '\n')
		seg = seg[i+1:]
		if len(seg) > 0 && seg[0] == '\n' {
			seg = seg[1:]
		}
	}
}

// appendDecoded appends seg with the five predefined entities and numeric
// character references decoded (and line ends normalised).
func appendDecoded(dst, seg []byte, segPos int) ([]byte, error) {
	for len(seg) > 0 {
		i := bytes.IndexByte(seg, '&')
		if i < 0 {
			return appendNormalizedNewlines(dst, seg), nil
		}
		dst = appendNormalizedNewlines(dst, seg[:i])
		seg = seg[i:]
		segPos += i
		pos := segPos // the '&' of the reference: where an error points
		j := bytes.IndexByte(seg, ';')
		if j < 0 || j > 12 {
			return dst, synErr(pos, "'&' not followed by an entity reference")
		}
		ent := seg[1:j]
		switch string(ent) {
		case "lt":
			dst = append(dst, '<')
		case "gt":
			dst = append(dst, '>')
		case "amp":
			dst = append(dst, '&')
		case "quot":
			dst = append(dst, '"')
		case "apos":
			dst = append(dst, '\'')
		default:
			if len(ent) < 2 || ent[0] != '#' {
				return dst, synErr(pos, "unknown entity &%s;", ent)
			}
			var r uint64
			var err error
			if ent[1] == 'x' {
				if len(ent) < 3 || !isHexRun(ent[2:]) {
					return dst, synErr(pos, "malformed character reference &%s;", ent)
				}
				r, err = strconv.ParseUint(string(ent[2:]), 16, 32)
			} else {
				r, err = strconv.ParseUint(string(ent[1:]), 10, 32)
			}
			if err != nil || r == 0 || r > utf8.MaxRune || (r >= 0xD800 && r <= 0xDFFF) {
				return dst, synErr(pos, "invalid character reference &%s;", ent)
			}
			dst = utf8.AppendRune(dst, rune(r))
		}
		seg = seg[j+1:]
		segPos += j + 1
	}
	return dst, nil
}

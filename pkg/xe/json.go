package xe

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends the event as one JSON object:
//
//	{"name":…,"package":…,"timestamp":…,"data":{…},"actions":{…}}
//
// timestamp is RFC 3339 with every digit the source gave. A map field
// (one with <text>) becomes {"value": key, "text": name}; any other value is
// a JSON scalar: integers are written exactly (no float rounding), booleans as
// true/false, everything else (hex, GUIDs, binary, strings, verbatim XML)
// as a string. Fields keep document order.
func (ev *Event) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"name":`...)
	dst = appendJSONString(dst, ev.Name)
	dst = append(dst, `,"package":`...)
	dst = appendJSONString(dst, ev.Package)
	dst = append(dst, `,"timestamp":`...)
	dst = appendJSONString(dst, ev.Timestamp.RFC3339())
	dst = append(dst, `,"data":`...)
	dst = appendJSONFields(dst, ev.Fields)
	dst = append(dst, `,"actions":`...)
	dst = appendJSONFields(dst, ev.Actions)
	return append(dst, '}')
}

func appendJSONFields(dst []byte, fields []Field) []byte {
	dst = append(dst, '{')
	for i := range fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, fields[i].Name)
		dst = append(dst, ':')
		v := &fields[i].Value
		if v.HasText {
			dst = append(dst, `{"value":`...)
			dst = appendJSONScalar(dst, v)
			dst = append(dst, `,"text":`...)
			dst = appendJSONString(dst, v.Text)
			dst = append(dst, '}')
		} else {
			dst = appendJSONScalar(dst, v)
		}
	}
	return append(dst, '}')
}

func appendJSONScalar(dst []byte, v *Value) []byte {
	switch v.Kind {
	case KindUint:
		return strconv.AppendUint(dst, v.bits, 10)
	case KindInt:
		return strconv.AppendInt(dst, int64(v.bits), 10)
	case KindBool:
		return strconv.AppendBool(dst, v.bits != 0)
	case KindFloat:
		f := math.Float64frombits(v.bits)
		if !math.IsInf(f, 0) && !math.IsNaN(f) {
			return strconv.AppendFloat(dst, f, 'g', -1, 64)
		}
	}
	return appendJSONString(dst, v.Raw)
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s as a JSON string; invalid UTF-8 becomes U+FFFD,
// and U+2028/U+2029 are escaped so the output is also valid JavaScript.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

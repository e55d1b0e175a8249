package xe

import (
	"bytes"
	"encoding/hex"
	"math"
	"strconv"
	"strings"
)

// Kind says how a value's text was read. It is decided once, while decoding:
// from the <type> element when the XML has one (ring_buffer form), otherwise
// from the text itself (event_file form, where strings always arrive as
// CDATA and numbers never do).
type Kind uint8

const (
	// KindEmpty is <value></value>, <value/> or a field with no <value> at all.
	KindEmpty Kind = iota
	// KindString is text: CDATA, unicode/ansi strings, callstack text, and
	// anything that is not recognisably a number, boolean or GUID.
	KindString
	// KindUint is a non-negative decimal integer that fits in 64 bits.
	KindUint
	// KindInt is a negative decimal integer that fits in 64 bits.
	KindInt
	// KindFloat is a decimal number with a fraction or exponent.
	KindFloat
	// KindBool is "true" or "false".
	KindBool
	// KindHex is "0x" followed by 1 to 16 hex digits: pointers, flag-map
	// values, hex-printed integers. Uint returns the number.
	KindHex
	// KindBinary is hex-printed binary data: "0x" with over 16 digits, or an
	// even run of hex digits with at least one letter and no "0x" (plan_handle,
	// binary_data). Bytes decodes it.
	KindBinary
	// KindGUID is a dashed 8-4-4-4-12 GUID.
	KindGUID
	// KindXML is a <value> holding child elements (the showplan of
	// query_post_execution_showplan, blocked_process_report's report). Raw is
	// the inner XML verbatim: entities are not decoded, nothing is
	// reformatted; only whitespace around the elements is trimmed.
	KindXML
)

var kindNames = [...]string{"empty", "string", "uint", "int", "float", "bool", "hex", "binary", "guid", "xml"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one <data> or <action> value as the XML printed it.
//
// Raw always holds the text exactly (entities and CDATA decoded, line ends
// normalised as XML requires; verbatim inner XML for KindXML), so nothing is
// lost when Kind guesses wrong. The typed accessors parse nothing again: the
// number was parsed once while decoding.
type Value struct {
	Raw string
	// Text is the <text> element of a map field (e.g. "PAGEIOLATCH_SH" for
	// wait_type key 66). HasText tells an absent <text> from an empty one.
	Text string
	// Type and TypePackage come from the <type name package> element, which
	// only ring_buffer XML carries; both are "" in event_file XML.
	Type        string
	TypePackage string
	bits        uint64 // uint, int, float64 bits or bool, per Kind
	Kind        Kind
	HasText     bool
}

// Uint returns the value as an unsigned integer (KindUint, KindHex, or a
// non-negative KindInt).
func (v Value) Uint() (uint64, bool) {
	switch v.Kind {
	case KindUint, KindHex:
		return v.bits, true
	case KindInt:
		if int64(v.bits) >= 0 {
			return v.bits, true
		}
	}
	return 0, false
}

// Int returns the value as a signed integer when it fits.
func (v Value) Int() (int64, bool) {
	switch v.Kind {
	case KindInt:
		return int64(v.bits), true
	case KindUint, KindHex:
		if v.bits <= math.MaxInt64 {
			return int64(v.bits), true
		}
	}
	return 0, false
}

// Float returns the value as a float64 (any numeric kind).
func (v Value) Float() (float64, bool) {
	switch v.Kind {
	case KindFloat:
		return math.Float64frombits(v.bits), true
	case KindUint, KindHex:
		return float64(v.bits), true
	case KindInt:
		return float64(int64(v.bits)), true
	}
	return 0, false
}

// Bool returns the value of a KindBool.
func (v Value) Bool() (bool, bool) {
	if v.Kind != KindBool {
		return false, false
	}
	return v.bits != 0, true
}

// Bytes decodes hex text (KindHex, KindBinary, or a hex string such as the
// plan_handle action, which prints without "0x").
func (v Value) Bytes() ([]byte, bool) {
	s := strings.TrimSpace(v.Raw)
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s = s[2:]
	}
	if len(s)%2 != 0 {
		return nil, false
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, false
	}
	return b, true
}

// GUID returns the 16 bytes of a KindGUID in the order they are printed
// (not the mixed-endian in-memory order of a Windows GUID).
func (v Value) GUID() ([16]byte, bool) {
	var g [16]byte
	if v.Kind != KindGUID {
		return g, false
	}
	s := strings.TrimSpace(v.Raw)
	j := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '-' {
			continue
		}
		hi, lo := unhex(s[i]), unhex(s[i+1])
		g[j] = hi<<4 | lo
		j++
		i++
	}
	return g, true
}

// IsMap reports whether the value looks like a map field: it has a <text>,
// or its <type> is not one of package0's scalar types.
func (v Value) IsMap() bool {
	return v.HasText || (v.Type != "" && v.TypePackage != "" && v.TypePackage != "package0")
}

// String returns Raw.
func (v Value) String() string { return v.Raw }

// NewValue builds a Value from text with the kind inferred as the decoder
// infers it for event_file XML. Writers (the stand-in, tests) use it.
func NewValue(raw string) Value {
	v := Value{Raw: raw}
	v.Kind, v.bits = classify([]byte(raw), "")
	return v
}

// StringValue builds a KindString value (written as CDATA in event_file form).
func StringValue(s string) Value { return Value{Raw: s, Kind: KindString} }

// UintValue builds a KindUint value.
func UintValue(u uint64) Value {
	return Value{Raw: strconv.FormatUint(u, 10), Kind: KindUint, bits: u}
}

// IntValue builds a KindInt or KindUint value (by sign).
func IntValue(i int64) Value {
	if i >= 0 {
		return UintValue(uint64(i))
	}
	return Value{Raw: strconv.FormatInt(i, 10), Kind: KindInt, bits: uint64(i)}
}

// BoolValue builds a KindBool value.
func BoolValue(b bool) Value {
	if b {
		return Value{Raw: "true", Kind: KindBool, bits: 1}
	}
	return Value{Raw: "false", Kind: KindBool}
}

// PtrValue builds a pointer value as XE prints it: "0x" + 16 hex digits.
func PtrValue(p uint64) Value {
	const digits = "0123456789ABCDEF"
	var b [18]byte
	b[0], b[1] = '0', 'x'
	for i := 17; i >= 2; i-- {
		b[i] = digits[p&15]
		p >>= 4
	}
	v := Value{Raw: string(b[:])}
	v.Kind, v.bits = KindHex, mustHex(b[2:])
	return v
}

// MapFieldValue builds a map field value: the numeric key and its text.
func MapFieldValue(key uint64, text string) Value {
	v := UintValue(key)
	v.Text, v.HasText = text, true
	return v
}

// BinaryValue builds a KindBinary value from hex digits (no "0x"), as XE
// prints binary data such as plan_handle.
func BinaryValue(hexDigits string) Value { return Value{Raw: hexDigits, Kind: KindBinary} }

// XMLValue builds a KindXML value holding xml verbatim.
func XMLValue(xml string) Value { return Value{Raw: xml, Kind: KindXML} }

func mustHex(b []byte) uint64 {
	var u uint64
	for _, c := range b {
		u = u<<4 | uint64(unhex(c))
	}
	return u
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return 0
}

// hexVal is 0..15 for hex digits and 0xFF otherwise.
var hexVal = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xFF
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c-'a') + 10
		t[c-'a'+'A'] = byte(c-'a') + 10
	}
	return
}()

func trimSpaceBytes(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// classify infers the kind of plain (non-CDATA) text. typ is the <type>
// name when the XML has one; package0 scalar types decide the kind, anything
// else (map types, unknown types, no type) falls back to the text.
func classify(raw []byte, typ string) (Kind, uint64) {
	b := trimSpaceBytes(raw)
	switch typ {
	case "":
	case "unicode_string", "ansi_string", "callstack", "unicode_string_ptr", "ansi_string_ptr", "char", "wchar", "sos_context", "database_context", "activity_id", "activity_id_xfer":
		return KindString, 0
	case "boolean":
		if k, bits := classifyText(b); k == KindBool {
			return k, bits
		}
		return KindString, 0
	case "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "ptr":
		if k, bits := classifyText(b); k == KindUint || k == KindInt || k == KindHex {
			return k, bits
		}
		return KindString, 0
	case "float32", "float64":
		if k, bits := classifyText(b); k == KindFloat || k == KindUint || k == KindInt {
			if k != KindFloat {
				f, _ := Value{Kind: k, bits: bits}.Float()
				return KindFloat, math.Float64bits(f)
			}
			return k, bits
		}
		return KindString, 0
	case "guid":
		if isGUID(b) {
			return KindGUID, 0
		}
		return KindString, 0
	case "binary_data":
		if len(b) == 0 {
			return KindEmpty, 0
		}
		if isHexRun(b) {
			return KindBinary, 0
		}
		return KindString, 0
	case "xml":
		if len(b) == 0 {
			return KindEmpty, 0
		}
		return KindString, 0
	}
	return classifyText(b)
}

func classifyText(b []byte) (Kind, uint64) {
	if len(b) == 0 {
		return KindEmpty, 0
	}
	c := b[0]
	switch {
	case c >= '0' && c <= '9':
		if c == '0' && len(b) > 2 && (b[1] == 'x' || b[1] == 'X') {
			h := b[2:]
			if !isHexRun(h) {
				return KindString, 0
			}
			if len(h) <= 16 {
				return KindHex, mustHex(h)
			}
			return KindBinary, 0
		}
		if u, ok := parseUintBytes(b); ok {
			return KindUint, u
		}
		if len(b) == 36 && isGUID(b) {
			return KindGUID, 0
		}
		if isBinaryText(b) {
			return KindBinary, 0
		}
		// Only text with a fraction or exponent is a float: an integer too
		// big for 64 bits stays text rather than lose digits.
		if bytes.IndexAny(b, ".eE") >= 0 {
			if f, ok := parseFloatBytes(b); ok {
				return KindFloat, math.Float64bits(f)
			}
		}
		return KindString, 0
	case c == '-':
		if i, ok := parseNegIntBytes(b); ok {
			return KindInt, uint64(i)
		}
		if f, ok := parseFloatBytes(b); ok && bytes.IndexAny(b, ".eE") >= 0 {
			return KindFloat, math.Float64bits(f)
		}
		return KindString, 0
	case c == 't':
		if string(b) == "true" {
			return KindBool, 1
		}
	case c == 'f':
		if string(b) == "false" {
			return KindBool, 0
		}
	}
	if len(b) == 36 && isGUID(b) {
		return KindGUID, 0
	}
	if isBinaryText(b) {
		return KindBinary, 0
	}
	return KindString, 0
}

// isBinaryText recognises binary data printed as hex without "0x" (the
// plan_handle action [R], login's options [R]): an even number of hex
// digits, at least one of them a letter (all-digit text is read as a number;
// Value.Bytes still decodes it). Strings never look like this in event_file
// XML, where they are CDATA.
func isBinaryText(b []byte) bool {
	if len(b) < 2 || len(b)%2 != 0 {
		return false
	}
	letter := false
	for _, c := range b {
		v := hexVal[c]
		if v == 0xFF {
			return false
		}
		if v > 9 {
			letter = true
		}
	}
	return letter
}

func parseUintBytes(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		d := c - '0'
		if d > 9 {
			return 0, false
		}
		if u > (math.MaxUint64-uint64(d))/10 {
			return 0, false
		}
		u = u*10 + uint64(d)
	}
	return u, true
}

func parseNegIntBytes(b []byte) (int64, bool) {
	if len(b) < 2 || b[0] != '-' {
		return 0, false
	}
	u, ok := parseUintBytes(b[1:])
	if !ok || u > 1<<63 {
		return 0, false
	}
	return -int64(u), true
}

// parseFloatBytes accepts only plain decimal notation ([-]d+[.d+][e[+-]d+]),
// not the "inf"/"nan"/hex forms strconv also takes.
func parseFloatBytes(b []byte) (float64, bool) {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	start := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	if i == start {
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		fs := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == fs {
			return 0, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		es := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == es {
			return 0, false
		}
	}
	if i != len(b) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return 0, false
	}
	return f, true
}

func isHexRun(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if hexVal[c] == 0xFF {
			return false
		}
	}
	return true
}

func isGUID(b []byte) bool {
	if len(b) != 36 {
		return false
	}
	for i, c := range b {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if hexVal[c] == 0xFF {
				return false
			}
		}
	}
	return true
}

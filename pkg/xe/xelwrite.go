package xe

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// XELWriter encodes Events as a binary .xel stream that XELReader reads
// back into the same Events: same names, packages, field and action order,
// Raw text, Kind and map texts — except that pointers (0x + 16 hex digits)
// read back in upper case whatever case they were written in. Timestamps keep their instant to 100 ns
// (XELReader prints seven fractional digits, where event XML prints three).
//
// It exists so that a .xel file can be produced from events QueryReplay
// already has (the SQL Server stand-in serves event files as .xel bytes
// through it, and tests build files with it); it is not a replacement for
// SQL Server's own writer. The subset of the format it writes (layout in
// xel.go, docs/design/symbols-and-xel.md §10):
//
//   - one 512-byte stream header, one metadata buffer, then event buffers of
//     at most 64 KiB; the tail checksum is left zero (XELReader does not
//     check it; whether SQL Server's readers do is unknown [U]);
//   - package0 (id 0) carries the base types used; every other package
//     named by an event or action gets the next id, with its events,
//     actions and maps; no event has static or customizable attributes;
//   - each package's clock starts at the earliest event and ticks at 10 MHz;
//   - field and action types are chosen from the values seen: map fields
//     (values with Text) become a map of the package named after the field
//     (a flag map when keys print as 0x…), whole numbers uint64/int64,
//     fractions float64, booleans boolean, 0x+16-hex-digit values ptr,
//     GUIDs guid, hex binary binary_data, nested XML xml, and everything
//     else unicode_string.
//
// Because the metadata must describe every key of every map before the first
// event, Write keeps the events in memory and Close writes the stream. A
// value the chosen type cannot reproduce exactly (e.g. a field that is a
// number in one event and text in another, or a lower-case GUID) is an
// error at Close, naming the event and field: the writer never writes a
// file that would read back differently.
type XELWriter struct {
	w      io.Writer
	events []Event
	closed bool
}

// NewXELWriter returns a writer of one .xel stream to w.
func NewXELWriter(w io.Writer) *XELWriter { return &XELWriter{w: w} }

// Write queues one event (copied: the caller may reuse ev).
func (x *XELWriter) Write(ev *Event) error {
	if x.closed {
		return fmt.Errorf("xe: write to a closed XELWriter")
	}
	if ev.Name == "" || ev.Package == "" {
		return fmt.Errorf("xe: event %d has no name or package (%q.%q)", len(x.events)+1, ev.Package, ev.Name)
	}
	if ev.Timestamp.Time.IsZero() {
		return fmt.Errorf("xe: event %d (%s) has no timestamp", len(x.events)+1, ev.Name)
	}
	if y := ev.Timestamp.Time.UTC().Year(); y < 1601 || y > 30000 {
		return fmt.Errorf("xe: event %d (%s): timestamp %s is outside what a FILETIME holds", len(x.events)+1, ev.Name, ev.Timestamp.Raw)
	}
	// names and map texts are stored as NUL-terminated UTF-16: invalid
	// UTF-8 or a NUL would not read back as written
	storable := func(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }
	for _, name := range []string{ev.Name, ev.Package} {
		if !storable(name) {
			return fmt.Errorf("xe: event %d: name %q is not valid UTF-8 without NUL", len(x.events)+1, name)
		}
	}
	for _, fs := range [][]Field{ev.Fields, ev.Actions} {
		for _, f := range fs {
			if !storable(f.Name) || !storable(f.Package) || !storable(f.Value.Text) {
				return fmt.Errorf("xe: event %d (%s): field %q: a name or map text is not valid UTF-8 without NUL", len(x.events)+1, ev.Name, f.Name)
			}
		}
	}
	x.events = append(x.events, ev.Clone())
	return nil
}

// Close writes the stream. It does not close the underlying writer.
func (x *XELWriter) Close() error {
	if x.closed {
		return nil
	}
	x.closed = true
	s, err := newXELSchema(x.events)
	if err != nil {
		return err
	}
	out := make([]byte, xelStreamHeaderSize)
	binary.LittleEndian.PutUint32(out, xelMagic)
	binary.LittleEndian.PutUint16(out[4:], xelVersion)
	binary.LittleEndian.PutUint16(out[6:], xelStreamHeaderSize)
	seq := uint32(0)
	out = appendXELBuffer(out, xelBufMetadata, seq, s.metadata())
	seq++
	var data []byte
	const maxData = 64<<10 - xelBufferHeaderSize
	for i := range x.events {
		rec, err := s.record(&x.events[i])
		if err != nil {
			return fmt.Errorf("xe: event %d (%s): %w", i+1, x.events[i].Name, err)
		}
		if len(data) > 0 && len(data)+len(rec) > maxData {
			out = appendXELBuffer(out, xelBufEvent, seq, data)
			seq++
			data = data[:0]
		}
		data = append(data, rec...)
	}
	if len(data) > 0 {
		out = appendXELBuffer(out, xelBufEvent, seq, data)
	}
	if _, err := x.w.Write(out); err != nil {
		return fmt.Errorf("xe: write .xel: %w", err)
	}
	return nil
}

// fileTimeOf converts t to a FILETIME (100 ns ticks since 1601); Write
// checks the year range first. UnixNano would overflow past 2262.
func fileTimeOf(t time.Time) int64 {
	return t.Unix()*10_000_000 + int64(t.Nanosecond())/100 + fileTimeUnixEpoch
}

// appendXELBuffer frames data as one buffer, padded to 512 bytes.
func appendXELBuffer(out []byte, typ int, seq uint32, data []byte) []byte {
	n := xelBufferHeaderSize + len(data)
	padded := (n + 511) / 512 * 512
	b := make([]byte, padded)
	le := binary.LittleEndian
	le.PutUint32(b[8:], seq)
	le.PutUint16(b[12:], xelVersion)
	le.PutUint16(b[14:], uint16(typ))
	le.PutUint32(b[16:], uint32(padded))
	le.PutUint16(b[22:], xelBufferHeaderSize)
	le.PutUint32(b[24:], uint32(len(data)))
	copy(b[xelBufferHeaderSize:], data)
	return append(out, b...)
}

// Schema: what the metadata buffer declares.

type xelwType struct{ base, size int }

var xelwTypeNames = map[int]string{xelInt64: "int64", xelUint64: "uint64", xelFloat64: "float64", xelPointer: "ptr",
	xelUnicodeString: "unicode_string", xelGUID: "guid", xelBinary: "binary_data", xelBoolean: "boolean", xelXML: "xml"}

var xelwSizes = map[int]int{xelInt64: 8, xelUint64: 8, xelFloat64: 8, xelPointer: 8, xelGUID: 16, xelBoolean: 1}

// xelwSlot is how one field or action is encoded.
type xelwSlot struct {
	name   string
	base   int      // a base type, or 0 for a map
	m      *xelwMap // map fields
	offset int      // events: payload offset of the value or its descriptor
}

func (s *xelwSlot) size() int {
	if s.m != nil {
		return 4
	}
	return xelwSizes[s.base]
}

type xelwMap struct {
	idx     int
	name    string
	bitmask bool
	keys    []uint32
	texts   map[uint32]string
}

type xelwEvent struct {
	idx, pkg int
	name     string
	fields   []*xelwSlot
	fixed    int
}

type xelwAction struct {
	idx, pkg int
	name     string
	slot     *xelwSlot
}

type xelwPackage struct {
	id      int
	name    string
	start   int64 // FILETIME of the package clock's tick 0
	events  []*xelwEvent
	actions []*xelwAction
	maps    []*xelwMap
}

type xelSchema struct {
	pkgs    []*xelwPackage // index = package id; 0 is package0
	byName  map[string]*xelwPackage
	events  map[[2]string]*xelwEvent
	actions map[[2]string]*xelwAction
	types   map[int]bool
}

func (s *xelSchema) pkg(name string) *xelwPackage {
	if p, ok := s.byName[name]; ok {
		return p
	}
	p := &xelwPackage{id: len(s.pkgs), name: name, start: math.MaxInt64}
	s.pkgs = append(s.pkgs, p)
	s.byName[name] = p
	return p
}

// valueSet gathers every value of one field or action.
type valueSet struct {
	where  string
	values []*Value
}

func newXELSchema(events []Event) (*xelSchema, error) {
	s := &xelSchema{byName: map[string]*xelwPackage{}, events: map[[2]string]*xelwEvent{}, actions: map[[2]string]*xelwAction{}, types: map[int]bool{}}
	s.pkg("package0")
	fieldValues := map[*xelwEvent][]*valueSet{}
	actionValues := map[*xelwAction]*valueSet{}
	for i := range events {
		ev := &events[i]
		p := s.pkg(ev.Package)
		ft := fileTimeOf(ev.Timestamp.Time)
		p.start = min(p.start, ft)
		et := s.events[[2]string{ev.Package, ev.Name}]
		if et == nil {
			et = &xelwEvent{idx: len(p.events), pkg: p.id, name: ev.Name}
			for _, f := range ev.Fields {
				et.fields = append(et.fields, &xelwSlot{name: f.Name})
				fieldValues[et] = append(fieldValues[et], &valueSet{where: "event " + ev.Name + " field " + f.Name})
			}
			p.events = append(p.events, et)
			s.events[[2]string{ev.Package, ev.Name}] = et
		}
		if len(ev.Fields) != len(et.fields) {
			return nil, fmt.Errorf("xe: event %d (%s) has %d fields, an earlier one %d: every event of a type must carry the same fields", i+1, ev.Name, len(ev.Fields), len(et.fields))
		}
		for j, f := range ev.Fields {
			if f.Name != et.fields[j].name {
				return nil, fmt.Errorf("xe: event %d (%s) field %d is %q, an earlier one's %q", i+1, ev.Name, j+1, f.Name, et.fields[j].name)
			}
			vs := fieldValues[et][j]
			vs.values = append(vs.values, &ev.Fields[j].Value)
		}
		for j, a := range ev.Actions {
			if a.Package == "" {
				return nil, fmt.Errorf("xe: event %d (%s) action %q has no package", i+1, ev.Name, a.Name)
			}
			ap := s.pkg(a.Package)
			at := s.actions[[2]string{a.Package, a.Name}]
			if at == nil {
				at = &xelwAction{idx: len(ap.actions), pkg: ap.id, name: a.Name, slot: &xelwSlot{name: a.Name}}
				ap.actions = append(ap.actions, at)
				s.actions[[2]string{a.Package, a.Name}] = at
				actionValues[at] = &valueSet{where: "action " + a.Package + "." + a.Name}
			}
			actionValues[at].values = append(actionValues[at].values, &ev.Actions[j].Value)
		}
	}
	for _, p := range s.pkgs {
		if p.start == math.MaxInt64 {
			p.start = 0
		}
		for _, et := range p.events {
			off := 0
			for j, f := range et.fields {
				if err := s.chooseType(f, fieldValues[et][j], p); err != nil {
					return nil, err
				}
				f.offset = off
				if n := f.size(); n > 0 {
					off += n
				} else {
					off += 8 // (offset, length) descriptor
				}
			}
			et.fixed = off
		}
		for _, at := range p.actions {
			if err := s.chooseType(at.slot, actionValues[at], p); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

// chooseType picks the type that reproduces every value of vs.
func (s *xelSchema) chooseType(slot *xelwSlot, vs *valueSet, p *xelwPackage) error {
	kinds := map[Kind]bool{}
	text := false
	for _, v := range vs.values {
		kinds[v.Kind] = true
		text = text || v.HasText
	}
	if text {
		m := &xelwMap{idx: len(p.maps), name: slot.name, texts: map[uint32]string{}}
		for _, v := range vs.values {
			m.bitmask = m.bitmask || v.Kind == KindHex
		}
		for _, v := range vs.values {
			if !v.HasText {
				return fmt.Errorf("xe: %s: a map value (%q) without text among values with text", vs.where, v.Raw)
			}
			k, ok := xelwMapKey(v, m.bitmask)
			if !ok {
				return fmt.Errorf("xe: %s: map key %q cannot be written as a 32-bit key", vs.where, v.Raw)
			}
			if err := m.add(k, v.Text); err != nil {
				return fmt.Errorf("xe: %s: value %s: %w", vs.where, v.Raw, err)
			}
		}
		p.maps = append(p.maps, m)
		slot.m = m
		return nil
	}
	delete(kinds, KindEmpty)
	only := func(ks ...Kind) bool {
		for k := range kinds {
			found := false
			for _, want := range ks {
				found = found || k == want
			}
			if !found {
				return false
			}
		}
		return true
	}
	var base int
	switch {
	case len(kinds) == 0 || kinds[KindBinary] && allHexBytes(vs.values):
		// Empty values read back empty only as binary, xml or call stacks.
		// Binary text reads back with the Kind the XML gave it: a run of
		// digits is a uint or (too long) a string there and here alike.
		base = xelBinary
	case only(KindUint):
		base = xelUint64
	case only(KindUint, KindInt):
		base = xelInt64
	case only(KindUint, KindInt, KindFloat):
		base = xelFloat64
	case only(KindBool):
		base = xelBoolean
	case only(KindHex):
		base = xelPointer
	case only(KindGUID):
		base = xelGUID
	case only(KindXML):
		base = xelXML
	case only(KindString):
		base = xelUnicodeString
	default:
		var ks []string
		for k := range kinds {
			ks = append(ks, k.String())
		}
		return fmt.Errorf("xe: %s: values of kinds %s have no one .xel type", vs.where, strings.Join(ks, ", "))
	}
	slot.base = base
	s.types[base] = true
	for _, v := range vs.values {
		if _, err := encodeXELValue(slot, v); err != nil {
			return fmt.Errorf("xe: %s: %w", vs.where, err)
		}
	}
	return nil
}

// add records a key's text; a flag-map value with several bits set has
// one text per bit, lowest first, joined by ", " (as XELReader prints it).
func (m *xelwMap) add(k uint32, text string) error {
	keys, texts := []uint32{k}, []string{text}
	if m.bitmask && k&(k-1) != 0 {
		keys, texts = nil, strings.Split(text, ", ")
		for bit := 0; bit < 32; bit++ {
			if k&(1<<bit) != 0 {
				keys = append(keys, 1<<bit)
			}
		}
		if len(keys) != len(texts) || slices.Contains(texts, "") {
			return fmt.Errorf("flag-map text %q does not name each of its %d flags", text, len(keys))
		}
	}
	for i, key := range keys {
		if old, seen := m.texts[key]; seen && old != texts[i] {
			return fmt.Errorf("map key %d has two texts (%q, %q)", key, old, texts[i])
		} else if !seen {
			m.keys = append(m.keys, key)
			m.texts[key] = texts[i]
		}
	}
	return nil
}

// allHexBytes reports whether every non-empty value prints as binary_data
// does: an even number of upper-case hex digits.
func allHexBytes(vs []*Value) bool {
	for _, v := range vs {
		if v.Kind == KindEmpty {
			continue
		}
		if len(v.Raw)%2 != 0 || strings.ToUpper(v.Raw) != v.Raw {
			return false
		}
		if _, err := hex.DecodeString(v.Raw); err != nil {
			return false
		}
	}
	return true
}

func xelwMapKey(v *Value, bitmask bool) (uint32, bool) {
	var u uint64
	var err error
	if bitmask {
		r := v.Raw
		if !strings.HasPrefix(r, "0x") || len(r) != 10 {
			return 0, false
		}
		u, err = strconv.ParseUint(r[2:], 16, 32)
		return uint32(u), err == nil && strings.ToLower(r[2:]) == r[2:] // XELReader prints flag maps in lower case
	}
	u, err = strconv.ParseUint(v.Raw, 10, 32)
	return uint32(u), err == nil && strconv.FormatUint(u, 10) == v.Raw
}

// encodeXELValue returns a value's bytes, checking that XELReader prints
// them back as v.Raw with v.Kind.
func encodeXELValue(s *xelwSlot, v *Value) ([]byte, error) {
	le := binary.LittleEndian
	if s.m != nil {
		k, _ := xelwMapKey(v, s.m.bitmask)
		return le.AppendUint32(nil, k), nil
	}
	bad := func(why string) ([]byte, error) {
		return nil, fmt.Errorf("value %q (%s) cannot be written exactly as %s: %s", v.Raw, v.Kind, xelwTypeNames[s.base], why)
	}
	if v.Kind == KindEmpty {
		switch s.base {
		case xelBinary, xelXML:
			return nil, nil
		}
		return bad("only binary and XML fields can be empty")
	}
	switch s.base {
	case xelUint64:
		u, err := strconv.ParseUint(v.Raw, 10, 64)
		if err != nil || strconv.FormatUint(u, 10) != v.Raw {
			return bad("not a canonical unsigned integer")
		}
		return le.AppendUint64(nil, u), nil
	case xelInt64:
		i, err := strconv.ParseInt(v.Raw, 10, 64)
		if err != nil || strconv.FormatInt(i, 10) != v.Raw {
			return bad("not a canonical 64-bit integer")
		}
		return le.AppendUint64(nil, uint64(i)), nil
	case xelFloat64:
		f, err := strconv.ParseFloat(v.Raw, 64)
		if err != nil || strconv.FormatFloat(f, 'g', -1, 64) != v.Raw {
			return bad("not printed in Go's shortest form")
		}
		return le.AppendUint64(nil, math.Float64bits(f)), nil
	case xelBoolean:
		switch v.Raw {
		case "true":
			return []byte{1}, nil
		case "false":
			return []byte{0}, nil
		}
		return bad("not true or false")
	case xelPointer:
		// XELReader prints upper case [R: call stack addresses]; event XML
		// from the stand-in (and possibly SQL Server [U]) prints lower case.
		// The number is the same, so either case is written: the text read
		// back may differ from v.Raw in letter case only.
		if len(v.Raw) != 18 || !strings.HasPrefix(v.Raw, "0x") {
			return bad("pointers print as 0x and 16 hex digits")
		}
		u, err := strconv.ParseUint(v.Raw[2:], 16, 64)
		if err != nil {
			return bad(err.Error())
		}
		return le.AppendUint64(nil, u), nil
	case xelGUID:
		h := strings.ReplaceAll(v.Raw, "-", "")
		b, err := hex.DecodeString(h)
		if err != nil || len(b) != 16 || strings.ToUpper(v.Raw) != v.Raw {
			return bad("GUIDs print in upper case")
		}
		// the first three groups are little-endian in the 16 bytes
		out := []byte{b[3], b[2], b[1], b[0], b[5], b[4], b[7], b[6]}
		return append(out, b[8:]...), nil
	case xelBinary:
		b, err := hex.DecodeString(v.Raw)
		if err != nil || len(b) == 0 || strings.ToUpper(v.Raw) != v.Raw {
			return bad("binary data prints as upper-case hex digits without 0x")
		}
		return b, nil
	case xelUnicodeString, xelXML:
		if strings.HasSuffix(v.Raw, "\x00") {
			return bad("a trailing NUL is not kept")
		}
		u := utf16.Encode([]rune(v.Raw))
		out := make([]byte, 0, 2*len(u))
		for _, c := range u {
			out = le.AppendUint16(out, c)
		}
		if string(utf16.Decode(u)) != v.Raw {
			return bad("not valid UTF-8")
		}
		return out, nil
	}
	return bad("unsupported type")
}

// record encodes one event record with its actions.
func (s *xelSchema) record(ev *Event) ([]byte, error) {
	le := binary.LittleEndian
	et := s.events[[2]string{ev.Package, ev.Name}]
	p := s.pkgs[et.pkg]
	payload := make([]byte, et.fixed)
	for j, f := range et.fields {
		b, err := encodeXELValue(f, &ev.Fields[j].Value)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.name, err)
		}
		if f.size() > 0 {
			copy(payload[f.offset:], b)
			continue
		}
		le.PutUint32(payload[f.offset:], uint32(len(payload)))
		le.PutUint32(payload[f.offset+4:], uint32(len(b)))
		payload = append(payload, b...)
	}
	ft := fileTimeOf(ev.Timestamp.Time)
	flags := uint32(xelVersion)
	if len(ev.Actions) > 0 {
		flags |= 1 << 31
	}
	out := le.AppendUint32(nil, xelwRID(xelObjEvent, et.idx, et.pkg))
	out = le.AppendUint32(out, flags)
	out = le.AppendUint32(out, 0)
	out = le.AppendUint64(out, uint64(ft-p.start))
	out = le.AppendUint32(out, uint32(len(payload)))
	out = append(out, payload...)
	if len(ev.Actions) > 0 {
		for j := range ev.Actions {
			a := &ev.Actions[j]
			at := s.actions[[2]string{a.Package, a.Name}]
			b, err := encodeXELValue(at.slot, &a.Value)
			if err != nil {
				return nil, fmt.Errorf("action %s: %w", a.Name, err)
			}
			out = le.AppendUint32(out, xelwRID(xelObjAction, at.idx, at.pkg))
			out = le.AppendUint32(out, uint32(len(b)))
			out = append(out, b...)
		}
		out = le.AppendUint32(out, xelwRID(xelObjType, 0, 0)) // ends the list
		out = le.AppendUint32(out, 0)
	}
	return out, nil
}

func xelwRID(kind, object, pkg int) uint32 {
	return uint32(kind)<<28 | uint32(object)<<10 | uint32(pkg)
}

// metadata encodes every package (package0 first, with the types).
func (s *xelSchema) metadata() []byte {
	var out []byte
	for _, p := range s.pkgs {
		out = append(out, s.packageBytes(p)...)
	}
	return out
}

type xelwBuf struct{ b []byte }

func (w *xelwBuf) u8(v int)     { w.b = append(w.b, byte(v)) }
func (w *xelwBuf) u16(v int)    { w.b = binary.LittleEndian.AppendUint16(w.b, uint16(v)) }
func (w *xelwBuf) u32(v uint32) { w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *xelwBuf) u64(v uint64) { w.b = binary.LittleEndian.AppendUint64(w.b, v) }
func (w *xelwBuf) zero(n int)   { w.b = append(w.b, make([]byte, n)...) }
func (w *xelwBuf) wstr(s string) {
	for _, u := range utf16.Encode([]rune(s)) {
		w.u16(int(u))
	}
	w.u16(0)
}
func (w *xelwBuf) object(rid uint32, name string, specific int) {
	w.u16(xelVersion)
	w.u8(0)
	w.u8(specific)
	w.u32(rid)
	w.wstr(name)
	w.wstr("")
}

func (s *xelSchema) packageBytes(p *xelwPackage) []byte {
	w := &xelwBuf{}
	w.u16(xelVersion)
	w.u32(0) // size, patched below
	w.zero(16)
	w.u16(1) // metadata generation
	w.u16(1) // ticks config version
	w.zero(6)
	w.u64(uint64(p.start))
	w.u64(10_000_000)
	w.object(xelwRID(xelObjPackage, 0, p.id), p.name, 1)
	w.zero(32) // package and module GUIDs
	w.u16(1)
	var types []int
	if p.id == 0 {
		for base := range 32 {
			if s.types[base] {
				types = append(types, base)
			}
		}
	}
	nTypes := 0
	if len(types) > 0 {
		nTypes = types[len(types)-1] + 1 // a type's index is its base type
	}
	colls := [][2]int{{xelObjEvent, len(p.events)}, {xelObjAction, len(p.actions)}, {xelObjMap, len(p.maps)}, {xelObjType, nTypes}}
	w.u32(uint32(len(colls)))
	for _, c := range colls {
		w.u32(uint32(c[0]))
		w.u16(1)
		w.u16(64)
		w.u32(uint32(c[1]))
	}
	w.u32(uint32(len(p.events)))
	for _, et := range p.events {
		w.object(xelwRID(xelObjEvent, et.idx, p.id), et.name, 0)
		w.u16(0) // static attributes
		w.u16(0) // customizable attributes
		w.u16(len(et.fields))
		w.u16(len(et.fields))
		for _, f := range et.fields {
			w.u32(s.typeRID(f))
			w.wstr(f.name)
			w.u16(f.offset)
			w.u16(0)
			w.wstr("")
		}
	}
	w.u32(uint32(len(p.actions)))
	for _, at := range p.actions {
		w.object(xelwRID(xelObjAction, at.idx, p.id), at.name, 0)
		w.u32(s.typeRID(at.slot))
		w.zero(8)
	}
	w.u32(uint32(len(p.maps)))
	for _, m := range p.maps {
		spec := 0
		if m.bitmask {
			spec = 1
		}
		w.object(xelwRID(xelObjMap, m.idx, p.id), m.name, spec)
		w.u8(4)
		w.u16(len(m.keys))
		for _, k := range m.keys {
			w.u32(k)
			w.wstr(m.texts[k])
		}
	}
	w.u32(uint32(len(types)))
	for _, base := range types {
		w.object(xelwRID(xelObjType, base, 0), xelwTypeNames[base], 0)
		w.u8(xelwSizes[base])
	}
	binary.LittleEndian.PutUint32(w.b[2:], uint32(len(w.b)))
	return w.b
}

func (s *xelSchema) typeRID(f *xelwSlot) uint32 {
	if f.m != nil {
		for _, p := range s.pkgs {
			for _, m := range p.maps {
				if m == f.m {
					return xelwRID(xelObjMap, m.idx, p.id)
				}
			}
		}
	}
	return xelwRID(xelObjType, f.base, 0)
}

// EncodeXMLAsXEL decodes event XML (event_file rows, as
// sys.fn_xe_file_target_read_file returns them, one <event> per string) and
// writes it as one .xel stream: the form the SQL Server stand-in's
// Options.XELEncoder takes.
func EncodeXMLAsXEL(eventXML []string, w io.Writer) error {
	xw := NewXELWriter(w)
	// one decoder over all events: a decoder's buffers are sized for big
	// events, too costly to allocate per event
	d := NewDecoder(strings.NewReader(strings.Join(eventXML, "\n")))
	for n := 1; ; n++ {
		ev, err := d.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("xe: event XML %d: %w", n, err)
		}
		if err := xw.Write(&ev); err != nil {
			return err
		}
	}
	return xw.Close()
}

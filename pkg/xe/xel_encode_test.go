package xe_test

import (
	"encoding/binary"
	"unicode/utf16"
)

// A minimal .xel writer for tests: it lays out the stream header, metadata
// and event buffers the way the reader expects them (the layout of the real
// SQL Server 2017 file in testdata/xel), so corner cases the real file does
// not contain (every base type, bitmask maps, 4-byte pointers, odd sizes)
// can be decoded.

func xelRID(kind, object, pkg int) uint32 {
	return uint32(kind)<<28 | uint32(object)<<10 | uint32(pkg)
}

type xelW struct{ b []byte }

func (w *xelW) u8(v int)     { w.b = append(w.b, byte(v)) }
func (w *xelW) u16(v int)    { w.b = binary.LittleEndian.AppendUint16(w.b, uint16(v)) }
func (w *xelW) u32(v uint32) { w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *xelW) u64(v uint64) { w.b = binary.LittleEndian.AppendUint64(w.b, v) }
func (w *xelW) zero(n int)   { w.b = append(w.b, make([]byte, n)...) }
func (w *xelW) wstr(s string) {
	for _, u := range utf16.Encode([]rune(s)) {
		w.u16(int(u))
	}
	w.u16(0)
}

func (w *xelW) objHeader(rid uint32, name string, specific int) {
	w.u16(10)
	w.u8(0)
	w.u8(specific)
	w.u32(rid)
	w.wstr(name)
	w.wstr("description of " + name)
}

type xelEncType struct {
	name string
	base int // also the object index
	size int
}

type xelEncMap struct {
	id      int
	name    string
	size    int
	bitmask bool
	keys    []uint32
	texts   []string
}

type xelEncField struct {
	name   string
	typ    uint32 // RID of a type or map
	offset int
}

type xelEncEvent struct {
	id     int
	name   string
	fields []xelEncField
}

type xelEncAction struct {
	id   int
	name string
	typ  uint32
}

type xelEncPackage struct {
	id            int
	name          string
	startFileTime int64
	frequency     uint64
	events        []xelEncEvent
	actions       []xelEncAction
	maps          []xelEncMap
	types         []xelEncType
}

// bytes encodes the package as a metadata buffer's data.
func (p *xelEncPackage) bytes() []byte {
	w := &xelW{}
	w.u16(10)
	w.u32(0) // size, patched below
	w.zero(16)
	w.u16(1)
	w.u16(1)
	w.zero(6)
	w.u64(uint64(p.startFileTime))
	w.u64(p.frequency)
	w.objHeader(xelRID(8, 0, p.id), p.name, 1)
	w.zero(32)
	w.u16(1)
	counts := map[int]int{0: 0, 1: 0, 3: 0, 6: 0}
	for _, e := range p.events {
		counts[0] = max(counts[0], e.id+1)
	}
	for _, a := range p.actions {
		counts[1] = max(counts[1], a.id+1)
	}
	for _, m := range p.maps {
		counts[3] = max(counts[3], m.id+1)
	}
	for _, t := range p.types {
		counts[6] = max(counts[6], t.base+1)
	}
	// A target collection (kind 2) is described but never carried.
	kinds := []int{0, 1, 2, 3, 6}
	w.u32(uint32(len(kinds)))
	for _, k := range kinds {
		w.u32(uint32(k))
		w.u16(1)
		w.u16(64)
		if k == 2 {
			w.u32(3)
		} else {
			w.u32(uint32(counts[k]))
		}
	}
	w.u32(uint32(len(p.events)))
	for _, e := range p.events {
		w.objHeader(xelRID(0, e.id, p.id), e.name, 0)
		w.u16(2) // statics: a GUID and a number
		w.u16(1) // one customizable attribute
		w.u16(len(e.fields))
		w.u16(len(e.fields))
		w.u32(xelRID(6, 16, 0))
		w.wstr("UUID")
		w.zero(16)
		w.wstr("event GUID")
		w.u32(xelRID(6, 8, 0))
		w.wstr("VERSION")
		w.u64(1)
		w.wstr("event version")
		w.u32(xelRID(6, 26, 0))
		w.wstr("collect_something")
		w.u64(1)
		w.u64(1)
		w.u32(0)
		w.u32(0)
		w.wstr("customizable")
		for _, f := range e.fields {
			w.u32(f.typ)
			w.wstr(f.name)
			w.u16(f.offset)
			w.u16(0)
			w.wstr("field " + f.name)
		}
	}
	w.u32(uint32(len(p.actions)))
	for _, a := range p.actions {
		w.objHeader(xelRID(1, a.id, p.id), a.name, 0)
		w.u32(a.typ)
		w.u32(0)
		w.u32(0)
	}
	w.u32(uint32(len(p.maps)))
	for _, m := range p.maps {
		spec := 0
		if m.bitmask {
			spec = 1
		}
		w.objHeader(xelRID(3, m.id, p.id), m.name, spec)
		w.u8(m.size)
		w.u16(len(m.keys))
		for i, k := range m.keys {
			w.u32(k)
			w.wstr(m.texts[i])
		}
	}
	w.u32(uint32(len(p.types)))
	for _, t := range p.types {
		w.objHeader(xelRID(6, t.base, p.id), t.name, 0)
		w.u8(t.size)
	}
	binary.LittleEndian.PutUint32(w.b[2:], uint32(len(w.b)))
	return w.b
}

// xelStreamHeader is a 512-byte stream header (magic, version 10, the rest
// zero).
func xelStreamHeader() []byte {
	h := make([]byte, 512)
	binary.LittleEndian.PutUint32(h, 0xEFAB375A)
	binary.LittleEndian.PutUint16(h[4:], 10)
	binary.LittleEndian.PutUint16(h[6:], 512)
	return h
}

// xelBuffer frames data as one buffer of the given type, data at offset
// dataOff (≥ 32), padded to a multiple of 512.
func xelBuffer(typ int, seq uint32, dataOff int, data []byte) []byte {
	n := dataOff + len(data)
	padded := (n + 511) / 512 * 512
	b := make([]byte, padded)
	binary.LittleEndian.PutUint32(b[4:], 0)
	binary.LittleEndian.PutUint32(b[8:], seq)
	binary.LittleEndian.PutUint16(b[12:], 10)
	binary.LittleEndian.PutUint16(b[14:], uint16(typ))
	binary.LittleEndian.PutUint32(b[16:], uint32(padded))
	binary.LittleEndian.PutUint16(b[22:], uint16(dataOff))
	binary.LittleEndian.PutUint32(b[24:], uint32(len(data)))
	copy(b[dataOff:], data)
	return b
}

type xelEncActionValue struct {
	rid  uint32
	data []byte
}

// xelRecord encodes one event record: header, payload, actions and the
// 8-byte entry that ends them.
func xelRecord(rid uint32, ticks uint64, payload []byte, actions []xelEncActionValue) []byte {
	w := &xelW{}
	w.u32(rid)
	flags := uint32(10)
	if len(actions) > 0 {
		flags |= 1 << 31
	}
	w.u32(flags)
	w.u32(0)
	w.u64(ticks)
	w.u32(uint32(len(payload)))
	w.b = append(w.b, payload...)
	if len(actions) > 0 {
		for _, a := range actions {
			w.u32(a.rid)
			w.u32(uint32(len(a.data)))
			w.b = append(w.b, a.data...)
		}
		w.u32(xelRID(6, 0, 0))
		w.u32(0)
	}
	return w.b
}

// xelPayload builds an event payload: fixed values at their offsets, then
// variable values after fixedSize with (offset, length) descriptors in
// their slots.
type xelPayload struct {
	b []byte
}

func newXELPayload(fixedSize int) *xelPayload { return &xelPayload{b: make([]byte, fixedSize)} }

func (p *xelPayload) fixed(off int, v []byte) { copy(p.b[off:], v) }

func (p *xelPayload) variable(off int, v []byte) {
	binary.LittleEndian.PutUint32(p.b[off:], uint32(len(p.b)))
	binary.LittleEndian.PutUint32(p.b[off+4:], uint32(len(v)))
	p.b = append(p.b, v...)
}

func xelLE(n int, v uint64) []byte {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, v)
	return b[:n]
}

func xelUTF16(s string) []byte {
	w := &xelW{}
	for _, u := range utf16.Encode([]rune(s)) {
		w.u16(int(u))
	}
	return w.b
}

// xelPackage0Types are package0's types: object index = base type.
func xelPackage0Types(pointerSize int) []xelEncType {
	return []xelEncType{
		{"int8", 1, 1}, {"int16", 2, 2}, {"int32", 3, 4}, {"int64", 4, 8},
		{"uint8", 5, 1}, {"uint16", 6, 2}, {"uint32", 7, 4}, {"uint64", 8, 8},
		{"float32", 9, 4}, {"float64", 10, 8}, {"cpu_cycle", 11, 8}, {"filetime", 12, 8},
		{"ptr", 13, pointerSize}, {"ansi_string", 19, 0}, {"unicode_string", 20, 0},
		{"guid", 21, 16}, {"binary_data", 22, 0}, {"callstack", 23, 0},
		{"activity_id", 24, 20}, {"activity_id_xfer", 25, 20}, {"boolean", 26, 1}, {"xml", 27, 0},
	}
}

package xe

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf16"
)

// This file reads the metadata buffers of a binary .xel stream: the
// packages with their events (fields and offsets), actions, maps and types.
// There is no public specification; the layout comes from the project's
// notes (docs/design/symbols-and-xel.md §10, [verified] against two real files) and
// from the facts an MIT-licensed Microsoft TypeScript decoder documents
// (xelFormat.ts / xelMetadata.ts). Every number below was checked against
// testdata/xel/xe_wait_completed_0_132353446563350000.xel.

// Object kinds: the top 4 bits of a RID, and the index of a package's
// collection of that kind [verified].
const (
	xelObjEvent   = 0
	xelObjAction  = 1
	xelObjMap     = 3
	xelObjType    = 6
	xelObjPackage = 8
)

// Base types of XE values [verified for 1–27 by the TypeScript decoder's
// table; the real file uses 7, 8, 13, 22, 23].
const (
	xelInt8          = 1
	xelInt16         = 2
	xelInt32         = 3
	xelInt64         = 4
	xelUint8         = 5
	xelUint16        = 6
	xelUint32        = 7
	xelUint64        = 8
	xelFloat32       = 9
	xelFloat64       = 10
	xelCPUCycle      = 11
	xelFileTime      = 12
	xelPointer       = 13
	xelAnsiString    = 19
	xelUnicodeString = 20
	xelGUID          = 21
	xelBinary        = 22
	xelCallstack     = 23
	xelActivityID    = 24
	xelActivityXfer  = 25
	xelBoolean       = 26
	xelXML           = 27
)

// xelRID is a packed object reference: package in the low 10 bits, object
// index in the next 18, kind in the top 4. For a type, the object index is
// also its base type.
type xelRID uint32

func (r xelRID) pkg() int    { return int(r & 0x3FF) }
func (r xelRID) object() int { return int(r>>10) & 0x3FFFF }
func (r xelRID) kind() int   { return int(r >> 28) }

func (r xelRID) String() string {
	return fmt.Sprintf("kind %d object %d package %d", r.kind(), r.object(), r.pkg())
}

type xelPackage struct {
	name string
	// Ticks config: an event's 64-bit tick count becomes a FILETIME as
	// startFileTime + ticks×10⁷/frequency (frequency 0: ticks are already
	// 100 ns units) [verified: frequency 10,000,000 in the real file].
	startFileTime int64
	frequency     uint64
	// Objects by index. Maps, not slices: a corrupt count or index must not
	// cost memory the input does not pay for.
	events  map[int]*xelEventType
	actions map[int]*xelAction
	maps    map[int]*xelMap
	types   map[int]*xelType
	// counts are the declared collection sizes, which bound the indexes.
	counts map[int]int
}

type xelEventType struct {
	name   string
	pkg    *xelPackage
	fields []xelFieldDef
	// plan is fields with their types resolved, built on first use and
	// valid while planGen is the metadata's generation.
	plan    []xelSlot
	planGen int
}

type xelFieldDef struct {
	name   string
	typ    xelRID
	offset int
}

// xelSlot is a field or action value ready to decode: everything looked up.
type xelSlot struct {
	name    string
	pkgName string // action package ("" for data fields)
	offset  int    // data fields: offset in the payload
	base    int    // base type
	size    int    // fixed size in bytes; 0 = variable (offset/length descriptor)
	m       *xelMap
	typName string // type or map name, for Value.Type when types are asked for
	typPkg  string
}

type xelAction struct {
	name    string
	typ     xelRID
	pkg     *xelPackage
	slot    *xelSlot // resolved on first use, valid for slotGen
	slotGen int
}

type xelMap struct {
	name    string
	pkgName string
	size    int
	bitmask bool
	keys    []uint32
	texts   []string
	dense   []string // texts by key when the keys are small; nil otherwise
	has     []bool
	byKey   map[uint32]string
}

func (m *xelMap) text(key uint64) (string, bool) {
	if m.dense != nil {
		if key < uint64(len(m.dense)) && m.has[key] {
			return m.dense[key], true
		}
		return "", false
	}
	s, ok := m.byKey[uint32(key)]
	return s, ok && key <= 0xFFFFFFFF
}

func (m *xelMap) index() {
	var maxKey uint32
	for _, k := range m.keys {
		maxKey = max(maxKey, k)
	}
	if int(maxKey) < 4*len(m.keys)+256 {
		m.dense = make([]string, int(maxKey)+1)
		m.has = make([]bool, int(maxKey)+1)
		for i, k := range m.keys {
			m.dense[k], m.has[k] = m.texts[i], true
		}
		return
	}
	m.byKey = make(map[uint32]string, len(m.keys))
	for i, k := range m.keys {
		m.byKey[k] = m.texts[i]
	}
}

type xelType struct {
	name    string
	pkgName string
	size    int
}

// xelMeta is everything the metadata buffers said so far. Streams may repeat
// metadata; a later package replaces objects of the same index.
type xelMeta struct {
	packages    []*xelPackage // by package id (10 bits)
	pointerSize int
	gen         int // counts metadata buffers; resolved plans are per generation
}

// xelCursor reads little-endian values from one buffer with bounds checks;
// the first failure sticks, and names the file offset.
type xelCursor struct {
	b    []byte
	p    int
	base int64 // file offset of b[0]
	err  error
	u16s []uint16 // scratch for strings
}

func (c *xelCursor) fail(format string, args ...any) {
	if c.err == nil {
		c.err = &XELError{Offset: c.base + int64(c.p), What: fmt.Sprintf(format, args...)}
	}
}

func (c *xelCursor) need(n int, what string) bool {
	if c.err != nil {
		return false
	}
	if n < 0 || c.p+n > len(c.b) {
		c.fail("%s runs past the end of its buffer (%d bytes needed, %d left)", what, n, len(c.b)-c.p)
		return false
	}
	return true
}

func (c *xelCursor) u8(what string) int {
	if !c.need(1, what) {
		return 0
	}
	c.p++
	return int(c.b[c.p-1])
}

func (c *xelCursor) u16(what string) int {
	if !c.need(2, what) {
		return 0
	}
	c.p += 2
	return int(binary.LittleEndian.Uint16(c.b[c.p-2:]))
}

func (c *xelCursor) u32(what string) uint32 {
	if !c.need(4, what) {
		return 0
	}
	c.p += 4
	return binary.LittleEndian.Uint32(c.b[c.p-4:])
}

func (c *xelCursor) u64(what string) uint64 {
	if !c.need(8, what) {
		return 0
	}
	c.p += 8
	return binary.LittleEndian.Uint64(c.b[c.p-8:])
}

func (c *xelCursor) skip(n int, what string) {
	if c.need(n, what) {
		c.p += n
	}
}

// wstring reads a NUL-terminated UTF-16LE string (metadata names and
// descriptions [verified]).
func (c *xelCursor) wstring(what string) string {
	if c.err != nil {
		return ""
	}
	c.u16s = c.u16s[:0]
	for {
		if c.p+2 > len(c.b) {
			c.fail("%s: string has no terminating NUL before the end of its buffer", what)
			return ""
		}
		u := binary.LittleEndian.Uint16(c.b[c.p:])
		c.p += 2
		if u == 0 {
			break
		}
		c.u16s = append(c.u16s, u)
	}
	return string(utf16.Decode(c.u16s))
}

// objectHeader is what every metadata object starts with: u16 version, u8
// generic and u8 specific capabilities, the RID, name and description.
func (c *xelCursor) objectHeader(what string) (rid xelRID, name string, specific int) {
	c.u16(what + " version")
	c.u8(what + " capabilities")
	specific = c.u8(what + " capabilities")
	rid = xelRID(c.u32(what + " RID"))
	name = c.wstring(what + " name")
	c.wstring(what + " description")
	return rid, name, specific
}

// Upper bounds that only a corrupt buffer exceeds. (Counts do not size any
// allocation: objects are kept in maps, so memory follows the input.)
const (
	xelMaxCollections = 1000
	xelMaxObjects     = 1 << 18 // the RID's object index has 18 bits
)

// readMetadata merges one metadata buffer's packages. data is the buffer's
// data area; base is its file offset.
func (m *xelMeta) readMetadata(data []byte, base int64) error {
	if m.packages == nil {
		m.packages = make([]*xelPackage, 1<<10)
	}
	for p := 0; p < len(data); {
		c := &xelCursor{b: data, p: p, base: base}
		pkg, id, size := c.readPackage()
		if c.err != nil {
			return c.err
		}
		if size <= 0 || p+size > len(data) {
			return &XELError{Offset: base + int64(p), What: fmt.Sprintf("metadata package size %d does not fit its buffer (%d bytes left)", size, len(data)-p)}
		}
		if used := c.p - p; used > size {
			return &XELError{Offset: base + int64(p), What: fmt.Sprintf("metadata package size %d is smaller than its %d bytes of contents", size, used)}
		}
		if old := m.packages[id]; old != nil {
			mergeXELPackage(old, pkg)
		} else {
			m.packages[id] = pkg
		}
		p += size
	}
	m.gen++
	// The pointer size is package0's pointer type's size [verified: 8].
	if p0 := m.packages[0]; p0 != nil && p0.types[xelPointer] != nil {
		sz := p0.types[xelPointer].size
		if sz != 4 && sz != 8 {
			return &XELError{Offset: base, What: fmt.Sprintf("pointer size %d (want 4 or 8): the metadata is corrupt", sz)}
		}
		m.pointerSize = sz
	}
	return nil
}

func mergeXELPackage(into, from *xelPackage) {
	into.name, into.startFileTime, into.frequency = from.name, from.startFileTime, from.frequency
	mergeXELObjects(into.events, from.events)
	mergeXELObjects(into.actions, from.actions)
	mergeXELObjects(into.maps, from.maps)
	mergeXELObjects(into.types, from.types)
	for k, n := range from.counts {
		into.counts[k] = max(into.counts[k], n)
	}
	for _, ev := range into.events {
		ev.pkg = into
	}
	for _, a := range into.actions {
		a.pkg = into
	}
}

func mergeXELObjects[T any](into, from map[int]*T) {
	for i, o := range from {
		into[i] = o
	}
}

// readPackage reads one package: its header (version, size, signature,
// generation, ticks config), the package object, its collection counts,
// then its events, actions, maps and types in that order [verified].
func (c *xelCursor) readPackage() (pkg *xelPackage, id, size int) {
	c.u16("metadata version")
	size = int(c.u32("metadata package size"))
	c.skip(16, "metadata signature")
	c.u16("metadata generation")
	c.u16("ticks config version")
	c.skip(6, "metadata padding")
	pkg = &xelPackage{}
	pkg.startFileTime = int64(c.u64("ticks start time"))
	pkg.frequency = c.u64("ticks frequency")
	ridAt := c.p + 4
	rid, name, _ := c.objectHeader("package")
	if c.err == nil && rid.kind() != xelObjPackage {
		c.p = ridAt
		c.fail("package object has RID %v, not a package", rid)
	}
	pkg.name = name
	id = rid.pkg()
	c.skip(16, "package GUID")
	c.skip(16, "module GUID")
	c.u16("minimum context version")
	nColl := int(c.u32("collection count"))
	if nColl > xelMaxCollections {
		c.fail("package %q claims %d collections", name, nColl)
		return pkg, id, size
	}
	counts := map[int]int{}
	for i := 0; i < nColl && c.err == nil; i++ {
		kind := int(int32(c.u32("collection kind")))
		c.u16("collection version")
		c.u16("collection object size")
		n := int(c.u32("collection object count"))
		if n > xelMaxObjects {
			c.fail("package %q collection %d claims %d objects", name, kind, n)
		}
		counts[kind] = n
	}
	pkg.counts = counts
	pkg.events = map[int]*xelEventType{}
	pkg.actions = map[int]*xelAction{}
	pkg.maps = map[int]*xelMap{}
	pkg.types = map[int]*xelType{}
	c.readEvents(pkg)
	c.readActions(pkg)
	c.readMaps(pkg)
	c.readTypes(pkg)
	return pkg, id, size
}

// storeXEL puts o at its RID's index, failing on a RID of another kind or
// an index past the declared collection size.
func storeXEL[T any](c *xelCursor, pkg *xelPackage, objs map[int]*T, rid xelRID, kind int, what string, o *T) {
	if c.err != nil {
		return
	}
	if rid.kind() != kind {
		c.fail("%s has RID %v, not kind %d", what, rid, kind)
		return
	}
	i := rid.object()
	if i >= pkg.counts[kind] {
		c.fail("%s index %d is outside its collection (%d objects)", what, i, pkg.counts[kind])
		return
	}
	objs[i] = o
}

func (c *xelCursor) readEvents(pkg *xelPackage) {
	n := int(c.u32("event count"))
	for i := 0; i < n && c.err == nil; i++ {
		at := c.p
		rid, name, _ := c.objectHeader("event")
		nStatic := c.u16("event static attribute count")
		nCustom := c.u16("event customizable attribute count")
		nData := c.u16("event data count")
		c.u16("event fixed data count")
		for s := 0; s < nStatic && c.err == nil; s++ {
			t := xelRID(c.u32("static attribute type"))
			c.wstring("static attribute name")
			c.staticValue(t)
			c.wstring("static attribute description")
		}
		for s := 0; s < nCustom && c.err == nil; s++ {
			t := xelRID(c.u32("customizable attribute type"))
			c.wstring("customizable attribute name")
			c.staticValue(t)
			c.skip(8+4+4, "customizable attribute default, aggregation and capabilities")
			c.wstring("customizable attribute description")
		}
		ev := &xelEventType{name: name, pkg: pkg, fields: make([]xelFieldDef, 0, min(nData, 256))}
		for d := 0; d < nData && c.err == nil; d++ {
			t := xelRID(c.u32("field type"))
			fname := c.wstring("field name")
			off := c.u16("field offset")
			c.u16("field capabilities")
			c.wstring("field description")
			ev.fields = append(ev.fields, xelFieldDef{name: fname, typ: t, offset: off})
		}
		if c.err == nil && name == "" {
			c.p = at
			c.fail("event %d of package %q has no name", i, pkg.name)
		}
		storeXEL(c, pkg, pkg.events, rid, xelObjEvent, "event "+name, ev)
	}
}

// staticValue skips an attribute value: a GUID for base type 16, a string
// for 15, otherwise 8 bytes [verified on the real file's events].
func (c *xelCursor) staticValue(t xelRID) {
	switch t.object() {
	case 16:
		c.skip(16, "static GUID value")
	case 15:
		c.wstring("static string value")
	default:
		c.skip(8, "static value")
	}
}

func (c *xelCursor) readActions(pkg *xelPackage) {
	n := int(c.u32("action count"))
	for i := 0; i < n && c.err == nil; i++ {
		rid, name, _ := c.objectHeader("action")
		t := xelRID(c.u32("action type"))
		c.skip(8, "action storage size and flags")
		storeXEL(c, pkg, pkg.actions, rid, xelObjAction, "action "+name, &xelAction{name: name, typ: t, pkg: pkg})
	}
}

func (c *xelCursor) readMaps(pkg *xelPackage) {
	n := int(c.u32("map count"))
	for i := 0; i < n && c.err == nil; i++ {
		rid, name, specific := c.objectHeader("map")
		m := &xelMap{name: name, pkgName: pkg.name, bitmask: specific&1 == 1}
		m.size = c.u8("map key size")
		entries := c.u16("map entry count")
		m.keys = make([]uint32, 0, entries)
		m.texts = make([]string, 0, entries)
		for e := 0; e < entries && c.err == nil; e++ {
			k := c.u32("map key")
			m.keys = append(m.keys, k)
			m.texts = append(m.texts, c.wstring("map text"))
		}
		if c.err == nil {
			m.index()
		}
		storeXEL(c, pkg, pkg.maps, rid, xelObjMap, "map "+name, m)
	}
}

func (c *xelCursor) readTypes(pkg *xelPackage) {
	n := int(c.u32("type count"))
	for i := 0; i < n && c.err == nil; i++ {
		rid, name, _ := c.objectHeader("type")
		size := c.u8("type size")
		storeXEL(c, pkg, pkg.types, rid, xelObjType, "type "+name, &xelType{name: name, pkgName: pkg.name, size: size})
	}
}

// lookupType and lookupMap follow a field's or action's type RID.
func (m *xelMeta) lookupType(r xelRID) *xelType {
	if p := m.packages[r.pkg()]; p != nil {
		return p.types[r.object()]
	}
	return nil
}

func (m *xelMeta) lookupMap(r xelRID) *xelMap {
	if p := m.packages[r.pkg()]; p != nil {
		return p.maps[r.object()]
	}
	return nil
}

// slotFor resolves a type RID into a decoding slot.
func (m *xelMeta) slotFor(name string, t xelRID) (xelSlot, error) {
	s := xelSlot{name: name}
	switch t.kind() {
	case xelObjType:
		typ := m.lookupType(t)
		if typ == nil {
			return s, fmt.Errorf("type %v of %q is not in the metadata", t, name)
		}
		s.base, s.size, s.typName, s.typPkg = t.object(), typ.size, typ.name, typ.pkgName
		if !xelKnownBase(s.base) {
			return s, fmt.Errorf("%q has base type %d (%s), which this reader does not know", name, s.base, typ.name)
		}
	case xelObjMap:
		mp := m.lookupMap(t)
		if mp == nil {
			return s, fmt.Errorf("map %v of %q is not in the metadata", t, name)
		}
		switch mp.size {
		case 1, 2, 4, 8:
		default:
			return s, fmt.Errorf("map %q of %q has key size %d (want 1, 2, 4 or 8)", mp.name, name, mp.size)
		}
		s.m, s.size, s.typName, s.typPkg = mp, mp.size, mp.name, mp.pkgName
	default:
		return s, fmt.Errorf("%q has a type reference of kind %d (%v), neither a type nor a map", name, t.kind(), t)
	}
	return s, nil
}

func xelKnownBase(b int) bool {
	return (b >= xelInt8 && b <= xelPointer) || (b >= xelAnsiString && b <= xelXML)
}

// planFor returns the event's resolved field slots.
func (m *xelMeta) planFor(ev *xelEventType) ([]xelSlot, error) {
	if ev.planGen == m.gen {
		return ev.plan, nil
	}
	plan := make([]xelSlot, 0, len(ev.fields))
	for _, f := range ev.fields {
		s, err := m.slotFor(f.name, f.typ)
		if err != nil {
			return nil, fmt.Errorf("event %s.%s: %w", ev.pkg.name, ev.name, err)
		}
		s.offset = f.offset
		plan = append(plan, s)
	}
	ev.plan, ev.planGen = plan, m.gen
	return plan, nil
}

func (m *xelMeta) actionSlot(a *xelAction) (*xelSlot, error) {
	if a.slot != nil && a.slotGen == m.gen {
		return a.slot, nil
	}
	s, err := m.slotFor(a.name, a.typ)
	if err != nil {
		return nil, fmt.Errorf("action %s.%s: %w", a.pkg.name, a.name, err)
	}
	s.pkgName = a.pkg.name
	a.slot, a.slotGen = &s, m.gen
	return a.slot, nil
}

// mapTable lists every map of every package.
func (m *xelMeta) mapTable() *MapTable {
	t := &MapTable{}
	for _, p := range m.packages {
		if p == nil {
			continue
		}
		for _, mp := range p.maps {
			if mp == nil {
				continue
			}
			for i, k := range mp.keys {
				t.Add(mp.name, uint64(k), mp.texts[i])
			}
		}
	}
	return t
}

// describe is used by error messages.
func (ev *xelEventType) describe() string {
	return strings.TrimPrefix(ev.pkg.name+"."+ev.name, ".")
}

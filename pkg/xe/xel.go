package xe

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"iter"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Binary .xel reading.
//
// SQL Server's event_file target writes a self-describing binary format
// (https://learn.microsoft.com/en-us/sql/relational-databases/extended-events/targets-for-extended-events-in-sql-server
// calls it "a binary format that isn't human readable"). There is no public
// specification and no Go reader, so this one is hand-written from the
// project's reverse-engineered notes (docs/design/symbols-and-xel.md §10 [verified]
// against two real files) and checked against a real SQL Server 2017 file
// (testdata/xel). sys.fn_MSxe_read_event_stream returns the same buffers
// for a live session. XML (Decoder) stays the supported path; this is the
// fast and offline one.
//
// Layout, all little-endian [verified]:
//
//	stream header  512 bytes: u32 magic 0xEFAB375A, u16 version 10, …
//	buffer         12-byte buffer header (version, id, reserved, u32 sequence)
//	               20-byte log header: u16 log version 10, u16 type
//	               (0 event, 1 metadata, 2 header, 3 index), u32 padded
//	               length (distance to the next buffer), u16 unused, u16 data
//	               offset, u32 data length, u32 tail checksum
//	event record   u32 RID, u32 flags (low 6 bits version 10, bit 31 actions
//	               follow), u32 source-type mask, u64 ticks, u32 payload
//	               length, payload (fixed fields at their metadata offsets;
//	               variable fields are (u32 offset, u32 length) descriptors
//	               into the payload), then when flagged: actions as
//	               (u32 RID, u32 length, bytes) up to an 8-byte entry whose RID
//	               is not an action's.
//
// The tail checksum's algorithm is unknown, so it is not verified.

// xelMagic opens every .xel stream header: bytes 5a 37 ab ef [verified].
const xelMagic = 0xEFAB375A

const (
	xelVersion          = 10
	xelStreamHeaderSize = 512
	xelBufferHeaderSize = 32 // 12-byte buffer header + 20-byte log header
	xelRecordHeaderSize = 24
	// xelMaxBufferSize bounds one buffer; real ones are 1 KB to a few MB
	// (the event_file target's buffers follow the session's memory), so
	// this only stops a corrupt length from becoming a huge allocation.
	xelMaxBufferSize = 256 << 20
)

// Buffer types in the log header [verified: 0 and 1 in the real file].
const (
	xelBufEvent    = 0
	xelBufMetadata = 1
	xelBufHeader   = 2
	xelBufIndex    = 3
)

// IsXEL reports whether prefix, the first bytes of a file, starts a binary
// .xel stream (magic 5a 37 ab ef; with six or more bytes also version 10).
// Sniff with at least 6 bytes: XML never starts this way.
func IsXEL(prefix []byte) bool {
	if len(prefix) < 4 || binary.LittleEndian.Uint32(prefix) != xelMagic {
		return false
	}
	return len(prefix) < 6 || binary.LittleEndian.Uint16(prefix[4:]) == xelVersion
}

// XELError is a problem in a binary .xel stream, at a file offset.
type XELError struct {
	Offset int64  // byte offset in the stream where the problem is
	What   string // what was wrong
	Err    error  // the underlying error (io.ErrUnexpectedEOF for a truncated file), if any
}

func (e *XELError) Error() string {
	s := fmt.Sprintf("xel offset %d (0x%X): %s", e.Offset, e.Offset, e.What)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *XELError) Unwrap() error { return e.Err }

// ModuleFinder maps a code address to the module loaded around it, as
// sys.dm_os_loaded_modules base addresses do
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-os-loaded-modules-transact-sql).
// pkg/callstack's *ModuleBases has this method.
type ModuleFinder interface {
	Find(addr uint64) (module string, base uint64, ok bool)
}

// XELReader reads events from a binary .xel file (the event_file target's
// own format). It yields the same Events as Decoder does for the XML that
// sys.fn_xe_file_target_read_file returns for the file: same event, field
// and action names and order, map fields with key and text (from the file's
// own maps), values of the same Kind and text; timestamps keep the file's
// 100 ns precision (Raw has seven fractional digits, where XML prints three).
// The text of integers, maps, flag maps, pointers, booleans, strings,
// binary data and call stacks follows real XML samples [R]; for floats,
// GUIDs (upper case), activity ids (GUID-sequence) and FILETIME values no
// real sample was available [U].
//
// Call stacks (package0.callstack) have no module information in the file:
// they read as one "0x" + 16-hex-digit address per line, the form SSMS and
// XELite show, unless SetModules gives load addresses, which makes them
// "module+0x<offset>" lines like ring_buffer XML.
//
// Memory use depends on the largest buffer, not on the file size. An
// XELReader is not safe for concurrent use.
type XELReader struct {
	r        io.Reader
	off      int64 // stream offset of the next unread byte
	started  bool
	buf      []byte
	bufOff   int64 // stream offset of buf[0]
	pos, end int   // unread event records: buf[pos:end]
	meta     xelMeta
	err      error // final error, returned forever

	reuse   bool
	types   bool
	modules ModuleFinder

	events     int // events returned so far
	eventAt    int64
	fields     []Field
	arena      []byte
	u16s       []uint16
	lastBufOff int64

	stacks   *[xelStackSlots]xelStackEntry // call-stack text by raw bytes
	evCache  [64]xelEventCacheEntry
	actCache [64]xelActionCacheEntry

	// The timestamp text up to the seconds, for the second sec.
	sec      int64
	secValid bool
	secText  [20]byte
}

// NewXELReader returns a reader of the .xel stream r (a file from its first
// byte, or the bytes OPENROWSET(BULK …, SINGLE_BLOB) returns for one).
func NewXELReader(r io.Reader) *XELReader { return &XELReader{r: r} }

// ReuseEvents makes Next return views, as Decoder.ReuseEvents does: the
// Event's Fields, Actions and every Raw/Text string point into buffers the
// reader overwrites on the next call to Next. Names are owned by the
// file's metadata and stay valid. Call Event.Clone to keep an event.
func (x *XELReader) ReuseEvents() { x.reuse = true }

// IncludeTypes fills Value.Type and Value.TypePackage from the metadata
// (e.g. "uint32"/"package0", "wait_types"/"sqlos"), as ring_buffer XML
// carries them. Off by default, so events equal the event_file XML's.
func (x *XELReader) IncludeTypes() { x.types = true }

// SetModules gives module load addresses for rendering call stacks as
// module+offset lines.
func (x *XELReader) SetModules(m ModuleFinder) { x.modules, x.stacks = m, nil }

// MapTable returns every map the metadata read so far holds (all of them
// once the first event has been read: metadata precedes events). Use it as
// the MapResolver for typed views. Each call builds a new table.
func (x *XELReader) MapTable() *MapTable { return x.meta.mapTable() }

// BufferOffset returns the stream offset of the buffer holding the last
// event returned: what sys.fn_xe_file_target_read_file reports as
// file_offset.
func (x *XELReader) BufferOffset() int64 { return x.lastBufOff }

// All iterates over Next's results until io.EOF. A *RowError (a corrupt
// event buffer, skipped) is yielded and reading goes on; any other error is
// yielded once and ends the sequence.
func (x *XELReader) All() iter.Seq2[Event, error] { return allEvents(x.Next) }

// Next returns the next event; io.EOF at the end of the stream. A corrupt
// event record gives a *RowError wrapping an *XELError; the rest of that
// buffer is skipped and Next may be called again. Any other error (not a
// .xel stream, a truncated file, corrupt buffer framing or metadata) is an
// *XELError and final.
func (x *XELReader) Next() (Event, error) {
	if x.err != nil {
		return Event{}, x.err
	}
	for x.pos >= x.end {
		if err := x.nextBuffer(); err != nil {
			x.err = err
			return Event{}, err
		}
	}
	ev, err := x.decodeRecord()
	if err != nil {
		x.pos = x.end // the records after a bad one cannot be found
		var xe *XELError
		off := x.eventAt
		if errors.As(err, &xe) {
			off = xe.Offset
		}
		return Event{}, &RowError{Row: x.events + 1, Offset: off, Event: ev.Name, Pos: -1, Err: err}
	}
	x.events++
	x.lastBufOff = x.bufOff
	if !x.reuse {
		return x.own(ev), nil
	}
	return ev, nil
}

// own makes an event independent of the reader's buffers with two
// allocations, like Event.Clone, but copies only the text in the arena:
// names, map texts, cached call stacks and small numbers are immutable
// strings already, and so are views into an arena that has since grown
// (the old array is never written again).
func (x *XELReader) own(ev Event) Event {
	nf := len(ev.Fields)
	all := make([]Field, nf+len(ev.Actions))
	copy(all, ev.Fields)
	copy(all[nf:], ev.Actions)
	text := string(x.arena)
	base := uintptr(unsafe.Pointer(unsafe.SliceData(x.arena)))
	end := base + uintptr(len(x.arena))
	rebase := func(s string) string {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		if len(s) == 0 || p < base || p >= end {
			return s
		}
		off := int(p - base)
		return text[off : off+len(s)]
	}
	ev.Timestamp.Raw = rebase(ev.Timestamp.Raw)
	for i := range all {
		all[i].Value.Raw = rebase(all[i].Value.Raw)
		all[i].Value.Text = rebase(all[i].Value.Text)
	}
	ev.Fields, ev.Actions = nil, nil
	if nf > 0 {
		ev.Fields = all[:nf:nf]
	}
	if len(all) > nf {
		ev.Actions = all[nf:]
	}
	return ev
}

func (x *XELReader) truncated(at int64, what string, err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return &XELError{Offset: at, What: what, Err: err}
}

// nextBuffer reads buffers until one with event records (or the end).
func (x *XELReader) nextBuffer() error {
	if !x.started {
		x.started = true
		var h [xelStreamHeaderSize]byte
		n, err := io.ReadFull(x.r, h[:])
		x.off += int64(n)
		var magic [4]byte
		binary.LittleEndian.PutUint32(magic[:], xelMagic)
		if !bytes.HasPrefix(h[:n], magic[:min(n, 4)]) || (n == 0 && err == nil) {
			return &XELError{Offset: 0, What: "not a .xel stream: the magic bytes 5a 37 ab ef are missing"}
		}
		if n < 6 {
			return x.truncated(int64(n), "stream header: not a .xel file or truncated", err)
		}
		if v := binary.LittleEndian.Uint16(h[4:]); v != xelVersion {
			return &XELError{Offset: 4, What: fmt.Sprintf("stream version %d is not supported (want %d)", v, xelVersion)}
		}
		if err != nil {
			return x.truncated(int64(n), "stream header (512 bytes)", err)
		}
	}
	var h [xelBufferHeaderSize]byte
	at := x.off
	n, err := io.ReadFull(x.r, h[:])
	x.off += int64(n)
	if err == io.EOF {
		return io.EOF
	}
	if err != nil {
		return x.truncated(at+int64(n), fmt.Sprintf("buffer header at offset %d", at), err)
	}
	logVersion := binary.LittleEndian.Uint16(h[12:])
	typ := binary.LittleEndian.Uint16(h[14:])
	padded := int64(binary.LittleEndian.Uint32(h[16:]))
	dataOff := int64(binary.LittleEndian.Uint16(h[22:]))
	dataLen := int64(binary.LittleEndian.Uint32(h[24:]))
	switch {
	case logVersion != xelVersion:
		return &XELError{Offset: at + 12, What: fmt.Sprintf("buffer log version %d (want %d): the file is corrupt or not a .xel", logVersion, xelVersion)}
	case typ > xelBufIndex:
		return &XELError{Offset: at + 14, What: fmt.Sprintf("unknown buffer type %d", typ)}
	case padded < xelBufferHeaderSize || padded > xelMaxBufferSize:
		return &XELError{Offset: at + 16, What: fmt.Sprintf("buffer length %d is out of range", padded)}
	case dataOff < xelBufferHeaderSize || dataOff+dataLen > padded:
		return &XELError{Offset: at + 22, What: fmt.Sprintf("buffer data (offset %d, length %d) does not fit the buffer's %d bytes", dataOff, dataLen, padded)}
	}
	// Read in steps so that a corrupt length costs memory only for the
	// bytes that are really there.
	x.buf = append(x.buf[:0], h[:]...)
	for int64(len(x.buf)) < padded {
		step := int(min(padded-int64(len(x.buf)), 1<<20))
		x.buf = slices.Grow(x.buf, step)
		n, err = io.ReadFull(x.r, x.buf[len(x.buf):len(x.buf)+step])
		x.buf = x.buf[:len(x.buf)+n]
		x.off += int64(n)
		if err != nil {
			// The last buffer may end right after its data when a copy was
			// cut to the data; padding is not needed to decode.
			if int64(len(x.buf)) < dataOff+dataLen {
				return x.truncated(x.off, fmt.Sprintf("buffer at offset %d is truncated (%d of %d bytes)", at, len(x.buf), padded), err)
			}
			break
		}
	}
	x.bufOff = at
	data := x.buf[dataOff : dataOff+dataLen]
	switch typ {
	case xelBufMetadata:
		if err := x.meta.readMetadata(data, at+dataOff); err != nil {
			return err
		}
		x.stacks = nil // the pointer size may have changed
	case xelBufEvent:
		if x.meta.packages == nil {
			return &XELError{Offset: at, What: "event buffer before any metadata buffer"}
		}
		x.pos, x.end = int(dataOff), int(dataOff+dataLen)
	}
	return nil
}

// decodeRecord decodes the event record at x.pos and moves past it (and
// its actions).
func (x *XELReader) decodeRecord() (Event, error) {
	b := x.buf[:x.end]
	p := x.pos
	x.eventAt = x.bufOff + int64(p)
	fail := func(at int, format string, args ...any) error {
		return &XELError{Offset: x.bufOff + int64(at), What: fmt.Sprintf(format, args...)}
	}
	if p+xelRecordHeaderSize > len(b) {
		return Event{}, fail(p, "event record header runs past the buffer's data (%d bytes left)", len(b)-p)
	}
	rid := xelRID(binary.LittleEndian.Uint32(b[p:]))
	flags := binary.LittleEndian.Uint32(b[p+4:])
	ticks := binary.LittleEndian.Uint64(b[p+12:])
	plen := int(binary.LittleEndian.Uint32(b[p+20:]))
	if v := flags & 0x3F; v != xelVersion {
		return Event{}, fail(p+4, "event record version %d (want %d): the buffer is corrupt or misaligned", v, xelVersion)
	}
	if rid.kind() != xelObjEvent {
		return Event{}, fail(p, "event record RID (%v) is not an event's", rid)
	}
	et := x.eventType(rid)
	if et == nil {
		return Event{}, fail(p, "event %v is not in the file's metadata", rid)
	}
	pkg := et.pkg
	ev := Event{Name: et.name, Package: pkg.name}
	payStart := p + xelRecordHeaderSize
	if plen < 0 || plen > len(b)-payStart {
		return ev, fail(p+20, "event %s payload length %d runs past the buffer's data (%d bytes left)", et.describe(), plen, len(b)-payStart)
	}
	payload := b[payStart : payStart+plen]
	plan, err := x.meta.planFor(et)
	if err != nil {
		return ev, fail(p, "%v", err)
	}
	x.arena = x.arena[:0]
	x.fields = slices.Grow(x.fields[:0], len(plan)+4)[:len(plan)]
	ts, err := x.timestamp(pkg, ticks)
	if err != nil {
		return ev, fail(p+12, "event %s: %v", et.describe(), err)
	}
	ev.Timestamp = ts
	for i := range plan {
		s := &plan[i]
		var val []byte
		if s.size == 0 {
			if s.offset+8 > len(payload) {
				return ev, fail(p, "event %s field %s: its offset/length descriptor at payload offset %d lies outside the %d-byte payload", et.describe(), s.name, s.offset, len(payload))
			}
			voff := int(binary.LittleEndian.Uint32(payload[s.offset:]))
			vlen := int(binary.LittleEndian.Uint32(payload[s.offset+4:]))
			if voff < 0 || vlen < 0 || voff > len(payload) || vlen > len(payload)-voff {
				return ev, fail(payStart+s.offset, "event %s field %s: value (offset %d, length %d) lies outside the %d-byte payload", et.describe(), s.name, voff, vlen, len(payload))
			}
			val = payload[voff : voff+vlen]
		} else {
			if s.offset+s.size > len(payload) {
				return ev, fail(p, "event %s field %s: %d bytes at payload offset %d lie outside the %d-byte payload", et.describe(), s.name, s.size, s.offset, len(payload))
			}
			val = payload[s.offset : s.offset+s.size]
		}
		f := &x.fields[i]
		f.Name, f.Package = s.name, ""
		var err error
		if x.types {
			err = x.value(&f.Value, s, val)
		} else {
			err = x.rawValue(&f.Value, s, val)
		}
		if err != nil {
			return ev, fail(payStart+s.offset, "event %s field %s: %v", et.describe(), s.name, err)
		}
	}
	nFields := len(x.fields)
	p = payStart + plen
	if flags&(1<<31) != 0 {
		for {
			if p+8 > len(b) {
				return ev, fail(p, "event %s: action header runs past the buffer's data", et.describe())
			}
			arid := xelRID(binary.LittleEndian.Uint32(b[p:]))
			alen := int(binary.LittleEndian.Uint32(b[p+4:]))
			if arid.kind() != xelObjAction {
				p += 8 // the entry that ends the list
				break
			}
			a := x.action(arid)
			if a == nil {
				return ev, fail(p, "event %s: action %v is not in the file's metadata", et.describe(), arid)
			}
			ap := a.pkg
			if alen < 0 || alen > len(b)-p-8 {
				return ev, fail(p+4, "event %s action %s: length %d runs past the buffer's data", et.describe(), a.name, alen)
			}
			s, err := x.meta.actionSlot(a)
			if err != nil {
				return ev, fail(p, "event %s: %v", et.describe(), err)
			}
			val := b[p+8 : p+8+alen]
			if s.size > 0 {
				if alen < s.size {
					return ev, fail(p+4, "event %s action %s: %d bytes, its type needs %d", et.describe(), a.name, alen, s.size)
				}
				val = val[:s.size]
			}
			n := len(x.fields)
			x.fields = slices.Grow(x.fields, 1)[:n+1]
			f := &x.fields[n]
			f.Name, f.Package = a.name, ap.name
			if err := x.value(&f.Value, s, val); err != nil {
				return ev, fail(p+8, "event %s action %s: %v", et.describe(), a.name, err)
			}
			p += 8 + alen
		}
	}
	x.pos = p
	if nFields > 0 {
		ev.Fields = x.fields[:nFields:nFields]
	}
	if len(x.fields) > nFields {
		ev.Actions = x.fields[nFields:]
	}
	return ev, nil
}

// eventType and action look objects up by RID through small caches:
// records repeat a few event types and actions, and a map lookup would
// cost more than the rest of a small value's decoding.
func (x *XELReader) eventType(rid xelRID) *xelEventType {
	c := &x.evCache[uint(rid.object()^rid.pkg()<<4)%uint(len(x.evCache))]
	if c.rid == rid && c.gen == x.meta.gen && c.et != nil {
		return c.et
	}
	pkg := x.meta.packages[rid.pkg()]
	if pkg == nil {
		return nil
	}
	et := pkg.events[rid.object()]
	if et != nil {
		*c = xelEventCacheEntry{rid, x.meta.gen, et}
	}
	return et
}

func (x *XELReader) action(rid xelRID) *xelAction {
	c := &x.actCache[uint(rid.object()^rid.pkg()<<4)%uint(len(x.actCache))]
	if c.rid == rid && c.gen == x.meta.gen && c.a != nil {
		return c.a
	}
	pkg := x.meta.packages[rid.pkg()]
	if pkg == nil {
		return nil
	}
	a := pkg.actions[rid.object()]
	if a != nil {
		*c = xelActionCacheEntry{rid, x.meta.gen, a}
	}
	return a
}

type xelEventCacheEntry struct {
	rid xelRID
	gen int
	et  *xelEventType
}

type xelActionCacheEntry struct {
	rid xelRID
	gen int
	a   *xelAction
}

// view returns the arena bytes from start as a string without copying. The
// string stays valid until the arena is reset for the next event (growing
// the arena leaves old bytes where they were).
func (x *XELReader) view(start int) string {
	if start == len(x.arena) {
		return ""
	}
	s := x.arena[start:]
	return unsafe.String(unsafe.SliceData(s), len(s))
}

// FILETIME counts 100 ns intervals since 1601-01-01 UTC.
const fileTimeUnixEpoch = 116444736000000000

// timestamp turns record ticks into the event time: the package's ticks
// config start time + ticks×10⁷/frequency, a FILETIME [verified: gives
// 2020-05-30T20:37:36.3626428Z for the real file's first event].
func (x *XELReader) timestamp(pkg *xelPackage, ticks uint64) (Timestamp, error) {
	delta := ticks // already 100 ns units at these frequencies
	if pkg.frequency != 0 && pkg.frequency != 10_000_000 {
		hi, lo := bits.Mul64(ticks, 10_000_000)
		if hi >= pkg.frequency {
			return Timestamp{}, fmt.Errorf("tick count %d overflows at frequency %d", ticks, pkg.frequency)
		}
		delta, _ = bits.Div64(hi, lo, pkg.frequency)
	}
	ft, carry := bits.Add64(uint64(pkg.startFileTime), delta, 0)
	if carry != 0 || pkg.startFileTime < 0 {
		return Timestamp{}, fmt.Errorf("start time %d + %d ticks is out of range", pkg.startFileTime, delta)
	}
	if ft > math.MaxInt64 {
		return Timestamp{}, fmt.Errorf("time %d (FILETIME) is out of range", ft)
	}
	t, raw, ok := x.fileTime(int64(ft))
	if !ok {
		return Timestamp{}, fmt.Errorf("time %d (FILETIME) is out of range", ft)
	}
	return Timestamp{Raw: raw, Time: t}, nil
}

// fileTime converts a FILETIME and writes it to the arena as
// YYYY-MM-DDThh:mm:ss.fffffffZ. Events come in bursts within a second, so
// the text up to the seconds is kept from the last call.
func (x *XELReader) fileTime(ft int64) (time.Time, string, bool) {
	u := ft - fileTimeUnixEpoch
	sec, frac := u/10_000_000, u%10_000_000
	if frac < 0 {
		sec, frac = sec-1, frac+10_000_000
	}
	t := time.Unix(sec, frac*100).UTC()
	if !x.secValid || sec != x.sec {
		year, month, day := t.Date()
		if year < 1601 || year > 9999 {
			return time.Time{}, "", false
		}
		hour, minute, second := t.Clock()
		p := x.secText[:0]
		p = appendDigits(p, year, 4)
		p = append(p, '-')
		p = appendDigits(p, int(month), 2)
		p = append(p, '-')
		p = appendDigits(p, day, 2)
		p = append(p, 'T')
		p = appendDigits(p, hour, 2)
		p = append(p, ':')
		p = appendDigits(p, minute, 2)
		p = append(p, ':')
		p = appendDigits(p, second, 2)
		p = append(p, '.')
		x.sec, x.secValid = sec, true
	}
	start := len(x.arena)
	x.arena = slices.Grow(x.arena, 28)[:start+28]
	out := (*[28]byte)(x.arena[start:])
	copy(out[:20], x.secText[:])
	f := int(frac)
	for i := 26; i > 20; i -= 2 {
		p := &xelDecPairs[f%100]
		out[i-1], out[i] = p[0], p[1]
		f /= 100
	}
	out[20] = byte('0' + f)
	out[27] = 'Z'
	return t, x.view(start), true
}

// xelDecPairs holds the two decimal digits of 0..99.
var xelDecPairs = func() (t [100][2]byte) {
	for i := range t {
		t[i] = [2]byte{byte('0' + i/10), byte('0' + i%10)}
	}
	return
}()

func appendDigits(dst []byte, n, width int) []byte {
	var b [20]byte
	i := len(b)
	for w := 0; w < width || n > 0; w++ {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return append(dst, b[i:]...)
}

const upperHex = "0123456789ABCDEF"

// hexPairs holds the two upper-case hex digits of every byte value.
var hexPairs = func() (t [256][2]byte) {
	for i := range t {
		t[i] = [2]byte{upperHex[i>>4], upperHex[i&15]}
	}
	return
}()

// appendHex16 writes u as 16 upper-case hex digits. Call stacks are most of
// a typical event's text, so this is written for speed.
func appendHex16(dst []byte, u uint64) []byte {
	n := len(dst)
	dst = slices.Grow(dst, 16)[:n+16]
	b := (*[16]byte)(dst[n:])
	for i := 14; i >= 0; i -= 2 {
		p := hexPairs[byte(u)]
		b[i], b[i+1] = p[0], p[1]
		u >>= 8
	}
	return dst
}

// value decodes one field or action value. The text matches what the
// server's event XML prints, so the Kind is what Decoder infers from it.
func (x *XELReader) value(v *Value, s *xelSlot, b []byte) error {
	err := x.rawValue(v, s, b)
	if x.types && err == nil {
		v.Type, v.TypePackage = s.typName, s.typPkg
		// With a <type>, Decoder reads the text by the type (a float
		// printed "2" stays a float, hex-printed binary stays binary).
		if s.m == nil && (s.base == xelFloat32 || s.base == xelFloat64 || s.base == xelBinary) && v.Kind != KindEmpty {
			v.Kind, v.bits = classify(unsafe.Slice(unsafe.StringData(v.Raw), len(v.Raw)), s.typName)
		}
	}
	return err
}

func (x *XELReader) rawValue(v *Value, s *xelSlot, b []byte) error {
	start := len(x.arena)
	le := binary.LittleEndian
	if s.m != nil {
		var key uint64
		switch len(b) {
		case 1:
			key = uint64(b[0])
		case 2:
			key = uint64(le.Uint16(b))
		case 4:
			key = uint64(le.Uint32(b))
		case 8:
			key = le.Uint64(b)
		}
		*v = x.mapValue(s.m, key)
		return nil
	}
	if need := xelNeed[s.base]; len(b) < need {
		return fmt.Errorf("%d bytes, base type %d needs %d", len(b), s.base, need)
	}
	switch s.base {
	case xelInt8:
		*v = x.intValue(start, int64(int8(b[0])))
		return nil
	case xelInt16:
		*v = x.intValue(start, int64(int16(le.Uint16(b))))
		return nil
	case xelInt32:
		*v = x.intValue(start, int64(int32(le.Uint32(b))))
		return nil
	case xelInt64:
		*v = x.intValue(start, int64(le.Uint64(b)))
		return nil
	case xelUint8:
		*v = x.uintValue(start, uint64(b[0]))
		return nil
	case xelUint16:
		*v = x.uintValue(start, uint64(le.Uint16(b)))
		return nil
	case xelUint32:
		*v = x.uintValue(start, uint64(le.Uint32(b)))
		return nil
	case xelUint64, xelCPUCycle:
		*v = x.uintValue(start, le.Uint64(b))
		return nil
	case xelFloat32, xelFloat64:
		var f float64
		if s.base == xelFloat32 {
			f = float64(math.Float32frombits(le.Uint32(b)))
			x.arena = strconv.AppendFloat(x.arena, f, 'g', -1, 32)
		} else {
			f = math.Float64frombits(le.Uint64(b))
			x.arena = strconv.AppendFloat(x.arena, f, 'g', -1, 64)
		}
		// The XML prints the number; the Kind is what its text reads as
		// (a whole number reads as an integer) [U: XE's float format].
		k, bits := classify(x.arena[start:], "")
		*v = Value{Raw: x.view(start), Kind: k, bits: bits}
		return nil
	case xelFileTime:
		if _, _, ok := x.fileTime(int64(le.Uint64(b))); !ok {
			return fmt.Errorf("FILETIME %d is out of range", int64(le.Uint64(b)))
		}
		*v = Value{Raw: x.view(start), Kind: KindString}
		return nil
	case xelPointer:
		var p uint64
		switch len(b) {
		case 4:
			p = uint64(le.Uint32(b))
		case 8:
			p = le.Uint64(b)
		default:
			return fmt.Errorf("pointer of %d bytes (want 4 or 8)", len(b))
		}
		// XE prints ptr as 0x + 16 hex digits [R].
		x.arena = append(x.arena, '0', 'x')
		x.arena = appendHex16(x.arena, p)
		*v = Value{Raw: x.view(start), Kind: KindHex, bits: p}
		return nil
	case xelAnsiString:
		b = trimTrailingNUL(b, 1)
		for _, c := range b {
			if c < utf8.RuneSelf {
				x.arena = append(x.arena, c)
			} else {
				// ANSI strings are code-page text; Latin-1 is the closest
				// lossless reading [U].
				x.arena = utf8.AppendRune(x.arena, rune(c))
			}
		}
		*v = Value{Raw: x.view(start), Kind: KindString}
		return nil
	case xelUnicodeString:
		x.appendUTF16(trimTrailingNUL(b, 2))
		*v = Value{Raw: x.view(start), Kind: KindString}
		return nil
	case xelXML:
		x.appendUTF16(trimTrailingNUL(b, 2))
		if len(x.arena) == start {
			*v = Value{}
			return nil
		}
		*v = Value{Raw: x.view(start), Kind: KindXML}
		return nil
	case xelGUID:
		x.arena = appendGUID(x.arena, b)
		*v = Value{Raw: x.view(start), Kind: KindGUID}
		return nil
	case xelActivityID, xelActivityXfer:
		// XE prints an activity id as the GUID, a dash and the sequence
		// number [U: from memory of system_health XML].
		x.arena = appendGUID(x.arena, b)
		x.arena = append(x.arena, '-')
		x.arena = strconv.AppendUint(x.arena, uint64(le.Uint32(b[16:])), 10)
		k, bits := classify(x.arena[start:], "")
		*v = Value{Raw: x.view(start), Kind: k, bits: bits}
		return nil
	case xelBoolean:
		set := false
		for _, c := range b {
			set = set || c != 0
		}
		*v = BoolValue(set)
		return nil
	case xelBinary:
		if len(b) == 0 {
			*v = Value{}
			return nil
		}
		// Binary data prints as hex digits without 0x (plan_handle [R]);
		// the Kind is what that text reads as, as for the XML.
		for _, c := range b {
			x.arena = append(x.arena, upperHex[c>>4], upperHex[c&15])
		}
		k, bits := classify(x.arena[start:], "")
		*v = Value{Raw: x.view(start), Kind: k, bits: bits}
		return nil
	case xelCallstack:
		ps := x.meta.pointerSize
		if ps == 0 {
			ps = 8
		}
		if len(b)%ps != 0 {
			return fmt.Errorf("call stack of %d bytes is not a whole number of %d-byte addresses", len(b), ps)
		}
		if len(b) == 0 {
			*v = Value{}
			return nil
		}
		// A trace holds few distinct stacks (the real file: 23 in 553
		// events), so their text is kept: an owned string, valid forever.
		if x.stacks == nil {
			x.stacks = new([xelStackSlots]xelStackEntry)
		}
		slot := &x.stacks[xelStackSlot(b)]
		if slot.raw == string(b) {
			*v = Value{Raw: slot.text, Kind: KindString}
			return nil
		}
		x.arena = slices.Grow(x.arena, len(b)/ps*(len("0x")+16+1))
		for i := 0; i < len(b); i += ps {
			var a uint64
			if ps == 8 {
				a = le.Uint64(b[i:])
			} else {
				a = uint64(le.Uint32(b[i:]))
			}
			if i > 0 {
				x.arena = append(x.arena, '\n')
			}
			x.arena = x.appendFrame(x.arena, a)
		}
		text := string(x.arena[start:])
		x.arena = x.arena[:start]
		slot.raw, slot.text = string(b), text
		*v = Value{Raw: text, Kind: KindString}
		return nil
	}
	return fmt.Errorf("base type %d is not supported", s.base)
}

// The call-stack cache is direct-mapped: a stack's slot comes from a hash
// of its bytes; a collision replaces the slot's entry. A lookup costs the
// hash and one comparison of the raw bytes.
const xelStackSlots = 1 << 11

type xelStackEntry struct{ raw, text string }

func xelStackSlot(b []byte) int {
	return int(maphash.Bytes(xelStackSeed, b) >> (64 - 11))
}

var xelStackSeed = maphash.MakeSeed()

// xelNeed is the least number of bytes a value of each base type needs.
var xelNeed = [xelXML + 1]int{
	xelInt8: 1, xelInt16: 2, xelInt32: 4, xelInt64: 8,
	xelUint8: 1, xelUint16: 2, xelUint32: 4, xelUint64: 8,
	xelFloat32: 4, xelFloat64: 8, xelCPUCycle: 8, xelFileTime: 8,
	xelGUID: 16, xelActivityID: 20, xelActivityXfer: 20, xelBoolean: 1,
}

// xelSmallUints holds the text of small numbers, the most common values.
var xelSmallUints = func() (t [1024]string) {
	for i := range t {
		t[i] = strconv.Itoa(i)
	}
	return
}()

func (x *XELReader) uintValue(start int, u uint64) Value {
	if u < uint64(len(xelSmallUints)) {
		return Value{Raw: xelSmallUints[u], Kind: KindUint, bits: u}
	}
	x.arena = strconv.AppendUint(x.arena, u, 10)
	return Value{Raw: x.view(start), Kind: KindUint, bits: u}
}

func (x *XELReader) intValue(start int, i int64) Value {
	if i >= 0 {
		return x.uintValue(start, uint64(i))
	}
	x.arena = strconv.AppendInt(x.arena, i, 10)
	return Value{Raw: x.view(start), Kind: KindInt, bits: uint64(i)}
}

// appendFrame writes one call-stack frame: "0x" + 16 hex digits, or
// "module+0x" + 16 hex digits of offset (the ring_buffer form [R]) when the
// module is known.
func (x *XELReader) appendFrame(dst []byte, a uint64) []byte {
	if x.modules != nil {
		if name, base, ok := x.modules.Find(a); ok && a >= base {
			dst = append(dst, name...)
			dst = append(dst, '+', '0', 'x')
			return appendHex16(dst, a-base)
		}
	}
	dst = append(dst, '0', 'x')
	return appendHex16(dst, a)
}

// mapValue is a map field: the key, and its text from the file's own map.
// A bitmask map prints its key as 0x + 8 hex digits and the names of its
// set bits joined by ", " (error_destination: 0x0000001c, "BUFFER,
// ERRORLOG, EVENTLOG" [R]). A key the map lacks gets no text.
func (x *XELReader) mapValue(m *xelMap, key uint64) Value {
	start := len(x.arena)
	if !m.bitmask {
		v := x.uintValue(start, key)
		v.Text, v.HasText = m.text(key)
		return v
	}
	x.arena = append(x.arena, '0', 'x')
	digits := 8
	if key > 0xFFFFFFFF {
		digits = 16
	}
	for i := digits - 1; i >= 0; i-- {
		x.arena = append(x.arena, hexDigits[(key>>(4*i))&15])
	}
	v := Value{Raw: x.view(start), Kind: KindHex, bits: key}
	tstart := len(x.arena)
	known := key == 0
	if key == 0 {
		if t, ok := m.text(0); ok {
			x.arena = append(x.arena, t...)
		}
	}
	for bit := 0; bit < 64; bit++ {
		if key&(1<<bit) == 0 {
			continue
		}
		t, ok := m.text(1 << bit)
		if !ok {
			continue
		}
		known = true
		if len(x.arena) > tstart {
			x.arena = append(x.arena, ", "...)
		}
		x.arena = append(x.arena, t...)
	}
	if known {
		v.Text, v.HasText = x.view(tstart), true
	}
	return v
}

func trimTrailingNUL(b []byte, width int) []byte {
	for len(b) >= width && b[len(b)-1] == 0 && (width == 1 || b[len(b)-2] == 0) {
		b = b[:len(b)-width]
	}
	return b
}

// appendUTF16 decodes UTF-16LE text (an odd last byte is dropped; unpaired
// surrogates become U+FFFD). ASCII is copied without decoding.
func (x *XELReader) appendUTF16(b []byte) {
	n := len(b) / 2
	ascii := true
	for i := 0; i < n; i++ {
		if b[2*i+1] != 0 || b[2*i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		for i := 0; i < n; i++ {
			x.arena = append(x.arena, b[2*i])
		}
		return
	}
	x.u16s = x.u16s[:0]
	for i := 0; i < n; i++ {
		x.u16s = append(x.u16s, binary.LittleEndian.Uint16(b[2*i:]))
	}
	for _, r := range utf16.Decode(x.u16s) {
		x.arena = utf8.AppendRune(x.arena, r)
	}
}

// appendGUID writes a Windows GUID (first three groups little-endian) in
// the registry form without braces, upper case [U: XE's case].
func appendGUID(dst []byte, b []byte) []byte {
	order := [16]int{3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15}
	for i, j := range order {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, upperHex[b[j]>>4], upperHex[b[j]&15])
	}
	return dst
}

package xe

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"
	"unsafe"
)

// RowError is a malformed row: an <event> (or stray text between events)
// that could not be decoded. The decoder skips it and goes on, so a caller
// that gets a *RowError from Next may keep calling Next.
type RowError struct {
	Row    int    // 1-based ordinal of the row (event or stray text) in the input
	Line   int    // 1-based line where the row starts (0 for binary input)
	Offset int64  // byte offset where the row starts
	Event  string // event name, when it was read before the error
	// Pos is where inside the row the problem is, in bytes from the row's
	// start, and ErrOffset the same place as an offset in the input; Pos is
	// -1 when the error has no single position.
	Pos       int
	ErrOffset int64
	Err       error
}

func (e *RowError) Error() string {
	where := fmt.Sprintf("line %d, offset %d", e.Line, e.Offset)
	if e.Line == 0 { // binary input has no lines
		where = fmt.Sprintf("offset %d", e.Offset)
	}
	if e.Event != "" {
		where += ", event " + e.Event
	}
	if e.Pos >= 0 {
		return fmt.Sprintf("row %d (%s): at byte %d of the row (offset %d): %v", e.Row, where, e.Pos, e.ErrOffset, e.Err)
	}
	return fmt.Sprintf("row %d (%s): %v", e.Row, where, e.Err)
}

func (e *RowError) Unwrap() error { return e.Err }

// RingBufferTarget holds the attributes of a ring_buffer target_data
// document (sys.dm_xe_session_targets.target_data). Truncated means the
// XML was cut to fit (events are missing from the document, not from the
// buffer); DroppedCount counts events the session lost.
type RingBufferTarget struct {
	Truncated            bool
	ProcessingTime       uint64
	TotalEventsProcessed uint64
	EventCount           uint64
	DroppedCount         uint64
	MemoryUsed           uint64
}

// DefaultMaxEventSize bounds one event's XML. Showplans are the big ones; a
// few MB is typical, so the default leaves a wide margin while keeping a
// corrupt input (an unterminated CDATA, say) from buffering without bound.
const DefaultMaxEventSize = 256 << 20

const initialBufferSize = 1 << 20

// Decoder reads events from XML: result-set dumps (one event_data per
// line), concatenated <event> elements, or ring_buffer <RingBufferTarget>
// documents, in any mix. Memory use depends on the largest event, not on the
// number of events. A Decoder is not safe for concurrent use.
type Decoder struct {
	r           io.Reader
	buf         []byte
	start       int // first unconsumed byte in buf
	end         int // end of valid data in buf
	eof         bool
	err         error // sticky: io.EOF or a fatal read/format error
	maxEv       int
	reuse       bool
	intern      map[string]string
	internCache [internCacheSize]string

	consumedBytes int64 // bytes dropped from the front of buf
	consumedLines int   // newlines in those bytes
	row           int

	ring     RingBufferTarget
	haveRing bool
	inRing   bool

	// Per-event scratch, reset for every event.
	arena []byte
	// The event's fields in document order, their strings views into the
	// input buffer (or the arena, once fix is applied); isAction tells the
	// actions apart, mixed that a data field follows an action.
	out       []Field
	isAction  []bool
	fix       []fixup
	spare     []Field // materialize's scratch for reordering mixed fields
	mixed     bool
	nActions  int
	ts        span
	haveTS    bool
	evName    string
	evPkg     string
	tsTime    time.Time
	nameTmp   []byte
	rowReader bytes.Reader // DecodeRow's input, when it is copied
	// borrowed: buf is the caller's row (DecodeRow), which is never
	// written to and never handed over to an event.
	borrowed bool
	skipping bool // after a malformed row: looking for the next <event
	lenient  bool

	// recentPkgs are the last field packages the fast path read, tried
	// first on the next; recentEvents and lastEventPkg the same for event
	// names and packages.
	recentPkgs   [2]quotedName
	recentEvents [4]string
	lastEventPkg string

	// proj, when set, selects the fields decoded (project.go); projFields
	// are the data fields kept of projEvent, the last event name seen.
	proj       *projection
	projEvent  string
	projFields *nameSet
	projCache  [8]projEntry
	// layout is the field layout of projEvent, fieldIdx the position of
	// the next field of the event being parsed (layout.go).
	layout   *fieldLayout
	fieldIdx int

	// The date and time of day of the last timestamp parsed (timestamp).
	tsPrefix    [19]byte
	tsBase      time.Time
	tsPrefixSet bool

	deferred        bool   // the event being parsed has escaped spans (decodeDeferred)
	encodingChecked bool   // the first bytes were looked at for UTF-16 (utf16.go)
	transcoded      string // "UTF-16LE" or "UTF-16BE" when the input is transcoded
}

// rawField is a field while the generic code parses it.
type rawField struct {
	name, pkg, typ, typPkg string
	val, text              span
	hasText, action        bool
}

// fixup is a field of out whose strings are made at materialize time:
// text in the arena (which may still move) or decoded in place later.
type fixup struct {
	i         int
	val, text span
}

// NewDecoder returns a decoder reading r.
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{
		r:      r,
		buf:    make([]byte, initialBufferSize),
		maxEv:  DefaultMaxEventSize,
		intern: make(map[string]string, 256),
	}
}

// Reset makes d read r from the start, as a new decoder would, keeping its
// buffers, options and interned names.
func (d *Decoder) Reset(r io.Reader) {
	d.r = r
	d.start, d.end, d.eof, d.err = 0, 0, false, nil
	d.consumedBytes, d.consumedLines, d.row = 0, 0, 0
	d.ring, d.haveRing, d.inRing = RingBufferTarget{}, false, false
	d.skipping = false
	d.evName, d.evPkg = "", ""
	d.encodingChecked, d.transcoded = false, ""
}

// DecodeRow decodes one event_data value, as a row of
// sys.fn_xe_file_target_read_file holds it, reusing d's buffers (so a
// reader of rows keeps one Decoder). The row must hold exactly one <event>.
// Errors are *RowError with Row 1. The event follows d's ReuseEvents mode.
//
// The row is decoded where it lies, without copying it, unless it is UTF-16
// or larger than the event-size limit: in ReuseEvents mode the event's
// strings may then point into row itself, so keep row unchanged while the
// event is in use (as sql.RawBytes are until the next Rows.Next).
func (d *Decoder) DecodeRow(row []byte) (Event, error) {
	if _, _, utf16, _ := utf16Kind(row, true); !utf16 && len(row) <= d.maxEv {
		return d.decodeBorrowed(row)
	}
	d.rowReader.Reset(row)
	d.Reset(&d.rowReader)
	ev, err := d.Next()
	if err == io.EOF {
		return Event{}, &RowError{Row: 1, Line: 1, Pos: -1, Err: errors.New("row holds no <event>")}
	}
	if err != nil {
		return Event{}, err
	}
	// Whatever follows the event is either still buffered or still in the
	// reader; looking at it directly keeps ev's views intact.
	unread := row[len(row)-d.rowReader.Len():]
	if len(bytes.TrimSpace(d.buf[d.start:d.end])) > 0 || len(bytes.TrimSpace(unread)) > 0 {
		return Event{}, &RowError{Row: 1, Line: 1, Event: ev.Name, Pos: -1, Err: errors.New("row holds more than one <event> or trailing text")}
	}
	return ev, nil
}

// decodeBorrowed is DecodeRow decoding row in place: row stands in for the
// decoder's buffer, as a whole input already read to its end.
func (d *Decoder) decodeBorrowed(row []byte) (Event, error) {
	own := d.buf
	d.Reset(nil)
	d.buf, d.end, d.eof, d.encodingChecked, d.borrowed = row, len(row), true, true, true
	// The usual row is one well-formed <event> from its first byte; any
	// other (or a failure) is decoded the general way, which gives the
	// same event or the exact error.
	if has8(row, 0, kEventTag) {
		if end, err := d.parseEvent(row, 0); err == nil && len(bytes.TrimSpace(row[end:])) == 0 {
			d.row = 1
			ev := d.materialize()
			d.buf, d.end, d.borrowed = own, 0, false
			return ev, nil
		}
		d.Reset(nil)
		d.buf, d.end, d.eof, d.encodingChecked = row, len(row), true, true
	}
	ev, err := d.Next()
	rest := row[d.start:]
	d.buf, d.start, d.end, d.borrowed = own, 0, 0, false
	if err == io.EOF {
		return Event{}, &RowError{Row: 1, Line: 1, Pos: -1, Err: errors.New("row holds no <event>")}
	}
	if err != nil {
		return Event{}, err
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return Event{}, &RowError{Row: 1, Line: 1, Event: ev.Name, Pos: -1, Err: errors.New("row holds more than one <event> or trailing text")}
	}
	return ev, nil
}

// ReuseEvents makes Next return views: the Event's Fields, Actions and
// every Raw/Text string then point into buffers the decoder overwrites on
// the next call to Next. Call Event.Clone to keep one. Names are interned
// and stay valid. This removes both per-event allocations; use it when each
// event is consumed (aggregated, written out) before the next is read.
func (d *Decoder) ReuseEvents() { d.reuse = true }

// SkipTextBetweenEvents makes the decoder ignore, instead of reporting as
// malformed rows, any text or markup outside <event> elements: the other
// columns of a result-set dump printed as a table, log lines around pasted
// XML. Events themselves are still checked strictly.
func (d *Decoder) SkipTextBetweenEvents() { d.lenient = true }

// SetMaxEventSize changes the limit on one event's size in bytes
// (DefaultMaxEventSize by default). A larger event stops decoding with an
// error, because the decoder cannot find where the next row begins without
// buffering it.
func (d *Decoder) SetMaxEventSize(n int) { d.maxEv = n }

// RingBuffer returns the attributes of the last <RingBufferTarget> start tag
// read so far, and whether there was one.
func (d *Decoder) RingBuffer() (RingBufferTarget, bool) { return d.ring, d.haveRing }

// Row returns the number of rows (events and malformed rows) read so far.
func (d *Decoder) Row() int { return d.row }

// All iterates over Next's results until io.EOF. A *RowError is yielded and
// decoding goes on; any other error is yielded once and ends the sequence.
func (d *Decoder) All() iter.Seq2[Event, error] { return allEvents(d.Next) }

// allEvents turns a Next method into an iterator: *RowError values are
// yielded and reading goes on, io.EOF ends the sequence quietly, any other
// error is yielded once and ends it.
func allEvents(next func() (Event, error)) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		for {
			ev, err := next()
			if err == io.EOF {
				return
			}
			if !yield(ev, err) {
				return
			}
			var re *RowError
			if err != nil && !errors.As(err, &re) {
				return
			}
		}
	}
}

var errNeedMore = errors.New("need more input")

// syntaxError is a decoding error at a byte position of the buffer.
type syntaxError struct {
	pos int
	msg string
}

func (e *syntaxError) Error() string { return e.msg }

func synErr(pos int, format string, args ...any) error {
	return &syntaxError{pos: pos, msg: fmt.Sprintf(format, args...)}
}

// Next returns the next event. At the end of the input it returns io.EOF.
// A malformed row gives a *RowError; call Next again to go on. Any other
// error (a read error, an event over the size limit) is final.
func (d *Decoder) Next() (Event, error) {
	for {
		if d.err != nil {
			return Event{}, d.err
		}
		if d.skipping {
			if !d.resync() {
				d.fill(1)
				continue
			}
			d.skipping = false
		}
		b := d.buf[:d.end]
		p := d.start
		for p < len(b) && isSpace(b[p]) {
			p++
		}
		d.start = p
		if p == len(b) {
			if d.eof {
				if d.inRing {
					d.inRing = false
					d.err = io.EOF
					return Event{}, d.rowError(p, "", errors.New("ring_buffer document ends without </RingBufferTarget>"))
				}
				d.err = io.EOF
				continue
			}
			d.fill(1)
			continue
		}
		ev, done, err := d.unit(b, p)
		if err == errNeedMore {
			if d.eof {
				// The input ends inside this unit.
				end := d.end
				d.start = d.end
				name := d.evName
				if name == "" {
					return Event{}, d.rowErrorAt(p, end, "", errors.New("input ends inside markup"))
				}
				return Event{}, d.rowErrorAt(p, end, name, errors.New("input ends inside <event>"))
			}
			if d.end-d.start >= d.maxEv {
				d.err = fmt.Errorf("row %d (offset %d): row larger than %d bytes (see SetMaxEventSize)", d.row+1, d.consumedBytes+int64(d.start), d.maxEv)
				return Event{}, d.err
			}
			d.fill(d.end - d.start + 1)
			continue
		}
		if err != nil {
			var se *syntaxError
			if errors.As(err, &se) {
				// Skip to the next <event after the row's start.
				d.start = p + 1
				d.skipping = true
				return Event{}, d.rowError(p, d.evName, err)
			}
			d.err = err
			return Event{}, err
		}
		d.start = done
		if ev {
			return d.materialize(), nil
		}
	}
}

// rowError counts a malformed row starting at buffer position p. A
// *syntaxError names the position of the problem.
func (d *Decoder) rowError(p int, event string, err error) error {
	at := -1
	var se *syntaxError
	if errors.As(err, &se) && se.pos >= p {
		at = se.pos
	}
	return d.rowErrorAt(p, at, event, err)
}

// rowErrorAt is rowError with the problem's buffer position given (-1 for
// none).
func (d *Decoder) rowErrorAt(p, at int, event string, err error) error {
	d.row++
	re := &RowError{
		Row:    d.row,
		Line:   d.consumedLines + bytes.Count(d.buf[:p], newline) + 1,
		Offset: d.consumedBytes + int64(p),
		Event:  event,
		Pos:    -1,
		Err:    err,
	}
	if at >= p {
		re.Pos, re.ErrOffset = at-p, d.consumedBytes+int64(at)
	}
	if d.transcoded != "" {
		re.Err = fmt.Errorf("%w (the input is %s, read as UTF-8: offsets count UTF-8 bytes)", err, d.transcoded)
	}
	return re
}

var newline = []byte{'\n'}

// resync moves d.start to the next "<event" start tag after a malformed
// row. It reports false when the buffer holds none yet (the tail that could
// begin one is kept).
func (d *Decoder) resync() bool {
	b := d.buf[:d.end]
	p := d.start
	for p < len(b) {
		i := bytes.Index(b[p:], bLitEventOpen)
		if i < 0 {
			break
		}
		q := p + i + len(litEventOpen)
		if q >= len(b) {
			d.start = p + i
			return d.eof
		}
		if isNameEnd(b[q]) {
			d.start = p + i
			return true
		}
		p = q
	}
	if d.eof {
		d.start = len(b)
		return true
	}
	keep := len(b) - len(litEventOpen)
	if keep > d.start {
		d.start = keep
	}
	return false
}

// fill makes room and reads until at least min more bytes are buffered, the
// input ends, or the reader fails.
func (d *Decoder) fill(min int) {
	if !d.encodingChecked {
		if d.checkEncoding(); d.err != nil || (d.end > 0 && !d.eof) {
			return
		}
	}
	d.fillRaw(min)
}

func (d *Decoder) fillRaw(min int) {
	if d.start > 0 {
		d.consumedLines += bytes.Count(d.buf[:d.start], newline)
		d.consumedBytes += int64(d.start)
		n := copy(d.buf, d.buf[d.start:d.end])
		d.end = n
		d.start = 0
	}
	if d.end+min > len(d.buf) {
		size := 2 * len(d.buf)
		for d.end+min > size {
			size *= 2
		}
		// Never grow past the event-size limit (plus read slack), and once
		// past a quarter of it go straight there: the old buffer (at most
		// half the limit) and the new one then cost at most 1.5× the limit
		// while the data is copied.
		if limit := d.maxEv + initialBufferSize; size > limit || size > d.maxEv/2 && len(d.buf) < limit {
			size = max(limit, d.end+1)
		}
		nb := make([]byte, size)
		copy(nb, d.buf[:d.end])
		d.buf = nb
	}
	got := 0
	empty := 0
	for got < min {
		n, err := d.r.Read(d.buf[d.end:])
		d.end += n
		got += n
		if err == io.EOF {
			d.eof = true
			return
		}
		if err != nil {
			d.err = fmt.Errorf("read event XML at offset %d: %w", d.consumedBytes+int64(d.end), err)
			return
		}
		if n == 0 {
			empty++
			if empty > 100 {
				d.err = io.ErrNoProgress
				return
			}
		}
		if d.end == len(d.buf) {
			return
		}
	}
}

// checkEncoding looks at the input's first bytes, once, for UTF-16.
func (d *Decoder) checkEncoding() {
	if d.consumedBytes != 0 || d.start != 0 {
		d.encodingChecked = true
		return
	}
	for !d.eof && d.err == nil && d.end < 4 {
		d.fillRaw(4 - d.end)
	}
	if d.err == nil {
		d.detectUTF16()
	}
}

// unit decodes one top-level unit at b[p] (p is not whitespace). It returns
// whether an event was decoded and where the unit ends.
func (d *Decoder) unit(b []byte, p int) (bool, int, error) {
	d.evName = ""
	switch b[p] {
	case '<':
		if m := matchTag(b, p, litEventOpen); m != 0 {
			if m < 0 {
				return false, 0, errNeedMore
			}
			end, err := d.parseEvent(b, p)
			if err != nil {
				return false, 0, err
			}
			d.row++
			return true, end, nil
		}
		if m := match(b, p, litComment); m != 0 {
			if m < 0 {
				return false, 0, errNeedMore
			}
			i := bytes.Index(b[p+4:], bLitCommentEnd)
			if i < 0 {
				return false, 0, errNeedMore
			}
			return false, p + 4 + i + 3, nil
		}
		if m := match(b, p, litPI); m != 0 {
			if m < 0 {
				return false, 0, errNeedMore
			}
			i := bytes.Index(b[p+2:], bLitPIEnd)
			if i < 0 {
				return false, 0, errNeedMore
			}
			return false, p + 2 + i + 2, nil
		}
		if m := matchTag(b, p, litRingOpen); m != 0 {
			if m < 0 {
				return false, 0, errNeedMore
			}
			return d.parseRingOpen(b, p)
		}
		if m := matchTag(b, p, litRingClose); m != 0 {
			if m < 0 {
				return false, 0, errNeedMore
			}
			q := skipSpace(b, p+len(litRingClose))
			if q >= len(b) {
				return false, 0, errNeedMore
			}
			if b[q] != '>' {
				return false, 0, synErr(p, "malformed </RingBufferTarget>")
			}
			if !d.inRing {
				return false, 0, synErr(p, "</RingBufferTarget> without its start tag")
			}
			d.inRing = false
			return false, q + 1, nil
		}
		if m := match(b, p, litDOCTYPE); m == 1 && p+2 < len(b) && b[p+2] != '[' {
			i := bytes.IndexByte(b[p:], '>')
			if i < 0 {
				return false, 0, errNeedMore
			}
			return false, p + i + 1, nil
		}
		if d.lenient {
			d.skipping = true
			return false, p + 1, nil
		}
		tag, _ := tagAt(b, p)
		return false, 0, synErr(p, "unexpected %q outside an <event>", tag)
	case 0xEF:
		if m := match(b, p, litBOM); m != 0 {
			if m < 0 {
				return false, 0, errNeedMore
			}
			return false, p + 3, nil
		}
	case 0xFE, 0xFF:
		if p+1 < len(b) && (b[p+1] == 0xFE || b[p+1] == 0xFF) && b[p] != b[p+1] {
			return false, 0, errors.New("input is UTF-16; convert it to UTF-8 first (e.g. iconv -f UTF-16 -t UTF-8)")
		}
	}
	if d.lenient {
		d.skipping = true
		return false, p + 1, nil
	}
	q := p
	for q < len(b) && b[q] != '\n' && q-p < 40 {
		q++
	}
	return false, 0, synErr(p, "unexpected text %q outside an <event>", string(b[p:q]))
}

// internBytes returns a stable string equal to b, shared by all equal names.
// A small direct-mapped cache in front of the map catches the few names a
// stream repeats (event, field and package names) with one compare.
func (d *Decoder) internBytes(b []byte) string {
	var h uint
	if len(b) > 0 {
		h = (uint(len(b))*131 + uint(b[0])*31 + uint(b[len(b)-1])*7 + uint(b[len(b)/2])) & (internCacheSize - 1)
		if c := d.internCache[h]; c == string(b) {
			return c
		}
	}
	if s, ok := d.intern[string(b)]; ok {
		d.internCache[h] = s
		return s
	}
	s := string(b)
	if len(d.intern) < 1<<16 {
		d.intern[s] = s
		d.internCache[h] = s
	}
	return s
}

const internCacheSize = 256

// attrString decodes entities in an attribute value and interns it.
func (d *Decoder) attrString(val []byte, pos int) (string, error) {
	if bytes.IndexByte(val, '&') < 0 {
		return d.internBytes(val), nil
	}
	d.nameTmp = d.nameTmp[:0]
	var err error
	d.nameTmp, err = appendDecoded(d.nameTmp, val, pos)
	if err != nil {
		return "", err
	}
	return d.internBytes(d.nameTmp), nil
}

// parseEvent decodes the <event …>…</event> at b[p] into the scratch state
// and returns the position after it.
func (d *Decoder) parseEvent(b []byte, p int) (int, error) {
	evStart := p
	d.arena = d.arena[:0]
	d.out, d.isAction, d.fix = d.out[:0], d.isAction[:0], d.fix[:0]
	d.deferred, d.mixed = false, false
	d.nActions = 0
	d.evName, d.evPkg = "", ""
	d.haveTS = false
	p += len(litEventOpen)
	selfClosing := false
	if q, ok := d.quickEventTag(b, p); ok {
		p = q
	} else {
		var err error
		if p, selfClosing, err = d.parseEventTag(b, p); err != nil {
			return 0, err
		}
	}
	if d.evName == "" {
		return 0, synErr(evStart, "<event> has no name attribute")
	}
	if !d.haveTS {
		return 0, synErr(evStart, "<event name=%q> has no timestamp attribute", d.evName)
	}
	tsText := d.bytesOf(b, d.ts)
	t, err := d.timestamp(tsText)
	if err != nil {
		return 0, synErr(evStart, "<event name=%q> timestamp %q: %v", d.evName, tsText, err)
	}
	d.tsTime = t
	if d.proj != nil {
		d.selectFields()
	}
	if selfClosing {
		return p, nil
	}
	for {
		p = skipSpace(b, p)
		if p >= len(b) {
			return 0, errNeedMore
		}
		if b[p] != '<' {
			return 0, synErr(p, "unexpected text inside <event name=%q>", d.evName)
		}
		if p+1 >= len(b) {
			return 0, errNeedMore
		}
		var err error
		// The usual tags, eight bytes at a time; matchTag below decides
		// the others.
		switch {
		case has8(b, p, kDataTag):
			if p, err = d.field(b, p+len(litData), false); err != nil {
				return 0, err
			}
			continue
		case has8(b, p, kActionTag):
			if p, err = d.field(b, p+len(litAction), true); err != nil {
				return 0, err
			}
			continue
		case has8(b, p, kEventEnd):
			return p + len(litEventClose) + 1, nil
		}
		switch b[p+1] {
		case 'd':
			if m := matchTag(b, p, litData); m == 1 {
				p, err = d.field(b, p+len(litData), false)
				if err != nil {
					return 0, err
				}
				continue
			} else if m < 0 {
				return 0, errNeedMore
			}
		case 'a':
			if m := matchTag(b, p, litAction); m == 1 {
				p, err = d.field(b, p+len(litAction), true)
				if err != nil {
					return 0, err
				}
				continue
			} else if m < 0 {
				return 0, errNeedMore
			}
		case '/':
			if m := matchTag(b, p, litEventClose); m == 1 {
				q := skipSpace(b, p+len(litEventClose))
				if q >= len(b) {
					return 0, errNeedMore
				}
				if b[q] != '>' {
					return 0, synErr(q, "malformed </event>")
				}
				return q + 1, nil
			} else if m < 0 {
				return 0, errNeedMore
			}
		case '!':
			if m := match(b, p, litComment); m == 1 {
				i := bytes.Index(b[p+4:], bLitCommentEnd)
				if i < 0 {
					return 0, errNeedMore
				}
				p += 4 + i + 3
				continue
			} else if m < 0 {
				return 0, errNeedMore
			}
		}
		tag, ok := tagAt(b, p)
		if !ok {
			return 0, errNeedMore
		}
		return 0, synErr(p, "unexpected %q inside <event name=%q>", tag, d.evName)
	}
}

// parseEventTag reads the attributes of an <event> start tag (p just after
// "<event") in any form, and returns the position after the tag and whether
// the element is empty (<event …/>).
func (d *Decoder) parseEventTag(b []byte, p int) (int, bool, error) {
	for {
		p = skipSpace(b, p)
		if p >= len(b) {
			return 0, false, errNeedMore
		}
		if b[p] == '>' {
			return p + 1, false, nil
		}
		if b[p] == '/' {
			if p+1 >= len(b) {
				return 0, false, errNeedMore
			}
			if b[p+1] != '>' {
				return 0, false, synErr(p, "malformed <event> start tag")
			}
			return p + 2, true, nil
		}
		name, val, next, err := attr(b, p)
		if err != nil {
			return 0, false, err
		}
		switch string(name) {
		case "name":
			if d.evName, err = d.attrString(val, p); err != nil {
				return 0, false, err
			}
		case "package":
			if d.evPkg, err = d.attrString(val, p); err != nil {
				return 0, false, err
			}
		case "timestamp":
			d.haveTS = true
			if bytes.IndexByte(val, '&') < 0 {
				d.ts = span{off: offsetIn(b, val), n: len(val), inBuf: true}
			} else {
				start := len(d.arena)
				if d.arena, err = appendDecoded(d.arena, val, p); err != nil {
					return 0, false, err
				}
				d.ts = span{off: start, n: len(d.arena) - start}
			}
		}
		p = next
	}
}

// parseField decodes a <data> or <action> element; p is just after the tag
// name.
func (d *Decoder) parseField(b []byte, p int, action bool) (int, error) {
	if next, ok := d.quickField(b, p, action); ok {
		return next, nil
	}
	f := rawField{action: action}
	elem := "data"
	if action {
		elem = "action"
	}
	tagStart := p
	selfClosing := false
	for {
		p = skipSpace(b, p)
		if p >= len(b) {
			return 0, errNeedMore
		}
		if b[p] == '>' {
			p++
			break
		}
		if b[p] == '/' {
			if p+1 >= len(b) {
				return 0, errNeedMore
			}
			if b[p+1] != '>' {
				return 0, synErr(p, "malformed <%s> tag", elem)
			}
			p += 2
			selfClosing = true
			break
		}
		if val, next, ok := quickAttr(b, p, `name="`); ok {
			f.name = d.internBytes(val)
			p = next
			continue
		}
		if val, next, ok := quickAttr(b, p, `package="`); ok {
			f.pkg = d.internBytes(val)
			p = next
			continue
		}
		name, val, next, err := attr(b, p)
		if err != nil {
			return 0, err
		}
		switch string(name) {
		case "name":
			if f.name, err = d.attrString(val, p); err != nil {
				return 0, err
			}
		case "package":
			if f.pkg, err = d.attrString(val, p); err != nil {
				return 0, err
			}
		}
		p = next
	}
	if f.name == "" {
		return 0, synErr(tagStart, "<%s> without a name attribute", elem)
	}
	haveValue := false
	kindHint := hintEmpty
	if !selfClosing {
	children:
		for {
			p = skipSpace(b, p)
			if p+1 >= len(b) {
				return 0, errNeedMore
			}
			if b[p] != '<' {
				return 0, synErr(p, "unexpected text inside <%s name=%q>", elem, f.name)
			}
			var err error
			switch b[p+1] {
			case 'v':
				if m := matchTag(b, p, litValue); m == 1 {
					if haveValue {
						return 0, synErr(p, "<%s name=%q> has two <value> elements", elem, f.name)
					}
					haveValue = true
					p, kindHint, f.val, err = d.parseContent(b, p+len(litValue), "value", true)
					if err != nil {
						return 0, err
					}
					continue
				} else if m < 0 {
					return 0, errNeedMore
				}
			case 't':
				if m := matchTag(b, p, litText); m == 1 {
					if f.hasText {
						return 0, synErr(p, "<%s name=%q> has two <text> elements", elem, f.name)
					}
					f.hasText = true
					p, _, f.text, err = d.parseContent(b, p+len(litText), "text", false)
					if err != nil {
						return 0, err
					}
					continue
				} else if m < 0 {
					return 0, errNeedMore
				}
				if m := matchTag(b, p, litType); m == 1 {
					p, err = d.parseType(b, p+len(litType), &f)
					if err != nil {
						return 0, err
					}
					continue
				} else if m < 0 {
					return 0, errNeedMore
				}
			case '/':
				q := p + 2
				if m := match(b, q, elem); m == 1 {
					q = skipSpace(b, q+len(elem))
					if q >= len(b) {
						return 0, errNeedMore
					}
					if b[q] == '>' {
						p = q + 1
						break children
					}
				} else if m < 0 {
					return 0, errNeedMore
				}
			case '!':
				if m := match(b, p, litComment); m == 1 {
					i := bytes.Index(b[p+4:], bLitCommentEnd)
					if i < 0 {
						return 0, errNeedMore
					}
					p += 4 + i + 3
					continue
				} else if m < 0 {
					return 0, errNeedMore
				}
			}
			tag, ok := tagAt(b, p)
			if !ok {
				return 0, errNeedMore
			}
			return 0, synErr(p, "unexpected %q inside <%s name=%q>", tag, elem, f.name)
		}
	}
	d.addField(&f, d.bytesOf(b, f.val), kindHint)
	return p, nil
}

// addField decides the kind of a parsed field's value from how its content
// looked (hint) and its <type>, and adds it to the event being parsed.
func (d *Decoder) addField(f *rawField, val []byte, hint contentHint) {
	kind, bits := kindOf(f.typ, val, hint)
	d.fix = append(d.fix, fixup{i: len(d.out), val: f.val, text: f.text})
	d.appendField(f.action).set(f.name, f.pkg, f.typ, f.typPkg, kind, bits, f.hasText)
}

// appendField adds a zero field to out and returns it.
func (d *Decoder) appendField(action bool) *Field {
	if action {
		d.nActions++
	} else if d.nActions > 0 {
		d.mixed = true
	}
	d.out = append(d.out, Field{})
	d.isAction = append(d.isAction, action)
	return &d.out[len(d.out)-1]
}

// set fills in a field but for its strings.
func (f *Field) set(name, pkg, typ, typPkg string, kind Kind, bits uint64, hasText bool) {
	f.Name, f.Package = name, pkg
	f.Value.Type, f.Value.TypePackage = typ, typPkg
	f.Value.Kind, f.Value.bits, f.Value.HasText = kind, bits, hasText
}

// dropFieldsFrom removes out[n:] (fields a projection does not keep).
func (d *Decoder) dropFieldsFrom(n int) {
	for _, a := range d.isAction[n:] {
		if a {
			d.nActions--
		}
	}
	d.out, d.isAction = d.out[:n], d.isAction[:n]
	for len(d.fix) > 0 && d.fix[len(d.fix)-1].i >= n {
		d.fix = d.fix[:len(d.fix)-1]
	}
}

// kindOf decides the kind of a value from how its content looked (hint)
// and its <type> name (typ, "" without one).
func kindOf(typ string, val []byte, hint contentHint) (Kind, uint64) {
	switch hint {
	case hintEmpty:
		if typ != "" {
			k, bits := classify(val, typ)
			if k == KindEmpty && isStringType(typ) {
				k = KindString
			}
			return k, bits
		}
		return KindEmpty, 0
	case hintCDATA:
		return KindString, 0
	case hintXML:
		return KindXML, 0
	}
	return classify(val, typ)
}

func isStringType(t string) bool {
	switch t {
	case "unicode_string", "ansi_string", "callstack", "unicode_string_ptr", "ansi_string_ptr":
		return true
	}
	return false
}

// parseType reads <type name="…" package="…"/> (or with an end tag).
func (d *Decoder) parseType(b []byte, p int, f *rawField) (int, error) {
	for {
		p = skipSpace(b, p)
		if p >= len(b) {
			return 0, errNeedMore
		}
		if b[p] == '/' {
			if p+1 >= len(b) {
				return 0, errNeedMore
			}
			if b[p+1] != '>' {
				return 0, synErr(p, "malformed <type>")
			}
			return p + 2, nil
		}
		if b[p] == '>' {
			p = skipSpace(b, p+1)
			const closeType = "</type"
			if m := match(b, p, closeType); m != 1 {
				if m < 0 {
					return 0, errNeedMore
				}
				return 0, synErr(p, "<type> must be empty")
			}
			q := skipSpace(b, p+len(closeType))
			if q >= len(b) {
				return 0, errNeedMore
			}
			if b[q] != '>' {
				return 0, synErr(q, "malformed </type>")
			}
			return q + 1, nil
		}
		name, val, next, err := attr(b, p)
		if err != nil {
			return 0, err
		}
		switch string(name) {
		case "name":
			if f.typ, err = d.attrString(val, p); err != nil {
				return 0, err
			}
		case "package":
			if f.typPkg, err = d.attrString(val, p); err != nil {
				return 0, err
			}
		}
		p = next
	}
}

type contentHint uint8

const (
	hintEmpty contentHint = iota // no characters at all
	hintText                     // plain text (perhaps mixed with CDATA)
	hintCDATA                    // only CDATA sections
	hintXML                      // child elements
)

// span locates decoded text: in the input buffer (text that needed no
// decoding, used in place) or in the arena.
type span struct {
	off, n int
	inBuf  bool
	// escaped marks a large value left undecoded in the input buffer during
	// parsing (its references were checked); materialize decodes it in
	// place, so a huge escaped value never has a second copy.
	escaped bool
}

// deferDecodeSize is the size from which a value's character references
// are decoded in place at materialize time rather than into the arena.
const deferDecodeSize = 64 << 10

// bytesOf returns the bytes of sp.
func (d *Decoder) bytesOf(b []byte, sp span) []byte {
	if sp.inBuf {
		return b[sp.off : sp.off+sp.n]
	}
	return d.arena[sp.off : sp.off+sp.n]
}

// textAcc gathers the pieces of character data (text runs, CDATA
// sections). A single clean piece stays in the input buffer; a second piece
// or one that needs decoding moves the whole value into the arena.
type textAcc struct {
	sp     span
	pieces int
}

func (a *textAcc) clean(d *Decoder, b []byte, off, n int) {
	if n == 0 {
		return
	}
	if a.pieces == 0 {
		a.sp = span{off: off, n: n, inBuf: true}
		a.pieces = 1
		return
	}
	a.toArena(d, b)
	d.arena = append(d.arena, b[off:off+n]...)
	a.sp.n = len(d.arena) - a.sp.off
	a.pieces++
}

// toArena makes the arena hold the value so far.
func (a *textAcc) toArena(d *Decoder, b []byte) {
	if a.pieces == 0 {
		a.sp = span{off: len(d.arena)}
		a.pieces = 1
		return
	}
	if a.sp.inBuf {
		start := len(d.arena)
		if a.sp.escaped {
			d.arena, _ = appendDecoded(d.arena, b[a.sp.off:a.sp.off+a.sp.n], a.sp.off) // checked when deferred
		} else {
			d.arena = append(d.arena, b[a.sp.off:a.sp.off+a.sp.n]...)
		}
		a.sp = span{off: start, n: len(d.arena) - start}
	}
}

// checkReferences reports the first malformed reference in seg (at buffer
// position pos) without keeping the decoded text: it decodes through a
// small scratch buffer, cutting seg only just before an '&'.
func (d *Decoder) checkReferences(seg []byte, pos int) error {
	for len(seg) > 0 {
		n := min(len(seg), 32<<10)
		if n < len(seg) {
			if j := bytes.LastIndexByte(seg[:n], '&'); j > 0 {
				n = j
			}
		}
		var err error
		if d.nameTmp, err = appendDecoded(d.nameTmp[:0], seg[:n], pos); err != nil {
			return err
		}
		seg, pos = seg[n:], pos+n
	}
	return nil
}

// decodeDeferred decodes the escaped spans of the current event in place in
// the buffer (the text only shrinks), now that the event has been parsed
// and will not be read again.
func (d *Decoder) decodeDeferred(b []byte) {
	if !d.deferred {
		return
	}
	d.deferred = false
	fix := func(sp *span) {
		if sp.escaped {
			out, _ := appendDecoded(b[sp.off:sp.off:sp.off+sp.n], b[sp.off:sp.off+sp.n], sp.off)
			sp.n, sp.escaped = len(out), false
		}
	}
	for i := range d.fix {
		fix(&d.fix[i].val)
		fix(&d.fix[i].text)
	}
}

// parseContent decodes the content of <value> or <text> (p just after the
// tag name) and returns where it is and the position after the end tag.
func (d *Decoder) parseContent(b []byte, p int, elem string, allowXML bool) (int, contentHint, span, error) {
	var acc textAcc
	p = skipSpace(b, p)
	if p >= len(b) {
		return 0, 0, span{}, errNeedMore
	}
	if b[p] == '/' {
		if p+1 >= len(b) {
			return 0, 0, span{}, errNeedMore
		}
		if b[p+1] != '>' {
			return 0, 0, span{}, synErr(p, "malformed <%s/>", elem)
		}
		return p + 2, hintEmpty, span{}, nil
	}
	if b[p] != '>' {
		return 0, 0, span{}, synErr(p, "<%s> takes no attributes", elem)
	}
	p++
	contentStart := p
	hint := hintEmpty
	sawText := false
	for {
		// Short values are the common case: one pass over them finds the
		// '<' and tells whether anything needs decoding.
		i := p
		for i < len(b) && i-p < 32 && !textSpecial[b[i]] {
			i++
		}
		if i < len(b) && b[i] == '<' {
			if i > p {
				acc.clean(d, b, p, i-p)
				sawText = true
			}
			p = i
		} else {
			i := bytes.IndexByte(b[p:], '<')
			if i < 0 {
				return 0, 0, span{}, errNeedMore
			}
			if i > 0 {
				seg := b[p : p+i]
				if bytes.IndexByte(seg, '&') < 0 && bytes.IndexByte(seg, '\r') < 0 {
					acc.clean(d, b, p, i)
				} else if acc.pieces == 0 && len(seg) >= deferDecodeSize && !d.borrowed {
					if err := d.checkReferences(seg, p); err != nil {
						return 0, 0, span{}, err
					}
					acc.sp = span{off: p, n: i, inBuf: true, escaped: true}
					acc.pieces = 1
					d.deferred = true
				} else {
					acc.toArena(d, b)
					var err error
					if d.arena, err = appendDecoded(d.arena, seg, p); err != nil {
						return 0, 0, span{}, err
					}
					acc.sp.n = len(d.arena) - acc.sp.off
					acc.pieces++
				}
				sawText = true
			}
			p += i
		}
		if p+1 >= len(b) {
			return 0, 0, span{}, errNeedMore
		}
		switch b[p+1] {
		case '/':
			q := p + 2
			m := match(b, q, elem)
			if m < 0 {
				return 0, 0, span{}, errNeedMore
			}
			if m == 1 {
				q = skipSpace(b, q+len(elem))
				if q >= len(b) {
					return 0, 0, span{}, errNeedMore
				}
				if b[q] == '>' {
					if sawText {
						hint = hintText
					}
					if acc.pieces == 0 {
						acc.sp = span{}
					}
					return q + 1, hint, acc.sp, nil
				}
			}
			return 0, 0, span{}, synErr(p, "unexpected end tag inside <%s>", elem)
		case '!':
			if m := match(b, p, litCDATA); m != 0 {
				if m < 0 {
					return 0, 0, span{}, errNeedMore
				}
				s := p + len(litCDATA)
				j := bytes.Index(b[s:], bLitCDATAEnd)
				if j < 0 {
					return 0, 0, span{}, errNeedMore
				}
				if bytes.IndexByte(b[s:s+j], '\r') < 0 {
					acc.clean(d, b, s, j)
				} else {
					acc.toArena(d, b)
					d.arena = appendNormalizedNewlines(d.arena, b[s:s+j])
					acc.sp.n = len(d.arena) - acc.sp.off
					acc.pieces++
				}
				if hint == hintEmpty {
					hint = hintCDATA
				}
				p = s + j + len(litCDATAEnd)
				continue
			}
			if m := match(b, p, litComment); m != 0 {
				if m < 0 {
					return 0, 0, span{}, errNeedMore
				}
				j := bytes.Index(b[p+4:], bLitCommentEnd)
				if j < 0 {
					return 0, 0, span{}, errNeedMore
				}
				p += 4 + j + 3
				continue
			}
			return 0, 0, span{}, synErr(p, "unexpected markup inside <%s>", elem)
		default:
			if !allowXML {
				return 0, 0, span{}, synErr(p, "unexpected element inside <%s>", elem)
			}
			end, close, err := scanXML(b, contentStart, elem)
			if err != nil {
				return 0, 0, span{}, err
			}
			s, e := contentStart, end
			for s < e && isSpace(b[s]) {
				s++
			}
			for e > s && isSpace(b[e-1]) {
				e--
			}
			return close, hintXML, span{off: s, n: e - s, inBuf: true}, nil
		}
	}
}

// materialize turns the scratch state into an Event. Without ReuseEvents it
// makes exactly two allocations: one block holding all text, one slice
// holding Fields and Actions. With ReuseEvents the text is used where it
// lies (input buffer or arena).
func (d *Decoder) materialize() Event {
	b := d.buf[:d.end]
	d.decodeDeferred(b)
	for _, fx := range d.fix {
		v := &d.out[fx.i].Value
		v.Raw = d.view(b, fx.val)
		if v.HasText {
			v.Text = d.view(b, fx.text)
		}
	}
	ts := d.view(b, d.ts)
	fields := d.out
	if d.mixed {
		fields = d.dataFirst()
	}
	if !d.reuse {
		fields, ts = d.owned(fields, ts)
	}
	nData := len(fields) - d.nActions
	ev := Event{Name: d.evName, Package: d.evPkg, Timestamp: Timestamp{Raw: ts, Time: d.tsTime}}
	if nData > 0 {
		ev.Fields = fields[:nData:nData]
	}
	if len(fields) > nData {
		ev.Actions = fields[nData:]
	}
	return ev
}

// view returns the text of sp as a string sharing its memory.
func (d *Decoder) view(b []byte, sp span) string {
	if sp.n == 0 {
		return ""
	}
	if sp.inBuf {
		return unsafe.String(&b[sp.off], sp.n)
	}
	return unsafe.String(&d.arena[sp.off], sp.n)
}

// dataFirst reorders out so the data fields come before the actions, each
// in document order.
func (d *Decoder) dataFirst() []Field {
	d.spare = d.spare[:0]
	for _, action := range []bool{false, true} {
		for i := range d.out {
			if d.isAction[i] == action {
				d.spare = append(d.spare, d.out[i])
			}
		}
	}
	d.out, d.spare = d.spare, d.out
	return d.out
}

// owned copies an event's fields and text out of the decoder's buffers:
// one block for all text, filled once and never written again (so strings
// over it are immutable), one slice for the fields.
func (d *Decoder) owned(fields []Field, ts string) ([]Field, string) {
	total := len(ts)
	for i := range fields {
		total += len(fields[i].Value.Raw) + len(fields[i].Value.Text)
	}
	var out []Field
	if len(fields) > 0 {
		out = make([]Field, len(fields))
		copy(out, fields)
	}
	if total >= handOverSize && !d.borrowed {
		// A huge event keeps the buffer (and arena) it lies in, instead of
		// a copy: the decoder takes fresh ones. Memory then stays near the
		// event's own size (TestHugeValueMemory).
		d.handOver()
		return out, ts
	}
	if total == 0 {
		return out, ts
	}
	block := make([]byte, 0, total)
	all := unsafe.String(unsafe.SliceData(block), total)
	take := func(s string) string {
		if s == "" {
			return ""
		}
		start := len(block)
		block = append(block, s...)
		return all[start:len(block)]
	}
	ts = take(ts)
	for i := range out {
		v := &out[i].Value
		v.Raw = take(v.Raw)
		v.Text = take(v.Text)
	}
	return out, ts
}

// handOverSize is the event text size from which materialize gives the
// event the decoder's buffers instead of copying out of them.
const handOverSize = 4 << 20

// handOver replaces the buffer and arena, which the event just decoded now
// owns, with fresh ones; the unread rest of the buffer moves along.
func (d *Decoder) handOver() {
	rest := d.buf[d.start:d.end]
	d.consumedLines += bytes.Count(d.buf[:d.start], newline)
	d.consumedBytes += int64(d.start)
	nb := make([]byte, max(initialBufferSize, 2*len(rest)))
	d.end = copy(nb, rest)
	d.start = 0
	d.buf = nb
	d.arena = nil
}

// parseRingOpen reads the <RingBufferTarget …> start tag.
func (d *Decoder) parseRingOpen(b []byte, p int) (bool, int, error) {
	start := p
	p += len(litRingOpen)
	var rb RingBufferTarget
	for {
		p = skipSpace(b, p)
		if p >= len(b) {
			return false, 0, errNeedMore
		}
		if b[p] == '>' || b[p] == '/' {
			self := b[p] == '/'
			if self {
				if p+1 >= len(b) {
					return false, 0, errNeedMore
				}
				if b[p+1] != '>' {
					return false, 0, synErr(p, "malformed <RingBufferTarget> tag")
				}
				p++
			}
			if d.inRing {
				return false, 0, synErr(start, "<RingBufferTarget> inside another")
			}
			d.ring, d.haveRing, d.inRing = rb, true, !self
			return false, p + 1, nil
		}
		name, val, next, err := attr(b, p)
		if err != nil {
			return false, 0, err
		}
		var dst *uint64
		switch string(name) {
		case "truncated":
			u, ok := parseUintBytes(trimSpaceBytes(val))
			if !ok && string(val) != "true" && string(val) != "false" {
				return false, 0, synErr(p, "RingBufferTarget truncated=%q is not a number", val)
			}
			rb.Truncated = u != 0 || string(val) == "true"
		case "processingTime":
			dst = &rb.ProcessingTime
		case "totalEventsProcessed":
			dst = &rb.TotalEventsProcessed
		case "eventCount":
			dst = &rb.EventCount
		case "droppedCount":
			dst = &rb.DroppedCount
		case "memoryUsed":
			dst = &rb.MemoryUsed
		}
		if dst != nil {
			u, ok := parseUintBytes(trimSpaceBytes(val))
			if !ok {
				return false, 0, synErr(p, "RingBufferTarget %s=%q is not a number", name, val)
			}
			*dst = u
		}
		p = next
	}
}

package xe

import (
	"errors"
	"strings"
	"time"
)

// Event is one Extended Events event, generic: every <data> and <action>
// of the XML is kept, in document order, whatever the event.
//
// Events returned by a Decoder own their memory unless the decoder was told
// to reuse buffers (Decoder.ReuseEvents); see Clone.
type Event struct {
	Name      string // e.g. "lock_acquired"
	Package   string // e.g. "sqlserver"
	Timestamp Timestamp
	Fields    []Field // <data> elements
	Actions   []Field // <action> elements
}

// Field is a named value: a <data> element (Package is "") or an <action>
// element (Package is the action's package, e.g. "sqlserver", "package0").
type Field struct {
	Name    string
	Package string
	Value   Value
}

// Timestamp is an event time. Raw keeps the attribute exactly as printed,
// every fractional digit included (event XML prints milliseconds; other
// sources print 100 ns ticks); Time is the parsed instant in UTC, exact to
// the nanosecond (digits beyond nine are kept only in Raw).
type Timestamp struct {
	Raw  string
	Time time.Time
}

// RFC3339 returns the timestamp as RFC 3339 with every digit of Raw: Raw
// itself when it already is RFC 3339, otherwise Raw with a "T" separator
// and a "Z" added (a zone-less timestamp is read as UTC).
func (t Timestamp) RFC3339() string {
	r := strings.TrimSpace(t.Raw)
	if len(r) > 10 && r[10] == ' ' {
		r = r[:10] + "T" + r[11:]
	}
	if !hasZone(r) {
		r += "Z"
	}
	return r
}

func hasZone(r string) bool {
	if strings.HasSuffix(r, "Z") || strings.HasSuffix(r, "z") {
		return true
	}
	// ±hh:mm after the time part.
	return len(r) >= 25 && (r[len(r)-6] == '+' || r[len(r)-6] == '-') && r[len(r)-3] == ':'
}

// Data returns the value of the <data> field named name.
func (ev *Event) Data(name string) (Value, bool) {
	for i := range ev.Fields {
		if ev.Fields[i].Name == name {
			return ev.Fields[i].Value, true
		}
	}
	return Value{}, false
}

// Action returns the value of the action named name (any package).
func (ev *Event) Action(name string) (Value, bool) {
	for i := range ev.Actions {
		if ev.Actions[i].Name == name {
			return ev.Actions[i].Value, true
		}
	}
	return Value{}, false
}

// Clone returns a deep copy that owns all of its memory, using exactly two
// allocations (one for all text, one for Fields and Actions). Use it to
// keep an event from a decoder in ReuseEvents mode past the next call to
// Next. Names (event, field, package, type) are interned by the decoder and
// never change, so they are shared, not copied.
func (ev *Event) Clone() Event {
	n := len(ev.Timestamp.Raw)
	for _, f := range ev.Fields {
		n += len(f.Value.Raw) + len(f.Value.Text)
	}
	for _, f := range ev.Actions {
		n += len(f.Value.Raw) + len(f.Value.Text)
	}
	var sb strings.Builder
	sb.Grow(n)
	sb.WriteString(ev.Timestamp.Raw)
	for _, f := range ev.Fields {
		sb.WriteString(f.Value.Raw)
		sb.WriteString(f.Value.Text)
	}
	for _, f := range ev.Actions {
		sb.WriteString(f.Value.Raw)
		sb.WriteString(f.Value.Text)
	}
	all := sb.String()
	out := *ev
	p := 0
	take := func(k int) string { s := all[p : p+k]; p += k; return s }
	out.Timestamp.Raw = take(len(ev.Timestamp.Raw))
	fields := make([]Field, len(ev.Fields)+len(ev.Actions))
	copy(fields, ev.Fields)
	copy(fields[len(ev.Fields):], ev.Actions)
	for i := range fields {
		fields[i].Value.Raw = take(len(fields[i].Value.Raw))
		fields[i].Value.Text = take(len(fields[i].Value.Text))
	}
	out.Fields = fields[:len(ev.Fields):len(ev.Fields)]
	out.Actions = fields[len(ev.Fields):]
	if len(ev.Fields) == 0 {
		out.Fields = nil
	}
	if len(ev.Actions) == 0 {
		out.Actions = nil
	}
	return out
}

var errBadTimestamp = errors.New("timestamp is not ISO 8601 (want YYYY-MM-DDThh:mm:ss[.fff…][Z|±hh:mm])")

// parseTimestamp reads the forms XE prints: ISO 8601 with any number of
// fractional digits, "Z" or a ±hh:mm offset (no zone means UTC). A space may
// stand for the "T". It is hand-written because time.Parse costs more than
// the rest of a small event's decoding.
func parseTimestamp(b []byte) (time.Time, error) {
	b = trimSpaceBytes(b)
	base, err := parseTimestampPrefix(b)
	if err != nil {
		return time.Time{}, err
	}
	return finishTimestamp(base, b[19:])
}

// parseTimestampPrefix reads the date and time of day (YYYY-MM-DDThh:mm:ss,
// the first 19 bytes of b) as a UTC instant.
func parseTimestampPrefix(b []byte) (time.Time, error) {
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || (b[10] != 'T' && b[10] != 't' && b[10] != ' ') || b[13] != ':' || b[16] != ':' {
		return time.Time{}, errBadTimestamp
	}
	year, ok1 := decimal(b[0:4])
	month, ok2 := decimal(b[5:7])
	day, ok3 := decimal(b[8:10])
	hour, ok4 := decimal(b[11:13])
	minute, ok5 := decimal(b[14:16])
	sec, ok6 := decimal(b[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || month < 1 || month > 12 || day < 1 || day > daysIn(month, year) || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, errBadTimestamp
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.UTC), nil
}

// finishTimestamp adds what follows the seconds — a fraction of any length
// and a zone ("Z" or ±hh:mm; none means UTC) — to base.
func finishTimestamp(base time.Time, b []byte) (time.Time, error) {
	i := 0
	nsec := 0
	if i < len(b) && (b[i] == '.' || b[i] == ',') {
		i++
		start := i
		scale := 100000000
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			nsec += int(b[i]-'0') * scale
			scale /= 10
			i++
		}
		if i == start {
			return time.Time{}, errBadTimestamp
		}
	}
	offset := 0
	switch {
	case i == len(b):
	case (b[i] == 'Z' || b[i] == 'z') && i+1 == len(b):
	case (b[i] == '+' || b[i] == '-') && len(b)-i == 6 && b[i+3] == ':':
		oh, ok1 := decimal(b[i+1 : i+3])
		om, ok2 := decimal(b[i+4 : i+6])
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return time.Time{}, errBadTimestamp
		}
		offset = oh*3600 + om*60
		if b[i] == '-' {
			offset = -offset
		}
	default:
		return time.Time{}, errBadTimestamp
	}
	return base.Add(time.Duration(nsec) - time.Duration(offset)*time.Second), nil
}

// decimal reads a run of decimal digits.
func decimal(s []byte) (int, bool) {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

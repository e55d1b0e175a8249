package xe

import (
	"bytes"
	"strings"
)

// Projection selects what a Decoder decodes of each event, for readers that
// need a few fields of very many events (the exporter reads a handful of the
// columns and actions of every event its session collects). The fields it
// does not name are skipped without being decoded: the scanner only finds
// where each ends (following quotes, CDATA sections, comments and nested
// elements), allocates nothing and unescapes nothing.
//
// A projected event is the event the full decoder returns with the fields
// and actions the projection does not name left out, the others in document
// order and exactly as the full decoder gives them
// (TestProjectionMatchesFullDecoder, FuzzProjection). Skipped fields are
// not checked: a row whose only problem is inside a skipped field (a bad
// character reference, a stray element) decodes, where the full decoder
// reports a *RowError. Events are still found and checked as strictly as
// before, so rows never run together.
type Projection struct {
	// Actions names the actions kept, of every event, by name (any
	// package), e.g. "event_sequence".
	Actions []string
	// Fields maps an event name (e.g. "wait_info") to the names of the data
	// fields kept of it. Events it does not name keep none: their name,
	// package, timestamp and actions only.
	Fields map[string][]string
}

// projEntry is an event name, the data fields kept of it and the layout
// of its fields (layout.go).
type projEntry struct {
	name   string
	set    *nameSet
	layout *fieldLayout
}

// projection is a Projection prepared for the scanner, with the layouts
// of the events read with it.
type projection struct {
	actions nameSet
	fields  map[string]*nameSet
	layouts map[string]*fieldLayout
}

// nameSet is a small set of names, looked up with the bytes of a name in
// the buffer. lens has bit n set when some name is n bytes long, which
// rejects most other names without comparing. plain are the names that
// need no escaping in an attribute, which match finds in the input as
// they are; next is the one it tries first (the one after its last find:
// fields come in the same order in every event of a kind).
type nameSet struct {
	names []string
	plain []quotedName
	next  int
	lens  uint64
}

func newNameSet(names []string) *nameSet {
	s := &nameSet{}
	for _, n := range names {
		if s.hasString(n) {
			continue
		}
		s.names = append(s.names, n)
		s.lens |= lenBit(len(n))
		if n != "" && !strings.ContainsAny(n, "\"&<'") {
			s.plain = append(s.plain, newQuotedName(n))
		}
	}
	return s
}

// match reports whether the <data>/<action> whose tag name ends at p goes
// on with ` name="N"` for a plain name N of the set, and returns N and the
// position after the closing quote. (Looking for the few names of the set
// costs less than finding where an unknown name ends.)
func (s *nameSet) match(b []byte, p int) (string, int, bool) {
	if s == nil || len(s.plain) == 0 || fastPathsOff || !has8(b, p, kNameAttr) {
		return "", 0, false
	}
	q := p + len(litNameAttrSp)
	w8 := word8(b, q)
	for i, j := 0, s.next; i < len(s.plain); i++ {
		if j >= len(s.plain) {
			j = 0
		}
		if n := &s.plain[j]; n.at(w8, b, q) {
			s.next = j + 1
			return n.s, q + len(n.s) + 1, true
		}
		j++
	}
	return "", 0, false
}

func lenBit(n int) uint64 {
	if n >= 63 {
		return 1 << 63
	}
	return 1 << uint(n)
}

// lookup returns the set's copy of name, if it holds it.
func (s *nameSet) lookup(name []byte) (string, bool) {
	if s == nil || s.lens&lenBit(len(name)) == 0 {
		return "", false
	}
	for _, n := range s.names {
		if n == string(name) {
			return n, true
		}
	}
	return "", false
}

func (s *nameSet) hasString(name string) bool {
	if s == nil || s.lens&lenBit(len(name)) == 0 {
		return false
	}
	for _, n := range s.names {
		if n == name {
			return true
		}
	}
	return false
}

// Project makes Next (and DecodeRow) decode only what p names; nil makes
// the decoder decode everything again. The decoder keeps its own copy of
// p. Like ReuseEvents it stays set across Reset. It applies to XML; the
// binary XELReader always decodes everything.
func (d *Decoder) Project(p *Projection) {
	d.projEvent, d.projFields, d.layout = "", nil, nil
	d.projCache = [8]projEntry{}
	if p == nil {
		d.proj = nil
		return
	}
	pr := &projection{actions: *newNameSet(p.Actions), fields: make(map[string]*nameSet, len(p.Fields)),
		layouts: map[string]*fieldLayout{}}
	for ev, fields := range p.Fields {
		pr.fields[ev] = newNameSet(fields)
	}
	d.proj = pr
}

// selectFields looks up the data fields kept of the event being parsed
// and their layout, in a small cache of the last event names seen before
// the maps.
func (d *Decoder) selectFields() {
	d.fieldIdx = 0
	name := d.evName
	if name == d.projEvent && name != "" {
		return
	}
	c := &d.projCache[(len(name)+int(name[0]))%len(d.projCache)]
	if c.name != name || c.name == "" {
		c.name, c.set, c.layout = name, d.proj.fields[name], d.proj.layoutOf(name)
	}
	d.projEvent, d.projFields, d.layout = name, c.set, c.layout
}

// field reads a <data> or <action> element (p just after its tag name):
// all of them without a projection; with one, those it names, skipping the
// others. The field expected at its position (layout.go) is tried first.
func (d *Decoder) field(b []byte, p int, action bool) (int, error) {
	if d.proj == nil {
		return d.parseField(b, p, action)
	}
	i := d.fieldIdx
	d.fieldIdx++
	if next, ok, err := d.expectedField(b, p, action, i); ok {
		return next, err
	}
	set, elem := d.projFields, "data"
	if action {
		set, elem = &d.proj.actions, "action"
	}
	if kept, q, ok := set.match(b, p); ok {
		d.learnField(i, kept, kept, action)
		if end, ok := d.numberField(b, q, action, kept); ok {
			return end, nil
		}
		sh := fieldShape{recent: &d.recentPkgs}
		if sh.scan(b, q, action) {
			d.addQuickField(b, &sh, kept, action)
			return sh.end, nil
		}
	} else if name, q, ok := quickFieldName(b, p); ok {
		kept, keep := set.lookup(name)
		if !keep {
			d.learnField(i, d.internBytes(name), "", action)
		}
		sh := fieldShape{recent: &d.recentPkgs}
		shaped := sh.scan(b, q, action)
		switch {
		case keep && shaped:
			d.addQuickField(b, &sh, kept, action)
			return sh.end, nil
		case !keep && shaped:
			return sh.end, nil
		case !keep:
			return skipElement(b, q, elem)
		}
	}
	// Kept, or a start tag in another form: decode it, and drop it after
	// all if its decoded name is not kept.
	n := len(d.out)
	next, err := d.parseField(b, p, action)
	if err != nil {
		return 0, err
	}
	if !set.hasString(d.out[n].Name) {
		d.dropFieldsFrom(n)
	}
	return next, nil
}

// tagStop marks the bytes skipTag stops at.
var tagStop = [256]bool{'>': true, '"': true, '\'': true, '<': true}

// skipTag finds the end of the tag open at p (anywhere after its '<'),
// following quoted attribute values, and returns the position after its
// '>' and whether it was an empty-element tag ("/>").
func skipTag(b []byte, p int) (int, bool, error) {
	for {
		for p < len(b) && !tagStop[b[p]] {
			p++
		}
		if p >= len(b) {
			return 0, false, errNeedMore
		}
		switch c := b[p]; c {
		case '>':
			return p + 1, b[p-1] == '/', nil
		case '<':
			return 0, false, synErr(p, "'<' inside a tag")
		default: // a quoted value
			i := bytes.IndexByte(b[p+1:], c)
			if i < 0 {
				return 0, false, errNeedMore
			}
			p += 1 + i + 1
		}
	}
}

// skipElement finds the end of the element named elem whose start tag is
// open at p, without decoding anything: it follows the rest of the start
// tag, CDATA sections, comments, processing instructions and nested
// elements, and returns the position after the element's end tag.
func skipElement(b []byte, p int, elem string) (int, error) {
	p, empty, err := skipTag(b, p)
	if err != nil || empty {
		return p, err
	}
	depth := 0
	for {
		i := bytes.IndexByte(b[p:], '<')
		if i < 0 {
			return 0, errNeedMore
		}
		p += i
		if p+1 >= len(b) {
			return 0, errNeedMore
		}
		switch b[p+1] {
		case '!':
			lit, end := litCDATA, bLitCDATAEnd
			m := match(b, p, litCDATA)
			if m == 0 {
				lit, end = litComment, bLitCommentEnd
				m = match(b, p, litComment)
			}
			if m < 0 {
				return 0, errNeedMore
			}
			if m == 0 {
				return 0, synErr(p, "unexpected markup inside <%s>", elem)
			}
			j := bytes.Index(b[p+len(lit):], end)
			if j < 0 {
				return 0, errNeedMore
			}
			p += len(lit) + j + len(end)
		case '?':
			j := bytes.Index(b[p+2:], bLitPIEnd)
			if j < 0 {
				return 0, errNeedMore
			}
			p += 2 + j + len(litPIEnd)
		case '/':
			q, _, err := skipTag(b, p+2)
			if err != nil {
				return 0, err
			}
			if depth > 0 {
				depth--
				p = q
				continue
			}
			if m := matchTag(b, p+2, elem); m != 1 {
				return 0, synErr(p, "unexpected end tag inside <%s>", elem)
			}
			return q, nil
		default:
			q, empty, err := skipTag(b, p+1)
			if err != nil {
				return 0, err
			}
			if !empty {
				depth++
			}
			p = q
		}
	}
}

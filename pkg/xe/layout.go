package xe

import "bytes"

// Field layouts: the fields of an event come in the same order, with the
// same names, in every event of that name a session writes. With a
// Projection, the decoder remembers the names of the last event of each
// name, position by position, and tries the one expected at each position
// first: one compare of eight bytes tells the field and whether the
// projection keeps it, where looking it up costs a search of the set (and,
// for a field skipped, finding where its name ends). A layout is only a
// guess checked against the input: a field that is not the expected one is
// read the usual way (field), and the layout learns it.

// fieldLayout is the fields of the last event of one name, in document
// order.
type fieldLayout struct {
	fields []layoutField
}

// layoutField is one field of a layout: its name, the set's copy of it
// when the projection keeps it ("" when it is skipped), and whether it is
// an action.
type layoutField struct {
	name   quotedName
	kept   string
	action bool
}

// The layouts kept are bounded: per decoder, per event.
const (
	maxLayouts      = 256
	maxLayoutFields = 64
)

// layoutOf returns the layout of the events named name, nil when there are
// too many names already.
func (pr *projection) layoutOf(name string) *fieldLayout {
	if l, ok := pr.layouts[name]; ok {
		return l
	}
	if len(pr.layouts) >= maxLayouts {
		return nil
	}
	l := &fieldLayout{}
	pr.layouts[name] = l
	return l
}

// expectedField reads the field at p (just after its tag name), the i-th
// of its event, when it is the one the layout expects there and in the
// fast path's shape; ok is false when the usual way must read it.
func (d *Decoder) expectedField(b []byte, p int, action bool, i int) (next int, ok bool, err error) {
	l := d.layout
	if l == nil || i >= len(l.fields) || fastPathsOff || !has8(b, p, kNameAttr) {
		return 0, false, nil
	}
	e := &l.fields[i]
	q := p + len(litNameAttrSp)
	if e.action != action || e.name.s == "" || !e.name.at(word8(b, q), b, q) {
		return 0, false, nil
	}
	q += len(e.name.s) + 1
	if e.kept != "" {
		if end, ok := d.numberField(b, q, action, e.kept); ok {
			return end, true, nil
		}
		sh := fieldShape{recent: &d.recentPkgs}
		if !sh.scan(b, q, action) {
			return 0, false, nil
		}
		d.addQuickField(b, &sh, e.kept, action)
		return sh.end, true, nil
	}
	if end, ok := skipPlainData(b, q, action); ok {
		return end, true, nil
	}
	sh := fieldShape{recent: &d.recentPkgs}
	if sh.scan(b, q, action) {
		return sh.end, true, nil
	}
	elem := "data"
	if action {
		elem = "action"
	}
	end, err := skipElement(b, q, elem)
	return end, true, err
}

// learnField records that the i-th field of the event being parsed is
// named name (kept: the set's copy, or "" when skipped).
func (d *Decoder) learnField(i int, name, kept string, action bool) {
	l := d.layout
	if l == nil || i >= maxLayoutFields || i > len(l.fields) {
		return
	}
	if i == len(l.fields) {
		l.fields = append(l.fields, layoutField{})
	}
	if e := &l.fields[i]; e.name.s != name || e.action != action {
		*e = layoutField{name: newQuotedName(name), kept: kept, action: action}
	}
}

// skipPlainData finds the end of a skipped <data> in the commonest shape,
// from just after its name attribute: ><value>V</value></data> with V
// text up to the first '<' (where scan and skipElement find its end too:
// nothing in a skipped value is decoded or checked).
func skipPlainData(b []byte, q int, action bool) (int, bool) {
	if action || !has8(b, q, kTagEndValue) {
		return 0, false
	}
	s := q + len(litTagEndValue)
	i := bytes.IndexByte(b[s:], '<')
	if i < 0 {
		return 0, false
	}
	e := s + i
	if !has8(b, e, kValueEnd) || !has8(b, e+len(litValueEnd), kDataEnd) {
		return 0, false
	}
	return e + len(litValueEnd) + len(litDataEnd), true
}

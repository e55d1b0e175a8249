package xe

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Histogram is a histogram target's target_data: event counts bucketed by
// one field or action (often package0.callstack).
type Histogram struct {
	Truncated bool
	Buckets   uint64
	Slots     []HistogramSlot
}

// HistogramSlot is one bucket: how many events had Value. A callstack value
// is kept verbatim (KindString text, or KindXML for <frame> elements).
type HistogramSlot struct {
	Count uint64
	Value Value
}

// maxHistogramSize bounds DecodeHistogram's input: a histogram has at most
// its bucket count of slots, so real documents are small.
const maxHistogramSize = 256 << 20

// IsHistogram reports whether the start of a document (its first few
// hundred bytes are enough) is a <HistogramTarget> element, after an
// optional byte-order mark, XML declaration, comments and white space.
// UTF-16 documents are recognised too.
func IsHistogram(head []byte) bool {
	if be, skip, ok, _ := utf16Kind(head, true); ok {
		u := newUTF16Reader(bytes.NewReader(head[skip:]), be)
		head, _ = io.ReadAll(u)
	}
	p := skipProlog(head)
	return matchTag(head, p, "<HistogramTarget") == 1
}

// AppendJSON appends the slot as {"slot":i,"count":n,"value":"…"}; the
// value (often a call stack) is kept verbatim.
func (s *HistogramSlot) AppendJSON(dst []byte, i int) []byte {
	dst = append(dst, `{"slot":`...)
	dst = strconv.AppendInt(dst, int64(i), 10)
	dst = append(dst, `,"count":`...)
	dst = strconv.AppendUint(dst, s.Count, 10)
	dst = append(dst, `,"value":`...)
	dst = appendJSONString(dst, s.Value.Raw)
	return append(dst, '}')
}

// DecodeHistogram reads a <HistogramTarget> document, UTF-8 or UTF-16.
// Unlike the event decoder it reads the whole document (it is bounded by
// the bucket count).
func DecodeHistogram(r io.Reader) (Histogram, error) {
	br := bufio.NewReader(r)
	if head, _ := br.Peek(4); len(head) > 0 {
		if be, skip, ok, _ := utf16Kind(head, len(head) < 4); ok {
			br.Discard(skip)
			r = newUTF16Reader(br, be)
		} else {
			r = br
		}
	}
	data, err := io.ReadAll(io.LimitReader(r, maxHistogramSize+1))
	if err != nil {
		return Histogram{}, fmt.Errorf("read histogram: %w", err)
	}
	if len(data) > maxHistogramSize {
		return Histogram{}, fmt.Errorf("histogram larger than %d bytes", maxHistogramSize)
	}
	h, err := parseHistogram(data)
	if err != nil {
		var se *syntaxError
		if errors.As(err, &se) {
			line := bytes.Count(data[:min(se.pos, len(data))], newline) + 1
			return Histogram{}, fmt.Errorf("histogram line %d: %s", line, se.msg)
		}
		if err == errNeedMore {
			return Histogram{}, errors.New("histogram document ends early")
		}
		return Histogram{}, err
	}
	return h, nil
}

func parseHistogram(b []byte) (Histogram, error) {
	var h Histogram
	d := &Decoder{intern: map[string]string{}}
	p := skipProlog(b)
	if matchTag(b, p, "<HistogramTarget") != 1 {
		return h, synErr(p, "not a <HistogramTarget> document")
	}
	p += len("<HistogramTarget")
	for {
		p = skipSpace(b, p)
		if p >= len(b) {
			return h, errNeedMore
		}
		if b[p] == '>' {
			p++
			break
		}
		name, val, next, err := attr(b, p)
		if err != nil {
			return h, err
		}
		switch string(name) {
		case "truncated":
			u, ok := parseUintBytes(val)
			if !ok {
				return h, synErr(p, "truncated=%q is not a number", val)
			}
			h.Truncated = u != 0
		case "buckets":
			u, ok := parseUintBytes(val)
			if !ok {
				return h, synErr(p, "buckets=%q is not a number", val)
			}
			h.Buckets = u
		}
		p = next
	}
	for {
		p = skipSpace(b, p)
		if p >= len(b) {
			return h, errNeedMore
		}
		if matchTag(b, p, "</HistogramTarget") == 1 {
			q := skipSpace(b, p+len("</HistogramTarget"))
			if q >= len(b) || b[q] != '>' {
				return h, synErr(p, "malformed </HistogramTarget>")
			}
			if rest := skipProlog(b[q+1:]); rest != len(b)-q-1 {
				return h, synErr(q+1+rest, "content after </HistogramTarget>")
			}
			return h, nil
		}
		if matchTag(b, p, "<Slot") != 1 {
			tag, _ := tagAt(b, p)
			return h, synErr(p, "unexpected %q in <HistogramTarget>", tag)
		}
		p += len("<Slot")
		var slot HistogramSlot
		for {
			p = skipSpace(b, p)
			if p >= len(b) {
				return h, errNeedMore
			}
			if b[p] == '>' {
				p++
				break
			}
			name, val, next, err := attr(b, p)
			if err != nil {
				return h, err
			}
			if string(name) == "count" {
				u, ok := parseUintBytes(val)
				if !ok {
					return h, synErr(p, "Slot count=%q is not a number", val)
				}
				slot.Count = u
			}
			p = next
		}
		p = skipSpace(b, p)
		if matchTag(b, p, litValue) != 1 {
			return h, synErr(p, "<Slot> without <value>")
		}
		d.arena = d.arena[:0]
		next, hint, sp, err := d.parseContent(b, p+len(litValue), "value", true)
		if err != nil {
			return h, err
		}
		text := d.bytesOf(b, sp)
		slot.Value.Raw = string(text)
		switch hint {
		case hintEmpty:
			slot.Value.Kind = KindEmpty
		case hintCDATA:
			slot.Value.Kind = KindString
		case hintXML:
			slot.Value.Kind = KindXML
		default:
			slot.Value.Kind, slot.Value.bits = classify(text, "")
		}
		p = skipSpace(b, next)
		if matchTag(b, p, "</Slot") != 1 {
			return h, synErr(p, "<Slot> not closed after its <value>")
		}
		q := skipSpace(b, p+len("</Slot"))
		if q >= len(b) || b[q] != '>' {
			return h, synErr(p, "malformed </Slot>")
		}
		p = q + 1
		h.Slots = append(h.Slots, slot)
	}
}

// skipProlog skips a BOM, whitespace, the XML declaration and comments.
func skipProlog(b []byte) int {
	p := 0
	if bytes.HasPrefix(b, []byte(litBOM)) {
		p = 3
	}
	for {
		p = skipSpace(b, p)
		switch {
		case match(b, p, litPI) == 1:
			i := bytes.Index(b[p:], bLitPIEnd)
			if i < 0 {
				return len(b)
			}
			p += i + 2
		case match(b, p, litComment) == 1:
			i := bytes.Index(b[p:], bLitCommentEnd)
			if i < 0 {
				return len(b)
			}
			p += i + 3
		default:
			return p
		}
	}
}

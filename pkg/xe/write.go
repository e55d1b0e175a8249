package xe

import (
	"strconv"
	"strings"
)

// Form selects which XML SQL Server's two renderings to write.
type Form uint8

const (
	// FormEventFile is what sys.fn_xe_file_target_read_file returns: no
	// <type> elements, strings and map texts in CDATA [R].
	FormEventFile Form = iota
	// FormRingBuffer is ring_buffer target_data: a <type name package/>
	// first in every <data>/<action> whose Value.Type is set [R].
	FormRingBuffer
)

// AppendXML appends the event as one <event> element on one line (unless a
// value holds a newline). Decoding the output gives the event back: names,
// timestamp text, every value's Raw, Kind, Text, and (FormRingBuffer) Type.
func (ev *Event) AppendXML(dst []byte, form Form) []byte {
	dst = append(dst, `<event name="`...)
	dst = appendEscaped(dst, ev.Name, true)
	dst = append(dst, `" package="`...)
	dst = appendEscaped(dst, ev.Package, true)
	dst = append(dst, `" timestamp="`...)
	dst = appendEscaped(dst, ev.Timestamp.Raw, true)
	dst = append(dst, `">`...)
	for i := range ev.Fields {
		dst = appendFieldXML(dst, "data", &ev.Fields[i], form, false)
	}
	for i := range ev.Actions {
		dst = appendFieldXML(dst, "action", &ev.Actions[i], form, true)
	}
	return append(dst, "</event>"...)
}

func appendFieldXML(dst []byte, elem string, f *Field, form Form, action bool) []byte {
	dst = append(dst, '<')
	dst = append(dst, elem...)
	dst = append(dst, ` name="`...)
	dst = appendEscaped(dst, f.Name, true)
	if action || f.Package != "" {
		dst = append(dst, `" package="`...)
		dst = appendEscaped(dst, f.Package, true)
	}
	dst = append(dst, `">`...)
	v := &f.Value
	if form == FormRingBuffer && (v.Type != "" || v.TypePackage != "") {
		dst = append(dst, `<type name="`...)
		dst = appendEscaped(dst, v.Type, true)
		dst = append(dst, `" package="`...)
		dst = appendEscaped(dst, v.TypePackage, true)
		dst = append(dst, `"/>`...)
	}
	dst = append(dst, "<value>"...)
	switch v.Kind {
	case KindEmpty:
	case KindString:
		dst = appendCDATA(dst, v.Raw)
	case KindXML:
		dst = append(dst, v.Raw...)
	default:
		dst = appendEscaped(dst, v.Raw, false)
	}
	dst = append(dst, "</value>"...)
	if v.HasText {
		dst = append(dst, "<text>"...)
		if form == FormEventFile {
			dst = appendCDATA(dst, v.Text)
		} else {
			dst = appendEscaped(dst, v.Text, false)
		}
		dst = append(dst, "</text>"...)
	}
	dst = append(dst, "</"...)
	dst = append(dst, elem...)
	return append(dst, '>')
}

// appendCDATA writes s as CDATA, splitting it where s contains "]]>". A
// carriage return cannot survive CDATA (XML turns it into a newline), so it
// is written as a character reference between sections.
func appendCDATA(dst []byte, s string) []byte {
	dst = append(dst, "<![CDATA["...)
	for {
		i := strings.IndexAny(s, "]\r")
		if i < 0 {
			break
		}
		if s[i] == '\r' {
			dst = append(dst, s[:i]...)
			dst = append(dst, "]]>&#13;<![CDATA["...)
			s = s[i+1:]
			continue
		}
		if strings.HasPrefix(s[i:], "]]>") {
			dst = append(dst, s[:i+2]...)
			dst = append(dst, "]]><![CDATA["...)
			s = s[i+2:]
			continue
		}
		dst = append(dst, s[:i+1]...)
		s = s[i+1:]
	}
	dst = append(dst, s...)
	return append(dst, "]]>"...)
}

func appendEscaped(dst []byte, s string, attr bool) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '"':
			if !attr {
				continue
			}
			esc = "&quot;"
		case '\'':
			if !attr {
				continue
			}
			esc = "&apos;"
		case '\r':
			esc = "&#13;"
		case '\n', '\t':
			if !attr {
				continue
			}
			esc = "&#" + strconv.Itoa(int(s[i])) + ";"
		default:
			continue
		}
		dst = append(dst, s[start:i]...)
		dst = append(dst, esc...)
		start = i + 1
	}
	return append(dst, s[start:]...)
}

// AppendXMLOpen appends the <RingBufferTarget …> start tag; close the
// document with "</RingBufferTarget>".
func (rb RingBufferTarget) AppendXMLOpen(dst []byte) []byte {
	t := 0
	if rb.Truncated {
		t = 1
	}
	dst = append(dst, `<RingBufferTarget truncated="`...)
	dst = strconv.AppendInt(dst, int64(t), 10)
	for _, a := range [...]struct {
		name string
		v    uint64
	}{
		{"processingTime", rb.ProcessingTime},
		{"totalEventsProcessed", rb.TotalEventsProcessed},
		{"eventCount", rb.EventCount},
		{"droppedCount", rb.DroppedCount},
		{"memoryUsed", rb.MemoryUsed},
	} {
		dst = append(dst, `" `...)
		dst = append(dst, a.name...)
		dst = append(dst, `="`...)
		dst = strconv.AppendUint(dst, a.v, 10)
	}
	return append(dst, `">`...)
}

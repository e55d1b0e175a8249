package showplan

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// toUTF8 returns the document as UTF-8, deciding the encoding from the byte
// order mark (or, without one, from the NUL byte next to the first '<').
// The encoding declaration is ignored on purpose: real .sqlplan files that
// were re-saved say encoding="utf-16" but are UTF-8 [V, docs/design/tracing.md §7.2].
func toUTF8(data []byte) ([]byte, error) {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		return data[3:], nil
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}):
		return decodeUTF16(data[2:], false)
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		return decodeUTF16(data[2:], true)
	case len(data) >= 2 && data[0] == '<' && data[1] == 0:
		return decodeUTF16(data, false)
	case len(data) >= 2 && data[0] == 0 && data[1] == '<':
		return decodeUTF16(data, true)
	}
	return data, nil
}

// decodeUTF16 transcodes UTF-16 to UTF-8. It is written by hand on top of
// unicode/utf16 so that the parser needs no dependency outside the standard
// library.
func decodeUTF16(data []byte, bigEndian bool) ([]byte, error) {
	if len(data)%2 != 0 {
		return nil, fmt.Errorf("UTF-16 document has an odd number of bytes (%d)", len(data))
	}
	out := make([]byte, 0, len(data)/2+16)
	var pending rune = -1 // high surrogate waiting for its pair
	for i := 0; i < len(data); i += 2 {
		var u uint16
		if bigEndian {
			u = uint16(data[i])<<8 | uint16(data[i+1])
		} else {
			u = uint16(data[i]) | uint16(data[i+1])<<8
		}
		r := rune(u)
		if pending >= 0 {
			if utf16.IsSurrogate(r) && r >= 0xDC00 {
				out = utf8.AppendRune(out, utf16.DecodeRune(pending, r))
				pending = -1
				continue
			}
			out = utf8.AppendRune(out, utf8.RuneError)
			pending = -1
		}
		if utf16.IsSurrogate(r) {
			if r < 0xDC00 {
				pending = r
				continue
			}
			r = utf8.RuneError
		}
		out = utf8.AppendRune(out, r)
	}
	if pending >= 0 {
		out = utf8.AppendRune(out, utf8.RuneError)
	}
	return out, nil
}

// passThroughCharset is the xml.Decoder CharsetReader. By the time the
// decoder reads the declaration the bytes are already UTF-8 (toUTF8), so a
// declared UTF-16 or ASCII label needs no conversion.
func passThroughCharset(label string, input io.Reader) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(label)) {
	case "utf-16", "utf-16le", "utf-16be", "unicode", "ucs-2", "utf16", "us-ascii", "ascii":
		return input, nil
	}
	return nil, fmt.Errorf("unsupported declared encoding %q (showplan XML is UTF-8 or UTF-16)", label)
}

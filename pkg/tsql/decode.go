package tsql

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// Byte-order marks a batch file may start with: SSMS saves scripts as
// UTF-8 with a BOM or as UTF-16LE ("Unicode") with one.
var (
	bomUTF8    = []byte{0xEF, 0xBB, 0xBF}
	bomUTF16LE = []byte{0xFF, 0xFE}
	bomUTF16BE = []byte{0xFE, 0xFF}
)

// DecodeBatch turns a batch that enters as bytes (a file, standard input)
// into text: a UTF-8 byte-order mark is stripped, UTF-16 with a byte-order
// mark (little- or big-endian) is decoded, and anything else must be valid
// UTF-8. Text that is none of these is an error saying so, never guessed.
func DecodeBatch(b []byte) (string, error) {
	switch {
	case bytes.HasPrefix(b, bomUTF8):
		b = b[len(bomUTF8):]
	case bytes.HasPrefix(b, bomUTF16LE):
		return decodeUTF16(b[2:], func(p []byte) uint16 { return uint16(p[0]) | uint16(p[1])<<8 }, "UTF-16LE")
	case bytes.HasPrefix(b, bomUTF16BE):
		return decodeUTF16(b[2:], func(p []byte) uint16 { return uint16(p[0])<<8 | uint16(p[1]) }, "UTF-16BE")
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return "", errors.New("the batch holds NUL bytes: UTF-16 without a byte-order mark? (save it as UTF-8, or as UTF-16 with a byte-order mark)")
	}
	if !utf8.Valid(b) {
		return "", errors.New("the batch is not valid UTF-8 text (save it as UTF-8, or as UTF-16 with a byte-order mark)")
	}
	return string(b), nil
}

func decodeUTF16(b []byte, unit func([]byte) uint16, name string) (string, error) {
	if len(b)%2 != 0 {
		return "", fmt.Errorf("the batch is %s with an odd number of bytes", name)
	}
	units := make([]uint16, len(b)/2)
	for i := range units {
		units[i] = unit(b[2*i:])
	}
	for i := 0; i < len(units); i++ {
		switch u := units[i]; {
		case utf16.IsSurrogate(rune(u)) && u < 0xDC00 && i+1 < len(units) && units[i+1] >= 0xDC00 && units[i+1] <= 0xDFFF:
			i++
		case utf16.IsSurrogate(rune(u)):
			return "", fmt.Errorf("the batch is %s with an unpaired surrogate at code unit %d", name, i)
		}
	}
	return string(utf16.Decode(units)), nil
}

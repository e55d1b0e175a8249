package tsql

import (
	"strings"
	"testing"
	"unicode/utf16"
)

func utf16Bytes(s string, bigEndian bool) []byte {
	var out []byte
	if bigEndian {
		out = []byte{0xFE, 0xFF}
	} else {
		out = []byte{0xFF, 0xFE}
	}
	for _, u := range utf16.Encode([]rune(s)) {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return out
}

func TestDecodeBatch(t *testing.T) {
	const batch = "SELECT N'Größe 😀' AS x\r\nFROM dbo.Orders"
	for name, in := range map[string][]byte{
		"utf8":     []byte(batch),
		"utf8 bom": append([]byte{0xEF, 0xBB, 0xBF}, batch...),
		"utf16le":  utf16Bytes(batch, false),
		"utf16be":  utf16Bytes(batch, true),
	} {
		got, err := DecodeBatch(in)
		if err != nil || got != batch {
			t.Errorf("%s: %q, %v", name, got, err)
			continue
		}
		if _, err := Classify(got); err != nil {
			t.Errorf("%s: decoded batch refused: %v", name, err)
		}
	}
	for name, in := range map[string][]byte{
		"latin1":       []byte("SELECT 'Gr\xf6\xdfe'"),
		"odd utf16":    append(utf16Bytes("SELECT 1", false), 'x'),
		"surrogate":    {0xFF, 0xFE, 0x00, 0xD8, 'a', 0},
		"utf16 no bom": utf16Bytes("SELECT 1", false)[2:],
	} {
		if got, err := DecodeBatch(in); err == nil {
			t.Errorf("%s: decoded as %q", name, got)
		} else if !strings.Contains(err.Error(), "UTF") {
			t.Errorf("%s: error %v does not say what the text should be", name, err)
		}
	}
}

func FuzzDecodeBatch(f *testing.F) {
	f.Add([]byte("SELECT 1"))
	f.Add(utf16Bytes("SELECT 1", false))
	f.Add(utf16Bytes("SELECT 1", true))
	f.Add([]byte{0xEF, 0xBB, 0xBF, 'S'})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeBatch(b)
		if err == nil && !strings.HasPrefix(s, "\uFEFF") && strings.ContainsRune(s, '\uFFFD') && !strings.Contains(string(b), "\uFFFD") && len(b) > 1 && b[0] != 0xFF && b[0] != 0xFE {
			t.Fatalf("replacement character invented in %q", s)
		}
	})
}

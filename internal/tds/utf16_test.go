package tds

import (
	"encoding/binary"
	"testing"
	"unicode/utf16"
)

// FuzzAppendUTF16 checks the direct encoder against the standard library's
// utf16.Encode, which the stand-in used before: same units, same count.
func FuzzAppendUTF16(f *testing.F) {
	for _, s := range []string{"", "abc", "Ünïcødé", "😀 emoji", "\xff\xfe bad", "\xed\xa0\x80 surrogate half", "中文", "<event name=\"x\">café</event>", "ascii then \xff bad", "ascii then 😀"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := utf16.Encode([]rune(s))
		got := appendUTF16([]byte{0x7f}, s)
		if got[0] != 0x7f || len(got) != 1+2*len(want) {
			t.Fatalf("%q: %d bytes after the prefix, want %d", s, len(got)-1, 2*len(want))
		}
		for i, u := range want {
			if g := binary.LittleEndian.Uint16(got[1+2*i:]); g != u {
				t.Fatalf("%q: unit %d is %#04x, want %#04x", s, i, g, u)
			}
		}
		if n := utf16Len(s); n != len(want) {
			t.Fatalf("%q: utf16Len %d, want %d", s, n, len(want))
		}
	})
}

package xe

import (
	"bytes"
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// Event XML saved by SSMS, PowerShell (Out-File) or bcp -w is UTF-16, with
// or without a byte-order mark. The decoder looks at the first bytes of its
// input once: a UTF-16 byte-order mark, or ASCII markup with every other
// byte zero ("<\x00e\x00" little-endian, "\x00<\x00e" big-endian), switches
// it to transcoding the input to UTF-8 on the fly.

// utf16Kind tells UTF-16 input by its first bytes: the byte order, how
// many bytes of mark to drop, and whether it is UTF-16 at all.
func utf16Kind(b []byte, eof bool) (bigEndian bool, skip int, ok, decided bool) {
	switch {
	case len(b) >= 2 && b[0] == 0xFF && b[1] == 0xFE:
		return false, 2, true, true
	case len(b) >= 2 && b[0] == 0xFE && b[1] == 0xFF:
		return true, 2, true, true
	case len(b) < 4:
		return false, 0, false, eof
	case b[0] != 0 && b[1] == 0 && b[2] != 0 && b[3] == 0:
		return false, 0, true, true
	case b[0] == 0 && b[1] != 0 && b[2] == 0 && b[3] != 0:
		return true, 0, true, true
	}
	return false, 0, false, true
}

// utf16Reader transcodes UTF-16 to UTF-8. Unpaired surrogates become
// U+FFFD; an odd byte at the end is an error.
type utf16Reader struct {
	r         io.Reader
	bigEndian bool
	raw       []byte // read but not yet decoded (at most one byte, or a lone high surrogate)
	out       []byte // decoded, not yet returned
	offset    int64  // bytes of UTF-16 decoded so far
	err       error
	buf       []byte
}

func newUTF16Reader(r io.Reader, bigEndian bool) *utf16Reader {
	return &utf16Reader{r: r, bigEndian: bigEndian, buf: make([]byte, 64<<10)}
}

func (u *utf16Reader) order() string {
	if u.bigEndian {
		return "UTF-16BE"
	}
	return "UTF-16LE"
}

func (u *utf16Reader) Read(p []byte) (int, error) {
	for len(u.out) == 0 {
		if u.err != nil {
			return 0, u.err
		}
		n := copy(u.buf, u.raw)
		m, err := u.r.Read(u.buf[n:])
		u.decode(u.buf[:n+m], err == io.EOF)
		if err == io.EOF {
			if len(u.raw) > 0 {
				u.err = fmt.Errorf("input is %s, and it ends in the middle of a character (offset %d)", u.order(), u.offset)
			} else {
				u.err = io.EOF
			}
		} else if err != nil {
			u.err = err
		}
	}
	n := copy(p, u.out)
	u.out = u.out[n:]
	return n, nil
}

// decode turns b's complete code units into UTF-8 and keeps the rest.
func (u *utf16Reader) decode(b []byte, final bool) {
	u.out = u.out[:0]
	i := 0
	for ; i+1 < len(b); i += 2 {
		c := rune(b[i]) | rune(b[i+1])<<8
		if u.bigEndian {
			c = rune(b[i])<<8 | rune(b[i+1])
		}
		if utf16.IsSurrogate(c) && c < 0xDC00 { // high surrogate: needs the next unit
			if i+3 >= len(b) {
				if !final {
					break
				}
				u.out = utf8.AppendRune(u.out, utf8.RuneError)
				continue
			}
			lo := rune(b[i+2]) | rune(b[i+3])<<8
			if u.bigEndian {
				lo = rune(b[i+2])<<8 | rune(b[i+3])
			}
			if r := utf16.DecodeRune(c, lo); r != utf8.RuneError {
				u.out = utf8.AppendRune(u.out, r)
				i += 2
				continue
			}
			u.out = utf8.AppendRune(u.out, utf8.RuneError)
			continue
		}
		if utf16.IsSurrogate(c) {
			c = utf8.RuneError
		}
		u.out = utf8.AppendRune(u.out, c)
	}
	u.offset += int64(i)
	u.raw = append(u.raw[:0], b[i:]...)
}

// detectUTF16 switches d to transcoding when its input, as buffered so far
// from the start, is UTF-16. It reports false while too few bytes are
// buffered to tell.
func (d *Decoder) detectUTF16() bool {
	be, skip, ok, decided := utf16Kind(d.buf[:d.end], d.eof)
	if !decided {
		return false
	}
	d.encodingChecked = true
	if !ok {
		return true
	}
	head := bytes.Clone(d.buf[skip:d.end])
	rest := d.r
	if d.eof {
		rest = eofReader{}
	}
	u := newUTF16Reader(io.MultiReader(bytes.NewReader(head), rest), be)
	d.r, d.transcoded = u, u.order()
	d.end, d.eof = 0, false
	return true
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

package xe_test

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/queryreplay/queryreplay/pkg/xe"
)

// TestRowErrorNamesPositionInsideRow: the error of a malformed row gives
// the row's start and where inside the row the problem is, as a byte
// position in the row and an offset in the input.
func TestRowErrorNamesPositionInsideRow(t *testing.T) {
	good := `<event name="a" package="p" timestamp="2024-01-01T00:00:00Z"><data name="x"><value>1</value></data></event>` + "\n"
	bad := `<event name="b" package="p" timestamp="2024-01-01T00:00:00Z"><data name="x"><value>fine text, then &bogus; here</value></data></event>` + "\n"
	in := good + good + bad + good
	d := xe.NewDecoder(strings.NewReader(in))
	var rowErr *xe.RowError
	for {
		_, err := d.Next()
		if err == io.EOF {
			break
		}
		if errors.As(err, &rowErr) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if rowErr == nil {
		t.Fatal("no row error")
	}
	rowStart := int64(2 * len(good))
	inRow := strings.Index(bad, "&bogus;")
	if rowErr.Offset != rowStart || rowErr.Row != 3 || rowErr.Line != 3 {
		t.Errorf("row start: row %d line %d offset %d, want row 3 line 3 offset %d", rowErr.Row, rowErr.Line, rowErr.Offset, rowStart)
	}
	if rowErr.Pos != inRow || rowErr.ErrOffset != rowStart+int64(inRow) {
		t.Errorf("problem at byte %d of the row (offset %d), want %d (offset %d)", rowErr.Pos, rowErr.ErrOffset, inRow, rowStart+int64(inRow))
	}
	msg := rowErr.Error()
	for _, want := range []string{"row 3", "line 3", "offset " + itoa(rowStart), "byte " + itoa(int64(inRow)) + " of the row", "offset " + itoa(rowStart+int64(inRow)), "bogus"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	// Decoding goes on after the row.
	if ev, err := d.Next(); err != nil || ev.Name != "a" {
		t.Errorf("after the bad row: %v %v", ev.Name, err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func utf16Bytes(s string, bigEndian, bom bool) []byte {
	var out []byte
	u := utf16.Encode([]rune(s))
	if bom {
		u = append([]uint16{0xFEFF}, u...)
	}
	for _, c := range u {
		if bigEndian {
			out = append(out, byte(c>>8), byte(c))
		} else {
			out = append(out, byte(c), byte(c>>8))
		}
	}
	return out
}

// TestUTF16Input: SSMS and PowerShell save UTF-16, often without a
// byte-order mark; such input decodes to the same events as UTF-8.
func TestUTF16Input(t *testing.T) {
	text := "\n" + `<event name="error_reported" package="sqlserver" timestamp="2024-01-01T00:00:00Z"><data name="message"><value>Grüße — ünïcödé ✓ 𝄞</value></data></event>` + "\n" +
		`<event name="b" package="p" timestamp="2024-01-01T00:00:01Z"><data name="x"><value>2</value></data></event>`
	want := decodeStrings(t, []byte(text))
	if len(want) != 2 {
		t.Fatalf("utf-8: %d events", len(want))
	}
	for _, tc := range []struct {
		name    string
		be, bom bool
	}{{"LE", false, false}, {"BE", true, false}, {"LE BOM", false, true}, {"BE BOM", true, true}} {
		got := decodeStrings(t, utf16Bytes(text, tc.be, tc.bom))
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("UTF-16 %s: %q, want %q", tc.name, got, want)
		}
	}
	// Odd garbage with NUL bytes that is not UTF-16 text is refused with a
	// message that names UTF-16.
	d := xe.NewDecoder(bytes.NewReader([]byte{'<', 0, 0xD8, 0x00, 0x00}))
	_, err := d.Next()
	if err == nil || !strings.Contains(err.Error(), "UTF-16") {
		t.Errorf("broken UTF-16: %v", err)
	}
}

func decodeStrings(t *testing.T, in []byte) []string {
	t.Helper()
	d := xe.NewDecoder(bytes.NewReader(in))
	var out []string
	for {
		ev, err := d.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		out = append(out, string(ev.AppendJSON(nil)))
	}
}

// TestLargeEscapedValues: values large enough to be decoded in place after
// parsing give the same text as small ones, in both event modes, and a bad
// reference deep inside one is reported where it is.
func TestLargeEscapedValues(t *testing.T) {
	unit := "a &lt;b&gt; &amp; &#x263A; &quot;q&quot;\r\nline&#10;"
	decoded := "a <b> & \u263a \"q\"\nline\n"
	body := strings.Repeat(unit, 3000) // ≈ 150 KB: past the in-place threshold
	want := strings.Repeat(decoded, 3000)
	in := `<event name="a" package="p" timestamp="2024-01-01T00:00:00Z"><data name="x"><value>` + body + `</value><text>` + body + `</text></data>` +
		`<action name="y" package="p"><value>` + body + `</value></action></event>` + "\n"
	for _, reuse := range []bool{false, true} {
		d := xe.NewDecoder(strings.NewReader(in + in))
		if reuse {
			d.ReuseEvents()
		}
		for i := range 2 {
			ev, err := d.Next()
			if err != nil {
				t.Fatal(err)
			}
			if ev.Fields[0].Value.Raw != want || ev.Fields[0].Value.Text != want || ev.Actions[0].Value.Raw != want {
				t.Errorf("reuse=%v event %d: decoded text differs (%d, %d, %d bytes, want %d)", reuse, i,
					len(ev.Fields[0].Value.Raw), len(ev.Fields[0].Value.Text), len(ev.Actions[0].Value.Raw), len(want))
			}
		}
	}
	bad := strings.Repeat(unit, 2000) + "&nope;" + strings.Repeat(unit, 1000)
	row := `<event name="a" package="p" timestamp="2024-01-01T00:00:00Z"><data name="x"><value>` + bad + `</value></data></event>`
	_, err := xe.NewDecoder(strings.NewReader(row)).Next()
	var re *xe.RowError
	if !errors.As(err, &re) || re.Pos != strings.Index(row, "&nope;") {
		t.Errorf("bad reference: %v (pos %d, want %d)", err, re.Pos, strings.Index(row, "&nope;"))
	}
}

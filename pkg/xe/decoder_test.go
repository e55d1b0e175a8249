package xe_test

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/queryreplay/queryreplay/pkg/xe"
	"github.com/queryreplay/queryreplay/pkg/xe/xetest"
)

const ts = `timestamp="2020-01-02T03:04:05.678Z"`

func ev(body string) string {
	return `<event name="e" package="p" ` + ts + `>` + body + `</event>`
}

func TestValueKinds(t *testing.T) {
	cases := []struct {
		name  string
		value string // content of <value>
		typ   string // <type name>, package0
		kind  xe.Kind
		raw   string
		check func(t *testing.T, v xe.Value)
	}{
		{name: "uint64 max exact", value: "18446744073709551615", kind: xe.KindUint, raw: "18446744073709551615", check: func(t *testing.T, v xe.Value) {
			if u, ok := v.Uint(); !ok || u != math.MaxUint64 {
				t.Errorf("Uint = %d %v", u, ok)
			}
			if _, ok := v.Int(); ok {
				t.Error("Int accepted a value over MaxInt64")
			}
		}},
		{name: "uint64 overflow stays text", value: "18446744073709551616", kind: xe.KindString, raw: "18446744073709551616"},
		{name: "int64 min", value: "-9223372036854775808", kind: xe.KindInt, raw: "-9223372036854775808", check: func(t *testing.T, v xe.Value) {
			if i, ok := v.Int(); !ok || i != math.MinInt64 {
				t.Errorf("Int = %d", i)
			}
		}},
		{name: "negative", value: "-5", kind: xe.KindInt, raw: "-5"},
		{name: "float", value: "1.5e3", kind: xe.KindFloat, raw: "1.5e3", check: func(t *testing.T, v xe.Value) {
			if f, _ := v.Float(); f != 1500 {
				t.Errorf("Float = %v", f)
			}
		}},
		{name: "float64 typed integer", value: "2", typ: "float64", kind: xe.KindFloat, raw: "2"},
		{name: "ptr", value: "0x00007FFEABD0D919", kind: xe.KindHex, raw: "0x00007FFEABD0D919", check: func(t *testing.T, v xe.Value) {
			if u, _ := v.Uint(); u != 0x00007FFEABD0D919 {
				t.Errorf("Uint = %x", u)
			}
		}},
		{name: "ptr all ones", value: "0xFFFFFFFFFFFFFFFF", kind: xe.KindHex, raw: "0xFFFFFFFFFFFFFFFF", check: func(t *testing.T, v xe.Value) {
			if u, _ := v.Uint(); u != math.MaxUint64 {
				t.Errorf("Uint = %x", u)
			}
		}},
		{name: "long hex is binary", value: "0x0600050012345678AB", kind: xe.KindBinary, raw: "0x0600050012345678AB", check: func(t *testing.T, v xe.Value) {
			if b, ok := v.Bytes(); !ok || len(b) != 9 || b[0] != 6 || b[8] != 0xAB {
				t.Errorf("Bytes = %x", b)
			}
		}},
		{name: "plan handle hex without 0x", value: "0600050054BDCA1E00A1F3A1D201000001000000000000000000000000000000000000000000000000000000", kind: xe.KindBinary, raw: "0600050054BDCA1E00A1F3A1D201000001000000000000000000000000000000000000000000000000000000"},
		{name: "guid", value: "6a193443-3512-464b-8b8e-d905ad930ee6", kind: xe.KindGUID, raw: "6a193443-3512-464b-8b8e-d905ad930ee6", check: func(t *testing.T, v xe.Value) {
			g, ok := v.GUID()
			if !ok || g[0] != 0x6a || g[15] != 0xe6 {
				t.Errorf("GUID = %x", g)
			}
		}},
		{name: "bool", value: "true", kind: xe.KindBool, raw: "true"},
		{name: "typed string of digits", value: "123", typ: "unicode_string", kind: xe.KindString, raw: "123"},
		{name: "cdata digits are a string", value: "<![CDATA[123]]>", kind: xe.KindString, raw: "123"},
		{name: "empty", value: "", kind: xe.KindEmpty, raw: ""},
		{name: "empty cdata", value: "<![CDATA[]]>", kind: xe.KindString, raw: ""},
		{name: "entities", value: "a&lt;b&gt;c&amp;d&quot;e&apos;f&#65;&#x42;&#x20AC;", kind: xe.KindString, raw: `a<b>c&d"e'fAB€`},
		{name: "cdata with markup", value: "<![CDATA[<a & b>]]>", kind: xe.KindString, raw: "<a & b>"},
		{name: "cdata split", value: "<![CDATA[x]]]]><![CDATA[>y]]>", kind: xe.KindString, raw: "x]]>y"},
		{name: "crlf normalised", value: "<![CDATA[a\r\nb\rc]]>", kind: xe.KindString, raw: "a\nb\nc"},
		{name: "comment skipped", value: "1<!-- x -->2", kind: xe.KindUint, raw: "12"},
		{name: "padded number", value: " 42 ", kind: xe.KindUint, raw: " 42 "},
		{name: "xml child verbatim", value: "\n  <a x='1&amp;2' y=\">\"><b/><![CDATA[<c>]]></a>\n ", kind: xe.KindXML, raw: "<a x='1&amp;2' y=\">\"><b/><![CDATA[<c>]]></a>"},
		{name: "nested value elements", value: "<value><value/></value>", kind: xe.KindXML, raw: "<value><value/></value>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			typ := ""
			if c.typ != "" {
				typ = `<type name="` + c.typ + `" package="package0"/>`
			}
			e := mustDecodeOne(t, ev(`<data name="f">`+typ+`<value>`+c.value+`</value></data>`))
			v := data(t, &e, "f")
			if v.Kind != c.kind || v.Raw != c.raw {
				t.Errorf("got %v %q, want %v %q", v.Kind, v.Raw, c.kind, c.raw)
			}
			if c.check != nil {
				c.check(t, v)
			}
		})
	}
}

func TestSyntaxVariants(t *testing.T) {
	in := "\xEF\xBB\xBF<?xml version=\"1.0\"?>\n<!-- dump -->\n" +
		`<event  package = 'sqlserver'` + "\n\t" + `timestamp='2020-01-02T03:04:05.1234567+02:00' name='a&amp;b' >` +
		`<!-- c --><data name="x" ><value/></data><data name='y'/>` +
		`<action package="package0" name="z"><type name="uint64" package="package0"></type><value>7</value ></action >` +
		`</event >` + "\r\n" +
		`<event name="self" package="p" timestamp="2020-01-02T03:04:05Z"/>`
	evs, rowErrs, _ := decodeAll(t, strings.NewReader(in))
	if len(rowErrs) != 0 || len(evs) != 2 {
		t.Fatalf("%d events, errors %v", len(evs), rowErrs)
	}
	e := evs[0]
	if e.Name != "a&b" || e.Package != "sqlserver" || e.Timestamp.Raw != "2020-01-02T03:04:05.1234567+02:00" {
		t.Errorf("header %q %q %q", e.Name, e.Package, e.Timestamp.Raw)
	}
	if got := e.Timestamp.Time.UTC().Format("2006-01-02T15:04:05.0000000"); got != "2020-01-02T01:04:05.1234567" {
		t.Errorf("time %s", got)
	}
	if len(e.Fields) != 2 || e.Fields[0].Value.Kind != xe.KindEmpty || e.Fields[1].Name != "y" {
		t.Errorf("fields %+v", e.Fields)
	}
	if a, _ := e.Action("z"); a.Type != "uint64" || a.Raw != "7" || e.Actions[0].Package != "package0" {
		t.Errorf("action %+v", e.Actions)
	}
	if evs[1].Name != "self" || len(evs[1].Fields) != 0 {
		t.Errorf("self-closing event %+v", evs[1])
	}
}

func TestTimestampDigits(t *testing.T) {
	for _, c := range []struct{ raw, rfc string }{
		{"2018-04-14T16:33:39.593Z", "2018-04-14T16:33:39.593Z"},
		{"2020-05-30T20:37:36.3626428Z", "2020-05-30T20:37:36.3626428Z"},
		{"2020-05-30T20:37:36.36264281234Z", "2020-05-30T20:37:36.36264281234Z"},
		{"2020-05-30 20:37:36.3626428", "2020-05-30T20:37:36.3626428Z"},
		{"2020-05-30T20:37:36-07:00", "2020-05-30T20:37:36-07:00"},
	} {
		e := mustDecodeOne(t, `<event name="e" package="p" timestamp="`+c.raw+`"></event>`)
		if e.Timestamp.Raw != c.raw || e.Timestamp.RFC3339() != c.rfc {
			t.Errorf("%q: raw %q rfc %q", c.raw, e.Timestamp.Raw, e.Timestamp.RFC3339())
		}
	}
	e := mustDecodeOne(t, `<event name="e" package="p" timestamp="2020-05-30T20:37:36.3626428Z"></event>`)
	if e.Timestamp.Time.Nanosecond() != 362642800 {
		t.Errorf("ns = %d", e.Timestamp.Time.Nanosecond())
	}
}

// TestMalformedRows checks that each bad row gives a RowError with its row
// and line, and that the good rows around it still decode.
func TestMalformedRows(t *testing.T) {
	good := func(n string) string {
		return `<event name="` + n + `" package="p" ` + ts + `><data name="x"><value>1</value></data></event>`
	}
	cases := []struct {
		name string
		bad  string
		msg  string
	}{
		{"no name", `<event package="p" ` + ts + `></event>`, "no name"},
		{"no timestamp", `<event name="e" package="p"></event>`, "no timestamp"},
		{"bad timestamp", `<event name="e" package="p" timestamp="2020-02-30T00:00:00Z"></event>`, "timestamp"},
		{"unknown entity", ev(`<data name="x"><value>&nbsp;</value></data>`), "unknown entity"},
		{"bad char ref", ev(`<data name="x"><value>&#0;</value></data>`), "character reference"},
		{"bare ampersand", ev(`<data name="x"><value>a & b</value></data>`), "entity"},
		{"mismatched end tag", ev(`<data name="x"><value>1</value></dta>`), "</dta"},
		{"two values", ev(`<data name="x"><value>1</value><value>2</value></data>`), "two <value>"},
		{"unquoted attribute", `<event name=e package="p" ` + ts + `></event>`, "not quoted"},
		{"stray text in event", ev(`hello<data name="x"><value>1</value></data>`), "unexpected text"},
		{"unknown child", ev(`<foo/>`), "<foo"},
		{"bad xml value", ev(`<data name="x"><value><a><b></a></value></data>`), "does not match"},
		{"element in text", ev(`<data name="x"><value>1</value><text><b/></text></data>`), "unexpected element"},
		{"text outside events", `select 1`, "outside an <event>"},
		{"data without name", ev(`<data><value>1</value></data>`), "without a name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := good("a") + "\n" + c.bad + "\n" + good("b") + "\n"
			evs, rowErrs, _ := decodeAll(t, strings.NewReader(in))
			if len(evs) != 2 || evs[0].Name != "a" || evs[1].Name != "b" {
				t.Errorf("good rows: %d events", len(evs))
			}
			if len(rowErrs) != 1 {
				t.Fatalf("row errors %v, want 1", rowErrs)
			}
			re := rowErrs[0]
			if re.Row != 2 || re.Line != 2 || re.Offset != int64(len(good("a"))+1) {
				t.Errorf("row %d line %d offset %d, want row 2 line 2 offset %d", re.Row, re.Line, re.Offset, len(good("a"))+1)
			}
			if !strings.Contains(re.Error(), c.msg) {
				t.Errorf("error %q does not mention %q", re.Error(), c.msg)
			}
		})
	}
}

func TestTruncatedInputs(t *testing.T) {
	full := ev(`<data name="x"><value><![CDATA[abc]]></value></data>`)
	for i := 1; i < len(full); i++ {
		in := `<event name="a" package="p" ` + ts + `/>` + "\n" + full[:i]
		evs, rowErrs, _ := decodeAll(t, strings.NewReader(in))
		if len(evs) != 1 {
			t.Fatalf("cut at %d: %d events", i, len(evs))
		}
		if len(rowErrs) != 1 || rowErrs[0].Row != 2 || rowErrs[0].Line != 2 {
			t.Fatalf("cut at %d: errors %v", i, rowErrs)
		}
	}
	// An unclosed ring buffer document is reported, after its events.
	evs, rowErrs, _ := decodeAll(t, strings.NewReader(`<RingBufferTarget eventCount="1">`+full))
	if len(evs) != 1 || len(rowErrs) != 1 || !strings.Contains(rowErrs[0].Error(), "RingBufferTarget") {
		t.Errorf("unclosed ring buffer: %d events, %v", len(evs), rowErrs)
	}
}

func TestFatalErrors(t *testing.T) {
	d := xe.NewDecoder(strings.NewReader("\xFF\xFE<\x00e\x00"))
	if _, err := d.Next(); err == nil || !strings.Contains(err.Error(), "UTF-16") {
		t.Errorf("UTF-16: %v", err)
	}
	boom := errors.New("boom")
	d = xe.NewDecoder(io.MultiReader(strings.NewReader(ev("")), iotest.ErrReader(boom)))
	if _, err := d.Next(); err != nil {
		t.Fatalf("first event: %v", err)
	}
	if _, err := d.Next(); !errors.Is(err, boom) {
		t.Errorf("read error: %v", err)
	}
	big := ev(`<data name="x"><value><![CDATA[` + strings.Repeat("x", 3<<20) + `]]></value></data>`)
	d = xe.NewDecoder(strings.NewReader(big))
	d.SetMaxEventSize(1 << 20)
	if _, err := d.Next(); err == nil || !strings.Contains(err.Error(), "larger than 1048576 bytes") {
		t.Errorf("size limit: %v", err)
	}
}

// TestStreaming decodes the same input through readers that return one
// byte, half the asked bytes, or an error with the last data, and with an
// event far larger than the initial buffer.
func TestStreaming(t *testing.T) {
	var in []byte
	in, n := xetest.NewGenerator(7).AppendStream(in, 200<<10)
	plan, err := os.ReadFile("testdata/realdata/table_variable_plan.sqlplan")
	if err != nil {
		t.Fatal(err)
	}
	huge := ev(`<data name="showplan_xml"><value>` + strings.Repeat(string(plan), 1200) + `</value></data>`)
	if len(huge) < 3<<20 {
		t.Fatal("test event too small")
	}
	in = append(in, huge...)
	in = append(in, '\n')
	want, rowErrs, _ := decodeAll(t, bytes.NewReader(in))
	if len(want) != n+1 || len(rowErrs) != 0 {
		t.Fatalf("%d events (want %d), %v", len(want), n+1, rowErrs)
	}
	for name, r := range map[string]io.Reader{
		"one byte": iotest.OneByteReader(bytes.NewReader(in[:bytes.LastIndexByte(in[:300<<10], '\n')+1])),
		"half":     iotest.HalfReader(bytes.NewReader(in)),
		"data+err": iotest.DataErrReader(bytes.NewReader(in)),
	} {
		got, rowErrs, _ := decodeAll(t, r)
		if len(rowErrs) != 0 {
			t.Fatalf("%s: %v", name, rowErrs)
		}
		if name == "one byte" {
			// The cut keeps the generated events, not the 3 MB one.
			if len(got) != n {
				t.Fatalf("one byte: %d events, want %d", len(got), n)
			}
		} else if len(got) != len(want) {
			t.Fatalf("%s: %d events, want %d", name, len(got), len(want))
		}
		for i := range got {
			if !sameEvent(&got[i], &want[i], true) {
				t.Fatalf("%s: event %d differs", name, i)
			}
		}
	}
	last := want[len(want)-1]
	if v := last.Fields[0].Value; v.Kind != xe.KindXML || len(v.Raw) != 1200*len(bytes.TrimSpace(plan)) && len(v.Raw) < 3<<20 {
		t.Errorf("huge value kind %v len %d", v.Kind, len(v.Raw))
	}
}

func sameEvent(a, b *xe.Event, withType bool) bool {
	if a.Name != b.Name || a.Package != b.Package || a.Timestamp.Raw != b.Timestamp.Raw || !a.Timestamp.Time.Equal(b.Timestamp.Time) ||
		len(a.Fields) != len(b.Fields) || len(a.Actions) != len(b.Actions) {
		return false
	}
	same := func(x, y []xe.Field) bool {
		for i := range x {
			vx, vy := x[i].Value, y[i].Value
			if x[i].Name != y[i].Name || x[i].Package != y[i].Package || vx.Raw != vy.Raw || vx.Kind != vy.Kind ||
				vx.Text != vy.Text || vx.HasText != vy.HasText {
				return false
			}
			if withType && (vx.Type != vy.Type || vx.TypePackage != vy.TypePackage) {
				return false
			}
			ux, okx := vx.Uint()
			uy, oky := vy.Uint()
			if ux != uy || okx != oky {
				return false
			}
		}
		return true
	}
	return same(a.Fields, b.Fields) && same(a.Actions, b.Actions)
}

// TestReuseAndClone: in ReuseEvents mode the next call overwrites the
// previous event's text; a Clone survives.
func TestReuseAndClone(t *testing.T) {
	in := ev(`<data name="x"><value><![CDATA[first]]></value></data>`) + ev(`<data name="x"><value><![CDATA[other]]></value></data>`)
	d := xe.NewDecoder(strings.NewReader(in))
	d.ReuseEvents()
	e1, err := d.Next()
	if err != nil {
		t.Fatal(err)
	}
	kept := e1.Clone()
	if _, err := d.Next(); err != nil {
		t.Fatal(err)
	}
	if kept.Fields[0].Value.Raw != "first" {
		t.Errorf("clone changed: %q", kept.Fields[0].Value.Raw)
	}
	if e1.Fields[0].Value.Raw != "other" {
		t.Errorf("view was expected to be overwritten (documented lifetime), got %q", e1.Fields[0].Value.Raw)
	}
	// Without ReuseEvents events are independent.
	d = xe.NewDecoder(strings.NewReader(in))
	a, _ := d.Next()
	b, _ := d.Next()
	if a.Fields[0].Value.Raw != "first" || b.Fields[0].Value.Raw != "other" {
		t.Errorf("owned events %q %q", a.Fields[0].Value.Raw, b.Fields[0].Value.Raw)
	}
}

func TestAllocationsPerEvent(t *testing.T) {
	in, n := xetest.NewGenerator(3).AppendStream(nil, 4<<20)
	for _, reuse := range []bool{false, true} {
		allocs := testing.AllocsPerRun(3, func() {
			d := xe.NewDecoder(bytes.NewReader(in))
			if reuse {
				d.ReuseEvents()
			}
			for {
				if _, err := d.Next(); err != nil {
					break
				}
			}
		})
		perEvent := allocs / float64(n)
		limit := 2.02 // two per event plus the decoder's own few
		if reuse {
			limit = 0.02
		}
		if perEvent > limit {
			t.Errorf("reuse=%v: %.3f allocations per event, limit %.2f", reuse, perEvent, limit)
		}
	}
}

func TestIterator(t *testing.T) {
	in := ev("") + "junk" + ev("")
	var names []string
	var errs int
	for e, err := range xe.NewDecoder(strings.NewReader(in)).All() {
		if err != nil {
			errs++
			continue
		}
		names = append(names, e.Name)
	}
	if len(names) != 2 || errs != 1 {
		t.Errorf("names %v errors %d", names, errs)
	}
}

// TestMemoryIndependentOfEventCount streams 48 MB of generated rows through
// a pipe and checks that the heap never holds more than a few MB: memory
// depends on the largest event, not on how many there are.
func TestMemoryIndependentOfEventCount(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 48 MB")
	}
	pr, pw := io.Pipe()
	gen := xetest.NewGenerator(21)
	var written int // events
	go func() {
		var chunk []byte
		for size := 0; size < 48<<20; size += len(chunk) {
			var n int
			chunk, n = gen.AppendStream(chunk[:0], 256<<10)
			written += n
			if _, err := pw.Write(chunk); err != nil {
				return
			}
		}
		pw.Close()
	}()
	d := xe.NewDecoder(pr)
	var ms runtime.MemStats
	var peak uint64
	events := 0
	for {
		_, err := d.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		events++
		if events%5000 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
	}
	if events != written {
		t.Fatalf("decoded %d events, wrote %d", events, written)
	}
	t.Logf("%d events, peak heap in use %d MB", events, peak>>20)
	if peak > 24<<20 {
		t.Errorf("heap in use reached %d MB while streaming 48 MB", peak>>20)
	}
}

func TestDecodeRow(t *testing.T) {
	rows, n := xetest.NewGenerator(4).AppendStream(nil, 64<<10)
	want, _, _ := decodeAll(t, bytes.NewReader(rows))
	if len(want) != n {
		t.Fatal("setup")
	}
	for _, reuse := range []bool{false, true} {
		d := xe.NewDecoder(nil)
		if reuse {
			d.ReuseEvents()
		}
		for i, line := range bytes.Split(bytes.TrimSuffix(rows, []byte("\n")), []byte("\n")) {
			got, err := d.DecodeRow(line)
			if err != nil {
				t.Fatalf("row %d: %v", i, err)
			}
			if !sameEvent(&got, &want[i], true) {
				t.Fatalf("row %d differs", i)
			}
		}
	}
	d := xe.NewDecoder(nil)
	for _, bad := range []string{"", "  ", ev("") + ev(""), ev("") + "x", `<event name="a">`} {
		var re *xe.RowError
		if _, err := d.DecodeRow([]byte(bad)); !errors.As(err, &re) || re.Row != 1 {
			t.Errorf("DecodeRow(%q) = %v, want a RowError for row 1", bad, err)
		}
	}
	// A row bigger than the initial buffer, after small ones.
	big := ev(`<data name="x"><value><![CDATA[` + strings.Repeat("y", 3<<20) + `]]></value></data>`)
	got, err := d.DecodeRow([]byte(big))
	if err != nil || len(got.Fields[0].Value.Raw) != 3<<20 {
		t.Errorf("big row: %v", err)
	}
	if got, err := d.DecodeRow([]byte(ev(""))); err != nil || got.Name != "e" {
		t.Errorf("after big row: %v", err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := d.DecodeRow([]byte(rowsFirst(rows))); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 3 {
		t.Errorf("DecodeRow: %.1f allocations per row", allocs)
	}
}

func rowsFirst(rows []byte) []byte { return rows[:bytes.IndexByte(rows, '\n')] }

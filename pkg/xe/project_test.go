package xe_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/queryreplay/queryreplay/pkg/xe"
	"github.com/queryreplay/queryreplay/pkg/xe/xetest"
)

// The decoder's fast paths and its Projection mode are held to the generic,
// full decoder: the fast paths give exactly its results on every input
// (events and errors), a projection gives its events with the unnamed
// fields left out.

// item is one result of Next: an event (owned) or an error.
type item struct {
	ev  *xe.Event
	err error
}

type decodeOpts struct {
	reuse, oneByte, lenient bool
	proj                    *xe.Projection
}

// decodeItems decodes in to the end (or a fatal error), at most 100,000
// results.
func decodeItems(t testing.TB, in []byte, o decodeOpts) []item {
	t.Helper()
	var r io.Reader = bytes.NewReader(in)
	if o.oneByte {
		r = iotest.OneByteReader(r)
	}
	d := xe.NewDecoder(r)
	if o.reuse {
		d.ReuseEvents()
	}
	if o.lenient {
		d.SkipTextBetweenEvents()
	}
	if o.proj != nil {
		d.Project(o.proj)
	}
	var out []item
	for len(out) < 100_000 {
		ev, err := d.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			out = append(out, item{err: err})
			var re *xe.RowError
			if !errors.As(err, &re) {
				return out
			}
			continue
		}
		c := ev.Clone()
		out = append(out, item{ev: &c})
	}
	t.Fatal("decoder did not finish")
	return nil
}

// clean reports whether items holds events only.
func clean(items []item) bool {
	for _, it := range items {
		if it.err != nil {
			return false
		}
	}
	return true
}

// sameItems compares two decodings exactly (every Value's parsed number
// included) and describes the first difference.
func sameItems(a, b []item) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d results, want %d", len(a), len(b))
	}
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			return fmt.Sprintf("result %d:\n got %s\nwant %s", i, describe(a[i]), describe(b[i]))
		}
	}
	return ""
}

func describe(it item) string {
	if it.err != nil {
		return fmt.Sprintf("error %#v", it.err)
	}
	return fmt.Sprintf("%#v", *it.ev)
}

// project is what a projection keeps of a fully decoded event.
func project(ev *xe.Event, p *xe.Projection) xe.Event {
	out := *ev
	keep := func(fs []xe.Field, names []string) []xe.Field {
		var kept []xe.Field
		for _, f := range fs {
			for _, n := range names {
				if f.Name == n {
					kept = append(kept, f)
					break
				}
			}
		}
		return kept
	}
	out.Fields = keep(ev.Fields, p.Fields[ev.Name])
	out.Actions = keep(ev.Actions, p.Actions)
	return out
}

func projectAll(items []item, p *xe.Projection) []item {
	out := make([]item, len(items))
	for i, it := range items {
		e := project(it.ev, p)
		out[i] = item{ev: &e}
	}
	return out
}

// namedInput is one input of the corpus.
type namedInput struct {
	name string
	data []byte
}

// trickyBodies are event bodies in every form the generic code accepts
// and the fast paths must leave to it (or read the same way), and some it
// rejects.
var trickyBodies = []string{
	`<data name="x"><value>12</value></data>`,
	`<data  name="x" ><value> 12 </value ></data >`,
	`<data name='x'><value>1</value></data>`,
	`<data name="a&amp;b"><value>1</value></data>`,
	`<data name="x" package="p"><value>1</value></data>`,
	`<data package="p" name="x"><value>1</value></data>`,
	`<data name="x"><value>a&lt;b</value><text>t&amp;</text></data>`,
	"<data name=\"x\"><value>a\r\nb</value></data>",
	"<data name=\"x\"><value><![CDATA[a\r\nb]]></value></data>",
	`<data name="x"><value><![CDATA[a]]><![CDATA[b]]></value></data>`,
	`<data name="x"><value> <![CDATA[a]]></value></data>`,
	`<data name="x"><value><![CDATA[</data></value></event>]]></value></data>`,
	`<data name="x"><value><![CDATA[]]></value><text><![CDATA[]]></text></data>`,
	`<data name="x"><!-- c --><value>1</value></data>`,
	`<data name="x"><value>1</value><!-- c --></data>`,
	`<data name="x"><type name="uint64" package="package0"/><value>7</value></data>`,
	`<data name="x"><type package="package0" name="uint64"/><value>7</value></data>`,
	`<data name="x"><type name="float64" package="package0"/><value>5</value></data>`,
	`<data name="x"><type name="unicode_string" package="package0"/><value></value></data>`,
	`<data name="x"><type name="boolean" package="package0"/><value>true</value></data>`,
	`<data name="x"><type name="wait_types" package="sqlos"></type><value>66</value><text>PAGEIOLATCH_SH</text></data>`,
	`<data name="x"><text>T</text><value>1</value></data>`,
	`<data name="x"><value></value></data>`,
	`<data name="x"><value/></data>`,
	`<data name="x"/>`,
	`<data name="x"></data>`,
	`<data name="n19"><value>9999999999999999999</value></data><data name="n20"><value>18446744073709551615</value></data><data name="big"><value>18446744073709551616</value></data>`,
	`<data name="z"><value>007</value></data><data name="neg"><value>-5</value></data><data name="f"><value>1.5</value></data><data name="e"><value>2e3</value></data>`,
	`<data name="h"><value>0x1F</value></data><data name="H"><value>0X1f</value></data><data name="b"><value>0x0123456789ABCDEF01</value></data>`,
	`<data name="ph"><value>0600050012AB</value></data><data name="g"><value>6F9619FF-8B86-D011-B42D-00C04FC964FF</value></data><data name="t"><value>false</value></data>`,
	`<data name="xml"><value><a b="1>" c='2'><c/><?pi x?><!-- d --><![CDATA[<e>]]></a></value></data>`,
	`<data name="nested"><value><data name="inner"><value>1</value></data></value></data><data name="after"><value>2</value></data>`,
	`<action name="x" package="p"><value>1</value></action>`,
	`<action package="p" name="x"><value>1</value></action>`,
	`<action name="x"><value>1</value></action>`,
	`<action name="x" package="p"><value>1</value><text>one</text></action>`,
	"\n\t<data name=\"x\"><value>1</value></data>\n\t<action name=\"y\" package=\"p\"><value>2</value></action>\n",
	// malformed: errors, the same ones with and without the fast paths
	`<data name="x"><value>&bogus;</value></data>`,
	`<data name="x"><value>1</valu></data>`,
	`<data name="x"><value>1</value><value>2</value></data>`,
	`<data name="x"><value>1</value></action>`,
	`<data name="x"><value>1</value></data>stray`,
	`<data name=""><value>1</value></data>`,
	`<data name="x"><value>1</value>`,
	`<data name="x"><value><a></b></value></data>`,
}

// trickyEvents are whole events: start tags and timestamps in every form.
var trickyEvents = []string{
	`<event name="e" package="p" timestamp="2020-01-02T03:04:05.678Z"></event>`,
	`<event name="e" package="p" timestamp="2020-01-02T03:04:05.678Z"/>`,
	`<event timestamp="2020-01-02T03:04:05.678Z" package="p" name="e"></event>`,
	`<event name="e" package="p" timestamp="2020-01-02T03:04:05.678Z" extra="1"></event>`,
	`<event name="a&amp;b" package="p" timestamp="2020-01-02T03:04:05.678Z"></event>`,
	`<event name='e' package='p' timestamp='2020-01-02T03:04:05.678Z'></event>`,
	`<event  name="e"  package="p"  timestamp="2020-01-02T03:04:05.678Z" ></event >`,
	`<event name="e" package="p" timestamp="2020-01-02T03:04:05.1234567+02:00"></event>` +
		`<event name="e" package="p" timestamp="2020-01-02T03:04:05.1234567-05:30"></event>` +
		`<event name="e" package="p" timestamp="2020-01-02T03:04:05"></event>` +
		`<event name="e" package="p" timestamp="2020-01-02 03:04:05.5"></event>` +
		`<event name="e" package="p" timestamp="2020-01-02T03:04:06.000Z"></event>`,
	`<event name="e" package="p" timestamp="2020-02-30T03:04:05.678Z"></event>`,
	`<event name="e" package="p" timestamp="2020-01-02T03:04:05.Z"></event>`,
	`<event name="e" package="p" timestamp="2020-01-02T03:04:05.678Z+01:00"></event>`,
	`<event name="" package="p" timestamp="2020-01-02T03:04:05.678Z"></event>`,
	`<event name="e" package="p"></event>`,
	`<event name="e" packagf="p" timestamp="2020-01-02T03:04:05.678Z"></event>`,
	`<event name="e" package="p" timestamq="2020-01-02T03:04:05.678Z" timestamp="2020-01-02T03:04:05.679Z"></event>`,
	`<event name="e" package_="p" timestamp="2020-01-02T03:04:05.678Z"></event>`,
	`<event name="e" package="p" timestamp="2020-01-02T03:04:05.678Z"><data` + "\t" + `name="x"><value>1</value></data><data name ="y"><value>2</value></data>` +
		`<datax name="z"><value>3</value></datax></event>`,
	`<event name="e" package="p" timestamp="2020-01-02T03:04:05.678Z"><action  name="x" package="p"><value>1</value></action><actionx name="y"/></event>`,
	`<event name="e" package="p" timestamp="2020-01-02T03:04:05.678Z"><data name="x"><value>1</value></data></event  >` +
		`<event name="e" package="p" timestamp="2020-01-02T03:04:05.678Z"></eventx>`,
	`<event name="e" package="p" timestamp="2020-01-02T03:04:05.678Z"><action name="x" packagf="p"><value>1</value></action>` +
		`<action name="y" package="p" ><value>1</value></action><data name="z" package="q"><value>1</value></data></event>`,
	// Events of one name whose fields change from one to the next (the
	// layouts a projection remembers, layout.go, must not be trusted).
	layoutEvent(`<data name="x"><value>1</value></data><data name="y"><value>2</value></data><action name="x" package="p"><value>3</value></action>`) +
		layoutEvent(`<data name="y"><value>4</value></data><data name="x"><value>5</value></data><action name="x" package="p"><value>6</value></action>`) +
		layoutEvent(`<action name="x" package="p"><value>7</value></action><data name="y"><value>8</value></data><data name="x"><value>9</value></data>`) +
		layoutEvent(`<data name="x" package="q"><value>10</value></data><data name="y"><value>a&amp;b</value></data><action name="x" package="p"><value><![CDATA[11]]></value></action>`) +
		layoutEvent(`<data name="x"><type name="uint64" package="package0"/><value>12</value></data><data name="xx"><value>13</value></data>`) +
		layoutEvent(`<data name="xy"><value>14</value></data>`) +
		layoutEvent(`<data name="x"><value>15</value></data><data name="y"><value>16</value></data><action name="x" package="p"><value>17</value></action>`),
	layoutEvent(`<data name="x"><value>1</value></data><data name="y"><value>2</value></data>`) +
		layoutEvent(`<data name=""><value>1</value></data><data name="y"><value>2</value></data>`) +
		layoutEvent(`<data name="x"><value>&bogus;</value></data><data name="y"><value>2</value></data>`),
	`<RingBufferTarget truncated="0" eventCount="1"><event name="e" package="p" timestamp="2020-01-02T03:04:05.678Z"><data name="x"><type name="uint32" package="package0"/><value>1</value></data></event></RingBufferTarget>`,
}

func layoutEvent(body string) string {
	return `<event name="e" package="p" timestamp="2020-01-02T03:04:05.678Z">` + body + `</event>`
}

// corpus is every real capture, generated streams and the tricky forms.
func corpus(t testing.TB) []namedInput {
	var out []namedInput
	err := filepath.WalkDir("testdata/realdata/xe_event_xml", func(path string, de os.DirEntry, err error) error {
		if err != nil || de.IsDir() || strings.HasSuffix(path, ".tsv") {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out = append(out, namedInput{path, raw})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 10 {
		t.Fatalf("only %d real captures found", len(out))
	}
	for seed := uint64(1); seed <= 3; seed++ {
		data, _ := xetest.NewGenerator(seed).AppendStream(nil, 256<<10)
		out = append(out, namedInput{fmt.Sprintf("generated seed %d", seed), data})
	}
	for i, body := range trickyBodies {
		out = append(out, namedInput{fmt.Sprintf("body %d %q", i, body), []byte(ev(body))})
	}
	for i, e := range trickyEvents {
		out = append(out, namedInput{fmt.Sprintf("event %d %q", i, e), []byte(e)})
	}
	return out
}

// lenientInput tells the inputs that hold text between events (result
// sets printed as tables).
func lenientInput(name string) bool { return strings.HasSuffix(name, ".txt") }

func TestFastPathMatchesGeneric(t *testing.T) {
	defer xe.SetFastPaths(true)
	for _, in := range corpus(t) {
		for _, o := range []decodeOpts{{}, {reuse: true}, {oneByte: true}, {reuse: true, oneByte: true}} {
			if o.oneByte && len(in.data) > 64<<10 {
				continue // one byte at a time is slow; the small inputs cover the buffer ends
			}
			o.lenient = lenientInput(in.name)
			xe.SetFastPaths(false)
			want := decodeItems(t, in.data, o)
			xe.SetFastPaths(true)
			got := decodeItems(t, in.data, o)
			if diff := sameItems(got, want); diff != "" {
				t.Errorf("%s (%+v): fast paths differ from the generic code: %s", in.name, o, diff)
			}
		}
	}
}

// exporterLike is a projection of the kind the exporter uses.
var exporterLike = &xe.Projection{
	Actions: []string{"event_sequence", "database_id", "query_hash"},
	Fields: map[string][]string{
		"wait_info":               {"wait_type", "opcode", "duration", "signal_duration"},
		"physical_page_read":      {"file_id", "page_id"},
		"sql_statement_completed": {"duration", "cpu_time", "logical_reads"},
		"lock_acquired":           {"mode", "resource_type"},
		"e":                       {"x", "after", "n20", "xml", "nested"},
	},
}

// projectionsFor builds projections from the names an input's events
// carry: none, all, every other name, and random subsets.
func projectionsFor(items []item, seed uint64) []*xe.Projection {
	fields := map[string][]string{}
	var actions []string
	seen := map[string]bool{}
	for _, it := range items {
		for _, f := range it.ev.Fields {
			if k := it.ev.Name + "\x00" + f.Name; !seen[k] {
				seen[k] = true
				fields[it.ev.Name] = append(fields[it.ev.Name], f.Name)
			}
		}
		for _, a := range it.ev.Actions {
			if k := "\x00" + a.Name; !seen[k] {
				seen[k] = true
				actions = append(actions, a.Name)
			}
		}
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	pick := func(names []string, keep func(i int) bool) []string {
		var out []string
		for i, n := range names {
			if keep(i) {
				out = append(out, n)
			}
		}
		return out
	}
	subset := func(keep func(i int) bool) *xe.Projection {
		p := &xe.Projection{Actions: pick(actions, keep), Fields: map[string][]string{}}
		for ev, names := range fields {
			p.Fields[ev] = pick(names, keep)
		}
		return p
	}
	return []*xe.Projection{
		{},
		exporterLike,
		subset(func(int) bool { return true }),
		subset(func(i int) bool { return i%2 == 0 }),
		subset(func(i int) bool { return i%2 == 1 }),
		subset(func(int) bool { return rng.IntN(3) == 0 }),
		subset(func(int) bool { return rng.IntN(3) != 0 }),
	}
}

// TestProjectionMatchesFullDecoder: on every input the full decoder reads
// without error, a projected decoder gives the same events with the
// unnamed fields left out, whatever the projection, in both event modes
// and with any buffer boundaries.
func TestProjectionMatchesFullDecoder(t *testing.T) {
	compared := 0
	for _, in := range corpus(t) {
		lenient := lenientInput(in.name)
		full := decodeItems(t, in.data, decodeOpts{lenient: lenient})
		if !clean(full) {
			// Malformed rows: the projection must still finish cleanly;
			// what it reports is checked by FuzzProjection's rules.
			decodeItems(t, in.data, decodeOpts{lenient: lenient, proj: exporterLike})
			continue
		}
		for _, p := range projectionsFor(full, uint64(len(in.data))) {
			want := projectAll(full, p)
			for _, o := range []decodeOpts{{}, {reuse: true}, {oneByte: true, reuse: true}} {
				if o.oneByte && len(in.data) > 64<<10 {
					continue
				}
				o.lenient, o.proj = lenient, p
				if diff := sameItems(decodeItems(t, in.data, o), want); diff != "" {
					t.Errorf("%s (projection %+v, %+v): %s", in.name, p, o, diff)
				}
				compared++
			}
		}
	}
	if compared < 100 {
		t.Fatalf("only %d comparisons", compared)
	}
}

// A projection skips the fields it does not name without checking them:
// a bad reference in a skipped value does not make the row malformed, one
// in a kept value still does, and the rows around stay apart.
func TestProjectionSkipsUnnamedFieldsUnchecked(t *testing.T) {
	in := ev(`<data name="bad"><value>&bogus;</value></data><data name="x"><value>1</value></data>`) +
		ev(`<data name="x"><value>&bogus;</value></data>`) +
		ev(`<data name="x"><value>3</value></data>`)
	p := &xe.Projection{Fields: map[string][]string{"e": {"x"}}}
	items := decodeItems(t, []byte(in), decodeOpts{proj: p})
	if len(items) != 3 || items[0].ev == nil || items[1].err == nil || items[2].ev == nil {
		t.Fatalf("got %+v", items)
	}
	for i, want := range map[int]string{0: "1", 2: "3"} {
		if fs := items[i].ev.Fields; len(fs) != 1 || fs[0].Name != "x" || fs[0].Value.Raw != want {
			t.Errorf("event %d fields %+v, want x=%s", i, fs, want)
		}
	}
	var re *xe.RowError
	if !errors.As(items[1].err, &re) || re.Row != 2 || !strings.Contains(re.Error(), "bogus") {
		t.Errorf("row 2 error %v", items[1].err)
	}
	full := decodeItems(t, []byte(in), decodeOpts{})
	if full[0].err == nil {
		t.Errorf("the full decoder accepted the bad skipped value")
	}
}

// Project(nil) decodes everything again; the projection survives Reset
// and is the decoder's own copy.
func TestProjectResetAndNil(t *testing.T) {
	in := ev(`<data name="x"><value>1</value></data><data name="y"><value>2</value></data>`)
	names := []string{"x"}
	p := &xe.Projection{Fields: map[string][]string{"e": names}}
	d := xe.NewDecoder(strings.NewReader(in))
	d.Project(p)
	names[0] = "y" // the decoder copied the projection
	got, err := d.Next()
	if err != nil || len(got.Fields) != 1 || got.Fields[0].Name != "x" {
		t.Fatalf("projected %+v, %v", got, err)
	}
	d.Reset(strings.NewReader(in))
	if got, err = d.Next(); err != nil || len(got.Fields) != 1 {
		t.Fatalf("after Reset %+v, %v", got, err)
	}
	d.Project(nil)
	d.Reset(strings.NewReader(in))
	if got, err = d.Next(); err != nil || len(got.Fields) != 2 {
		t.Fatalf("after Project(nil) %+v, %v", got, err)
	}
	if got, err = d.DecodeRow([]byte(in)); err != nil || len(got.Fields) != 2 {
		t.Fatalf("DecodeRow %+v, %v", got, err)
	}
}

// FuzzFastPath: with and without the fast paths the decoder returns the
// same results on every input, errors included.
func FuzzFastPath(f *testing.F) {
	for _, in := range corpus(f) {
		if len(in.data) <= 64<<10 {
			f.Add(in.data)
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		defer xe.SetFastPaths(true)
		for _, o := range []decodeOpts{{}, {reuse: true, oneByte: len(in) < 4096}} {
			xe.SetFastPaths(false)
			want := decodeItems(t, in, o)
			xe.SetFastPaths(true)
			if diff := sameItems(decodeItems(t, in, o), want); diff != "" {
				t.Fatalf("fast paths differ from the generic code: %s", diff)
			}
		}
		checkRow(t, in)
	})
}

// decodeRowItem is DecodeRow's result on in as an item.
func decodeRowItem(in []byte, reuse bool, p *xe.Projection) item {
	d := xe.NewDecoder(nil)
	if reuse {
		d.ReuseEvents()
	}
	d.Project(p)
	ev, err := d.DecodeRow(in)
	if err != nil {
		return item{err: err}
	}
	c := ev.Clone()
	return item{ev: &c}
}

// checkRow holds DecodeRow (the row decoded where it lies, as the
// exporter reads rows) to the same rules: with and without the fast paths
// the same result; projected, the full event with the unnamed fields left
// out.
func checkRow(t *testing.T, in []byte) {
	t.Helper()
	defer xe.SetFastPaths(true)
	xe.SetFastPaths(false)
	want := decodeRowItem(in, false, nil)
	xe.SetFastPaths(true)
	if diff := sameItems([]item{decodeRowItem(in, true, nil)}, []item{want}); diff != "" {
		t.Fatalf("DecodeRow: fast paths differ from the generic code: %s", diff)
	}
	if want.ev == nil {
		return
	}
	for _, p := range projectionsFor([]item{want}, uint64(len(in))) {
		got := decodeRowItem(in, true, p)
		if diff := sameItems([]item{got}, projectAll([]item{want}, p)); diff != "" {
			t.Fatalf("DecodeRow, projection %+v: %s", p, diff)
		}
	}
}

// TestDecodeRowFastPathsAndProjections runs checkRow on every event of
// the corpus as a row of its own.
func TestDecodeRowFastPathsAndProjections(t *testing.T) {
	rows := 0
	for _, in := range corpus(t) {
		if len(in.data) > 1<<20 {
			continue
		}
		for _, it := range decodeItems(t, in.data, decodeOpts{lenient: lenientInput(in.name)}) {
			if it.ev != nil {
				checkRow(t, it.ev.AppendXML(nil, xe.FormEventFile))
				rows++
			}
		}
		if bytes.Count(in.data, []byte("<event")) == 1 {
			checkRow(t, in.data) // as written, in whatever form
			rows++
		}
	}
	if rows < 1000 {
		t.Fatalf("only %d rows", rows)
	}
}

// FuzzProjection: a projection (chosen by sel from the names the input's
// events carry) never panics or hangs; where the full decoder reads the
// input without error, the projected events are the full ones with the
// unnamed fields left out; errors are RowErrors with sane positions.
func FuzzProjection(f *testing.F) {
	for _, in := range corpus(f) {
		if len(in.data) <= 64<<10 {
			f.Add(in.data, uint64(len(in.data)))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte, sel uint64) {
		full := decodeItems(t, in, decodeOpts{})
		var events []item
		for _, it := range full {
			if it.ev != nil {
				events = append(events, it)
			}
		}
		ps := projectionsFor(events, sel)
		p := ps[sel%uint64(len(ps))]
		got := decodeItems(t, in, decodeOpts{proj: p, reuse: sel&1 == 1})
		for _, it := range got {
			var re *xe.RowError
			if errors.As(it.err, &re) && (re.Row < 1 || re.Line < 1 || re.Offset < 0 || re.Offset > int64(len(in))) {
				t.Fatalf("bad RowError position %+v", re)
			}
		}
		if clean(full) {
			if diff := sameItems(got, projectAll(full, p)); diff != "" {
				t.Fatalf("projection %+v: %s", p, diff)
			}
		}
	})
}

package xe_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/pkg/xe"
)

// eventsJSON renders events one JSON object per line; withRawTime false
// prints timestamps from the instant (XML prints 3 fractional digits, .xel
// readers 7).
func eventsJSON(evs []xe.Event, withRawTime bool) []string {
	var out []string
	for _, ev := range evs {
		if !withRawTime {
			ev.Timestamp.Raw = ev.Timestamp.Time.UTC().Format(time.RFC3339Nano)
		}
		out = append(out, string(ev.AppendJSON(nil)))
	}
	return out
}

func readAllXEL(t *testing.T, b []byte) []xe.Event {
	t.Helper()
	var out []xe.Event
	for ev, err := range xe.NewXELReader(bytes.NewReader(b)).All() {
		if err != nil {
			t.Fatalf("read back: %v", err)
		}
		out = append(out, ev.Clone())
	}
	return out
}

func writeXEL(t *testing.T, evs []xe.Event) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := xe.NewXELWriter(&buf)
	for i := range evs {
		if err := w.Write(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func compareEvents(t *testing.T, want, got []xe.Event, withRawTime bool) {
	t.Helper()
	w, g := eventsJSON(want, withRawTime), eventsJSON(got, withRawTime)
	if len(w) != len(g) {
		t.Fatalf("%d events read back, want %d", len(g), len(w))
	}
	for i := range w {
		if w[i] != g[i] {
			t.Fatalf("event %d differs:\nwant %s\ngot  %s", i+1, w[i], g[i])
		}
	}
}

// The real SQL Server file, read, written again and read back, gives the
// same events (timestamps included: both sides are .xel, seven digits).
func TestXELWriterRoundTripsRealFile(t *testing.T) {
	raw, err := os.ReadFile(xelRealFile)
	if err != nil {
		t.Fatal(err)
	}
	want := readAllXEL(t, raw)
	out := writeXEL(t, want)
	if !xe.IsXEL(out) {
		t.Fatal("output does not start like a .xel stream")
	}
	compareEvents(t, want, readAllXEL(t, out), true)
}

// Real event XML (fn_xe_file_target_read_file rows and ring_buffer
// documents), decoded, written as .xel and read back, gives the same events.
func TestXELWriterRoundTripsEventXML(t *testing.T) {
	files, _ := filepath.Glob("testdata/realdata/xe_event_xml/*/*.xml")
	files = append(files, "testdata/realdata/xe_event_xml/ringbuffer_error_reported_callstack_sql2017_error701.xml")
	if len(files) < 5 {
		t.Fatalf("only %d XML samples found", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var want []xe.Event
			d := xe.NewDecoder(bytes.NewReader(raw))
			for {
				ev, err := d.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("decode: %v", err)
				}
				// ring_buffer XML carries <type>; .xel read back without
				// IncludeTypes does not
				for i := range ev.Fields {
					ev.Fields[i].Value.Type, ev.Fields[i].Value.TypePackage = "", ""
				}
				for i := range ev.Actions {
					ev.Actions[i].Value.Type, ev.Actions[i].Value.TypePackage = "", ""
				}
				want = append(want, ev.Clone())
			}
			if len(want) == 0 {
				t.Skip("no events in sample")
			}
			var buf bytes.Buffer
			w := xe.NewXELWriter(&buf)
			for i := range want {
				if err := w.Write(&want[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Logf("not writable exactly (reported, not written): %v", err)
				if !strings.Contains(err.Error(), "cannot be written exactly") && !strings.Contains(err.Error(), "no one .xel type") {
					t.Fatal("unexpected error")
				}
				return
			}
			compareEvents(t, want, readAllXEL(t, buf.Bytes()), false)
		})
	}
}

func TestXELWriterRefusesWhatItCannotReproduce(t *testing.T) {
	ts := xe.Timestamp{Raw: "2026-11-29T10:00:00.000Z", Time: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)}
	num := func(raw string, k xe.Kind) xe.Value {
		d := xe.NewDecoder(strings.NewReader(`<event name="e" package="p" timestamp="2026-11-29T10:00:00.000Z"><data name="f"><value>` + raw + `</value></data></event>`))
		ev, err := d.Next()
		if err != nil || ev.Fields[0].Value.Kind != k {
			t.Fatalf("sample %q: %v %v", raw, err, ev.Fields)
		}
		return ev.Fields[0].Value
	}
	cases := []struct {
		name string
		evs  []xe.Event
		want string
	}{
		{"no timestamp", []xe.Event{{Name: "e", Package: "p"}}, "no timestamp"},
		{"mixed kinds", []xe.Event{
			{Name: "e", Package: "p", Timestamp: ts, Fields: []xe.Field{{Name: "f", Value: num("12", xe.KindUint)}}},
			{Name: "e", Package: "p", Timestamp: ts, Fields: []xe.Field{{Name: "f", Value: num("true", xe.KindBool)}}},
		}, "no one .xel type"},
		{"field lists differ", []xe.Event{
			{Name: "e", Package: "p", Timestamp: ts, Fields: []xe.Field{{Name: "f", Value: num("12", xe.KindUint)}}},
			{Name: "e", Package: "p", Timestamp: ts},
		}, "same fields"},
		{"short pointer", []xe.Event{
			{Name: "e", Package: "p", Timestamp: ts, Fields: []xe.Field{{Name: "f", Value: num("0x1F", xe.KindHex)}}},
		}, "cannot be written exactly"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := xe.NewXELWriter(io.Discard)
			var err error
			for i := range tc.evs {
				if err = w.Write(&tc.evs[i]); err != nil {
					break
				}
			}
			if err == nil {
				err = w.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// ptrJSON matches a pointer's JSON text; XELReader prints pointers in
// upper case.
var ptrJSON = regexp.MustCompile(`"0x[0-9A-Fa-f]{16}"`)

// FuzzXELWriter: whatever events XML decodes to, the writer either refuses
// them with an error or writes a file that reads back as the same events
// (pointers aside, which read back in upper case).
func FuzzXELWriter(f *testing.F) {
	files, _ := filepath.Glob("testdata/realdata/xe_event_xml/*/*.xml")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`<event name="e" package="p" timestamp="2026-11-29T10:00:00.123Z"><data name="n"><value>7</value></data><action name="a" package="q"><value><![CDATA[x]]></value></action></event>`))
	// inputs the fuzzer once broke the writer with: a flag map's text with
	// empty flag names, a NUL and invalid UTF-8 in names, a year past 2262
	f.Add([]byte("<event name=\"0\"package=\"0\"timestamp=\"2000-01-01 00:00:00\"><data name=\"0\"><value>0x00000019</value><text>, , </text></data></event>"))
	f.Add([]byte("<event name=\"0\"package=\"0\"timestamp=\"2000-01-01 00:00:00\"><action name=\"0\"package=\"\x00\"></action></event>"))
	f.Add([]byte("<!>   <event name=\"0\"package=\"0\"timestamp=\"7000-01-01 00:00:00\"></event>0"))
	f.Add([]byte("<event name=\"0\"package=\"0\"timestamp=\"2000-01-01 00:00:00\"><action name=\"\xd0\"package=\"0\"></action></event>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var evs []xe.Event
		d := xe.NewDecoder(bytes.NewReader(data))
		for len(evs) < 1000 {
			ev, err := d.Next()
			if err != nil {
				break
			}
			if ev.Timestamp.Time.Year() < 1700 || ev.Timestamp.Time.Year() > 9000 {
				return // outside what FILETIME ticks from a package start can hold
			}
			for i := range ev.Fields {
				ev.Fields[i].Value.Type, ev.Fields[i].Value.TypePackage = "", ""
			}
			for i := range ev.Actions {
				ev.Actions[i].Value.Type, ev.Actions[i].Value.TypePackage = "", ""
			}
			evs = append(evs, ev.Clone())
		}
		var buf bytes.Buffer
		w := xe.NewXELWriter(&buf)
		for i := range evs {
			if w.Write(&evs[i]) != nil {
				return
			}
		}
		if w.Close() != nil {
			return
		}
		var got []xe.Event
		for ev, err := range xe.NewXELReader(bytes.NewReader(buf.Bytes())).All() {
			if err != nil {
				t.Fatalf("the writer's own file does not read back: %v", err)
			}
			got = append(got, ev.Clone())
		}
		norm := func(evs []xe.Event) []string {
			out := eventsJSON(evs, false)
			for i := range out {
				out[i] = ptrJSON.ReplaceAllStringFunc(out[i], strings.ToLower)
			}
			return out
		}
		a, b := norm(evs), norm(got)
		if len(a) != len(b) {
			t.Fatalf("%d events read back, want %d", len(b), len(a))
		}
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("event %d differs:\nwant %s\ngot  %s", i+1, a[i], b[i])
			}
		}
	})
}

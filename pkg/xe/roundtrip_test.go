package xe_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/xe"
	"github.com/queryreplay/queryreplay/pkg/xe/xetest"
)

// realEvents decodes every real event file (tables read leniently).
func realEvents(t testing.TB) []xe.Event {
	t.Helper()
	var all []xe.Event
	err := filepath.WalkDir(realdata, func(path string, de os.DirEntry, err error) error {
		if err != nil || de.IsDir() || strings.HasSuffix(path, ".tsv") {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		evs, _, _ := decodeAll(t, bytes.NewReader(raw), (*xe.Decoder).SkipTextBetweenEvents)
		all = append(all, evs...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// TestRoundTrip writes every real event back as XML in both forms and
// decodes it again: nothing may change (the event_file form has no <type>).
func TestRoundTrip(t *testing.T) {
	evs := realEvents(t)
	gen := xetest.NewGenerator(11)
	for i := 0; i < 200; i++ {
		e := gen.Next()
		e.Actions = gen.FullActions()
		evs = append(evs, e)
	}
	if len(evs) < 217 {
		t.Fatalf("only %d events", len(evs))
	}
	for _, form := range []xe.Form{xe.FormEventFile, xe.FormRingBuffer} {
		var buf []byte
		rb := xe.RingBufferTarget{EventCount: uint64(len(evs)), TotalEventsProcessed: 9, DroppedCount: 3, MemoryUsed: 4096, Truncated: true}
		if form == xe.FormRingBuffer {
			buf = rb.AppendXMLOpen(buf)
		}
		for i := range evs {
			buf = evs[i].AppendXML(buf, form)
			buf = append(buf, '\n')
		}
		if form == xe.FormRingBuffer {
			buf = append(buf, "</RingBufferTarget>"...)
		}
		got, rowErrs, d := decodeAll(t, bytes.NewReader(buf))
		if len(rowErrs) > 0 {
			t.Fatalf("form %d: %v", form, rowErrs)
		}
		if len(got) != len(evs) {
			t.Fatalf("form %d: %d events, want %d", form, len(got), len(evs))
		}
		for i := range evs {
			if !sameEvent(&got[i], &evs[i], form == xe.FormRingBuffer) {
				t.Errorf("form %d: event %d (%s) changed:\n got %+v\nwant %+v", form, i, evs[i].Name, got[i], evs[i])
			}
		}
		if form == xe.FormRingBuffer {
			if g, ok := d.RingBuffer(); !ok || g != rb {
				t.Errorf("ring buffer attributes %+v, want %+v", g, rb)
			}
		}
	}
}

// TestJSON checks the JSON shape on real events: valid JSON, integers
// exact, maps as {value,text}, every digit of the timestamp.
func TestJSON(t *testing.T) {
	for _, e := range realEvents(t) {
		line := e.AppendJSON(nil)
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		var obj struct {
			Name, Package, Timestamp string
			Data, Actions            map[string]any
		}
		if err := dec.Decode(&obj); err != nil {
			t.Fatalf("%s: invalid JSON %v: %s", e.Name, err, line)
		}
		if obj.Name != e.Name || obj.Package != e.Package || obj.Timestamp != e.Timestamp.RFC3339() {
			t.Errorf("header %+v", obj)
		}
		if len(obj.Data) != len(e.Fields) || len(obj.Actions) != len(e.Actions) {
			t.Errorf("%s: %d data, %d actions in JSON", e.Name, len(obj.Data), len(obj.Actions))
		}
		for _, f := range e.Fields {
			got := obj.Data[f.Name]
			if f.Value.HasText {
				m, ok := got.(map[string]any)
				if !ok || m["text"] != f.Value.Text {
					t.Errorf("%s.%s: %v", e.Name, f.Name, got)
				}
				continue
			}
			switch f.Value.Kind {
			case xe.KindUint, xe.KindInt:
				if n, ok := got.(json.Number); !ok || n.String() != strings.TrimSpace(f.Value.Raw) {
					t.Errorf("%s.%s = %v, want the exact integer %s", e.Name, f.Name, got, f.Value.Raw)
				}
			case xe.KindBool:
				if b, _ := f.Value.Bool(); got != b {
					t.Errorf("%s.%s = %v", e.Name, f.Name, got)
				}
			default:
				if got != f.Value.Raw {
					t.Errorf("%s.%s = %v, want %q", e.Name, f.Name, got, f.Value.Raw)
				}
			}
		}
	}
	big := mustDecodeOne(t, ev(`<data name="q"><value>18446744073709551615</value></data><data name="s"><value><![CDATA[a"b\`+"\x01\u2028\xff"+`]]></value></data>`))
	line := string(big.AppendJSON(nil))
	if !strings.Contains(line, `"q":18446744073709551615`) || !strings.Contains(line, `"s":"a\"b\\\u0001\u2028\ufffd"`) {
		t.Errorf("JSON %s", line)
	}
}

// FuzzDecode: no input may panic or hang, errors are RowErrors (or the
// documented fatal ones), and every event decoded survives an XML round
// trip unchanged.
func FuzzDecode(f *testing.F) {
	_ = filepath.WalkDir(realdata, func(path string, de os.DirEntry, err error) error {
		if err == nil && !de.IsDir() && !strings.HasSuffix(path, ".tsv") {
			if raw, err := os.ReadFile(path); err == nil {
				f.Add(raw)
			}
		}
		return nil
	})
	seed, _ := xetest.NewGenerator(5).AppendStream(nil, 4<<10)
	f.Add(seed)
	f.Add([]byte(ev(`<data name="x"><value>&#x41;<![CDATA[]]]]>]]></value><text>t</text></data>`)))
	f.Fuzz(func(t *testing.T, in []byte) {
		d := xe.NewDecoder(bytes.NewReader(in))
		for i := 0; i < 10000; i++ {
			e, err := d.Next()
			if err == io.EOF {
				return
			}
			var re *xe.RowError
			if errors.As(err, &re) {
				if re.Row < 1 || re.Line < 1 || re.Offset < 0 || re.Offset > int64(len(in)) {
					t.Fatalf("bad RowError position %+v", re)
				}
				continue
			}
			if err != nil {
				return // fatal (UTF-16, size): documented, decoding stops
			}
			for _, form := range []xe.Form{xe.FormEventFile, xe.FormRingBuffer} {
				out := e.AppendXML(nil, form)
				back, rowErrs, _ := decodeAll(t, bytes.NewReader(out))
				if len(rowErrs) != 0 || len(back) != 1 {
					t.Fatalf("re-decode of %q: %d events, %v", out, len(back), rowErrs)
				}
				if !sameEvent(&back[0], &e, form == xe.FormRingBuffer) {
					t.Fatalf("round trip changed the event:\n in %+v\nout %+v\nxml %q", e, back[0], out)
				}
			}
			if !json.Valid(e.AppendJSON(nil)) {
				t.Fatalf("invalid JSON for %+v", e)
			}
		}
		t.Fatal("decoder did not finish")
	})
}

// FuzzHistogram: no input may panic.
func FuzzHistogram(f *testing.F) {
	for _, name := range []string{"histogram_spinlock_backoff_LOCK_HASH_callstack.xml"} {
		if raw, err := os.ReadFile("testdata/realdata/callstack/" + name); err == nil {
			f.Add(raw)
		}
	}
	f.Add([]byte(`<HistogramTarget truncated="0" buckets="2"><Slot count="1"><value><frame id="00"/></value></Slot></HistogramTarget>`))
	f.Fuzz(func(t *testing.T, in []byte) {
		h, err := xe.DecodeHistogram(bytes.NewReader(in))
		if err != nil {
			return
		}
		for _, s := range h.Slots {
			if s.Value.Kind == xe.KindXML && !bytes.Contains(in, []byte(s.Value.Raw)) {
				t.Fatalf("XML slot value is not verbatim: %q", s.Value.Raw)
			}
		}
	})
}

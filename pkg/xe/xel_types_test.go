package xe_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/pkg/xe"
)

// Synthetic files cover what the real one lacks: every base type, maps of
// every key size, bitmask maps, several packages and tick frequencies,
// events without actions, 4-byte pointers.

const xelSynthStart = 132353446563350000 // FILETIME of 2020-05-30T20:37:36.335Z

var xelGUIDBytes = []byte{0x33, 0x22, 0x11, 0x00, 0x55, 0x44, 0x77, 0x66, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF}

// The every_type event's fixed slots.
var xelEveryFields = []struct {
	name   string
	kind   int // 6 type, 3 map
	object int // base type or map index
	offset int
}{
	{"i8", 6, 1, 0}, {"u8", 6, 5, 1}, {"i16", 6, 2, 2}, {"u16", 6, 6, 4}, {"i32", 6, 3, 8}, {"u32", 6, 7, 12},
	{"i64", 6, 4, 16}, {"u64", 6, 8, 24}, {"f32", 6, 9, 32}, {"f64", 6, 10, 40}, {"cycles", 6, 11, 48},
	{"when", 6, 12, 56}, {"address", 6, 13, 64}, {"id", 6, 21, 72}, {"activity", 6, 24, 88},
	{"activity_xfer", 6, 25, 108}, {"flag", 6, 26, 128}, {"small_map", 3, 2, 129}, {"mid_map", 3, 3, 130},
	{"mode", 3, 0, 132}, {"destination", 3, 1, 136}, {"big_map", 3, 4, 140}, {"ansi", 6, 19, 148},
	{"text", 6, 20, 156}, {"blob", 6, 22, 164}, {"digits", 6, 22, 172}, {"doc", 6, 27, 180},
	{"stack", 6, 23, 188}, {"empty_text", 6, 20, 196}, {"empty_blob", 6, 22, 204}, {"unknown_mode", 3, 0, 212},
}

const xelEveryFixed = 216

func xelSyntheticFile(n, ptrSize int) []byte {
	p0 := xelEncPackage{id: 0, name: "package0", startFileTime: xelSynthStart, frequency: 10_000_000,
		types: xelPackage0Types(ptrSize),
		actions: []xelEncAction{
			{0, "callstack", xelRID(6, 23, 0)}, {1, "event_sequence", xelRID(6, 8, 0)},
			{2, "attach_activity_id", xelRID(6, 24, 0)},
		},
	}
	sqlos := xelEncPackage{id: 1, name: "sqlos", startFileTime: xelSynthStart, frequency: 3_000_000,
		events: []xelEncEvent{{id: 5, name: "small", fields: []xelEncField{{"n", xelRID(6, 7, 0), 0}}}},
	}
	sqlserver := xelEncPackage{id: 2, name: "sqlserver", startFileTime: xelSynthStart, frequency: 10_000_000,
		maps: []xelEncMap{
			{id: 0, name: "lock_mode", size: 4, keys: []uint32{0, 1, 2}, texts: []string{"NL", "SCH_S", "SCH_M"}},
			{id: 1, name: "error_destination", size: 4, bitmask: true, keys: []uint32{1, 2, 4, 8, 16}, texts: []string{"USER", "TRACE", "BUFFER", "ERRORLOG", "EVENTLOG"}},
			{id: 2, name: "small_map", size: 1, keys: []uint32{7}, texts: []string{"SEVEN"}},
			{id: 3, name: "mid_map", size: 2, keys: []uint32{300}, texts: []string{"THREE_HUNDRED"}},
			{id: 4, name: "big_map", size: 8, keys: []uint32{5, 1 << 31}, texts: []string{"FIVE", "HUGE"}},
		},
	}
	every := xelEncEvent{id: 3, name: "every_type"}
	for _, f := range xelEveryFields {
		pkg := 0
		if f.kind == 3 {
			pkg = 2
		}
		every.fields = append(every.fields, xelEncField{f.name, xelRID(f.kind, f.object, pkg), f.offset})
	}
	sqlserver.events = []xelEncEvent{every}

	out := xelStreamHeader()
	out = append(out, xelBuffer(1, 0, 76, p0.bytes())...)
	out = append(out, xelBuffer(1, 1, 76, append(sqlos.bytes(), sqlserver.bytes()...))...)
	var recs []byte
	for i := 0; i < n; i++ {
		if i%2 == 1 {
			// sqlos ticks at 3 MHz: 2 s + 3 ticks = 2.000001 s.
			recs = append(recs, xelRecord(xelRID(0, 5, 1), uint64(i)*6_000_000+3, xelLE(4, uint64(i)), nil)...)
		}
		recs = append(recs, xelRecord(xelRID(0, 3, 2), uint64(i)*10_000_000+276_428, xelEveryPayload(i, ptrSize), xelEveryActions(i, ptrSize))...)
		if i%3 == 2 || i == n-1 {
			out = append(out, xelBuffer(0, uint32(i), 77, recs)...)
			recs = nil
		}
	}
	return out
}

func xelSynthetic(n int) []byte { return xelSyntheticFile(n, 8) }

func xelEveryPayload(i, ptrSize int) []byte {
	p := newXELPayload(xelEveryFixed)
	p.fixed(0, []byte{byte(int8(-5 - i))})
	p.fixed(1, []byte{250})
	p.fixed(2, xelLE(2, uint64(0x10000-300)))
	p.fixed(4, xelLE(2, 65535))
	p.fixed(8, xelLE(4, 0x80000000))
	p.fixed(12, xelLE(4, math.MaxUint32))
	p.fixed(16, xelLE(8, 1<<63))
	p.fixed(24, xelLE(8, math.MaxUint64))
	p.fixed(32, xelLE(4, uint64(math.Float32bits(1.5))))
	f64 := 0.1
	if i%2 == 1 {
		f64 = 2 // prints "2", which XML reads as an integer
	}
	p.fixed(40, xelLE(8, math.Float64bits(f64)))
	p.fixed(48, xelLE(8, 123456789))
	p.fixed(56, xelLE(8, 132353446563626428))
	p.fixed(64, xelLE(ptrSize, 0x00007FFAF2BD6C7C))
	p.fixed(72, xelGUIDBytes)
	p.fixed(88, append(bytes.Clone(xelGUIDBytes), xelLE(4, 7)...))
	p.fixed(108, append(bytes.Clone(xelGUIDBytes), xelLE(4, 8)...))
	p.fixed(128, []byte{1})
	p.fixed(129, []byte{7})
	p.fixed(130, xelLE(2, 300))
	p.fixed(132, xelLE(4, 1))
	p.fixed(136, xelLE(4, 0x1C))
	p.fixed(140, xelLE(8, 5))
	p.fixed(212, xelLE(4, 99))
	p.variable(148, []byte("caf\xe9 ok\x00"))
	p.variable(156, append(xelUTF16("wait 😀 ünï"), 0, 0))
	p.variable(164, []byte{0xDE, 0xAD, 0xBE, 0xEF})
	p.variable(172, []byte{0x01, 0x02})
	p.variable(180, xelUTF16(`<a x="1">t &amp; u</a>`))
	p.variable(188, append(xelLE(ptrSize, 0x1000), xelLE(ptrSize, 0x2000)...))
	p.variable(196, nil)
	p.variable(204, nil)
	return p.b
}

func xelEveryActions(i, ptrSize int) []xelEncActionValue {
	var stack []byte
	for _, a := range []uint64{0x1000, 0x2000, 0x7FFAF2BD6C7C & (1<<(8*ptrSize) - 1)} {
		stack = append(stack, xelLE(ptrSize, a)...)
	}
	return []xelEncActionValue{
		{xelRID(1, 0, 0), stack},
		{xelRID(1, 1, 0), xelLE(8, uint64(i+1))},
		{xelRID(1, 2, 0), append(bytes.Clone(xelGUIDBytes), xelLE(4, uint64(i))...)},
	}
}

// TestXELEveryBaseType checks each base type's text and Kind: the XE XML
// rendering ([R] where the docs show it: ptr as 0x + 16 hex digits,
// booleans true/false, flag maps 0x%08x + comma list; [U] for floats,
// GUID case and activity ids), read the way Decoder reads that text.
func TestXELEveryBaseType(t *testing.T) {
	evs := xelMustDecode(t, xelSynthetic(2))
	if len(evs) != 3 {
		t.Fatalf("%d events", len(evs))
	}
	ev := evs[0]
	if ev.Name != "every_type" || ev.Package != "sqlserver" {
		t.Fatalf("event %s.%s", ev.Package, ev.Name)
	}
	if ev.Timestamp.Raw != "2020-05-30T20:37:36.3626428Z" {
		t.Errorf("timestamp %q", ev.Timestamp.Raw)
	}
	want := []struct {
		name string
		raw  string
		kind xe.Kind
		text string // "-" = no <text>
	}{
		{"i8", "-5", xe.KindInt, "-"},
		{"u8", "250", xe.KindUint, "-"},
		{"i16", "-300", xe.KindInt, "-"},
		{"u16", "65535", xe.KindUint, "-"},
		{"i32", "-2147483648", xe.KindInt, "-"},
		{"u32", "4294967295", xe.KindUint, "-"},
		{"i64", "-9223372036854775808", xe.KindInt, "-"},
		{"u64", "18446744073709551615", xe.KindUint, "-"},
		{"f32", "1.5", xe.KindFloat, "-"},
		{"f64", "0.1", xe.KindFloat, "-"},
		{"cycles", "123456789", xe.KindUint, "-"},
		{"when", "2020-05-30T20:37:36.3626428Z", xe.KindString, "-"},
		{"address", "0x00007FFAF2BD6C7C", xe.KindHex, "-"},
		{"id", "00112233-4455-6677-8899-AABBCCDDEEFF", xe.KindGUID, "-"},
		{"activity", "00112233-4455-6677-8899-AABBCCDDEEFF-7", xe.KindString, "-"},
		{"activity_xfer", "00112233-4455-6677-8899-AABBCCDDEEFF-8", xe.KindString, "-"},
		{"flag", "true", xe.KindBool, "-"},
		{"small_map", "7", xe.KindUint, "SEVEN"},
		{"mid_map", "300", xe.KindUint, "THREE_HUNDRED"},
		{"mode", "1", xe.KindUint, "SCH_S"},
		{"destination", "0x0000001c", xe.KindHex, "BUFFER, ERRORLOG, EVENTLOG"},
		{"big_map", "5", xe.KindUint, "FIVE"},
		{"ansi", "café ok", xe.KindString, "-"},
		{"text", "wait 😀 ünï", xe.KindString, "-"},
		{"blob", "DEADBEEF", xe.KindBinary, "-"},
		{"digits", "0102", xe.KindUint, "-"}, // all-digit hex reads as a number, as in XML
		{"doc", `<a x="1">t &amp; u</a>`, xe.KindXML, "-"},
		{"stack", "0x0000000000001000\n0x0000000000002000", xe.KindString, "-"},
		{"empty_text", "", xe.KindString, "-"},
		{"empty_blob", "", xe.KindEmpty, "-"},
		{"unknown_mode", "99", xe.KindUint, "-"},
	}
	if len(ev.Fields) != len(want) {
		t.Fatalf("%d fields, want %d", len(ev.Fields), len(want))
	}
	for i, w := range want {
		f := ev.Fields[i]
		v := f.Value
		text := "-"
		if v.HasText {
			text = v.Text
		}
		if f.Name != w.name || v.Raw != w.raw || v.Kind != w.kind || text != w.text {
			t.Errorf("field %d: %s = %q %v text %q; want %s = %q %v text %q", i, f.Name, v.Raw, v.Kind, text, w.name, w.raw, w.kind, w.text)
		}
	}
	if u, _ := ev.Fields[7].Value.Uint(); u != math.MaxUint64 {
		t.Errorf("u64 value %d", u)
	}
	if i, _ := ev.Fields[6].Value.Int(); i != math.MinInt64 {
		t.Errorf("i64 value %d", i)
	}
	if f, _ := ev.Fields[9].Value.Float(); f != 0.1 {
		t.Errorf("f64 value %v", f)
	}
	if b, ok := ev.Fields[24].Value.Bytes(); !ok || !bytes.Equal(b, []byte{0xDE, 0xAD, 0xBE, 0xEF}) {
		t.Errorf("blob bytes % x", b)
	}
	if g, ok := ev.Fields[13].Value.GUID(); !ok || g[0] != 0x00 || g[3] != 0x33 || g[15] != 0xFF {
		t.Errorf("GUID % x", g)
	}
	if mv, ok := ev.MapField("destination", nil); !ok || mv.Key != 0x1C {
		t.Errorf("flag map %+v", mv)
	}
	wantActions := []struct{ name, pkg, raw string }{
		{"callstack", "package0", "0x0000000000001000\n0x0000000000002000\n0x00007FFAF2BD6C7C"},
		{"event_sequence", "package0", "1"},
		{"attach_activity_id", "package0", "00112233-4455-6677-8899-AABBCCDDEEFF-0"},
	}
	if len(ev.Actions) != len(wantActions) {
		t.Fatalf("actions %+v", ev.Actions)
	}
	for i, w := range wantActions {
		a := ev.Actions[i]
		if a.Name != w.name || a.Package != w.pkg || a.Value.Raw != w.raw {
			t.Errorf("action %d: %s.%s = %q, want %s.%s = %q", i, a.Package, a.Name, a.Value.Raw, w.pkg, w.name, w.raw)
		}
	}
	// The event without actions, from a package ticking at 3 MHz:
	// 6,000,003 ticks = 2.000001 s after the start time.
	small := evs[1]
	if small.Name != "small" || small.Package != "sqlos" || len(small.Actions) != 0 || len(small.Fields) != 1 || small.Fields[0].Value.Raw != "1" {
		t.Errorf("small event %+v", small)
	}
	wantT := time.Date(2020, 5, 30, 20, 37, 38, 335001000, time.UTC)
	if !small.Timestamp.Time.Equal(wantT) || small.Timestamp.Raw != "2020-05-30T20:37:38.3350010Z" {
		t.Errorf("3 MHz timestamp %q %v, want %v", small.Timestamp.Raw, small.Timestamp.Time, wantT)
	}
	if v, _ := evs[2].Data("f64"); v.Raw != "2" || v.Kind != xe.KindUint {
		t.Errorf("whole float64 %q %v", v.Raw, v.Kind)
	}
	// Types come from the metadata when asked for.
	typed := xelMustDecode(t, xelSynthetic(1), (*xe.XELReader).IncludeTypes)
	for _, c := range []struct{ field, typ, pkg string }{{"u32", "uint32", "package0"}, {"mode", "lock_mode", "sqlserver"}, {"stack", "callstack", "package0"}} {
		if v, _ := typed[0].Data(c.field); v.Type != c.typ || v.TypePackage != c.pkg {
			t.Errorf("%s type %s/%s, want %s/%s", c.field, v.TypePackage, v.Type, c.pkg, c.typ)
		}
	}
	mt := xe.NewXELReader(bytes.NewReader(xelSynthetic(1)))
	if _, err := mt.Next(); err != nil {
		t.Fatal(err)
	}
	if s, ok := mt.MapTable().Text("error_destination", 8); !ok || s != "ERRORLOG" {
		t.Errorf("MapTable error_destination 8 = %q", s)
	}
	if s, ok := mt.MapTable().Text("big_map", 1<<31); !ok || s != "HUGE" {
		t.Errorf("MapTable big_map = %q", s)
	}
}

// TestXELFourBytePointers: a 32-bit server's pointers and stacks.
func TestXELFourBytePointers(t *testing.T) {
	evs := xelMustDecode(t, xelSyntheticFile(1, 4))
	if v, _ := evs[0].Data("address"); v.Raw != "0x00000000F2BD6C7C" || v.Kind != xe.KindHex {
		t.Errorf("4-byte ptr %q %v", v.Raw, v.Kind)
	}
	if v, _ := evs[0].Action("callstack"); v.Raw != "0x0000000000001000\n0x0000000000002000\n0x00000000F2BD6C7C" {
		t.Errorf("4-byte stack %q", v.Raw)
	}
}

// TestXELSyntheticCorrupt: errors for what the real file cannot show.
func TestXELSyntheticCorrupt(t *testing.T) {
	good := xelSynthetic(1)
	for _, tc := range []struct {
		name string
		edit func([]byte) []byte
		want string
	}{
		{"unknown base type", func(b []byte) []byte {
			// Point the "u8" field's type at base type 14, which no type has.
			i := bytes.Index(b, xelFieldRecord("u8", xelRID(6, 5, 0)))
			binary.LittleEndian.PutUint32(b[i:], xelRID(6, 14, 0))
			return b
		}, `of "u8" is not in the metadata`},
		{"map key size", func(b []byte) []byte {
			i := bytes.Index(b, append(xelUTF16("description of small_map"), 0, 0))
			b[i+len("description of small_map")*2+2] = 3
			return b
		}, "key size 3"},
		{"time out of range", func(b []byte) []byte {
			i := bytes.Index(b, append(xelLE(4, uint64(xelRID(0, 3, 2))), xelLE(4, 10|1<<31)...))
			binary.LittleEndian.PutUint64(b[i+12:], math.MaxUint64-5)
			return b
		}, "out of range"},
		{"string without terminator", func(b []byte) []byte {
			// The first metadata buffer ends inside package0's last type name.
			binary.LittleEndian.PutUint32(b[512+24:], binary.LittleEndian.Uint32(b[512+24:])-3)
			return b
		}, "end of its buffer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, rowErrs, err := xelDecode(tc.edit(bytes.Clone(good)))
			if err == nil && len(rowErrs) > 0 {
				err = rowErrs[0]
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "offset") {
				t.Errorf("error %v, want one saying %q and the offset", err, tc.want)
			}
		})
	}
}

func xelFieldRecord(name string, rid uint32) []byte {
	return append(xelLE(4, uint64(rid)), append(xelUTF16(name), 0, 0)...)
}

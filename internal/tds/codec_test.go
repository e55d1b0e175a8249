package tds

import (
	"bytes"
	"math/big"
	"strings"
	"testing"
	"time"
)

// decodedForm is the Go value the RPC decoder yields for a value written by
// the column encoder.
func decodedForm(t *testing.T, ti TypeInfo, v any) any {
	t.Helper()
	switch x := v.(type) {
	case int32:
		return int64(x)
	case int16:
		return int64(x)
	case uint8:
		return int64(x)
	case float32:
		return float64(x)
	case string:
		if ti.Type == TypeDecimal {
			d, err := ParseDecimal(x)
			if err != nil {
				t.Fatal(err)
			}
			return d.Rescale(ti.Scale)
		}
	}
	return v
}

func equalDecoded(a, b any) bool {
	switch x := a.(type) {
	case Decimal:
		y, ok := b.(Decimal)
		return ok && x.String() == y.String()
	case time.Time:
		y, ok := b.(time.Time)
		if !ok || !x.Equal(y) {
			return false
		}
		_, ox := x.Zone()
		_, oy := y.Zone()
		return ox == oy
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	}
	return a == b
}

// TestCodecRoundTrip encodes every column type with the result-set encoder
// and decodes it with the RPC parameter decoder (both TYPE_INFO and value),
// nullable and NOT NULL, including NULL.
func TestCodecRoundTrip(t *testing.T) {
	for i, col := range typeColumns {
		for _, notNull := range []bool{false, true} {
			codec, err := newColumnCodec(col.TypeInfo, notNull)
			if err != nil {
				t.Fatalf("%s: %v", col.Name, err)
			}
			b, err := codec.appendValue(append([]byte(nil), codec.typeInfo...), typeValues[i])
			if err != nil {
				t.Fatalf("%s: encode: %v", col.Name, err)
			}
			r := &reader{b: b}
			wt, err := decodeTypeInfo(r)
			if err != nil {
				t.Fatalf("%s: decode type info % x: %v", col.Name, codec.typeInfo, err)
			}
			if wt.TypeInfo != col.TypeInfo {
				t.Errorf("%s (notNull=%v): type info decodes as %v, want %v", col.Name, notNull, wt.TypeInfo, col.TypeInfo)
			}
			got, err := wt.decodeValue(r)
			if err != nil {
				t.Fatalf("%s: decode value: %v", col.Name, err)
			}
			if r.remaining() != 0 {
				t.Errorf("%s: %d bytes left after decoding", col.Name, r.remaining())
			}
			if want := decodedForm(t, col.TypeInfo, typeValues[i]); !equalDecoded(got, want) {
				t.Errorf("%s (notNull=%v): decoded %#v, want %#v", col.Name, notNull, short(got), short(want))
			}
			if notNull {
				if _, err := codec.appendValue(nil, nil); err == nil {
					t.Errorf("%s: NULL accepted in a NOT NULL column", col.Name)
				}
				continue
			}
			nb, _ := codec.appendValue(append([]byte(nil), codec.typeInfo...), nil)
			r = &reader{b: nb}
			wt, _ = decodeTypeInfo(r)
			if v, err := wt.decodeValue(r); err != nil || v != nil || r.remaining() != 0 {
				t.Errorf("%s: NULL decodes as %#v, %v (%d bytes left)", col.Name, v, err, r.remaining())
			}
		}
	}
}

func TestFixedTypesForNotNull(t *testing.T) {
	for _, tc := range []struct {
		t       DataType
		notNull []byte
		null    []byte
	}{
		{TypeInt, []byte{tdsInt4}, []byte{tdsIntN, 4}},
		{TypeBigInt, []byte{tdsInt8}, []byte{tdsIntN, 8}},
		{TypeSmallInt, []byte{tdsInt2}, []byte{tdsIntN, 2}},
		{TypeTinyInt, []byte{tdsInt1}, []byte{tdsIntN, 1}},
		{TypeBit, []byte{tdsBit}, []byte{tdsBitN, 1}},
		{TypeFloat, []byte{tdsFlt8}, []byte{tdsFltN, 8}},
		{TypeReal, []byte{tdsFlt4}, []byte{tdsFltN, 4}},
		{TypeDateTime, []byte{tdsDateTime}, []byte{tdsDateTimeN, 8}},
	} {
		a, _ := newColumnCodec(TypeInfo{Type: tc.t}, true)
		b, _ := newColumnCodec(TypeInfo{Type: tc.t}, false)
		if !bytes.Equal(a.typeInfo, tc.notNull) || !bytes.Equal(b.typeInfo, tc.null) {
			t.Errorf("%s: TYPE_INFO % x / % x, want % x / % x", tc.t, a.typeInfo, b.typeInfo, tc.notNull, tc.null)
		}
	}
}

func TestEncodeRejectsBadValues(t *testing.T) {
	for _, tc := range []struct {
		ti   TypeInfo
		v    any
		want string
	}{
		{TypeInfo{Type: TypeTinyInt}, -1, "out of range"},
		{TypeInfo{Type: TypeSmallInt}, 40000, "out of range"},
		{TypeInfo{Type: TypeInt}, "1", "wants a Go integer"},
		{TypeInfo{Type: TypeBigInt}, uint64(1) << 63, "out of range"},
		{TypeInfo{Type: TypeBit}, 1, "wants a bool"},
		{TypeInfo{Type: TypeNVarChar, Length: 3}, "four", "too long"},
		{TypeInfo{Type: TypeVarBinary, Length: 2}, []byte{1, 2, 3}, "too long"},
		{TypeInfo{Type: TypeDecimal, Precision: 5, Scale: 2}, "1000.00", "does not fit"},
		{TypeInfo{Type: TypeDecimal, Precision: 5, Scale: 2}, "1x", "unexpected character"},
		{TypeInfo{Type: TypeDateTime2, Scale: 7}, "2024-01-01", "wants time.Time"},
		{TypeInfo{Type: TypeDateTime}, time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC), "outside 1753"},
		{TypeInfo{Type: TypeDateTimeOffset, Scale: 7}, time.Date(2000, 1, 1, 0, 0, 0, 0, time.FixedZone("", 30)), "whole number of minutes"},
		{TypeInfo{Type: TypeUniqueIdentifier}, "not-a-guid", "parse uniqueidentifier"},
	} {
		c, err := newColumnCodec(tc.ti, false)
		if err != nil {
			t.Fatalf("%v: %v", tc.ti, err)
		}
		_, err = c.appendValue(nil, tc.v)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v with %#v: error %v, want one containing %q", tc.ti, tc.v, err, tc.want)
		}
	}
	for _, ti := range []TypeInfo{
		{Type: TypeNVarChar}, {Type: TypeNVarChar, Length: 4001}, {Type: TypeNChar, Length: Max},
		{Type: TypeDecimal, Precision: 39}, {Type: TypeDecimal, Precision: 5, Scale: 6}, {Type: TypeDateTime2, Scale: 8}, {Type: 200},
	} {
		if _, err := newColumnCodec(ti, false); err == nil {
			t.Errorf("column type %v accepted", ti)
		}
	}
}

func TestEncodeConveniences(t *testing.T) {
	one := int64(1)
	var nilPtr *int64
	for _, tc := range []struct {
		ti   TypeInfo
		v    any
		want any
	}{
		{TypeInfo{Type: TypeBigInt}, &one, int64(1)},
		{TypeInfo{Type: TypeBigInt}, nilPtr, nil},
		{TypeInfo{Type: TypeDecimal, Precision: 10, Scale: 2}, 12.345, Decimal{Unscaled: big.NewInt(1235), Scale: 2}},
		{TypeInfo{Type: TypeDecimal, Precision: 10, Scale: 2}, -7, Decimal{Unscaled: big.NewInt(-700), Scale: 2}},
		{TypeInfo{Type: TypeUniqueIdentifier}, "{6f9619ff-8b86-d011-b42d-00c04fc964ff}", testUUID},
		{TypeInfo{Type: TypeNChar, Length: 4}, "ab", "ab  "},
		{TypeInfo{Type: TypeBinary, Length: 3}, []byte{9}, []byte{9, 0, 0}},
		{TypeInfo{Type: TypeChar, Length: 3}, "€", "€  "},
		{TypeInfo{Type: TypeVarChar, Length: 3}, "☃", "?"},
		{TypeInfo{Type: TypeDateTime}, time.Date(2000, 1, 1, 23, 59, 59, 999000000, time.UTC), time.Date(2000, 1, 2, 0, 0, 0, 0, time.UTC)},
		{TypeInfo{Type: TypeTime, Scale: 3}, time.Date(2000, 1, 1, 1, 2, 3, 456789000, time.UTC), time.Date(1, 1, 1, 1, 2, 3, 456000000, time.UTC)},
	} {
		c, err := newColumnCodec(tc.ti, false)
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.appendValue(append([]byte(nil), c.typeInfo...), tc.v)
		if err != nil {
			t.Fatalf("%v with %#v: %v", tc.ti, tc.v, err)
		}
		r := &reader{b: b}
		wt, _ := decodeTypeInfo(r)
		got, err := wt.decodeValue(r)
		if err != nil || !equalDecoded(got, tc.want) {
			t.Errorf("%v with %#v: decoded %#v, %v; want %#v", tc.ti, tc.v, got, err, tc.want)
		}
	}
}

func TestMessageWriterSplitsAtPacketSize(t *testing.T) {
	for _, size := range []int{512, 4096} {
		for _, n := range []int{0, 1, size - 8, size - 7, 3*(size-8) + 5, 3 * (size - 8)} {
			var out bytes.Buffer
			w := newMessageWriter(&out, 51)
			w.packetSize = size
			payload := bytes.Repeat([]byte{0xAB}, n)
			half := n / 2
			if err := w.write(payload[:half]); err != nil {
				t.Fatal(err)
			}
			if err := w.write(payload[half:]); err != nil {
				t.Fatal(err)
			}
			if err := w.end(); err != nil {
				t.Fatal(err)
			}
			m, err := readMessage(&out, 1<<20)
			if err != nil || !bytes.Equal(m.payload, payload) || m.typ != packetReply {
				t.Fatalf("size %d, %d bytes: reassembled %d bytes, %v", size, n, len(m.payload), err)
			}
			// check each header of the raw stream
			raw := packetize(packetReply, 1, payload, size) // reference split
			_ = raw
			var got bytes.Buffer
			w2 := newMessageWriter(&got, 51)
			w2.packetSize = size
			w2.write(payload)
			w2.end()
			stream := got.Bytes()
			packets := 0
			for len(stream) > 0 {
				l := int(stream[2])<<8 | int(stream[3])
				last := stream[1] == statusEOM
				if l > size || (l == packetHeaderSize && n > 0) {
					t.Fatalf("size %d, %d bytes: packet of %d bytes", size, n, l)
				}
				if !last && stream[1] != 0 {
					t.Fatalf("non-final packet with status %#x", stream[1])
				}
				stream = stream[l:]
				packets++
				if last && len(stream) != 0 {
					t.Fatalf("bytes after the EOM packet")
				}
			}
			if want := max(1, (n+size-9)/(size-8)); packets != want {
				t.Errorf("size %d, %d bytes: %d packets, want %d", size, n, packets, want)
			}
		}
	}
}

func TestReadMessageSkipsIgnoredMessages(t *testing.T) {
	stream := append(packetize(packetSQLBatch, statusIgnore, []byte{1, 2}, 4096), packetize(packetSQLBatch, 0, []byte{3, 4}, 4096)...)
	m, err := readMessage(bytes.NewReader(stream), 1<<20)
	if err != nil || !bytes.Equal(m.payload, []byte{3, 4}) {
		t.Fatalf("got % x, %v; want the second message", m.payload, err)
	}
}

// TestDecodeSyntheticRPC decodes parameters of every type, including the
// ones go-mssqldb never sends (decimal, xml, varchar(max), date).
func TestDecodeSyntheticRPC(t *testing.T) {
	call, err := decodeRPC(syntheticRPC(t))
	if err != nil {
		t.Fatal(err)
	}
	if call.ProcName != "sp_executesql" || len(call.Params) != len(typeColumns) {
		t.Fatalf("call %q with %d params", call.ProcName, len(call.Params))
	}
	for i, p := range call.Params {
		if p.Name != "@"+typeColumns[i].Name || p.Type != typeColumns[i].TypeInfo {
			t.Errorf("param %d = %s %v, want @%s %v", i, p.Name, p.Type, typeColumns[i].Name, typeColumns[i].TypeInfo)
		}
		if want := decodedForm(t, p.Type, typeValues[i]); !equalDecoded(p.Value, want) {
			t.Errorf("param %s = %#v, want %#v", p.Name, short(p.Value), short(want))
		}
	}
}

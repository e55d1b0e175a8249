package bundle

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestWriteIsWhatEncodingJSONWrites: Write assembles the bundle's JSON
// itself (to skip encoding/json's repeated compaction of the trace), so
// its bytes are checked against json.Encoder's, which compacts and escapes
// whatever MarshalJSON returns: both forms, every bundle in testdata, and a
// raw trace as a file holds it (indented, with characters json.Marshal
// escapes) with no decoded Trace.
func TestWriteIsWhatEncodingJSONWrites(t *testing.T) {
	var bundles []*Bundle
	for _, name := range []string{"small.json", "statements_v2.json", "statements_v3.json"} {
		b, err := Load(filepath.Join("testdata", "bundle", name))
		if err != nil {
			t.Fatal(err)
		}
		bundles = append(bundles, b)
	}
	raw := &Bundle{Format: Format, Version: Version, SQL: "SELECT '<a & b>'", Plan: "<ShowPlanXML/>",
		RawTrace: json.RawMessage("{\n  \"schema\": 3,\n  \"note\": \"<x> & \\u2028\"\n}")}
	bundles = append(bundles, raw)
	for i, b := range bundles {
		for _, indent := range []string{"", "  "} {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			if indent != "" {
				enc.SetIndent("", indent)
			}
			if err := enc.Encode(b); err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := write(&got, b, indent); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("bundle %d indent %q: Write's %d bytes differ from json.Encoder's %d", i, indent, got.Len(), want.Len())
			}
			if !json.Valid(got.Bytes()) {
				t.Errorf("bundle %d: not JSON", i)
			}
		}
	}
	if bytes.Contains(must(t, raw), []byte("<x>")) {
		t.Error("a raw trace's < and > must be escaped as json.Marshal escapes them")
	}
}

func must(t *testing.T, b *Bundle) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteCompact(&buf, b); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

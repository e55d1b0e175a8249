package bundle_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/queryreplay/queryreplay/internal/testtrace"
	"github.com/queryreplay/queryreplay/pkg/bundle"
)

// TestBundleTraceIsJSONMarshal: the bundle writes its trace with
// timeline.Trace.AppendJSON (issue 29); the trace part must be
// json.Marshal(trace)'s bytes, for a generated trace and the testdata
// bundles, and the statement stored once must still be found.
func TestBundleTraceIsJSONMarshal(t *testing.T) {
	gen, err := testtrace.Generated(500, 6)
	if err != nil {
		t.Fatal(err)
	}
	bundles := map[string]*bundle.Bundle{"generated": gen}
	paths, _ := filepath.Glob(filepath.Join("testdata", "bundle", "*.json"))
	for _, p := range paths {
		b, err := bundle.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		bundles[p] = b
	}
	if len(bundles) < 3 {
		t.Fatalf("only %d bundles", len(bundles))
	}
	for name, b := range bundles {
		data, err := b.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var parts struct {
			Trace          json.RawMessage `json:"trace"`
			TraceStatement *struct{ ID int }
		}
		if err := json.Unmarshal(data, &parts); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := json.Marshal(b.Trace)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(parts.Trace, want) {
			t.Errorf("%s: the bundle's trace (%d bytes) is not json.Marshal(trace) (%d bytes)", name, len(parts.Trace), len(want))
		}
		if b.Version >= 3 && len(b.Statements) > 0 && parts.TraceStatement == nil {
			t.Errorf("%s: the statement whose trace is the bundle's is no longer stored once", name)
		}
	}
}

package timeline_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/queryreplay/queryreplay/internal/testtrace"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// TestLanesJSONRealTraces: the hand-written lanes and trace JSON against
// the reflective encoding on real traces: a generated one (the stand-in's
// events, decoded and built) and every trace of the bundles in
// pkg/bundle/testdata, statements' traces included.
func TestLanesJSONRealTraces(t *testing.T) {
	gen, err := testtrace.Generated(2000, 10)
	if err != nil {
		t.Fatal(err)
	}
	traces := map[string]*timeline.Trace{"generated": gen.Trace}
	if len(gen.Trace.Lanes.Read) < 1000 {
		t.Fatalf("generated trace has %d reads", len(gen.Trace.Lanes.Read))
	}
	paths, err := filepath.Glob(filepath.Join("..", "bundle", "testdata", "bundle", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no testdata bundles: %v", err)
	}
	for _, p := range paths {
		b, err := bundle.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		if b.Trace == nil {
			t.Fatalf("%s: no decoded trace", p)
		}
		traces[p] = b.Trace
		for i := range b.Statements {
			if tr := b.Statements[i].Trace; tr != nil {
				traces[fmt.Sprintf("%s statement %d", p, i)] = tr
			}
		}
	}
	for name, tr := range traces {
		want, err := timeline.ReflectLanesJSON(&tr.Lanes)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := tr.Lanes.MarshalJSON(); !bytes.Equal(got, want) {
			t.Errorf("%s: lanes JSON differs from encoding/json's (%d bytes, want %d)", name, len(got), len(want))
		}
		want, err = timeline.ReflectTraceJSON(tr)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tr.AppendJSON(nil)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: AppendJSON differs from encoding/json's (%d bytes, want %d; %v)", name, len(got), len(want), err)
		}
		// and what json.Marshal wrote before: the lanes' bytes compacted again
		if before, err := json.Marshal(timeline.BeforeIssue29(tr)); err != nil || !bytes.Equal(got, before) {
			t.Errorf("%s: AppendJSON differs from json.Marshal before issue 29 (%v)", name, err)
		}
	}
}

// BenchmarkTraceJSON100k encodes a 100k-event trace the way json.Marshal
// did before issue 29 (reflection over the lanes' wire types, then
// encoding/json compacting the lanes' bytes again) and with AppendJSON.
func BenchmarkTraceJSON100k(b *testing.B) {
	gen, err := testtrace.Generated(20000, 10)
	if err != nil {
		b.Fatal(err)
	}
	tr := gen.Trace
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(timeline.BeforeIssue29(tr)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tr.AppendJSON(nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

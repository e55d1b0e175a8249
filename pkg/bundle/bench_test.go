package bundle_test

import (
	"io"
	"sync"
	"testing"

	"github.com/queryreplay/queryreplay/internal/testtrace"
	"github.com/queryreplay/queryreplay/pkg/bundle"
)

var (
	bench100kOnce   sync.Once
	bench100k       *bundle.Bundle
	bench100kFailed error
)

// generated100k is a real ~100k-event trace (5 events a page), built once.
func generated100k(b *testing.B) *bundle.Bundle {
	bench100kOnce.Do(func() { bench100k, bench100kFailed = testtrace.Generated(20000, 10) })
	if bench100kFailed != nil {
		b.Fatal(bench100kFailed)
	}
	return bench100k
}

// BenchmarkMarshal100k writes a 100k-event bundle's JSON, what storing a
// finished live trace costs before gzip (issue 29).
func BenchmarkMarshal100k(b *testing.B) {
	bd := generated100k(b)
	b.ReportAllocs()
	for b.Loop() {
		data, err := bd.MarshalJSON()
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(data)))
	}
}

// BenchmarkWriteCompact100k is WriteCompact of the same bundle.
func BenchmarkWriteCompact100k(b *testing.B) {
	bd := generated100k(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := bundle.WriteCompact(io.Discard, bd); err != nil {
			b.Fatal(err)
		}
	}
}

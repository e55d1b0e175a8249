package tracestore

import (
	"context"
	"testing"

	"github.com/queryreplay/queryreplay/internal/testtrace"
)

// BenchmarkPut100k stores a finished 100k-event trace, what a live
// trace's finished replay waits for (issue 29).
func BenchmarkPut100k(b *testing.B) {
	bd, err := testtrace.Generated(20000, 10)
	if err != nil {
		b.Fatal(err)
	}
	d, err := OpenDir(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(d, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for b.Loop() {
		e, err := s.Put(ctx, bd)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := s.Delete(ctx, e.ID); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

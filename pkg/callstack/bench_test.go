package callstack

import (
	"fmt"
	"testing"
)

// BenchmarkClassifyDistinct classifies distinct names (no memo hits), the
// cost a 100,000-frame input with thousands of functions pays.
func BenchmarkClassifyDistinct(b *testing.B) {
	c := DefaultClassifier()
	names := make([]string, 4096)
	for i := range names {
		names[i] = fmt.Sprintf("gen%d::Class%d_%d::Method%d", i%40, i%40, i%25, i%20)
		if i%3 == 0 {
			names[i] = fmt.Sprintf("CQScanNLJoinNew%d::GetRow", i)
		}
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		c.classify("sqlmin", names[i%len(names)])
	}
}

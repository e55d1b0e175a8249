// Package testbomb builds gzip bombs for tests: small gzip streams that
// expand to far more than any input size limit. Only tests import it.
package testbomb

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"runtime"
	"sync"
)

// chunk is what one repeated gzip member expands to.
const chunk = 16 << 20

var (
	mu      sync.Mutex
	members = map[byte][]byte{}
)

// member is one gzip member of chunk bytes of fill, made once per fill.
func member(fill byte) []byte {
	mu.Lock()
	defer mu.Unlock()
	if m, ok := members[fill]; ok {
		return m
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(bytes.Repeat([]byte{fill}, chunk))
	_ = zw.Close()
	members[fill] = buf.Bytes()
	return buf.Bytes()
}

// Gzip returns a multi-member gzip stream (which gzip readers, Go's
// included, read as one) of prefix then at least expand bytes of fill,
// about a thousandth of that compressed: prefix opens a JSON document
// that never closes, fill keeps it valid as far as it goes (' ' for
// whitespace, 'A' inside a string).
func Gzip(prefix string, fill byte, expand int64) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write([]byte(prefix))
	_ = zw.Close()
	m := member(fill)
	for n := int64(0); n < expand; n += chunk {
		buf.Write(m)
	}
	return buf.Bytes()
}

// BundlePrefix opens a bundle's JSON with the right format and version
// and the start of a string value: a bomb that passes every check a reader
// makes before the size.
const BundlePrefix = `{"format":"queryreplay-trace","version":1,"sql":"`

// Alloc runs f and returns the bytes it allocated (runtime.MemStats
// TotalAlloc before and after; other goroutines count too, so callers
// assert a generous multiple of what f should need).
func Alloc(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Describe is a bomb's sizes for failure messages.
func Describe(b []byte, expand int64) string {
	return fmt.Sprintf("%d bytes of gzip expanding to over %d MB", len(b), expand>>20)
}

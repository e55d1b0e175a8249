package xe_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/pkg/xe"
)

// FuzzXELReader feeds damaged streams to the reader: it must never panic or
// loop, every error must be an *XELError (final) or a *RowError wrapping
// one (a skipped buffer), every event must have a parsable timestamp and
// encode as valid JSON, and views (ReuseEvents) must equal owned events.
//
//	go test ./pkg/xe -run '^$' -fuzz FuzzXELReader -fuzztime 60s -fuzzminimizetime 2s
//
// (The seeds are real-file sized; the default one-minute minimisation of
// each new input would take most of a short run.)
const xelSparseSeed = "testdata/xel/fuzz_sparse_metadata.bin"

// TestXELSparseMetadata: an 8 KB input the fuzzer found, whose metadata
// declares collections of up to 2^18 objects, once cost gigabytes of
// allocation (and seconds); memory must follow the input's size.
func TestXELSparseMetadata(t *testing.T) {
	data, err := os.ReadFile(xelSparseSeed)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	evs, rowErrs, final := xelDecode(data)
	runtime.ReadMemStats(&after)
	if final == nil && len(rowErrs) == 0 {
		t.Errorf("a mangled input decoded cleanly into %d events", len(evs))
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
		t.Errorf("decoding %d bytes allocated %d bytes", len(data), n)
	}
	t.Logf("%d events, row errors %v, final %v", len(evs), rowErrs, final)
}

func FuzzXELReader(f *testing.F) {
	real, err := os.ReadFile(xelRealFile)
	if err != nil {
		f.Fatal(err)
	}
	// The real file's metadata with its two smallest event buffers keeps
	// the seed short enough to mutate quickly.
	f.Add(real)
	f.Add(append(bytes.Clone(real[:0xEA00]), real[0x1B200:0x1B800]...))
	// Inputs earlier fuzzing found (testdata/xel/fuzz_*.bin).
	found, err := filepath.Glob("testdata/xel/fuzz_*.bin")
	if err != nil || len(found) < 2 {
		f.Fatalf("fuzz seeds %v: %v", found, err)
	}
	for _, name := range found {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(xelSynthetic(3))
	f.Add(xelSyntheticFile(2, 4))
	f.Add(real[:600])
	f.Add([]byte{0x5a, 0x37, 0xab, 0xef, 10, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		owned := xe.NewXELReader(bytes.NewReader(data))
		views := xe.NewXELReader(bytes.NewReader(data))
		views.ReuseEvents()
		views.IncludeTypes()
		// An event record takes at least 24 bytes, so this bounds the loop.
		for i := 0; i <= len(data)/24+1; i++ {
			ev, err := owned.Next()
			vev, verr := views.Next()
			if (err == nil) != (verr == nil) {
				t.Fatalf("owned %v, views %v", err, verr)
			}
			if err == io.EOF {
				return
			}
			if err != nil {
				var xerr *xe.XELError
				if !errors.As(err, &xerr) || xerr.Offset < 0 || xerr.Offset > int64(len(data)) {
					t.Fatalf("error %T %v", err, err)
				}
				var re *xe.RowError
				if !errors.As(err, &re) {
					if _, again := owned.Next(); again != err {
						t.Fatalf("final error not sticky: %v then %v", err, again)
					}
					return
				}
				continue
			}
			if _, perr := time.Parse(time.RFC3339Nano, ev.Timestamp.Raw); perr != nil {
				t.Fatalf("timestamp %q: %v", ev.Timestamp.Raw, perr)
			}
			if js := ev.AppendJSON(nil); !json.Valid(js) {
				t.Fatalf("invalid JSON %s", js)
			}
			if len(ev.Fields) != len(vev.Fields) || len(ev.Actions) != len(vev.Actions) || ev.Timestamp.Raw != vev.Timestamp.Raw {
				t.Fatalf("owned and view events differ")
			}
			for j := range ev.Fields {
				if ev.Fields[j].Value.Raw != vev.Fields[j].Value.Raw {
					t.Fatalf("field %s: %q vs %q", ev.Fields[j].Name, ev.Fields[j].Value.Raw, vev.Fields[j].Value.Raw)
				}
			}
		}
		t.Fatalf("more events than the input can hold")
	})
}

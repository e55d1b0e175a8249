package showplan

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"testing"
)

// genericNode is what xml.Unmarshal needs to reach RelOps at any depth: a
// reflection-built tree of every element and attribute. It is the baseline
// BenchmarkParse compares against.
type genericNode struct {
	XMLName xml.Name
	Attrs   []xml.Attr    `xml:",any,attr"`
	Nodes   []genericNode `xml:",any"`
}

func loadBenchPlans(b *testing.B) (raw [][]byte, total int64) {
	b.Helper()
	for _, path := range realPlans(b) {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		raw = append(raw, data)
		total += int64(len(data))
	}
	return raw, total
}

// reportCPUPerMB starts a CPU-time measurement and returns the function
// that reports it as "cpu-ms/MB" (process CPU time, which the other
// workloads on a shared machine disturb far less than wall-clock time).
func reportCPUPerMB(b *testing.B, bytesPerOp int64) func() {
	start := processCPUTime()
	return func() {
		spent := processCPUTime() - start
		mb := float64(bytesPerOp) * float64(b.N) / 1e6
		if mb > 0 {
			b.ReportMetric(float64(spent.Milliseconds())/mb, "cpu-ms/MB")
		}
	}
}

// BenchmarkParse reports throughput (MB/s of plan file bytes, i.e. before
// UTF-16 transcoding) over all 86 real plans for this package's parser and
// for two baselines on the same bytes: xml.Unmarshal into a generic tree,
// and a bare Decoder.RawToken loop (the floor any encoding/xml parser pays).
func BenchmarkParse(b *testing.B) {
	raw, total := loadBenchPlans(b)
	b.Run("showplan.ParseBytes", func(b *testing.B) {
		b.SetBytes(total)
		b.ReportAllocs()
		defer reportCPUPerMB(b, total)()
		for b.Loop() {
			for _, data := range raw {
				if _, err := ParseBytes(data); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("xml.Unmarshal-generic-tree", func(b *testing.B) {
		b.SetBytes(total)
		b.ReportAllocs()
		defer reportCPUPerMB(b, total)()
		for b.Loop() {
			for _, data := range raw {
				text, err := toUTF8(data)
				if err != nil {
					b.Fatal(err)
				}
				dec := xml.NewDecoder(bytes.NewReader(text))
				dec.CharsetReader = passThroughCharset
				var root genericNode
				if err := dec.Decode(&root); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("xml.RawToken-only", func(b *testing.B) {
		b.SetBytes(total)
		b.ReportAllocs()
		defer reportCPUPerMB(b, total)()
		for b.Loop() {
			for _, data := range raw {
				text, err := toUTF8(data)
				if err != nil {
					b.Fatal(err)
				}
				dec := xml.NewDecoder(bytes.NewReader(text))
				dec.CharsetReader = passThroughCharset
				for {
					if _, err := dec.RawToken(); err != nil {
						if errors.Is(err, io.EOF) {
							break
						}
						b.Fatal(err)
					}
				}
			}
		}
	})
}

package xetest_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/xe"
	"github.com/queryreplay/queryreplay/pkg/xe/xetest"
)

func TestStreamShape(t *testing.T) {
	a, n := xetest.NewGenerator(9).AppendStream(nil, 1<<20)
	b, m := xetest.NewGenerator(9).AppendStream(nil, 1<<20)
	if n != m || !bytes.Equal(a, b) {
		t.Fatal("equal seeds gave different streams")
	}
	if per := len(a) / n; per < 800 || per > 1000 {
		t.Errorf("%d bytes per event, the benchmark wants about 900", per)
	}
	if lines := bytes.Count(a, []byte("\n")); lines != n {
		t.Errorf("%d lines for %d events: want one row per line", lines, n)
	}
	counts := map[string]int{}
	d := xe.NewDecoder(bytes.NewReader(a))
	var lastSeq uint64
	for {
		ev, err := d.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		counts[ev.Name]++
		seq, _ := ev.Action("event_sequence")
		if s, _ := seq.Uint(); s != lastSeq+1 {
			t.Fatalf("event_sequence %d after %d", s, lastSeq)
		} else {
			lastSeq = s
		}
	}
	share := func(name string) float64 { return float64(counts[name]) / float64(n) }
	for name, want := range map[string]float64{"physical_page_read": .30, "wait_info": .30, "lock_acquired": .18, "lock_released": .18, "query_thread_profile": .04} {
		if got := share(name); got < want-0.03 || got > want+0.03 {
			t.Errorf("%s is %.2f of the stream, want about %.2f", name, got, want)
		}
	}
	if counts["lock_released"] > counts["lock_acquired"] {
		t.Error("more releases than acquires")
	}
}

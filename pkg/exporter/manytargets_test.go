package exporter

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// heapMB is the live heap after a full collection.
func heapMB() float64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// churn merges into t one batch of n label sets never seen before (new
// databases, wait types, query hashes, pages, HoBTs), as a server whose
// workload keeps changing would produce. The synthetic database names are
// removed again, as a sys.databases refresh would.
func churn(t *target, round, n int) {
	b := newBatch()
	t.mu.Lock()
	defer t.mu.Unlock()
	base := uint64(1_000_000 + round*n)
	for i := uint64(0); i < uint64(n); i++ {
		id := base + i
		t.cat.databases[id] = fmt.Sprintf("churn_db_%d", id)
		b.waits[waitKey{id, 66}] = &waitAcc{count: 1, durUs: 1000}
		b.texts[textKey{textWait, 66}] = "PAGEIOLATCH_SH"
		b.spills[spillKey{id, "sort", id}] = &spillAcc{count: 1, written: 8, last: time.Now()}
		b.stmts[stmtKey{id, id}] = &stmtAcc{count: 1, logical: 10, last: time.Now()}
		b.pages[pageKey{id, 1, id}] = &pageAcc{reads: 1}
		b.splits[splitKey{id, id, 0}] = 1
		b.memory[id] = &memAcc{count: 1, grantedKB: 1024}
		b.logs[id] = &logAcc{count: 1, bytes: 4096}
	}
	t.merge(b, &readStats{}, time.Now())
	for i := uint64(0); i < uint64(n); i++ {
		delete(t.cat.databases, base+i)
	}
}

// boundedSeries checks every group of t holds at most its limit of label
// sets plus its other series.
func boundedSeries(tb testing.TB, t *target, limit int) {
	tb.Helper()
	t.mu.Lock()
	defer t.mu.Unlock()
	for name, g := range t.groups {
		if g.lru.Len() > limit || len(g.other) > len(spillKinds)+4 {
			tb.Errorf("%s/%s holds %d label sets and %d other series (limit %d)", t.cfg.Name, name, g.lru.Len(), len(g.other), limit)
		}
	}
}

// Fifty targets in one process: each polls its own session on the
// stand-in, and under a churning label set each keeps at most its label
// limit per group, so the heap stops growing once the limits are reached.
func TestFiftyTargetsMemoryBoundedByLabelLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	run := startStandin(t)
	const n, limit = 50, 200
	var y strings.Builder
	fmt.Fprintf(&y, "global:\n  poll_interval: 1h\n  label_limit: %d\ntargets:\n", limit)
	dsns := map[string]string{}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("t%02d", i)
		fmt.Fprintf(&y, "  - name: %s\n    dsn_env: TEST_DSN_%s\n    session: {max_memory_mb: 1}\n", name, name)
		dsns[name] = run.DSN
	}
	e := newTestExporter(t, testConfig(t, y.String(), dsns))
	pollOK(t, e)
	db := workloadDB(t, run.DSN)
	mixedWorkload(t, db, 0)
	run.Server.FlushEventSessions()
	pollOK(t, e)
	for _, tg := range e.targets {
		assertTargetDecoded(t, e, run.Server.RecordedEvents(sessionOf(t, e, tg.cfg.Name)), tg.cfg.Name)
	}
	before := heapMB()
	var heaps []float64
	for round := 0; round < 8; round++ {
		for _, tg := range e.targets {
			churn(tg, round, 2*limit)
		}
		heaps = append(heaps, heapMB())
	}
	for _, tg := range e.targets {
		boundedSeries(t, tg, limit)
	}
	t.Logf("heap before churn %.1f MB; by churn round (MB), 50 targets, label limit %d: %.1f", before, limit, heaps)
	// Round 0 fills the limits; from round 1 on every new label set evicts
	// an old one. Allow 10% for the collector's noise.
	if last, full := heaps[len(heaps)-1], heaps[1]; last > full*1.1+2 {
		t.Errorf("heap grew from %.1f MB to %.1f MB under churn at the label limit", full, last)
	}
	// The stand-in lives in the same process (50 sessions' event files);
	// the exporter's part is the growth from before the churn: 8 groups x
	// 200 label sets x 50 targets = 80,000 label sets.
	if grown := heaps[len(heaps)-1] - before; grown > 100 {
		t.Errorf("the series of %d targets at limit %d take %.1f MB", n, limit, grown)
	}
}

// assertTargetDecoded checks one target decoded every event its session
// recorded.
func assertTargetDecoded(t *testing.T, e *Exporter, rec map[string]int64, target string) {
	t.Helper()
	fams := gather(t, e)
	for ev, n := range rec {
		if got := sum(fams, "queryreplay_exporter_events_decoded_total", labels("target", target, "event", ev)); got != float64(n) {
			t.Errorf("%s: %s decoded %v, recorded %d", target, ev, got, n)
		}
	}
}

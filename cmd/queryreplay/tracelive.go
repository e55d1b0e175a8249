package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/queryreplay/queryreplay/pkg/tracer"
)

// liveView prints a live trace's updates (tracer.Options.Live) for
// `queryreplay trace --live`: on a terminal the operators' table is
// redrawn in place about once a second; otherwise it is a block of plain
// lines about once a second. The tracer sends updates more often (each
// read of the events), so the view draws at most once per liveDrawEvery,
// and always the last update. Counts and names only, never query text or
// results.
type liveView struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	drawn    int // lines of the last redraw
	waits    map[string]*liveWait
	events   int64
	now      func() time.Time
	lastDraw time.Time
}

// liveDrawEvery is the least time between two draws while the batch runs.
const liveDrawEvery = time.Second

type liveWait struct {
	n          int64
	durationUs int64
}

// maxLiveRows bounds the operators one update prints.
const maxLiveRows = 40

func newLiveView(w io.Writer) *liveView {
	return &liveView{w: w, terminal: isTerminal(w), waits: map[string]*liveWait{}, now: time.Now}
}

// isTerminal tells whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func (v *liveView) update(u tracer.LiveUpdate) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, e := range u.Events {
		if e.Lane != "wait" || e.Detail == "" {
			continue
		}
		w := v.waits[e.Detail]
		if w == nil {
			w = &liveWait{}
			v.waits[e.Detail] = w
		}
		w.n++
		w.durationUs += e.DurationUs
	}
	now := v.now()
	if u.Running && !v.lastDraw.IsZero() && now.Sub(v.lastDraw) < liveDrawEvery {
		return // counted above; drawn with a later update
	}
	v.lastDraw = now
	lines := v.render(u)
	var b strings.Builder
	if v.terminal && v.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA\x1b[J", v.drawn) // back to the table's first line, and clear below
	}
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if !v.terminal {
		b.WriteByte('\n')
	}
	v.drawn = len(lines)
	io.WriteString(v.w, b.String())
}

// render is one update as lines.
func (v *liveView) render(u tracer.LiveUpdate) []string {
	state := "running"
	if !u.Running {
		state = "batch ended"
	}
	lines := []string{fmt.Sprintf("live: %s, %s, %d events read", u.Elapsed.Round(100*time.Millisecond), state, u.EventsSoFar)}
	if len(u.Operators) == 0 {
		lines = append(lines, "  (no operator progress yet: sys.dm_exec_query_profiles has no row for the batch)")
	} else {
		lines = append(lines, fmt.Sprintf("  %4s  %-7s  %-28s  %21s  %9s  %8s  %10s  %9s", "node", "state", "operator", "rows / estimate", "logical", "physical", "read-ahead", "elapsed"))
	}
	for i, op := range u.Operators {
		if i == maxLiveRows {
			lines = append(lines, fmt.Sprintf("  … %d more operators", len(u.Operators)-maxLiveRows))
			break
		}
		name := op.PhysicalOp
		if op.Object != "" {
			name += " " + op.Object
		}
		lines = append(lines, fmt.Sprintf("  %4d  %-7s  %-28.28s  %21s  %9d  %8d  %10d  %7dms", op.NodeID, op.State, name,
			fmt.Sprintf("%d / %d", op.Rows, op.EstimateRows), op.LogicalReads, op.PhysicalReads, op.ReadAheadReads, op.ElapsedMs))
	}
	if w := v.topWaits(3); w != "" {
		lines = append(lines, "  waits: "+w)
	}
	return lines
}

// topWaits names the n wait types with the most time so far.
func (v *liveView) topWaits(n int) string {
	types := make([]string, 0, len(v.waits))
	for t := range v.waits {
		types = append(types, t)
	}
	sort.Slice(types, func(i, j int) bool {
		a, b := v.waits[types[i]], v.waits[types[j]]
		if a.durationUs != b.durationUs {
			return a.durationUs > b.durationUs
		}
		return types[i] < types[j]
	})
	var parts []string
	for _, t := range types[:min(n, len(types))] {
		w := v.waits[t]
		parts = append(parts, fmt.Sprintf("%s ×%d (%.1f ms)", t, w.n, float64(w.durationUs)/1000))
	}
	return strings.Join(parts, ", ")
}

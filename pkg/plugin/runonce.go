package plugin

import (
	"regexp"
	"strconv"
	"sync"
	"time"
)

// Run requests: a trace query runs its batch only when it carries a run
// request (the query field "run") that this datasource has not seen
// before. Grafana re-sends every panel query on dashboard load, refresh and
// time-range change, and the query it re-sends is the saved one; a run
// request is therefore single-use. The query editor's Execute button (or a
// dashboard link that asks for a run, docs/frames.md §1) makes a new one:
// "<unix milliseconds>-<16 to 64 hex digits>". The backend accepts a
// request only while it is fresh (runFreshness either side of the
// backend's clock, for clock skew between browser and server), remembers
// every request it accepted with the trace it produced, and answers the
// same request again from the stored trace. A dashboard saved with a run
// request therefore never runs again on load: within the freshness window
// the request is remembered, after it the request is stale.

// runFreshness is how old (or how far ahead) a run request may be.
const runFreshness = 10 * time.Minute

// runLedgerSize bounds the remembered requests. When it is full the
// oldest is forgotten and its stamp becomes the floor: a request stamped
// at or before the floor is never fresh again, so forgetting cannot let a
// used request run twice.
const runLedgerSize = 4096

var runPattern = regexp.MustCompile(`^([0-9]{13})-[0-9a-f]{16,64}$`)

// runState is what a run request allows.
type runState int

const (
	runFresh   runState = iota // run the batch now (the request is now used)
	runUsed                    // already run: serve its trace
	runStale                   // too old, too far ahead, or below the floor: run nothing
	runRefused                 // fresh, but the caller may not run traces (not recorded)
)

// runLedger remembers the run requests one datasource instance accepted.
type runLedger struct {
	mu    sync.Mutex
	used  map[string]string // request -> trace id ("" while running, or when the run failed)
	order []string          // oldest first
	floor int64             // unix ms
	now   func() time.Time
}

func newRunLedger() *runLedger {
	return &runLedger{used: map[string]string{}, now: time.Now}
}

// validRun tells whether s has the form of a run request.
func validRun(s string) bool { return runPattern.MatchString(s) }

// claim decides what run request r allows; a fresh one is recorded as used
// when allowed is true. r must be valid (validRun).
func (l *runLedger) claim(r string, allowed bool) (runState, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if id, ok := l.used[r]; ok {
		return runUsed, id
	}
	stamp, _ := strconv.ParseInt(runPattern.FindStringSubmatch(r)[1], 10, 64)
	age := l.now().Sub(time.UnixMilli(stamp))
	if stamp <= l.floor || age > runFreshness || age < -runFreshness {
		return runStale, ""
	}
	if !allowed {
		return runRefused, ""
	}
	l.used[r] = ""
	l.order = append(l.order, r)
	for len(l.order) > runLedgerSize {
		old := l.order[0]
		l.order = l.order[1:]
		delete(l.used, old)
		s, _ := strconv.ParseInt(runPattern.FindStringSubmatch(old)[1], 10, 64)
		l.floor = max(l.floor, s)
	}
	return runFresh, ""
}

// done records the trace a used request produced.
func (l *runLedger) done(r, traceID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.used[r]; ok {
		l.used[r] = traceID
	}
}

package plugin

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// ledgerAt is a run ledger whose clock reads now.
func ledgerAt(now time.Time) *runLedger {
	l := newRunLedger()
	l.now = func() time.Time { return now }
	return l
}

func runAt(t time.Time, n int) string { return fmt.Sprintf("%d-%016x", t.UnixMilli(), n) }

func TestRunLedgerIsSingleUse(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	l := ledgerAt(now)
	r := runAt(now.Add(-time.Minute), 1)
	if st, _ := l.claim(r, false); st != runRefused {
		t.Fatalf("a caller who may not trace: %v, want refused", st)
	}
	if st, _ := l.claim(r, true); st != runFresh {
		t.Fatalf("first use after a refusal: %v, want fresh (a refusal does not use the request)", st)
	}
	if st, id := l.claim(r, true); st != runUsed || id != "" {
		t.Fatalf("while running: %v %q, want used without a trace", st, id)
	}
	l.done(r, "0123456789abcdef0123456789abcdef")
	if st, id := l.claim(r, true); st != runUsed || id != "0123456789abcdef0123456789abcdef" {
		t.Fatalf("after the run: %v %q, want used with its trace", st, id)
	}
	for _, stale := range []string{runAt(now.Add(-runFreshness-time.Second), 2), runAt(now.Add(runFreshness+time.Second), 3)} {
		if st, _ := l.claim(stale, true); st != runStale {
			t.Errorf("%s: %v, want stale", stale, st)
		}
	}
}

// TestRunLedgerForgetsWithoutReplay: when the ledger is full it forgets
// the oldest request, and neither that one nor any older can run again.
func TestRunLedgerForgetsWithoutReplay(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	l := ledgerAt(now)
	first := runAt(now.Add(-5*time.Minute), 0)
	if st, _ := l.claim(first, true); st != runFresh {
		t.Fatal(st)
	}
	for i := 1; i <= runLedgerSize; i++ {
		if st, _ := l.claim(runAt(now.Add(-4*time.Minute), i), true); st != runFresh {
			t.Fatalf("request %d: %v", i, st)
		}
	}
	if len(l.used) != runLedgerSize {
		t.Fatalf("ledger holds %d, want %d", len(l.used), runLedgerSize)
	}
	if st, _ := l.claim(first, true); st == runFresh {
		t.Fatal("a forgotten request ran again")
	}
	if st, _ := l.claim(runAt(now.Add(-6*time.Minute), 99999), true); st == runFresh {
		t.Fatal("a request older than a forgotten one ran")
	}
}

// FuzzRunLedger: whatever the requests, none is fresh twice, and only
// well-formed ones are claimed.
func FuzzRunLedger(f *testing.F) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	f.Add(runAt(now, 1), runAt(now, 1))
	f.Add(runAt(now, 1), runAt(now, 2))
	f.Add("1764590400000-0123456789abcdef", "x")
	f.Add("", "9999999999999-ffffffffffffffff")
	f.Fuzz(func(t *testing.T, a, b string) {
		l := ledgerAt(now)
		fresh := map[string]int{}
		for _, r := range []string{a, b, a, b} {
			if !validRun(r) {
				continue
			}
			if st, _ := l.claim(r, true); st == runFresh {
				fresh[r]++
			}
		}
		for r, n := range fresh {
			if n > 1 {
				t.Fatalf("%q was fresh %d times", r, n)
			}
		}
	})
}

// TestTraceRunsOnlyWhenAsked is issue 25's "a saved trace panel re-runs its
// statement on every dashboard load, refresh and time-range change — with
// clearBufferPool saved and allowed, DBCC DROPCLEANBUFFERS on every
// refresh". After one run, tripwires on the stand-in answer the next
// batch that clears the buffer pool, creates an event session or runs the
// traced statement with an error; every way Grafana re-sends the query
// must leave them untouched.
func TestTraceRunsOnlyWhenAsked(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "ds1", map[string]any{"allowBufferPoolClear": true})
	m := map[string]any{"sql": hashJoinSQL, "options": map[string]any{"clearBufferPool": true}}
	executed := query("A", m)
	id := traceIDOf(t, ok(t, run(t, d, bg, executed)["A"]))

	faults := f.run.Faults()
	for _, w := range []string{"DROPCLEANBUFFERS", "CREATE EVENT SESSION", "N'West'"} {
		faults.Error(w, 50000, 16, "tripwire: "+w+" ran again")
	}
	armed := faults.Pending()
	saved := func(extra map[string]any) backend.DataQuery {
		q := map[string]any{"sql": hashJoinSQL, "options": map[string]any{"clearBufferPool": true}}
		for k, v := range extra {
			q[k] = v
		}
		return query("A", q)
	}
	hourAgo := runAt(time.Now().Add(-time.Hour), 7)
	for _, c := range []struct {
		name   string
		user   *backend.User
		q      backend.DataQuery
		served bool // the stored trace, else the notice
	}{
		{"refresh: the same run request", &backend.User{Login: "editor", Role: RoleEditor}, executed, true},
		{"another user on the shared dashboard", &backend.User{Login: "vera", Role: RoleViewer}, executed, true},
		{"reload: the saved query with its trace id", &backend.User{Login: "editor", Role: RoleEditor}, saved(map[string]any{"run": nil, "traceId": id}), true},
		{"reload: a saved query that never ran", &backend.User{Login: "editor", Role: RoleEditor}, saved(map[string]any{"run": nil}), false},
		{"reload: a run request saved an hour ago", &backend.User{Login: "editor", Role: RoleEditor}, saved(map[string]any{"run": hourAgo}), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := ok(t, runAs(t, d, bg, c.user, c.q)["A"])
			if c.served {
				if got := traceIDOf(t, fs); got != id {
					t.Fatalf("served trace %s, want %s", got, id)
				}
			} else if len(fs) != 1 || fs[0].Meta == nil || len(fs[0].Meta.Notices) != 1 ||
				!strings.Contains(fs[0].Meta.Notices[0].Text, "Press Execute") {
				t.Fatalf("frames %v, want one notice saying press Execute", fs)
			}
			if faults.Pending() != armed {
				t.Fatalf("SQL ran: %d of %d tripwires left", faults.Pending(), armed)
			}
		})
	}
	// The tripwires are live: a new Execute runs, and trips the first.
	r := run(t, d, bg, query("A", m))["A"]
	if r.Error == nil || !strings.Contains(r.Error.Error(), "tripwire") {
		t.Fatalf("a new run request did not reach the server: %v", r.Error)
	}
	if n := len(f.sessions(t)); n != 0 {
		t.Fatalf("%d event sessions left behind", n)
	}
}

package exporter

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/pkg/tracer"
	"github.com/queryreplay/queryreplay/pkg/tsql"
)

// Two exporters on one server, same target name (the --dsn default of
// older versions made every target "default"): the second starts, counts
// and stops, and the first counts every spill, loses nothing and never
// restarts its session.
func TestSecondExporterOnTheSameServerChangesNoCount(t *testing.T) {
	run := startStandin(t)
	dsns := map[string]string{"standin": run.DSN}
	first := newTestExporter(t, testConfig(t, oneTarget(""), dsns))
	pollOK(t, first)
	second := newTestExporter(t, testConfig(t, oneTarget(""), dsns))
	pollOK(t, second)
	if a, b := sessionOf(t, first, "standin"), sessionOf(t, second, "standin"); a == b {
		t.Fatalf("both exporters use session %s", a)
	}
	db := workloadDB(t, run.DSN)
	spill := scenarioSQL(t, "sort_spill")
	for range 3 {
		runSQL(t, db, spill)
	}
	run.Server.FlushEventSessions()
	pollOK(t, first)
	pollOK(t, second)
	if got := sum(gather(t, second), "queryreplay_spills_total", nil); got != 3 {
		t.Errorf("the second exporter counted %v spills, want 3", got)
	}
	shutdownNow(t, second)
	for range 3 {
		runSQL(t, db, spill)
	}
	run.Server.FlushEventSessions()
	pollOK(t, first)
	fams := gather(t, first)
	if got := sum(fams, "queryreplay_spills_total", nil); got != 6 {
		t.Errorf("the first exporter counted %v spills of 6", got)
	}
	if got := sum(fams, "queryreplay_exporter_events_lost_total", nil); got != 0 {
		t.Errorf("events_lost_total = %v", got)
	}
	if got := sum(fams, "queryreplay_exporter_session_restarts_total", nil); got != 0 {
		t.Errorf("the first exporter's session restarted %v times", got)
	}
	if defined, running := sessionCatalog(t, db, sessionOf(t, first, "standin")); !defined || !running {
		t.Errorf("the first exporter's session: defined %v, running %v", defined, running)
	}
}

// A crashed exporter (its connections gone, its session left) is swept by
// the next exporter's initialisation; a live exporter's session, an old
// unowned name, a look-alike and a trace session are left alone.
func TestSweepDropsOnlyOrphanedExporterSessions(t *testing.T) {
	run := startStandin(t)
	dsns := map[string]string{"standin": run.DSN, "other": run.DSN}
	twoTargets := "global:\n  poll_interval: 1h\n  poll_timeout: 30s\ntargets:\n" +
		"  - name: standin\n    dsn_env: TEST_DSN_standin\n"
	live := newTestExporter(t, testConfig(t, twoTargets, dsns))
	pollOK(t, live)
	crashed := newTestExporter(t, testConfig(t, strings.Replace(twoTargets, "name: standin", "name: other", 1), dsns))
	pollOK(t, crashed)
	gone := sessionOf(t, crashed, "other")
	// a crash: the process's connections close, nothing is dropped
	for _, tg := range crashed.targets {
		tg.owner.close()
		tg.db.Close()
		tg.db, tg.owner, tg.spec = nil, nil, nil
	}
	db := workloadDB(t, run.DSN)
	keep := []string{"queryreplay_exporter_prod", "queryreplay_exporter_prod_0123456789ABCDEF",
		"queryreplay_exporter_prod_0123456789abcdef0"}
	for _, name := range keep {
		s := tracer.SessionSpec{Name: name, SPID: 999, Directory: "/var/opt/mssql/log", MaxFileSizeMB: 2}
		runSQL(t, db, s.CreateDDL())
	}
	keep = append(keep, sessionOf(t, live, "standin"))
	next := newTestExporter(t, testConfig(t, twoTargets, dsns))
	pollOK(t, next)
	left := eventSessions(t, db)
	if slices.Contains(left, gone) {
		t.Errorf("the crashed exporter's session %s was not swept: %v", gone, left)
	}
	for _, k := range keep {
		if !slices.Contains(left, k) {
			t.Errorf("session %s was dropped; left: %v", k, left)
		}
	}
	if got := sum(gather(t, live), "queryreplay_exporter_session_restarts_total", nil); got != 0 {
		t.Errorf("the live exporter's session restarted %v times", got)
	}
}

// A killed owner connection is reconnected at the next poll under the same
// application name, so the session keeps its name and no sweep takes it.
func TestOwnerConnectionIsReconnected(t *testing.T) {
	f := newFixture(t, "", "")
	name := sessionOf(t, f.e, "standin")
	id := f.e.targets[0].owner.id
	var spid int
	if err := f.db.QueryRow("SELECT session_id FROM sys.dm_exec_sessions WHERE program_name = @p1", ownerApp(id)).Scan(&spid); err != nil {
		t.Fatal(err)
	}
	runSQL(t, f.db, "KILL "+strconv.Itoa(spid))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if alive, err := ownerAlive(ctx, f.db, tracer.ScopeServer, id); err != nil || alive {
		t.Fatalf("after KILL the owner is alive %v (%v)", alive, err)
	}
	pollOK(t, f.e)
	if alive, err := ownerAlive(ctx, f.db, tracer.ScopeServer, id); err != nil || !alive {
		t.Fatalf("after a poll the owner is alive %v (%v)", alive, err)
	}
	if got := sessionOf(t, f.e, "standin"); got != name {
		t.Errorf("session renamed %s -> %s", name, got)
	}
}

func TestParseSessionName(t *testing.T) {
	for name, want := range map[string][2]string{
		"queryreplay_exporter_db1_1433_0123456789abcdef":                        {"db1_1433", "0123456789abcdef"},
		"queryreplay_exporter_a_0123456789abcdef":                               {"a", "0123456789abcdef"},
		"queryreplay_exporter_a_b_c_ffffffffffffffff":                           {"a_b_c", "ffffffffffffffff"},
		"queryreplay_exporter_" + strings.Repeat("x", 64) + "_0000000000000000": {strings.Repeat("x", 64), "0000000000000000"},
	} {
		target, id, ok := ParseSessionName(name)
		if !ok || target != want[0] || id != want[1] {
			t.Errorf("ParseSessionName(%q) = %q, %q, %v", name, target, id, ok)
		}
	}
	for _, name := range []string{
		"queryreplay_exporter_default", "queryreplay_exporter__0123456789abcdef",
		"queryreplay_exporter_a_0123456789ABCDEF", "queryreplay_exporter_a_0123456789abcde",
		"queryreplay_exporter_a-b_0123456789abcdef", "queryreplay_exporter_a]_0123456789abcdef",
		"queryreplay_exporter_a_0123456789abcdef\n", " queryreplay_exporter_a_0123456789abcdef",
		"QUERYREPLAY_EXPORTER_a_0123456789abcdef", "queryreplay_exporter_" + strings.Repeat("x", 65) + "_0123456789abcdef",
		"queryreplay_0123456789abcdef0123456789abcdef", "queryreplay_exporter_a_0123456789abcdef_1",
	} {
		if target, id, ok := ParseSessionName(name); ok {
			t.Errorf("ParseSessionName(%q) accepted: %q, %q", name, target, id)
		}
	}
}

var safeSessionName = regexp.MustCompile(`^queryreplay_exporter_[A-Za-z0-9_]{1,64}_[0-9a-f]{16}$`)

// Whatever the server lists, a name is acted on only in the exporter's own
// exact form, and what it builds from it round-trips.
func FuzzParseSessionName(f *testing.F) {
	for _, s := range []string{"queryreplay_exporter_a_0123456789abcdef", "queryreplay_exporter_x]; DROP DATABASE a;--_0123456789abcdef",
		"queryreplay_exporter_a_b_0123456789abcdef", "queryreplay_exporter_*/_0123456789abcdef", "queryreplay_exporter_é_0123456789abcdef"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		target, id, ok := ParseSessionName(name)
		if !ok {
			return
		}
		if !safeSessionName.MatchString(name) || !namePattern.MatchString(target) || len(id) != ownerIDLen {
			t.Fatalf("accepted %q (%q, %q)", name, target, id)
		}
		if OwnedSessionName(target, id) != name {
			t.Fatalf("%q does not round-trip: %q %q", name, target, id)
		}
	})
}

// The drop DDL quotes any name: the name appears only as a bracketed
// identifier and an N” literal, and never in a comment.
func FuzzDropSessionDDL(f *testing.F) {
	for _, s := range []string{"queryreplay_exporter_a_0123456789abcdef", "a]b", "x'; DROP TABLE t;--", "*/ /*", "]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		for _, scope := range []tracer.Scope{tracer.ScopeServer, tracer.ScopeDatabase} {
			ddl := dropSessionDDL(name, scope)
			quoted, literal := tsql.QuoteName(name), tsql.QuoteString(name)
			rest := strings.Replace(strings.Replace(ddl, quoted, "", 1), literal, "", 1)
			if strings.Contains(rest, name) && name != "" && !strings.Contains(ddl[:0], name) {
				// the name may also be a substring of the fixed text
				// (e.g. "SESSION"); only fail when a quote or comment
				// token is left over from it
				if strings.ContainsAny(name, "'[]") || strings.Contains(name, "--") || strings.Contains(name, "/*") {
					t.Fatalf("name %q appears unquoted in %q", name, ddl)
				}
			}
			for _, tok := range []string{"--", "/*"} {
				if strings.Contains(rest, tok) {
					t.Fatalf("comment token %q outside the quoted name in %q", tok, ddl)
				}
			}
		}
	})
}

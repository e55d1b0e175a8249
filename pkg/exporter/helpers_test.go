package exporter

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/queryreplay/queryreplay/pkg/tracer"
	"log/slog"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// startStandin starts a stand-in SQL Server on 127.0.0.1 for one test.
func startStandin(t testing.TB) *standin.Running { return startPersona(t, "") }

// startPersona starts a stand-in that pretends to be persona ("" is the
// default SQL Server 2017).
func startPersona(t testing.TB, persona string) *standin.Running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	run, err := standin.Start(ctx, "127.0.0.1:0", standin.Options{XELEncoder: xe.EncodeXMLAsXEL, Persona: persona})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = run.Close()
	})
	return run
}

// testConfig parses a configuration whose targets read their DSN from the
// variable TEST_DSN_<name>, which dsns supplies.
func testConfig(t testing.TB, yamlText string, dsns map[string]string) *Config {
	t.Helper()
	cfg, err := ParseConfig([]byte(yamlText), func(k string) (string, bool) {
		v, ok := dsns[strings.TrimPrefix(k, "TEST_DSN_")]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// oneTarget is the configuration of one target "standin" with extra YAML
// lines for the target (indented by the caller's four spaces).
func oneTarget(extra string) string {
	return "global:\n  poll_interval: 1h\n  poll_timeout: 30s\ntargets:\n  - name: standin\n    dsn_env: TEST_DSN_standin\n" + extra
}

// newTestExporter builds an exporter that the test polls by hand, with the
// real tracer for its probes and sweep (as the command wires it).
func newTestExporter(t testing.TB, cfg *Config) *Exporter {
	t.Helper()
	e, err := New(cfg, slog.New(slog.DiscardHandler), WithTracing(tracer.ExporterTracing{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.Shutdown(ctx)
	})
	return e
}

// pollOK polls every target once and fails the test when one is not up.
func pollOK(t testing.TB, e *Exporter) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e.PollNow(ctx)
	for _, tg := range e.targets {
		tg.mu.Lock()
		up, last := tg.st.up, tg.st.lastError
		tg.mu.Unlock()
		if !up {
			t.Fatalf("target %s is down after a poll: %s", tg.cfg.Name, last)
		}
	}
}

// gather returns the registry's families by name.
func gather(t testing.TB, e *Exporter) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := e.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// sum adds up a family's values over the series whose labels include want.
func sum(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	var total float64
	f := fams[name]
	if f == nil {
		return 0
	}
next:
	for _, m := range f.GetMetric() {
		for k, v := range want {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			total += m.GetCounter().GetValue()
		case m.Gauge != nil:
			total += m.GetGauge().GetValue()
		}
	}
	return total
}

func labels(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// workloadDB opens a client connection that is not the exporter's (its
// app name is go-mssqldb's default), whose events the session records.
func workloadDB(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlserver", dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func runSQL(t testing.TB, db *sql.DB, query string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	for {
		for rows.Next() {
		}
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	rows.Close()
}

func scenarioSQL(t testing.TB, name string) string {
	t.Helper()
	for _, s := range standin.Scenarios() {
		if s.Name == name {
			return s.SQL
		}
	}
	t.Fatalf("no scenario %s", name)
	return ""
}

// mixedWorkload runs what makes every event group fire: a cold buffer pool
// (physical page reads, PAGEIOLATCH waits), the sort that spills (sort
// warnings, IO_COMPLETION waits, a memory grant), inserts (page splits, log
// flushes) and plain statements. round makes each call's inserts unique.
func mixedWorkload(t testing.TB, db *sql.DB, round int) {
	t.Helper()
	runSQL(t, db, "CHECKPOINT; DBCC DROPCLEANBUFFERS")
	runSQL(t, db, "DBCC TRACEON(652)")
	runSQL(t, db, scenarioSQL(t, "clustered_index_scan"))
	runSQL(t, db, "DBCC TRACEOFF(652)")
	runSQL(t, db, scenarioSQL(t, "sort_spill"))
	runSQL(t, db, scenarioSQL(t, "hash_join"))
	insertOrders(t, db, round, 20)
}

// insertOrders inserts n orders, one statement each; about every 120th
// needs a new leaf page (a page split).
func insertOrders(t testing.TB, db *sql.DB, round, n int) {
	t.Helper()
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "INSERT INTO dbo.Orders (OrderID, CustomerID, OrderDate, Amount, Status) VALUES (%d, 7, '2026-02-01', 12.5, N'New');\n", 200000+round*1000+i)
	}
	runSQL(t, db, b.String())
}

// statementVolume runs n trivial statements in one batch: one
// sql_statement_completed event each, to fill event files quickly.
func statementVolume(t testing.TB, db *sql.DB, n int) {
	t.Helper()
	runSQL(t, db, strings.Repeat("SELECT 1;\n", n))
}

// assertCountsMatch checks that, for every event the session recorded, the
// exporter decoded exactly as many, and that the published counters add
// up to the same numbers.
func assertCountsMatch(t testing.TB, e *Exporter, run *standin.Running, session string) map[string]int64 {
	t.Helper()
	rec := run.Server.RecordedEvents(session)
	fams := gather(t, e)
	if len(rec) == 0 {
		t.Fatal("the session recorded no events")
	}
	for ev, n := range rec {
		if got := sum(fams, "queryreplay_exporter_events_decoded_total", labels("event", ev)); got != float64(n) {
			t.Errorf("%s: decoded %v, the stand-in recorded %d", ev, got, n)
		}
	}
	checks := []struct {
		metric string
		events []string
	}{
		{"queryreplay_spills_total", []string{"sort_warning", "hash_warning", "exchange_spill"}},
		{"queryreplay_waits_total", []string{"wait_info"}},
		{"queryreplay_page_reads_total", []string{"physical_page_read"}},
		{"queryreplay_page_writes_total", []string{"physical_page_write"}},
		{"queryreplay_page_splits_total", []string{"page_split"}},
		{"queryreplay_statements_total", []string{"sql_statement_completed"}},
		{"queryreplay_memory_grants_total", []string{"query_memory_grant_usage"}},
		{"queryreplay_log_flushes_total", []string{"log_flush_complete"}},
	}
	for _, c := range checks {
		var want int64
		for _, ev := range c.events {
			want += rec[ev]
		}
		if got := sum(fams, c.metric, nil); got != float64(want) {
			t.Errorf("%s = %v, the stand-in recorded %d %v events", c.metric, got, want, c.events)
		}
	}
	if lost := sum(fams, "queryreplay_exporter_events_lost_total", nil); lost != 0 {
		t.Errorf("events_lost_total = %v, want 0", lost)
	}
	return rec
}

func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

// fixture is a stand-in, an exporter with one target "standin" on it (polled
// once), and a workload connection.
type fixture struct {
	run *standin.Running
	e   *Exporter
	db  *sql.DB
}

// newFixture builds a fixture; extra is YAML for the target (indented four
// spaces).
func newFixture(t testing.TB, persona, extra string) *fixture {
	t.Helper()
	run := startPersona(t, persona)
	e := newTestExporter(t, testConfig(t, oneTarget(extra), map[string]string{"standin": run.DSN}))
	pollOK(t, e)
	return &fixture{run: run, e: e, db: workloadDB(t, run.DSN)}
}

// round runs the mixed workload, flushes the sessions and polls.
func (f *fixture) round(t testing.TB, i int) {
	t.Helper()
	mixedWorkload(t, f.db, i)
	f.flushAndPoll(t)
}

func (f *fixture) flushAndPoll(t testing.TB) {
	t.Helper()
	f.run.Server.FlushEventSessions()
	pollOK(t, f.e)
}

// recordedTotal is how many events the target's session recorded in all.
func (f *fixture) recordedTotal(t testing.TB) float64 {
	var n float64
	for _, c := range f.run.Server.RecordedEvents(sessionOf(t, f.e, "standin")) {
		n += float64(c)
	}
	return n
}

// sessionOf returns the name of a target's session once it is initialised
// (queryreplay_exporter_<target>_<owner id>).
func sessionOf(t testing.TB, e *Exporter, target string) string {
	t.Helper()
	for _, tg := range e.targets {
		if tg.cfg.Name == target {
			tg.mu.Lock()
			defer tg.mu.Unlock()
			if tg.st.session == "" {
				t.Fatalf("target %s has no session yet", target)
			}
			return tg.st.session
		}
	}
	t.Fatalf("no target %s", target)
	return ""
}

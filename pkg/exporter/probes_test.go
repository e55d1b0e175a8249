package exporter

import (
	"context"
	"errors"
	"github.com/queryreplay/queryreplay/internal/tsqlcorpus"
	"github.com/queryreplay/queryreplay/pkg/tracer"
	"strings"
	"testing"
	"time"
)

// A probe traces its read-only query on schedule with pkg/tracer and
// publishes the last run's duration, reads and spills; its own connection
// carries the exporter's application name, so the target's session does not
// count the probe's events.
func TestProbeTracesOnSchedule(t *testing.T) {
	run := startStandin(t)
	sortSpill := scenarioSQL(t, "sort_spill")
	cfg := testConfig(t, oneTarget("")+"probes:\n  - name: sort_orderlines\n    target: standin\n    interval: 1s\n    sql: \""+sortSpill+"\"\n",
		map[string]string{"standin": run.DSN})
	e := newTestExporter(t, cfg)
	pollOK(t, e)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, p := range e.probes {
		go p.run(ctx)
	}
	waitFor(t, 60*time.Second, "the probe to run twice", func() bool {
		return sum(gather(t, e), "queryreplay_probe_runs_total", labels("result", "success")) >= 2
	})
	cancel()
	fams := gather(t, e)
	l := labels("probe", "sort_orderlines", "target", "standin")
	if d := sum(fams, "queryreplay_probe_duration_seconds", l); d <= 0 {
		t.Errorf("probe duration %v", d)
	}
	if s := sum(fams, "queryreplay_probe_spills", l); s != 1 {
		t.Errorf("probe spills %v, want the sort's 1", s)
	}
	if ts := sum(fams, "queryreplay_probe_last_success_timestamp_seconds", l); ts < float64(time.Now().Add(-time.Minute).Unix()) {
		t.Errorf("last success %v", ts)
	}
	run.Server.FlushEventSessions()
	pollOK(t, e)
	// the tracer sweeps orphaned trace sessions before each trace; the
	// exporter's session is not one of them
	if r := sum(gather(t, e), "queryreplay_exporter_session_restarts_total", nil); r != 0 {
		t.Errorf("the exporter's session was lost %v times while the probe ran", r)
	}
	if n := run.Server.RecordedEvents(sessionOf(t, e, "standin"))["sort_warning"]; n != 0 {
		t.Errorf("the target's session recorded %d of the probe's sort warnings", n)
	}
}

// A probe that would modify data is refused when the configuration is
// parsed (so --config.check refuses it as a start would), and again when
// the exporter is built from a configuration changed by hand.
func TestProbeRefusesModifications(t *testing.T) {
	const bad = "probes:\n  - {name: bad, target: standin, sql: \"UPDATE dbo.Orders SET Status = N'x'\"}\n"
	_, err := ParseConfig([]byte(oneTarget("")+bad), func(string) (string, bool) { return "sqlserver://sa@127.0.0.1:1", true })
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "probes[0].sql") || !strings.Contains(err.Error(), "modifies data") {
		t.Fatalf("ParseConfig: %v", err)
	}
	cfg := testConfig(t, oneTarget("")+"probes:\n  - {name: bad, target: standin, sql: SELECT 1}\n",
		map[string]string{"standin": "sqlserver://sa@127.0.0.1:1"})
	cfg.Probes[0].SQL = "UPDATE dbo.Orders SET Status = N'x'"
	_, err = New(cfg, discardLog(), WithTracing(tracer.ExporterTracing{}))
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "probes[0].sql") || !strings.Contains(err.Error(), "modifies data") {
		t.Fatalf("New: %v", err)
	}
}

// The exporter does not import the tracer: probes need one passed in, and
// a configuration with probes but no tracer is refused, not silently idle.
func TestProbesNeedTracing(t *testing.T) {
	cfg := testConfig(t, oneTarget("")+"probes:\n  - {name: p, target: standin, sql: SELECT 1}\n",
		map[string]string{"standin": "sqlserver://sa@127.0.0.1:1"})
	_, err := New(cfg, discardLog())
	if err == nil || !strings.Contains(err.Error(), "WithTracing") {
		t.Fatalf("New without a tracer: %v", err)
	}
}

// checkProbe gives the answer the tracer's own validation gives under the
// read-only policy for every batch of the classifier's corpus (refused or
// not), so --config.check refuses exactly what a probe run would.
func TestCheckProbeAgreesWithTracer(t *testing.T) {
	batches := []string{"", "  ", "SELECT 1", "UPDATE dbo.Orders SET Status = N'x'"}
	for _, c := range tsqlcorpus.Cases {
		batches = append(batches, c.SQL)
	}
	for _, sql := range batches {
		_, want := tracer.Options{SQL: sql, Database: "db"}.Validate(tracer.ReadOnlyPolicy)
		got := checkProbe(Probe{SQL: sql, Database: "db"})
		if (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
			t.Errorf("%q: checkProbe %v, tracer %v", sql, got, want)
		}
	}
	_, want := tracer.Options{SQL: "SELECT 1", Database: "a\x00"}.Validate(tracer.ReadOnlyPolicy)
	if got := checkProbe(Probe{SQL: "SELECT 1", Database: "a\x00"}); got == nil || want == nil || got.Error() != want.Error() {
		t.Errorf("NUL database: checkProbe %v, tracer %v", got, want)
	}
}

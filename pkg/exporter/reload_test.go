package exporter

import (
	"context"
	"testing"
	"time"
)

func reloadNow(t *testing.T, e *Exporter, cfg *Config) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.Reload(ctx, cfg); err != nil {
		t.Fatalf("reload: %v", err)
	}
}

// A reload re-reads the configuration without losing a count: an unchanged
// target goes on as it was, a changed one carries its counters and its
// session name over, an added one starts, a removed one drops its session.
func TestReloadKeepsCounts(t *testing.T) {
	run := startStandin(t)
	dsns := map[string]string{"standin": run.DSN, "b": run.DSN}
	base := "global:\n  poll_interval: 1h\n  poll_timeout: 30s\ntargets:\n  - name: standin\n    dsn_env: TEST_DSN_standin\n"
	e := newTestExporter(t, testConfig(t, base, dsns))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.Start(ctx)
	pollOK(t, e)
	db := workloadDB(t, run.DSN)
	name := sessionOf(t, e, "standin")
	statementVolume(t, db, 5)
	run.Server.FlushEventSessions()
	pollOK(t, e)
	statements := func() float64 {
		return sum(gather(t, e), "queryreplay_statements_total", labels("target", "standin"))
	}
	if got := statements(); got != 5 {
		t.Fatalf("counted %v statements of 5", got)
	}

	reloadNow(t, e, testConfig(t, base, dsns)) // unchanged
	statementVolume(t, db, 2)
	changed := base + "    waits:\n      min_duration: 2ms\n" +
		"  - name: b\n    dsn_env: TEST_DSN_b\n"
	reloadNow(t, e, testConfig(t, changed, dsns))
	pollOK(t, e)
	if got := sessionOf(t, e, "standin"); got != name {
		t.Errorf("the changed target's session %s became %s", name, got)
	}
	if got := statements(); got != 7 {
		t.Errorf("after the reloads: %v statements of 7", got)
	}
	bName := sessionOf(t, e, "b")
	statementVolume(t, db, 3)
	run.Server.FlushEventSessions()
	pollOK(t, e)
	if got := statements(); got != 10 {
		t.Errorf("after the reloads and 3 more: %v statements of 10", got)
	}
	reloadNow(t, e, testConfig(t, base, dsns)) // b removed
	if defined, running := sessionCatalog(t, db, bName); defined || running {
		t.Errorf("removed target b's session: defined %v, running %v", defined, running)
	}
	if got := sum(gather(t, e), "queryreplay_up", labels("target", "b")); got != 0 || len(e.targets) != 1 {
		t.Errorf("target b is still served")
	}
	fams := gather(t, e)
	if got := sum(fams, "queryreplay_exporter_events_lost_total", nil); got != 0 {
		t.Errorf("events_lost_total %v", got)
	}
}

// A configuration the exporter would refuse at start is refused at reload,
// and the running configuration stays.
func TestReloadRefusesABadConfiguration(t *testing.T) {
	f := newFixture(t, "", "")
	bad := &Config{Targets: []Target{{Name: "x"}}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.e.Reload(ctx, bad); err == nil {
		t.Fatal("a target without a DSN was accepted")
	}
	if len(f.e.targets) != 1 || f.e.targets[0].cfg.Name != "standin" {
		t.Fatalf("targets after a refused reload: %d", len(f.e.targets))
	}
	pollOK(t, f.e)
}

package plugin

import (
	"context"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/internal/standin"
)

// A trace query on a batch blocked by another session (the lock_blocking
// scenario's set-up, standin.PrepareScenario) returns a findings frame whose blocking
// row names the session that held the lock (sampled by the tracer from
// sys.dm_exec_requests while the batch waited); the statement text of the
// blocker is not read by default.
func TestFindingsFrameNamesBlocker(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "ds1", nil)
	var sc standin.Scenario
	for _, s := range standin.Scenarios() {
		if s.Name == "lock_blocking" {
			sc = s
		}
	}
	release, err := standin.PrepareScenario(context.Background(), f.run.Server, sc)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	sql := sc.SQL
	fr := frameNamed(t, ok(t, run(t, d, bg, query("A", map[string]any{"sql": sql}))["A"]), "findings")
	rules, _ := fr.FieldByName("rule")
	detail, _ := fr.FieldByName("detail")
	found := false
	for i := range fr.Rows() {
		if rules.At(i).(string) != "blocking" {
			continue
		}
		found = true
		d := strings.Join(strings.Fields(detail.At(i).(string)), " ")
		if !strings.Contains(d, "Held by session 999 (login demo_blocker, host QRSTANDIN, program QueryReplay demo blocker") {
			t.Errorf("blocking detail %q", d)
		}
		if strings.Contains(d, "its last batch") {
			t.Errorf("the blocker's statement was read without being asked for: %q", d)
		}
	}
	if !found {
		t.Fatal("no blocking finding")
	}
	if s := f.sessions(t); len(s) != 0 {
		t.Fatalf("sessions left: %v", s)
	}
}

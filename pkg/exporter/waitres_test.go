package exporter

import (
	"fmt"
	"testing"
)

// waitRow is a wait_info End event of duration ms (XE's unit), as the
// event file holds it.
func waitRow(ms int) []byte {
	return []byte(`<event name="wait_info" package="sqlos" timestamp="2026-01-01T00:00:00.000Z">` +
		`<data name="wait_type"><value>66</value><text>PAGEIOLATCH_SH</text></data>` +
		`<data name="opcode"><value>1</value><text>End</text></data>` +
		fmt.Sprintf(`<data name="duration"><value>%d</value></data><data name="signal_duration"><value>0</value></data>`, ms) +
		`<action name="database_id" package="sqlserver"><value>6</value></action></event>`)
}

// XE reports wait durations in whole milliseconds, so a wait shorter than
// 1 ms arrives as 0 and adds nothing to wait_seconds_total. Such waits are
// still counted in waits_total, and apart in waits_below_1ms_total, so
// time per wait is not read as less than it is without saying so.
func TestSubMillisecondWaitsAreCountedApart(t *testing.T) {
	for _, durations := range [][]int{{0, 0, 3}, {0}, {1, 2}, {0, 5, 0, 0, 7}} {
		e := newTestExporter(t, testConfig(t, oneTarget(""), map[string]string{"standin": "sqlserver://sa@127.0.0.1:1"}))
		var rows [][]byte
		zero, ms := 0, 0
		for _, d := range durations {
			rows = append(rows, waitRow(d))
			ms += d
			if d == 0 {
				zero++
			}
		}
		b := aggregateRows(t, rows, newEventDecoder(), (*batch).add)
		e.targets[0].mergeWaits(b)
		fams := gather(t, e)
		l := labels("wait_type", "PAGEIOLATCH_SH")
		if n := sum(fams, "queryreplay_waits_total", l); n != float64(len(durations)) {
			t.Errorf("%v: waits_total %v", durations, n)
		}
		if n := sum(fams, "queryreplay_waits_below_1ms_total", l); n != float64(zero) {
			t.Errorf("%v: waits_below_1ms_total %v, want %d", durations, n, zero)
		}
		if s := sum(fams, "queryreplay_wait_seconds_total", l); s != float64(ms)/1e3 {
			t.Errorf("%v: wait_seconds_total %v, want %v", durations, s, float64(ms)/1e3)
		}
	}
}

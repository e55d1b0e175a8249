package exporter

import (
	"testing"

	"github.com/queryreplay/queryreplay/pkg/xe"
)

func decodeOne(t *testing.T, x string) xe.Event {
	t.Helper()
	ev, err := xe.NewDecoder(nil).DecodeRow([]byte(x))
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

const actions = `<action name="event_sequence" package="package0"><value>1</value></action>` +
	`<action name="database_id" package="sqlserver"><value>5</value></action>` +
	`<action name="query_hash" package="sqlserver"><value>1311768467294899695</value></action>`

// Event shapes the stand-in does not emit (hash and exchange spills, Begin
// ends, the wait_completed event) are aggregated as the field tables say.
func TestBatchAggregatesEveryEventShape(t *testing.T) {
	b := newBatch()
	for _, x := range []string{
		`<event name="hash_warning" package="sqlserver" timestamp="2026-01-01T00:00:00.000Z"><data name="hash_warning_type"><value>0</value><text>Recursion</text></data>` +
			`<data name="worktable_physical_writes"><value>40</value></data><data name="workfile_physical_writes"><value>2</value></data>` + actions + `</event>`,
		`<event name="exchange_spill" package="sqlserver" timestamp="2026-01-01T00:00:00.000Z"><data name="opcode"><value>0</value><text>Begin</text></data>` + actions + `</event>`,
		`<event name="exchange_spill" package="sqlserver" timestamp="2026-01-01T00:00:00.001Z"><data name="opcode"><value>1</value><text>End</text></data>` + actions + `</event>`,
		`<event name="wait_info" package="sqlos" timestamp="2026-01-01T00:00:00.000Z"><data name="wait_type"><value>66</value><text>PAGEIOLATCH_SH</text></data>` +
			`<data name="opcode"><value>0</value><text>Begin</text></data><data name="duration"><value>0</value></data>` + actions + `</event>`,
		`<event name="wait_completed" package="sqlos" timestamp="2026-01-01T00:00:00.000Z"><data name="wait_type"><value>66</value><text>PAGEIOLATCH_SH</text></data>` +
			`<data name="duration"><value>12</value></data><data name="signal_duration"><value>3</value></data>` + actions + `</event>`,
		`<event name="log_flush_complete" package="sqlserver" timestamp="2026-01-01T00:00:00.000Z"><data name="database_id"><value>7</value></data>` +
			`<data name="write_size"><value>61440</value></data>` + actions + `</event>`,
		`<event name="lock_acquired" package="sqlserver" timestamp="2026-01-01T00:00:00.000Z">` + actions + `</event>`,
	} {
		ev := decodeOne(t, x)
		b.add(&ev, contextOf(&ev))
	}
	h := spillKey{5, "hash", 0x1234567890ABCDEF}
	if a := b.spills[h]; a == nil || a.count != 1 || a.written != 42 {
		t.Errorf("hash spill %+v", a)
	}
	if a := b.spills[spillKey{5, "exchange", 0x1234567890ABCDEF}]; a == nil || a.count != 1 {
		t.Errorf("exchange spill counted %+v (its Begin must not count)", a)
	}
	if a := b.waits[waitKey{5, 66}]; a == nil || a.count != 1 || a.durUs != 12000 || a.signalUs != 3000 {
		t.Errorf("waits %+v (a wait_info Begin must not count; wait_completed ms -> µs)", a)
	}
	if a := b.logs[7]; a == nil || a.bytes != 61440 {
		t.Errorf("log flush %+v (its database_id column, not the action)", a)
	}
	if b.decodedOf("lock_acquired") != 1 || len(b.stmts) != 0 {
		t.Errorf("an event outside the groups is only counted as decoded: %v", b.decoded)
	}
}

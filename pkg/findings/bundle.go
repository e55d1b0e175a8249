package findings

import (
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/showplan"
)

// FromBundle is the rules' input for a saved trace: its timeline, the
// statement of plan the timeline was built from, and what the run
// recorded (options, event groups traced, losses, log records, the
// sessions that blocked it).
func FromBundle(b *bundle.Bundle, plan *showplan.Plan) Input {
	r, g := b.Result, b.Run.Groups
	run := Run{
		ClearBufferPool: b.Run.ClearBufferPool, DisableReadAhead: b.Run.DisableReadAhead, Modification: b.Run.Modification,
		RolledBack: r.RolledBack, Truncated: r.Truncated, Lost: r.Lost, DroppedEvents: r.DroppedEvents,
		// transaction_log is traced for every modification, whatever the groups say.
		Traced:   &Traced{Locks: g.Locks, Waits: g.Waits, Memory: g.Memory, Splits: g.Splits, Log: g.Log || b.Run.Modification, FileIO: g.FileIO},
		Blockers: r.Blocking,
	}
	for _, l := range r.LogRecords {
		run.LogRecords = append(run.LogRecords, LogRecord{Operation: l.Operation, Context: l.Context})
	}
	run.BatchText = b.SQL
	return Input{Trace: b.Trace, Plan: PlanStatement(plan, b.Trace), Run: run, Server: ServerOf(b.Server.ProductVersion, plan),
		Statements: StatementsWithPlans(plan)}
}

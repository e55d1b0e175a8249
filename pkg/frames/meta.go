package frames

import (
	"fmt"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/findings"
)

// Persona names the kind of server from SERVERPROPERTY('EngineEdition')
// (https://learn.microsoft.com/en-us/sql/t-sql/functions/serverproperty-transact-sql):
// 1–4 (Personal/Desktop, Standard, Enterprise, Express) and 9 (Azure SQL
// Edge) are a SQL Server "box"; 5 is Azure SQL Database; 8 is Azure SQL
// Managed Instance; anything else (Synapse 6 and 11, Fabric 12, 0 when
// not read) is unknown.
func Persona(engineEdition int) string {
	switch engineEdition {
	case 1, 2, 3, 4, 9:
		return "box"
	case 5:
		return "azure-sql-database"
	case 8:
		return "managed-instance"
	}
	return "unknown"
}

// OptionsOf is the options a bundle was traced with, in the query model's
// shape (docs/frames.md §1).
func OptionsOf(run bundle.RunInfo) map[string]any {
	var groups []string
	g := run.Groups
	for _, e := range []struct {
		on   bool
		name string
	}{{g.Locks, "locks"}, {g.Waits, "waits"}, {g.Memory, "memory"}, {g.Splits, "splits"}, {g.Log, "log"}, {g.FileIO, "fileIO"}} {
		if e.on {
			groups = append(groups, e.name)
		}
	}
	if groups == nil {
		groups = []string{}
	}
	opts := map[string]any{
		"events": groups, "callStacks": run.CallStacks, "clearBufferPool": run.ClearBufferPool,
		"disableReadAhead": run.DisableReadAhead, "modification": run.Modification,
	}
	// limits are absent from bundles written before the tracer recorded them
	if run.TimeoutSeconds > 0 {
		opts["timeoutSeconds"] = run.TimeoutSeconds
	}
	if run.MaxEvents > 0 {
		opts["maxEvents"] = run.MaxEvents
	}
	return opts
}

func (v *view) traceFrame() *data.Frame {
	b, tr := v.src.Bundle, v.tr
	unmatched := int64(0)
	for _, n := range tr.Summary.Unmatched {
		unmatched += int64(n)
	}
	lost := int64(b.Result.Lost) + b.Result.DroppedEvents
	persona := Persona(b.Server.EngineEdition)
	facts := v.facts()
	text := v.statementText()
	f := data.NewFrame("trace",
		data.NewField("traceId", nil, []string{v.src.TraceID}),
		data.NewField("statement", nil, []string{text}),
		data.NewField("database", nil, []string{b.Server.Database}),
		data.NewField("start", nil, []time.Time{v.at(tr.Start)}),
		data.NewField("end", nil, []time.Time{v.at(tr.End)}),
		unit(data.NewField("startUs", nil, []int64{tr.Start}), "µs"),
		unit(data.NewField("endUs", nil, []int64{tr.End}), "µs"),
		// the batch's one elapsed time (docs/frames.md, "Vocabulary"),
		// its lead-in and its operators' time; the client's round trip
		// apart, under its own name
		unit(data.NewField("durationUs", nil, []int64{facts.ElapsedUs}), "µs").SetConfig(&data.FieldConfig{Unit: "µs", DisplayName: "elapsed"}),
		unit(data.NewField("leadInUs", nil, []int64{facts.LeadInUs}), "µs"),
		unit(data.NewField("operatorUs", nil, []int64{facts.OperatorUs}), "µs"),
		unit(data.NewField("clientRoundTripUs", nil, []int64{b.Result.DurationUs}), "µs"),
		data.NewField("logicalReads", nil, []*int64{counterOr(facts.HasCounters, facts.LogicalReads)}).SetConfig(&data.FieldConfig{DisplayName: "logical reads (plan)"}),
		data.NewField("physicalReads", nil, []*int64{counterOr(facts.HasCounters, facts.PhysicalReads)}).SetConfig(&data.FieldConfig{DisplayName: "physical reads (plan)"}),
		data.NewField("readAheads", nil, []*int64{counterOr(facts.HasCounters, facts.ReadAheads)}).SetConfig(&data.FieldConfig{DisplayName: "read-ahead reads (plan)"}),
		data.NewField("pageReads", nil, []int64{int64(facts.PageReads)}).SetConfig(&data.FieldConfig{DisplayName: "page reads (trace)"}),
		unit(data.NewField("waitUs", nil, []int64{facts.WaitUs}), "µs"),
		data.NewField("rows", nil, []int64{v.rows()}),
		data.NewField("rowsAffected", nil, []int64{v.rowsAffected()}),
		unit(data.NewField("cpuMs", nil, []*int64{v.cpuMs()}), "ms").SetConfig(&data.FieldConfig{Unit: "ms", DisplayName: "CPU (plan)"}),
		data.NewField("events", nil, []int64{b.Result.Events}),
		data.NewField("lost", nil, []int64{lost}),
		data.NewField("truncated", nil, []bool{b.Result.Truncated}),
		data.NewField("unmatched", nil, []int64{unmatched}),
		data.NewField("persona", nil, []string{persona}),
		data.NewField("serverVersion", nil, []string{b.Server.ProductVersion}),
	)
	binned := v.binned
	if binned == nil {
		binned = []string{}
	}
	rows := b.Result.Rows
	if rows == nil {
		rows = []int64{}
	}
	f.Meta = v.meta(custom{
		"statement": text,
		"database":  b.Server.Database,
		"options":   OptionsOf(b.Run),
		"timeRange": map[string]any{
			"zeroTime": v.zero.Format(time.RFC3339Nano), "startUs": tr.Start, "endUs": tr.End,
			"from": v.at(tr.Start).UnixMilli(), "to": v.at(tr.End).UnixMilli(),
		},
		"window":        v.win,
		"maxDataPoints": v.budget,
		"counts": map[string]any{
			"events": b.Result.Events, "badRows": b.Result.BadRows, "batches": b.Result.Batches, "rows": rows,
			"lanes": orEmptyMap(tr.Summary.Lanes),
		},
		"facts": map[string]any{"time": facts.TimeText(), "reads": facts.ReadsText(), "waits": facts.WaitsText(),
			"elapsedSource": facts.ElapsedSource},
		"unmatched":   orEmptyMap(tr.Summary.Unmatched),
		"ambiguous":   orEmptyMap(tr.Summary.Ambiguous),
		"gaps":        len(tr.Summary.Gaps),
		"duplicates":  tr.Summary.Duplicates,
		"schema":      tr.Schema,
		"lost":        map[string]any{"sequenceGaps": b.Result.Lost, "dropped": b.Result.DroppedEvents},
		"truncated":   b.Result.Truncated,
		"persona":     persona,
		"server":      map[string]any{"productVersion": b.Server.ProductVersion, "engineEdition": b.Server.EngineEdition},
		"readBack":    b.Run.ReadBack,
		"rolledBack":  b.Result.RolledBack,
		"binnedLanes": binned,
		"warnings":    orEmptyStrings(b.Result.Warnings),
		"notes":       orEmptyStrings(tr.Summary.Notes),
		"startedAt":   b.Run.StartedAt.UTC().Format(time.RFC3339Nano),
	})
	f.Meta.PreferredVisualization = data.VisTypeTable
	f.Meta.Notices = traceNotices(b, lost)
	return f
}

func traceNotices(b *bundle.Bundle, lost int64) []data.Notice {
	var out []data.Notice
	if b.Result.Truncated {
		out = append(out, data.Notice{Severity: data.NoticeSeverityWarning,
			Text: fmt.Sprintf("the trace was truncated at %d events (maxEvents); later events are missing", b.Result.Events)})
	}
	if lost > 0 {
		out = append(out, data.Notice{Severity: data.NoticeSeverityWarning,
			Text: fmt.Sprintf("the server dropped %d events; the timeline has gaps", lost)})
	}
	for _, w := range b.Result.Warnings {
		if strings.HasPrefix(w, bundle.MaxEventsWarningPrefix) {
			continue // said by the truncation notice above
		}
		out = append(out, data.Notice{Severity: data.NoticeSeverityWarning, Text: w})
	}
	return out
}

func orEmptyMap(m map[string]int) map[string]int {
	if m == nil {
		return map[string]int{}
	}
	return m
}

func orEmptyStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// facts are the trace's figures in the vocabulary every surface shares
// (findings.Facts): reads from the plan's counters (summed over the
// operators' Runtime), page reads and waits from the trace.
func (v *view) facts() findings.Facts {
	var logical, physical, ahead int64
	has := false
	for _, r := range v.src.Runtime {
		if r.LogicalReads != nil {
			logical += *r.LogicalReads
			has = true
		}
		if r.PhysicalReads != nil {
			physical += *r.PhysicalReads
		}
		if r.ReadAheads != nil {
			ahead += *r.ReadAheads
		}
	}
	f := findings.FactsOf(v.tr, has, logical, physical, ahead)
	if n := v.node; n != nil && n.Executions > 0 {
		// a picked statement: its own elapsed (its completed events), its
		// lead-in from its own start; without plan counters, the reads its
		// completed events counted (the same facts, for the statement)
		f.LeadInUs = max(0, f.LeadInUs-n.StartUs)
		f.ElapsedUs, f.ElapsedSource = int64(n.ElapsedUs), "statement_completed"
		if !has {
			f.HasCounters, f.LogicalReads, f.PhysicalReads = true, int64(n.LogicalReads), int64(n.PhysicalReads)
		}
	}
	return f
}

// statementText is what ran: the batch, or the picked statement's own
// text (its slice of the batch or the procedure's statement).
func (v *view) statementText() string {
	if v.node != nil && v.node.Text != "" {
		return v.node.Text
	}
	return v.src.Bundle.SQL
}

// rows is what the batch returned, or the picked statement's own row
// count (its completed events' row_count).
func (v *view) rows() int64 {
	if n := v.node; n != nil && n.Executions > 0 {
		return int64(n.Rows)
	}
	return rowsOf(v.src.Bundle.Result.Rows)
}

// rowsAffected is the batch's; a statement's one row_count is its rows.
func (v *view) rowsAffected() int64 {
	if n := v.node; n != nil && n.Executions > 0 {
		return 0
	}
	return rowsAffected(v.src.Bundle)
}

// cpuMs is the plan's CPU time, or for a picked statement whose plan has
// no QueryTimeStats its completed events' cpu_time.
func (v *view) cpuMs() *int64 {
	if v.src.CPUMs != nil {
		return v.src.CPUMs
	}
	if n := v.node; n != nil && n.Executions > 0 {
		ms := int64(n.CPUUs / 1000)
		return &ms
	}
	return nil
}

// counterOr is the counter, or nil when the plan has none.
func counterOr(has bool, n int64) *int64 {
	if !has {
		return nil
	}
	return &n
}

// rowsOf is the rows the batch returned, over its result sets.
func rowsOf(sets []int64) int64 {
	var n int64
	for _, r := range sets {
		n += r
	}
	return n
}

// rowsAffected is the rows an UPDATE or DELETE changed beyond those
// returned (sql_batch_completed's row_count), as the terminal says it.
func rowsAffected(b *bundle.Bundle) int64 {
	if b.Trace == nil {
		return 0
	}
	return max(b.Trace.Summary.BatchRowCount-rowsOf(b.Result.Rows), 0)
}

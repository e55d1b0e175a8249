package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/queryreplay/queryreplay/pkg/catalogfile"
	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/timeline"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

type timelineArgs struct {
	plan      string
	events    []string
	catalog   string
	statement int
	json      bool
	maxPlan   int
}

func init() {
	commands = append(commands, func(c *cli) {
		cmd := c.app.Command("timeline", "Build a timeline from an actual plan and decoded events.")
		a := &timelineArgs{}
		cmd.Flag("plan", "Actual plan (.sqlplan or showplan XML). Default: the plan of the query_post_execution_showplan event in EVENTS.").StringVar(&a.plan)
		cmd.Flag("events", "Event XML: a result-set dump, <event> elements or a ring_buffer document (as xe decode reads). Repeatable.").Required().StringsVar(&a.events)
		cmd.Flag("catalog", "Catalog JSON mapping pages, HoBTs, allocation units and objects to names.").StringVar(&a.catalog)
		cmd.Flag("statement", "Plan statement index to use; -1 takes the first with operators.").Default("-1").IntVar(&a.statement)
		cmd.Flag("json", "Write the trace as JSON.").BoolVar(&a.json)
		planLimitFlag(cmd, &a.maxPlan)
		c.register(cmd, func(ctx context.Context, e *env) error { return runTimeline(ctx, e, a) })
	})
}

func runTimeline(ctx context.Context, e *env, a *timelineArgs) error {
	plan, err := timelinePlan(a)
	if err != nil {
		return err
	}
	var cat *timeline.Catalog
	if a.catalog != "" {
		f, err := os.Open(a.catalog)
		if err != nil {
			return fmt.Errorf("catalog: %w", err)
		}
		file, err := catalogfile.Read(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", a.catalog, err)
		}
		cat = timeline.CatalogFromFile(file)
	}
	b, err := timeline.NewBuilder(plan, cat, nil, &timeline.Options{Statement: a.statement})
	if err != nil {
		return err
	}
	badRows := 0
	for _, name := range a.events {
		_, n, _, err := eachEvent(ctx, name, e, func(ev *xe.Event) error { b.Add(ev); return nil })
		badRows += n
		if err != nil {
			return fmt.Errorf("events: %w", err)
		}
	}
	tr, err := b.Build()
	if err != nil {
		return err
	}
	out := bufio.NewWriter(e.stdout)
	if a.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(tr); err != nil {
			return err
		}
	} else {
		writeTimelineSummary(out, tr)
	}
	if err := out.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	if badRows > 0 {
		return withStatus(1, fmt.Errorf("%d event row(s) could not be decoded and were left out", badRows))
	}
	return nil
}

// timelinePlan reads --plan, or finds the first showplan event in the event
// files when --plan is not given.
func timelinePlan(a *timelineArgs) (*showplan.Plan, error) {
	if a.plan != "" {
		return readPlanFile(a.plan, a.maxPlan)
	}
	var plan *showplan.Plan
	var parseErr error
	for _, name := range a.events {
		if name == "-" || name == "" {
			return nil, errors.New("--plan is required when events come from standard input")
		}
		_, _, _, err := eachEvent(context.Background(), name, nil, func(ev *xe.Event) error {
			if ev.Name != "query_post_execution_showplan" {
				return nil
			}
			sp, _ := xe.AsShowplan(ev, nil)
			plan, parseErr = showplan.ParseBytes([]byte(sp.ShowplanXML))
			return errStopEvents
		})
		if err != nil {
			return nil, fmt.Errorf("events: %w", err)
		}
		if plan != nil || parseErr != nil {
			break
		}
	}
	if parseErr != nil {
		return nil, fmt.Errorf("plan in query_post_execution_showplan: %w", parseErr)
	}
	if plan == nil {
		return nil, errors.New("no --plan given and no query_post_execution_showplan event in the events")
	}
	return plan, nil
}

func writeTimelineSummary(w io.Writer, tr *timeline.Trace) {
	s := tr.Summary
	fmt.Fprintf(w, "Trace: %d events, %.3f ms (ordered by %s", s.Events, ms(tr.End-tr.Start), s.Ordering)
	if s.Spread {
		fmt.Fprintf(w, ", coincident milliseconds spread in %d ms", s.SpreadBuckets)
	}
	fmt.Fprintf(w, "), %d lost", s.Lost)
	if s.Duplicates > 0 {
		fmt.Fprintf(w, ", %d duplicate dropped", s.Duplicates)
	}
	fmt.Fprintln(w)
	if tr.Statement != "" {
		fmt.Fprintf(w, "Statement: %s\n", oneLine(tr.Statement, 100))
	}
	writeGaps(w, s)
	lanes := make([]string, 0, len(s.Lanes))
	for k := range s.Lanes {
		lanes = append(lanes, k)
	}
	sort.Strings(lanes)
	for _, k := range lanes {
		fmt.Fprintf(w, "  %-7s %7d (%d unmatched", k, s.Lanes[k], s.Unmatched[k])
		if n := s.Ambiguous[k]; n > 0 {
			fmt.Fprintf(w, ", %d ambiguous", n)
		}
		fmt.Fprintln(w, ")")
	}
	writeOperatorTable(w, tr)
	for _, n := range s.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

// writeGaps lists where events were lost, the first ten gaps.
func writeGaps(w io.Writer, s timeline.Summary) {
	const shown = 10
	for i, g := range s.Gaps {
		if i == shown {
			fmt.Fprintf(w, "gap: … and %d more\n", len(s.Gaps)-shown)
			break
		}
		fmt.Fprintf(w, "gap: %d events lost between %.3f ms and %.3f ms (sequence %d to %d)\n", g.Missing, ms(g.Start), ms(g.End), g.After, g.Before)
	}
	if s.GapsTruncated {
		fmt.Fprintf(w, "gap: more than %d gaps; only the first are listed\n", timeline.MaxGaps)
	}
}

func writeOperatorTable(w io.Writer, tr *timeline.Trace) {
	s := tr.Summary
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nnode\toperator\tbehavior\tstart ms\tfirst emit ms\tend ms\truns\tpage reads (trace)\tlocks\twaits\tspills\tfrom")
	for i, op := range tr.Operators {
		os := s.Operators[i]
		waits := 0
		for _, n := range os.Waits {
			waits += n
		}
		runs := ""
		switch {
		case op.NotExecuted:
			runs = "not executed"
		case op.Executions > 1:
			runs = fmt.Sprintf("x%d", op.Executions)
		case len(op.Threads) > 1:
			runs = fmt.Sprintf("%d threads", len(op.Threads))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%.3f\t%.3f\t%.3f\t%s\t%d\t%d\t%d\t%d\t%s\n", op.ID, op.DisplayName(), op.Behavior,
			ms(op.Start), ms(op.FirstEmit), ms(op.End), runs, os.Reads, os.Locks, waits, os.Spills, op.TimeSource)
	}
	tw.Flush()
}

func ms(us int64) float64 { return float64(us) / 1000 }

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

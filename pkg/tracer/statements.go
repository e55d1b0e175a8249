package tracer

import (
	"fmt"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/timeline"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// seqSpan counts the events that carry an event_sequence and the range of
// their numbers, for the session's losses when the timeline is split by
// statement (each statement's events are a subsequence, whose own gaps are
// not losses).
type seqSpan struct {
	n, min, max uint64
}

func (s *seqSpan) add(seq uint64) {
	if s.n == 0 || seq < s.min {
		s.min = seq
	}
	if s.n == 0 || seq > s.max {
		s.max = seq
	}
	s.n++
}

// missing is how many numbers of the range no event carried (0 when
// duplicates make up for them: the count is a lower bound).
func (s *seqSpan) missing() uint64 {
	if s.n == 0 || s.max-s.min+1 <= s.n {
		return 0
	}
	return s.max - s.min + 1 - s.n
}

// buildTraces runs the second pass. Events that carry their statement's
// identity (tsql_stack) give the bundle its statement tree, each statement
// with its own plan and timeline (pkg/timeline/statements.go). b.Trace is
// the whole batch's timeline when the batch ran one plan — as before the
// tree existed — and the first planned statement's when it ran more, so
// that no event of one statement is ever matched to another's operators.
//
// names gives what name resolution found; it is called once the events
// went through the builders, which read names only when they build.
func buildTraces(b *bundle.Bundle, read eventsRead, col *collector, names func() timeline.Names, maps xe.MapResolver, opts timeline.Options) (*timeline.Trace, error) {
	set := col.stmts
	if set == nil {
		set = timeline.NewStatementSet()
	}
	split := set.WithPlans() > 1
	var whole *timeline.Builder
	if !split {
		plan := capturedPlan(b, col.planXML)
		var err error
		if read.built != nil {
			whole, err = read.built.whole, read.built.whole.SetPlan(plan)
		} else {
			whole, err = timeline.NewBuilder(plan, nil, maps, &opts)
		}
		if err != nil {
			return nil, fmt.Errorf("build timeline: %w", err)
		}
		if set.Plans() > 1 {
			// plans with no statement identity (a server that refused
			// tsql_stack): the tree cannot tell them apart
			b.Result.Warnings = append(b.Result.Warnings, fmt.Sprintf("the batch produced %d plans but its events carry no statement identity (tsql_stack); the timeline uses the first", set.Plans()))
		}
	}
	var sb *timeline.StatementBuilder
	switch {
	case set.Len() > 1 && read.built != nil:
		sb = read.built.sb // it gives each statement its plan when it builds
	case set.Len() > 1:
		var err error
		if sb, err = timeline.NewStatementBuilder(set, nil, maps, opts); err != nil {
			return nil, fmt.Errorf("build statement timelines: %w", err)
		}
	}
	if read.built == nil { // a live trace's builders took every event as it was read
		if err := secondPass(read, whole, sb); err != nil {
			return nil, fmt.Errorf("build timeline: %w", err)
		}
	}
	n := names()
	if whole != nil {
		whole.SetNames(n)
	}
	if sb != nil {
		sb.SetNames(n)
	}
	if sb != nil {
		var err error
		if b.Statements, err = sb.Build(); err != nil {
			return nil, fmt.Errorf("build statement timelines: %w", err)
		}
		if set.Full() {
			b.Result.Warnings = append(b.Result.Warnings, fmt.Sprintf("the batch ran more than %d statements; the later ones' events stay on the batch", timeline.MaxStatements))
		}
	}
	if whole != nil {
		tr, err := whole.Build()
		if err != nil {
			return nil, fmt.Errorf("build timeline: %w", err)
		}
		return tr, nil
	}
	return primaryStatement(b, col), nil
}

// secondPass runs every event through the whole batch's builder and the
// statements' (either may be nil).
func secondPass(read eventsRead, whole *timeline.Builder, sb *timeline.StatementBuilder) error {
	return read.second(func(ev *xe.Event) {
		if whole != nil {
			whole.Add(ev)
		}
		if sb != nil {
			sb.Add(ev)
		}
	})
}

// primaryStatement makes the first statement with a plan the bundle's
// Trace and Plan, with the session's losses counted over all events.
func primaryStatement(b *bundle.Bundle, col *collector) *timeline.Trace {
	for i := range b.Statements {
		st := &b.Statements[i]
		if st.Plan == "" || st.Trace == nil {
			continue
		}
		capturedPlan(b, st.Plan)
		tr := *st.Trace
		tr.Summary.Lost = col.seqs.missing()
		return &tr
	}
	return b.Statements[0].Trace
}

// timelinesOf lists the bundle's trace and every statement's timeline.
func timelinesOf(tr *timeline.Trace, st []timeline.Statement) []*timeline.Trace {
	all := []*timeline.Trace{tr}
	for i := range st {
		if st[i].Trace != nil && st[i].Trace != tr {
			all = append(all, st[i].Trace)
		}
	}
	return all
}

// forResolution is one timeline holding what the name resolution reads
// from all of them: their stacks, each once (the bundle's trace may be a
// copy of a statement's, sharing its stacks), whose frames are the
// originals' (a Stack's Frames slice is shared, so resolving them here
// resolves them there), and their page reads and writes (readPageHeaders
// takes each page once, by its ids: the entries' Object handles name
// nothing here, each timeline having its own object table).
func forResolution(all []*timeline.Trace) *timeline.Trace {
	m := &timeline.Trace{}
	seen := map[*timeline.StackFrame]bool{}
	for _, t := range all {
		if t == nil {
			continue
		}
		for _, s := range t.Stacks {
			if len(s.Frames) > 0 {
				if seen[&s.Frames[0]] {
					continue
				}
				seen[&s.Frames[0]] = true
			}
			m.Stacks = append(m.Stacks, s)
		}
		m.Lanes.Read = append(m.Lanes.Read, t.Lanes.Read...)
		m.Lanes.Write = append(m.Lanes.Write, t.Lanes.Write...)
	}
	return m
}

// sharePages gives each timeline the headers (in headers' order) of the
// pages it read or wrote.
func sharePages(all []*timeline.Trace, headers []timeline.PageHeader) {
	if len(headers) == 0 {
		return
	}
	for _, t := range all {
		if t == nil {
			continue
		}
		// a page is its database's (an event with no database id is
		// the traced database's, as readPageHeaders takes it)
		touched := map[[3]uint64]bool{}
		for _, e := range t.Lanes.Read {
			touched[[3]uint64{e.DatabaseID, e.FileID, e.PageID}] = true
		}
		for _, e := range t.Lanes.Write {
			touched[[3]uint64{e.DatabaseID, e.FileID, e.PageID}] = true
		}
		t.Pages = nil
		for _, h := range headers {
			if touched[[3]uint64{h.DatabaseID, h.FileID, h.PageID}] || touched[[3]uint64{0, h.FileID, h.PageID}] {
				t.Pages = append(t.Pages, h)
			}
		}
	}
}

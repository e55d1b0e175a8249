package timeline

import (
	"slices"

	"github.com/queryreplay/queryreplay/pkg/showplan"
)

// threadBars gives a parallel operator one bar per thread, anchored at
// the operator's start (a parallel branch's threads start together) and
// lasting the thread's active time — its query_thread_profile
// total_time_us, else its ActualElapsedms — ending no later than its
// window's end (the thread was closed by then) or the operator's end. A
// thread with no active time lasts until its window's end, else the
// operator's. Rows come from the thread's runtime counters, so skew
// shows. Serial operators get none.
func (p *planner) threadBars(op *showplan.Operator, info *opInfo, t *opTimes) []ThreadBar {
	ids := threadIDs(op)
	for _, w := range info.windows {
		if !slices.Contains(ids, w.thread) {
			ids = append(ids, w.thread)
		}
	}
	if len(ids) < 2 {
		return nil
	}
	slices.Sort(ids)
	bars := make([]ThreadBar, 0, len(ids))
	for _, id := range ids {
		bar := ThreadBar{Thread: id, Start: t.start, End: t.end, Source: "plan"}
		var active int64
		for _, c := range op.Threads {
			if c.Thread != id {
				continue
			}
			bar.Rows, bar.Executions = c.Rows, c.Executions
			if c.HasTiming {
				active = c.ElapsedMs * 1000
			}
		}
		var total int64
		windowed := false
		for _, w := range info.windows {
			if w.thread == id {
				total += w.end - w.start
				if !windowed || w.end > bar.End {
					bar.End = min(t.end, w.end)
				}
				windowed = true
			}
		}
		if windowed {
			bar.Source = "thread_profile"
			active = max(active, total)
		}
		if active > 0 {
			bar.End = min(bar.End, t.start+active)
		}
		bar.Start, bar.End = t.start, clamp(bar.End, t.start, t.end)
		bars = append(bars, bar)
	}
	return bars
}

// threadIDs lists the threads of the operator's runtime counters, sorted.
func threadIDs(op *showplan.Operator) []int {
	ids := make([]int, 0, len(op.Threads))
	for _, c := range op.Threads {
		if !slices.Contains(ids, c.Thread) {
			ids = append(ids, c.Thread)
		}
	}
	slices.Sort(ids)
	return ids
}

// windowOf merges the operator's windows of the threads keep accepts.
func windowOf(info *opInfo, keep func(int) bool) (start, end int64, ok bool) {
	for _, w := range info.windows {
		if !keep(w.thread) {
			continue
		}
		if !ok {
			start, end, ok = w.start, w.end, true
			continue
		}
		start, end = min(start, w.start), max(end, w.end)
	}
	return start, end, ok
}

// exchange shows a Parallelism operator's two sides. Its own runtime
// counters are the consumer threads (the branch above pulls rows out); the
// producers are the threads of the branch below, read from the first
// operator under it that has counters. Thread 0 of a parallel branch is its
// coordinator, which moves no rows (docs/design/tracing.md §7.2), so it is left out
// of a side that has others. Thread ids restart in every branch: when the
// two sides share ids (Repartition Streams, Distribute Streams) the
// exchange's query_thread_profile windows cannot be told apart, and both
// sides take their times from the plan (the producing child's span, the
// exchange's span). So do they when the windows were all taken at the end
// of the query: they give no positions then.
func (p *planner) exchange(op *showplan.Operator, info *opInfo, t *opTimes) *Exchange {
	ex := &Exchange{
		Consumer: ExchangeSide{Threads: workers(threadIDs(op)), Start: t.start, End: t.end, Source: "derived"},
		Producer: ExchangeSide{Threads: []int{}, Start: t.start, End: t.end, Source: "derived"},
	}
	for _, c := range op.Threads {
		ex.Consumer.Rows += c.Rows
	}
	if inputs := op.Inputs(); len(inputs) > 0 {
		child := inputs[0]
		if ct := p.times[child]; ct != nil && !ct.notExecuted {
			ex.Producer.Start, ex.Producer.End = ct.start, ct.end
		}
		producer := child
		for len(producer.Threads) == 0 && len(producer.Inputs()) == 1 {
			producer = producer.Inputs()[0]
		}
		ex.Producer.Threads = workers(threadIDs(producer))
		for _, c := range producer.Threads {
			ex.Producer.Rows += c.Rows
		}
	}
	for _, id := range ex.Producer.Threads {
		if slices.Contains(ex.Consumer.Threads, id) || p.atEnd {
			return ex
		}
	}
	side := func(s *ExchangeSide) {
		if st, e, ok := windowOf(info, func(th int) bool { return slices.Contains(s.Threads, th) }); ok {
			s.Start, s.End, s.Source = clamp(st, t.start, t.end), clamp(e, t.start, t.end), "thread_profile"
		}
	}
	side(&ex.Producer)
	side(&ex.Consumer)
	return ex
}

// workers drops the coordinator (thread 0) from a list that has others.
func workers(ids []int) []int {
	if len(ids) > 1 {
		return slices.DeleteFunc(ids, func(id int) bool { return id == 0 })
	}
	return ids
}

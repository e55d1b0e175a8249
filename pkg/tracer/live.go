package tracer

import "time"

// Live tracing: while the traced batch runs, the tracer reads the session's
// target incrementally from the control connection and polls the batch's
// per-operator progress, and hands both to Options.Live: the events about
// four times a second, the operators' progress about once a second.
// The contract below is shared by the tracer (producer), the plugin's
// stream, the viewer's event stream and `queryreplay trace --live`
// (consumers); the finished replay is still the *bundle.Bundle Trace returns.

// LiveUpdate is one report of a live trace. Updates are sent in order, from
// one goroutine, while the batch runs — after each read of the events
// (about every quarter second), and each second the operators' progress as
// soon as it is read, before the events read after it — and once more
// (Running false) when the batch has ended, before Trace returns.
type LiveUpdate struct {
	// Seq numbers the updates of one trace: 1, 2, …
	Seq int
	// Elapsed is the time since the batch was sent.
	Elapsed time.Duration
	// Running is false on the last update.
	Running bool
	// PlanXML is the running statement's showplan XML, sent once, on the
	// first update after the tracer could read it ("" on the others).
	PlanXML string
	// Operators is every operator's progress so far (the whole list each
	// time, threads summed), in node order.
	Operators []OperatorProgress
	// Events are the events read back since the previous update, oldest
	// first, at most MaxLiveEvents of them; EventsDropped counts those left
	// out of this update (they are all in the finished bundle).
	Events        []LiveEvent
	EventsDropped int64
	// EventsSoFar counts every event read back so far.
	EventsSoFar int64
}

// MaxLiveEvents bounds the events of one LiveUpdate: a live view never
// receives every event of a million-event trace in one update. It is one
// capped read's worth (liveReadRows), so an update made while the batch
// runs drops none; the last one, which carries the tail, may.
const MaxLiveEvents = 20000

// OperatorProgress is one plan operator's progress while the batch runs, as
// sys.dm_exec_query_profiles reports it (threads summed).
type OperatorProgress struct {
	NodeID             int
	PhysicalOp         string // e.g. "Clustered Index Scan", "Key Lookup"
	Object             string // schema.table.index, "" for operators without one
	State              string // "waiting" (not opened), "running", "done" (closed)
	Rows, EstimateRows int64
	LogicalReads       int64
	PhysicalReads      int64
	ReadAheadReads     int64
	ElapsedMs, CPUMs   int64
	Threads            int
}

// LiveEvent is one event as a live view needs it, before the plan that ties
// events to operators is known.
type LiveEvent struct {
	TUs        int64  // µs since the batch started
	Lane       string // the frames' lane name: read, write, lock, wait, memory, split, log, io
	Name       string // the Extended Events event name
	DurationUs int64  // 0 for point events
	Object     string // schema.table(.index) where known
	Detail     string // page id, lock mode and resource, or wait type
}

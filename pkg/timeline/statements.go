package timeline

import (
	"fmt"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// Statements of a batch: every statement the batch ran — its own
// statements and those of the procedures it called, at any nesting — gets
// its own node, plan and timeline. An event is tied to its statement by
// its identity, never by its position in the stream:
//
//   - the sqlserver.tsql_stack action, on every event of the session: the
//     innermost frame's sql_handle and statement offsets (bytes of the
//     UTF-16 text) name the statement the event fired in, the next frame
//     the statement that called it (an EXEC). The offsets are those of
//     sys.dm_exec_requests / sys.dm_exec_query_stats
//     (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-sql-text-transact-sql);
//   - the offset, offset_end, nest_level, object_id and object_name fields
//     of sql_statement_starting/completed and sp_statement_starting/completed
//     (https://learn.microsoft.com/en-us/sql/relational-databases/extended-events/quick-start-extended-events-in-sql-server),
//     which give each node its text, module and nesting;
//   - query_post_execution_showplan, which fires once per statement
//     executed with its own actual plan, object_id and nest_level
//     (https://learn.microsoft.com/en-us/sql/relational-databases/performance/display-an-actual-execution-plan),
//     and whose own tsql_stack names the statement the plan belongs to.
//
// Events with no statement identity (the batch's own events, those the
// server fired between statements) go to the root node: they are shown as
// between statements, on no operator.

// StatementKey identifies one statement: the sql_handle of its batch or
// module and the byte offset where the statement starts there. The start
// alone tells statements of one text apart; the end offset is kept on the
// node but is not part of the key, because a statement running to the end
// of its text may print it as -1.
type StatementKey struct {
	Handle string
	Start  int64
}

// MaxStatements bounds the statement tree of one trace; statements past it
// keep their events on the root node, and Summary notes say so.
const MaxStatements = 4096

// Statement is one node of the statement tree. ID 0 is the batch itself
// (Kind "batch"), whose trace holds the events between statements.
type Statement struct {
	ID int `json:"id"`
	// Parent is the node of the statement that ran this one (the batch, or
	// the EXEC that called the procedure); -1 for the batch.
	Parent      int    `json:"parent"`
	Kind        string `json:"kind"`
	Text        string `json:"text,omitempty"`
	ObjectName  string `json:"objectName,omitempty"`
	ObjectID    int64  `json:"objectId,omitempty"`
	NestLevel   int    `json:"nestLevel"`
	Line        int64  `json:"line,omitempty"`
	Handle      string `json:"handle,omitempty"`
	OffsetStart int64  `json:"offsetStart"`
	OffsetEnd   int64  `json:"offsetEnd"`
	// StartUs and EndUs are µs from the batch's start (sql_batch_starting),
	// from the statement's starting and completed events.
	StartUs int64 `json:"start"`
	EndUs   int64 `json:"end"`
	// ElapsedUs, CPUUs, Rows and the reads are the completed event's fields,
	// summed over the statement's executions.
	ElapsedUs     uint64 `json:"elapsedUs"`
	CPUUs         uint64 `json:"cpuUs"`
	Rows          uint64 `json:"rows"`
	LogicalReads  uint64 `json:"logicalReads"`
	PhysicalReads uint64 `json:"physicalReads"`
	Writes        uint64 `json:"writes"`
	Executions    int    `json:"executions"`
	// WaitUs sums the durations of the waits that ended on this statement;
	// Events counts the events tied to it.
	WaitUs uint64 `json:"waitUs"`
	Events int    `json:"events"`
	// Plan is the statement's actual plan XML (the first execution's).
	Plan  string `json:"plan,omitempty"`
	Trace *Trace `json:"trace,omitempty"`
}

// StatementSet is the statement tree read from a first pass over the
// events (Observe each); a StatementBuilder then builds each node's
// timeline from a second pass.
type StatementSet struct {
	nodes  []Statement
	byKey  map[StatementKey]int
	zeroNs int64
	zero   bool
	plans  int
	full   bool
	stacks stackCache
}

// NewStatementSet starts a tree holding only the batch.
func NewStatementSet() *StatementSet {
	return &StatementSet{nodes: []Statement{{ID: 0, Parent: -1, Kind: "batch"}}, byKey: map[StatementKey]int{}}
}

// Observe reads one event of the first pass.
func (s *StatementSet) Observe(ev *xe.Event, maps xe.MapResolver) {
	switch ev.Name {
	case "sql_batch_starting":
		if !s.zero {
			s.zeroNs, s.zero = ev.Timestamp.Time.UnixNano(), true
		}
		if v, ok := ev.Data("batch_text"); ok && s.nodes[0].Text == "" {
			s.nodes[0].Text = strings.Clone(v.Raw)
		}
	case "sql_statement_starting", "sp_statement_starting":
		if id, ok := s.nodeOf(ev, true); ok {
			n := &s.nodes[id]
			if n.Executions == 0 && n.EndUs == 0 {
				n.StartUs = s.since(ev)
			}
		}
	case "sql_statement_completed", "sp_statement_completed":
		if id, ok := s.nodeOf(ev, true); ok {
			s.complete(&s.nodes[id], ev)
		}
	case "query_post_execution_showplan":
		sp, ok := xe.AsShowplan(ev, maps)
		if !ok || sp.ShowplanXML == "" {
			return
		}
		s.plans++
		if id, ok := s.nodeOf(ev, true); ok && id != 0 {
			n := &s.nodes[id]
			if n.Plan == "" {
				n.Plan = strings.Clone(sp.ShowplanXML)
			}
			if n.ObjectID == 0 && sp.ObjectID != 0 {
				n.ObjectID, n.ObjectName = sp.ObjectID, strings.Clone(sp.ObjectName)
			}
		}
	}
}

// Plans counts the plans observed (with or without a statement identity).
func (s *StatementSet) Plans() int { return s.plans }

// WithPlans counts the nodes that have a plan of their own.
func (s *StatementSet) WithPlans() int {
	n := 0
	for i := range s.nodes {
		if s.nodes[i].Plan != "" {
			n++
		}
	}
	return n
}

// Len is the number of nodes, the batch included.
func (s *StatementSet) Len() int { return len(s.nodes) }

// Full tells whether statements past MaxStatements were left on the root.
func (s *StatementSet) Full() bool { return s.full }

// Nodes returns a copy of the tree's nodes (no traces yet).
func (s *StatementSet) Nodes() []Statement {
	out := make([]Statement, len(s.nodes))
	copy(out, s.nodes)
	return out
}

func (s *StatementSet) since(ev *xe.Event) int64 {
	if !s.zero {
		return 0
	}
	return (ev.Timestamp.Time.UnixNano() - s.zeroNs) / 1000
}

// complete adds a completed event's counters to n.
func (s *StatementSet) complete(n *Statement, ev *xe.Event) {
	c, _ := xe.AsStatementCompleted(ev)
	n.Executions++
	n.ElapsedUs += c.DurationUs
	n.CPUUs += c.CPUTimeUs
	n.Rows += c.RowCount
	n.LogicalReads += c.LogicalReads
	n.PhysicalReads += c.PhysicalReads
	n.Writes += c.Writes
	n.EndUs = s.since(ev)
}

// statementKeyOf reads an event's statement identity: its innermost
// tsql_stack frame, with the statement events' own offset fields when they
// carry them; end is the statement's end offset. parent is the calling frame's key (hasParent false at the
// outermost level); depth is the number of frames.
func statementKeyOf(ev *xe.Event, c *stackCache) (key StatementKey, end int64, parent StatementKey, hasParent bool, depth int, ok bool) {
	frames, ok := c.frames(ev)
	if !ok {
		return key, 0, parent, false, 0, false
	}
	f := frames[0]
	key = StatementKey{Handle: f.Handle, Start: f.OffsetStart}
	end = f.OffsetEnd
	if strings.Contains(ev.Name, "_statement_") {
		if v, ok := ev.Data("offset"); ok {
			key.Start, _ = v.Int()
		}
		if v, ok := ev.Data("offset_end"); ok {
			end, _ = v.Int()
		}
	}
	if len(frames) > 1 {
		p := frames[1]
		parent, hasParent = StatementKey{Handle: p.Handle, Start: p.OffsetStart}, true
	}
	return key, end, parent, hasParent, len(frames), true
}

// stackCache keeps the last tsql_stack parsed: a statement's events come in
// runs with the same stack, and parsing it for each of them was a quarter
// of routing a 100k-event live trace's kept events (issue 29).
type stackCache struct {
	raw    string
	parsed []xe.TSQLFrame
	ok     bool
	valid  bool
}

func (c *stackCache) frames(ev *xe.Event) ([]xe.TSQLFrame, bool) {
	v, ok := ev.Action("tsql_stack")
	if !ok {
		return nil, false
	}
	if !c.valid || c.raw != v.Raw {
		// the decoder may reuse the bytes behind v.Raw for the next event
		c.raw, c.valid = strings.Clone(v.Raw), true
		c.parsed, c.ok = xe.ParseTSQLStack(c.raw)
	}
	return c.parsed, c.ok
}

// nodeOf returns the node of ev's statement, creating it (when create)
// from the event's fields. ok is false for an event with no identity.
func (s *StatementSet) nodeOf(ev *xe.Event, create bool) (int, bool) {
	key, end, parent, hasParent, depth, ok := statementKeyOf(ev, &s.stacks)
	if !ok {
		return 0, false
	}
	if id, ok := s.byKey[key]; ok {
		return id, true
	}
	if !create {
		return 0, false
	}
	if len(s.nodes) >= MaxStatements {
		s.full = true
		return 0, true
	}
	n := Statement{ID: len(s.nodes), Kind: "statement", Handle: strings.Clone(key.Handle), OffsetStart: key.Start, OffsetEnd: end, NestLevel: depth - 1}
	if hasParent {
		if p, ok := s.byKey[parent]; ok {
			n.Parent = p
		}
	}
	s.describe(&n, ev)
	s.nodes = append(s.nodes, n)
	// the event may be a reused view (xe.Decoder.ReuseEvents): the map
	// keeps its own copy of the handle
	s.byKey[StatementKey{Handle: n.Handle, Start: key.Start}] = n.ID
	return n.ID, true
}

// describe fills a new node from the fields of the event that created it.
func (s *StatementSet) describe(n *Statement, ev *xe.Event) {
	if v, ok := ev.Data("statement"); ok {
		n.Text = strings.Clone(v.Raw)
	}
	if v, ok := ev.Data("object_name"); ok {
		n.ObjectName = strings.Clone(v.Raw)
	}
	if v, ok := ev.Data("object_id"); ok {
		n.ObjectID, _ = v.Int()
	}
	if v, ok := ev.Data("nest_level"); ok {
		if l, ok := v.Int(); ok {
			n.NestLevel = int(l)
		}
	}
	if v, ok := ev.Data("line_number"); ok {
		n.Line, _ = v.Int()
	}
}

// StatementBuilder builds one timeline per statement from the second pass:
// each event goes to its own statement's Builder, with that statement's
// plan, so an event of one statement can never match another's operator.
//
// It may also run beside the first pass, each event observed by the set
// just before it is added (a live trace, issue 29): a statement the set
// finds later gets its Builder then, and each Builder takes its
// statement's plan when it builds (plans come last).
type StatementBuilder struct {
	set      *StatementSet
	builders []*Builder
	plans    []string // the plan XML each builder was given
	events   []int    // events routed to each node
	batch    []xe.Event
	maps     xe.MapResolver
	opts     Options
	names    *Names
	stacks   stackCache
}

// NewStatementBuilder starts a Builder per node of set; opts apply to each
// (Statement is ignored: each node's plan has its own statement).
func NewStatementBuilder(set *StatementSet, catalog *Catalog, maps xe.MapResolver, opts Options) (*StatementBuilder, error) {
	opts.Statement = -1
	opts.ExpectedEvents = 0
	sb := &StatementBuilder{set: set, maps: maps, opts: opts}
	if catalog != nil {
		sb.names = &Names{Catalog: catalog, LockRows: opts.LockRows, Stacks: opts.Stacks}
	}
	sb.grow(len(set.nodes) - 1)
	for i := range sb.builders {
		if err := sb.givePlan(i); err != nil {
			return nil, err
		}
	}
	return sb, nil
}

// grow gives every node up to id a Builder, without a plan yet (givePlan),
// and the batch's events seen so far.
func (sb *StatementBuilder) grow(id int) {
	for i := len(sb.builders); i <= id && i < len(sb.set.nodes); i++ {
		o := sb.opts
		b, _ := NewBuilder(nil, nil, sb.maps, &o) // without a plan it cannot fail
		if sb.names != nil {
			b.SetNames(*sb.names)
		}
		for k := range sb.batch {
			b.Add(&sb.batch[k])
		}
		sb.builders, sb.plans, sb.events = append(sb.builders, b), append(sb.plans, ""), append(sb.events, 0)
	}
}

// givePlan gives node i's Builder the node's plan when it changed.
func (sb *StatementBuilder) givePlan(i int) error {
	x := sb.set.nodes[i].Plan
	if x == sb.plans[i] {
		return nil
	}
	var plan *showplan.Plan
	if x != "" {
		p, err := showplan.ParseBytes([]byte(x))
		if err != nil {
			return fmt.Errorf("statement %d: plan: %w", i, err)
		}
		plan = p
	}
	if err := sb.builders[i].SetPlan(plan); err != nil {
		return fmt.Errorf("statement %d: %w", i, err)
	}
	sb.plans[i] = x
	return nil
}

// SetNames gives every statement's Builder the names (Builder.SetNames).
func (sb *StatementBuilder) SetNames(n Names) {
	sb.names = &n
	for _, b := range sb.builders {
		b.SetNames(n)
	}
}

// Add routes one event to its statement's Builder. The batch's own
// sql_batch_starting and sql_batch_completed go to every Builder, so that
// all timelines share the batch's time zero and extent (Summary.ElapsedUs
// is the batch's; a statement's own elapsed is its node's ElapsedUs) and
// statement boundaries line up; anything without a known statement
// identity stays on the batch (node 0).
func (sb *StatementBuilder) Add(ev *xe.Event) {
	if ev.Name == "sql_batch_starting" || ev.Name == "sql_batch_completed" {
		sb.batch = append(sb.batch, ev.Clone()) // for the Builders made later
		for _, b := range sb.builders {
			b.Add(ev)
		}
		return
	}
	id := 0
	if key, _, _, _, _, ok := statementKeyOf(ev, &sb.stacks); ok {
		if n, ok := sb.set.byKey[key]; ok {
			id = n
		}
	}
	sb.grow(id)
	sb.events[id]++
	sb.builders[id].Add(ev)
}

// Build builds every node's timeline. Lost events are the session's, not a
// statement's: a statement's events are a subsequence of the session's, so
// its own sequence gaps are not losses and are cleared here (the caller
// counts losses over the whole stream).
func (sb *StatementBuilder) Build() ([]Statement, error) {
	sb.grow(len(sb.set.nodes) - 1)
	nodes := sb.set.Nodes()
	for i, b := range sb.builders {
		if err := sb.givePlan(i); err != nil {
			return nil, err
		}
		nodes[i].Events = sb.events[i]
		tr, err := b.Build()
		if err != nil {
			return nil, fmt.Errorf("statement %d: %w", i, err)
		}
		tr.Summary.Lost, tr.Summary.Gaps, tr.Summary.GapsTruncated = 0, nil, false
		if i == 0 {
			tr.Statement = ""
		}
		nodes[i].Trace = tr
		// the waits as the timeline measured them (begin to end when both
		// were captured; wait_info's own duration is whole milliseconds)
		for _, w := range tr.Lanes.Wait {
			nodes[i].WaitUs += w.DurationUs
		}
	}
	if sb.set.full {
		root := nodes[0].Trace
		root.Summary.Notes = append(root.Summary.Notes, fmt.Sprintf("more than %d statements: the later ones' events stay on the batch", MaxStatements))
	}
	return nodes, nil
}

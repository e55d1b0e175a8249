package findings

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// Severity grades how much a finding matters.
type Severity string

const (
	SeverityInfo     Severity = "info"
	SeverityWarning  Severity = "warning"
	SeverityCritical Severity = "critical"
)

func (s Severity) rank() int {
	switch s {
	case SeverityCritical:
		return 2
	case SeverityWarning:
		return 1
	}
	return 0
}

// Confidence grades how sure a finding is, given the evidence behind it.
type Confidence string

const (
	ConfidenceHigh   Confidence = "high"
	ConfidenceMedium Confidence = "medium"
	ConfidenceLow    Confidence = "low"
)

func (c Confidence) rank() int {
	switch c {
	case ConfidenceLow:
		return 0
	case ConfidenceMedium:
		return 1
	}
	return 2
}

// lower returns the lower of two confidences.
func (c Confidence) lower(d Confidence) Confidence {
	if d.rank() < c.rank() {
		return d
	}
	return c
}

// Lane names, as the trace JSON and the frames name them.
const (
	LaneRead   = "read"
	LaneWrite  = "write"
	LaneLock   = "lock"
	LaneWait   = "wait"
	LaneMemory = "memory"
	LaneSplit  = "split"
	LaneLog    = "log"
	LaneIO     = "io"
	// LaneEscalation is the lock_escalation events (the frames send them
	// as the escalations frame).
	LaneEscalation = "escalation"
)

// EventRef points at one lane entry of the trace: Trace.Lanes.<Lane>[Index].
// ID is "<lane>/<index>", stable for a given trace JSON. T and End are its
// times in µs from time zero (equal for point events), so a viewer can jump
// there even when it shows the lane binned.
type EventRef struct {
	ID     string `json:"id"`
	Lane   string `json:"lane"`
	Index  int    `json:"index"`
	T      int64  `json:"t"`
	End    int64  `json:"end"`
	NodeID *int   `json:"nodeId"`
}

// OperatorRef names a plan operator.
type OperatorRef struct {
	NodeID int `json:"nodeId"`
	// Name is what a DBA reads ("Key Lookup", "Clustered Index Scan").
	Name   string `json:"name"`
	Object string `json:"object,omitempty"`
}

func (o OperatorRef) String() string {
	if o.Object != "" {
		return fmt.Sprintf("%s (%s)", o.Name, o.Object)
	}
	return o.Name
}

// Number is one measured figure of a finding.
type Number struct {
	// Name is a stable camel-case key ("reads", "grantedKB").
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	// Unit is one of: pages, rows, KB, bytes, us, percent, count, ratio.
	Unit string `json:"unit"`
	// Source says where it came from: "events" (the trace), "plan" (the
	// actual plan's runtime counters) or "run" (the tracer's own record).
	Source string `json:"source"`
}

// Finding is one thing the trace says went wrong (or is worth knowing).
type Finding struct {
	// Rule is the rule's stable id ("reads-concentrated").
	Rule     string   `json:"rule"`
	Title    string   `json:"title"`
	Severity Severity `json:"severity"`
	// Confidence and ConfidenceReasons: see the package doc.
	Confidence        Confidence    `json:"confidence"`
	ConfidenceReasons []string      `json:"confidenceReasons,omitempty"`
	Operators         []OperatorRef `json:"operators,omitempty"`
	// Evidence lists at most Config.MaxEvidence lane entries, in time
	// order; EvidenceTotal counts all of them.
	Evidence      []EventRef `json:"evidence,omitempty"`
	EvidenceTotal int        `json:"evidenceTotal"`
	// Start and End span the evidence in µs (both 0 when there is none).
	Start   int64    `json:"start"`
	End     int64    `json:"end"`
	Numbers []Number `json:"numbers"`
	// Detail adds a sentence the title has no room for (may be empty).
	Detail    string `json:"detail,omitempty"`
	Hint      string `json:"hint"`
	Reference string `json:"reference"`
	// Holders are the sampled sessions the blocking rule matched to the
	// finding's lock waits (empty for other rules, and when none was).
	Holders []bundle.BlockingSample `json:"holders,omitempty"`

	// pending is the evidence as lane indices, made into EventRefs (at most
	// MaxEvidence) when the finding is finished: a rule may name a million
	// reads.
	pending []laneIndices
	// lower are confidence limits the rule itself found.
	lower []confReason
}

// confReason caps a finding's confidence, and says why.
type confReason struct {
	to  Confidence
	why string
}

// laneIndices are entries of one lane, by index in time order.
type laneIndices struct {
	lane string
	idx  []int
}

// ev names evidence: entries idx of lane.
func ev(lane string, idx []int) []laneIndices {
	if len(idx) == 0 {
		return nil
	}
	return []laneIndices{{lane, idx}}
}

// Number returns the value of the named number and whether it is there.
func (f *Finding) Number(name string) (float64, bool) {
	for _, n := range f.Numbers {
		if n.Name == name {
			return n.Value, true
		}
	}
	return 0, false
}

// Report is the result of Analyze.
type Report struct {
	// Findings are ordered by severity (critical first), then by rule order
	// (Rules), then by their first operator.
	Findings []Finding `json:"findings"`
	// Notes say what the analysis could not look at (no plan, no lock
	// events traced, …).
	Notes []string `json:"notes,omitempty"`
	// Config is the thresholds the rules used.
	Config Config `json:"config"`
}

// Input is what Analyze reads. Trace is required; Plan and Run add what the
// timeline does not keep.
type Input struct {
	Trace *timeline.Trace
	// Plan is the traced statement's actual plan (runtime counters, memory
	// grant, warnings); nil when none was captured. PlanStatement picks it
	// out of a parsed plan document.
	Plan *showplan.Statement
	Run  Run
	// Server is the server's version and the database's compatibility
	// level, when known (ServerOf).
	Server Server
	// Statements counts the plan's statements with an operator tree
	// (StatementsWithPlans). Above 1, the events carry no statement
	// identity, so an event's node id may belong to another statement's
	// plan: operator-bound findings say so and are at most medium.
	Statements int
}

// StatementsWithPlans counts plan's statements that have operators.
func StatementsWithPlans(plan *showplan.Plan) int {
	n := 0
	if plan != nil {
		for _, s := range plan.Statements {
			if s.Root != nil {
				n++
			}
		}
	}
	return n
}

// Run is what the tracer recorded about the run besides the timeline.
type Run struct {
	// ClearBufferPool and DisableReadAhead are the trace's options.
	ClearBufferPool  bool
	DisableReadAhead bool
	// Modification: the batch modified data (in a transaction that was
	// rolled back when RolledBack is set).
	Modification bool
	RolledBack   bool
	// Truncated: the read-back stopped at the event cap.
	Truncated bool
	// BatchText is the traced batch; read (never logged) for the
	// statement's own query hints when the plan has no statement text.
	BatchText string
	// Lost is the tracer's count of events the server dropped (sequence
	// gaps including a lost head) and DroppedEvents sys.dm_xe_sessions'
	// dropped count; either may exceed the timeline's Summary.Lost.
	Lost          uint64
	DroppedEvents int64
	// LogRecords are the fn_dblog rows the modification wrote.
	LogRecords []LogRecord
	// Events groups that were traced; a nil Traced means all of them.
	Traced *Traced
	// Holders are lock holders the caller learned of (for example from a
	// blocked process report); the trace itself only sees its own session.
	Holders []LockHolder
	// Blockers are the sessions the tracer saw blocking the traced request
	// while the batch ran (sys.dm_exec_requests, sampled); the blocking
	// rule matches them to the lock waits (rules_blockers.go).
	Blockers []bundle.BlockingSample
}

// Traced says which optional event groups the trace captured.
type Traced struct {
	Locks, Waits, Memory, Splits, Log, FileIO bool
}

// LogRecord is one fn_dblog row, as far as the rules need it.
type LogRecord struct {
	Operation string
	Context   string
}

// LockHolder is a session holding a lock another one waited for.
type LockHolder struct {
	// Resource is matched against the waited lock's LockInterval.Resource
	// ("db:hobt:r0:r1:r2" as the event gave it) or, when empty, Object.
	Resource string
	Object   string
	// SessionID of the holder, its lock mode and what it was running.
	SessionID int
	Mode      string
	Statement string
}

// PlanStatement returns the statement of plan the trace's operators came
// from: the one whose operators have the trace's node ids and physical
// operators, else the first statement with operators (the timeline's own
// default). It returns nil when plan is nil or has no operators.
func PlanStatement(plan *showplan.Plan, tr *timeline.Trace) *showplan.Statement {
	if plan == nil {
		return nil
	}
	var first *showplan.Statement
	for _, s := range plan.Statements {
		if s.Root == nil {
			continue
		}
		if first == nil {
			first = s
		}
		if tr != nil && sameOperators(s, tr) {
			return s
		}
	}
	return first
}

func sameOperators(s *showplan.Statement, tr *timeline.Trace) bool {
	if len(s.Operators) != len(tr.Operators) || len(tr.Operators) == 0 {
		return false
	}
	for _, op := range tr.Operators {
		p := s.OperatorByID(op.ID)
		if p == nil || p.PhysicalOp != op.PhysicalOp {
			return false
		}
	}
	return true
}

// Analyze applies every rule to in with the thresholds of cfg (validated
// first: an invalid Config is an error naming the field).
func Analyze(in Input, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if in.Trace == nil {
		return nil, fmt.Errorf("findings: no timeline to analyze")
	}
	p := NewProfile(in.Trace, in.Plan)
	a := &analysis{in: in, cfg: cfg, p: p, out: []Finding{}}
	a.notes()
	for _, r := range rules {
		for _, f := range r.run(a) {
			f.Rule = r.id
			a.finish(&f)
			a.out = append(a.out, f)
		}
	}
	sortFindings(a.out)
	return &Report{Findings: a.out, Notes: a.noteList, Config: cfg}, nil
}

// analysis is one Analyze call's state.
type analysis struct {
	in       Input
	cfg      Config
	p        *Profile
	out      []Finding
	noteList []string
}

func (a *analysis) note(format string, args ...any) {
	a.noteList = append(a.noteList, fmt.Sprintf(format, args...))
}

func (a *analysis) notes() {
	if a.in.Plan == nil {
		a.note("no actual plan: logical reads, rows per operator and the memory grant come from the events alone; residual-predicate cannot run")
	} else if !a.p.HasCounters {
		a.note("the plan has no runtime counters (an estimated plan): reads and rows come from the events alone")
	}
	if t := a.in.Run.Traced; t != nil {
		for _, g := range []struct {
			on    bool
			group string
			rules string
		}{
			{t.Locks, "locks", "blocking sees waits but cannot name the locked resource"},
			{t.Waits, "waits", "blocking, grant-wait and parallelism-waits cannot run"},
			{t.Memory, "memory", "spills and grants come from the plan alone"},
			{t.Splits, "splits", "page-splits cannot run"},
			{t.Log, "log", "log-volume counts fn_dblog records only"},
		} {
			if !g.on {
				a.note("the %s event group was not traced: %s", g.group, g.rules)
			}
		}
	}
}

// finish fills what every finding has: the evidence (its total, span and
// the first MaxEvidence entries in time order) and the confidence.
func (a *analysis) finish(f *Finding) {
	var refs []EventRef
	amb := 0
	bound := operatorBound[f.Rule]
	for _, p := range f.pending {
		n, at := lane(a.in.Trace, p.lane)
		idx := p.idx
		if !slices.IsSorted(idx) {
			idx = slices.Sorted(slices.Values(idx))
		}
		for k, i := range idx {
			if i < 0 || i >= n {
				continue
			}
			t, end, m := at(i)
			if f.EvidenceTotal == 0 || t < f.Start {
				f.Start = t
			}
			if f.EvidenceTotal == 0 || end > f.End {
				f.End = end
			}
			f.EvidenceTotal++
			if bound && m.Ambiguous {
				amb++
			}
			// Lanes are in time order, so a lane's first entries are its
			// earliest.
			if k < a.cfg.MaxEvidence {
				refs = append(refs, a.ref(p.lane, i))
			}
		}
	}
	f.pending = nil
	slices.SortStableFunc(refs, func(x, y EventRef) int {
		if x.T != y.T {
			return cmp.Compare(x.T, y.T)
		}
		if x.Lane != y.Lane {
			return strings.Compare(x.Lane, y.Lane)
		}
		return x.Index - y.Index
	})
	if len(refs) > a.cfg.MaxEvidence {
		refs = slices.Clip(refs[:a.cfg.MaxEvidence])
	}
	f.Evidence = refs
	a.rate(f, amb)
	if f.Numbers == nil {
		f.Numbers = []Number{}
	}
}

func sortFindings(fs []Finding) {
	order := map[string]int{}
	for i, r := range rules {
		order[r.id] = i
	}
	slices.SortStableFunc(fs, func(x, y Finding) int {
		if d := y.Severity.rank() - x.Severity.rank(); d != 0 {
			return d
		}
		return order[x.Rule] - order[y.Rule]
	})
}

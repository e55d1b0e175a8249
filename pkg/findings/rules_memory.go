package findings

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/showplan"
)

// spillInfo gathers one operator's spill evidence from the events and the
// plan's warnings.
type spillInfo struct {
	node     int
	events   []int    // memory-lane indices
	kinds    []string // event names
	details  []string // warning types as the events give them
	level    int64    // plan SpillLevel (hash recursion depth)
	threads  int64    // plan SpilledThreadCount
	writes   int64    // plan WritesToTempDb
	reads    int64    // plan ReadsFromTempDb
	opGrant  int64    // operator grant (plan spill details or event)
	opUsed   int64
	inPlan   bool
	fromPlan bool // writes/grant came from the plan
	// begins counts exchange_spill events whose opcode is Begin: the
	// event fires at a spill's start and end, so a spill is its End (its
	// Begin only when the End was not captured), as the exporter counts.
	begins int
}

// count is the number of spills the events show.
func (s *spillInfo) count() int {
	if ends := len(s.events) - s.begins; ends > 0 {
		return ends
	}
	return s.begins
}

func planAttr(w showplan.Warning, name string) int64 {
	v, _ := strconv.ParseInt(w.Attributes[name], 10, 64)
	return v
}

// collectSpills groups spill evidence by node: exchange spills when
// exchange is set, sort and hash spills otherwise. Node -1 gathers spill
// events tied to no operator.
func (a *analysis) collectSpills(exchange bool) []*spillInfo {
	by := map[int]*spillInfo{}
	get := func(n int) *spillInfo {
		s := by[n]
		if s == nil {
			s = &spillInfo{node: n}
			by[n] = s
		}
		return s
	}
	for i, m := range a.in.Trace.Lanes.Memory {
		if !m.Spill || (m.Kind == "exchange_spill") != exchange {
			continue
		}
		node := nodeOf(m.Match)
		if !a.canSpill(node, exchange) {
			node = -1 // a node id of another statement's plan, or of an operator that takes no memory
		}
		s := get(node)
		s.events = append(s.events, i)
		if exchange && strings.EqualFold(m.Detail, "Begin") {
			s.begins++
		}
		if !slices.Contains(s.kinds, m.Kind) {
			s.kinds = append(s.kinds, m.Kind)
		}
		if m.Detail != "" && !slices.Contains(s.details, m.Detail) {
			s.details = append(s.details, m.Detail)
		}
		s.opGrant = max(s.opGrant, int64(m.GrantedMemoryKB))
		s.opUsed = max(s.opUsed, int64(m.UsedMemoryKB))
	}
	if a.in.Plan != nil {
		for _, po := range a.in.Plan.Operators {
			for _, w := range po.Warnings {
				a.planSpill(get, po.NodeID, w, exchange)
			}
		}
	}
	out := make([]*spillInfo, 0, len(by))
	for _, s := range by {
		if len(s.events) > 0 || s.inPlan {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(x, y *spillInfo) int { return x.node - y.node })
	return out
}

func (a *analysis) planSpill(get func(int) *spillInfo, node int, w showplan.Warning, exchange bool) {
	switch {
	case exchange && w.Kind == "ExchangeSpillDetails":
		s := get(node)
		s.inPlan, s.fromPlan = true, true
		s.writes += planAttr(w, "WritesToTempDb")
	case !exchange && w.Kind == "SpillToTempDb":
		if a.p.Op(node) != nil && a.p.Op(node).PhysicalOp == "Parallelism" {
			return // an exchange's own spill level; exchange-spill reports it
		}
		s := get(node)
		s.inPlan = true
		s.level = max(s.level, planAttr(w, "SpillLevel"))
		s.threads = max(s.threads, planAttr(w, "SpilledThreadCount"))
	case !exchange && (w.Kind == "SortSpillDetails" || w.Kind == "HashSpillDetails"):
		s := get(node)
		s.inPlan, s.fromPlan = true, true
		s.writes += planAttr(w, "WritesToTempDb")
		s.reads += planAttr(w, "ReadsFromTempDb")
		s.opGrant = max(s.opGrant, planAttr(w, "GrantedMemoryKb"))
		s.opUsed = max(s.opUsed, planAttr(w, "UsedMemoryKb"))
	}
}

// spills reports each sort or hash that spilled.
func spills(a *analysis) []Finding {
	var out []Finding
	for _, s := range a.collectSpills(false) {
		out = append(out, a.spillFinding(s))
	}
	return out
}

func (a *analysis) spillFinding(s *spillInfo) Finding {
	o := a.p.Op(s.node)
	who, kind := "A spill", spillKind(s, o)
	if o != nil {
		who = o.Name
	}
	f := Finding{Severity: SeverityWarning, pending: ev(LaneMemory, s.events)}
	if o != nil {
		f.Operators = []OperatorRef{o.Ref()}
	}
	title := fmt.Sprintf("%s spilled to tempdb", who)
	if o == nil {
		title = "A spill to tempdb"
	}
	if kind != "" {
		title += " (" + kind + ")"
	}
	if o == nil {
		title += ", tied to no operator of this plan"
		if len(s.events) > 0 {
			f.lower = append(f.lower, confReason{ConfidenceLow, "the spill events name no memory-consuming operator of this plan (another statement's node id, or none)"})
		}
	}
	var parts []string
	writes, wsrc := s.writes, "plan"
	if tw := a.tempdbWrites(o); !s.fromPlan && len(tw) > 0 {
		writes, wsrc = int64(len(tw)), "events"
		f.pending = append(f.pending, ev(LaneWrite, tw)...)
	}
	if writes > 0 || s.fromPlan {
		w := plural(writes, "page", "pages") + " written"
		if s.reads > 0 {
			// Reads are what the spill cost: a multiple-pass sort reads
			// its runs back many times over what it wrote.
			w += ", " + Count(s.reads) + " read"
		}
		parts = append(parts, w)
		f.Numbers = append(f.Numbers, num("tempdbPagesWritten", float64(writes), "pages", wsrc))
	}
	if s.reads > 0 {
		f.Numbers = append(f.Numbers, num("tempdbPagesRead", float64(s.reads), "pages", "plan"))
	}
	f.Numbers = append(f.Numbers, num("spillEvents", float64(len(s.events)), "count", "events"))
	if s.level > 0 {
		f.Numbers = append(f.Numbers, num("spillLevel", float64(s.level), "count", "plan"))
	}
	if g := a.p.Grant; g != nil && g.GrantedKB > 0 {
		parts = append(parts, fmt.Sprintf("the grant was %s, %s used", KB(g.GrantedKB), Percent(share(g.UsedKB, g.GrantedKB))))
		f.Numbers = append(f.Numbers, num("grantedKB", float64(g.GrantedKB), "KB", g.Source), num("usedKB", float64(g.UsedKB), "KB", g.Source))
	}
	if s.opGrant > 0 {
		f.Numbers = append(f.Numbers, num("operatorGrantedKB", float64(s.opGrant), "KB", srcOf(s.fromPlan)), num("operatorUsedKB", float64(s.opUsed), "KB", srcOf(s.fromPlan)))
	}
	if len(parts) > 0 {
		title += ": " + strings.Join(parts, "; ")
	}
	f.Title = title
	if spillSevere(s) {
		f.Severity = SeverityCritical
		f.Detail = "Several passes over tempdb (a multiple-pass sort, a hash bailout or recursion below the first level) multiply the I/O."
	}
	cause, nums := a.spillCause(o, isHash(s, o))
	f.Numbers = append(f.Numbers, nums...)
	f.Detail = strings.TrimSpace(f.Detail + " " + cause)
	f.Hint = a.spillHint(o, isHash(s, o), cause != "" && strings.Contains(cause, "estimated"))
	f.Reference = refSortWarnings
	if isHash(s, o) {
		f.Reference = refHashWarning
	}
	return f
}

func srcOf(plan bool) string {
	if plan {
		return "plan"
	}
	return "events"
}

// tempdbWrites are the page writes in tempdb an operator's spill made:
// those tied to it, and those tied to no operator (a worktable page is in
// no catalog) inside its span.
func (a *analysis) tempdbWrites(o *OperatorStats) []int {
	if o == nil {
		return nil
	}
	var out []int
	for i, w := range a.in.Trace.Lanes.Write {
		if w.DatabaseID != tempdbID {
			continue
		}
		if n := nodeOf(w.Match); n == o.NodeID || n < 0 && w.T >= o.StartUs && w.T <= o.EndUs {
			out = append(out, i)
		}
	}
	return out
}

func isHash(s *spillInfo, o *OperatorStats) bool {
	if o != nil {
		return strings.HasPrefix(o.PhysicalOp, "Hash") || o.PhysicalOp == "Adaptive Join"
	}
	return slices.Contains(s.kinds, "hash_warning") || slices.Contains(s.kinds, "hash_spill_details")
}

// spillKind describes the spill as the events (sort_warning_type,
// hash_warning_type) or the plan (SpillLevel) give it.
func spillKind(s *spillInfo, o *OperatorStats) string {
	var k []string
	for _, d := range s.details {
		k = append(k, strings.ToLower(d))
	}
	if len(k) == 0 && s.level > 0 {
		if isHash(s, o) {
			k = append(k, "spill level "+strconv.FormatInt(s.level, 10))
		} else if s.level > 1 {
			k = append(k, "multiple passes")
		} else {
			k = append(k, "single pass")
		}
	}
	return strings.Join(k, ", ")
}

func spillSevere(s *spillInfo) bool {
	for _, d := range s.details {
		d = strings.ToLower(d)
		if strings.Contains(d, "multiple") || strings.Contains(d, "bailout") {
			return true
		}
	}
	return s.level > 1
}

// exchangeSpills reports each Parallelism operator that spilled.
func exchangeSpills(a *analysis) []Finding {
	var out []Finding
	for _, s := range a.collectSpills(true) {
		o := a.p.Op(s.node)
		who := "A Parallelism operator"
		f := Finding{Severity: SeverityWarning, pending: ev(LaneMemory, s.events)}
		if o != nil {
			who = o.Name
			f.Operators = []OperatorRef{o.Ref()}
		}
		f.Title = fmt.Sprintf("%s spilled its buffers to tempdb: %s", who, plural(max(int64(s.count()), 1), "exchange spill", "exchange spills"))
		if len(s.events) == 0 {
			f.Title = fmt.Sprintf("%s spilled its buffers to tempdb", who)
		}
		if s.writes > 0 {
			f.Title += ", " + plural(s.writes, "page", "pages") + " written"
			f.Numbers = append(f.Numbers, num("tempdbPagesWritten", float64(s.writes), "pages", "plan"))
		}
		f.Numbers = append(f.Numbers, num("spillEvents", float64(s.count()), "count", "events"))
		f.Hint = "The exchange's in-memory buffers filled while a consumer waited for rows in order (an order-preserving exchange, " +
			"usually fed by several range scans), so it wrote them to tempdb. Drop the ORDER BY if the order is not needed, remove " +
			"the range-scanned column from it, use an index hint for another access path, or run the query with OPTION (MAXDOP 1)."
		f.Reference = refExchangeSpill
		out = append(out, f)
	}
	return out
}

// canSpill: node is an operator that can write the spill kind: a
// Parallelism operator for exchange spills, a memory consumer otherwise.
// Without a plan or operator the events' node id is kept.
func (a *analysis) canSpill(node int, exchange bool) bool {
	o := a.p.Op(node)
	if o == nil {
		return true
	}
	if exchange {
		return o.PhysicalOp == "Parallelism"
	}
	return takesMemory(o.PhysicalOp)
}

func takesMemory(physical string) bool {
	switch physical {
	case "Sort", "Hash Match", "Adaptive Join", "Batch Hash Table Build", "Window Aggregate":
		return true
	}
	return false
}

// memoryConsumers are the operators that take workspace memory.
func (a *analysis) memoryConsumers() []OperatorRef {
	var out []OperatorRef
	for i := range a.p.Operators {
		o := &a.p.Operators[i]
		if takesMemory(o.PhysicalOp) {
			out = append(out, o.Ref())
		}
	}
	return out
}

func (a *analysis) grantNumbers(g *Grant) []Number {
	n := []Number{num("grantedKB", float64(g.GrantedKB), "KB", g.Source), num("usedKB", float64(g.UsedKB), "KB", g.Source),
		num("usedShare", share(g.UsedKB, g.GrantedKB)*100, "percent", g.Source)}
	if g.RequestedKB > 0 {
		n = append(n, num("requestedKB", float64(g.RequestedKB), "KB", g.Source))
	}
	if g.DesiredKB > 0 {
		n = append(n, num("desiredKB", float64(g.DesiredKB), "KB", g.Source))
	}
	if g.MaxQueryKB > 0 {
		n = append(n, num("maxQueryKB", float64(g.MaxQueryKB), "KB", g.Source))
	}
	return n
}

func (a *analysis) anySpill() (n int) {
	for _, s := range a.collectSpills(false) {
		n += max(s.count(), 1)
	}
	return n
}

// grantExcess: granted at least MinGrantKB and used at most
// GrantExcessShare of it, without a spill.
func grantExcess(a *analysis) []Finding {
	g := a.p.Grant
	if g == nil || !a.regularGrant(g) || share(g.UsedKB, g.GrantedKB) > a.cfg.GrantExcessShare || a.anySpill() > 0 || a.ownGrantHint() != "" {
		return nil
	}
	f := Finding{
		Title: fmt.Sprintf("Memory grant far above use: %s granted, %s used (%s)", KB(g.GrantedKB), KB(g.UsedKB),
			Percent(share(g.UsedKB, g.GrantedKB))),
		Severity:  SeverityWarning,
		Operators: a.memoryConsumers(),
		pending:   ev(LaneMemory, g.Events),
		Numbers:   a.grantNumbers(g),
		Hint: "The optimizer expected far more (or wider) rows than the query saw and reserved memory for them; while the query ran, " +
			"that memory was unavailable to other queries, which may have queued for it (RESOURCE_SEMAPHORE). Update statistics; " +
			"memory grant feedback corrects repeated executions; OPTION (MAX_GRANT_PERCENT = n) caps the grant.",
		Reference: refGrantFeedback,
	}
	if a.planWarned("Excessive Grant") {
		f.Detail = "SQL Server flagged it too (MemoryGrantWarning: Excessive Grant)."
	}
	return []Finding{f}
}

// regularGrant: the grant came from the regular resource semaphore (at
// least MinGrantKB, or a statement costing more than SmallQueryCost that
// is not a trivial plan), where a wasted grant makes other queries wait.
// Smaller grants come from the small-query semaphore.
func (a *analysis) regularGrant(g *Grant) bool {
	if g.GrantedKB >= a.cfg.MinGrantKB {
		return true
	}
	st := a.in.Plan
	return st != nil && g.GrantedKB > 0 && st.SubtreeCost > a.cfg.SmallQueryCost && !strings.EqualFold(st.OptimizerLevel, "TRIVIAL")
}

// planWarned reports whether the plan carries a MemoryGrantWarning of kind.
func (a *analysis) planWarned(kind string) bool {
	if a.in.Plan == nil {
		return false
	}
	for _, w := range a.in.Plan.Warnings {
		if w.Kind == "MemoryGrantWarning" && strings.EqualFold(w.Attributes["GrantWarningKind"], kind) {
			return true
		}
	}
	return false
}

// grantTooSmall: the server granted at most GrantShortShare of the
// requested memory, or an operator spilled with at least GrantFullShare of
// the grant in use.
func grantTooSmall(a *analysis) []Finding {
	g := a.p.Grant
	if g == nil || g.GrantedKB <= 0 || a.ownGrantHint() != "" {
		return nil
	}
	f := Finding{Severity: SeverityWarning, Operators: a.memoryConsumers(), pending: ev(LaneMemory, g.Events), Numbers: a.grantNumbers(g)}
	switch spilled := a.anySpill(); {
	case capped(g):
		f.Title = fmt.Sprintf("Memory grant held at the per-query maximum: desired %s, granted %s (MaxQueryMemory %s)", KB(g.DesiredKB),
			KB(g.GrantedKB), KB(g.MaxQueryKB))
		f.Hint = "The optimizer sized the grant for its estimate, but one query may take at most MaxQueryMemory: the workload " +
			"group's REQUEST_MAX_MEMORY_GRANT_PERCENT (25% by default) of the resource pool's query memory, or a MAX_GRANT_PERCENT " +
			"hint. This is a size limit, not a bad estimate, and MIN_GRANT_PERCENT cannot raise a grant past it. Make the query need " +
			"less (fewer and narrower columns through the sort or hash, filter earlier, an index that delivers the order), or raise " +
			"the workload group's REQUEST_MAX_MEMORY_GRANT_PERCENT if the server has memory to spare."
		f.Reference = refWorkloadGroup
		if spilled > 0 {
			f.Numbers = append(f.Numbers, num("spills", float64(spilled), "count", "events"))
		}
	case g.RequestedKB > 0 && share(g.GrantedKB, g.RequestedKB) <= a.cfg.GrantShortShare:
		f.Title = fmt.Sprintf("Memory grant cut short: got %s of the %s it asked for (%s)", KB(g.GrantedKB), KB(g.RequestedKB),
			Percent(share(g.GrantedKB, g.RequestedKB)))
		f.Hint = "The server could not give the query the memory it asked for (memory pressure, or a Resource Governor limit) and " +
			"granted less; operators that counted on it spill. Look for other queries holding large grants, and at the workload " +
			"group's REQUEST_MAX_MEMORY_GRANT_PERCENT."
		f.Reference = refGrantIssues
	case spilled > 0 && share(g.UsedKB, g.GrantedKB) >= a.cfg.GrantFullShare:
		f.Title = fmt.Sprintf("Memory grant too small: %s of its %s used, and %s to tempdb", Percent(share(g.UsedKB, g.GrantedKB)),
			KB(g.GrantedKB), plural(int64(spilled), "spill", "spills"))
		f.Hint = "The query used all the memory it was granted and still spilled: the grant was sized for fewer rows than arrived. " +
			"Fix the estimate (statistics, a simpler predicate), or raise the grant with OPTION (MIN_GRANT_PERCENT = n)."
		f.Reference = refQueryHints
		f.Numbers = append(f.Numbers, num("spills", float64(spilled), "count", "events"))
	default:
		return nil
	}
	return []Finding{f}
}

// grantWait: RESOURCE_SEMAPHORE waits totalling at least MinGrantWaitUs,
// or a GrantWaitTime in the plan.
func grantWait(a *analysis) []Finding {
	var idx []int
	var us int64
	types := map[string]bool{}
	for i, w := range a.in.Trace.Lanes.Wait {
		if isGrantWait(w.WaitType) {
			idx = append(idx, i)
			us += WaitUs(w)
			types[w.WaitType] = true
		}
	}
	planWait := a.planGrantWaitUs()
	if us < a.cfg.MinGrantWaitUs && planWait == 0 {
		return nil
	}
	f := Finding{Severity: SeverityWarning, pending: ev(LaneWait, idx), Operators: a.memoryConsumers()}
	if us >= a.cfg.MinGrantWaitUs {
		f.Title = fmt.Sprintf("Waited %s for a memory grant (%s, %s)", Duration(us), strings.Join(sortedKeys(types), ", "), plural(int64(len(idx)), "wait", "waits"))
		f.Numbers = append(f.Numbers, num("waitUs", float64(us), "us", "events"), num("waits", float64(len(idx)), "count", "events"))
		if a.p.DurationUs > 0 && share(us, a.p.DurationUs) >= a.cfg.CriticalWaitShare {
			f.Severity = SeverityCritical
		}
	} else {
		f.Title = fmt.Sprintf("Waited %s for a memory grant (the plan's own warning)", Duration(planWait))
	}
	if planWait > 0 {
		f.Numbers = append(f.Numbers, num("planGrantWaitUs", float64(planWait), "us", "plan"))
	}
	if g := a.p.Grant; g != nil {
		f.Numbers = append(f.Numbers, num("grantedKB", float64(g.GrantedKB), "KB", g.Source))
		if g.RequestedKB > 0 {
			f.Numbers = append(f.Numbers, num("requestedKB", float64(g.RequestedKB), "KB", g.Source))
		}
	}
	f.Hint = "Other queries held the server's query workspace memory, so this one queued until enough was free. " +
		"sys.dm_exec_query_memory_grants shows who holds grants and who waits; grants far above use (see grant-excess) are " +
		"the usual culprits."
	f.Reference = refGrantIssues
	return []Finding{f}
}

// planGrantWaitUs is the plan's memory grant wait in µs: the larger of
// MemoryGrantInfo/@GrantWaitTime (seconds, as the showplan schema
// documents) and a statement Wait warning of type "Memory Grant", whose
// WaitTime is in milliseconds: the schema leaves its unit undocumented, but
// a real plan (stack_overflow-inequality_index) carries WaitTime="58" with
// GrantWaitTime="0" in a statement that ran 2,649 ms in all.
func (a *analysis) planGrantWaitUs() int64 {
	if a.in.Plan == nil {
		return 0
	}
	var us int64
	if g := a.in.Plan.MemoryGrant; g != nil {
		us = g.GrantWaitTime * 1_000_000
	}
	for _, w := range a.in.Plan.Warnings {
		if w.Kind == "Wait" && strings.EqualFold(w.Attributes["WaitType"], "Memory Grant") {
			us = max(us, planAttr(w, "WaitTime")*1000)
		}
	}
	return us
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// isGrantWait: a wait for a query memory grant. RESOURCE_SEMAPHORE_QUERY_COMPILE
// is the compile gateway (optimizer memory), not a grant
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-query-optimizer-memory-gateways).
func isGrantWait(t string) bool {
	t = strings.ToUpper(t)
	return strings.HasPrefix(t, "RESOURCE_SEMAPHORE") && t != "RESOURCE_SEMAPHORE_QUERY_COMPILE"
}

// capped: the grant stopped at the per-query maximum while the optimizer
// desired more.
func capped(g *Grant) bool {
	return g.MaxQueryKB > 0 && g.DesiredKB > g.GrantedKB && max(g.GrantedKB, g.RequestedKB) >= g.MaxQueryKB
}

// spillCause states what the plan proves about the spill's size: the rows
// into the operator (a hash's build input), estimated and actual, and
// their estimated width, since workspace memory follows rows × width. It
// returns "" when the plan has no such operator.
func (a *analysis) spillCause(o *OperatorStats, hash bool) (string, []Number) {
	if o == nil || a.in.Plan == nil {
		return "", nil
	}
	in := a.in.Plan.OperatorByID(o.NodeID)
	if in == nil {
		return "", nil
	}
	if hash && len(in.Children) > 0 {
		in = in.Children[0] // the build input
	}
	est, width := in.EstimateRows, in.AvgRowSize
	nums := []Number{num("estimatedRows", est, "rows", "plan"), num("rowWidthBytes", width, "bytes", "plan")}
	what := "into the " + o.Name
	if hash {
		what = "into the " + o.Name + "'s build input"
	}
	s := fmt.Sprintf("The plan estimated %s rows of %s bytes %s.", Count(int64(est)), Count(int64(width)), what)
	st := a.p.Op(in.NodeID)
	if st == nil || st.Counters == nil {
		return s + " The plan has no runtime counters, so the actual rows are unknown.", nums
	}
	act := st.Counters.Rows
	nums = append(nums, num("actualRows", float64(act), "rows", "plan"))
	if est > 0 && float64(act) >= 2*est {
		return fmt.Sprintf("Rows %s: %s estimated, %s actual (%.1f× the estimate), %s bytes each: the grant was sized for the estimate.",
			what, Count(int64(est)), Count(act), float64(act)/est, Count(int64(width))), nums
	}
	return fmt.Sprintf("Rows %s: %s expected, %s actual, %s bytes each: the row count held, so the shortfall is the width, the "+
		"grant's split among memory consumers, or its cap.", what, Count(int64(est)), Count(act), Count(int64(width))), nums
}

// spillHint gives the fix that follows from the cause spillCause proved,
// and promises memory grant feedback only where the server has it.
func (a *analysis) spillHint(o *OperatorStats, hash, underestimated bool) string {
	h := "The operator needed more memory than its share of the grant, so it wrote rows to tempdb and read them back."
	switch g := a.p.Grant; {
	case g != nil && capped(g):
		h += " The grant was held at the per-query maximum (see grant-too-small), so neither a better estimate nor MIN_GRANT_PERCENT " +
			"can raise it: make the operator hold less (fewer or narrower columns, filter before it, an index that delivers the order)."
	case underestimated:
		h += " Workspace memory follows input rows × row width and the rows were underestimated: fix the estimate where it is " +
			"made (statistics on the filtered columns, or a computed column for an expression the optimizer can only guess at)."
	default:
		h += " The row estimate held: look at the estimated row width (variable-length columns are assumed half full) and at " +
			"the other memory consumers sharing the grant."
	}
	batch := false
	if o != nil && a.in.Plan != nil {
		if po := a.in.Plan.OperatorByID(o.NodeID); po != nil {
			batch = strings.EqualFold(po.ExecutionMode, "Batch")
		}
	}
	if fb := a.grantFeedback(batch); fb != "" {
		return h + " On this server " + fb + "."
	}
	return h + " (" + a.noFeedbackWhy(batch) + ".)"
}

package showplan

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ParseBytes parses a showplan document. The ShowPlanXML element may be the
// document root or sit anywhere inside another document (for example inside
// the <value> of a query_post_execution_showplan event). Element names are
// matched by local name, so any namespace prefix (or none) works. If the
// input holds several ShowPlanXML elements, their statements are appended in
// order and Version/Build come from the first.
func ParseBytes(data []byte) (*Plan, error) {
	text, err := toUTF8(data)
	if err != nil {
		return nil, err
	}
	p := &parser{plan: &Plan{}, batch: -1}
	dec := xml.NewDecoder(bytes.NewReader(text))
	dec.CharsetReader = passThroughCharset
	for {
		tok, err := dec.RawToken()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("showplan XML: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			p.start(t.Name.Local, t.Attr)
		case xml.EndElement:
			p.end(t.Name.Local)
		}
		if p.err != nil {
			line, col := dec.InputPos()
			return nil, fmt.Errorf("showplan XML line %d column %d: %w", line, col, p.err)
		}
	}
	if n := len(p.stack); n > 0 {
		return nil, fmt.Errorf("showplan XML ends inside <%s> (%d elements left open)", p.stack[n-1].name, n)
	}
	if !p.sawShowPlan {
		return nil, errors.New("no ShowPlanXML element found: this is not a showplan document")
	}
	for _, st := range p.plan.Statements {
		finishStatement(st)
	}
	return p.plan, nil
}

// frame is one open element. Context fields are inherited from the parent
// frame so that every element knows its statement, innermost RelOp and plan.
type frame struct {
	name     string
	stmt     *Statement
	relIdx   int // stack index of the innermost open RelOp, -1 if none
	planIdx  int // stack index of the innermost open QueryPlan, -1 if none
	procName string

	op       *Operator     // RelOp frames
	seek     *seekBuilder  // SeekPredicate / SeekPredicateNew frames
	rng      *rangeBuilder // Prefix / StartRange / EndRange / IsNotNull frames
	warnList *[]Warning    // Warnings frames
	warn     *Warning      // frames of one warning element
	colGroup string        // MissingIndex ColumnGroup Usage
}

type parser struct {
	plan        *Plan
	stack       []frame
	err         error
	batch       int
	sawShowPlan bool
}

func (p *parser) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf(format, args...)
	}
}

func (p *parser) start(name string, attrs []xml.Attr) {
	f := frame{name: name, relIdx: -1, planIdx: -1}
	var parent *frame
	if n := len(p.stack); n > 0 {
		parent = &p.stack[n-1]
		f.stmt, f.relIdx, f.planIdx, f.procName = parent.stmt, parent.relIdx, parent.planIdx, parent.procName
	}
	idx := len(p.stack)
	parentName := ""
	if parent != nil {
		parentName = parent.name
	}

	switch {
	case name == "ShowPlanXML":
		if !p.sawShowPlan {
			p.plan.Version = attr(attrs, "Version")
			p.plan.Build = attr(attrs, "Build")
		}
		p.sawShowPlan = true
	case name == "Batch":
		p.batch++
	case name == "UDF" || name == "StoredProc":
		f.procName = attr(attrs, "ProcName")
	case strings.HasPrefix(name, "Stmt") && f.relIdx < 0:
		st := p.newStatement(name, attrs, f.stmt, f.procName)
		f.stmt, f.planIdx = st, -1
	case name == "Operation" && (parentName == "CursorPlan" || parentName == "ReceivePlan") && f.stmt != nil:
		if f.stmt.HasPlan || f.stmt.CursorOperation != "" {
			f.stmt = p.cloneStatement(f.stmt)
		}
		f.stmt.CursorOperation = attr(attrs, "OperationType")
	case name == "QueryPlan" && f.relIdx < 0:
		if f.stmt == nil {
			p.fail("QueryPlan outside any statement element")
			return
		}
		if f.stmt.HasPlan {
			f.stmt = p.cloneStatement(f.stmt)
		}
		f.planIdx = idx
		p.queryPlanAttrs(f.stmt, attrs)
	case name == "RelOp":
		if f.stmt == nil || f.planIdx < 0 {
			p.fail("RelOp outside a QueryPlan")
			return
		}
		var parentOp *Operator
		if f.relIdx > f.planIdx {
			parentOp = p.stack[f.relIdx].op
		}
		f.op = p.newOperator(f.stmt, parentOp, attrs)
		// An input RelOp is a direct child of its parent's operator element
		// (Hash, NestedLoops, ...); anything deeper sits in an expression.
		f.op.InExpression = parentOp != nil && idx-1 != f.relIdx+1
		f.relIdx = idx
	case f.relIdx >= 0:
		p.operatorElement(&f, idx, parentName, attrs)
	case f.planIdx >= 0:
		p.statementElement(&f, idx, parentName, attrs)
	}
	p.stack = append(p.stack, f)
}

func (p *parser) end(name string) {
	n := len(p.stack)
	if n == 0 {
		p.fail("end tag </%s> without a start tag", name)
		return
	}
	f := &p.stack[n-1]
	if f.name != name {
		p.fail("end tag </%s> does not match <%s>", name, f.name)
		return
	}
	if f.rng != nil {
		p.finishRange(f.rng, n-1)
	}
	if f.seek != nil && f.relIdx >= 0 {
		if text := strings.Join(f.seek.parts, " AND "); text != "" {
			op := p.stack[f.relIdx].op
			op.SeekPredicates = append(op.SeekPredicates, text)
		}
	}
	p.stack = p.stack[:n-1]
}

func (p *parser) newStatement(element string, attrs []xml.Attr, parent *Statement, procName string) *Statement {
	st := &Statement{
		Index:       len(p.plan.Statements),
		Element:     element,
		Batch:       max(p.batch, 0),
		ParentIndex: -1,
		Function:    procName,
	}
	if parent != nil {
		st.ParentIndex = parent.Index
	}
	for _, a := range attrs {
		v := a.Value
		switch a.Name.Local {
		case "StatementType":
			st.Type = v
		case "StatementText":
			st.Text = v
		case "StatementId":
			st.StatementID = p.int(v, a.Name.Local, element)
		case "QueryHash":
			st.QueryHash = v
		case "QueryPlanHash":
			st.QueryPlanHash = v
		case "StatementSubTreeCost":
			st.SubtreeCost = p.float(v, a.Name.Local, element)
		case "StatementEstRows":
			st.EstimateRows = p.float(v, a.Name.Local, element)
		case "StatementOptmLevel":
			st.OptimizerLevel = v
		case "StatementOptmEarlyAbortReason":
			st.EarlyAbort = v
		case "CardinalityEstimationModelVersion":
			st.CEModelVersion = v
		}
	}
	p.plan.Statements = append(p.plan.Statements, st)
	return st
}

// cloneStatement starts a further Statement with the header of st, for a
// second cursor Operation or a second QueryPlan in one statement element.
func (p *parser) cloneStatement(st *Statement) *Statement {
	c := &Statement{
		Index: len(p.plan.Statements), Element: st.Element, Type: st.Type, Text: st.Text,
		Batch: st.Batch, ParentIndex: st.ParentIndex, Function: st.Function,
		StatementID: st.StatementID, QueryHash: st.QueryHash, QueryPlanHash: st.QueryPlanHash,
		SubtreeCost: st.SubtreeCost, EstimateRows: st.EstimateRows, OptimizerLevel: st.OptimizerLevel,
		EarlyAbort: st.EarlyAbort, CEModelVersion: st.CEModelVersion,
	}
	p.plan.Statements = append(p.plan.Statements, c)
	return c
}

func (p *parser) queryPlanAttrs(st *Statement, attrs []xml.Attr) {
	st.HasPlan = true
	for _, a := range attrs {
		v := a.Value
		switch a.Name.Local {
		case "DegreeOfParallelism":
			st.DOP = p.int(v, a.Name.Local, "QueryPlan")
		case "NonParallelPlanReason":
			st.NonParallelWhy = v
		case "CachedPlanSize":
			st.CachedPlanKB = p.int64(v, a.Name.Local, "QueryPlan")
		case "CompileTime":
			st.CompileTimeMs = p.int64(v, a.Name.Local, "QueryPlan")
		case "CompileCPU":
			st.CompileCPUMs = p.int64(v, a.Name.Local, "QueryPlan")
		case "CompileMemory":
			st.CompileMemoryKB = p.int64(v, a.Name.Local, "QueryPlan")
		}
	}
}

func (p *parser) newOperator(st *Statement, parent *Operator, attrs []xml.Attr) *Operator {
	op := &Operator{Parent: parent, PrimarySpoolNodeID: -1, NodeID: -1}
	hasID := false
	for _, a := range attrs {
		v := a.Value
		switch a.Name.Local {
		case "NodeId":
			op.NodeID = p.int(v, "NodeId", "RelOp")
			hasID = true
		case "PhysicalOp":
			op.PhysicalOp = v
		case "LogicalOp":
			op.LogicalOp = v
		case "EstimateRows":
			op.EstimateRows = p.float(v, "EstimateRows", "RelOp")
		case "EstimateRowsWithoutRowGoal":
			op.EstimateRowsWithoutRowGoal = p.float(v, "EstimateRowsWithoutRowGoal", "RelOp")
		case "EstimatedRowsRead":
			op.EstimatedRowsRead = p.float(v, "EstimatedRowsRead", "RelOp")
		case "EstimateCPU":
			op.EstimateCPU = p.float(v, "EstimateCPU", "RelOp")
		case "EstimateIO":
			op.EstimateIO = p.float(v, "EstimateIO", "RelOp")
		case "AvgRowSize":
			op.AvgRowSize = p.float(v, "AvgRowSize", "RelOp")
		case "EstimatedTotalSubtreeCost":
			op.SubtreeCost = p.float(v, "EstimatedTotalSubtreeCost", "RelOp")
		case "Parallel":
			op.Parallel = p.bool(v, "Parallel", "RelOp")
		case "EstimatedExecutionMode":
			op.EstimatedExecutionMode = v
		case "IsAdaptive":
			op.IsAdaptive = p.bool(v, "IsAdaptive", "RelOp")
		case "AdaptiveThresholdRows":
			op.AdaptiveThresholdRows = p.float(v, "AdaptiveThresholdRows", "RelOp")
		case "EstimatedJoinType":
			op.EstimatedJoinType = v
		}
	}
	if !hasID {
		// NodeId is optional in the XSD; number such operators in plan order.
		op.NodeID = len(st.Operators)
	}
	if parent != nil {
		op.Depth = parent.Depth + 1
		parent.Children = append(parent.Children, op)
	} else if st.Root == nil {
		st.Root = op
	} else {
		p.fail("statement %d: QueryPlan has a second top-level RelOp (node %d)", st.Index, op.NodeID)
	}
	st.Operators = append(st.Operators, op)
	return op
}

// operatorElement handles an element inside a RelOp. Only elements whose
// innermost RelOp is this operator reach here, so nothing of a child
// operator (its Object, its warnings) is ever attributed to the parent.
func (p *parser) operatorElement(f *frame, idx int, parentName string, attrs []xml.Attr) {
	op := p.stack[f.relIdx].op
	depth := idx - f.relIdx
	opElem := ""
	if depth >= 2 {
		opElem = p.stack[f.relIdx+1].name
	}

	// Seek predicates sit at varying depths under IndexScan/SeekPredicates.
	switch f.name {
	case "SeekPredicate", "SeekPredicateNew":
		if depth >= 3 && p.stack[f.relIdx+2].name == "SeekPredicates" {
			f.seek = &seekBuilder{}
		}
		return
	case "Prefix", "StartRange", "EndRange", "IsNotNull":
		if depth >= 4 && p.stack[f.relIdx+2].name == "SeekPredicates" {
			f.rng = &rangeBuilder{scanType: attr(attrs, "ScanType")}
			if f.name == "IsNotNull" {
				f.rng.scanType = "IS NOT NULL"
			}
		}
		return
	case "ColumnReference":
		if parentName == "RangeColumns" && idx >= 2 && p.stack[idx-2].rng != nil {
			r := p.stack[idx-2].rng
			r.columns = append(r.columns, columnText(attrs))
			return
		}
		if parentName == "IsNotNull" && p.stack[idx-1].rng != nil {
			r := p.stack[idx-1].rng
			r.columns = append(r.columns, columnText(attrs))
			return
		}
	case "ScalarOperator":
		if parentName == "RangeExpressions" && idx >= 2 && p.stack[idx-2].rng != nil {
			r := p.stack[idx-2].rng
			r.exprs = append(r.exprs, attr(attrs, "ScalarString"))
			return
		}
	}

	parent := &p.stack[idx-1]
	if parent.warnList != nil {
		p.warningElement(f, parent.warnList, attrs)
		return
	}
	if parent.warn != nil && f.name == "ColumnReference" {
		parent.warn.Columns = append(parent.warn.Columns, columnText(attrs))
		return
	}

	switch depth {
	case 1:
		switch f.name {
		case "OutputList", "MemoryFractions", "RunTimeInformation", "RunTimePartitionSummary", "InternalInfo":
		case "Warnings":
			f.warnList = &op.Warnings
			p.warningFlags(&op.Warnings, attrs)
		default:
			if op.Element == "" {
				op.Element = f.name
				p.operatorSpecificAttrs(op, f.name, attrs)
			}
		}
	case 2:
		switch {
		case parentName == "RunTimeInformation" && f.name == "RunTimeCountersPerThread":
			op.Threads = append(op.Threads, p.threadCounters(attrs))
		case parentName == op.Element && f.name == "Object":
			op.Objects = append(op.Objects, objectRef(attrs))
		case parentName == op.Element && f.name == "GroupBy":
			op.HasGroupBy = true
		}
	case 3:
		if opElem != op.Element {
			return
		}
		switch {
		case f.name == "ColumnReference" && parentName == "HashKeysBuild":
			op.HashKeysBuild = append(op.HashKeysBuild, columnText(attrs))
		case f.name == "ColumnReference" && parentName == "HashKeysProbe":
			op.HashKeysProbe = append(op.HashKeysProbe, columnText(attrs))
		case f.name == "ScalarOperator" && parentName == "Predicate":
			op.Predicate = joinAnd(op.Predicate, attr(attrs, "ScalarString"))
		case f.name == "ScalarOperator" && (parentName == "ProbeResidual" || parentName == "Residual"):
			op.ProbeResidual = joinAnd(op.ProbeResidual, attr(attrs, "ScalarString"))
		}
	}
}

func (p *parser) operatorSpecificAttrs(op *Operator, element string, attrs []xml.Attr) {
	for _, a := range attrs {
		v := a.Value
		switch a.Name.Local {
		case "Lookup":
			if element == "IndexScan" && p.bool(v, "Lookup", element) {
				op.IsKeyLookup = true
			}
		case "Ordered":
			op.Ordered = p.bool(v, "Ordered", element)
		case "ScanDirection":
			op.ScanDirection = v
		case "ForcedIndex":
			op.ForcedIndex = p.bool(v, "ForcedIndex", element)
		case "PrimaryNodeId":
			op.PrimarySpoolNodeID = p.int(v, "PrimaryNodeId", element)
		case "PartitioningType":
			op.PartitioningType = v
		}
	}
}

// statementElement handles QueryPlan-level elements outside any RelOp.
func (p *parser) statementElement(f *frame, idx int, parentName string, attrs []xml.Attr) {
	st := f.stmt
	depth := idx - f.planIdx
	parent := &p.stack[idx-1]
	if parent.warnList != nil {
		p.warningElement(f, parent.warnList, attrs)
		return
	}
	if parent.warn != nil && f.name == "ColumnReference" {
		parent.warn.Columns = append(parent.warn.Columns, columnText(attrs))
		return
	}
	switch {
	case depth == 1 && f.name == "Warnings":
		f.warnList = &st.Warnings
		p.warningFlags(&st.Warnings, attrs)
	case depth == 1 && f.name == "QueryTimeStats":
		ts := &TimeStats{}
		for _, a := range attrs {
			switch a.Name.Local {
			case "CpuTime":
				ts.CPUMs = p.int64(a.Value, "CpuTime", f.name)
			case "ElapsedTime":
				ts.ElapsedMs = p.int64(a.Value, "ElapsedTime", f.name)
			case "UdfCpuTime":
				ts.UdfCPUMs = p.int64(a.Value, "UdfCpuTime", f.name)
				ts.HasUdfCounters = true
			case "UdfElapsedTime":
				ts.UdfElapsedMs = p.int64(a.Value, "UdfElapsedTime", f.name)
				ts.HasUdfCounters = true
			}
		}
		st.TimeStats = ts
	case depth == 1 && f.name == "MemoryGrantInfo":
		st.MemoryGrant = p.memoryGrant(attrs)
	case depth == 2 && parentName == "ParameterList" && f.name == "ColumnReference" && len(st.Parameters) < MaxParameters:
		st.Parameters = append(st.Parameters, Parameter{Name: attr(attrs, "Column"), DataType: attr(attrs, "ParameterDataType"),
			Compiled: attr(attrs, "ParameterCompiledValue"), Runtime: attr(attrs, "ParameterRuntimeValue")})
	case depth == 1 && f.name == "ThreadStat":
		st.ThreadStat = &ThreadStat{
			Branches:    p.int(attr(attrs, "Branches"), "Branches", f.name),
			UsedThreads: p.int(attr(attrs, "UsedThreads"), "UsedThreads", f.name),
		}
	case depth == 2 && parentName == "ThreadStat" && f.name == "ThreadReservation" && st.ThreadStat != nil:
		st.ThreadStat.ReservedThreads += p.int(attr(attrs, "ReservedThreads"), "ReservedThreads", f.name)
	case depth == 2 && parentName == "WaitStats" && f.name == "Wait":
		st.WaitStats = append(st.WaitStats, Wait{
			Type:   attr(attrs, "WaitType"),
			TimeMs: p.int64(attr(attrs, "WaitTimeMs"), "WaitTimeMs", f.name),
			Count:  p.int64(attr(attrs, "WaitCount"), "WaitCount", f.name),
		})
	case parentName == "MissingIndexes" && f.name == "MissingIndexGroup":
		st.MissingIndexes = append(st.MissingIndexes, MissingIndexGroup{Impact: p.float(attr(attrs, "Impact"), "Impact", f.name)})
	case parentName == "MissingIndexGroup" && f.name == "MissingIndex" && len(st.MissingIndexes) > 0:
		g := &st.MissingIndexes[len(st.MissingIndexes)-1]
		g.Indexes = append(g.Indexes, MissingIndex{
			Database: trimBrackets(attr(attrs, "Database")),
			Schema:   trimBrackets(attr(attrs, "Schema")),
			Table:    trimBrackets(attr(attrs, "Table")),
		})
	case parentName == "MissingIndex" && f.name == "ColumnGroup":
		f.colGroup = attr(attrs, "Usage")
	case parentName == "ColumnGroup" && f.name == "Column" && len(st.MissingIndexes) > 0:
		g := &st.MissingIndexes[len(st.MissingIndexes)-1]
		if len(g.Indexes) == 0 {
			return
		}
		mi := &g.Indexes[len(g.Indexes)-1]
		col := trimBrackets(attr(attrs, "Name"))
		switch parent.colGroup {
		case "EQUALITY":
			mi.Equality = append(mi.Equality, col)
		case "INEQUALITY":
			mi.Inequality = append(mi.Inequality, col)
		default:
			mi.Include = append(mi.Include, col)
		}
	}
}

func (p *parser) memoryGrant(attrs []xml.Attr) *MemoryGrant {
	g := &MemoryGrant{}
	for _, a := range attrs {
		n, v := a.Name.Local, a.Value
		switch n {
		case "SerialRequiredMemory":
			g.SerialRequiredKB = p.int64(v, n, "MemoryGrantInfo")
		case "SerialDesiredMemory":
			g.SerialDesiredKB = p.int64(v, n, "MemoryGrantInfo")
		case "RequiredMemory":
			g.RequiredKB = p.int64(v, n, "MemoryGrantInfo")
		case "DesiredMemory":
			g.DesiredKB = p.int64(v, n, "MemoryGrantInfo")
		case "RequestedMemory":
			g.RequestedKB = p.int64(v, n, "MemoryGrantInfo")
		case "GrantedMemory":
			g.GrantedKB = p.int64(v, n, "MemoryGrantInfo")
		case "MaxUsedMemory":
			g.MaxUsedKB = p.int64(v, n, "MemoryGrantInfo")
		case "MaxQueryMemory":
			g.MaxQueryKB = p.int64(v, n, "MemoryGrantInfo")
		case "LastRequestedMemory":
			g.LastRequestedKB = p.int64(v, n, "MemoryGrantInfo")
		case "GrantWaitTime":
			g.GrantWaitTime = p.int64(v, n, "MemoryGrantInfo")
		case "IsMemoryGrantFeedbackAdjusted":
			g.FeedbackAdjusted = v
		}
	}
	return g
}

func (p *parser) threadCounters(attrs []xml.Attr) ThreadCounters {
	var t ThreadCounters
	const el = "RunTimeCountersPerThread"
	for _, a := range attrs {
		n, v := a.Name.Local, a.Value
		switch n {
		case "Thread":
			t.Thread = p.int(v, n, el)
		case "ActualExecutionMode":
			t.ExecutionMode = v
		case "ActualJoinType":
			t.ActualJoinType = v
		case "ActualRows":
			t.Rows = p.int64(v, n, el)
		case "ActualRowsRead":
			t.RowsRead = p.int64(v, n, el)
			t.HasRowsRead = true
		case "ActualExecutions":
			t.Executions = p.int64(v, n, el)
		case "ActualEndOfScans":
			t.EndOfScans = p.int64(v, n, el)
		case "ActualRebinds":
			t.Rebinds = p.int64(v, n, el)
		case "ActualRewinds":
			t.Rewinds = p.int64(v, n, el)
		case "Batches":
			t.Batches = p.int64(v, n, el)
		case "ActualElapsedms":
			t.ElapsedMs = p.int64(v, n, el)
			t.HasTiming = true
		case "ActualCPUms":
			t.CPUMs = p.int64(v, n, el)
			t.HasTiming = true
		case "ActualScans":
			t.Scans = p.int64(v, n, el)
		case "ActualLogicalReads":
			t.LogicalReads = p.int64(v, n, el)
		case "ActualPhysicalReads":
			t.PhysicalReads = p.int64(v, n, el)
		case "ActualPageServerReads":
			t.PageServerReads = p.int64(v, n, el)
		case "ActualReadAheads":
			t.ReadAheads = p.int64(v, n, el)
		case "ActualLobLogicalReads":
			t.LobLogicalReads = p.int64(v, n, el)
		case "ActualLobPhysicalReads":
			t.LobPhysicalReads = p.int64(v, n, el)
		case "ActualLobReadAheads":
			t.LobReadAheads = p.int64(v, n, el)
		case "SegmentReads":
			t.SegmentReads = p.int64(v, n, el)
		case "SegmentSkips":
			t.SegmentSkips = p.int64(v, n, el)
		case "ActualLocallyAggregatedRows":
			t.LocallyAggregatedRows = p.int64(v, n, el)
		case "InputMemoryGrant":
			t.InputMemoryGrantKB = p.int64(v, n, el)
		case "OutputMemoryGrant":
			t.OutputMemoryGrantKB = p.int64(v, n, el)
		case "UsedMemoryGrant":
			t.UsedMemoryGrantKB = p.int64(v, n, el)
		}
	}
	return t
}

// warningFlags records the boolean attributes of a Warnings element.
func (p *parser) warningFlags(list *[]Warning, attrs []xml.Attr) {
	for _, a := range attrs {
		if !p.bool(a.Value, a.Name.Local, "Warnings") {
			continue
		}
		w := Warning{Kind: a.Name.Local, Attributes: map[string]string{a.Name.Local: a.Value}}
		switch a.Name.Local {
		case "NoJoinPredicate":
			w.Text = "No join predicate: the join is a cross product"
		case "UnmatchedIndexes":
			w.Text = "Filtered indexes could not be used because of parameterization"
		case "SpatialGuess":
			w.Text = "Spatial selectivity was guessed"
		case "FullUpdateForOnlineIndexBuild":
			w.Text = "Full update for an online index build"
		default:
			w.Text = a.Name.Local
		}
		*list = append(*list, w)
	}
}

// warningElement records one child element of a Warnings element.
func (p *parser) warningElement(f *frame, list *[]Warning, attrs []xml.Attr) {
	w := Warning{Kind: f.name, Attributes: make(map[string]string, len(attrs))}
	for _, a := range attrs {
		w.Attributes[a.Name.Local] = a.Value
	}
	get := func(k string) string { return w.Attributes[k] }
	switch f.name {
	case "SpillToTempDb":
		w.Text = fmt.Sprintf("Spilled to tempdb: level %s, %s thread(s)", orDash(get("SpillLevel")), orDash(get("SpilledThreadCount")))
	case "SortSpillDetails", "HashSpillDetails":
		w.Text = fmt.Sprintf("%s: granted %s KB, used %s KB, %s pages written to and %s read from tempdb",
			strings.TrimSuffix(f.name, "Details"), orDash(get("GrantedMemoryKb")), orDash(get("UsedMemoryKb")),
			orDash(get("WritesToTempDb")), orDash(get("ReadsFromTempDb")))
	case "ExchangeSpillDetails":
		w.Text = fmt.Sprintf("Exchange spill: %s pages written to tempdb", orDash(get("WritesToTempDb")))
	case "PlanAffectingConvert":
		w.Text = fmt.Sprintf("Type conversion in %s may affect %s", get("Expression"), strings.ToLower(get("ConvertIssue")))
	case "MemoryGrantWarning":
		w.Text = fmt.Sprintf("Memory grant: %s (requested %s KB, granted %s KB, max used %s KB)", get("GrantWarningKind"),
			orDash(get("RequestedMemory")), orDash(get("GrantedMemory")), orDash(get("MaxUsedMemory")))
	case "Wait":
		w.Text = fmt.Sprintf("Waited %s for %s", orDash(get("WaitTime")), get("WaitType"))
	case "ColumnsWithNoStatistics":
		w.Text = "Columns with no statistics"
	case "ColumnsWithStaleStatistics":
		w.Text = "Columns with stale statistics"
	case "SpillOccurred":
		w.Text = "A spill occurred"
	default:
		w.Text = f.name
	}
	*list = append(*list, w)
	f.warn = &(*list)[len(*list)-1]
}

func orDash(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// seekBuilder collects the ranges of one SeekPredicate(New).
type seekBuilder struct{ parts []string }

// rangeBuilder collects one Prefix/StartRange/EndRange: columns compared with
// expressions under one ScanType.
type rangeBuilder struct {
	scanType string
	columns  []string
	exprs    []string
}

func (p *parser) finishRange(r *rangeBuilder, idx int) {
	var seek *seekBuilder
	for i := idx - 1; i >= 0 && seek == nil; i-- {
		seek = p.stack[i].seek
		if p.stack[i].name == "RelOp" {
			break
		}
	}
	if seek == nil {
		return
	}
	op := compareOperator(r.scanType)
	for i, col := range r.columns {
		switch {
		case i < len(r.exprs):
			seek.parts = append(seek.parts, col+" "+op+" "+r.exprs[i])
		case r.scanType == "IS NULL" || r.scanType == "IS NOT NULL":
			seek.parts = append(seek.parts, col+" "+op)
		default:
			seek.parts = append(seek.parts, col+" "+op+" ?")
		}
	}
}

func compareOperator(scanType string) string {
	switch scanType {
	case "EQ":
		return "="
	case "NE":
		return "<>"
	case "GT":
		return ">"
	case "GE":
		return ">="
	case "LT":
		return "<"
	case "LE":
		return "<="
	}
	return scanType
}

func joinAnd(a, b string) string {
	switch {
	case b == "":
		return a
	case a == "":
		return b
	}
	return a + " AND " + b
}

func attr(attrs []xml.Attr, name string) string {
	for _, a := range attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func objectRef(attrs []xml.Attr) ObjectRef {
	var o ObjectRef
	for _, a := range attrs {
		v := a.Value
		switch a.Name.Local {
		case "Server":
			o.Server = trimBrackets(v)
		case "Database":
			o.Database = trimBrackets(v)
		case "Schema":
			o.Schema = trimBrackets(v)
		case "Table":
			o.Table = trimBrackets(v)
		case "Index":
			o.Index = trimBrackets(v)
		case "Alias":
			o.Alias = trimBrackets(v)
		case "IndexKind":
			o.IndexKind = v
		case "Storage":
			o.Storage = v
		case "Filtered":
			o.Filtered = v == "1" || v == "true"
		}
	}
	return o
}

// trimBrackets turns "[dbo]" into "dbo" and un-doubles "]]".
func trimBrackets(s string) string {
	if len(s) >= 2 && s[0] == '[' && s[len(s)-1] == ']' {
		return strings.ReplaceAll(s[1:len(s)-1], "]]", "]")
	}
	return s
}

// columnText renders a ColumnReference the way SSMS does, e.g.
// "[db].[dbo].[Users].[Reputation]", "[u].[Reputation]" or "Expr1002".
func columnText(attrs []xml.Attr) string {
	var db, schema, table, alias, column string
	for _, a := range attrs {
		switch a.Name.Local {
		case "Database":
			db = a.Value
		case "Schema":
			schema = a.Value
		case "Table":
			table = a.Value
		case "Alias":
			alias = a.Value
		case "Column":
			column = a.Value
		}
	}
	if table == "" && alias == "" {
		return column
	}
	if !strings.HasPrefix(column, "[") {
		column = "[" + column + "]"
	}
	if alias != "" {
		return alias + "." + column
	}
	var b strings.Builder
	for _, part := range []string{db, schema, table} {
		if part != "" {
			b.WriteString(part)
			b.WriteByte('.')
		}
	}
	b.WriteString(column)
	return b.String()
}

func (p *parser) int(v, name, element string) int {
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		p.fail("%s@%s: %q is not an integer", element, name, v)
	}
	return n
}

func (p *parser) int64(v, name, element string) int64 {
	if v == "" {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		u, uerr := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if uerr != nil {
			p.fail("%s@%s: %q is not an integer", element, name, v)
			return 0
		}
		return int64(min(u, 1<<63-1))
	}
	return n
}

func (p *parser) float(v, name, element string) float64 {
	if v == "" {
		return 0
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		p.fail("%s@%s: %q is not a number", element, name, v)
	}
	return f
}

func (p *parser) bool(v, name, element string) bool {
	switch strings.TrimSpace(v) {
	case "1", "true":
		return true
	case "0", "false", "":
		return false
	}
	p.fail("%s@%s: %q is not a boolean", element, name, v)
	return false
}

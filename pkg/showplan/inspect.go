package showplan

import (
	"fmt"
	"io"
	"strings"
)

// Document is the JSON shape of `queryreplay plan inspect --json`: every
// RelOp of every statement as a flat node list that refers to other nodes
// by NodeId.
type Document struct {
	Version    string              `json:"version,omitempty"`
	Build      string              `json:"build,omitempty"`
	Statements []DocumentStatement `json:"statements"`
}

// DocumentStatement is one statement of a Document.
type DocumentStatement struct {
	Index            int                 `json:"index"`
	Element          string              `json:"element"`
	Type             string              `json:"type"`
	Text             string              `json:"text"`
	ParentStatement  *int                `json:"parentStatement,omitempty"`
	Function         string              `json:"function,omitempty"`
	CursorOperation  string              `json:"cursorOperation,omitempty"`
	StatsMaintenance bool                `json:"statsMaintenance,omitempty"`
	QueryHash        string              `json:"queryHash,omitempty"`
	QueryPlanHash    string              `json:"queryPlanHash,omitempty"`
	DOP              int                 `json:"dop,omitempty"`
	SubtreeCost      float64             `json:"subtreeCost,omitempty"`
	TimeStats        *TimeStats          `json:"timeStats,omitempty"`
	MemoryGrant      *MemoryGrant        `json:"memoryGrant,omitempty"`
	ThreadStat       *ThreadStat         `json:"threadStat,omitempty"`
	WaitStats        []Wait              `json:"waitStats,omitempty"`
	MissingIndexes   []MissingIndexGroup `json:"missingIndexes,omitempty"`
	Warnings         []DocumentWarning   `json:"warnings,omitempty"`
	Nodes            []DocumentNode      `json:"nodes"`
}

// DocumentNode is one operator of a DocumentStatement.
type DocumentNode struct {
	ID                    int               `json:"id"`
	Parent                *int              `json:"parent"`
	Children              []int             `json:"children"`
	PhysicalOp            string            `json:"physicalOp"`
	LogicalOp             string            `json:"logicalOp"`
	DisplayName           string            `json:"displayName,omitempty"`
	KeyLookup             bool              `json:"keyLookup,omitempty"`
	InExpression          bool              `json:"inExpression,omitempty"`
	Behavior              Behavior          `json:"behavior"`
	BlockingInputs        []int             `json:"blockingInputs"`
	Rule                  string            `json:"rule"`
	RuleSource            string            `json:"ruleSource,omitempty"`
	RuleCaveat            string            `json:"ruleCaveat,omitempty"`
	Known                 bool              `json:"known"`
	ExecutionMode         string            `json:"executionMode"`
	AdaptiveThresholdRows float64           `json:"adaptiveThresholdRows,omitempty"`
	EstimatedJoinType     string            `json:"estimatedJoinType,omitempty"`
	ActualJoinType        string            `json:"actualJoinType,omitempty"`
	Object                *ObjectRef        `json:"object"`
	OtherObjects          []ObjectRef       `json:"otherObjects,omitempty"`
	EstimateRows          float64           `json:"estimateRows"`
	SubtreeCost           float64           `json:"subtreeCost"`
	OwnCost               float64           `json:"ownCost"`
	HashKeysBuild         []string          `json:"hashKeysBuild,omitempty"`
	HashKeysProbe         []string          `json:"hashKeysProbe,omitempty"`
	SeekPredicates        []string          `json:"seekPredicates,omitempty"`
	Predicate             string            `json:"predicate,omitempty"`
	ProbeResidual         string            `json:"probeResidual,omitempty"`
	Actual                *DocumentActual   `json:"actual"`
	Warnings              []DocumentWarning `json:"warnings"`
}

// DocumentActual holds an operator's runtime totals and its threads.
type DocumentActual struct {
	Rows          int64            `json:"rows"`
	RowsRead      int64            `json:"rowsRead,omitempty"`
	Executions    int64            `json:"executions"`
	ElapsedMs     *int64           `json:"elapsedMs"`
	CPUMs         *int64           `json:"cpuMs"`
	LogicalReads  int64            `json:"logicalReads"`
	PhysicalReads int64            `json:"physicalReads"`
	ReadAheads    int64            `json:"readAheads,omitempty"`
	Batches       int64            `json:"batches,omitempty"`
	Threads       []DocumentThread `json:"threads"`
}

// DocumentThread is one RunTimeCountersPerThread entry.
type DocumentThread struct {
	Thread        int    `json:"thread"`
	Rows          int64  `json:"rows"`
	Executions    int64  `json:"executions"`
	ElapsedMs     *int64 `json:"elapsedMs"`
	CPUMs         *int64 `json:"cpuMs"`
	LogicalReads  int64  `json:"logicalReads"`
	PhysicalReads int64  `json:"physicalReads"`
	Batches       int64  `json:"batches,omitempty"`
}

// DocumentWarning is a Warning for JSON.
type DocumentWarning struct {
	Kind       string            `json:"kind"`
	Text       string            `json:"text"`
	Attributes map[string]string `json:"attributes,omitempty"`
	Columns    []string          `json:"columns,omitempty"`
}

// NewDocument converts a Plan to its JSON shape.
func NewDocument(p *Plan) Document {
	doc := Document{Version: p.Version, Build: p.Build, Statements: make([]DocumentStatement, 0, len(p.Statements))}
	for _, st := range p.Statements {
		ds := DocumentStatement{
			Index: st.Index, Element: st.Element, Type: st.Type, Text: st.Text,
			Function: st.Function, CursorOperation: st.CursorOperation, StatsMaintenance: st.IsStatsMaintenance,
			QueryHash: st.QueryHash, QueryPlanHash: st.QueryPlanHash, DOP: st.DOP,
			SubtreeCost: st.SubtreeCost, TimeStats: st.TimeStats, MemoryGrant: st.MemoryGrant, ThreadStat: st.ThreadStat,
			WaitStats: st.WaitStats, MissingIndexes: st.MissingIndexes,
			Warnings: documentWarnings(st.Warnings), Nodes: make([]DocumentNode, 0, len(st.Operators)),
		}
		if st.ParentIndex >= 0 {
			parent := st.ParentIndex
			ds.ParentStatement = &parent
		}
		for _, op := range st.Operators {
			ds.Nodes = append(ds.Nodes, documentNode(op))
		}
		doc.Statements = append(doc.Statements, ds)
	}
	return doc
}

func documentNode(op *Operator) DocumentNode {
	n := DocumentNode{
		ID: op.NodeID, PhysicalOp: op.PhysicalOp, LogicalOp: op.LogicalOp,
		KeyLookup: op.IsKeyLookup, InExpression: op.InExpression, Behavior: op.Semantics.Behavior,
		BlockingInputs: append([]int{}, op.Semantics.BlockingInputs...),
		Rule:           op.Semantics.Rule, RuleSource: op.Semantics.Source, RuleCaveat: op.Semantics.Caveat,
		Known: op.Semantics.Known, ExecutionMode: op.ExecutionMode,
		AdaptiveThresholdRows: op.AdaptiveThresholdRows, EstimatedJoinType: op.EstimatedJoinType, ActualJoinType: op.ActualJoinType,
		Object: op.Object, EstimateRows: op.EstimateRows, SubtreeCost: op.SubtreeCost, OwnCost: op.OwnCost,
		HashKeysBuild: op.HashKeysBuild, HashKeysProbe: op.HashKeysProbe, SeekPredicates: op.SeekPredicates,
		Predicate: op.Predicate, ProbeResidual: op.ProbeResidual,
		Children: make([]int, 0, len(op.Children)), Warnings: documentWarnings(op.Warnings),
	}
	if n.Warnings == nil {
		n.Warnings = []DocumentWarning{}
	}
	if op.DisplayName != op.PhysicalOp {
		n.DisplayName = op.DisplayName
	}
	if len(op.Objects) > 1 {
		n.OtherObjects = op.Objects[1:]
	}
	if op.Parent != nil {
		id := op.Parent.NodeID
		n.Parent = &id
	}
	for _, c := range op.Children {
		n.Children = append(n.Children, c.NodeID)
	}
	if a := op.Actual; a != nil {
		da := &DocumentActual{
			Rows: a.Rows, RowsRead: a.RowsRead, Executions: a.Executions,
			LogicalReads: a.LogicalReads, PhysicalReads: a.PhysicalReads, ReadAheads: a.ReadAheads,
			Batches: a.Batches, Threads: make([]DocumentThread, 0, len(op.Threads)),
		}
		if a.HasTiming {
			da.ElapsedMs, da.CPUMs = ptr(a.ElapsedMs), ptr(a.CPUMs)
		}
		for _, t := range op.Threads {
			dt := DocumentThread{Thread: t.Thread, Rows: t.Rows, Executions: t.Executions,
				LogicalReads: t.LogicalReads, PhysicalReads: t.PhysicalReads, Batches: t.Batches}
			if t.HasTiming {
				dt.ElapsedMs, dt.CPUMs = ptr(t.ElapsedMs), ptr(t.CPUMs)
			}
			da.Threads = append(da.Threads, dt)
		}
		n.Actual = da
	}
	return n
}

func ptr(v int64) *int64 { return &v }

func documentWarnings(ws []Warning) []DocumentWarning {
	if len(ws) == 0 {
		return nil
	}
	out := make([]DocumentWarning, 0, len(ws))
	for _, w := range ws {
		out = append(out, DocumentWarning{Kind: w.Kind, Text: w.Text, Attributes: w.Attributes, Columns: w.Columns})
	}
	return out
}

// WriteTree writes an indented, human-readable operator tree of every
// statement.
func WriteTree(w io.Writer, p *Plan) error {
	var b strings.Builder
	if p.Version != "" || p.Build != "" {
		fmt.Fprintf(&b, "Showplan %s, build %s\n", orDash(p.Version), orDash(p.Build))
	}
	for _, st := range p.Statements {
		indent := ""
		for parent := st.ParentIndex; parent >= 0; parent = p.Statements[parent].ParentIndex {
			indent += "  "
		}
		fmt.Fprintf(&b, "\n%sStatement %d: %s", indent, st.Index+1, orDash(st.Type))
		if st.CursorOperation != "" {
			fmt.Fprintf(&b, " [%s]", st.CursorOperation)
		}
		if st.Function != "" {
			fmt.Fprintf(&b, " in %s", st.Function)
		}
		var facts []string
		if st.DOP > 1 {
			facts = append(facts, fmt.Sprintf("DOP %d", st.DOP))
		}
		if ts := st.TimeStats; ts != nil {
			facts = append(facts, fmt.Sprintf("elapsed %d ms, CPU %d ms", ts.ElapsedMs, ts.CPUMs))
		}
		if mg := st.MemoryGrant; mg != nil && mg.GrantedKB > 0 {
			facts = append(facts, fmt.Sprintf("grant %d KB (used %d KB)", mg.GrantedKB, mg.MaxUsedKB))
		}
		if len(facts) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(facts, "; "))
		}
		b.WriteByte('\n')
		if text := oneLine(st.Text, 120); text != "" {
			fmt.Fprintf(&b, "%s  %s\n", indent, text)
		}
		for _, wt := range st.WaitStats {
			fmt.Fprintf(&b, "%s  wait %s: %d ms over %d waits\n", indent, wt.Type, wt.TimeMs, wt.Count)
		}
		for _, wn := range st.Warnings {
			fmt.Fprintf(&b, "%s  ! %s\n", indent, wn.Text)
		}
		for _, op := range st.Operators {
			// Cap the indentation so that a pathologically deep plan cannot
			// make the output grow with the square of its depth.
			depth := min(op.Depth, maxTreeIndent)
			prefix := indent + "  " + strings.Repeat("  ", depth)
			if op.Depth > maxTreeIndent {
				prefix += fmt.Sprintf("(depth %d) ", op.Depth)
			}
			writeOperatorLine(&b, prefix, op)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

const maxTreeIndent = 64

func writeOperatorLine(b *strings.Builder, indent string, op *Operator) {
	fmt.Fprintf(b, "%s[%d] %s", indent, op.NodeID, op.DisplayName)
	if op.LogicalOp != "" && op.LogicalOp != op.PhysicalOp {
		fmt.Fprintf(b, " (%s)", op.LogicalOp)
	}
	if o := op.Object; o != nil {
		var parts []string
		for _, part := range []string{o.Schema, o.Table, o.Index} {
			if part != "" {
				parts = append(parts, part)
			}
		}
		name := strings.Join(parts, ".")
		if o.Alias != "" {
			name += " AS " + o.Alias
		}
		fmt.Fprintf(b, " %s", name)
	}
	s := op.Semantics
	fmt.Fprintf(b, "  {%s", s.Behavior)
	if len(s.BlockingInputs) > 0 && s.Behavior != Blocking {
		fmt.Fprintf(b, ", blocks on %v", s.BlockingInputs)
	}
	if !s.Known {
		b.WriteString(", not in table")
	}
	b.WriteString("}")
	if op.ExecutionMode == "Batch" {
		b.WriteString(" batch")
	}
	fmt.Fprintf(b, "  est %s rows", trimFloat(op.EstimateRows))
	if a := op.Actual; a != nil {
		fmt.Fprintf(b, ", actual %d rows in %d exec", a.Rows, a.Executions)
		if a.Threads > 1 {
			fmt.Fprintf(b, " on %d threads", a.Threads)
		}
		if a.HasTiming {
			fmt.Fprintf(b, ", %d ms", a.ElapsedMs)
		}
		if a.LogicalReads > 0 || a.PhysicalReads > 0 {
			fmt.Fprintf(b, ", %d logical/%d physical reads", a.LogicalReads, a.PhysicalReads)
		}
	}
	b.WriteByte('\n')
	for _, sp := range op.SeekPredicates {
		fmt.Fprintf(b, "%s    seek: %s\n", indent, oneLine(sp, 160))
	}
	if op.Predicate != "" {
		fmt.Fprintf(b, "%s    where: %s\n", indent, oneLine(op.Predicate, 160))
	}
	for _, w := range op.Warnings {
		fmt.Fprintf(b, "%s    ! %s\n", indent, oneLine(w.Text, 160))
	}
}

func trimFloat(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", f), "0"), ".")
}

func oneLine(s string, limit int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > limit {
		return string(r[:limit]) + "…"
	}
	return s
}

// WriteRules prints every operator's semantics, one block per operator:
// what it was classified as, the table entry's reason, any refinement from
// the operator's own XML, the caveat and the source (`queryreplay plan
// inspect --rules`).
func WriteRules(w io.Writer, p *Plan) error {
	var b strings.Builder
	for _, st := range p.Statements {
		if len(st.Operators) == 0 {
			continue
		}
		fmt.Fprintf(&b, "Statement %d: %s\n", st.Index+1, orDash(st.Type))
		for _, op := range st.Operators {
			s := op.Semantics
			fmt.Fprintf(&b, "  [%d] %s (%s): %s", op.NodeID, op.PhysicalOp, op.LogicalOp, s.Behavior)
			if len(s.BlockingInputs) > 0 {
				fmt.Fprintf(&b, " on %v", s.BlockingInputs)
			}
			b.WriteByte('\n')
			fmt.Fprintf(&b, "      rule: %s\n", s.Rule)
			if s.Caveat != "" {
				fmt.Fprintf(&b, "      caveat: %s\n", s.Caveat)
			}
			if s.Source != "" {
				fmt.Fprintf(&b, "      source: %s\n", s.Source)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

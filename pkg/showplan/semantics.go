package showplan

import (
	"fmt"
	"slices"
	"strings"
)

// Behavior says when an operator emits its first row relative to its inputs.
type Behavior string

const (
	// Streaming operators emit rows while they read their inputs.
	Streaming Behavior = "streaming"
	// Blocking operators read their whole input before the first row leaves.
	Blocking Behavior = "blocking"
	// Hybrid operators read some inputs whole (BlockingInputs) and stream the
	// others, like a hash join's build and probe inputs.
	Hybrid Behavior = "hybrid"
)

// Semantics is the blocking/streaming classification of one operator, the
// input the timeline needs to place build and probe phases
// (docs/design/tracing.md §8–9).
type Semantics struct {
	Behavior Behavior
	// BlockingInputs are the NodeIds of the children read to the end before
	// the operator's first output row.
	BlockingInputs []int
	// Rule explains how the decision was made: which table entry matched,
	// its reason, any refinement from the operator's own XML, the caveat
	// and the source, ending in "→ behavior".
	Rule string
	// Reason is the table entry's reason alone; Source says where it comes
	// from (a learn.microsoft.com page, the reference tool's classifier of docs/design/tracing.md §8, or "general
	// knowledge" when no source says so); Caveat, when set, says when the
	// classification is only approximately right.
	Reason string
	Source string
	Caveat string
	// Known is false when (PhysicalOp, LogicalOp) is not in the table; such an
	// operator is treated as streaming.
	Known bool
}

// inputRule is how an operator consumes its inputs.
type inputRule int

const (
	streamsAll           inputRule = iota // no input is read whole first
	blocksOnlyInput                       // the (single) input is read whole
	blocksFirstInput                      // build side: first child read whole, the rest streams
	blocksAllButLast                      // Sequence: every child but the last runs to completion first
	blocksEveryInput                      // no row before every input ended
	streamsUnlessNoGroup                  // Stream Aggregate: a scalar aggregate blocks
)

type semanticsEntry struct {
	rule   inputRule
	why    string
	source string
	caveat string
}

type opKey struct{ physical, logical string }

// anyLogical marks a per-PhysicalOp entry that applies to every LogicalOp of
// operators whose input handling does not depend on the logical operation
// (all join types of Nested Loops, all DML verbs of an index update, ...).
const anyLogical = "*"

// Sources of the table's facts.
const (
	operatorReference = "https://learn.microsoft.com/sql/relational-databases/showplan-logical-and-physical-operators-reference"
	joinsArticle      = "https://learn.microsoft.com/sql/relational-databases/performance/joins"
	xeTracing8        = "docs/design/tracing.md §8 (the reference tool's classifier)"
	generalKnowledge  = "general knowledge of SQL Server iterators; no Microsoft page says so"
)

// ref cites one operator's entry in the showplan operator reference.
func ref(operator string) string {
	return "showplan operator reference, " + operator + ": " + operatorReference
}

// semanticsTable is keyed by the exact showplan PhysicalOp and LogicalOp
// values (XSD PhysicalOpType/LogicalOpType). Every entry carries its reason
// and its source; TestSemanticsAgainstReference checks it against a list
// written independently from the same sources.
var semanticsTable = buildSemanticsTable()

func buildSemanticsTable() map[opKey]semanticsEntry {
	t := map[opKey]semanticsEntry{}
	add := func(physical string, logicals []string, e semanticsEntry) {
		for _, l := range logicals {
			t[opKey{physical, l}] = e
		}
	}

	// Blocking, one input.
	add("Sort", []string{"Sort", "Distinct Sort"}, semanticsEntry{blocksOnlyInput,
		"a sort must read all of its input before it can return the first row", ref("Sort, Distinct Sort"), ""})
	add("Sort", []string{"TopN Sort"}, semanticsEntry{blocksOnlyInput,
		"a top-N sort returns only the first N rows, but must have seen every row to know them", ref("Top N Sort"), ""})
	add("Hash Match", []string{"Aggregate"}, semanticsEntry{blocksOnlyInput,
		"a hash aggregate builds its hash table from the whole input and outputs the entries only when the table is built",
		ref("Hash Match (distinct or aggregate operators)"), ""})
	add("Hash Match", []string{"Partial Aggregate"}, semanticsEntry{blocksOnlyInput,
		"a partial (local) aggregate holds its groups in the hash table until its input ends or its memory fills, aggregating as many rows as it can without spilling",
		ref("Partial Aggregate") + "; " + ref("Hash Match"),
		"when the groups outgrow its memory it passes them on early, in bursts, before its input ends; the consume phase then overstates the wait"})
	add("Batch Hash Table Build", []string{"Batch Hash Table Build"}, semanticsEntry{blocksOnlyInput,
		"builds the batch-mode hash table from its whole input before the join above it probes it", generalKnowledge + " (listed in " + xeTracing8 + ")", ""})
	for _, spool := range []string{"Table Spool", "Index Spool", "Row Count Spool"} {
		add(spool, []string{"Eager Spool"}, semanticsEntry{blocksOnlyInput,
			"an eager spool consumes all rows of its input into the worktable when its parent asks for the first row", ref("Eager Spool"), ""})
		add(spool, []string{"Lazy Spool"}, semanticsEntry{streamsAll,
			"a lazy spool gets one input row each time its parent asks for a row, storing it as it passes", ref("Lazy Spool"), ""})
	}

	// Hybrid: first child (build input in showplan order) read whole, the
	// probe input streams and rows leave per probe row.
	add("Hash Match", []string{"Inner Join", "Left Outer Join", "Right Outer Join", "Full Outer Join",
		"Right Semi Join", "Right Anti Semi Join"}, semanticsEntry{blocksFirstInput,
		"a hash join builds its hash table from the first (top) input, then probes it with the second, outputting matches (or non-matches) as the join type dictates per probe row",
		ref("Hash Match") + "; " + joinsArticle, ""})
	add("Hash Match", []string{"Left Semi Join"}, semanticsEntry{blocksFirstInput,
		"a left semi hash join returns first-input (build) rows that have a match in the second input; a build row qualifies at its first matching probe row, so rows can leave while probing — no final pass is needed, unlike a left anti semi join",
		ref("Left Semi Join") + "; " + ref("Hash Match"),
		"the reference does not say whether a build row leaves at its first match or in a pass after the probe input; if the latter, the first row leaves only when probing ends"})
	add("Hash Match", []string{"Left Anti Semi Join"}, semanticsEntry{blocksEveryInput,
		"a left anti semi hash join returns build rows that found no match, known only after the whole probe input has been read",
		ref("Left Anti Semi Join") + "; " + ref("Hash Match"), ""})
	add("Hash Match", []string{"Union"}, semanticsEntry{blocksFirstInput,
		"a hash union builds on its first input, returns the non-matching rows of the second while probing, then scans the hash table",
		ref("Hash Match (union operator)"), ""})
	add("Hash Match", []string{"Flow Distinct"}, semanticsEntry{streamsAll,
		"a flow distinct returns each row as it is obtained from its input, unless it is a duplicate", ref("Flow Distinct"), ""})
	add("Adaptive Join", []string{anyLogical}, semanticsEntry{blocksFirstInput,
		"an adaptive join scans its whole first (build) input before choosing hash or nested loops by the row count; the chosen input then streams and the other one never runs",
		ref("Adaptive Join") + "; " + joinsArticle + " (Adaptive joins)", ""})

	// Hybrid: every child but the last.
	add("Sequence", []string{"Sequence"}, semanticsEntry{blocksAllButLast,
		"Sequence executes each input in turn, top to bottom, and returns only the rows of the last one", ref("Sequence"), ""})

	// Order-dependent but streaming.
	add("Stream Aggregate", []string{"Aggregate"}, semanticsEntry{streamsUnlessNoGroup,
		"a stream aggregate groups input ordered by its group columns, returning each group when the next one starts", ref("Stream Aggregate"), ""})
	add("Window Spool", []string{"Window Spool"}, semanticsEntry{streamsAll,
		"a window spool expands each row into the rows of its window as the frame completes, holding only the current frame",
		ref("Window Spool"),
		"with a RANGE frame (the default with ORDER BY) every ORDER BY peer belongs to the frame, so it blocks per tie group: a group's first row leaves only after its last row was read"})

	for _, s := range streamingEntries() {
		add(s.physical, s.logical, semanticsEntry{streamsAll, s.why, s.source, ""})
	}
	for _, dml := range []string{"Clustered Index Insert", "Clustered Index Update", "Clustered Index Delete",
		"Clustered Index Merge", "Clustered Update", "Index Insert", "Index Update", "Index Delete",
		"Table Insert", "Table Update", "Table Delete", "Table Merge", "Columnstore Index Insert",
		"Columnstore Index Update", "Columnstore Index Delete", "Columnstore Index Merge", "Online Index Insert"} {
		add(dml, []string{anyLogical}, semanticsEntry{streamsAll, "applies each incoming row to the index or table",
			ref("Insert, Update, Delete, " + dml), ""})
	}
	return t
}

type streamingEntry struct {
	physical string
	logical  []string
	why      string
	source   string
}

// streamingEntries lists the operators that return rows while they read
// their inputs, and the leaves.
func streamingEntries() []streamingEntry {
	leaf := func(physical string, logical []string, why string) streamingEntry {
		return streamingEntry{physical, logical, why, ref(physical)}
	}
	return []streamingEntry{
		{"Nested Loops", []string{anyLogical}, "the outer input drives; the inner input is searched for each outer row", ref("Nested Loops") + "; " + joinsArticle},
		{"Merge Join", []string{anyLogical}, "a merge join gets a row from each sorted input and compares them, in step", ref("Merge Join") + "; " + joinsArticle},
		{"Parallelism", []string{"Gather Streams", "Repartition Streams", "Distribute Streams"}, "an exchange forwards rows in packets between producer and consumer threads", ref("Parallelism") + "; " + xeTracing8},
		{"Bitmap", []string{"Bitmap Create"}, "builds the bitmap filter while rows pass through to its parent", ref("Bitmap, Bitmap Create")},
		{"Compute Scalar", []string{"Compute Scalar"}, "evaluates its expressions row by row", ref("Compute Scalar")},
		{"Filter", []string{"Filter"}, "returns, row by row, the rows that satisfy its predicate", ref("Filter")},
		{"Assert", []string{"Assert"}, "evaluates its expression for each input row and passes the row on", ref("Assert")},
		{"Top", []string{"Top"}, "returns the first rows of its input until the limit", ref("Top")},
		{"Segment", []string{"Segment"}, "marks group boundaries in sorted input as rows pass", ref("Segment")},
		{"Sequence Project", []string{"Compute Scalar", "Rank"}, "numbers the rows of its segmented, ordered input as they pass", ref("Sequence Project")},
		{"Concatenation", []string{"Concatenation"}, "returns every row of each input in turn", ref("Concatenation")},
		{"Merge Interval", []string{"Merge Interval"}, "merges adjacent seek ranges as they arrive", ref("Merge Interval")},
		{"Collapse", []string{"Collapse"}, "collapses adjacent delete/insert pairs of sorted input as they arrive", ref("Collapse")},
		{"Split", []string{"Split"}, "splits each update row into a delete and an insert", ref("Split")},
		{"Switch", []string{"Switch"}, "copies the input its expression chose to its output", ref("Switch")},
		{"Window Aggregate", []string{"Window Aggregate"}, "batch-mode window aggregate over sorted input, computed per partition as batches arrive", generalKnowledge},
		{"UDX", []string{"UDX"}, "extended (XML) operator working on the rows it is given", ref("UDX")},
		{"Foreign Key References Check", []string{"Foreign Key References Check"}, "checks each row against the referencing tables", generalKnowledge},
		{"Print", []string{"Print"}, "row by row", generalKnowledge},
		{"Put", []string{"Put"}, "row by row (PolyBase/external export)", generalKnowledge},
		{"Generic", []string{"Generic"}, "operator of unknown shape; streaming is the assumption that delays nothing", generalKnowledge},
		leaf("Constant Scan", []string{"Constant Scan"}, "leaf: produces rows from constants"),
		leaf("Table Scan", []string{"Table Scan"}, "leaf: reads the heap"),
		leaf("Clustered Index Scan", []string{"Clustered Index Scan"}, "leaf: reads the index"),
		leaf("Clustered Index Seek", []string{"Clustered Index Seek"}, "leaf: reads the index"),
		leaf("Index Scan", []string{"Index Scan"}, "leaf: reads the index"),
		leaf("Index Seek", []string{"Index Seek"}, "leaf: reads the index"),
		leaf("Columnstore Index Scan", []string{"Columnstore Index Scan", "Index Scan", "Clustered Index Scan"}, "leaf: reads row groups"),
		leaf("Key Lookup", []string{"Key Lookup", "Clustered Index Seek"}, "fetches one row per outer row"),
		leaf("RID Lookup", []string{"RID Lookup"}, "fetches one row per outer row"),
		leaf("Deleted Scan", []string{"Deleted Scan"}, "leaf: reads the deleted table"),
		leaf("Inserted Scan", []string{"Inserted Scan"}, "leaf: reads the inserted table"),
		leaf("Log Row Scan", []string{"Log Row Scan"}, "leaf: reads log rows"),
		leaf("Parameter Table Scan", []string{"Parameter Table Scan"}, "leaf: reads a table-valued parameter"),
		leaf("Table-valued function", []string{"Table-valued function"}, "leaf: evaluates the function into tempdb and returns its rows (the filling happens inside the leaf)"),
		{"TFP", []string{"TFP"}, "leaf: returns the function's rows", generalKnowledge},
		{"Extensible Column Store Scan", []string{"Extensible Column Store Scan"}, "leaf: reads an external column store", generalKnowledge},
		leaf("Remote Query", []string{"Remote Query"}, "returns remote rows as they arrive"),
		leaf("Remote Scan", []string{"Remote Scan"}, "returns remote rows as they arrive"),
		leaf("Remote Index Scan", []string{"Remote Index Scan"}, "returns remote rows as they arrive"),
		leaf("Remote Index Seek", []string{"Remote Index Seek"}, "returns remote rows as they arrive"),
		leaf("Remote Insert", []string{"Remote Insert"}, "modifies row by row"),
		leaf("Remote Update", []string{"Remote Update"}, "modifies row by row"),
		leaf("Remote Delete", []string{"Remote Delete"}, "modifies row by row"),
		{"External Select", []string{"External Select"}, "returns external rows as they arrive", generalKnowledge},
		{"External Extraction Scan", []string{"External Extraction Scan"}, "returns external rows as they arrive", generalKnowledge},
	}
}

// classify looks the operator up in semanticsTable and applies the
// refinements that depend on the operator's own XML.
func classify(op *Operator) Semantics {
	key := fmt.Sprintf("(%s, %s)", op.PhysicalOp, op.LogicalOp)
	entry, ok := semanticsTable[opKey{op.PhysicalOp, op.LogicalOp}]
	matched := "table " + key
	if !ok {
		entry, ok = semanticsTable[opKey{op.PhysicalOp, anyLogical}]
		matched = fmt.Sprintf("table (%s, any logical op)", op.PhysicalOp)
	}
	if !ok {
		return Semantics{Behavior: Streaming, BlockingInputs: []int{}, Known: false,
			Rule: key + " is not in the semantics table; treated as streaming"}
	}
	s := Semantics{Known: true, BlockingInputs: []int{}, Reason: entry.why, Source: entry.source, Caveat: entry.caveat}
	inputs := op.Inputs()
	ids := make([]int, len(inputs))
	for i, c := range inputs {
		ids[i] = c.NodeID
	}
	rule, notes := refine(op, entry.rule, ids)
	switch rule {
	case streamsAll:
		s.Behavior = Streaming
	case blocksOnlyInput, blocksEveryInput:
		s.Behavior = Blocking
		s.BlockingInputs = ids
	case blocksFirstInput:
		s.BlockingInputs = ids[:1]
		s.Behavior = Hybrid
		if len(ids) == 1 {
			s.Behavior = Blocking
		}
		notes = append(notes, fmt.Sprintf("build input = first child in showplan order (node %d)", ids[0]))
		if check := buildKeyCheck(op); check != "" {
			notes = append(notes, check)
		}
	case blocksAllButLast:
		s.BlockingInputs = slices.Clone(ids[:len(ids)-1])
		s.Behavior = Hybrid
		if len(ids) == 1 {
			s.Behavior = Streaming
		}
	}
	s.Rule = matched + ": " + entry.why
	if len(notes) > 0 {
		s.Rule += "; " + strings.Join(notes, "; ")
	}
	if s.Caveat != "" {
		s.Rule += "; caveat: " + s.Caveat
	}
	s.Rule += " [" + shortSource(s.Source) + "] → " + string(s.Behavior)
	return s
}

// shortSource names a source in a few words for the rule text; Semantics.Source
// keeps the full citation with its URL.
func shortSource(src string) string {
	var parts []string
	if strings.Contains(src, operatorReference) {
		parts = append(parts, "operator reference")
	}
	if strings.Contains(src, joinsArticle) {
		parts = append(parts, "joins article")
	}
	if strings.Contains(src, "docs/design/tracing.md") {
		parts = append(parts, "docs/design/tracing.md §8")
	}
	if strings.HasPrefix(src, "general knowledge") {
		parts = append([]string{"general knowledge"}, parts...)
	}
	return "source: " + strings.Join(parts, ", ")
}

// refine adjusts a table rule by what the operator's own XML says.
func refine(op *Operator, rule inputRule, ids []int) (inputRule, []string) {
	var notes []string
	if rule == streamsUnlessNoGroup {
		if op.HasGroupBy {
			rule = streamsAll
		} else {
			rule = blocksOnlyInput
			notes = append(notes, "no GROUP BY (scalar aggregate): one row after the whole input")
		}
	}
	if rule != streamsAll && len(ids) == 0 {
		note := "but it has no input in the plan"
		if op.PrimarySpoolNodeID >= 0 {
			note += fmt.Sprintf(": it replays the worktable filled by node %d", op.PrimarySpoolNodeID)
		}
		notes = append(notes, note)
		rule = streamsAll
	}
	if op.PhysicalOp == "Window Spool" && rangeFrameShape(op) {
		notes = append(notes, "two Segments below it (partition, then ORDER BY peers): a RANGE frame, so it holds each tie group")
	}
	if op.PhysicalOp == "Adaptive Join" && op.ActualJoinType != "" {
		if unused := op.UnusedAdaptiveInput(); unused != nil {
			notes = append(notes, fmt.Sprintf("ran as %s: input node %d never ran", op.ActualJoinType, unused.NodeID))
		}
	}
	return rule, notes
}

// rangeFrameShape tells a Window Spool over a Segment over a Segment: the
// upper Segment groups ORDER BY peers inside the partitions the lower one
// marks, which is how a RANGE frame's plan is shaped (a ROWS frame's spool
// sits on row numbers instead). The XML names no frame; this is the plan
// shape (general knowledge, not a documented attribute).
func rangeFrameShape(op *Operator) bool {
	in := op.Inputs()
	if len(in) != 1 || in[0].PhysicalOp != "Segment" {
		return false
	}
	below := in[0].Inputs()
	return len(below) == 1 && below[0].PhysicalOp == "Segment"
}

// AdaptiveInputs returns an adaptive join's inputs by role: the build input
// (read first, whatever the join becomes), the hash join's probe input and
// the nested loops' inner input, in that showplan order
// (https://learn.microsoft.com/sql/relational-databases/performance/joins,
// "Adaptive joins"). It returns nils for any other operator or shape.
func (op *Operator) AdaptiveInputs() (build, hashProbe, loopsInner *Operator) {
	in := op.Inputs()
	if op.PhysicalOp != "Adaptive Join" || len(in) != 3 {
		return nil, nil, nil
	}
	return in[0], in[1], in[2]
}

// UnusedAdaptiveInput is the input an adaptive join did not run, from its
// ActualJoinType: the nested loops' inner input when it ran as a hash join,
// the hash probe input when it ran as nested loops; nil when unknown.
func (op *Operator) UnusedAdaptiveInput() *Operator {
	_, probe, inner := op.AdaptiveInputs()
	switch strings.ReplaceAll(strings.ToLower(op.ActualJoinType), " ", "") {
	case "nestedloops":
		return probe
	case "hashmatch", "hashjoin":
		return inner
	}
	return nil
}

// buildKeyCheck reports whether the hash build keys name the table or
// alias of a data-access operator under the first child — a cross-check of
// the "first child builds" rule that needs no guessing.
func buildKeyCheck(op *Operator) string {
	inputs := op.Inputs()
	if len(op.HashKeysBuild) == 0 || len(inputs) < 2 {
		return ""
	}
	build := tablesBelow(inputs[0])
	probe := tablesBelow(inputs[1])
	inBuild, inProbe := 0, 0
	for _, k := range op.HashKeysBuild {
		q := columnQualifier(k)
		if q == "" {
			continue
		}
		if build[q] {
			inBuild++
		}
		if probe[q] {
			inProbe++
		}
	}
	switch {
	case inBuild > 0 && inProbe == 0:
		return "HashKeysBuild tables are read under the first child (agrees)"
	case inProbe > 0 && inBuild == 0:
		return "HashKeysBuild tables are read under the second child (disagrees with the first-child rule)"
	}
	return ""
}

// tablesBelow collects the lower-cased "schema.table" and alias names of
// every object read in the subtree.
func tablesBelow(root *Operator) map[string]bool {
	seen := map[string]bool{}
	stack := []*Operator{root}
	for len(stack) > 0 {
		op := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, o := range op.Objects {
			if o.Table != "" {
				seen[strings.ToLower(o.Schema+"."+o.Table)] = true
			}
			if o.Alias != "" {
				seen[strings.ToLower(o.Alias)] = true
			}
		}
		stack = append(stack, op.Children...)
	}
	return seen
}

// columnQualifier turns "[db].[dbo].[T].[c]" into "dbo.t" and "[a].[c]"
// into "a"; computed columns (Expr1002) have none.
func columnQualifier(col string) string {
	parts := strings.Split(col, "].[")
	for i := range parts {
		parts[i] = strings.Trim(parts[i], "[]")
	}
	switch len(parts) {
	case 2:
		return strings.ToLower(parts[0])
	case 3:
		return strings.ToLower(parts[0] + "." + parts[1])
	case 4:
		return strings.ToLower(parts[1] + "." + parts[2])
	}
	return ""
}

// Inputs returns the children that feed rows into op, in showplan order
// (for a hash join: build first, then probe; for nested loops: outer, then
// inner). RelOps of scalar subqueries inside op's expressions are children
// but not inputs.
func (op *Operator) Inputs() []*Operator {
	inputs := make([]*Operator, 0, len(op.Children))
	for _, c := range op.Children {
		if !c.InExpression {
			inputs = append(inputs, c)
		}
	}
	return inputs
}

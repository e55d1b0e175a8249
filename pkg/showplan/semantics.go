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
// (xe-tracing.md §8–9).
type Semantics struct {
	Behavior Behavior
	// BlockingInputs are the NodeIds of the children read to the end before
	// the operator's first output row.
	BlockingInputs []int
	// Rule explains how the decision was made: which table entry matched and
	// any refinement from the operator's own XML.
	Rule string
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
	rule inputRule
	why  string
}

type opKey struct{ physical, logical string }

// anyLogical marks a per-PhysicalOp entry that applies to every LogicalOp of
// operators whose input handling does not depend on the logical operation
// (all join types of Nested Loops, all DML verbs of an index update, ...).
const anyLogical = "*"

// semanticsTable is keyed by the exact showplan PhysicalOp and LogicalOp
// values (XSD PhysicalOpType/LogicalOpType). The facts are SQL Server
// iterator behaviour as documented in the showplan operator reference
// (https://learn.microsoft.com/sql/relational-databases/showplan-logical-and-physical-operators-reference)
// and xe-tracing.md §8; entries marked "(general knowledge)" are not in
// those sources.
var semanticsTable = buildSemanticsTable()

func buildSemanticsTable() map[opKey]semanticsEntry {
	t := map[opKey]semanticsEntry{}
	add := func(physical string, logicals []string, rule inputRule, why string) {
		for _, l := range logicals {
			t[opKey{physical, l}] = semanticsEntry{rule, why}
		}
	}

	// Blocking, one input.
	add("Sort", []string{"Sort", "Distinct Sort", "TopN Sort"}, blocksOnlyInput,
		"a sort must read all of its input before it can return the first row")
	add("Hash Match", []string{"Aggregate"}, blocksOnlyInput,
		"a hash aggregate returns groups only after its whole input has been aggregated")
	add("Batch Hash Table Build", []string{"Batch Hash Table Build"}, blocksOnlyInput,
		"builds the batch-mode hash table from its whole input before the join probes it")
	for _, spool := range []string{"Table Spool", "Index Spool", "Row Count Spool"} {
		add(spool, []string{"Eager Spool"}, blocksOnlyInput,
			"an eager spool writes its whole input to the worktable before returning rows")
		add(spool, []string{"Lazy Spool"}, streamsAll,
			"a lazy spool stores rows as they pass through")
	}

	// Hybrid: first child (build input in showplan order) read whole.
	// For hash joins the first (top) input builds and the second probes; the
	// logical join type decides which input's rows are returned [D, Hash
	// Match showplan operator,
	// https://learn.microsoft.com/previous-versions/sql/sql-server-2008/ms189582(v=sql.100)].
	add("Hash Match", []string{"Inner Join", "Left Outer Join", "Right Outer Join", "Full Outer Join",
		"Right Semi Join", "Right Anti Semi Join"}, blocksFirstInput,
		"a hash join builds its hash table from the first child (build input), then streams the probe input, returning matches (or non-matches) per probe row")
	add("Hash Match", []string{"Left Anti Semi Join"}, blocksEveryInput,
		"a left anti semi hash join returns build rows that found no match, known only after the probe input ended")
	add("Hash Match", []string{"Left Semi Join"}, blocksEveryInput,
		"a left semi hash join returns build rows that found a match; treated as known only after the probe input ended (general knowledge: a build row could leave at its first match)")
	add("Hash Match", []string{"Union"}, blocksFirstInput,
		"a hash union builds on its first input, returns non-matching probe rows while probing, then the hash table [D]")
	add("Hash Match", []string{"Partial Aggregate"}, streamsAll,
		"a partial (local) aggregate does not hold back its whole input; treated as streaming as in xe-tracing.md §8 (general knowledge: it passes groups on when its memory fills)")
	add("Hash Match", []string{"Flow Distinct"}, streamsAll,
		"a flow distinct returns each new key as soon as it is first seen")
	// Adaptive join: the build input is read before the join picks hash or
	// nested loops by comparing its row count with AdaptiveThresholdRows [D,
	// https://learn.microsoft.com/sql/relational-databases/performance/joins, "Adaptive joins"].
	add("Adaptive Join", []string{anyLogical}, blocksFirstInput,
		"an adaptive join reads its whole first (build) input to compare its row count with the threshold, then hashes or loops; the other inputs stream")

	// Hybrid: every child but the last.
	add("Sequence", []string{"Sequence"}, blocksAllButLast,
		"Sequence runs each input to completion in order and returns the rows of the last one")

	// Order-dependent but streaming.
	add("Stream Aggregate", []string{"Aggregate"}, streamsUnlessNoGroup,
		"a stream aggregate returns each group when the next one starts")

	// Streaming operators.
	for _, s := range []struct {
		physical string
		logical  []string
		why      string
	}{
		{"Nested Loops", []string{anyLogical}, "the outer input drives; the inner input is re-read per outer row"},
		{"Merge Join", []string{anyLogical}, "a merge join reads both sorted inputs in step"},
		{"Parallelism", []string{"Gather Streams", "Repartition Streams", "Distribute Streams"}, "an exchange forwards rows in packets between threads"},
		{"Bitmap", []string{"Bitmap Create"}, "builds the bitmap while rows pass through"},
		{"Compute Scalar", []string{"Compute Scalar"}, "row by row"},
		{"Filter", []string{"Filter"}, "row by row"},
		{"Assert", []string{"Assert"}, "row by row"},
		{"Top", []string{"Top"}, "returns rows until the limit"},
		{"Segment", []string{"Segment"}, "marks group boundaries in sorted input"},
		{"Sequence Project", []string{"Compute Scalar", "Rank"}, "numbers rows of the segmented input as they pass"},
		{"Concatenation", []string{"Concatenation"}, "returns the rows of each input in turn"},
		{"Merge Interval", []string{"Merge Interval"}, "merges adjacent ranges as they arrive"},
		{"Collapse", []string{"Collapse"}, "collapses adjacent delete/insert pairs as they arrive"},
		{"Split", []string{"Split"}, "splits each update row into delete and insert"},
		{"Switch", []string{"Switch"}, "forwards the chosen input"},
		{"Window Spool", []string{"Window Spool"}, "holds only the current window frame"},
		{"Window Aggregate", []string{"Window Aggregate"}, "batch-mode window aggregate over sorted input, per partition"},
		{"UDX", []string{"UDX"}, "extended operator; treated as streaming (general knowledge)"},
		{"Foreign Key References Check", []string{"Foreign Key References Check"}, "checks each row"},
		{"Print", []string{"Print"}, "row by row"},
		{"Put", []string{"Put"}, "row by row"},
		{"Generic", []string{"Generic"}, "treated as streaming (general knowledge)"},
		{"Constant Scan", []string{"Constant Scan"}, "leaf: produces rows"},
		{"Table Scan", []string{"Table Scan"}, "leaf: reads the heap"},
		{"Clustered Index Scan", []string{"Clustered Index Scan"}, "leaf: reads the index"},
		{"Clustered Index Seek", []string{"Clustered Index Seek"}, "leaf: reads the index"},
		{"Index Scan", []string{"Index Scan"}, "leaf: reads the index"},
		{"Index Seek", []string{"Index Seek"}, "leaf: reads the index"},
		{"Columnstore Index Scan", []string{"Columnstore Index Scan", "Index Scan", "Clustered Index Scan"}, "leaf: reads row groups"},
		{"Key Lookup", []string{"Key Lookup", "Clustered Index Seek"}, "fetches one row per outer row"},
		{"RID Lookup", []string{"RID Lookup"}, "fetches one row per outer row"},
		{"Deleted Scan", []string{"Deleted Scan"}, "leaf: reads the deleted rows"},
		{"Inserted Scan", []string{"Inserted Scan"}, "leaf: reads the inserted rows"},
		{"Log Row Scan", []string{"Log Row Scan"}, "leaf: reads log rows"},
		{"Parameter Table Scan", []string{"Parameter Table Scan"}, "leaf: reads a table-valued parameter"},
		{"Table-valued function", []string{"Table-valued function"}, "leaf: returns the function's rows (a multi-statement TVF fills its table first, inside the leaf)"},
		{"TFP", []string{"TFP"}, "leaf: returns the function's rows"},
		{"Extensible Column Store Scan", []string{"Extensible Column Store Scan"}, "leaf"},
		{"Remote Query", []string{"Remote Query"}, "returns remote rows as they arrive"},
		{"Remote Scan", []string{"Remote Scan"}, "returns remote rows as they arrive"},
		{"Remote Index Scan", []string{"Remote Index Scan"}, "returns remote rows as they arrive"},
		{"Remote Index Seek", []string{"Remote Index Seek"}, "returns remote rows as they arrive"},
		{"Remote Insert", []string{"Remote Insert"}, "modifies row by row"},
		{"Remote Update", []string{"Remote Update"}, "modifies row by row"},
		{"Remote Delete", []string{"Remote Delete"}, "modifies row by row"},
		{"External Select", []string{"External Select"}, "returns external rows as they arrive"},
		{"External Extraction Scan", []string{"External Extraction Scan"}, "returns external rows as they arrive"},
	} {
		add(s.physical, s.logical, streamsAll, s.why)
	}
	for _, dml := range []string{"Clustered Index Insert", "Clustered Index Update", "Clustered Index Delete",
		"Clustered Index Merge", "Clustered Update", "Index Insert", "Index Update", "Index Delete",
		"Table Insert", "Table Update", "Table Delete", "Table Merge", "Columnstore Index Insert",
		"Columnstore Index Update", "Columnstore Index Delete", "Columnstore Index Merge", "Online Index Insert"} {
		add(dml, []string{anyLogical}, streamsAll, "applies each incoming row to the index or table")
	}
	return t
}

// classify looks the operator up in semanticsTable and applies the
// refinements that depend on the operator's own XML.
func classify(op *Operator) Semantics {
	key := fmt.Sprintf("(%s, %s)", op.PhysicalOp, op.LogicalOp)
	entry, ok := semanticsTable[opKey{op.PhysicalOp, op.LogicalOp}]
	source := "table " + key
	if !ok {
		entry, ok = semanticsTable[opKey{op.PhysicalOp, anyLogical}]
		source = fmt.Sprintf("table (%s, any logical op)", op.PhysicalOp)
	}
	if !ok {
		return Semantics{Behavior: Streaming, BlockingInputs: []int{}, Known: false,
			Rule: key + " is not in the semantics table; treated as streaming"}
	}
	s := Semantics{Known: true, BlockingInputs: []int{}}
	inputs := op.Inputs()
	ids := make([]int, len(inputs))
	for i, c := range inputs {
		ids[i] = c.NodeID
	}
	rule := entry.rule
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
	s.Rule = source + ": " + entry.why
	if len(notes) > 0 {
		s.Rule += "; " + strings.Join(notes, "; ")
	}
	s.Rule += " → " + string(s.Behavior)
	return s
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

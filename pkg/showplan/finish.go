package showplan

import "strings"

// finishStatement derives what needs the whole tree: own cost, runtime
// totals, display names, derived warnings and semantics.
func finishStatement(st *Statement) {
	st.IsStatsMaintenance = strings.Contains(st.Text, "StatMan") || strings.Contains(st.Text, "_MS_UPDSTATS_TBL")
	for _, op := range st.Operators {
		if len(op.Objects) > 0 {
			op.Object = &op.Objects[0]
		}
		childCost := 0.0
		for _, c := range op.Children {
			childCost += c.SubtreeCost
		}
		op.OwnCost = max(op.SubtreeCost-childCost, 0)
		switch op.PhysicalOp {
		case "Key Lookup":
			op.IsKeyLookup = true
		case "RID Lookup":
			// A RID Lookup's IndexScan carries Lookup="1" too; it reads
			// a heap by row id, and SSMS calls it RID Lookup.
			op.IsKeyLookup = false
		}
		op.DisplayName = displayName(op)
		op.Actual = totals(op.Threads)
		op.ExecutionMode = executionMode(op)
		for _, t := range op.Threads {
			if t.ActualJoinType != "" {
				op.ActualJoinType = t.ActualJoinType
				break
			}
		}
		addImplicitConversionWarning(op)
		op.Semantics = classify(op)
	}
}

func displayName(op *Operator) string {
	switch {
	case op.IsKeyLookup:
		return "Key Lookup"
	case op.PhysicalOp == "Index Scan" && op.Object != nil && op.Object.Storage == "ColumnStore":
		return "Columnstore Index Scan"
	}
	return op.PhysicalOp
}

func executionMode(op *Operator) string {
	for _, t := range op.Threads {
		if t.ExecutionMode != "" {
			return t.ExecutionMode
		}
	}
	if op.EstimatedExecutionMode != "" {
		return op.EstimatedExecutionMode
	}
	return "Row"
}

func totals(threads []ThreadCounters) *Totals {
	if len(threads) == 0 {
		return nil
	}
	t := &Totals{Threads: len(threads)}
	for _, c := range threads {
		t.Rows += c.Rows
		t.RowsRead += c.RowsRead
		t.Executions += c.Executions
		t.EndOfScans += c.EndOfScans
		t.Rebinds += c.Rebinds
		t.Rewinds += c.Rewinds
		t.Batches += c.Batches
		t.HasTiming = t.HasTiming || c.HasTiming
		t.ElapsedMs = max(t.ElapsedMs, c.ElapsedMs)
		t.CPUMs += c.CPUMs
		t.Scans += c.Scans
		t.LogicalReads += c.LogicalReads
		t.PhysicalReads += c.PhysicalReads
		t.ReadAheads += c.ReadAheads
		t.LobLogicalReads += c.LobLogicalReads
		t.LobPhysicalReads += c.LobPhysicalReads
		t.LobReadAheads += c.LobReadAheads
		t.SegmentReads += c.SegmentReads
		t.SegmentSkips += c.SegmentSkips
		t.UsedMemoryGrantKB += c.UsedMemoryGrantKB
	}
	return t
}

// addImplicitConversionWarning flags a CONVERT_IMPLICIT in the operator's
// own seek or residual predicates: an implicit conversion there is the usual
// reason a seek became a scan or an estimate went wrong. SQL Server reports
// the plan-level PlanAffectingConvert warning only on the statement.
func addImplicitConversionWarning(op *Operator) {
	texts := append([]string{op.Predicate, op.ProbeResidual}, op.SeekPredicates...)
	for _, t := range texts {
		if i := strings.Index(t, "CONVERT_IMPLICIT("); i >= 0 {
			expr := t[i:]
			if len(expr) > 200 {
				expr = expr[:200] + "…"
			}
			op.Warnings = append(op.Warnings, Warning{
				Kind:       "ImplicitConversion",
				Text:       "Implicit conversion in a predicate: " + expr,
				Attributes: map[string]string{"Derived": "predicate text contains CONVERT_IMPLICIT"},
			})
			return
		}
	}
}

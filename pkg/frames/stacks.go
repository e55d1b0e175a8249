package frames

import (
	"context"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/queryreplay/queryreplay/pkg/callstack"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// frameOf turns a stored frame back into pkg/callstack's form: a frame the
// tracer resolved arrives "already symbolised", so classifying it needs no
// symbols.
func frameOf(f *timeline.StackFrame) callstack.Frame {
	return callstack.Frame{ID: -1, Module: f.Module, PDB: f.PDB, GUID: f.GUID, Age: f.Age, RVA: f.RVA, HasRVA: f.HasRVA,
		Address: f.Address, HasAddress: f.Address != 0, Symbol: f.Symbol, SymbolOffset: f.Offset}
}

// stackResolver classifies stored frames (pkg/callstack's rules).
func stackResolver() *callstack.Resolver {
	return &callstack.Resolver{Classifier: callstack.DefaultClassifier()}
}

// stackTree merges the trace's stack table into one call tree, each stack
// weighted by the events that carried it, and classifies its nodes: the
// Flame Graph of the whole trace.
func (v *view) stackTree() *callstack.Tree {
	if len(v.tr.Stacks) == 0 {
		return nil
	}
	var t callstack.Tree
	for i := range v.tr.Stacks {
		s := &v.tr.Stacks[i]
		cs := callstack.Stack{Count: int64(max(s.Events, 1)), Frames: make([]callstack.Frame, len(s.Frames))}
		for j := range s.Frames {
			cs.Frames[j] = frameOf(&s.Frames[j])
		}
		t.Add(cs)
	}
	// Stored frames resolve without lookups: this cannot fail.
	_, _ = t.Resolve(context.Background(), stackResolver())
	return &t
}

// stackFramesFrame is every distinct stack of the trace, one row per
// frame, innermost first: what the panel shows for the selected event
// (lane rows name their stack by stackId).
func (v *view) stackFramesFrame() *data.Frame {
	r := stackResolver()
	var (
		ids, idx, events, offsets              []int64
		labels, modules, symbols, badges       []string
		categories, moduleBadges, ops, reasons []string
		infra                                  []bool
		resolved                               int
	)
	for i := range v.tr.Stacks {
		s := &v.tr.Stacks[i]
		rs := make([]callstack.Resolved, len(s.Frames))
		for j := range s.Frames {
			_ = r.ResolveInto(context.Background(), frameOf(&s.Frames[j]), &rs[j])
		}
		callstack.AttributeSpinlocks(rs)
		for j := range rs {
			f, c := &s.Frames[j], rs[j].Class
			ids, idx, events = append(ids, int64(s.ID)), append(idx, int64(j)), append(events, int64(s.Events))
			labels, modules, symbols = append(labels, rs[j].String()), append(modules, rs[j].Module), append(symbols, f.Symbol)
			offsets = append(offsets, int64(f.Offset))
			cat, disp := c.Category, c.CategoryDisplay
			if f.Symbol == "" {
				cat, disp = "", ""
			} else {
				resolved++
			}
			if rs[j].Owner != "" {
				disp += " (" + rs[j].OwnerDisplay + ")"
			}
			badges, categories, moduleBadges = append(badges, cat), append(categories, disp), append(moduleBadges, c.ModuleBadge)
			ops, infra, reasons = append(ops, c.OperatorBadge), append(infra, c.Infrastructure), append(reasons, f.Unresolved)
		}
	}
	f := data.NewFrame("stack_frames",
		data.NewField("stackId", nil, ids),
		data.NewField("frame", nil, idx),
		data.NewField("label", nil, labels),
		data.NewField("module", nil, modules),
		data.NewField("symbol", nil, symbols),
		data.NewField("offset", nil, offsets),
		data.NewField("badge", nil, badges),
		data.NewField("category", nil, categories),
		data.NewField("moduleBadge", nil, moduleBadges),
		data.NewField("operatorBadge", nil, ops),
		data.NewField("infrastructure", nil, infra),
		data.NewField("events", nil, events).SetConfig(&data.FieldConfig{Unit: "short"}),
		data.NewField("unresolved", nil, reasons),
	)
	f.Meta = v.meta(custom{"stacks": len(v.tr.Stacks), "frames": len(ids), "resolved": resolved})
	f.Meta.PreferredVisualization = data.VisTypeTable
	return f
}

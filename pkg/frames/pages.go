package frames

import (
	"cmp"
	"slices"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/queryreplay/queryreplay/pkg/callstack"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

type pageKey struct{ db, file, page uint64 }

type pageAgg struct {
	key           pageKey
	object        string
	reads, writes int64
	first, last   int64
	firstNode     timeline.NodeID
}

// pagesFrame aggregates the window's page reads and writes per page.
func (v *view) pagesFrame() *data.Frame {
	byKey := map[pageKey]*pageAgg{}
	add := func(es []timeline.PageEvent, write bool) {
		s := pageSpec(&v.tr.Lanes, "")
		inWindow(v, &s, es, func(i int) {
			e := &es[i]
			k := pageKey{e.DatabaseID, e.FileID, e.PageID}
			a := byKey[k]
			if a == nil {
				a = &pageAgg{key: k, first: e.T, last: e.T, firstNode: e.NodeID, object: objectOr(v.tr.ObjectOf(e.Object), "")}
				byKey[k] = a
			}
			if e.T < a.first {
				a.first, a.firstNode = e.T, e.NodeID
			}
			a.last = max(a.last, e.T)
			if a.object == "" {
				a.object = v.tr.ObjectOf(e.Object).String() // "" for none
			}
			if write {
				a.writes++
			} else {
				a.reads++
			}
		})
	}
	add(v.tr.Lanes.Read, false)
	add(v.tr.Lanes.Write, true)
	pages := make([]*pageAgg, 0, len(byKey))
	for _, a := range byKey {
		pages = append(pages, a)
	}
	total := len(pages)
	pages = mostTouched(pages, v.budget)
	slices.SortFunc(pages, func(x, y *pageAgg) int {
		return cmp.Or(cmp.Compare(x.key.db, y.key.db), cmp.Compare(x.key.file, y.key.file), cmp.Compare(x.key.page, y.key.page))
	})
	n := len(pages)
	dbs, files, nums := make([]int64, n), make([]int64, n), make([]int64, n)
	ids, objs := make([]string, n), make([]string, n)
	reads, writes, firsts, lasts := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	nodes := make([]*int64, n)
	// Page-header facts the tracer read (sys.dm_db_page_info); null for
	// pages it has none of.
	byPage := make(map[pageKey]*timeline.PageHeader, len(v.tr.Pages))
	for i := range v.tr.Pages {
		h := &v.tr.Pages[i]
		byPage[pageKey{h.DatabaseID, h.FileID, h.PageID}] = h
	}
	types, prevs, nexts := make([]*string, n), make([]*string, n), make([]*string, n)
	levels := make([]*int64, n)
	headers := 0
	for i, a := range pages {
		h := byPage[a.key]
		if h == nil && a.key.db != 0 {
			h = byPage[pageKey{0, a.key.file, a.key.page}]
		}
		if h == nil {
			continue
		}
		headers++
		typ, lvl := h.Type, int64(h.Level)
		types[i], levels[i] = &typ, &lvl
		prev, next := pageID(h.PrevFile, h.PrevPage), pageID(h.NextFile, h.NextPage)
		if h.PrevPage != 0 {
			prevs[i] = &prev
		}
		if h.NextPage != 0 {
			nexts[i] = &next
		}
	}
	for i, a := range pages {
		dbs[i], files[i], nums[i] = int64(a.key.db), int64(a.key.file), int64(a.key.page)
		ids[i], objs[i] = pageID(a.key.file, a.key.page), a.object
		reads[i], writes[i], firsts[i], lasts[i] = a.reads, a.writes, a.first, a.last
		nodes[i] = nodePtr(a.firstNode)
	}
	f := data.NewFrame("pages",
		data.NewField("database", nil, dbs),
		data.NewField("file", nil, files),
		data.NewField("page", nil, nums),
		data.NewField("pageId", nil, ids),
		data.NewField("object", nil, objs),
		data.NewField("reads", nil, reads),
		data.NewField("writes", nil, writes),
		unit(data.NewField("firstUs", nil, firsts), "µs"),
		unit(data.NewField("lastUs", nil, lasts), "µs"),
		data.NewField("nodeId", nil, nodes),
		data.NewField("pageType", nil, types),
		data.NewField("indexLevel", nil, levels),
		data.NewField("prevPage", nil, prevs),
		data.NewField("nextPage", nil, nexts),
	)
	f.Meta = v.meta(custom{"window": v.win, "pageInfo": len(v.tr.Pages) > 0, "headers": headers,
		"pagesTotal": total, "pagesShown": n})
	f.Meta.PreferredVisualization = data.VisTypeTable
	return f
}

// mostTouched keeps, when there are more pages than the row budget, the
// budget pages read or written most often (the earliest first among
// equals): a million-event trace touches hundreds of thousands of pages,
// and the frame must stay within maxDataPoints like every other.
func mostTouched(pages []*pageAgg, budget int) []*pageAgg {
	if len(pages) <= budget {
		return pages
	}
	slices.SortFunc(pages, func(x, y *pageAgg) int {
		return cmp.Or(cmp.Compare(y.reads+y.writes, x.reads+x.writes), cmp.Compare(x.first, y.first))
	})
	return pages[:budget]
}

// logRecordsFrame holds the fn_dblog records a modification wrote.
func (v *view) logRecordsFrame() *data.Frame {
	recs := v.src.Bundle.Result.LogRecords
	n := len(recs)
	lsn, op, ctx, txn, page := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	au, slot := make([]int64, n), make([]int64, n)
	for i, r := range recs {
		lsn[i], op[i], ctx[i], txn[i], page[i] = r.LSN, r.Operation, r.Context, r.TransactionID, r.PageID
		au[i], slot[i] = r.AllocUnitID, r.SlotID
	}
	f := data.NewFrame("log_records",
		data.NewField("lsn", nil, lsn),
		data.NewField("operation", nil, op),
		data.NewField("context", nil, ctx),
		data.NewField("transactionId", nil, txn),
		data.NewField("pageId", nil, page),
		data.NewField("allocUnitId", nil, au),
		data.NewField("slotId", nil, slot),
	)
	f.Meta = v.meta(custom{"source": "fn_dblog"})
	f.Meta.PreferredVisualization = data.VisTypeTable
	return f
}

// CallStacks renders a call tree as a Flame Graph frame: one root ("all
// stacks") at level 0, then every node depth-first in pre-order, value the
// events through it and self the events that stopped there.
func CallStacks(traceID string, t *callstack.Tree) *data.Frame {
	labels := []string{"all stacks"}
	levels := []int64{0}
	values := []int64{t.Root.Count}
	selfs := []int64{self(&t.Root)}
	badges, modules := []string{""}, []string{""}
	t.Walk(func(n *callstack.Node, depth int) {
		label, badge, module := n.Frame.String(), "", ""
		if n.Resolved != nil {
			label, badge, module = n.Resolved.String(), n.Resolved.Class.Category, n.Resolved.Class.ModuleBadge
		}
		labels, levels = append(labels, label), append(levels, int64(depth))
		values, selfs = append(values, n.Count), append(selfs, self(n))
		badges, modules = append(badges, badge), append(modules, module)
	})
	f := data.NewFrame("callstacks",
		data.NewField("label", nil, labels),
		data.NewField("level", nil, levels),
		data.NewField("value", nil, values).SetConfig(&data.FieldConfig{Unit: "short"}),
		data.NewField("self", nil, selfs).SetConfig(&data.FieldConfig{Unit: "short"}),
		data.NewField("badge", nil, badges),
		data.NewField("moduleBadge", nil, modules),
	)
	f.Meta = &data.FrameMeta{PreferredVisualization: data.VisTypeFlameGraph, Custom: custom{"traceId": traceID, "stacks": t.Stacks}}
	return f
}

func self(n *callstack.Node) int64 {
	s := n.Count
	for _, c := range n.Children {
		s -= c.Count
	}
	return max(s, 0)
}

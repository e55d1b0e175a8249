package findings

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// splitKinds explains the page_split splitOperation values
// (docs/design/event-fields.md §2.6).
var splitKinds = map[string]string{
	"SPLIT_FOR_INSERT":        "a full page split to make room for an inserted row",
	"SPLIT_FOR_UPDATE":        "a full page split because an updated row grew",
	"SPLIT_FOR_DELETE":        "a split during a delete",
	"SPLIT_FOR_GHOST":         "a split while cleaning up ghost records",
	"SPLIT_FOR_INTERNAL_NODE": "an index page above the leaf split: the index grew wider (normal growth)",
	"SPLIT_FOR_ROOT_NODE":     "the root page split: the index grew a level (normal growth)",
	"SPLIT_EMPTY_BTREE":       "the first page of an empty index",
	"SPLIT_FOR_REVERT":        "a split while reverting a change",
	"SPLIT_FOR_NEW_PAGE":      "a new page at the end of the index (an append, not a mid-page split)",
}

type splitGroup struct {
	object, kind string
	idx          []int
}

// pageSplits reports the splits on each index, by split kind.
func pageSplits(a *analysis) []Finding {
	var groups []*splitGroup
	find := func(obj, kind string) *splitGroup {
		for _, g := range groups {
			if g.object == obj && g.kind == kind {
				return g
			}
		}
		g := &splitGroup{object: obj, kind: kind}
		groups = append(groups, g)
		return g
	}
	for i, s := range a.in.Trace.Lanes.Split {
		obj := a.in.Trace.ObjectOf(s.Object).String()
		if obj == "" {
			obj = "an unresolved index"
		}
		kind := s.Operation
		if kind == "" {
			kind = "page_split"
		}
		g := find(obj, kind)
		g.idx = append(g.idx, i)
	}
	var out []Finding
	for _, g := range groups {
		if len(g.idx) < a.cfg.MinSplits {
			continue
		}
		n := int64(len(g.idx))
		f := Finding{
			Title:    fmt.Sprintf("%s on %s (%s)", plural(n, "page split", "page splits"), g.object, g.kind),
			Severity: SeverityInfo,
			pending:  ev(LaneSplit, g.idx),
			Numbers:  []Number{num("splits", float64(n), "count", "events")},
			Hint: "A split moves about half of a full page's rows to a new page and logs both pages. Inserts into the middle of an " +
				"index, or updates that widen rows, cause them: a lower FILLFACTOR leaves room on each page, and an ever-increasing " +
				"key makes inserts append at the end instead.",
			Reference: refFillFactor,
		}
		if len(g.idx) >= a.cfg.SplitsWarning {
			f.Severity = SeverityWarning
		}
		var detail []string
		if d, ok := splitKinds[strings.ToUpper(g.kind)]; ok {
			detail = append(detail, strings.ToUpper(d[:1])+d[1:]+".")
		}
		if a.in.Run.RolledBack {
			detail = append(detail, "The modification was rolled back; the rows went back, the new pages stay allocated.")
		}
		f.Detail = strings.Join(detail, " ")
		f.Operators = a.opRefs(a.nodesOf(f.pending)...)
		out = append(out, f)
	}
	return out
}

// logVolume reports the log a modification wrote: transaction_log
// events (with their sizes) and the fn_dblog records the tracer read
// before the rollback.
func logVolume(a *analysis) []Finding {
	l := a.in.Trace.Lanes.Log
	var idx []int
	var bytes int64
	ops := map[string]int64{}
	for i, e := range l {
		if e.Kind != "record" {
			continue
		}
		idx = append(idx, i)
		bytes += int64(e.Size)
		ops[e.Operation]++
	}
	// One source for the count and the operations: fn_dblog (the log's
	// own listing) when the run read it, else the trace's records; the
	// other count is said apart.
	dblog := int64(len(a.in.Run.LogRecords))
	traced := int64(len(idx))
	records, other, otherWhat := traced, dblog, "fn_dblog lists %s for the transaction."
	if dblog > 0 {
		clear(ops)
		for _, r := range a.in.Run.LogRecords {
			ops[r.Operation]++
		}
		records, other, otherWhat = dblog, traced, "The trace caught %s as transaction_log events."
	}
	if records == 0 || records < int64(a.cfg.MinLogRecords) {
		return nil
	}
	who := "The statement"
	if a.in.Run.Modification {
		who = "The modification"
	}
	f := Finding{Severity: SeverityInfo, pending: ev(LaneLog, idx),
		Numbers: []Number{num("logRecords", float64(len(idx)), "count", "events"), num("fnDblogRecords", float64(dblog), "count", "run")}}
	f.Title = fmt.Sprintf("%s wrote %s", who, plural(records, "log record", "log records"))
	if bytes > 0 {
		f.Title += " (" + Bytes(bytes) + ")"
		f.Numbers = append(f.Numbers, num("logBytes", float64(bytes), "bytes", "events"))
	}
	if a.in.Run.RolledBack {
		f.Title += " before its rollback"
	}
	if bytes >= a.cfg.LogBytesWarning {
		f.Severity = SeverityWarning
	}
	f.Detail = fmt.Sprintf("Of the %s: %s.", plural(records, "record", "records"), topOps(ops, 3, records))
	if other > 0 && other != records {
		f.Detail += " " + fmt.Sprintf(otherWhat, plural(other, "record", "records"))
	}
	nodes := a.nodesOf(f.pending)
	slices.Sort(nodes)
	f.Operators = a.opRefs(nodes...)
	f.Hint = "Every changed row writes log records for the row and for each index it is in (a rollback writes as many again to " +
		"undo them), and the log must reach disk before a commit returns. Wide rows, many indexes and page splits add to it; " +
		"changing rows in batches keeps each transaction's log small."
	f.Reference = refLog
	return []Finding{f}
}

// topOps lists the n most frequent log operations with their share of
// total: "LOP_MODIFY_ROW 21 (95%), LOP_BEGIN_XACT 1 (5%)", and the rest
// as "other N".
func topOps(ops map[string]int64, n int, total int64) string {
	type kv struct {
		k string
		v int64
	}
	var s []kv
	for k, v := range ops {
		if k == "" {
			k = "unnamed"
		}
		s = append(s, kv{k, v})
	}
	slices.SortFunc(s, func(x, y kv) int {
		if x.v != y.v {
			return cmp.Compare(y.v, x.v)
		}
		return strings.Compare(x.k, y.k)
	})
	var parts []string
	var listed int64
	for i, e := range s {
		if i == n {
			break
		}
		listed += e.v
		parts = append(parts, fmt.Sprintf("%s %s (%s)", e.k, Count(e.v), Percent(share(e.v, total))))
	}
	if rest := total - listed; rest > 0 {
		parts = append(parts, "other "+Count(rest))
	}
	return strings.Join(parts, ", ")
}

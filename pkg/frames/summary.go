package frames

import (
	"sort"
	"strconv"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/queryreplay/queryreplay/pkg/findings"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// The summaries a DBA knows from Plan Explorer: Table I/O (per table and
// index) and Wait Stats (per wait type), over the whole trace whatever the
// window, so a zoom never changes them (docs/frames.md §3.13).

// tableIO is one table and index's row of the table_io frame.
type tableIO struct {
	object, table, index string
	logical, physical    int64
	ahead, scans         int64
	counters             bool
	pageReads, locks     int64
	nodes                []int
}

// objectKey is an object name without its quoting, "dbo.Orders.PK_Orders":
// the plan writes "[dbo].[Orders].[PK_Orders]", the lanes the bare names.
func objectKey(s string) string {
	return strings.NewReplacer("[", "", "]", "").Replace(s)
}

func (v *view) tableIORows() []*tableIO {
	rows := map[string]*tableIO{}
	get := func(name string) *tableIO {
		r := rows[name]
		if r == nil {
			r = &tableIO{object: name, table: name}
			if parts := strings.Split(name, "."); len(parts) >= 3 {
				r.table, r.index = strings.Join(parts[:len(parts)-1], "."), parts[len(parts)-1]
			}
			rows[name] = r
		}
		return r
	}
	for _, o := range v.tr.Operators {
		if o.Object == "" {
			continue
		}
		r := get(objectKey(o.Object))
		r.nodes = append(r.nodes, o.ID)
		rt := v.runtime(o.ID)
		if rt.LogicalReads != nil {
			r.counters = true
			r.logical += *rt.LogicalReads
		}
		r.physical += deref(rt.PhysicalReads)
		r.ahead += deref(rt.ReadAheads)
		r.scans += deref(rt.Scans)
	}
	for _, e := range v.tr.Lanes.Read {
		if o := v.tr.ObjectOf(e.Object); o != nil {
			get(o.String()).pageReads++
		}
	}
	for _, l := range v.tr.Lanes.Lock {
		if o := v.tr.ObjectOf(l.Object); o != nil {
			get(o.String()).locks++
		}
	}
	out := make([]*tableIO, 0, len(rows))
	for _, r := range rows {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.logical != b.logical {
			return a.logical > b.logical
		}
		if a.pageReads != b.pageReads {
			return a.pageReads > b.pageReads
		}
		return a.object < b.object
	})
	return out
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// tableIOFrame is Plan Explorer's Table I/O: reads of each kind from the
// plan's counters (null without them), page reads and locks from the
// trace, and the operators that read the object (the panel's link to
// the lanes).
func (v *view) tableIOFrame() *data.Frame {
	rows := v.tableIORows()
	n := len(rows)
	obj, table, index, nodes := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	logical, physical, ahead, scans := make([]*int64, n), make([]*int64, n), make([]*int64, n), make([]*int64, n)
	pageReads, locks := make([]int64, n), make([]int64, n)
	for i, r := range rows {
		obj[i], table[i], index[i] = r.object, r.table, r.index
		ids := make([]string, len(r.nodes))
		for k, id := range r.nodes {
			ids[k] = strconv.Itoa(id)
		}
		nodes[i] = strings.Join(ids, ",")
		logical[i], physical[i] = counterOr(r.counters, r.logical), counterOr(r.counters, r.physical)
		ahead[i], scans[i] = counterOr(r.counters, r.ahead), counterOr(r.counters, r.scans)
		pageReads[i], locks[i] = r.pageReads, r.locks
	}
	f := data.NewFrame("table_io",
		data.NewField("object", nil, obj),
		data.NewField("table", nil, table),
		data.NewField("index", nil, index),
		data.NewField("logicalReads", nil, logical).SetConfig(&data.FieldConfig{DisplayName: "logical reads (plan)"}),
		data.NewField("physicalReads", nil, physical).SetConfig(&data.FieldConfig{DisplayName: "physical reads (plan)"}),
		data.NewField("readAheads", nil, ahead).SetConfig(&data.FieldConfig{DisplayName: "read-ahead reads (plan)"}),
		data.NewField("scans", nil, scans).SetConfig(&data.FieldConfig{DisplayName: "scans (plan)"}),
		data.NewField("pageReads", nil, pageReads).SetConfig(&data.FieldConfig{DisplayName: "page reads (trace)"}),
		data.NewField("locks", nil, locks),
		data.NewField("nodeIds", nil, nodes),
	)
	f.Meta = v.meta(custom{})
	f.Meta.PreferredVisualization = data.VisTypeTable
	return f
}

// waitStatsFrame is Plan Explorer's Wait Stats: each wait type with its
// class in the one wait table and its time (findings.WaitsByType, the
// terminal's top waits).
func (v *view) waitStatsFrame() *data.Frame {
	list := findings.WaitsByType(v.tr)
	n := len(list)
	typ, class, category := make([]string, n), make([]string, n), make([]string, n)
	waits, us, untimed, first := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	for i, w := range list {
		typ[i], class[i], category[i] = w.WaitType, w.Class, timeline.WaitCategory(w.WaitType)
		waits[i], us[i], untimed[i], first[i] = int64(w.Waits), w.WaitUs, int64(w.Untimed), w.FirstUs
	}
	f := data.NewFrame("wait_stats",
		data.NewField("waitType", nil, typ),
		data.NewField("class", nil, class),
		data.NewField("category", nil, category),
		data.NewField("waits", nil, waits),
		unit(data.NewField("waitUs", nil, us), "µs"),
		data.NewField("untimed", nil, untimed),
		unit(data.NewField("firstUs", nil, first), "µs"),
	)
	f.Meta = v.meta(custom{})
	f.Meta.PreferredVisualization = data.VisTypeTable
	return f
}

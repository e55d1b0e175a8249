// Package frames turns QueryReplay's model into Grafana data frames with the
// shapes Grafana's built-in panels and our replay panel read: lanes as
// state-timeline frames, the plan as node-graph nodes and edges.
//
// It is an adapter: it only reshapes values it is given. It must not parse
// events or plans, compute timings or talk to SQL Server.
package frames

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// ReplayPanelID is set as the preferred visualisation plugin on frames the
// replay panel draws, so Explore opens them in it.
const ReplayPanelID = "queryreplay-replay-panel"

// Interval is one state of a lane, [Start, End).
type Interval struct {
	Start, End time.Time
	State      string
	// NodeID is the plan operator the interval belongs to; nil when unmatched.
	NodeID *int
}

// Lane builds a state-timeline frame: start time, end time, state, node id.
// Intervals are sorted by start; an interval that ends before it starts is
// an error, not something to draw.
func Lane(name string, intervals []Interval) (*data.Frame, error) {
	sorted := append([]Interval(nil), intervals...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Start.Before(sorted[j].Start) })
	starts := make([]time.Time, len(sorted))
	ends := make([]time.Time, len(sorted))
	states := make([]string, len(sorted))
	nodes := make([]*int64, len(sorted))
	for i, iv := range sorted {
		if iv.End.Before(iv.Start) {
			return nil, fmt.Errorf("lane %s: interval %d (%s) ends before it starts", name, i, iv.State)
		}
		starts[i], ends[i], states[i] = iv.Start, iv.End, iv.State
		if iv.NodeID != nil {
			v := int64(*iv.NodeID)
			nodes[i] = &v
		}
	}
	f := data.NewFrame(name,
		data.NewField("start", nil, starts),
		data.NewField("end", nil, ends),
		data.NewField("state", data.Labels{"lane": name}, states),
		data.NewField("nodeId", nil, nodes),
	)
	f.SetMeta(&data.FrameMeta{PreferredVisualizationPluginID: ReplayPanelID})
	return f, nil
}

// PlanNode is one operator of the plan graph.
type PlanNode struct {
	ID           int
	Parent       *int
	PhysicalOp   string
	LogicalOp    string
	Object       string
	ActualRows   int64
	EstimateRows float64
	ElapsedMs    float64
	Behavior     string
	Spills       int64
	CPUShare     float64 // 0..1, with IOShare summing to 1
	IOShare      float64
}

// Plan builds the node-graph pair: a nodes frame and an edges frame whose
// edges run child → parent (the direction rows flow). Every edge's endpoints
// must be nodes, or Grafana refuses to draw the graph.
func Plan(nodes []PlanNode) (data.Frames, error) {
	known := make(map[int]bool, len(nodes))
	for _, n := range nodes {
		if known[n.ID] {
			return nil, fmt.Errorf("plan: node %d appears twice", n.ID)
		}
		known[n.ID] = true
	}
	ids := make([]string, len(nodes))
	titles := make([]string, len(nodes))
	subtitles := make([]string, len(nodes))
	main := make([]float64, len(nodes))
	secondary := make([]float64, len(nodes))
	arcCPU := make([]float64, len(nodes))
	arcIO := make([]float64, len(nodes))
	behavior := make([]string, len(nodes))
	spills := make([]int64, len(nodes))
	var edgeIDs, sources, targets []string
	var edgeRows []int64
	for i, n := range nodes {
		ids[i] = strconv.Itoa(n.ID)
		titles[i] = n.PhysicalOp
		subtitles[i] = n.Object
		if n.Object == "" {
			subtitles[i] = n.LogicalOp
		}
		main[i] = n.ElapsedMs
		secondary[i] = n.EstimateRows
		arcCPU[i], arcIO[i] = n.CPUShare, n.IOShare
		behavior[i] = n.Behavior
		spills[i] = n.Spills
		if n.Parent != nil {
			if !known[*n.Parent] {
				return nil, fmt.Errorf("plan: node %d has parent %d, which is not in the plan", n.ID, *n.Parent)
			}
			p := strconv.Itoa(*n.Parent)
			edgeIDs = append(edgeIDs, ids[i]+"-"+p)
			sources = append(sources, ids[i])
			targets = append(targets, p)
			edgeRows = append(edgeRows, n.ActualRows)
		}
	}
	nodeFrame := data.NewFrame("nodes",
		data.NewField("id", nil, ids),
		data.NewField("title", nil, titles),
		data.NewField("subtitle", nil, subtitles),
		data.NewField("mainstat", nil, main).SetConfig(&data.FieldConfig{Unit: "ms", DisplayName: "elapsed"}),
		data.NewField("secondarystat", nil, secondary).SetConfig(&data.FieldConfig{DisplayName: "estimated rows"}),
		data.NewField("arc__cpu", nil, arcCPU),
		data.NewField("arc__io", nil, arcIO),
		data.NewField("detail__behavior", nil, behavior),
		data.NewField("detail__spills", nil, spills),
	)
	nodeFrame.SetMeta(&data.FrameMeta{PreferredVisualization: data.VisTypeNodeGraph})
	edgeFrame := data.NewFrame("edges",
		data.NewField("id", nil, orEmpty(edgeIDs)),
		data.NewField("source", nil, orEmpty(sources)),
		data.NewField("target", nil, orEmpty(targets)),
		data.NewField("mainstat", nil, orEmptyInt(edgeRows)).SetConfig(&data.FieldConfig{DisplayName: "rows"}),
	)
	edgeFrame.SetMeta(&data.FrameMeta{PreferredVisualization: data.VisTypeNodeGraph})
	return data.Frames{nodeFrame, edgeFrame}, nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func orEmptyInt(s []int64) []int64 {
	if s == nil {
		return []int64{}
	}
	return s
}

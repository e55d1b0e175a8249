package plugin

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/frames"
	"github.com/queryreplay/queryreplay/pkg/sizelimit"
	"github.com/queryreplay/queryreplay/pkg/tracer"
)

// Query types (docs/frames.md §1).
const (
	QueryTrace   = "trace"
	QueryBundle  = "bundle"
	QueryView    = "view"
	QueryCompare = "compare"
	QueryProbe   = "probe"
)

// QueryOptions is the query model's options object.
type QueryOptions struct {
	// Events lists the optional event groups; nil (absent) means all.
	Events           []string `json:"events"`
	CallStacks       bool     `json:"callStacks"`
	ClearBufferPool  bool     `json:"clearBufferPool"`
	DisableReadAhead bool     `json:"disableReadAhead"`
	TimeoutSeconds   float64  `json:"timeoutSeconds"`
	MaxEvents        int      `json:"maxEvents"`
}

// Query is the query model. The JSON names are a contract.
type Query struct {
	QueryType string         `json:"queryType"`
	SQL       string         `json:"sql"`
	Database  string         `json:"database"`
	Options   QueryOptions   `json:"options"`
	TraceID   string         `json:"traceId"`
	TraceIDs  []string       `json:"traceIds"`
	Window    *frames.Window `json:"window"`
	Frames    []string       `json:"frames"`
	// Metrics selects the numbers of a probe (docs/frames.md §3.9); empty
	// means all of them.
	Metrics []string `json:"metrics"`
	// Output asks for what one built-in panel reads (docs/frames.md
	// §3.12); empty: the frame groups.
	Output string `json:"output"`
	// Statement picks a node of the trace's statement tree (docs/frames.md,
	// "statements"): its own operators and events; absent, the trace's
	// first planned statement.
	Statement *int `json:"statement"`
	// QueryHash traces the statement of a query hash instead of sql
	// (queryhash.go).
	QueryHash string `json:"queryHash"`
	// Run is a trace query's one-shot run request (runonce.go); without a
	// fresh one a trace query serves its stored trace and runs nothing.
	Run string `json:"run"`
	// Live makes a fresh trace run live (live.go): the answer is the live
	// frame with its channel, the trace runs once the panel subscribes.
	Live bool `json:"live"`

	// From the DataQuery envelope, not the JSON.
	MaxDataPoints int64             `json:"-"`
	TimeRange     backend.TimeRange `json:"-"`
}

// parseQuery decodes a DataQuery of at most limit bytes of JSON (checked
// before decoding: a decoded query takes more memory than its JSON). The
// envelope's QueryType wins over the JSON's (Grafana copies one into the
// other).
func parseQuery(q backend.DataQuery, limit sizelimit.Error) (Query, error) {
	var m Query
	if err := sizelimit.Check(int64(len(q.JSON)), limit); err != nil {
		return m, err
	}
	if len(q.JSON) > 0 {
		if err := json.Unmarshal(q.JSON, &m); err != nil {
			return m, fmt.Errorf("the query is not valid JSON for this datasource: %v", err)
		}
	}
	if q.QueryType != "" {
		m.QueryType = q.QueryType
	}
	if m.QueryType == "" {
		m.QueryType = QueryTrace
	}
	m.MaxDataPoints, m.TimeRange = q.MaxDataPoints, q.TimeRange
	return m, nil
}

var groupNames = map[string]func(*bundle.EventGroups){
	"locks":  func(g *bundle.EventGroups) { g.Locks = true },
	"waits":  func(g *bundle.EventGroups) { g.Waits = true },
	"memory": func(g *bundle.EventGroups) { g.Memory = true },
	"splits": func(g *bundle.EventGroups) { g.Splits = true },
	"log":    func(g *bundle.EventGroups) { g.Log = true },
	"fileIO": func(g *bundle.EventGroups) { g.FileIO = true },
}

// traceOptions turns the query into tracer options within the settings'
// limits.
func (m Query) traceOptions(s Settings) (tracer.Options, error) {
	if strings.TrimSpace(m.SQL) == "" {
		return tracer.Options{}, fmt.Errorf("sql is empty: a %s query needs the T-SQL batch to trace", m.QueryType)
	}
	// what to return is checked before anything runs on the server
	if err := (frames.Request{Groups: m.Frames, Output: m.Output}).Validate(); err != nil {
		return tracer.Options{}, err
	}
	o := tracer.Options{SQL: m.SQL, Database: m.Database, CallStacks: m.Options.CallStacks,
		ClearBufferPool: m.Options.ClearBufferPool, DisableReadAhead: m.Options.DisableReadAhead}
	if o.CallStacks {
		// symbols only from the servers the settings name (none: the
		// frames stay module+RVA, or come from the cache alone)
		o.SymbolServers, o.SymbolCacheDir = s.SymbolServers, s.symbolCache()
	}
	if o.Database == "" {
		o.Database = s.Database
	}
	if m.Options.Events == nil {
		o.Events = bundle.AllEventGroups()
	}
	for _, g := range m.Options.Events {
		set, ok := groupNames[g]
		if !ok {
			return o, fmt.Errorf("options.events: %q is not one of locks, waits, memory, splits, log, fileIO", g)
		}
		set(&o.Events)
	}
	limit := s.traceTimeout()
	o.Timeout = limit
	if t := m.Options.TimeoutSeconds; t < 0 {
		return o, fmt.Errorf("options.timeoutSeconds %v is negative", t)
	} else if t > 0 {
		o.Timeout = min(time.Duration(t*float64(time.Second)), limit)
	}
	o.MaxEvents = s.maxEvents()
	if n := m.Options.MaxEvents; n < 0 {
		return o, fmt.Errorf("options.maxEvents %d is negative", n)
	} else if n > 0 {
		o.MaxEvents = min(n, o.MaxEvents)
	}
	return o, nil
}

// frameRequest is what to return for a trace, bundle or view query.
func (m Query) frameRequest(e traceSpan) frames.Request {
	r := frames.Request{MaxDataPoints: int(min(m.MaxDataPoints, frames.MaxDataPointsLimit)), Groups: m.Frames, Output: m.Output, Statement: m.Statement}
	if m.MaxDataPoints < 0 {
		r.MaxDataPoints = int(m.MaxDataPoints) // Validate names it
	}
	if m.QueryType == QueryView {
		if r.Groups == nil {
			r.Groups = []string{frames.GroupTrace, frames.GroupLanes}
		}
		r.Window = m.viewWindow(e)
	}
	if m.Output == frames.OutputStateTimeline && m.Window == nil {
		// the State Timeline's time range is on the scaled clock: zooming it narrows the window
		r.Window = frames.ScaledWindow(m.TimeRange.From, m.TimeRange.To, e.start, e.end)
	}
	return r
}

// traceSpan is a trace's extent: absolute time zero and µs bounds.
type traceSpan struct {
	zero       time.Time
	start, end int64
}

// viewWindow: the explicit window; else the query's time range clipped to
// the trace when they overlap; else the whole trace (docs/frames.md §4.2).
func (m Query) viewWindow(e traceSpan) *frames.Window {
	if m.Window != nil {
		return m.Window
	}
	tr := m.TimeRange
	if tr.From.IsZero() || tr.To.IsZero() || e.zero.IsZero() {
		return nil
	}
	from := tr.From.Sub(e.zero).Microseconds()
	to := tr.To.Sub(e.zero).Microseconds()
	if to < e.start || from > e.end || (from <= e.start && to >= e.end) {
		return nil
	}
	return &frames.Window{FromUs: max(from, e.start), ToUs: min(to, e.end)}
}

package standin

import (
	"encoding/xml"
	"strconv"
	"strings"
	"testing"
)

// tracedEvent is what these tests read from one event of the file target.
type tracedEvent struct {
	name  string
	seq   int
	data  map[string]string
	value string // showplan_xml's document
}

// traceScenario runs a scenario inside the all-events session and returns
// its events in file order.
func traceScenario(t *testing.T, opts Options, name string) []tracedEvent {
	t.Helper()
	srv := New(opts)
	c := session(t, srv, 53)
	mustRun(t, c, allEventsSession)
	mustRun(t, c, "ALTER EVENT SESSION sc ON SERVER STATE = START")
	mustRun(t, c, scenarioSQL(t, name))
	mustRun(t, c, "ALTER EVENT SESSION sc ON SERVER STATE = STOP")
	rows := mustRun(t, c, "SELECT event_data FROM sys.fn_xe_file_target_read_file('sc*.xel', NULL, NULL, NULL)").sets[0].rows
	var out []tracedEvent
	for _, r := range rows {
		out = append(out, parseEvent(t, r[0].(string)))
	}
	return out
}

func parseEvent(t *testing.T, s string) tracedEvent {
	t.Helper()
	var ev struct {
		Name string `xml:"name,attr"`
		Data []struct {
			Name  string `xml:"name,attr"`
			Value struct {
				Text  string `xml:",chardata"`
				Inner string `xml:",innerxml"`
			} `xml:"value"`
		} `xml:"data"`
		Actions []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value"`
		} `xml:"action"`
	}
	if err := xml.Unmarshal([]byte(s), &ev); err != nil {
		t.Fatalf("event %.80s: %v", s, err)
	}
	e := tracedEvent{name: ev.Name, data: map[string]string{}}
	for _, d := range ev.Data {
		e.data[d.Name] = strings.TrimSpace(d.Value.Text)
		if d.Name == "showplan_xml" {
			e.value = d.Value.Inner
		}
	}
	for _, a := range ev.Actions {
		if a.Name == "event_sequence" {
			e.seq, _ = strconv.Atoi(a.Value)
		}
	}
	return e
}

// elapsedPerNode reads ActualElapsedms of thread 0 per RelOp NodeId.
func elapsedPerNode(t *testing.T, plan string) map[int]int64 {
	t.Helper()
	out := map[int]int64{}
	var stack []int
	d := xml.NewDecoder(strings.NewReader(plan))
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		switch el := tok.(type) {
		case xml.StartElement:
			attr := func(n string) string {
				for _, a := range el.Attr {
					if a.Name.Local == n {
						return a.Value
					}
				}
				return ""
			}
			switch el.Name.Local {
			case "RelOp":
				id, _ := strconv.Atoi(attr("NodeId"))
				stack = append(stack, id)
			case "RunTimeCountersPerThread":
				if attr("Thread") == "0" && len(stack) > 0 {
					out[stack[len(stack)-1]], _ = strconv.ParseInt(attr("ActualElapsedms"), 10, 64)
				}
			}
		case xml.EndElement:
			if el.Name.Local == "RelOp" {
				stack = stack[:len(stack)-1]
			}
		}
	}
	return out
}

// profiles returns each node's query_thread_profile events (thread 0).
func profiles(events []tracedEvent) map[int][]tracedEvent {
	out := map[int][]tracedEvent{}
	for _, e := range events {
		if e.name == "query_thread_profile" && e.data["thread_id"] == "0" {
			id, _ := strconv.Atoi(e.data["node_id"])
			out[id] = append(out[id], e)
		}
	}
	return out
}

func totalUs(evs []tracedEvent) int64 {
	var n int64
	for _, e := range evs {
		v, _ := strconv.ParseInt(e.data["total_time_us"], 10, 64)
		n += v
	}
	return n
}

// The hash_join scenario (Hash Match node 0, build scan of Customers node
// 1, probe scan of Orders node 2): total_time_us is each operator's active
// time, its inputs' included, and agrees with ActualElapsedms; by default
// every query_thread_profile fires after the last lock of the query, in
// closing order (inputs before the join).
func TestThreadProfileActiveTimeAtQueryEnd(t *testing.T) {
	events := traceScenario(t, Options{}, "hash_join")
	prof := profiles(events)
	var plan string
	lastLock := 0
	for _, e := range events {
		switch e.name {
		case "query_post_execution_showplan":
			plan = e.value
		case "lock_acquired":
			lastLock = max(lastLock, e.seq)
		}
	}
	elapsed := elapsedPerNode(t, plan)
	for id := 0; id <= 2; id++ {
		if len(prof[id]) != 1 {
			t.Fatalf("node %d: %d query_thread_profile events, want one", id, len(prof[id]))
		}
		us := totalUs(prof[id])
		if us/1000 != elapsed[id] {
			t.Errorf("node %d: total_time_us %d but ActualElapsedms %d", id, us, elapsed[id])
		}
		if prof[id][0].seq < lastLock {
			t.Errorf("node %d: its profile (event %d) fired before the query's last lock (event %d)", id, prof[id][0].seq, lastLock)
		}
	}
	build, probe, join := totalUs(prof[1]), totalUs(prof[2]), totalUs(prof[0])
	if build <= 0 || probe <= 0 || join < build+probe {
		t.Errorf("active times: build %d µs, probe %d µs, join %d µs: want both inputs' time inside the join's", build, probe, join)
	}
	if !(prof[1][0].seq < prof[0][0].seq && prof[2][0].seq < prof[0][0].seq) {
		t.Errorf("the join's profile (event %d) fired before its inputs' (%d, %d)", prof[0][0].seq, prof[1][0].seq, prof[2][0].seq)
	}
}

// With ThreadProfileAtClose the build input's event fires when the build
// ends — before the probe scan takes its first lock on Orders — and the
// probe input's after its last.
func TestThreadProfileAtClose(t *testing.T) {
	events := traceScenario(t, Options{ThreadProfileAtClose: true}, "hash_join")
	prof := profiles(events)
	firstOrders, lastOrders := 0, 0
	for _, e := range events {
		// the probe scan's locks (Orders) follow the build's (Customers)
		if e.name == "lock_acquired" && prof[1] != nil && e.seq > prof[1][0].seq {
			if firstOrders == 0 {
				firstOrders = e.seq
			}
			lastOrders = e.seq
		}
	}
	if len(prof[1]) != 1 || len(prof[2]) != 1 || len(prof[0]) != 1 {
		t.Fatalf("profiles per node: %d %d %d, want one each", len(prof[0]), len(prof[1]), len(prof[2]))
	}
	if firstOrders == 0 || lastOrders < firstOrders+50 {
		t.Fatalf("the probe scan's page locks (events %d–%d) do not follow the build input's profile (event %d)", firstOrders, lastOrders, prof[1][0].seq)
	}
	if prof[2][0].seq < lastOrders || prof[0][0].seq < prof[2][0].seq {
		t.Errorf("probe profile at event %d, join's at %d: want after the probe's last lock (%d), the join last", prof[2][0].seq, prof[0][0].seq, lastOrders)
	}
}

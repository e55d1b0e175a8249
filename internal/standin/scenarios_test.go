package standin

import (
	"context"
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/internal/standin/engine"
)

const allEventsSession = `CREATE EVENT SESSION [sc] ON SERVER
ADD EVENT sqlserver.sql_batch_starting(ACTION(package0.event_sequence)),
ADD EVENT sqlserver.sql_batch_completed(ACTION(package0.event_sequence)),
ADD EVENT sqlserver.physical_page_read(ACTION(package0.event_sequence, sqlserver.plan_handle)),
ADD EVENT sqlserver.lock_acquired(ACTION(package0.event_sequence)),
ADD EVENT sqlserver.lock_released(ACTION(package0.event_sequence)),
ADD EVENT sqlos.wait_info(ACTION(package0.event_sequence, sqlos.task_address)),
ADD EVENT sqlserver.query_thread_profile(ACTION(package0.event_sequence)),
ADD EVENT sqlserver.query_post_execution_showplan(ACTION(package0.event_sequence, sqlserver.plan_handle)),
ADD EVENT sqlserver.query_memory_grant_usage,
ADD EVENT sqlserver.sort_warning,
ADD EVENT sqlserver.transaction_log,
ADD EVENT sqlserver.file_read
ADD TARGET package0.event_file(SET filename = N'sc.xel')`

func relOps(plan string) []string {
	var ops []string
	d := xml.NewDecoder(strings.NewReader(plan))
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "RelOp" {
			var phys string
			for _, a := range se.Attr {
				if a.Name.Local == "PhysicalOp" {
					phys = a.Value
				}
			}
			ops = append(ops, phys)
		}
	}
	return ops
}

// scenarioSession is the event session a scenario is traced with: every
// event the scenarios show, the callstack action when asked for.
func scenarioSession(callstacks bool) string {
	stack := ""
	if callstacks {
		stack = ", package0.callstack"
	}
	return `CREATE EVENT SESSION [sc] ON SERVER
ADD EVENT sqlserver.sql_batch_starting(ACTION(package0.event_sequence)),
ADD EVENT sqlserver.sql_batch_completed(ACTION(package0.event_sequence)),
ADD EVENT sqlserver.physical_page_read(ACTION(package0.event_sequence, sqlserver.plan_handle` + stack + `)),
ADD EVENT sqlserver.lock_acquired(ACTION(package0.event_sequence` + stack + `)),
ADD EVENT sqlserver.lock_released(ACTION(package0.event_sequence)),
ADD EVENT sqlos.wait_info(ACTION(package0.event_sequence, sqlos.task_address` + stack + `)),
ADD EVENT sqlserver.query_thread_profile(ACTION(package0.event_sequence)),
ADD EVENT sqlserver.query_post_execution_showplan(ACTION(package0.event_sequence, sqlserver.plan_handle)),
ADD EVENT sqlserver.query_memory_grant_usage,
ADD EVENT sqlserver.sort_warning,
ADD EVENT sqlserver.hash_warning,
ADD EVENT sqlserver.exchange_spill,
ADD EVENT sqlserver.page_split,
ADD EVENT sqlserver.transaction_log,
ADD EVENT sqlserver.file_read
ADD TARGET package0.event_file(SET filename = N'sc.xel')`
}

// planShapes pins the operators of the original demo scenarios.
var planShapes = map[string][]string{
	"clustered_index_scan": {"Clustered Index Scan"},
	"seek_key_lookup":      {"Nested Loops", "Index Seek", "Clustered Index Seek"},
	"forced_scan":          {"Clustered Index Scan"},
	"hash_join":            {"Hash Match", "Clustered Index Scan", "Clustered Index Scan"},
	"merge_join":           {"Merge Join", "Clustered Index Seek", "Clustered Index Seek"},
	"sort_spill":           {"Sort", "Clustered Index Scan"},
	"sort_no_spill":        {"Sort", "Clustered Index Scan"},
	"hash_aggregate":       {"Hash Match", "Clustered Index Scan"},
	"stream_aggregate":     {"Stream Aggregate", "Clustered Index Seek"},
	"parallel_aggregate":   {"Parallelism", "Hash Match", "Parallelism", "Clustered Index Scan"},
	"update_orders":        {"Clustered Index Update", "Clustered Index Seek"},
	"insert_order":         {"Clustered Index Insert", "Constant Scan"},
	"delete_orderlines":    {"Clustered Index Delete", "Clustered Index Seek"},
}

// threadSkew tells whether an operator of the plan had one worker thread
// do at least three quarters of the rows of threads 1..n.
func threadSkew(plan string) bool {
	d := xml.NewDecoder(strings.NewReader(plan))
	var rows []int64
	check := func() bool {
		var total, most int64
		for _, r := range rows {
			total += r
			most = max(most, r)
		}
		return len(rows) > 1 && total > 100 && most*4 >= total*3
	}
	for {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch se.Name.Local {
		case "RelOp":
			if check() {
				return true
			}
			rows = nil
		case "RunTimeCountersPerThread":
			var thread, n int64
			for _, a := range se.Attr {
				switch a.Name.Local {
				case "Thread":
					thread, _ = strconv.ParseInt(a.Value, 10, 64)
				case "ActualRows":
					n, _ = strconv.ParseInt(a.Value, 10, 64)
				}
			}
			if thread > 0 {
				rows = append(rows, n)
			}
		}
	}
}

func TestScenarios(t *testing.T) {
	if len(Scenarios()) < 20 {
		t.Fatalf("%d scenarios, want at least 20", len(Scenarios()))
	}
	names := map[string]bool{}
	for _, sc := range Scenarios() {
		names[sc.Name] = true
	}
	for _, sc := range Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			if sc.Compare != "" && !names[sc.Compare] {
				t.Fatalf("compares with unknown scenario %q", sc.Compare)
			}
			srv := New(Options{})
			c := session(t, srv, 51)
			mustRun(t, c, scenarioSession(sc.CallStacks))
			setup := "CHECKPOINT"
			if sc.ClearBufferPool {
				setup += "; DBCC DROPCLEANBUFFERS"
			}
			if sc.DisableReadAhead {
				setup += "; DBCC TRACEON(652)"
			}
			mustRun(t, c, setup)
			mustRun(t, c, "ALTER EVENT SESSION sc ON SERVER STATE = START; BEGIN TRAN")
			release, err := PrepareScenario(context.Background(), srv, sc)
			if err != nil {
				t.Fatal(err)
			}
			r := mustRun(t, c, sc.SQL)
			release()
			if len(r.sets) > 0 {
				if len(r.sets[0].rows) == 0 {
					t.Fatal("no rows")
				}
			} else if r.dones[len(r.dones)-1].RowCount <= 0 {
				t.Fatalf("no rows affected: %+v", r.dones)
			}
			mustRun(t, c, "ROLLBACK; ALTER EVENT SESSION sc ON SERVER STATE = STOP")
			rows := mustRun(t, c, "SELECT object_name, event_data, timestamp_utc FROM sys.fn_xe_file_target_read_file('sc*.xel', NULL, NULL, NULL)").sets[0].rows
			counts := map[string]int{}
			waits := map[string]int{}
			var plan string
			var granted, used int64
			perMs := map[any]int{}
			indexes := map[*engine.Index]bool{}
			checked := 0 // key hashes verified through %%lockres%% (a sample: each lookup scans the table)
			for _, row := range rows {
				name, data := row[0].(string), row[1].(string)
				counts[name]++
				perMs[row[2]]++
				if strings.Contains(data, `<action name="callstack"`) {
					counts["callstack"]++
				}
				var ev xeEventXML
				if err := xml.Unmarshal([]byte(data), &ev); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				fields := map[string]string{}
				texts := map[string]string{}
				for _, d := range ev.Data {
					fields[d.Name] = d.Value
					if d.Text != nil {
						texts[d.Name] = *d.Text
					}
				}
				switch name {
				case "query_post_execution_showplan":
					i := strings.Index(data, "<ShowPlanXML")
					j := strings.Index(data, "</ShowPlanXML>")
					if p := data[i : j+len("</ShowPlanXML>")]; strings.Contains(p, "StatementType=\"SELECT\"") || plan == "" {
						plan = p
					}
				case "query_memory_grant_usage":
					granted, _ = strconv.ParseInt(fields["granted_memory_kb"], 10, 64)
					used, _ = strconv.ParseInt(fields["used_memory_kb"], 10, 64)
				case "wait_info":
					if texts["opcode"] == "End" {
						waits[texts["wait_type"]]++
					}
				case "physical_page_read":
					p, _ := strconv.Atoi(fields["page_id"])
					owner := srv.demo.PageOwner[int32(p)]
					if owner == nil {
						t.Fatalf("page %d read but owned by no index", p)
					}
					indexes[owner.Idx] = true
				case "lock_acquired":
					if texts["resource_type"] != "KEY" {
						continue
					}
					r1, _ := strconv.ParseUint(fields["resource_1"], 10, 32)
					r2, _ := strconv.ParseUint(fields["resource_2"], 10, 32)
					hi := uint16(r1 >> 16)
					hi = hi>>8 | hi<<8
					lo := uint32(r2)
					lo = lo>>24 | (lo>>8)&0xFF00 | (lo<<8)&0xFF0000 | lo<<24
					hash := fmt.Sprintf("(%012x)", uint64(hi)<<32|uint64(lo))
					if fields["resource_description"] != hash {
						t.Fatalf("key lock resources decode to %s, description %s", hash, fields["resource_description"])
					}
					hobt, _ := strconv.ParseInt(fields["associated_object_id"], 10, 64)
					var ix *engine.Index
					for _, tb := range srv.demo.Tables {
						for _, i := range tb.Indexes {
							if i.PartitionID == hobt {
								ix = i
							}
						}
					}
					if ix == nil {
						t.Fatalf("lock on unknown hobt %d", hobt)
					}
					checked++
					if checked <= 10 && sc.Blocker == "" && !strings.HasPrefix(sc.Name, "insert") && !strings.HasPrefix(sc.Name, "delete") && !strings.HasPrefix(sc.Name, "page_splits") {
						q := fmt.Sprintf("SELECT COUNT(*) FROM %s WITH (INDEX(%s)) WHERE %%%%lockres%%%% = '%s'", ix.Tbl.FullName(), ix.Name, hash)
						if n := cell(t, mustRun(t, c, q), 0, 0, 0); n != int64(1) {
							t.Fatalf("key hash %s on %s resolves to %v rows", hash, ix.Name, n)
						}
					}
				}
			}
			for _, e := range []string{"query_post_execution_showplan", "sql_batch_starting", "query_thread_profile"} {
				if counts[e] == 0 {
					t.Errorf("no %s event (counts %v)", e, counts)
				}
			}
			for _, show := range sc.Shows {
				switch {
				case strings.HasPrefix(show, "plan:"):
					if !strings.Contains(plan, strings.TrimPrefix(show, "plan:")) {
						t.Errorf("plan lacks %s", show)
					}
				case strings.HasPrefix(show, "wait:"):
					if waits[strings.TrimPrefix(show, "wait:")] == 0 {
						t.Errorf("no %s wait (waits %v)", show, waits)
					}
				case show == "skew":
					if !threadSkew(plan) {
						t.Error("no operator with one thread doing most of the rows")
					}
				case show == "grant>>used":
					if granted == 0 || granted < 10*used {
						t.Errorf("granted %d KB, used %d KB: not far above", granted, used)
					}
				default:
					if counts[show] == 0 {
						t.Errorf("no %s event (counts %v)", show, counts)
					}
				}
			}
			if want, ok := planShapes[sc.Name]; ok {
				if got := relOps(plan); strings.Join(got, "|") != strings.Join(want, "|") {
					t.Errorf("plan operators %v, want %v", got, want)
				}
			}
			if counts["query_thread_profile"] < len(relOps(plan)) {
				t.Errorf("query_thread_profile: %d for %d operators", counts["query_thread_profile"], len(relOps(plan)))
			}
			if strings.Contains(sc.Name, "spill") && !strings.Contains(sc.Name, "no_spill") && !strings.Contains(plan, "<SpillToTempDb") && !strings.Contains(plan, "ExchangeSpillDetails") {
				t.Error("spill plan lacks its spill warning")
			}
			if sc.Name == "sort_no_spill" && strings.Contains(plan, "SpillToTempDb") {
				t.Error("MIN_GRANT_PERCENT did not stop the spill")
			}
			for ix := range indexes {
				if !strings.Contains(plan, "Index=\"["+ix.Name+"]\"") {
					t.Errorf("page of %s read but the plan does not read it", ix.Name)
				}
			}
			most := 0
			for _, n := range perMs {
				most = max(most, n)
			}
			if len(rows) > 20 && most < 3 {
				t.Errorf("at most %d events per millisecond", most)
			}
		})
	}
}

package standin

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
	"testing"
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

func TestScenarios(t *testing.T) {
	expect := map[string]struct {
		ops    []string
		events []string
	}{
		"clustered_index_scan": {[]string{"Clustered Index Scan"}, []string{"physical_page_read", "lock_acquired"}},
		"seek_key_lookup":      {[]string{"Nested Loops", "Index Seek", "Clustered Index Seek"}, []string{"physical_page_read", "lock_acquired"}},
		"hash_join":            {[]string{"Hash Match", "Clustered Index Scan", "Clustered Index Scan"}, []string{"query_memory_grant_usage"}},
		"merge_join":           {[]string{"Merge Join", "Clustered Index Seek", "Clustered Index Seek"}, []string{"physical_page_read"}},
		"sort_spill":           {[]string{"Sort", "Clustered Index Scan"}, []string{"sort_warning", "query_memory_grant_usage"}},
		"hash_aggregate":       {[]string{"Hash Match", "Clustered Index Scan"}, []string{"query_memory_grant_usage"}},
		"parallel_aggregate":   {[]string{"Parallelism", "Hash Match", "Parallelism", "Clustered Index Scan"}, []string{"wait_info"}},
		"update_orders":        {[]string{"Clustered Index Update", "Clustered Index Seek"}, []string{"transaction_log"}},
		"insert_order":         {[]string{"Clustered Index Insert", "Constant Scan"}, []string{"transaction_log"}},
		"delete_orderlines":    {[]string{"Clustered Index Delete", "Clustered Index Seek"}, []string{"transaction_log"}},
	}
	if len(Scenarios()) != len(expect) {
		t.Fatalf("%d scenarios, %d expectations", len(Scenarios()), len(expect))
	}
	for _, sc := range Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			srv := New(Options{})
			c := session(t, srv, 51)
			mustRun(t, c, allEventsSession)
			mustRun(t, c, "CHECKPOINT; DBCC DROPCLEANBUFFERS; DBCC TRACEON(652)")
			mustRun(t, c, "ALTER EVENT SESSION sc ON SERVER STATE = START; BEGIN TRAN")
			r := mustRun(t, c, sc.SQL)
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
			var plan string
			perMs := map[any]int{}
			indexes := map[*index]bool{}
			checked := 0 // key hashes verified through %%lockres%% (a sample: each lookup scans the table)
			for _, row := range rows {
				name, data := row[0].(string), row[1].(string)
				counts[name]++
				perMs[row[2]]++
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
					plan = data[i : j+len("</ShowPlanXML>")]
				case "physical_page_read":
					p, _ := strconv.Atoi(fields["page_id"])
					owner := srv.demo.pageOwner[int32(p)]
					if owner == nil {
						t.Fatalf("page %d read but owned by no index", p)
					}
					indexes[owner.idx] = true
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
					var ix *index
					for _, tb := range srv.demo.tables {
						for _, i := range tb.indexes {
							if i.partitionID == hobt {
								ix = i
							}
						}
					}
					if ix == nil {
						t.Fatalf("lock on unknown hobt %d", hobt)
					}
					checked++
					if checked <= 10 && !strings.HasPrefix(sc.Name, "insert") && !strings.HasPrefix(sc.Name, "delete") {
						q := fmt.Sprintf("SELECT COUNT(*) FROM %s WITH (INDEX(%s)) WHERE %%%%lockres%%%% = '%s'", ix.tbl.fullName(), ix.name, hash)
						if n := cell(t, mustRun(t, c, q), 0, 0, 0); n != int64(1) {
							t.Fatalf("key hash %s on %s resolves to %v rows", hash, ix.name, n)
						}
					}
				case "query_thread_profile":
					if sc.Name == "parallel_aggregate" && fields["thread_id"] == "4" {
						counts["thread4"]++
					}
				}
			}
			want := expect[sc.Name]
			for _, e := range append(want.events, "query_post_execution_showplan", "sql_batch_starting", "query_thread_profile") {
				if counts[e] == 0 {
					t.Errorf("no %s event (counts %v)", e, counts)
				}
			}
			if got := relOps(plan); strings.Join(got, "|") != strings.Join(want.ops, "|") {
				t.Errorf("plan operators %v, want %v", got, want.ops)
			}
			if counts["query_thread_profile"] < len(want.ops) {
				t.Errorf("query_thread_profile: %d for %d operators", counts["query_thread_profile"], len(want.ops))
			}
			if sc.Name == "parallel_aggregate" && counts["thread4"] == 0 {
				t.Error("parallel plan has no per-thread profile")
			}
			if sc.Name == "sort_spill" && !strings.Contains(plan, "<SpillToTempDb") {
				t.Error("spill plan lacks SpillToTempDb")
			}
			for ix := range indexes {
				if !strings.Contains(plan, "Index=\"["+ix.name+"]\"") {
					t.Errorf("page of %s read but the plan does not read it", ix.name)
				}
			}
			max := 0
			for _, n := range perMs {
				if n > max {
					max = n
				}
			}
			if max < 3 {
				t.Errorf("at most %d events per millisecond", max)
			}
		})
	}
}

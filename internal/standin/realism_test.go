package standin

import (
	"context"
	"encoding/xml"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/internal/standin/engine"
)

// Checks of what a DBA looks at in a trace of the stand-in (issue 26 item
// 6): which index a modification locks and writes, the lock modes of the
// rows it reads, the rows affected as the client and the events report
// them, and the page counts of the spill events.

// xeRow is one event read back from an event_file target.
type xeRow struct {
	name   string
	fields map[string]string // value
	texts  map[string]string // map text
	raw    string            // the event's XML
}

func (e xeRow) num(field string) int64 {
	n, _ := strconv.ParseInt(e.fields[field], 10, 64)
	return n
}

const realismSession = `CREATE EVENT SESSION [dba] ON SERVER
ADD EVENT sqlserver.sql_batch_completed(SET collect_batch_text = (1)),
ADD EVENT sqlserver.sql_statement_completed,
ADD EVENT sqlserver.lock_acquired,
ADD EVENT sqlserver.lock_released,
ADD EVENT sqlserver.transaction_log,
ADD EVENT sqlserver.query_post_execution_showplan,
ADD EVENT sqlserver.sort_warning,
ADD EVENT sqlserver.hash_warning,
ADD EVENT sqlserver.exchange_spill
ADD TARGET package0.event_file(SET filename = N'dba.xel')`

// traceBatch runs sql (after setup, outside the trace) inside the event
// session and returns the client's view and the events, in order.
func traceBatch(t *testing.T, srv *Server, setup, sql string) (*recorder, []xeRow) {
	t.Helper()
	c := session(t, srv, 51)
	mustRun(t, c, realismSession)
	if setup != "" {
		mustRun(t, c, setup)
	}
	mustRun(t, c, "ALTER EVENT SESSION dba ON SERVER STATE = START")
	r := mustRun(t, c, sql)
	mustRun(t, c, "ALTER EVENT SESSION dba ON SERVER STATE = STOP")
	rows := mustRun(t, c, "SELECT object_name, event_data FROM sys.fn_xe_file_target_read_file('dba*.xel', NULL, NULL, NULL)").sets[0].rows
	var out []xeRow
	for _, row := range rows {
		var ev xeEventXML
		if err := xml.Unmarshal([]byte(row[1].(string)), &ev); err != nil {
			t.Fatalf("%v: %v", row[0], err)
		}
		e := xeRow{name: row[0].(string), fields: map[string]string{}, texts: map[string]string{}, raw: row[1].(string)}
		for _, d := range ev.Data {
			e.fields[d.Name] = d.Value
			if d.Text != nil {
				e.texts[d.Name] = *d.Text
			}
		}
		out = append(out, e)
	}
	return r, out
}

// hobtOf is the partition (hobt) id of the named index of a demo table.
func hobtOf(t *testing.T, srv *Server, table, ix string) *engine.Index {
	t.Helper()
	for _, tb := range srv.demo.Tables {
		if !strings.EqualFold(tb.Name, table) {
			continue
		}
		for _, i := range tb.Indexes {
			if strings.EqualFold(i.Name, ix) {
				return i
			}
		}
	}
	t.Fatalf("no index %s on %s", ix, table)
	return nil
}

// keyLocks counts lock_acquired KEY events on ix by mode.
func keyLocks(evs []xeRow, name string, ix *engine.Index) map[string]int {
	out := map[string]int{}
	for _, e := range evs {
		if e.name == name && e.texts["resource_type"] == "KEY" && e.num("associated_object_id") == ix.PartitionID {
			out[e.texts["mode"]]++
		}
	}
	return out
}

// An UPDATE writes and locks only the nonclustered indexes that hold a
// changed column (key or clustered key): SET of a column no index holds
// touches the clustered index alone; SET of an index key column also
// moves that index's entry (delete + insert, each X-locked).
func TestUpdateTouchesOnlyIndexesWithChangedColumns(t *testing.T) {
	for _, tc := range []struct {
		sql       string
		table, nc string
		ncTouched bool
	}{
		{"UPDATE dbo.Orders SET Status = N'Shipped' WHERE OrderID BETWEEN 100 AND 120", "Orders", "IX_Orders_CustomerID", false},
		{"UPDATE dbo.Orders SET Amount = Amount + 1 WHERE OrderID BETWEEN 500 AND 530", "Orders", "IX_Orders_CustomerID", false},
		{"UPDATE dbo.Orders SET CustomerID = CustomerID + 1 WHERE OrderID BETWEEN 100 AND 120", "Orders", "IX_Orders_CustomerID", true},
		// a changed clustered key moves every nonclustered entry (each carries it)
		{"UPDATE dbo.Orders SET OrderID = OrderID + 1000000 WHERE OrderID BETWEEN 200 AND 204", "Orders", "IX_Orders_CustomerID", true},
		// a SET that leaves the key as it was moves nothing
		{"UPDATE dbo.Orders SET CustomerID = CustomerID, Status = N'Same' WHERE OrderID BETWEEN 100 AND 120", "Orders", "IX_Orders_CustomerID", false},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			srv := New(Options{})
			nc := hobtOf(t, srv, tc.table, tc.nc)
			r, evs := traceBatch(t, srv, "", tc.sql)
			changed := r.dones[len(r.dones)-1].RowCount
			if changed <= 0 {
				t.Fatalf("no rows changed: %+v", r.dones)
			}
			var ncLocks, ncLog int
			for _, e := range evs {
				switch e.name {
				case "lock_acquired":
					if e.num("associated_object_id") == nc.PartitionID {
						ncLocks++
					}
				case "transaction_log":
					if e.num("alloc_unit_id") == nc.AllocUnitID {
						ncLog++
					}
				}
			}
			if !tc.ncTouched && (ncLocks > 0 || ncLog > 0) {
				t.Errorf("%s holds no changed column, yet %d locks and %d log records on it", tc.nc, ncLocks, ncLog)
			}
			if tc.ncTouched {
				// old entry deleted and new one inserted, per row
				if got := keyLocks(evs, "lock_acquired", nc)["X"]; int64(got) != 2*changed {
					t.Errorf("%d X key locks on %s for %d moved entries, want %d", got, tc.nc, changed, 2*changed)
				}
				if int64(ncLog) != 2*changed {
					t.Errorf("%d log records on %s, want %d (delete + insert per row)", ncLog, tc.nc, 2*changed)
				}
			}
		})
	}
}

// UPDATE and DELETE read the rows they may change under U locks: a U
// key lock per row read, converted to X on the rows changed and released
// at once on the rows the predicate rejects; no S lock on the target.
func TestModificationReadsUnderULocks(t *testing.T) {
	for _, tc := range []struct{ sql, table, clustered string }{
		// clustered range seek
		{"UPDATE dbo.Orders SET Status = N'Shipped' WHERE OrderID BETWEEN 100 AND 120", "Orders", "PK_Orders"},
		// scan with a residual predicate: most rows read do not qualify
		{"UPDATE dbo.Orders SET Status = N'Held' WHERE Amount > 990 AND OrderID <= 400", "Orders", "PK_Orders"},
		{"DELETE FROM dbo.OrderLines WHERE OrderID = 77", "OrderLines", "PK_OrderLines"},
		// found through a nonclustered index seek and key lookups
		{"UPDATE dbo.Orders SET Status = N'Held' WHERE CustomerID = 42", "Orders", "PK_Orders"},
		// the rows to change found by a join: the filter is above the scan
		{"UPDATE o SET Status = N'Held' FROM dbo.Orders AS o JOIN dbo.Customers AS c ON c.CustomerID = o.CustomerID WHERE c.CustomerID = 7 AND o.OrderID < 5000", "Orders", "PK_Orders"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			srv := New(Options{})
			ci := hobtOf(t, srv, tc.table, tc.clustered)
			var r *recorder
			var evs []xeRow
			defer func() {
				// no U lock outlives the statement on a row it did not change
				var uAcq, uRel, xAcq int
				for _, e := range evs {
					if e.texts["resource_type"] != "KEY" {
						continue
					}
					switch {
					case e.name == "lock_acquired" && e.texts["mode"] == "U":
						uAcq++
					case e.name == "lock_released" && e.texts["mode"] == "U":
						uRel++
					case e.name == "lock_acquired" && e.texts["mode"] == "X":
						xAcq++
					}
				}
				if uAcq-uRel > xAcq {
					t.Errorf("%d U key locks taken, %d released, %d converted to X: some U locks are kept on rows not changed", uAcq, uRel, xAcq)
				}
			}()
			r, evs = traceBatch(t, srv, "", "BEGIN TRAN; "+tc.sql+"; ROLLBACK")
			var changed int64
			for _, d := range r.dones {
				if d.RowCount > 0 {
					changed = d.RowCount
				}
			}
			if changed <= 0 {
				t.Fatalf("no rows changed: %+v", r.dones)
			}
			acq := keyLocks(evs, "lock_acquired", ci)
			if acq["S"] > 0 {
				t.Errorf("%d S key locks on the modified index; SQL Server reads the rows to change under U", acq["S"])
			}
			if int64(acq["U"]) < changed {
				t.Errorf("%d U key locks for %d rows changed (locks %v)", acq["U"], changed, acq)
			}
			if int64(acq["X"]) != changed {
				t.Errorf("%d X key locks, want one per changed row (%d)", acq["X"], changed)
			}
			// every X follows a U on the same key: a conversion
			u := map[string]bool{}
			released := 0
			for _, e := range evs {
				if e.texts["resource_type"] != "KEY" || e.num("associated_object_id") != ci.PartitionID {
					continue
				}
				key := e.fields["resource_description"]
				switch {
				case e.name == "lock_acquired" && e.texts["mode"] == "U":
					u[key] = true
				case e.name == "lock_acquired" && e.texts["mode"] == "X":
					if !u[key] {
						t.Fatalf("X on %s without a U first", key)
					}
				case e.name == "lock_released" && e.texts["mode"] == "U":
					released++
				}
			}
			t.Logf("key locks %v, %d rows changed, %d U released early", acq, changed, released)
			if notQualifying := acq["U"] - int(changed); released < notQualifying {
				t.Errorf("%d U locks on rows not changed, %d released early", notQualifying, released)
			}
		})
	}
}

// The rows a modification changed reach the client (DONE row count) and
// the events (statement and batch row_count).
func TestRowsAffectedEverywhere(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want int64
	}{
		{"UPDATE dbo.Orders SET Status = N'Shipped' WHERE OrderID BETWEEN 100 AND 120", 21},
		{"DELETE FROM dbo.OrderLines WHERE OrderID = 77", -1},
		{"INSERT INTO dbo.Orders (OrderID, CustomerID, OrderDate, Amount, Status) VALUES (100001, 42, '2026-01-15', 99.5, N'New'), (100002, 43, '2026-01-15', 9.5, N'New')", 2},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			srv := New(Options{})
			r, evs := traceBatch(t, srv, "", tc.sql)
			got := r.dones[len(r.dones)-1].RowCount
			if tc.want >= 0 && got != tc.want {
				t.Fatalf("DONE row count %d, want %d", got, tc.want)
			}
			if got <= 0 {
				t.Fatalf("DONE row count %d", got)
			}
			seen := map[string]bool{}
			for _, e := range evs {
				text := e.fields["batch_text"] + e.fields["statement"]
				if (e.name == "sql_batch_completed" || e.name == "sql_statement_completed") && strings.Contains(text, tc.sql[:20]) {
					seen[e.name] = true
					if e.num("row_count") != got {
						t.Errorf("%s row_count %d, client saw %d", e.name, e.num("row_count"), got)
					}
				}
			}
			if !seen["sql_batch_completed"] || !seen["sql_statement_completed"] {
				t.Fatalf("completed events missing: %v", seen)
			}
		})
	}
}

var writesToTempDb = regexp.MustCompile(`<(SpillToTempDb|SortSpillDetails|ExchangeSpillDetails|HashSpillDetails)[^>]*WritesToTempDb="(\d+)"`)

// planSpillWrites sums WritesToTempDb of the given spill element of the
// actual plans among evs.
func planSpillWrites(evs []xeRow, elem string) int64 {
	var n int64
	for _, e := range evs {
		if e.name != "query_post_execution_showplan" {
			continue
		}
		for _, m := range writesToTempDb.FindAllStringSubmatch(e.raw, -1) {
			if m[1] == elem {
				v, _ := strconv.ParseInt(m[2], 10, 64)
				n += v
			}
		}
	}
	return n
}

// sort_warning and exchange_spill carry the tempdb pages of the spill
// (worktable_physical_writes), equal to the plan's WritesToTempDb, so an
// exporter summing the events and a replay reading the plan agree.
func TestSpillEventsCarryPages(t *testing.T) {
	byName := map[string]Scenario{}
	for _, sc := range Scenarios() {
		byName[sc.Name] = sc
	}
	for _, tc := range []struct{ scenario, event, planElem string }{
		{"sort_spill", "sort_warning", "SortSpillDetails"},
		{"exchange_spill", "exchange_spill", "ExchangeSpillDetails"},
		{"hash_spill", "hash_warning", "HashSpillDetails"},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			sc, ok := byName[tc.scenario]
			if !ok {
				t.Fatalf("no scenario %s", tc.scenario)
			}
			srv := New(Options{})
			release, err := PrepareScenario(context.Background(), srv, sc)
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			_, evs := traceBatch(t, srv, "", sc.SQL)
			want := planSpillWrites(evs, tc.planElem)
			if want <= 0 {
				t.Fatalf("plan shows no %s writes", tc.planElem)
			}
			var writes int64
			var n int
			for _, e := range evs {
				if e.name != tc.event {
					continue
				}
				n++
				if _, ok := e.fields["worktable_physical_writes"]; !ok {
					t.Errorf("%s has no worktable_physical_writes (fields %v)", tc.event, keysOf(e.fields))
				}
				writes += e.num("worktable_physical_writes") + e.num("workfile_physical_writes")
			}
			if n == 0 {
				t.Fatalf("no %s event", tc.event)
			}
			if writes != want {
				t.Errorf("%s events report %d pages written, the plan %d", tc.event, writes, want)
			}
		})
	}
}

func keysOf(m map[string]string) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return fmt.Sprint(out)
}

package standin

import (
	"encoding/binary"
	"encoding/xml"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// functionAt names the function at a module's RVA in the stand-in's layout.
func functionAt(t *testing.T, module string, rva uint32) string {
	t.Helper()
	for _, m := range StackModules() {
		if m.Name == module || m.File == module {
			i := int(rva-FirstFunctionRVA) / FunctionSize
			if rva < FirstFunctionRVA || i >= len(m.Functions) {
				t.Fatalf("%s+0x%X is outside the module's functions", module, rva)
			}
			return m.Name + "!" + m.Functions[i]
		}
	}
	t.Fatalf("no module %s", module)
	return ""
}

// stacksOf traces query with call stacks on three events and returns the
// stacks of each event name, decoded back to function names.
func stacksOf(t *testing.T, persona, action, query string) map[string][][]string {
	t.Helper()
	srv := New(Options{Persona: persona})
	c := session(t, srv, 51)
	mustRun(t, c, `CREATE EVENT SESSION cs ON SERVER
ADD EVENT sqlserver.physical_page_read(ACTION(`+action+`)), ADD EVENT sqlserver.lock_acquired(ACTION(`+action+`)),
ADD EVENT sqlos.wait_info(ACTION(`+action+`)), ADD EVENT sqlserver.sql_batch_starting
ADD TARGET package0.ring_buffer(SET max_events_limit = 5000) WITH (MAX_MEMORY = 8192 KB)`)
	mustRun(t, c, "ALTER EVENT SESSION cs ON SERVER STATE = START")
	mustRun(t, c, "DBCC DROPCLEANBUFFERS")
	mustRun(t, c, query)
	srv.FlushEventSessions()
	data := mustRun(t, c, "SELECT CAST(target_data AS nvarchar(max)) FROM sys.dm_xe_session_targets WHERE target_name = 'ring_buffer'").sets[0].rows[0][0].(string)
	var ring struct {
		Events []xeEventXML `xml:"event"`
	}
	if err := xml.Unmarshal([]byte(data), &ring); err != nil {
		t.Fatal(err)
	}
	bases := map[uint64]string{}
	for _, row := range mustRun(t, c, "SELECT base_address, name FROM sys.dm_os_loaded_modules WHERE name NOT LIKE '%.rll'").sets[0].rows {
		bases[binary.BigEndian.Uint64(row[0].([]byte))] = row[1].(string)
	}
	rvaFrame := regexp.MustCompile(`<frame id="([0-9A-F]{2})" pdb="(\w+)\.pdb" age="(\d+)" guid="([0-9a-f-]{36})" module="([\w.]+)" rva="0x([0-9A-F]+)" />`)
	out := map[string][][]string{}
	for _, ev := range ring.Events {
		for _, a := range ev.Actions {
			if a.Name != action[len("package0."):] {
				continue
			}
			var names []string
			for _, line := range strings.Split(strings.TrimSpace(a.Value), "\n") {
				if action == "package0.callstack_rva" {
					m := rvaFrame.FindStringSubmatch(line)
					if m == nil {
						t.Fatalf("callstack_rva frame %q", line)
					}
					rva, _ := strconv.ParseUint(m[6], 16, 32)
					names = append(names, functionAt(t, m[2], uint32(rva)))
					continue
				}
				addr, err := strconv.ParseUint(strings.TrimPrefix(line, "0x"), 16, 64)
				if err != nil {
					t.Fatalf("callstack frame %q", line)
				}
				// the module is the one with the highest base ≤ the address
				var base uint64
				for b := range bases {
					if b <= addr && b > base {
						base = b
					}
				}
				path := bases[base]
				file := path[strings.LastIndexAny(path, `\`)+1:]
				names = append(names, functionAt(t, strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(file, ".dll"), ".DLL")), uint32(addr-base)))
			}
			if len(names) == 0 || len(names) > maxStackFrames {
				t.Fatalf("%s: %d frames", ev.Name, len(names))
			}
			out[ev.Name] = append(out[ev.Name], names)
		}
	}
	return out
}

func hasStack(stacks [][]string, want ...string) bool {
	for _, s := range stacks {
		if len(s) >= len(want) && slices.Equal(s[:len(want)], want) {
			return true
		}
	}
	return false
}

// Page reads go through the buffer pool under the seek's GetRow, locks
// through the lock manager, PAGEIOLATCH waits through the scheduler and
// the buffer latch; in both action forms, and the raw addresses resolve
// through sys.dm_os_loaded_modules' base addresses.
func TestCallStacksFollowTheEngine(t *testing.T) {
	// the seek_key_lookup scenario: Nested Loops over an Index Seek and a Key Lookup
	const seek = "SELECT o.OrderID, o.OrderDate, o.Amount FROM dbo.Orders AS o WHERE o.CustomerID = 42"
	for _, tc := range []struct{ persona, action string }{{"sql2017", "package0.callstack"}, {"sql2022", "package0.callstack_rva"}} {
		t.Run(tc.persona, func(t *testing.T) {
			st := stacksOf(t, tc.persona, tc.action, seek)
			profile := "sqlmin!CQScanProfileNew::GetRow"
			if tc.persona == "sql2022" {
				profile = "sqlmin!CQScanLightProfileNew::GetRow"
			}
			if !hasStack(st["physical_page_read"], "sqlmin!XeSqlPkg::physical_page_read::Publish", "sqlmin!BPool::ReadPage", "sqlmin!BPool::Get",
				"sqlmin!FixPageNotThruLinkage", "sqlmin!BTreeMgr::Seek", "sqlmin!IndexDataSetSession::SetStartPosition", "sqlmin!RowsetNewSS::FetchNextRow",
				"sqlmin!CQScanRangeNew::GetRow", profile, "sqlmin!CQScanNLJoinTrivialNew::GetRow", profile) {
				t.Errorf("page read stacks: %v", st["physical_page_read"])
			}
			// the statement's frames below the operators (the deepest are cut at 16 frames)
			if s := st["physical_page_read"]; len(s) == 0 || !slices.Contains(s[0], "sqllang!CXStmtSelect::XretExecute") || !slices.Contains(s[0], "sqlmin!CQueryScan::GetRow") {
				t.Errorf("page read stack without the statement's frames: %v", s)
			}
			if !hasStack(st["lock_acquired"], "sqlmin!XeSqlPkg::lock_acquired::Publish", "sqlmin!lck_ProduceExtendedEvent", "sqlmin!lck_lockInternal") {
				t.Errorf("lock stacks: %v", st["lock_acquired"])
			}
			if !hasStack(st["wait_info"], "sqldk!XeSosPkg::wait_info::Publish", "sqldk!SOS_Task::PreWait", "sqldk!SOS_Scheduler::SuspendNonPreemptive",
				"sqldk!WaitableBase::Wait", "sqlmin!LatchBase::Suspend") {
				t.Errorf("wait stacks: %v", st["wait_info"])
			}
			if len(st["sql_batch_starting"]) != 0 {
				t.Error("an event without the action carries a stack")
			}
		})
	}
}

// sys.dm_os_loaded_modules lists the modules with their base addresses
// and versions for the sysadmin, and refuses other logins as SQL Server
// does (Msg 300).
func TestLoadedModules(t *testing.T) {
	srv := New(Options{Persona: "sql2022", ExtraLogins: map[string]string{"reader": "pw"}})
	c := session(t, srv, 51)
	rows := mustRun(t, c, "SELECT name, base_address, file_version, company FROM sys.dm_os_loaded_modules ORDER BY name").sets[0].rows
	names := map[string]bool{}
	for _, r := range rows {
		names[r[0].(string)[strings.LastIndexAny(r[0].(string), `\`)+1:]] = true
		if len(r[1].([]byte)) != 8 || r[2] != "16.0:1000.6" && !strings.HasPrefix(r[2].(string), "10.0:") {
			t.Errorf("row %v", r)
		}
	}
	for _, want := range []string{"sqlservr.exe", "sqlmin.dll", "sqllang.dll", "sqldk.dll", "SQLOS.dll", "SqlTsEs.dll", "ntdll.dll", "KERNEL32.DLL", "sqlevn70.rll"} {
		if !names[want] {
			t.Errorf("no %s in %v", want, names)
		}
	}
	reader := session(t, srv, 52)
	reader.user, reader.sysadmin = "reader", false
	if _, err := run(reader, "SELECT name FROM sys.dm_os_loaded_modules"); err == nil || err.Number != 300 || !strings.Contains(err.Message, "VIEW SERVER PERFORMANCE STATE") {
		t.Fatalf("reader: %v, want Msg 300 naming VIEW SERVER PERFORMANCE STATE", err)
	}
}

// sys.dm_db_page_info exists from SQL Server 2019: older box personas
// answer Msg 208; LIMITED leaves the description columns NULL.
func TestPageInfoByVersion(t *testing.T) {
	for persona, ok := range map[string]bool{"sql2016": false, "sql2017": false, "sql2019": true, "sql2022": true, "azure-sql-database": true} {
		c := session(t, New(Options{Persona: persona}), 51)
		r, err := run(c, "SELECT page_type_desc FROM sys.dm_db_page_info(DB_ID(), 1, 1, 'DETAILED')")
		switch {
		case ok && err != nil:
			t.Errorf("%s: %v", persona, err)
		case !ok && (err == nil || err.Number != 208):
			t.Errorf("%s: %v, want Msg 208", persona, err)
		case ok:
			if lim := mustRun(t, c, "SELECT page_type_desc, page_type FROM sys.dm_db_page_info(DB_ID(), 1, 1, 'LIMITED')").sets[0].rows[0]; lim[0] != nil {
				t.Errorf("%s: LIMITED page_type_desc %v (DETAILED %v)", persona, lim[0], r.sets[0].rows[0][0])
			}
		}
	}
}

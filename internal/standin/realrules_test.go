package standin

import (
	"testing"
)

// Every persona's databases report its version's default compatibility
// level (ALTER DATABASE … SET COMPATIBILITY_LEVEL, the table of products).
func TestPersonaCompatibilityLevel(t *testing.T) {
	want := map[string]int64{"sql2016": 130, "sql2017": 140, "sql2019": 150, "sql2022": 160, "sql2025": 170,
		"azure-sql-database": 160, "azure-sql-managed-instance": 150}
	for _, p := range Personas() {
		w, ok := want[p.Name]
		if !ok {
			t.Fatalf("persona %s has no expected compatibility level", p.Name)
		}
		c := session(t, New(Options{Persona: p.Name}), 51)
		r := mustRun(t, c, "SELECT compatibility_level FROM sys.databases WHERE database_id = DB_ID()")
		if got := r.sets[0].rows[0][0]; got != w {
			t.Errorf("%s: compatibility_level %v, want %d", p.Name, got, w)
		}
	}
}

// sys.dm_xe_packages joins sys.dm_xe_objects on package_guid, and the
// objects include the actions and targets each persona has: callstack_rva
// only where the product has it.
func TestXEObjectsActionsPerPersona(t *testing.T) {
	const q = "SELECT p.name, o.name, o.object_type FROM sys.dm_xe_objects AS o " +
		"JOIN sys.dm_xe_packages AS p ON o.package_guid = p.guid WHERE o.object_type IN (N'event', N'action', N'target')"
	for _, p := range Personas() {
		c := session(t, New(Options{Persona: p.Name}), 51)
		r := mustRun(t, c, q)
		got := map[string]bool{}
		for _, row := range r.sets[0].rows {
			got[row[2].(string)+" "+row[0].(string)+"."+row[1].(string)] = true
		}
		for _, must := range []string{"event sqlserver.sql_batch_completed", "event sqlos.wait_info", "action package0.event_sequence",
			"action sqlserver.session_id", "action sqlos.task_address", "action package0.callstack", "target package0.ring_buffer", "target package0.event_file"} {
			if !got[must] {
				t.Errorf("%s: %s not listed", p.Name, must)
			}
		}
		if got["action package0.callstack_rva"] != p.CallstackRVA {
			t.Errorf("%s: callstack_rva listed %v, persona has it %v", p.Name, got["action package0.callstack_rva"], p.CallstackRVA)
		}
		pk := mustRun(t, c, "SELECT name FROM sys.dm_xe_packages WHERE name = N'package0'")
		if len(pk.sets[0].rows) != 1 {
			t.Errorf("%s: package0 not in sys.dm_xe_packages", p.Name)
		}
	}
}

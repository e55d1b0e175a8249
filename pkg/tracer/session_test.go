package tracer

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/testenv"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/tsql"
)

var update = flag.Bool("update", false, "rewrite golden files")

const goldenName = "queryreplay_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b"

func TestSessionDDLGolden(t *testing.T) {
	base := SessionSpec{Name: goldenName, SPID: 53, Directory: `/var/opt/mssql/log`, MaxFileSizeMB: 256, MaxEvents: 1000}
	cases := map[string]func(s *SessionSpec){
		"minimal":        func(s *SessionSpec) {},
		"all_groups":     func(s *SessionSpec) { s.Events = bundle.AllEventGroups() },
		"locks":          func(s *SessionSpec) { s.Events.Locks = true },
		"waits":          func(s *SessionSpec) { s.Events.Waits = true },
		"memory":         func(s *SessionSpec) { s.Events.Memory = true },
		"splits":         func(s *SessionSpec) { s.Events.Splits = true },
		"log":            func(s *SessionSpec) { s.Events.Log = true },
		"fileio":         func(s *SessionSpec) { s.Events.FileIO = true },
		"modification":   func(s *SessionSpec) { s.Modification = true; s.Events.Locks = true },
		"callstack":      func(s *SessionSpec) { s.CallStacks = true; s.Events.Waits = true },
		"callstack_rva":  func(s *SessionSpec) { s.CallStacks = true; s.CallstackRVA = true; s.Events.Waits = true },
		"windows_quoted": func(s *SessionSpec) { s.Directory = `C:\Program Files\MSSQL16.O'Brien\MSSQL\Log\`; s.MaxFileSizeMB = 1 },
		"azure_database": func(s *SessionSpec) { s.Scope = ScopeDatabase; s.Directory = ""; s.Events.Locks = true },
		"managed_instance": func(s *SessionSpec) {
			s.RingBuffer = true
			s.Directory = ""
			s.Name = goldenName + "_57_20260115103000123"
		},
	}
	for name, mod := range cases {
		t.Run(name, func(t *testing.T) {
			s := base
			mod(&s)
			got := s.CreateDDL() + "\n-- start\n" + s.StartDDL() + "\n-- stop\n" + s.StopDDL() + "\n-- drop\n" + s.DropDDL() + "\n"
			if !s.UsesRingBuffer() {
				got += "-- read\n" + s.ReadPattern() + "\n"
			}
			testenv.Golden(t, filepath.Join("testdata", "ddl", name+".sql"), []byte(got), *update)
		})
	}
}

// Every toggle must change the event list (docs/design/tracing.md §17 item 14).
func TestTogglesChangeEvents(t *testing.T) {
	base := SessionSpec{Name: goldenName, SPID: 1, Directory: "/x"}
	count := func(s SessionSpec) int { return strings.Count(s.CreateDDL(), "ADD EVENT ") }
	n0 := count(base)
	if n0 != 10 {
		t.Fatalf("minimal session has %d events, want the 10 always-on ones (batch, statement, plan, profile, page events)", n0)
	}
	toggles := map[string]struct {
		mod   func(*SessionSpec)
		event string
	}{
		"locks":  {func(s *SessionSpec) { s.Events.Locks = true }, "sqlserver.lock_acquired"},
		"waits":  {func(s *SessionSpec) { s.Events.Waits = true }, "sqlos.wait_info"},
		"memory": {func(s *SessionSpec) { s.Events.Memory = true }, "sqlserver.sort_warning"},
		"splits": {func(s *SessionSpec) { s.Events.Splits = true }, "sqlserver.page_split"},
		"log":    {func(s *SessionSpec) { s.Events.Log = true }, "sqlserver.log_flush_complete"},
		"fileio": {func(s *SessionSpec) { s.Events.FileIO = true }, "sqlserver.file_read_completed"},
		"dml":    {func(s *SessionSpec) { s.Modification = true }, "sqlserver.transaction_log"},
	}
	for name, tc := range toggles {
		s := base
		tc.mod(&s)
		ddl := s.CreateDDL()
		if count(s) <= n0 || !strings.Contains(ddl, "ADD EVENT "+tc.event+" ") {
			t.Errorf("%s: DDL does not add %s:\n%s", name, tc.event, ddl)
		}
		if strings.Contains(base.CreateDDL(), tc.event+" ") {
			t.Errorf("%s: %s is in the DDL with the toggle off", name, tc.event)
		}
	}
	// Call stacks go only on storage events, never on the plan event.
	s := base
	s.CallStacks = true
	for _, line := range strings.Split(s.CreateDDL(), "\n") {
		if strings.Contains(line, "query_post_execution_showplan") && strings.Contains(line, "callstack") {
			t.Errorf("call stack on the showplan event: %s", line)
		}
		if strings.Contains(line, "physical_page_read") && !strings.Contains(line, "package0.callstack") {
			t.Errorf("no call stack on physical_page_read: %s", line)
		}
	}
}

func TestSessionName(t *testing.T) {
	before := time.Now().Add(-time.Millisecond)
	name, err := NewSessionName()
	if err != nil {
		t.Fatal(err)
	}
	if len(name) != len(SessionPrefix)+32 || !strings.HasPrefix(name, SessionPrefix) {
		t.Fatalf("name %q is not queryreplay_<32 hex>", name)
	}
	created, ok := SessionCreated(name)
	if !ok || created.Before(before.Truncate(time.Millisecond)) || created.After(time.Now()) {
		t.Fatalf("SessionCreated(%q) = %v, %v; want about now", name, created, ok)
	}
	other, _ := NewSessionName()
	if other == name {
		t.Fatal("two names are equal")
	}
	for _, bad := range []string{"QueryReplay_1558c1fe10524e4f1558c1fe10524e4f", "queryreplay_xyz", "queryreplay_" + strings.Repeat("0", 32), "system_health"} {
		if _, ok := SessionCreated(bad); ok {
			t.Errorf("SessionCreated(%q) accepted a name this package did not make", bad)
		}
	}
	s := SessionSpec{Name: name}
	if tn := s.TransactionName(); len(tn) > 32 || strings.Contains(tn, name) {
		t.Errorf("transaction name %q: longer than 32 or contains the marker", tn)
	}
}

func TestPaths(t *testing.T) {
	cases := []struct{ errorLog, dir, file string }{
		{"/var/opt/mssql/log/errorlog", "/var/opt/mssql/log", "/var/opt/mssql/log/s.xel"},
		{`C:\Program Files\Microsoft SQL Server\MSSQL16.MSSQLSERVER\MSSQL\Log\ERRORLOG`, `C:\Program Files\Microsoft SQL Server\MSSQL16.MSSQLSERVER\MSSQL\Log`, `C:\Program Files\Microsoft SQL Server\MSSQL16.MSSQLSERVER\MSSQL\Log\s.xel`},
		{`D:\rdsdbdata\log\ERRORLOG`, `D:\rdsdbdata\log`, `D:\rdsdbdata\log\s.xel`},
	}
	for _, c := range cases {
		dir := logDirectory(c.errorLog)
		if dir != c.dir {
			t.Errorf("logDirectory(%q) = %q, want %q", c.errorLog, dir, c.dir)
		}
		s := SessionSpec{Name: "s", Directory: dir + `\`}
		if strings.HasPrefix(dir, "/") {
			s.Directory = dir + "/"
		}
		if got := s.FilePath(); got != c.file {
			t.Errorf("FilePath(%q) = %q, want %q", s.Directory, got, c.file)
		}
	}
	if logDirectory("errorlog") != "" {
		t.Error("a bare file name has no directory")
	}
	// Only the final .xel is replaced by the wildcard.
	s := SessionSpec{Name: "s", Directory: "/data/x.xel.d"}
	if got := s.ReadPattern(); got != "/data/x.xel.d/s*.xel" {
		t.Errorf("ReadPattern = %q", got)
	}
	if got := tsql.QuoteString(`C:\O'Brien\'x`); got != `N'C:\O''Brien\''x'` {
		t.Errorf("QuoteString = %s", got)
	}
	if got := tsql.QuoteName("a]b"); got != "[a]]b]" {
		t.Errorf("QuoteName = %s", got)
	}
}

func TestFormatPhysLoc(t *testing.T) {
	if got := FormatPhysLoc([]byte{0x32, 0x01, 0, 0, 1, 0, 5, 0}); got != "(1:306:5)" {
		t.Errorf("FormatPhysLoc = %s", got)
	}
	if got := FormatPhysLoc([]byte{1, 2}); got != "0x0102" {
		t.Errorf("FormatPhysLoc(short) = %s", got)
	}
}

func TestMissingPermissions(t *testing.T) {
	box := func(p ...string) permissionSet {
		s := permissionSet{}
		for _, x := range p {
			s[x] = true
		}
		return s
	}
	cases := []struct {
		name         string
		scope        Scope
		perms        permissionSet
		sysadmin     bool
		needSysadmin bool
		want         []string // substrings of the missing list; nil = nothing missing
	}{
		{"sysadmin", ScopeServer, box(), true, true, nil},
		{"classic grants", ScopeServer, box("ALTER ANY EVENT SESSION", "VIEW SERVER STATE"), false, false, nil},
		{"2022 granular", ScopeServer, box("CREATE ANY EVENT SESSION", "ALTER ANY EVENT SESSION ENABLE", "ALTER ANY EVENT SESSION DISABLE", "DROP ANY EVENT SESSION", "VIEW SERVER PERFORMANCE STATE"), false, false, nil},
		{"2022 partial", ScopeServer, box("CREATE ANY EVENT SESSION", "VIEW SERVER PERFORMANCE STATE"), false, false, []string{"ALTER ANY EVENT SESSION"}},
		{"nothing", ScopeServer, box("CONNECT SQL"), false, false, []string{"ALTER ANY EVENT SESSION", "VIEW SERVER STATE"}},
		{"no sysadmin for dbcc", ScopeServer, box("ALTER ANY EVENT SESSION", "VIEW SERVER STATE"), false, true, []string{"sysadmin"}},
		{"control server", ScopeServer, box("CONTROL SERVER"), false, false, nil},
		{"azure ok", ScopeDatabase, box("ALTER ANY DATABASE EVENT SESSION", "VIEW DATABASE STATE"), false, false, nil},
		{"azure none", ScopeDatabase, box("CONNECT"), false, false, []string{"ALTER ANY DATABASE EVENT SESSION", "VIEW DATABASE STATE"}},
		{"azure granular", ScopeDatabase, box("CREATE ANY DATABASE EVENT SESSION", "ALTER ANY DATABASE EVENT SESSION ENABLE", "ALTER ANY DATABASE EVENT SESSION DISABLE", "DROP ANY DATABASE EVENT SESSION", "VIEW DATABASE PERFORMANCE STATE"), false, false, nil},
		{"azure create only", ScopeDatabase, box("CREATE ANY DATABASE EVENT SESSION", "VIEW DATABASE STATE"), false, false, []string{"ALTER ANY DATABASE EVENT SESSION"}},
		{"azure control", ScopeDatabase, box("CONTROL"), false, false, nil},
	}
	for _, c := range cases {
		got := missingPermissions(c.scope, c.perms, c.sysadmin, c.needSysadmin, []string{"DBCC DROPCLEANBUFFERS"})
		if len(c.want) == 0 && len(got) > 0 {
			t.Errorf("%s: missing %v, want none", c.name, got)
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: missing %v, want %d entries", c.name, got, len(c.want))
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: entry %d = %q, want it to name %s", c.name, i, got[i], w)
			}
		}
	}
}

// The predicate uses the documented comparator on every event, never the
// undocumented NOT LIKE (independent of the golden files).
func TestPredicateUsesDocumentedComparator(t *testing.T) {
	for _, s := range []SessionSpec{
		{Name: goldenName, SPID: 53, Directory: "/x", Events: bundle.AllEventGroups(), Modification: true},
		{Name: goldenName, SPID: 53, Scope: ScopeDatabase},
		{Name: goldenName, SPID: 53, RingBuffer: true},
	} {
		ddl := s.CreateDDL()
		want := "WHERE (sqlserver.session_id = (53) AND NOT sqlserver.like_i_sql_unicode_string(sqlserver.sql_text, N'%" + goldenName + "%'))"
		if n, events := strings.Count(ddl, want), strings.Count(ddl, "ADD EVENT "); n != events || strings.Contains(ddl, "NOT LIKE") {
			t.Errorf("%d of %d events carry the predicate %s:\n%s", n, events, want, ddl)
		}
		if ring := strings.Contains(ddl, "ADD TARGET package0.ring_buffer"); ring != s.UsesRingBuffer() || ring == strings.Contains(ddl, "event_file") {
			t.Errorf("target: ring_buffer %v, want %v:\n%s", ring, s.UsesRingBuffer(), ddl)
		}
	}
}

func TestOwnedSessionNames(t *testing.T) {
	login := time.Date(2026, 1, 15, 10, 30, 0, 123_333_333, time.UTC)
	name, err := NewOwnedSessionName(SessionOwner{SPID: 32767, LoginTime: login})
	if err != nil {
		t.Fatal(err)
	}
	if len(name) > 68 || !strings.HasSuffix(name, "_32767_20260115103000123") {
		t.Errorf("name %q (%d characters)", name, len(name))
	}
	if created, ok := SessionCreated(name); !ok || time.Since(created) > time.Minute {
		t.Errorf("SessionCreated(%q) = %v, %v", name, created, ok)
	}
	if spid, key, ok := SessionOwnerOf(name); !ok || spid != 32767 || key != loginKey(login) {
		t.Errorf("SessionOwnerOf(%q) = %d, %q, %v", name, spid, key, ok)
	}
	if _, err := NewOwnedSessionName(SessionOwner{}); err == nil {
		t.Error("a name without an owner was made")
	}
	plain, _ := NewSessionName()
	if _, _, ok := SessionOwnerOf(plain); ok {
		t.Error("an unowned name has an owner")
	}
	hexPart := strings.TrimPrefix(plain, SessionPrefix)
	for _, bad := range []string{
		"queryreplay_exporter_prod", "queryreplay_exporter_" + hexPart, "QueryReplay_" + hexPart, "queryreplay_" + strings.ToUpper(hexPart),
		plain + "_", plain + "x", plain + "_52", plain + "_52_2026", plain + "_x_20260115103000123", plain + "_0_20260115103000123",
		"queryreplay_" + hexPart[:31],
	} {
		_, created := SessionCreated(bad)
		_, _, owned := SessionOwnerOf(bad)
		if owned || created && (strings.Contains(bad, "exporter") || strings.HasPrefix(bad, "QueryReplay_")) {
			t.Errorf("%q: created %v, owned %v", bad, created, owned)
		}
	}
}

package exporter

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/pkg/tracer"
)

// realWaitTypes loads the real SQL Server 2017 wait_types map (key → name)
// that the stand-in also serves.
func realWaitTypes(t *testing.T) map[uint64]string {
	t.Helper()
	f, err := os.Open("../../internal/standin/xevents/wait_types_sql2017.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[uint64]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "\t")
		n, err := strconv.ParseUint(k, 10, 64)
		if ok && err == nil {
			out[n] = v
		}
	}
	return out
}

func TestWaitKeyRanges(t *testing.T) {
	m := map[uint64]string{1: "LCK_M_SCH_S", 2: "LCK_M_SCH_M", 3: "LCK_M_S", 5: "LCK_M_X", 66: "PAGEIOLATCH_SH", 67: "PAGEIOLATCH_UP", 108: "SLEEP_TASK", 205: "WAITFOR"}
	r, all := waitKeyRanges(m, []string{"lck_m_*", "PAGEIOLATCH_SH"}, []string{"LCK_M_SCH_M"})
	if all || len(r) != 4 || r[0] != (keyRange{1, 1}) || r[1] != (keyRange{3, 3}) || r[2] != (keyRange{5, 5}) || r[3] != (keyRange{66, 66}) {
		t.Errorf("ranges %v", r)
	}
	r, _ = waitKeyRanges(m, []string{"lck_m_*", "PAGEIOLATCH_SH"}, nil)
	if got := rangePredicate("wait_type", r); got != "((wait_type >= (1) AND wait_type <= (3)) OR wait_type = (5) OR wait_type = (66))" {
		t.Errorf("predicate %s", got)
	}
	if _, all := waitKeyRanges(m, nil, nil); !all {
		t.Error("no pattern at all must keep every type without a predicate")
	}
	// On the real map, the benign list collapses into a predicate short
	// enough for a session definition, and keeps the waits that matter.
	real := realWaitTypes(t)
	r, all = waitKeyRanges(real, nil, benignWaits())
	if all || len(r) > 80 {
		t.Errorf("benign exclusion gives %d ranges", len(r))
	}
	kept := map[string]bool{}
	for _, kr := range r {
		for k := kr.lo; k <= kr.hi; k++ {
			kept[real[k]] = true
		}
	}
	for _, w := range []string{"PAGEIOLATCH_SH", "LCK_M_X", "WRITELOG", "CXPACKET", "IO_COMPLETION", "RESOURCE_SEMAPHORE"} {
		if !kept[w] {
			t.Errorf("%s is excluded by the benign list", w)
		}
	}
	for _, w := range []string{"SLEEP_TASK", "LAZYWRITER_SLEEP", "XE_TIMER_EVENT", "WAITFOR", "DIRTY_PAGE_POLL"} {
		if kept[w] {
			t.Errorf("%s is kept", w)
		}
	}
}

func TestWaitCategories(t *testing.T) {
	for wt, want := range map[string]string{
		"LCK_M_X": "Lock", "PAGEIOLATCH_SH": "Buffer IO", "PAGELATCH_EX": "Buffer Latch", "LATCH_EX": "Latch",
		"WRITELOG": "Tran Log IO", "CXPACKET": "Parallelism", "SOS_SCHEDULER_YIELD": "CPU", "THREADPOOL": "Worker Thread",
		"RESOURCE_SEMAPHORE": "Memory", "RESOURCE_SEMAPHORE_QUERY_COMPILE": "Compilation", "ASYNC_NETWORK_IO": "Network IO",
		"PREEMPTIVE_OS_WRITEFILEGATHER": "Preemptive", "HADR_SYNC_COMMIT": "Replication", "SQLTRACE_BUFFER_FLUSH": "Idle",
		"SQLTRACE_LOCK": "Tracing", "IO_COMPLETION": "Other Disk IO", "WAITFOR": "User Wait", "SOMETHING_NEW_IN_2030": "Other",
		"HADR_THROTTLE_LOG_RATE_GOVERNOR": "Log Rate Governor", "SLEEP_TASK": "Idle", "BROKER_RECEIVE_WAITFOR": "Service Broker",
	} {
		if got := defaultWaitCategories.category(wt); got != want {
			t.Errorf("%s: %s, want %s", wt, got, want)
		}
	}
	// every real wait type has a category from the closed set
	cats := map[string]bool{}
	for _, name := range realWaitTypes(t) {
		cats[defaultWaitCategories.category(name)] = true
	}
	if len(cats) > 26 {
		t.Errorf("%d categories: %v", len(cats), cats)
	}
	if _, err := parseWaitCategories("LCK_M_X\n"); err == nil {
		t.Error("a line without a tab is accepted")
	}
}

func testSpec() *sessionSpec {
	return &sessionSpec{name: "queryreplay_exporter_prod", target: "event_file", file: "queryreplay_exporter_prod.xel",
		maxFileMB: 64, rollover: 4, ringEvents: 1000, ringKB: 4096, maxMemoryMB: 4, latencySec: 5,
		groups: EventGroupNames, databaseIDs: []uint64{5, 7}, waitEvent: "wait_info", waitEndOpcode: 1, hasEndOpcode: true,
		waitMinMs: 2, waitRanges: []keyRange{{1, 21}, {66, 66}}}
}

func TestCreateDDL(t *testing.T) {
	ddl := testSpec().createDDL()
	for _, want := range []string{
		"CREATE EVENT SESSION [queryreplay_exporter_prod] ON SERVER\n",
		"ADD EVENT sqlos.wait_info (ACTION (package0.event_sequence, sqlserver.database_id) WHERE (sqlserver.client_app_name <> N'queryreplay-exporter' AND sqlserver.client_app_name <> N'QueryReplay' AND (sqlserver.database_id = (5) OR sqlserver.database_id = (7)) AND opcode = (1) AND duration >= (2) AND ((wait_type >= (1) AND wait_type <= (21)) OR wait_type = (66))))",
		"ADD EVENT sqlserver.sort_warning (ACTION (package0.event_sequence, sqlserver.database_id, sqlserver.query_hash)",
		"ADD EVENT sqlserver.sql_statement_completed (SET collect_statement = (0) ACTION",
		"ADD EVENT sqlserver.page_split (ACTION (package0.event_sequence, sqlserver.database_id) WHERE",
		"ADD TARGET package0.event_file (SET filename = N'queryreplay_exporter_prod.xel', max_file_size = (64), max_rollover_files = (4))",
		"WITH (MAX_MEMORY = 4 MB, EVENT_RETENTION_MODE = ALLOW_SINGLE_EVENT_LOSS, MAX_DISPATCH_LATENCY = 5 SECONDS, MEMORY_PARTITION_MODE = NONE, TRACK_CAUSALITY = OFF, STARTUP_STATE = OFF)",
	} {
		if !strings.Contains(ddl, want) {
			t.Errorf("DDL lacks %q:\n%s", want, ddl)
		}
	}
	if n := strings.Count(ddl, "ADD EVENT"); n != 10 {
		t.Errorf("%d events, want 10", n)
	}
	s := testSpec()
	s.scope, s.target, s.groups, s.databaseIDs, s.startup = tracer.ScopeDatabase, "ring_buffer", []string{GroupSpills}, nil, true
	ddl = s.createDDL()
	for _, want := range []string{"ON DATABASE", "ADD TARGET package0.ring_buffer (SET max_events_limit = (1000), max_memory = (4096))", "STARTUP_STATE = ON",
		"WHERE (sqlserver.client_app_name <> N'queryreplay-exporter' AND sqlserver.client_app_name <> N'QueryReplay'))"} {
		if !strings.Contains(ddl, want) {
			t.Errorf("ring DDL lacks %q:\n%s", want, ddl)
		}
	}
	if strings.Contains(ddl, "wait_info") {
		t.Error("the spills group alone adds waits")
	}
	if got := s.dropDDL(); got != "IF EXISTS (SELECT 1 FROM sys.database_event_sessions WHERE name = N'queryreplay_exporter_prod') DROP EVENT SESSION [queryreplay_exporter_prod] ON DATABASE" {
		t.Errorf("drop: %s", got)
	}
	if !strings.Contains(s.stateQuery(), "sys.dm_xe_database_sessions AS s JOIN sys.dm_xe_database_session_targets") {
		t.Errorf("state query: %s", s.stateQuery())
	}
}

// The exporter's sessions are never the tracer's: the tracer's sweep only
// recognises names it made, and no exporter name parses as one.
func TestSessionNamesNeverCollideWithTraces(t *testing.T) {
	for _, n := range []string{"a", "prod", "0123456789abcdef0123456789abcdef", strings.Repeat("f", 32)} {
		name := OwnedSessionName(n, "0123456789abcdef")
		if _, ok := tracer.SessionCreated(name); ok {
			t.Errorf("%s looks like a trace session", name)
		}
		if !strings.HasPrefix(name, SessionPrefix) {
			t.Errorf("%s", name)
		}
	}
	trace, err := tracer.NewSessionName()
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(trace, SessionPrefix) {
		t.Errorf("trace session %s has the exporter prefix", trace)
	}
}

func TestDefaultFileName(t *testing.T) {
	for in, want := range map[string]string{
		"":                                  "s.xel",
		"/data/xe/":                         "/data/xe/s.xel",
		"/data/xe":                          "/data/xe/s.xel",
		`D:\xe\`:                            `D:\xe\s.xel`,
		"/data/mine.xel":                    "/data/mine.xel",
		"https://a.blob.core.windows.net/c": "https://a.blob.core.windows.net/c/s.xel",
	} {
		if got := defaultFileName(in, "s"); got != want {
			t.Errorf("defaultFileName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStatementTextAndReplayPath(t *testing.T) {
	batch := "SET NOCOUNT ON; SELECT N'héllo' AS x WHERE 1 = 1"
	u := []rune(batch)
	start := int64(2 * len([]rune("SET NOCOUNT ON; ")))
	end := int64(2*len(u)) - 2
	if got, cut := statementText(batch, start, end, 100); got != "SELECT N'héllo' AS x WHERE 1 = 1" || cut {
		t.Errorf("statement %q cut %v", got, cut)
	}
	if got, _ := statementText(batch, start, -1, 100); got != "SELECT N'héllo' AS x WHERE 1 = 1" {
		t.Errorf("end -1: %q", got)
	}
	if got, cut := statementText(batch, start, -1, 11); got != "SELECT N'h" || !cut {
		t.Errorf("capped: %q %v (must cut on a rune boundary)", got, cut)
	}
	got := replayPath("https://g.example.com/", "0x1A2B3C4D5E6F7788", "Sales & DB", "qr-east.1")
	want := "https://g.example.com/d/queryreplay-replay?var-query_hash=0x1A2B3C4D5E6F7788&var-database=Sales%20%26%20DB&var-replay_ds=qr-east.1&queryreplayRun=1"
	if got != want {
		t.Errorf("replay path\n%s\nwant\n%s", got, want)
	}
}

func TestTopTableRanksAndBounds(t *testing.T) {
	tt := newTopTable(2, time.Hour)
	now := time.Now()
	tt.noteStatements(1, "A", 10, 5000, now)
	tt.noteSpill(2, "A", 1, 8, now)
	tt.noteStatements(3, "B", 1, 100, now)
	tt.noteSpill(4, "B", 3, 8, now.Add(-2*time.Hour))
	tt.trim(now)
	top := tt.top()
	if len(top) != 2 || top[0].QueryHash != 2 || top[1].QueryHash != 1 {
		t.Fatalf("top %+v", top)
	}
	if _, ok := tt.entries[4]; ok {
		t.Error("an entry older than max_age was kept")
	}
	for i := uint64(10); i < 100; i++ {
		tt.noteStatements(i, "C", 1, i, now)
	}
	tt.trim(now)
	if len(tt.entries) > tt.candidates {
		t.Errorf("%d candidates kept, bound %d", len(tt.entries), tt.candidates)
	}
	want := tt.pendingLookups(now)
	if len(want) != 2 || len(tt.pendingLookups(now)) != 0 {
		t.Errorf("lookups %v, then a second time within a minute", want)
	}
}

func TestIsAbsolutePath(t *testing.T) {
	for p, want := range map[string]bool{
		"/var/opt/mssql/log/x.xel": true, `C:\MSSQL\Log\x.xel`: true, "D:/xe/x.xel": true, `\\fs\xe\x.xel`: true,
		"https://a.blob.core.windows.net/c/x.xel": true, "x.xel": false, `xe\x.xel`: false, "": false,
	} {
		if got := isAbsolutePath(p); got != want {
			t.Errorf("isAbsolutePath(%q) = %v", p, got)
		}
	}
}

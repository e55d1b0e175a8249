package xe_test

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/pkg/xe"
)

const realdata = "testdata/realdata/xe_event_xml/"

// decodeAll decodes r completely, returning owned events and row errors; a
// fatal error fails the test.
func decodeAll(t testing.TB, r io.Reader, opts ...func(*xe.Decoder)) ([]xe.Event, []*xe.RowError, *xe.Decoder) {
	t.Helper()
	d := xe.NewDecoder(r)
	for _, o := range opts {
		o(d)
	}
	var evs []xe.Event
	var rowErrs []*xe.RowError
	for {
		ev, err := d.Next()
		if err == io.EOF {
			return evs, rowErrs, d
		}
		var re *xe.RowError
		if errors.As(err, &re) {
			rowErrs = append(rowErrs, re)
			continue
		}
		if err != nil {
			t.Fatalf("fatal decode error: %v", err)
		}
		evs = append(evs, ev.Clone())
	}
}

func decodeFile(t *testing.T, path string) ([]xe.Event, *xe.Decoder) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	evs, rowErrs, d := decodeAll(t, bytes.NewReader(data))
	if len(rowErrs) > 0 {
		t.Fatalf("%s: unexpected row errors: %v", path, rowErrs)
	}
	return evs, d
}

func data(t *testing.T, ev *xe.Event, name string) xe.Value {
	t.Helper()
	v, ok := ev.Data(name)
	if !ok {
		t.Fatalf("%s: no data field %q", ev.Name, name)
	}
	return v
}

func action(t *testing.T, ev *xe.Event, name string) xe.Value {
	t.Helper()
	v, ok := ev.Action(name)
	if !ok {
		t.Fatalf("%s: no action %q", ev.Name, name)
	}
	return v
}

func wantUint(t *testing.T, what string, v xe.Value, want uint64) {
	t.Helper()
	got, ok := v.Uint()
	if !ok || got != want {
		t.Errorf("%s = %q (kind %v, uint %d ok=%v), want %d", what, v.Raw, v.Kind, got, ok, want)
	}
}

func wantKind(t *testing.T, what string, v xe.Value, kind xe.Kind, raw string) {
	t.Helper()
	if v.Kind != kind || v.Raw != raw {
		t.Errorf("%s = %v %q, want %v %q", what, v.Kind, v.Raw, kind, raw)
	}
}

func wantMap(t *testing.T, what string, v xe.Value, key uint64, text string) {
	t.Helper()
	got, ok := v.Uint()
	if !ok || got != key || !v.HasText || v.Text != text {
		t.Errorf("%s = key %d (ok %v) text %q (has %v), want %d %q", what, got, ok, v.Text, v.HasText, key, text)
	}
}

func wantTime(t *testing.T, ev *xe.Event, raw string) {
	t.Helper()
	if ev.Timestamp.Raw != raw {
		t.Errorf("%s timestamp raw %q, want %q", ev.Name, ev.Timestamp.Raw, raw)
	}
	want, err := time.Parse(time.RFC3339Nano, raw)
	if err != nil {
		t.Fatal(err)
	}
	if !ev.Timestamp.Time.Equal(want) {
		t.Errorf("%s timestamp %v, want %v", ev.Name, ev.Timestamp.Time, want)
	}
}

func TestRealPerformanceMonitorWaitInfo(t *testing.T) {
	evs, _ := decodeFile(t, realdata+"found/performancemonitor_wait_info_real.xml")
	if len(evs) != 1 {
		t.Fatalf("got %d events, want 1", len(evs))
	}
	ev := &evs[0]
	if ev.Name != "wait_info" || ev.Package != "sqlos" {
		t.Errorf("event %s.%s", ev.Package, ev.Name)
	}
	wantTime(t, ev, "2026-09-26T10:02:58.373Z")
	wt := data(t, ev, "wait_type")
	wantMap(t, "wait_type", wt, 186, "ASYNC_IO_COMPLETION")
	if wt.Type != "wait_types" || wt.TypePackage != "sqlos" {
		t.Errorf("wait_type <type> = %s/%s", wt.TypePackage, wt.Type)
	}
	wantMap(t, "opcode", data(t, ev, "opcode"), 1, "End")
	wantUint(t, "duration", data(t, ev, "duration"), 94818)
	wantUint(t, "signal_duration", data(t, ev, "signal_duration"), 0)
	wr := data(t, ev, "wait_resource")
	wantKind(t, "wait_resource", wr, xe.KindHex, "0x0000000000000001")
	wantUint(t, "wait_resource", wr, 1)
	wantKind(t, "sql_text", action(t, ev, "sql_text"), xe.KindString, "BACKUP DATABASE [SyntheticDb] TO DISK = N'NUL'")
	wantUint(t, "session_id", action(t, ev, "session_id"), 166)

	w, ok := xe.AsWait(ev, nil)
	if !ok {
		t.Fatal("AsWait refused wait_info")
	}
	// duration is printed in ms [R]; the model is in µs.
	if w.DurationUs != 94818*1000 || w.SignalDurationUs != 0 || w.WaitResource != 1 || w.Completed {
		t.Errorf("AsWait = %+v", w)
	}
	if w.WaitType.Text != "ASYNC_IO_COMPLETION" || w.WaitType.Key != 186 || w.WaitType.Map != "wait_types" || w.WaitType.FromResolver {
		t.Errorf("WaitType = %+v", w.WaitType)
	}
	if w.Opcode.Text != "End" || w.Opcode.Key != 1 {
		t.Errorf("Opcode = %+v", w.Opcode)
	}
	if !w.Actions.SessionID.Valid || w.Actions.SessionID.Value != 166 || w.Actions.SQLText.Value != "BACKUP DATABASE [SyntheticDb] TO DISK = N'NUL'" || w.Actions.EventSequence.Valid {
		t.Errorf("Actions = %+v", w.Actions)
	}
}

func TestRealPerformanceMonitorErrorReported(t *testing.T) {
	evs, _ := decodeFile(t, realdata+"found/performancemonitor_error_reported_real.xml")
	if len(evs) != 1 {
		t.Fatalf("got %d events", len(evs))
	}
	ev := &evs[0]
	wantTime(t, ev, "2026-09-26T23:50:54.328Z")
	e, ok := xe.AsErrorReported(ev, nil)
	if !ok {
		t.Fatal("AsErrorReported refused")
	}
	if e.ErrorNumber != 17810 || e.Severity != 20 || e.State != 2 || e.UserDefined || e.IsIntercepted {
		t.Errorf("AsErrorReported = %+v", e)
	}
	if e.Category.Key != 4 || e.Category.Text != "LOGON" || e.Category.Map != "error_category" {
		t.Errorf("Category = %+v", e.Category)
	}
	if e.Destination.Key != 0x1c || e.Destination.Text != "BUFFER, ERRORLOG, EVENTLOG" {
		t.Errorf("Destination = %+v", e.Destination)
	}
	wantKind(t, "destination", data(t, ev, "destination"), xe.KindHex, "0x0000001c")
	if !strings.HasPrefix(e.Message, "Could not connect because the maximum number of '1' dedicated administrator connections") ||
		!strings.HasSuffix(e.Message, "[CLIENT: ::1]") {
		t.Errorf("Message = %q", e.Message)
	}
	ud := data(t, ev, "user_defined")
	if b, ok := ud.Bool(); !ok || b || ud.Type != "boolean" {
		t.Errorf("user_defined = %+v", ud)
	}
	if v := data(t, ev, "error_number"); v.Type != "int32" || v.TypePackage != "package0" {
		t.Errorf("error_number type = %s/%s", v.TypePackage, v.Type)
	}
	if e.Actions.DatabaseID.Value != 0 || !e.Actions.DatabaseID.Valid || !e.Actions.SessionID.Valid {
		t.Errorf("Actions = %+v", e.Actions)
	}
}

// TestRealWaitTypesMap loads the real SQL 2017 wait_types map into a
// MapTable and resolves an event_file wait_info that has no <text>.
func TestRealWaitTypesMap(t *testing.T) {
	f, err := os.Open(realdata + "found/wait_types_map_sql2017_14.0.3192.2_from_xel.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var maps xe.MapTable
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		cols := strings.Split(line, "\t")
		key, err := strconv.ParseUint(cols[0], 10, 64)
		if err != nil {
			continue // header line
		}
		maps.Add("wait_types", key, cols[1])
	}
	if maps.Len() != 1137 {
		t.Fatalf("map has %d entries, the file's header says 1,137", maps.Len())
	}
	ev := mustDecodeOne(t, `<event name="wait_info" package="sqlos" timestamp="2020-05-30T20:37:36.362Z">`+
		`<data name="wait_type"><value>66</value></data><data name="opcode"><value>1</value></data>`+
		`<data name="duration"><value>3</value></data></event>`)
	w, _ := xe.AsWait(&ev, &maps)
	if w.WaitType.Text != "PAGEIOLATCH_SH" || !w.WaitType.FromResolver || w.WaitType.Key != 66 {
		t.Errorf("WaitType = %+v, want PAGEIOLATCH_SH from the map", w.WaitType)
	}
	// event_opcode is not in this table: the text stays unknown, not guessed.
	if w.Opcode.Text != "" || w.Opcode.Key != 1 || w.Opcode.Map != "event_opcode" {
		t.Errorf("Opcode = %+v", w.Opcode)
	}
	if w.DurationUs != 3000 {
		t.Errorf("DurationUs = %d", w.DurationUs)
	}
	// An event's own <text> wins over the table (keys drift between builds:
	// 186 is ASYNC_IO_COMPLETION on the 2026 build, something else in 2017).
	real, _ := decodeFile(t, realdata+"found/performancemonitor_wait_info_real.xml")
	w, _ = xe.AsWait(&real[0], &maps)
	if w.WaitType.Text != "ASYNC_IO_COMPLETION" || w.WaitType.FromResolver {
		t.Errorf("WaitType = %+v", w.WaitType)
	}
	if txt, _ := maps.Text("wait_types", 98); txt != "ASYNC_IO_COMPLETION" {
		t.Errorf("2017 key 98 = %q", txt)
	}
}

func mustDecodeOne(t *testing.T, s string) xe.Event {
	t.Helper()
	evs, rowErrs, _ := decodeAll(t, strings.NewReader(s))
	if len(rowErrs) > 0 || len(evs) != 1 {
		t.Fatalf("decode %q: %d events, errors %v", s, len(evs), rowErrs)
	}
	return evs[0]
}

// extractEventData returns the event_data column of a result set printed
// as a text table: each line's <event …>…</event>.
func extractEventData(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, line := range strings.Split(string(raw), "\n") {
		i, j := strings.Index(line, "<event "), strings.LastIndex(line, "</event>")
		if i >= 0 && j > i {
			rows = append(rows, line[i:j+len("</event>")])
		}
	}
	return strings.Join(rows, "\n") + "\n"
}

func TestRealMSDocsEventFileRows(t *testing.T) {
	path := realdata + "msdocs/event_file_lock_acquired_released_fn_xe_file_target_read_file_rows.txt"
	dump := extractEventData(t, path)
	evs, rowErrs, _ := decodeAll(t, strings.NewReader(dump))
	if len(rowErrs) > 0 {
		t.Fatal(rowErrs)
	}
	check := func(evs []xe.Event) {
		t.Helper()
		if len(evs) != 2 || evs[0].Name != "lock_acquired" || evs[1].Name != "lock_released" {
			t.Fatalf("events %v", evs)
		}
		wantTime(t, &evs[0], "2016-08-07T20:13:35.827Z")
		wantTime(t, &evs[1], "2016-08-07T20:13:35.832Z")
		for i := range evs {
			ev := &evs[i]
			if len(ev.Fields) != 0 || len(ev.Actions) != 2 {
				t.Errorf("%s: %d fields, %d actions", ev.Name, len(ev.Fields), len(ev.Actions))
			}
			wantUint(t, "transaction_id", action(t, ev, "transaction_id"), 39194)
			// CDATA keeps the leading and trailing blanks.
			wantKind(t, "sql_text", action(t, ev, "sql_text"), xe.KindString, "  select top 1 * from dbo.T_Target;  ")
			l, ok := xe.AsLock(ev, nil)
			if !ok || l.Released != (i == 1) || l.Actions.TransactionID.Value != 39194 {
				t.Errorf("AsLock = %+v", l)
			}
		}
	}
	check(evs)

	// The whole printed table: strictly, the other columns are malformed
	// rows (reported with their lines) and both events still decode …
	f, _ := os.ReadFile(path)
	evs, rowErrs, _ = decodeAll(t, bytes.NewReader(f))
	check(evs)
	if len(rowErrs) != 3 || rowErrs[0].Line != 1 || rowErrs[1].Line != 3 || rowErrs[2].Line != 4 {
		t.Errorf("row errors %v, want lines 1, 3, 4", rowErrs)
	}
	// … and with SkipTextBetweenEvents the table reads cleanly.
	evs, rowErrs, _ = decodeAll(t, bytes.NewReader(f), (*xe.Decoder).SkipTextBetweenEvents)
	check(evs)
	if len(rowErrs) != 0 {
		t.Errorf("lenient row errors: %v", rowErrs)
	}
}

// TestRealMSDocsLockFieldList checks that the typed lock model reads every
// column sys.dm_xe_object_columns lists for lock_acquired.
func TestRealMSDocsLockFieldList(t *testing.T) {
	raw, err := os.ReadFile(realdata + "msdocs/pair_matching_lock_acquired_rows_and_field_list.txt")
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	fieldList, _, _ := strings.Cut(string(raw), "# pair_matching")
	for _, line := range strings.Split(fieldList, "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == "sqlserver" && f[1] == "lock_acquired" {
			cols = append(cols, f[2])
		}
	}
	if len(cols) != 16 {
		t.Fatalf("found %d columns in the field list, the doc prints 16", len(cols))
	}
	var sb strings.Builder
	sb.WriteString(`<event name="lock_acquired" package="sqlserver" timestamp="2016-08-05T12:45:47.998Z">`)
	for i, c := range cols {
		switch c {
		case "database_name", "resource_description":
			sb.WriteString(`<data name="` + c + `"><value><![CDATA[text-` + c + `]]></value></data>`)
		case "mode", "owner_type", "resource_type":
			sb.WriteString(`<data name="` + c + `"><value>` + strconv.Itoa(100+i) + `</value><text><![CDATA[text-` + c + `]]></text></data>`)
		default:
			sb.WriteString(`<data name="` + c + `"><value>` + strconv.Itoa(100+i) + `</value></data>`)
		}
	}
	sb.WriteString(`</event>`)
	ev := mustDecodeOne(t, sb.String())
	l, _ := xe.AsLock(&ev, nil)
	got := map[string]uint64{
		"associated_object_id": l.AssociatedObjectID, "database_id": l.DatabaseID, "duration": l.DurationUs,
		"lockspace_nest_id": l.LockspaceNestID, "lockspace_sub_id": l.LockspaceSubID,
		"lockspace_workspace_id": l.LockspaceWorkspaceID, "object_id": uint64(l.ObjectID),
		"resource_0": l.Resource0, "resource_1": l.Resource1, "resource_2": l.Resource2,
		"transaction_id": uint64(l.TransactionID), "mode": l.Mode.Key, "owner_type": l.OwnerType.Key,
		"resource_type": l.ResourceType.Key,
	}
	for i, c := range cols {
		switch c {
		case "database_name":
			if l.DatabaseName != "text-database_name" {
				t.Errorf("DatabaseName = %q", l.DatabaseName)
			}
		case "resource_description":
			if l.ResourceDescription != "text-resource_description" {
				t.Errorf("ResourceDescription = %q", l.ResourceDescription)
			}
		default:
			v, ok := got[c]
			if !ok {
				t.Errorf("column %s is not modelled by AsLock", c)
			} else if v != uint64(100+i) {
				t.Errorf("column %s = %d, want %d", c, v, 100+i)
			}
		}
	}
	if l.Mode.Text != "text-mode" || l.OwnerType.Text != "text-owner_type" || l.ResourceType.Text != "text-resource_type" {
		t.Errorf("map texts %+v %+v %+v", l.Mode, l.OwnerType, l.ResourceType)
	}
	// duration is µs at the source [D]: no conversion.
	if strings.Contains(string(raw), "The time (in microseconds)") != true {
		t.Error("the field list no longer documents duration in microseconds")
	}
}

func TestRealMSDocsRingBuffer(t *testing.T) {
	evs, d := decodeFile(t, realdata+"msdocs/ring_buffer_lock_acquired_trimmed.xml")
	rb, ok := d.RingBuffer()
	want := xe.RingBufferTarget{Truncated: false, ProcessingTime: 0, TotalEventsProcessed: 6, EventCount: 6, DroppedCount: 0, MemoryUsed: 1032}
	if !ok || rb != want {
		t.Errorf("RingBuffer = %+v %v, want %+v", rb, ok, want)
	}
	// The doc author trimmed the document to 2 of its 6 events.
	if len(evs) != 2 {
		t.Fatalf("got %d events, want 2", len(evs))
	}
	for i, tx := range []uint64{111030, 111039} {
		ev := &evs[i]
		wantTime(t, ev, []string{"2016-08-05T23:59:53.987Z", "2016-08-05T23:59:56.012Z"}[i])
		mode := data(t, ev, "mode")
		wantMap(t, "mode", mode, 1, "SCH_S")
		if mode.Type != "lock_mode" || mode.TypePackage != "sqlserver" || !mode.IsMap() {
			t.Errorf("mode type %s/%s", mode.TypePackage, mode.Type)
		}
		txv := data(t, ev, "transaction_id")
		wantUint(t, "transaction_id", txv, tx)
		if txv.Type != "int64" {
			t.Errorf("transaction_id type %q", txv.Type)
		}
		wantKind(t, "database_name", data(t, ev, "database_name"), xe.KindString, "")
		wantKind(t, "database_name action", action(t, ev, "database_name"), xe.KindString, "InMemTest2")
		l, _ := xe.AsLock(ev, nil)
		if l.Mode.Text != "SCH_S" || l.TransactionID != int64(tx) || l.DatabaseID != 5 || l.Resource0 != 370100359 ||
			l.Resource1 != 0 || l.Resource2 != 0 || l.DatabaseName != "" || l.Actions.DatabaseName.Value != "InMemTest2" {
			t.Errorf("AsLock = %+v", l)
		}
	}
}

func TestRealRingBufferCallstack(t *testing.T) {
	path := realdata + "ringbuffer_error_reported_callstack_sql2017_error701.xml"
	evs, d := decodeFile(t, path)
	rb, _ := d.RingBuffer()
	if rb.EventCount != 6 || rb.TotalEventsProcessed != 6 || rb.DroppedCount != 0 || rb.MemoryUsed != 2670 || rb.Truncated {
		t.Errorf("RingBuffer = %+v", rb)
	}
	if len(evs) != 6 {
		t.Fatalf("got %d events, want 6 (eventCount)", len(evs))
	}
	raw, _ := os.ReadFile(path)
	// Expected callstacks: the text between <value> and </value> of each
	// callstack action in the file itself.
	var stacks []string
	for rest := string(raw); ; {
		i := strings.Index(rest, `<type name="callstack" package="package0" />`)
		if i < 0 {
			break
		}
		rest = rest[i:]
		s := strings.Index(rest, "<value>") + len("<value>")
		e := strings.Index(rest, "</value>")
		stacks = append(stacks, rest[s:e])
		rest = rest[e:]
	}
	if len(stacks) != 6 {
		t.Fatalf("found %d callstacks in the file", len(stacks))
	}
	stamps := []string{"2018-01-20T03:40:04.503Z", "2018-01-20T03:40:06.256Z", "2018-01-20T03:41:09.886Z",
		"2018-01-20T03:41:10.333Z", "2018-01-20T03:41:11.336Z", "2018-01-20T03:41:11.698Z"}
	for i := range evs {
		ev := &evs[i]
		wantTime(t, ev, stamps[i])
		e, _ := xe.AsErrorReported(ev, nil)
		if e.ErrorNumber != 701 || e.Severity != 17 || e.State != 103 || e.Category.Text != "SERVER" ||
			e.Destination.Key != 0x9c || e.Destination.Text != "BUFFER, DEFAULT_NO_USER, ERRORLOG, EVENTLOG" ||
			e.Message != "There is insufficient system memory in resource pool 'default' to run this query." {
			t.Errorf("event %d: %+v", i, e)
		}
		cs := e.Actions.Callstack
		if !cs.Valid || cs.Value != stacks[i] {
			t.Errorf("event %d callstack not verbatim:\n%q\nwant\n%q", i, cs.Value, stacks[i])
		}
		v := action(t, ev, "callstack")
		if v.Kind != xe.KindString || v.Type != "callstack" {
			t.Errorf("callstack kind %v type %q", v.Kind, v.Type)
		}
	}
	first := strings.Split(evs[0].Actions[0].Value.Raw, "\n")
	if first[0] != "sqllang.dll+0x00000000003877FC" || first[len(first)-1] != "sqllang.dll+0x00000000000210A3" ||
		first[9] != "xtp_p_5_597577167_185186125354548_1.dll+0x000000000000E9FC" {
		t.Errorf("first callstack frames %q", first)
	}
}

func TestRealXelogstash(t *testing.T) {
	dir := realdata + "xelogstash/"
	t.Run("login", func(t *testing.T) {
		evs, _ := decodeFile(t, dir+"01_login.xml")
		ev := &evs[0]
		wantTime(t, ev, "2018-04-08T16:00:53.427Z")
		if b, ok := data(t, ev, "is_cached").Bool(); !ok || b {
			t.Error("is_cached")
		}
		wantUint(t, "packet_size", data(t, ev, "packet_size"), 4096)
		opts := data(t, ev, "options")
		if opts.Raw != "2000002838f4010000000000" {
			t.Errorf("options = %q", opts.Raw)
		}
		if b, ok := opts.Bytes(); !ok || len(b) != 12 || b[0] != 0x20 || b[5] != 0xf4 {
			t.Errorf("options bytes %x", b)
		}
		wantKind(t, "options_text", data(t, ev, "options_text"), xe.KindString, "")
		wantUint(t, "client_pid", action(t, ev, "client_pid"), 12036)
		wantKind(t, "server_instance_name", action(t, ev, "server_instance_name"), xe.KindString, `D30\SQL2012`)
		wantKind(t, "server_principal_name", action(t, ev, "server_principal_name"), xe.KindString, `D30\Bill`)
		if len(ev.Fields) != 7 || len(ev.Actions) != 6 {
			t.Errorf("%d fields %d actions", len(ev.Fields), len(ev.Actions))
		}
	})
	t.Run("errorlog_written", func(t *testing.T) {
		// The start tag spans three lines.
		evs, _ := decodeFile(t, dir+"02_errorlog_written.xml")
		ev := &evs[0]
		if ev.Name != "errorlog_written" || ev.Package != "sqlserver" {
			t.Errorf("%s.%s", ev.Package, ev.Name)
		}
		wantTime(t, ev, "2018-02-04T00:42:25.276Z")
		wantKind(t, "message", data(t, ev, "message"), xe.KindString, `2018-02-03 18:42:25.28 spid4s      SQL Trace ID 1 was started by login "sa".  `)
		if b, _ := action(t, ev, "is_system").Bool(); !b {
			t.Error("is_system")
		}
		c := xe.Typed(ev, nil)
		if c != nil {
			t.Errorf("errorlog_written is not modelled, Typed gave %T", c)
		}
		wantUint(t, "event_sequence", action(t, ev, "event_sequence"), 1)
	})
	t.Run("error_reported", func(t *testing.T) {
		evs, _ := decodeFile(t, dir+"03_error_reported.xml")
		e, _ := xe.AsErrorReported(&evs[0], nil)
		if e.ErrorNumber != 208 || e.Severity != 16 || e.State != 1 || e.Category.Key != 2 || e.Category.Text != "SERVER" ||
			e.Destination.Key != 2 || e.Destination.Text != "USER" || e.Message != "Invalid object name 'sys.xe_object_columns'." ||
			e.Actions.SQLText.Value != "select * from sys.xe_object_columns " {
			t.Errorf("%+v", e)
		}
		wantKind(t, "collect_system_time", action(t, &evs[0], "collect_system_time"), xe.KindString, "2018-04-19T16:21:25.540Z")
	})
	t.Run("sp_statement_completed", func(t *testing.T) {
		evs, _ := decodeFile(t, dir+"04_sp_statement_completed.xml")
		s, ok := xe.AsStatementCompleted(&evs[0])
		if !ok {
			t.Fatal("refused")
		}
		// duration and cpu_time are µs at the source [R].
		if s.DurationUs != 1759861 || s.CPUTimeUs != 481000 || s.PhysicalReads != 24 || s.LogicalReads != 200444 ||
			s.Writes != 66 || s.RowCount != 21766 || s.LastRowCount != 1 || s.LineNumber != 152 || s.Offset != 9014 ||
			s.OffsetEnd != 9122 || s.ObjectName != "billing_AdjustBalances" || s.Statement != "exec billing_AccountBalance @AccountID" {
			t.Errorf("%+v", s)
		}
		if !s.Actions.QueryHash.Valid || s.Actions.QueryHash.Value != 0 || s.Actions.SessionID.Value != 119 {
			t.Errorf("actions %+v", s.Actions)
		}
		wantMap(t, "object_type", data(t, &evs[0], "object_type"), 8272, "PROC")
	})
	t.Run("sql_statement_completed", func(t *testing.T) {
		evs, _ := decodeFile(t, dir+"06_sql_statement_completed.xml")
		s, _ := xe.AsStatementCompleted(&evs[0])
		if s.DurationUs != 2768320 || s.CPUTimeUs != 2047000 || s.PhysicalReads != 24518 || s.LogicalReads != 1153697 ||
			s.Writes != 10371 || s.RowCount != 340590 || s.OffsetEnd != 58 || s.Statement != "EXECUTE billing_RefreshTransaction" ||
			s.ParameterizedPlanHandle != "" || s.Spills.Valid {
			t.Errorf("%+v", s)
		}
		wantKind(t, "parameterized_plan_handle", data(t, &evs[0], "parameterized_plan_handle"), xe.KindEmpty, "")
	})
	t.Run("sql_batch_completed", func(t *testing.T) {
		evs, _ := decodeFile(t, dir+"07_sql_batch_completed.xml")
		b, ok := xe.AsBatchCompleted(&evs[0], nil)
		if !ok || b.DurationUs != 2768452 || b.CPUTimeUs != 2047000 || b.RowCount != 340607 || b.Result.Key != 0 ||
			b.Result.Text != "OK" || b.BatchText != "EXECUTE billing_RefreshTransaction" || b.Actions.SessionID.Value != 174 {
			t.Errorf("%+v", b)
		}
		wantTime(t, &evs[0], "2018-04-14T16:33:39.593Z")
	})
	t.Run("blocked_process_report", func(t *testing.T) {
		path := dir + "09_blocked_process_report.xml"
		evs, _ := decodeFile(t, path)
		ev := &evs[0]
		bp := data(t, ev, "blocked_process")
		if bp.Kind != xe.KindXML {
			t.Fatalf("blocked_process kind %v", bp.Kind)
		}
		raw, _ := os.ReadFile(path)
		s := strings.Index(string(raw), "<blocked-process-report")
		e := strings.Index(string(raw), "</blocked-process-report>") + len("</blocked-process-report>")
		if bp.Raw != string(raw[s:e]) {
			t.Errorf("blocked_process is not the verbatim XML:\n%q", bp.Raw)
		}
		var report struct {
			MonitorLoop string `xml:"monitorLoop,attr"`
			Blocked     struct {
				Process struct {
					WaitResource string `xml:"waitresource,attr"`
				} `xml:"process"`
			} `xml:"blocked-process"`
		}
		if err := xml.Unmarshal([]byte(bp.Raw), &report); err != nil {
			t.Fatalf("verbatim XML does not parse: %v", err)
		}
		if report.MonitorLoop != "2767730" || report.Blocked.Process.WaitResource != "OBJECT: 7:663673412:0 " {
			t.Errorf("report %+v", report)
		}
		wantUint(t, "duration", data(t, ev, "duration"), 16912000)
		wantUint(t, "transaction_id", data(t, ev, "transaction_id"), 13574299574)
		wantMap(t, "lock_mode", data(t, ev, "lock_mode"), 8, "IX")
		rot := data(t, ev, "resource_owner_type")
		wantKind(t, "resource_owner_type", rot, xe.KindHex, "0x00000001")
		wantMap(t, "resource_owner_type", rot, 1, "LOCK")
		wantKind(t, "database_name", data(t, ev, "database_name"), xe.KindString, "TXNDB")
		wantKind(t, "collect_system_time", action(t, ev, "collect_system_time"), xe.KindString, "2018-04-14T04:46:56.249Z")
	})
}

// TestRealFilesAllDecode decodes every event-XML file of the real data
// (dumps printed as tables are read leniently) and checks the counts.
func TestRealFilesAllDecode(t *testing.T) {
	want := map[string]int{
		"found/performancemonitor_error_reported_real.xml":                              1,
		"found/performancemonitor_wait_info_real.xml":                                   1,
		"msdocs/event_file_lock_acquired_released_fn_xe_file_target_read_file_rows.txt": 2,
		"msdocs/pair_matching_lock_acquired_rows_and_field_list.txt":                    0,
		"msdocs/ring_buffer_lock_acquired_trimmed.xml":                                  2,
		"ringbuffer_error_reported_callstack_sql2017_error701.xml":                      6,
		"xelogstash/01_login.xml":                                                       1,
		"xelogstash/02_errorlog_written.xml":                                            1,
		"xelogstash/03_error_reported.xml":                                              1,
		"xelogstash/04_sp_statement_completed.xml":                                      1,
		"xelogstash/06_sql_statement_completed.xml":                                     1,
		"xelogstash/07_sql_batch_completed.xml":                                         1,
		"xelogstash/09_blocked_process_report.xml":                                      1,
	}
	seen := 0
	err := filepath.WalkDir(realdata, func(path string, de os.DirEntry, err error) error {
		if err != nil || de.IsDir() || strings.HasSuffix(path, ".tsv") {
			return err
		}
		rel := strings.TrimPrefix(filepath.ToSlash(path), realdata)
		n, ok := want[rel]
		if !ok {
			t.Errorf("no expectation for %s", rel)
			return nil
		}
		seen++
		f, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		evs, rowErrs, _ := decodeAll(t, bytes.NewReader(f), (*xe.Decoder).SkipTextBetweenEvents)
		if len(evs) != n || len(rowErrs) != 0 {
			t.Errorf("%s: %d events, errors %v; want %d events", rel, len(evs), rowErrs, n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(want) {
		t.Errorf("saw %d files, want %d", seen, len(want))
	}
}

func TestRealHistograms(t *testing.T) {
	cases := []struct {
		file       string
		slots      int
		firstCount uint64
		firstFrame string
	}{
		{"histogram_wait_info_PAGELATCH_EX_callstack.xml", 0, 1605, "sqldk.dll+0x0000000000047645"},
		{"histogram_spinlock_backoff_LOCK_HASH_callstack.xml", 0, 1132435, "sqldk.dll+0x00000000000FD919"},
		{"histogram_page_allocated_freed_callstack.xml", 0, 2505, "sqldk.dll+0x0000000000106059"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			raw, err := os.ReadFile("testdata/realdata/callstack/" + c.file)
			if err != nil {
				t.Fatal(err)
			}
			h, err := xe.DecodeHistogram(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			if h.Truncated || h.Buckets != 256 {
				t.Errorf("truncated %v buckets %d", h.Truncated, h.Buckets)
			}
			wantSlots := strings.Count(string(raw), "<Slot ")
			if len(h.Slots) != wantSlots || wantSlots == 0 {
				t.Fatalf("%d slots, file has %d", len(h.Slots), wantSlots)
			}
			if h.Slots[0].Count != c.firstCount || !strings.HasPrefix(h.Slots[0].Value.Raw, c.firstFrame+"\n") {
				t.Errorf("first slot %d %q", h.Slots[0].Count, h.Slots[0].Value.Raw[:40])
			}
			var total uint64
			for _, s := range h.Slots {
				total += s.Count
				if s.Value.Kind != xe.KindString || !strings.Contains(string(raw), s.Value.Raw) {
					t.Fatalf("slot value not verbatim: %q", s.Value.Raw)
				}
			}
			if total == 0 {
				t.Error("zero total count")
			}
		})
	}
	if _, err := xe.DecodeHistogram(strings.NewReader(`<HistogramTarget truncated="0" buckets="256"><Slot count="x"><value>1</value></Slot></HistogramTarget>`)); err == nil {
		t.Error("bad count accepted")
	}
	if _, err := xe.DecodeHistogram(strings.NewReader(`<HistogramTarget truncated="0" buckets="256"><Slot count="1"><value>1</value>`)); err == nil {
		t.Error("truncated histogram accepted")
	}
}

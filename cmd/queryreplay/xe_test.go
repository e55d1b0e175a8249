package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The golden file lives with the decoder's test data.
const (
	xeTestdata = "../../pkg/xe/testdata/"
	xeGolden   = xeTestdata + "golden/cli_decode.jsonl"
)

func init() {
	// Several command tests share this package; define -update only once.
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
}

func updateGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

func runXE(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), append([]string{"xe", "decode"}, args...), &env{stdout: &out, stderr: &errb, stdin: strings.NewReader(stdin)})
	return code, out.String(), errb.String()
}

func TestXEDecodeGolden(t *testing.T) {
	files := []string{
		"realdata/xe_event_xml/xelogstash/01_login.xml",
		"realdata/xe_event_xml/xelogstash/02_errorlog_written.xml",
		"realdata/xe_event_xml/xelogstash/03_error_reported.xml",
		"realdata/xe_event_xml/xelogstash/04_sp_statement_completed.xml",
		"realdata/xe_event_xml/xelogstash/06_sql_statement_completed.xml",
		"realdata/xe_event_xml/xelogstash/07_sql_batch_completed.xml",
		"realdata/xe_event_xml/xelogstash/09_blocked_process_report.xml",
		"realdata/xe_event_xml/found/performancemonitor_wait_info_real.xml",
		"realdata/xe_event_xml/found/performancemonitor_error_reported_real.xml",
		"realdata/xe_event_xml/msdocs/ring_buffer_lock_acquired_trimmed.xml",
		"realdata/xe_event_xml/ringbuffer_error_reported_callstack_sql2017_error701.xml",
	}
	var args []string
	for _, f := range files {
		args = append(args, xeTestdata+f)
	}
	code, stdout, stderr := runXE(t, "", append([]string{"--format", "jsonl"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if updateGolden() {
		if err := os.MkdirAll(filepath.Dir(xeGolden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(xeGolden, []byte(stdout), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(xeGolden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if stdout != string(want) {
		t.Errorf("output differs from %s (run with -update after checking):\n%s", xeGolden, stdout)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != 7+2+2+6 {
		t.Errorf("%d lines, want one per event (17)", len(lines))
	}
	for _, l := range lines {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &obj); err != nil {
			t.Fatalf("not JSON: %v: %s", err, l)
		}
		for _, k := range []string{"name", "package", "timestamp", "data", "actions"} {
			if _, ok := obj[k]; !ok {
				t.Errorf("missing %q in %s", k, l)
			}
		}
	}
	// The trimmed ring buffer says eventCount=6 but holds 2 events: warned.
	if !strings.Contains(stderr, "ring_buffer document is missing events") || !strings.Contains(stderr, "eventCount=6") {
		t.Errorf("no ring_buffer warning on stderr:\n%s", stderr)
	}
}

func TestXEDecodeRowErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dump.txt")
	in := `<event name="a" package="p" timestamp="2020-01-01T00:00:00.1234567Z"><data name="n"><value>18446744073709551615</value></data></event>
<event name="b" package="p" timestamp="2020-01-01T00:00:00Z"><data name="n"><value>1</value></dat></event>
<event name="c" package="p" timestamp="2020-01-01T00:00:01Z"><data name="m"><value>5</value><text><![CDATA[X]]></text></data><action name="session_id" package="sqlserver"><value>57</value></action></event>
`
	if err := os.WriteFile(path, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runXE(t, "", path)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	row2 := strings.Index(in, `<event name="b"`)
	bad := strings.Index(in, "</dat>") - row2
	if !strings.Contains(stderr, fmt.Sprintf("%s: row 2 (line 2, offset %d, event b): at byte %d of the row (offset %d): ", path, row2, bad, row2+bad)) {
		t.Errorf("stderr does not name the file, the row and the place in it:\n%s", stderr)
	}
	want := `{"name":"a","package":"p","timestamp":"2020-01-01T00:00:00.1234567Z","data":{"n":18446744073709551615},"actions":{}}
{"name":"c","package":"p","timestamp":"2020-01-01T00:00:01Z","data":{"m":{"value":5,"text":"X"}},"actions":{"session_id":57}}
`
	if stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want)
	}

	// Standard input, and a missing file.
	code, stdout, _ = runXE(t, in[:strings.Index(in, "\n")+1], "-")
	if code != 0 || !strings.HasPrefix(stdout, `{"name":"a"`) {
		t.Errorf("stdin: exit %d, %q", code, stdout)
	}
	code, _, stderr = runXE(t, "", filepath.Join(dir, "nope.xml"))
	if code != 1 || !strings.Contains(stderr, "nope.xml") {
		t.Errorf("missing file: exit %d, %s", code, stderr)
	}
	code, _, _ = runXE(t, "", "--format", "csv", path)
	if code != 2 {
		t.Errorf("bad format: exit %d, want 2", code)
	}
}

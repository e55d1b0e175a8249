package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

func startTraceStandin(t *testing.T) *standin.Running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	run, err := standin.Start(ctx, "127.0.0.1:0", standin.Options{})
	if err != nil {
		cancel()
		t.Fatalf("start stand-in: %v", err)
	}
	t.Cleanup(func() { run.Close(); cancel() })
	return run
}

func runTraceCmd(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"trace"}, args...), &env{stdout: &out, stderr: &errb, stdin: strings.NewReader(stdin)})
	return code, out.String(), errb.String()
}

func TestTraceCommand(t *testing.T) {
	srv := startTraceStandin(t)
	bundlePath := filepath.Join(t.TempDir(), "trace.json.gz")
	code, out, errs := runTraceCmd(t, "", "--dsn", srv.DSN, "--sql", "SELECT o.OrderID, o.OrderDate, o.Amount FROM dbo.Orders AS o WHERE o.CustomerID = 42",
		"--disable-read-ahead", "-o", bundlePath)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	// This stand-in has no .xel encoder: OPENROWSET answers Msg 4860 and
	// the trace falls back to the XML read-back, saying why.
	for _, want := range []string{"Read back: xml (binary not used: ", "Rows: 13 in 1 result set(s)", "Locks: ", "Waits: ", "Spills: ", "Reads: ", "node", "operator", "Index Seek", "Resolved: "} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(errs, "o.CustomerID") {
		t.Error("the query text reached standard error")
	}
	b, err := bundle.Load(bundlePath)
	if err != nil {
		t.Fatal(err)
	}
	if b.Result.Rows[0] != 13 || len(b.RawTrace) == 0 {
		t.Fatalf("bundle: rows %v, trace %d bytes", b.Result.Rows, len(b.RawTrace))
	}

	// The batch from standard input, a modification: rolled back.
	code, out, errs = runTraceCmd(t, "UPDATE dbo.Orders SET Status = N'Shipped' WHERE OrderID = 7", "--dsn", srv.DSN, "--file=-", "-q")
	if code != 0 || !strings.Contains(out, "Modification rolled back: true") {
		t.Fatalf("modification: exit %d\n%s\n%s", code, out, errs)
	}
}

func TestTraceCommandRefusalsAndFailures(t *testing.T) {
	srv := startTraceStandin(t)
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"commit inside", []string{"--sql", "UPDATE dbo.Orders SET Amount = 0; COMMIT"}, exitRefused, "COMMIT would end"},
		{"1COMMIT", []string{"--sql", "UPDATE dbo.Orders SET Amount = 0 WHERE OrderID = 1COMMIT"}, exitRefused, `line 1 (COMMIT): COMMIT would end QueryReplay's transaction and make the batch's changes permanent (SQL Server reads "1COMMIT" as the number 1 followed by COMMIT)`},
		{"procedure without EXEC", []string{"--sql", "master..xp_cmdshell 'dir'"}, exitRefused, "is an extended procedure"},
		{"several batches", []string{"--sql", "SELECT 1\nGO\nSELECT 2"}, exitRefused, "GO separates"},
		{"policy refuses modifications", []string{"--sql", "DELETE FROM dbo.Orders WHERE OrderID = 1", "--modifications", "refuse"}, exitRefused, "refuses modifications"},
		{"buffer pool without consent", []string{"--sql", "SELECT 1", "--clear-buffer-pool"}, exitRefused, "does not allow it"},
		{"no batch", nil, 2, "--sql or --file"},
		{"both", []string{"--sql", "SELECT 1", "--file", "x.sql"}, 2, "not both"},
		{"query fails", []string{"--sql", "SELECT * FROM dbo.NoSuchTable"}, 1, "NoSuchTable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runTraceCmd(t, "", append([]string{"--dsn", srv.DSN}, c.args...)...)
			if code != c.code || !strings.Contains(errs, c.stderr) {
				t.Fatalf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s\nwant stderr to contain %q", code, c.code, out, errs, c.stderr)
			}
		})
	}
}

func TestTraceCommandProgress(t *testing.T) {
	srv := startTraceStandin(t)
	srv.Faults().Delay("CustomerID = 42", 2600*time.Millisecond)
	code, out, errs := runTraceCmd(t, "", "--dsn", srv.DSN, "--sql", "SELECT o.OrderID, o.OrderDate, o.Amount FROM dbo.Orders AS o WHERE o.CustomerID = 42")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "trace: running, 2") || strings.Contains(errs, "CustomerID") {
		t.Fatalf("want a progress line on stderr (without the query):\n%s", errs)
	}
	code, _, errs = runTraceCmd(t, "", "--dsn", srv.DSN, "--sql", "SELECT 1", "-q")
	if code != 0 || strings.Contains(errs, "trace:") {
		t.Fatalf("-q printed progress: %s", errs)
	}
}

// TestTraceCommandReadsBinaryWhenServed: with the encoder the CLI's own
// stand-in uses, the default read-back fetches the .xel files.
func TestTraceCommandReadsBinaryWhenServed(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := standin.Start(ctx, "127.0.0.1:0", standin.Options{XELEncoder: xe.EncodeXMLAsXEL})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(); cancel() })
	for _, tc := range []struct{ flag, want string }{{"--read-back=auto", "Read back: binary\n"}, {"--read-back=xml", "Read back: xml\n"}} {
		code, out, errs := runTraceCmd(t, "", "--dsn", srv.DSN, tc.flag, "--sql", "SELECT TOP 5 OrderID FROM dbo.Orders")
		if code != 0 || !strings.Contains(out, tc.want) {
			t.Fatalf("%s: exit %d, want %q\n%s\n%s", tc.flag, code, tc.want, out, errs)
		}
	}
}

// TestTraceCommandTransactionEnded: when the batch ends QueryReplay's
// transaction (a committing trigger, here a stand-in fault), trace exits 4
// with a loud message, and the bundle it writes says rolledBack false.
func TestTraceCommandTransactionEnded(t *testing.T) {
	srv := startTraceStandin(t)
	srv.Faults().EndTransactionIn("WHERE OrderID = 7")
	bundlePath := filepath.Join(t.TempDir(), "ended.json")
	code, out, errs := runTraceCmd(t, "", "--dsn", srv.DSN, "-q", "-o", bundlePath, "--sql", "UPDATE dbo.Orders SET Status = N'Shipped' WHERE OrderID = 7")
	if code != exitTransactionEnded || !strings.Contains(errs, "!!! QueryReplay could not roll the batch back: the batch ended QueryReplay's transaction: its changes may be permanent") {
		t.Fatalf("exit %d (want %d)\n%s\n%s", code, exitTransactionEnded, out, errs)
	}
	b, err := bundle.Load(bundlePath)
	if err != nil {
		t.Fatal(err)
	}
	if b.Result.RolledBack || !strings.Contains(out, "Modification rolled back: false") {
		t.Fatalf("rolled back %v\n%s", b.Result.RolledBack, out)
	}
}

// TestTraceCommandKeepsSecrets: a tricky password appears in no output,
// verbose logging included, on success and on failure.
func TestTraceCommandKeepsSecrets(t *testing.T) {
	const pw = "Zq7@Wx9;Sup3r}Secret%41"
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := standin.Start(ctx, "127.0.0.1:0", standin.Options{User: "sa", Password: pw})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(); cancel() })
	for _, dsn := range []string{srv.DSN, standin.DSN("sa", pw+"x", srv.Addr, "QueryReplayDemo"),
		"server=" + strings.Replace(srv.Addr, ":", ",", 1) + ";user id=sa;password={" + pw + "};encrypt=disable"} {
		code, out, errs := runTraceCmd(t, "", "-v", "--dsn", dsn, "--sql", "SELECT TOP 3 OrderID FROM dbo.Orders")
		for _, s := range []string{pw, "Zq7", "Wx9", "Sup3r", "Secret"} {
			if strings.Contains(out+errs, s) {
				t.Errorf("exit %d: the output holds %q:\n%s\n%s", code, s, out, errs)
			}
		}
	}
	code, _, errs := runSweepCmd(t, "--dsn", srv.DSN)
	if code != 0 || strings.Contains(errs, "Secret") {
		t.Errorf("sweep: exit %d\n%s", code, errs)
	}
	code, _, errs = runTraceCmd(t, "", "--dsn", "sqlserver://sa:Zq7Wx9@127.0.0.1:1?database=a&database=b", "--sql", "SELECT 1")
	if code != 2 || !strings.Contains(errs, "connection string sqlserver://sa:***@127.0.0.1:1?database=a&database=b") || strings.Contains(errs, "Zq7") {
		t.Errorf("unusable DSN: exit %d\n%s", code, errs)
	}
}

// Issue 23: a batch file saved by SSMS (UTF-8 with a byte-order mark, or
// UTF-16LE with one) is traced; a file over --max-batch-bytes is refused
// naming the limit and the flag.
func TestTraceFileEncodingsAndLimit(t *testing.T) {
	srv := startTraceStandin(t)
	dir := t.TempDir()
	const batch = "SELECT o.OrderID FROM dbo.Orders AS o WHERE o.CustomerID = 42\r\n"
	utf16le := []byte{0xFF, 0xFE}
	for _, r := range batch {
		utf16le = append(utf16le, byte(r), 0)
	}
	for name, content := range map[string][]byte{"bom.sql": append([]byte{0xEF, 0xBB, 0xBF}, batch...), "utf16.sql": utf16le} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		if code, out, errs := runTraceCmd(t, "", "--dsn", srv.DSN, "--file", path, "-q"); code != 0 {
			t.Errorf("%s: exit %d\n%s\n%s", name, code, out, errs)
		}
	}
	code, _, errs := runTraceCmd(t, batch, "--dsn", srv.DSN, "--file=-", "--max-batch-bytes", "10", "-q")
	if code == 0 || !strings.Contains(errs, "--max-batch-bytes") || !strings.Contains(errs, "10 bytes") {
		t.Errorf("oversized input: exit %d\n%s", code, errs)
	}
	code, _, errs = runTraceCmd(t, "SELECT 'Gr\xf6\xdfe'", "--dsn", srv.DSN, "--file=-", "-q")
	if code == 0 || !strings.Contains(errs, "UTF-8") {
		t.Errorf("latin-1 input: exit %d\n%s", code, errs)
	}
}

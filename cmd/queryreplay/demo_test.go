package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/internal/testenv"
	"github.com/queryreplay/queryreplay/internal/viewertest"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/viewer"
)

// fakeViewerAssets is a page bundle for tests that check the demo's and the
// viewer's lifecycle, not the page (the browser test checks the page).
func fakeViewerAssets(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"harness.js": "window.__harnessLoaded = true;", "harness.css": "body{}"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The --once demo traces each scenario with the real tracer on the
// stand-in (with the trace options the scenario names, else cold with
// read-ahead off), prints its replay, its findings and the exporter's
// counts, writes loadable bundles, and serves nothing (no assets needed).
func TestDemoOnce(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "demo", "--once", "--scenarios", "hash_join,sort_spill,call_stacks", "--out", out, "--assets", "/nonexistent")
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr)
	}
	for _, want := range []string{
		"━━ hash_join", "━━ sort_spill", "Hash Match (Inner Join)", "Clustered Index Scan dbo.Customers",
		"logical   phys  ahead  pages    waited  locks spills", "Top waits: PAGEIOLATCH_SH", "cold cache, read-ahead off",
		// issue 26: the batch's elapsed time, its lead-in, reads by kind
		"Time: elapsed ", "lead-in (before the first operator)", "Reads: ", " logical reads, ",
		"Spills: 1", "sort_warning in operator 0 Sort", "━━ exporter", "Bundles written:",
		// pkg/findings, under each replay
		"Sort spilled to tempdb",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	// The hash join's row shows its build phase, the scans emit.
	if !regexp.MustCompile(`(?m)^\s+0\s+Hash Match \(Inner Join\)\s+\|[^|]*▒[^|]*\|`).MatchString(stdout) {
		t.Errorf("the hash match row shows no build phase:\n%s", stdout)
	}
	// The exporter counted the statements the traces ran.
	m := regexp.MustCompile(`statements\s+([\d,]+)\s+queryreplay_statements_total`).FindStringSubmatch(stdout)
	if m == nil || m[1] == "0" {
		t.Errorf("the exporter summary counted no statements:\n%s", stdout)
	}
	if !regexp.MustCompile(`(?m)^[\d,]+ rows? · .* · cold cache · call stacks$`).MatchString(stdout) {
		t.Errorf("the call_stacks scenario was not traced with its own options (cold cache, call stacks):\n%s", stdout)
	}
	for _, want := range []string{"starting the SQL Server stand-in", "tracing 1/3 hash_join", "tracing 2/3 sort_spill"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, stderr)
		}
	}
	for _, name := range []string{"hash_join", "sort_spill"} {
		b, err := bundle.Load(filepath.Join(out, name+".json.gz"))
		if err != nil {
			t.Fatalf("bundle %s: %v", name, err)
		}
		if b.Trace == nil || len(b.Trace.Operators) == 0 || !b.Run.ClearBufferPool {
			t.Errorf("bundle %s: no timeline or not a cold-cache trace", name)
		}
	}
	if strings.Contains(stdout, "Viewer:") || strings.Contains(stdout, "Metrics:") {
		t.Error("--once printed URLs of servers it must not start")
	}
}

func TestDemoUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--scenarios", "hash_join,nope"}, `no scenario "nope"; the stand-in has: `},
		{[]string{"--scenarios", ","}, "names no scenario"},
		{[]string{"--listen", "0.0.0.0:0"}, "not a loopback address"},
		{[]string{"--exporter-listen", "192.0.2.1:80"}, "not a loopback address"},
		{[]string{"--assets", "/nonexistent"}, "the viewer's page (harness.js) is not built"},
		{[]string{"--width", "3"}, "--width 3 is outside 10-400"},
	} {
		code, _, stderr := runCLI(t, append([]string{"demo", "--out", t.TempDir()}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("demo %v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// The demo as a user runs it: the built binary starts everything, the
// viewer and the metrics answer, and Ctrl-C (SIGINT) stops it with status
// 0, every port closed and no process of its group left.
func TestDemoBinaryStopsCleanlyOnSIGINT(t *testing.T) {
	bin, err := buildCLI()
	if err != nil {
		t.Fatalf("build the CLI: %v", err)
	}
	cmd := exec.Command(bin, "demo", "--scenarios", "hash_join", "--out", t.TempDir(), "--assets", fakeViewerAssets(t))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &testenv.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })

	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	urls := waitForWhereToLook(t, lines, stderr)
	for _, u := range []string{urls["Viewer"], urls["Metrics"]} {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(body) == 0 {
			t.Fatalf("GET %s: %d", u, resp.StatusCode)
		}
		if u == urls["Metrics"] && !strings.Contains(string(body), "queryreplay_up") {
			t.Errorf("metrics lack queryreplay_up")
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() {
		for range lines {
		}
		waited <- cmd.Wait()
	}()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("demo after SIGINT: %v\nstderr:\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("demo still running 30 s after SIGINT\nstderr:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "demo: stopped") {
		t.Errorf("no \"demo: stopped\" on stderr:\n%s", stderr.String())
	}
	for name, addr := range urls {
		host := addr
		if u, err := url.Parse(addr); err == nil && u.Host != "" {
			host = u.Host
		}
		if c, err := net.DialTimeout("tcp", host, time.Second); err == nil {
			c.Close()
			t.Errorf("%s (%s) still accepts connections after the demo stopped", name, host)
		}
	}
	if left := processesInGroup(t, pgid); len(left) > 0 {
		t.Errorf("processes of the demo's group left behind: %v", left)
	}
}

// waitForWhereToLook reads the demo's stdout until its last line and
// returns the Viewer and Metrics URLs and the stand-in's address.
func waitForWhereToLook(t *testing.T, lines <-chan string, stderr *testenv.SyncBuffer) map[string]string {
	t.Helper()
	urls := map[string]string{}
	deadline := time.After(120 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("the demo ended before serving\nstderr:\n%s", stderr.String())
			}
			for _, key := range []string{"Viewer", "Metrics"} {
				if v, ok := strings.CutPrefix(line, key+":"); ok {
					urls[key] = strings.TrimSpace(v)
				}
			}
			if v, ok := strings.CutPrefix(line, "SQL:"); ok {
				u, err := url.Parse(strings.Fields(v)[0])
				if err != nil {
					t.Fatal(err)
				}
				urls["stand-in"] = u.Host
			}
			if line == "Ctrl-C stops everything." {
				if len(urls) != 3 {
					t.Fatalf("the demo did not print the viewer, metrics and SQL lines: %v", urls)
				}
				return urls
			}
		case <-deadline:
			t.Fatalf("the demo printed no viewer URL in 120 s\nstderr:\n%s", stderr.String())
		}
	}
}

// processesInGroup lists the live processes of a process group (Linux
// /proc: field 5 of stat is the group).
func processesInGroup(t *testing.T, pgid int) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc to look for leftover processes: %v", err)
	}
	var left []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// comm may hold spaces: the fields after the closing parenthesis.
		s := string(b)
		rest := strings.Fields(s[strings.LastIndex(s, ")")+1:])
		if len(rest) > 2 && rest[2] == strconv.Itoa(pgid) && rest[0] != "Z" {
			left = append(left, fmt.Sprintf("%d %s", pid, s[:strings.LastIndex(s, ")")+1]))
		}
	}
	return left
}

// runCLIContext runs the CLI until ctx ends, with stdout readable while it
// runs.
func runCLIContext(ctx context.Context, args ...string) (chan int, *testenv.SyncBuffer, *testenv.SyncBuffer) {
	out, errOut := &testenv.SyncBuffer{}, &testenv.SyncBuffer{}
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, &env{stdout: out, stderr: errOut, stdin: strings.NewReader("")}) }()
	return done, out, errOut
}

// A mailed bundle opens in the viewer: the page lists it, and the
// datasource answers the page's query for it with frames, with no SQL
// Server reachable.
func TestViewServesBundles(t *testing.T) {
	out := t.TempDir()
	if code, _, stderr := runCLI(t, "demo", "--once", "--scenarios", "hash_join", "--out", out); code != 0 {
		t.Fatalf("demo --once: exit %d: %s", code, stderr)
	}
	bundlePath := filepath.Join(out, "hash_join.json.gz")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done, stdout, stderr := runCLIContext(ctx, "view", "--assets", fakeViewerAssets(t), bundlePath)
	pageURL := waitForViewURL(t, done, stdout, stderr)
	u, _ := url.Parse(pageURL)
	traceID := u.Query().Get("traceId")
	page := httpGet(t, pageURL)
	if !strings.Contains(page, traceID) || !strings.Contains(page, "/assets/harness.js") {
		t.Errorf("the page does not name trace %s or load the bundle:\n%s", traceID, page)
	}
	body := fmt.Sprintf(`{"queries":[{"refId":"A","datasource":{"uid":"queryreplay"},"queryType":"bundle","traceId":%q}]}`, traceID)
	code, b := viewerAPI(t, u, page, http.MethodPost, "/api/ds/query", body)
	if code != 200 || !strings.Contains(string(b), `"frames"`) || !strings.Contains(string(b), "Hash Match") {
		t.Fatalf("query of the bundle: %d %.500s", code, b)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("view after cancel: exit %d: %s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("view did not stop")
	}
	if c, err := net.DialTimeout("tcp", u.Host, time.Second); err == nil {
		c.Close()
		t.Error("the viewer still listens after view stopped")
	}
}

// waitForViewURL waits for view to print its first page URL and the
// Ctrl-C line.
func waitForViewURL(t *testing.T, done chan int, stdout, stderr *testenv.SyncBuffer) string {
	t.Helper()
	for i := 0; i < 300; i++ {
		if m := regexp.MustCompile(`http://127\.0\.0\.1:\d+/\?\S+`).FindString(stdout.String()); m != "" && strings.Contains(stdout.String(), "Ctrl-C stops") {
			return m
		}
		select {
		case code := <-done:
			t.Fatalf("view exited %d: %s", code, stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("view printed no URL: %s / %s", stdout.String(), stderr.String())
	return ""
}

// viewerAPI calls the viewer's API as its page does: with the token the
// page's HTML carries (pkg/viewer refuses calls without it).
func viewerAPI(t *testing.T, page *url.URL, html, method, path, body string) (int, string) {
	t.Helper()
	m := regexp.MustCompile(`"token":"([0-9a-f]{64})"`).FindStringSubmatch(html)
	if m == nil {
		t.Fatalf("the page carries no token:\n%s", html)
	}
	req, err := http.NewRequest(method, page.Scheme+"://"+page.Host+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(viewer.TokenHeader, m[1])
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func httpGet(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", u, resp.StatusCode, b)
	}
	return string(b)
}

func TestViewUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"format":"something else"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{bad}, "bundle " + bad + ": "},
		{[]string{filepath.Join(dir, "missing.json.gz")}, "missing.json.gz"},
		{[]string{"--listen", "0.0.0.0:0", bad}, "not a loopback address"},
	} {
		code, _, stderr := runCLI(t, append([]string{"view"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("view %v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// view takes its server from $QUERYREPLAY_DSN when --dsn is not given, so
// the password stays off the command line (ps): a bad one is a usage error
// naming the variable, a good one lets the page reach the server, and the
// password is printed nowhere.
func TestViewReadsDSNFromTheEnvironment(t *testing.T) {
	bundlePath := filepath.Join(t.TempDir(), "generated.json.gz")
	if _, err := viewertest.GenerateBundle(bundlePath, 4, 3); err != nil {
		t.Fatal(err)
	}
	t.Setenv("QUERYREPLAY_DSN", "server=127.0.0.1;user id=sa;password=Env-Only-9")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bad, out, errs := runCLIContext(ctx, "view", "--assets", fakeViewerAssets(t), bundlePath)
	select {
	case code := <-bad:
		if code != 2 || !strings.Contains(errs.String(), "$QUERYREPLAY_DSN") || strings.Contains(out.String()+errs.String(), "Env-Only-9") {
			t.Errorf("bad $QUERYREPLAY_DSN: exit %d, %q %q; want 2 naming the variable, without the password", code, out, errs)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("view ignored a bad $QUERYREPLAY_DSN and kept serving: %s", out)
	}

	const pw = "Env-Only-Secret-7"
	srv, err := standin.Start(ctx, "127.0.0.1:0", standin.Options{User: "sa", Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	t.Setenv("QUERYREPLAY_DSN", srv.DSN)
	done, stdout, stderr := runCLIContext(ctx, "view", "--assets", fakeViewerAssets(t), bundlePath)
	pageURL := waitForViewURL(t, done, stdout, stderr)
	u, _ := url.Parse(pageURL)
	code, health := viewerAPI(t, u, httpGet(t, pageURL), http.MethodGet, "/api/datasources/uid/queryreplay/health", "")
	if code != 200 || !strings.Contains(health, `"status":"OK"`) {
		t.Errorf("health through $QUERYREPLAY_DSN's server: %d %.300s", code, health)
	}
	if strings.Contains(stdout.String(), "Saved traces and bundle files only") {
		t.Errorf("view ignored $QUERYREPLAY_DSN:\n%s", stdout.String())
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("view after cancel: exit %d: %s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("view did not stop")
	}
	if strings.Contains(stdout.String()+stderr.String(), pw) {
		t.Errorf("the output holds the password:\n%s\n%s", stdout.String(), stderr.String())
	}
}

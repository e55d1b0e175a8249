package main

import (
	"context"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/internal/symfixture"
)

// queryreplay trace --callstacks --symbol-server … --symbol-cache …
// downloads the PDBs from the symbol server and prints how many frames it
// resolved; without --symbol-server it downloads nothing.
func TestTraceSymbolFlags(t *testing.T) {
	fx, sym := symfixture.ServeTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run, err := standin.Start(ctx, "127.0.0.1:0", standin.Options{Persona: "sql2022", ModuleBuilds: fx.Builds})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	const seek = "SELECT o.OrderID, o.OrderDate, o.Amount FROM dbo.Orders AS o WHERE o.CustomerID = 42"
	cache := t.TempDir()
	code, out, errs := runTraceCmd(t, "", "--dsn", run.DSN, "--sql", seek, "--callstacks", "--clear-buffer-pool", "--allow-clear-buffer-pool",
		"--symbol-server", sym.URL, "--symbol-cache", cache, "-q")
	if code != 0 || !strings.Contains(out, "frames resolved to symbols") || strings.Contains(out, "unresolved:") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "Page headers: ") || !strings.Contains(out, "sys.dm_db_page_info") {
		t.Errorf("no page headers line:\n%s", out)
	}
	before := len(sym.Requests())
	// the cache alone serves the next trace, offline
	code, out, errs = runTraceCmd(t, "", "--dsn", run.DSN, "--sql", seek, "--callstacks", "--clear-buffer-pool", "--allow-clear-buffer-pool",
		"--symbol-cache", cache, "-q")
	if code != 0 || strings.Contains(out, "unresolved:") || len(sym.Requests()) != before {
		t.Fatalf("cache only: exit %d, %d requests (was %d)\n%s\n%s", code, len(sym.Requests()), before, out, errs)
	}
	code, out, _ = runTraceCmd(t, "", "--dsn", run.DSN, "--sql", seek, "--callstacks", "--clear-buffer-pool", "--allow-clear-buffer-pool", "-q")
	if code != 0 || !strings.Contains(out, "no symbol server or cache configured") {
		t.Fatalf("no symbols: exit %d\n%s", code, out)
	}
	if code, _, errs := runTraceCmd(t, "", "--dsn", run.DSN, "--sql", seek, "--modinfo", "/nonexistent/modinfo.csv"); code != 2 {
		t.Fatalf("a missing --modinfo file: exit %d %s", code, errs)
	}
}

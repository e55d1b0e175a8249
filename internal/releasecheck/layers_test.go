package releasecheck

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

const modulePath = "github.com/queryreplay/queryreplay"

// architectureLayers reads docs/ARCHITECTURE.md's layer table: each row's
// layer rank (its position in the table) for every package it names.
func architectureLayers(t *testing.T) (rank map[string]int, names []string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repo(t), "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n## Layers\n")
	if !ok {
		t.Fatal("docs/ARCHITECTURE.md has no ## Layers section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rank = map[string]int{}
	pkg := regexp.MustCompile("`((?:pkg|cmd|internal)/[a-z0-9_/]+)`")
	for line := range strings.Lines(section) {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || strings.TrimSpace(cells[1]) == "layer" {
			continue
		}
		names = append(names, strings.TrimSpace(cells[1]))
		for _, m := range pkg.FindAllStringSubmatch(cells[2], -1) {
			rank[m[1]] = len(names) - 1
		}
	}
	if len(names) < 4 {
		t.Fatalf("the layer table has %d rows: %q", len(names), names)
	}
	return rank, names
}

// moduleImports lists every package of the module (tests excluded) with
// the module packages it imports, from go list.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./cmd/...", "./internal/...", "./pkg/...")
	cmd.Dir = repo(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	imports := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		p := strings.TrimPrefix(strings.TrimPrefix(f[0], modulePath), "/")
		imports[p] = []string{}
		for _, imp := range f[1:] {
			if rel, ok := strings.CutPrefix(imp, modulePath+"/"); ok {
				imports[p] = append(imports[p], rel)
			}
		}
	}
	return imports
}

// testSupport are packages for tests only: no command or product package
// may link them.
var testSupport = regexp.MustCompile(`^internal/(symfixture|testenv|testsql|testtrace|viewertest|s3fake|pluginhost|testbomb|grafanarule|tsqlcorpus|fakesql)$|^pkg/(pdb/pdbtest|xe/xetest)$|^internal/standin/clienttest$`)

// standinFront is the stand-in's T-SQL front end (lexer, parser, trees).
const standinFront = "internal/standin/sqlfront"

// standinEvents is the stand-in's Extended Events emulation.
const standinEvents = "internal/standin/xevents"

// standinEngine is the stand-in's query engine: storage types, the planner,
// the operators, actual plans, values and evaluation.
const standinEngine = "internal/standin/engine"

// engineImportViolations lists the module packages among deps that the
// engine must not import: it may reach the front end and the event
// emulation's vocabulary, never the server (internal/standin), the
// protocol (internal/tds and below) or anything else of the module.
func engineImportViolations(deps []string) []string {
	var bad []string
	for _, d := range deps {
		if d != standinFront && d != standinEvents {
			bad = append(bad, d)
		}
	}
	return bad
}

// standinServer is the stand-in's server: connections, sessions,
// transactions, system views, personas, the tds.Handler.
const standinServer = "internal/standin"

// engineStdForbidden says whether the engine may not import the standard
// library package d: the network, files, database drivers, TLS, locks and
// the scheduler belong to the server.
func engineStdForbidden(d string) bool {
	for _, p := range []string{"net", "os", "io/fs", "database/sql", "crypto/tls", "sync", "runtime", "log", "log/slog"} {
		if d == p || strings.HasPrefix(d, p+"/") {
			return true
		}
	}
	return false
}

// stdImports is the standard library packages p (a module package)
// imports directly.
func stdImports(t *testing.T, p string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "list", "-f", `{{join .Imports " "}}`, "./"+p)
	cmd.Dir = repo(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v", p, err)
	}
	var std []string
	for _, imp := range strings.Fields(string(out)) {
		if !strings.HasPrefix(imp, modulePath+"/") {
			std = append(std, imp)
		}
	}
	return std
}

// TestLayers: every arrow of docs/ARCHITECTURE.md's layer table is true in
// the imports — a package imports only its own layer or the ones above it;
// every package under pkg/ is in the table (or named as test support);
// product code never imports the stand-in; the stand-in's front end imports
// nothing of the module and its event emulation only the front end; its
// engine only those two, directly or not (never the server or the
// protocol), and no network, file, lock or scheduler package; the server
// imports the engine and nothing outside the stand-in does; no command
// links test support.
func TestLayers(t *testing.T) {
	rank, names := architectureLayers(t)
	imports := moduleImports(t)
	for p, deps := range imports {
		r, placed := rank[p]
		if strings.HasPrefix(p, "pkg/") && !placed && !testSupport.MatchString(p) {
			t.Errorf("%s is in no layer of docs/ARCHITECTURE.md", p)
		}
		for _, d := range deps {
			if rd, ok := rank[d]; placed && ok && rd > r {
				t.Errorf("%s (%s) imports %s (%s): imports go only down the layer table", p, names[r], d, names[rd])
			}
			if (strings.HasPrefix(p, "pkg/") || strings.HasPrefix(p, "cmd/gpx")) && !testSupport.MatchString(p) &&
				(strings.HasPrefix(d, "internal/standin") || strings.HasPrefix(d, "internal/tds")) {
				t.Errorf("%s imports the stand-in (%s): production code never does", p, d)
			}
		}
	}
	// The stand-in's T-SQL front end says what a batch means, never what it
	// does: it must not reach the engine, the catalog or the event emulation.
	if deps, ok := imports[standinFront]; !ok || len(deps) > 0 {
		t.Errorf("%s imports module packages %q (or is missing): the front end imports only the standard library", standinFront, deps)
	}
	// The event emulation needs no executor: it reaches only the front end.
	if deps, ok := imports[standinEvents]; !ok || !slices.Equal(deps, []string{standinFront}) {
		t.Errorf("%s imports %q (or is missing): it may import only %s", standinEvents, deps, standinFront)
	}
	// The engine asks the server through interfaces it declares; it never
	// imports the server or the protocol.
	if deps, ok := imports[standinEngine]; !ok {
		t.Errorf("%s is missing", standinEngine)
	} else if bad := engineImportViolations(deps); len(bad) > 0 {
		t.Errorf("%s imports %q: it may import only %s and %s", standinEngine, bad, standinFront, standinEvents)
	}
	// Nothing below the server reaches up into the engine.
	for _, low := range []string{standinFront, standinEvents} {
		if slices.Contains(imports[low], standinEngine) {
			t.Errorf("%s imports %s: the engine sits above it", low, standinEngine)
		}
	}
	// Not even through another package: everything the engine links is the
	// front end and the event emulation.
	if bad := engineImportViolations(linked(imports, standinEngine)); len(bad) > 0 {
		t.Errorf("%s links %q: it may link only %s and %s", standinEngine, bad, standinFront, standinEvents)
	}
	// The server runs statements through the engine (the arrow
	// internal/standin ──► internal/standin/engine), and the engine is the
	// stand-in's own: nothing outside internal/standin imports it.
	if !slices.Contains(imports[standinServer], standinEngine) {
		t.Errorf("%s does not import %s: docs/ARCHITECTURE.md draws that arrow", standinServer, standinEngine)
	}
	for p, deps := range imports {
		if slices.Contains(deps, standinEngine) && p != standinServer && !strings.HasPrefix(p, standinServer+"/") {
			t.Errorf("%s imports %s: only the stand-in uses its engine", p, standinEngine)
		}
	}
	// The engine plans and runs statements; connections, files, locks of
	// its own and the scheduler are the server's.
	for _, d := range stdImports(t, standinEngine) {
		if engineStdForbidden(d) {
			t.Errorf("%s imports %s: the engine does no I/O and takes no latch of its own; it asks the server through the interfaces it declares", standinEngine, d)
		}
	}
	for p := range rank {
		if _, ok := imports[p]; !ok {
			t.Errorf("docs/ARCHITECTURE.md names %s, which does not exist", p)
		}
	}
	for _, cmd := range []string{"cmd/queryreplay", "cmd/gpx_queryreplay"} {
		for _, d := range linked(imports, cmd) {
			if testSupport.MatchString(d) {
				t.Errorf("%s links the test-support package %s", cmd, d)
			}
		}
	}
}

// TestEngineImportRule: the engine rule refuses the server, the protocol and
// its wrappers, and accepts the front end and the event emulation.
func TestEngineImportRule(t *testing.T) {
	for _, d := range []string{"internal/standin", "internal/tds", "internal/tds/tdsfault", "pkg/tracer"} {
		if bad := engineImportViolations([]string{standinFront, d}); !slices.Equal(bad, []string{d}) {
			t.Errorf("engine importing %s: violations %q, want [%s]", d, bad, d)
		}
	}
	if bad := engineImportViolations([]string{standinFront, standinEvents}); len(bad) > 0 {
		t.Errorf("front end and event emulation refused: %q", bad)
	}
	for _, d := range []string{"net", "net/http", "os", "database/sql", "sync", "sync/atomic", "runtime", "crypto/tls"} {
		if !engineStdForbidden(d) {
			t.Errorf("the engine may import %s", d)
		}
	}
	for _, d := range []string{"time", "strings", "crypto/rand", "hash/fnv", "sort"} {
		if engineStdForbidden(d) {
			t.Errorf("the engine may not import %s", d)
		}
	}
}

// linked is every module package p reaches through its imports.
func linked(imports map[string][]string, p string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(q string) {
		for _, d := range imports[q] {
			if !seen[d] {
				seen[d] = true
				walk(d)
			}
		}
	}
	walk(p)
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/pdb"
	"github.com/queryreplay/queryreplay/pkg/pdb/pdbtest"
)

const symbolsFixtureSource = `
struct CQScanNLJoinNew { int GetRow(int n); int Open(); };
int CQScanNLJoinNew::GetRow(int n) { return n * 3; }
int CQScanNLJoinNew::Open() { return 1; }
namespace sql { struct BTreeMgr { static int Seek(int k); }; int BTreeMgr::Seek(int k) { return k + 7; } }
template <int A, int B> struct Spinlock { static int SpinToAcquire(int x) { return x + A + B; } };
int Use() { CQScanNLJoinNew s; return s.GetRow(1) + s.Open() + sql::BTreeMgr::Seek(2) + Spinlock<143, 7>::SpinToAcquire(3); }
extern "C" int _DllMainCRTStartup(void *h, unsigned long r, void *p) { return Use(); }
`

var (
	symFixOnce sync.Once
	symFixImg  pdbtest.Image
	symFixErr  error
)

// symbolsFixture builds sqlmin.dll/sqlmin.pdb once per test run, so that
// the module classifies as Storage Engine.
func symbolsFixture(t *testing.T) (pdbtest.Tools, pdbtest.Image) {
	t.Helper()
	tools := pdbtest.Require(t)
	symFixOnce.Do(func() {
		dir, err := os.MkdirTemp("", "qrsymbols")
		if err != nil {
			symFixErr = err
			return
		}
		src := filepath.Join(dir, "sqlmin.cpp")
		if symFixErr = os.WriteFile(src, []byte(symbolsFixtureSource), 0o644); symFixErr != nil {
			return
		}
		symFixImg, symFixErr = tools.Build(context.Background(), dir, "sqlmin", src)
	})
	if symFixErr != nil {
		t.Fatalf("build fixture: %v", symFixErr)
	}
	return tools, symFixImg
}

func fixtureSymbols(t *testing.T, path string) (map[string]uint32, *pdb.File) {
	f, err := pdb.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	table, err := f.Table()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint32{}
	for _, s := range table.Symbols() {
		m, _ := table.Lookup(s.RVA)
		out[m.Name] = s.RVA
	}
	return out, f
}

func TestSymbolsPDBInfo(t *testing.T) {
	tools, img := symbolsFixture(t)
	code, out, errOut := runCLI(t, "symbols", "pdb-info", img.PDB)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	summary, err := pdbtest.Output(context.Background(), tools.PDBUtil, "dump", "-summary", "-section-headers", img.PDB)
	if err != nil {
		t.Fatal(err)
	}
	guid := regexp.MustCompile(`GUID: (\{[0-9A-F-]+\})`).FindStringSubmatch(summary)
	if guid == nil || !strings.Contains(out, "guid\t"+guid[1]+"\n") {
		t.Errorf("pdb-info GUID differs from llvm-pdbutil %v:\n%s", guid, out)
	}
	sections := strings.Count(summary, "SECTION HEADER #")
	if got := strings.Count(out, "\nsection\t"); got != sections || !strings.Contains(out, fmt.Sprintf("sections\t%d\n", sections)) {
		t.Errorf("%d section lines, llvm-pdbutil lists %d:\n%s", got, sections, out)
	}
	for _, field := range []string{"age\t1\n", "publics\t", "procedures\t", "code-symbols\t", "machine\t0x8664\n"} {
		if !strings.Contains(out, field) {
			t.Errorf("pdb-info lacks %q:\n%s", field, out)
		}
	}
	if code, _, errOut := runCLI(t, "symbols", "pdb-info", filepath.Join(t.TempDir(), "missing.pdb")); code != 1 || !strings.Contains(errOut, "missing.pdb") {
		t.Errorf("missing file: exit %d %s", code, errOut)
	}
}

func TestSymbolsResolveRVAsWithPDB(t *testing.T) {
	_, img := symbolsFixture(t)
	syms, _ := fixtureSymbols(t, img.PDB)
	getRow, seek, spin := syms["CQScanNLJoinNew::GetRow"], syms["sql::BTreeMgr::Seek"], syms["Spinlock<143,7>::SpinToAcquire"]
	if getRow == 0 || seek == 0 || spin == 0 {
		t.Fatalf("fixture symbols missing: %v", syms)
	}
	code, out, errOut := runCLI(t, "symbols", "resolve", "--pdb", img.PDB,
		fmt.Sprintf("0x%x", getRow+3), fmt.Sprintf("%x", seek), fmt.Sprintf("0x%X", spin+1), "0x10")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := []string{
		"sqlmin!CQScanNLJoinNew::GetRow+0x3\tStorage Engine\tQuery Operator\t-\tNested Loops",
		"sqlmin!sql::BTreeMgr::Seek+0x0\tStorage Engine\tIndex Access\t-\t-",
		"sqlmin!Spinlock<143,7>::SpinToAcquire+0x1\tStorage Engine\tSpinlock\t-\t-",
		"sqlmin+0x10\tStorage Engine\tUnknown\t-\t-",
	}
	if got := strings.Split(strings.TrimSpace(out), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("output\n%s\nwant\n%s", out, strings.Join(want, "\n"))
	}
	if !strings.Contains(errOut, "unresolved frames") {
		t.Errorf("no warning for the unresolved RVA: %s", errOut)
	}
}

func TestSymbolsResolveFramesThroughSymbolServer(t *testing.T) {
	_, img := symbolsFixture(t)
	syms, f := fixtureSymbols(t, img.PDB)
	data, err := os.ReadFile(img.PDB)
	if err != nil {
		t.Fatal(err)
	}
	var gets int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gets++
		mu.Unlock()
		if r.URL.Path == "/symbols/sqlmin.pdb/"+f.SymbolServerKey()+"/sqlmin.pdb" {
			w.Write(data)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	// Two SQL 2022 callstack_rva stacks (entity-escaped, as in event_file XML),
	// sharing a frame, plus a KERNEL32 frame with no identity.
	frame := func(id int, rva uint32) string {
		return fmt.Sprintf(`&lt;frame id="%02d" pdb="sqlmin.pdb" age="1" guid="%s" module="sqlmin.dll" rva="0x%x" /&gt;`, id, strings.ToLower(f.GUID.String()), rva)
	}
	input := frame(0, syms["sql::BTreeMgr::Seek"]+2) + frame(1, syms["CQScanNLJoinNew::GetRow"]+4) + "\n\n" +
		frame(0, syms["CQScanNLJoinNew::Open"]) + frame(1, syms["CQScanNLJoinNew::GetRow"]+4) + "\nKERNEL32+0x11FE4\n"
	framesFile := filepath.Join(t.TempDir(), "frames.txt")
	os.WriteFile(framesFile, []byte(input), 0o644)
	cache := t.TempDir()
	code, out, errOut := runCLI(t, "symbols", "resolve", "--cache", cache, "--server", srv.URL+"/symbols", "--frames", framesFile)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "sqlmin!sql::BTreeMgr::Seek+0x2\tStorage Engine\tIndex Access\t-\t-\n" +
		"sqlmin!CQScanNLJoinNew::GetRow+0x4\tStorage Engine\tQuery Operator\t-\tNested Loops\n" +
		"\n" +
		"sqlmin!CQScanNLJoinNew::Open+0x0\tStorage Engine\tQuery Operator\t-\tNested Loops\n" +
		"sqlmin!CQScanNLJoinNew::GetRow+0x4\tStorage Engine\tQuery Operator\t-\tNested Loops\n" +
		"kernel32+0x11fe4\tSystem\tUnknown\tinfra\t-\n"
	if out != want {
		t.Errorf("output\n%s\nwant\n%s", out, want)
	}
	if gets != 1 {
		t.Errorf("%d requests to the symbol server, want 1", gets)
	}
	if _, err := os.Stat(filepath.Join(cache, "sqlmin.pdb", f.SymbolServerKey(), "sqlmin.pdb")); err != nil {
		t.Errorf("PDB not cached in store layout: %v", err)
	}
	// Offline with the now-filled cache: same answers, no request.
	code, out2, _ := runCLI(t, "symbols", "resolve", "--cache", cache, "--offline", "--frames", framesFile)
	if code != 0 || out2 != want || gets != 1 {
		t.Errorf("offline from cache: exit %d, %d requests\n%s", code, gets, out2)
	}
	// Offline with an empty cache: frames stay module+rva, and since none
	// resolved the command fails.
	code, out3, errOut := runCLI(t, "symbols", "resolve", "--cache", t.TempDir(), "--offline", "--frames", framesFile)
	if code != 1 || !strings.Contains(errOut, "no frame resolved") || !strings.HasPrefix(out3, fmt.Sprintf("sqlmin+0x%x\t", syms["sql::BTreeMgr::Seek"]+2)) || !strings.Contains(errOut, "offline") {
		t.Errorf("offline empty cache: exit %d\n%s\n%s", code, out3, errOut)
	}
}

func TestSymbolsResolveUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"symbols", "resolve"},
		{"symbols", "resolve", "--pdb", "x.pdb", "zz"},
		{"symbols", "resolve", "0x10"},
		{"symbols", "resolve", "--pdb", "x.pdb", "--offline", "0x10"},
	} {
		code, _, errOut := runCLI(t, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errOut)
		}
	}
	var in bytes.Buffer
	in.WriteString("no frames here")
	code := run(context.Background(), []string{"symbols", "resolve", "--offline", "--cache", t.TempDir(), "--frames", "-"}, &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, stdin: &in})
	if code != 2 {
		t.Errorf("input without frames: exit %d, want 2", code)
	}
}

// TestSymbolsResolvePDBOnlyForItsModule: with --pdb sqlmin.pdb, frames of
// other modules are not looked up in it (their names would be wrong); the
// command warns and names them.
func TestSymbolsResolvePDBOnlyForItsModule(t *testing.T) {
	_, img := symbolsFixture(t)
	syms, _ := fixtureSymbols(t, img.PDB)
	getRow := syms["CQScanNLJoinNew::GetRow"]
	frames := fmt.Sprintf("sqlmin+0x%x\nsqllang+0x%x\nsqldk.dll+0x%x\n", getRow+1, getRow+1, getRow+1)
	file := filepath.Join(t.TempDir(), "frames.txt")
	os.WriteFile(file, []byte(frames), 0o644)
	code, out, errOut := runCLI(t, "symbols", "resolve", "--pdb", img.PDB, "--frames", file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "sqlmin!CQScanNLJoinNew::GetRow+0x1\tStorage Engine\tQuery Operator\t-\tNested Loops\n" +
		fmt.Sprintf("sqllang+0x%x\tQuery Processor\tUnknown\t-\t-\n", getRow+1) +
		fmt.Sprintf("sqldk+0x%x\tSQL OS\tUnknown\t-\t-\n", getRow+1)
	if out != want {
		t.Errorf("output\n%s\nwant\n%s", out, want)
	}
	if !strings.Contains(errOut, "--pdb") || !strings.Contains(errOut, "sqllang") || !strings.Contains(errOut, "sqldk") || !strings.Contains(errOut, "sqlmin.pdb") {
		t.Errorf("no warning naming the other modules and the PDB: %s", errOut)
	}
	// Only other modules: nothing resolved, exit 1.
	os.WriteFile(file, []byte("sqllang+0x10\n"), 0o644)
	if code, _, errOut := runCLI(t, "symbols", "resolve", "--pdb", img.PDB, "--frames", file); code != 1 || !strings.Contains(errOut, "no frame resolved") {
		t.Errorf("nothing resolved: exit %d %s", code, errOut)
	}
}

// TestSymbolsResolveSpinlockOwner: a spinlock frame's category names the
// code that took it.
func TestSymbolsResolveSpinlockOwner(t *testing.T) {
	_, img := symbolsFixture(t)
	syms, _ := fixtureSymbols(t, img.PDB)
	frames := fmt.Sprintf("sqlmin+0x%x\nsqlmin+0x%x\n", syms["Spinlock<143,7>::SpinToAcquire"], syms["sql::BTreeMgr::Seek"])
	file := filepath.Join(t.TempDir(), "frames.txt")
	os.WriteFile(file, []byte(frames), 0o644)
	code, out, errOut := runCLI(t, "symbols", "resolve", "--pdb", img.PDB, "--frames", file)
	if code != 0 || !strings.HasPrefix(out, "sqlmin!Spinlock<143,7>::SpinToAcquire+0x0\tStorage Engine\tSpinlock (Index Access)\t") {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
}

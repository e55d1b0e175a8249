package pdb

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/pdb/pdbtest"
)

// The fixture DLL/PDB is built once per test run from testdata/ sources.
var (
	fixtureOnce sync.Once
	fixtureImg  pdbtest.Image
	fixtureErr  error
	fixtureDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range []string{fixtureDir, benchDir} {
		if d != "" {
			os.RemoveAll(d)
		}
	}
	os.Exit(code)
}

func fixture(t *testing.T) (pdbtest.Tools, pdbtest.Image) {
	t.Helper()
	tools := pdbtest.Require(t)
	fixtureOnce.Do(func() {
		fixtureDir, fixtureErr = os.MkdirTemp("", "pdbfixture")
		if fixtureErr != nil {
			return
		}
		fixtureImg, fixtureErr = tools.Build(context.Background(), fixtureDir, "fixture", "testdata/fixture.cpp", "testdata/fixture_c.c")
	})
	if fixtureErr != nil {
		t.Fatalf("build fixture: %v", fixtureErr)
	}
	return tools, fixtureImg
}

func openFixture(t *testing.T) (pdbtest.Tools, pdbtest.Image, *File) {
	tools, img := fixture(t)
	f, err := Open(img.PDB)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return tools, img, f
}

func pdbutil(t *testing.T, tools pdbtest.Tools, args ...string) string {
	t.Helper()
	out, err := pdbtest.Output(context.Background(), tools.PDBUtil, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestIdentityMatchesPDBUtil(t *testing.T) {
	tools, img, f := openFixture(t)
	out := pdbutil(t, tools, "dump", "-summary", img.PDB)
	guid := regexp.MustCompile(`GUID: \{([0-9A-F-]+)\}`).FindStringSubmatch(out)
	age := regexp.MustCompile(`\n\s*Age: (\d+)`).FindStringSubmatch(out)
	if guid == nil || age == nil {
		t.Fatalf("llvm-pdbutil summary without GUID/Age:\n%s", out)
	}
	if got := f.GUID.String(); got != guid[1] {
		t.Errorf("GUID = %s, llvm-pdbutil says %s", got, guid[1])
	}
	if got := strconv.FormatUint(uint64(f.InfoAge), 10); got != age[1] {
		t.Errorf("info age = %s, llvm-pdbutil says %s", got, age[1])
	}
	if f.Age != 1 { // lld writes DBI age 1
		t.Errorf("DBI age = %d, want 1", f.Age)
	}
	if f.Machine != 0x8664 {
		t.Errorf("machine = %#x, want 0x8664", f.Machine)
	}
	if want := strings.ReplaceAll(guid[1], "-", "") + "1"; f.SymbolServerKey() != want {
		t.Errorf("key = %s, want %s", f.SymbolServerKey(), want)
	}
	if len(f.Modules) < 2 {
		t.Errorf("modules = %d, want both object files", len(f.Modules))
	}
}

func TestSectionsMatchPDBUtil(t *testing.T) {
	tools, img, f := openFixture(t)
	out := pdbutil(t, tools, "dump", "-section-headers", img.PDB)
	re := regexp.MustCompile(`(?m)^\s+(\S+) name\n\s+([0-9A-F]+) virtual size\n\s+([0-9A-F]+) virtual address\n(?:.*\n){6}\s+([0-9A-F]+) flags`)
	var want []string
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		want = append(want, strings.Join(m[1:], " "))
	}
	var got []string
	for _, s := range f.Sections {
		got = append(got, fmt.Sprintf("%s %X %X %X", s.Name, s.VirtualSize, s.VirtualAddress, s.Characteristics))
	}
	if len(want) < 4 {
		t.Fatalf("could not read sections from llvm-pdbutil:\n%s", out)
	}
	if !slices.Equal(got, want) {
		t.Errorf("sections\n got %q\nwant %q", got, want)
	}
	var exec []string
	for _, s := range f.Sections {
		if s.Executable() {
			exec = append(exec, s.Name)
		}
	}
	if !slices.Equal(exec, []string{".text", "PAGE"}) {
		t.Errorf("executable sections = %q, want .text and PAGE", exec)
	}
}

func TestPublicsMatchPDBUtil(t *testing.T) {
	tools, img, f := openFixture(t)
	out := pdbutil(t, tools, "dump", "-publics", img.PDB)
	re := regexp.MustCompile("S_PUB32 \\[size = \\d+\\] `([^`]*)`\\n\\s+flags = ([a-z |]+), addr = (\\d+):(\\d+)")
	var want []string
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		seg, _ := strconv.Atoi(m[3])
		off, _ := strconv.Atoi(m[4])
		want = append(want, fmt.Sprintf("%s %d:%d fn=%v", m[1], seg, off, strings.Contains(m[2], "function")))
	}
	pubs, err := f.Publics()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pubs {
		got = append(got, fmt.Sprintf("%s %d:%d fn=%v", p.Name, p.Segment, p.Offset, p.Flags&pubFlagFunc != 0))
	}
	slices.Sort(want)
	slices.Sort(got)
	if len(want) < 40 {
		t.Fatalf("only %d publics parsed from llvm-pdbutil output", len(want))
	}
	if !slices.Equal(got, want) {
		t.Errorf("publics differ from llvm-pdbutil\n got %q\nwant %q", got, want)
	}
	n, _, _, err := f.GlobalCounts()
	if err != nil || n != len(want) {
		t.Errorf("GlobalCounts publics = %d, %v; want %d", n, err, len(want))
	}
}

// TestLookupMatchesSymbolizer resolves the first and last byte of every
// procedure and compares the name-only result with llvm-symbolizer's.
func TestLookupMatchesSymbolizer(t *testing.T) {
	tools, img, f := openFixture(t)
	table, err := f.Table()
	if err != nil {
		t.Fatal(err)
	}
	procs, err := f.Procedures()
	if err != nil {
		t.Fatal(err)
	}
	if len(procs) < 40 {
		t.Fatalf("only %d procedures", len(procs))
	}
	var rvas []uint32
	for _, p := range procs {
		if p.Size == 0 {
			continue
		}
		rvas = append(rvas, p.RVA, p.RVA+p.Size-1)
	}
	var in strings.Builder
	for _, r := range rvas {
		fmt.Fprintf(&in, "0x%x\n", r)
	}
	out, err := pdbtest.OutputWithInput(context.Background(), in.String(), tools.Symbolizer, "--obj="+img.DLL, "--relative-address", "--no-inlines")
	if err != nil {
		t.Fatal(err)
	}
	names := symbolizerFunctions(out)
	if len(names) != len(rvas) {
		t.Fatalf("llvm-symbolizer gave %d answers for %d addresses", len(names), len(rvas))
	}
	seenStatic := false
	for i, r := range rvas {
		m, ok := table.Lookup(r)
		if !ok {
			t.Errorf("Lookup(%#x) found nothing; llvm-symbolizer says %q", r, names[i])
			continue
		}
		if got, want := normalizeName(m.Name), normalizeName(stripSignature(names[i])); got != want {
			t.Errorf("Lookup(%#x) = %q (%s), llvm-symbolizer %q", r, m.Name, m.Symbol.Kind, names[i])
		}
		if m.Symbol.RVA+m.Displacement != r {
			t.Errorf("Lookup(%#x): symbol at %#x + displacement %#x", r, m.Symbol.RVA, m.Displacement)
		}
		if m.Name == "internal_mul" || m.Name == "StaticHelper" {
			seenStatic = true
		}
	}
	if !seenStatic {
		t.Error("static functions were not resolved through module procedures")
	}
	// Outside any code: before the first section and in .rdata.
	if _, ok := table.Lookup(0x10); ok {
		t.Error("Lookup in the headers found a symbol")
	}
	for _, s := range f.Sections {
		if s.Name == ".rdata" {
			if m, ok := table.Lookup(s.VirtualAddress + 1); ok {
				t.Errorf("Lookup in .rdata found %q", m.Name)
			}
		}
	}
}

// symbolizerFunctions takes the function line of each LLVM-style answer
// (function, location, blank line).
func symbolizerFunctions(out string) []string {
	var names []string
	for _, block := range strings.Split(strings.TrimSpace(out), "\n\n") {
		names = append(names, strings.SplitN(block, "\n", 2)[0])
	}
	return names
}

// stripSignature removes a trailing parameter list and cv-qualifiers from an
// llvm-symbolizer / llvm-undname function name.
func stripSignature(s string) string {
	s = strings.TrimSpace(s)
	for _, q := range []string{" const", " volatile", " __ptr64", " &&", " &"} {
		s = strings.TrimSuffix(s, q)
	}
	if !strings.HasSuffix(s, ")") {
		return s
	}
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return s[:i]
			}
		}
	}
	return s
}

// normalizeName removes what legitimately differs between LLVM's spelling
// and DIA's name-only spelling: type keywords, whitespace and the short
// "dtor" form.
func normalizeName(s string) string {
	s = strings.ReplaceAll(s, "`scalar deleting dtor'", "`scalar deleting destructor'")
	s = strings.ReplaceAll(s, "`vector deleting dtor'", "`vector deleting destructor'")
	for _, kw := range []string{"class ", "struct ", "union ", "enum "} {
		s = strings.ReplaceAll(s, kw, "")
	}
	return strings.Join(strings.Fields(s), "")
}

func TestUndecorateAgainstLLVMUndname(t *testing.T) {
	tools, _, f := openFixture(t)
	pubs, err := f.Publics()
	if err != nil {
		t.Fatal(err)
	}
	names := slices.Clone(undecorateCases)
	for _, p := range pubs {
		// llvm-undname prefixes vftables with their storage "const".
		if strings.HasPrefix(p.Name, "?") && !strings.HasPrefix(p.Name, "??_C") && !strings.HasPrefix(p.Name, "??_7") {
			names = append(names, p.Name)
		}
	}
	compareWithUndname(t, tools, names)
}

// nameOnly reduces a full llvm-undname signature to the qualified name:
// drop access and storage words, the return type (everything before the
// top-level calling convention) and the parameter list. Nested symbols
// (inside `…') keep their full signature, as llvm-undname prints them.
func nameOnly(full string) string {
	s := full
	for trimmed := true; trimmed; {
		trimmed = false
		for _, p := range []string{"public: ", "private: ", "protected: ", "virtual ", "static ", "[thunk]: "} {
			if strings.HasPrefix(s, p) {
				s, trimmed = s[len(p):], true
			}
		}
	}
	depth, quote, function := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<', '(':
			depth++
		case '>', ')':
			depth--
		case '`':
			quote++
		case '\'':
			if quote > 0 {
				quote--
			}
		}
		if depth == 0 && quote == 0 && strings.HasPrefix(s[i:], "__cdecl ") {
			s, function = s[i+len("__cdecl "):], true
			break
		}
	}
	if !function {
		// a variable: "type name" — the name is the last top-level word
		if j := lastTopLevelSpace(s); j >= 0 {
			s = strings.TrimLeft(s[j+1:], "*&") // "char const *name"
		}
	}
	return stripSignature(s)
}

// lastTopLevelSpace finds the last space outside <…>, (…) and `…'.
func lastTopLevelSpace(s string) int {
	depth, quote, at := 0, 0, -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<', '(', '{':
			depth++
		case '>', ')', '}':
			depth--
		case '`':
			quote++
		case '\'':
			if quote > 0 {
				quote--
			}
		case ' ':
			if depth == 0 && quote == 0 {
				at = i
			}
		}
	}
	return at
}

// undecorateCases are decorated names written for SQL Server-like symbols
// and encodings the fixture does not produce; llvm-undname is the oracle.
var undecorateCases = []string{
	"?ErsqExecuteQuery@CStmtQuery@@QEAAHH@Z",
	"??_GSqlAutoReadOnlyXact@@QEAAPEAXI@Z",
	"??$ExecuteStmts@$00$00@CMsqlExecContext@@QEAAHPEAVCCompExecCtxtStmt@@@Z",
	"?SpinToAcquireWithExponentialBackoff@?$Spinlock@$0IP@$06$00@@QEAAX_K@Z",
	"?Publish@spinlock_backoff@XeSosPkg@@SAXPEAVXeDispatcher@@@Z",
	"??1?$CAutoRefc@VHkStorageInterface@@@@QEAA@XZ",
	"?GetRow@CQScanNLJoinNew@@UEAAPEBVCRow@@PEAVCQueryScan@@@Z",
	"?push_back@?$vector@HV?$allocator@H@std@@@std@@QEAAXAEBH@Z",
	"?Run@?$Task@P6AHH@Z@@QEAAHXZ",
	"?Call@?$Invoker@P8Worker@@EAAXH@Z@@QEAAXXZ",
	"?anon@?A0x1b2c3d4e@@YAHH@Z",
	"??_ECFoo@@UEAAPEAXI@Z",
	"?Fill@?$Buffer@$$BY02H@@QEAAXXZ",
	"??$make@AEAH@@YAXAEAH@Z",
	"??$fwd@$$QEAH@@YAX$$QEAH@Z",
	"?f@?$Opt@$$V@@QEAAXXZ",
	"??__Eg_table@@YAXXZ",
	"??Hsql@@YA?AVCNum@0@AEBV10@0@Z",
	"?value@?$Wrap@W4Kind@sql@@@@QEBAHXZ",
	"?Get@?$Ptr@$$CBUNode@@@@QEBAPEBUNode@@XZ",
	// Nested names (issue 13): a local static, a lambda's call operator, a
	// templated one, a function template taking a lambda, $H and $1 arguments.
	"?calls@?1??ErsqExecuteQuery@CStmtQuery@sql@@QEAAHH@Z@4HA",
	"??R<lambda_0>@?0??ErsqExecuteQuery@CStmtQuery@sql@@QEAAHH@Z@QEBA?A?<auto>@@H@Z",
	"??$?RH@<lambda_2>@?0??user@sql@@YAHXZ@QEBA?A?<auto>@@H@Z",
	"??$apply@V<lambda_1>@?0??user@sql@@YAHXZ@@sql@@YAHV<lambda_1>@?0??user@0@YAHXZ@@Z",
	"??$cm@$H?m@M@@QEAAHXZA@@@YAHPEAUM@@@Z",
	"??$readp@$1?glob@sql@@3HA@sql@@YAHXZ",
	"??$callmem@$1??_9S@sql@@$BA@AA@sql@@YAHPEAUS@0@@Z",
}

func TestUndecorateKeepsUnknownNames(t *testing.T) {
	for _, s := range []string{"c_func", "_DllMainCRTStartup", "?", "?@", "??", "?x@@", "??$", "?a@?$b@", "??0@@QEAA@XZ", "?a@9@", "??_C@_01DICPFPGM@k?$AA@"} {
		got := Undecorate(s)
		if s == "??_C@_01DICPFPGM@k?$AA@" {
			if got != "`string'" {
				t.Errorf("Undecorate(%q) = %q, want `string'", s, got)
			}
			continue
		}
		if s == "?x@@" {
			if got != "x" {
				t.Errorf("Undecorate(%q) = %q, want x", s, got)
			}
			continue
		}
		if got != s {
			t.Errorf("Undecorate(%q) = %q, want it unchanged", s, got)
		}
	}
}

func TestGUIDParseAndKey(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"6a193443-3512-464b-8b8e-d905ad930ee6", "6A193443-3512-464B-8B8E-D905AD930EE6"},
		{"{C374E059-5793-9B92-6525-386A66A2D3F5}", "C374E059-5793-9B92-6525-386A66A2D3F5"},
		{"C374E05957939B926525386A66A2D3F5", "C374E059-5793-9B92-6525-386A66A2D3F5"},
	} {
		g, err := ParseGUID(tc.in)
		if err != nil || g.String() != tc.want {
			t.Errorf("ParseGUID(%q) = %s, %v; want %s", tc.in, g, err, tc.want)
		}
	}
	// Bytes from docs/design/symbols-and-xel.md §3: 28 8D 09 F7 A6 76 1F EA 4C 4C …
	g := GUID{0x28, 0x8D, 0x09, 0xF7, 0xA6, 0x76, 0x1F, 0xEA, 0x4C, 0x4C, 0x44, 0x20, 0x50, 0x44, 0x42, 0x2E}
	if g.String() != "F7098D28-76A6-EA1F-4C4C-44205044422E" {
		t.Errorf("String = %s", g)
	}
	if k := SymbolServerKey(g, 1); k != "F7098D2876A6EA1F4C4C44205044422E1" {
		t.Errorf("key = %s", k)
	}
	if k := SymbolServerKey(g, 26); !strings.HasSuffix(k, "1A") {
		t.Errorf("age 26 key %s must end in hex 1A", k)
	}
	for _, bad := range []string{"", "xyz", "6a193443-3512-464b-8b8e-d905ad930ee", "6a193443+3512-464b-8b8e-d905ad930ee6", "C374E059-5793-9B92-A6525-386A66A2D3F5"} {
		if _, err := ParseGUID(bad); err == nil {
			t.Errorf("ParseGUID(%q) accepted", bad)
		}
	}
}

func TestOpenMissingFile(t *testing.T) {
	_, err := Open("testdata/does-not-exist.pdb")
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want not-exist", err)
	}
}

// TestPEIdentityMatchesPDB checks the DLL's RSDS record against the PDB:
// same GUID, and the RSDS age equals the DBI age.
func TestPEIdentityMatchesPDB(t *testing.T) {
	_, img, f := openFixture(t)
	fh, err := os.Open(img.DLL)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	id, err := ReadPEIdentity(fh)
	if err != nil {
		t.Fatal(err)
	}
	if id.GUID != f.GUID || id.Age != f.Age || id.Path != "fixture.pdb" {
		t.Errorf("RSDS %s age %d path %q; PDB %s age %d", id.GUID, id.Age, id.Path, f.GUID, f.Age)
	}
	if _, err := ReadPEIdentity(strings.NewReader("MZ not really")); err == nil {
		t.Error("garbage accepted as PE")
	}
}

// TestUndecorateBoundsOutput: back-references let a short name expand into a
// huge one; such names come back unchanged instead of exhausting memory.
func TestUndecorateBoundsOutput(t *testing.T) {
	name := "?f@?$A@V?$B@HHHHHHHHHH@@" + strings.Repeat("V1@", 2000) + "@@YAXXZ"
	if got := Undecorate(name); got != name {
		t.Errorf("over-long result not refused: %d bytes", len(got))
	}
	short := "?f@?$A@V?$B@HH@@V1@V1@@@YAXXZ"
	if got := Undecorate(short); got != "A<B<int,int>,B<int,int>,B<int,int> >::f" {
		t.Errorf("Undecorate(%s) = %q", short, got)
	}
}

// TestLookupUsesProcedureSizes: an address in the alignment padding after a
// procedure (past its CodeSize, before the next symbol) is inside no
// function, so the lookup misses instead of naming the procedure before it.
func TestLookupUsesProcedureSizes(t *testing.T) {
	_, _, f := openFixture(t)
	table, err := f.Table()
	if err != nil {
		t.Fatal(err)
	}
	procs, err := f.Procedures()
	if err != nil {
		t.Fatal(err)
	}
	syms := table.Symbols()
	gaps := 0
	for _, p := range procs {
		if p.Size == 0 {
			continue
		}
		end := p.RVA + p.Size
		i, _ := slices.BinarySearchFunc(syms, end, func(s Symbol, r uint32) int { return cmp.Compare(s.RVA, r) })
		if i < len(syms) && syms[i].RVA == end {
			continue // the next function starts right there
		}
		gaps++
		if m, ok := table.Lookup(end); ok {
			t.Errorf("Lookup(%#x), just past the end of %s, found %s+%#x", end, p.Name, m.Name, m.Displacement)
		}
		if m, ok := table.Lookup(end - 1); !ok || m.Symbol.RVA != p.RVA {
			t.Errorf("Lookup(%#x), the last byte of %s: %+v %v", end-1, p.Name, m, ok)
		}
	}
	if gaps == 0 {
		t.Fatal("the fixture has no padding after any procedure")
	}
}

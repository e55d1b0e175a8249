package callstack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func readTestdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return DecodeText(b)
}

func frameCounts(stacks []Stack) []int {
	out := []int{}
	for _, s := range stacks {
		out = append(out, len(s.Frames))
	}
	return out
}

// scscrSamples splits SCSR_tests_callstack_input_samples.txt into its 83
// "### Name" blocks.
func scscrSamples(t testing.TB) []string {
	text := readTestdata(t, "SCSR_tests_callstack_input_samples.txt")
	parts := regexp.MustCompile(`(?m)^### \w+\n`).Split(text, -1)[1:]
	for i := range parts {
		parts[i] = strings.TrimRight(parts[i], "\n")
	}
	return parts
}

// TestSCSRSamplesFrameCounts parses every input string of SQLCallStackResolver's
// tests. The expected frame counts per stack were counted by hand from the
// file (frame elements, lines, addresses), not taken from this parser. A
// line counts only when all of its tokens are frames (issue 13).
func TestSCSRSamplesFrameCounts(t *testing.T) {
	want := [][]int{
		0: {1}, 1: {1}, 2: {3}, 3: {24}, 4: {24}, 5: {2}, 6: {4}, 7: {24}, 8: {24}, 9: {24, 24},
		10: {3, 2}, 11: {3, 2},
		12: {}, // "a = 0x0 … d = 0x0" register lines of a stack-dump header are not frames
		13: {2}, 14: {2},
		15: {1}, 16: {1}, 17: {3}, 18: {3}, 19: {2}, 20: {4}, 21: {6}, 22: {24, 24}, 23: {3, 2}, 24: {3, 2}, 25: {2},
		26: {1},
		27: {2}, // ntdll!Ordinal298+… and Module(ntdll+…)
		28: {2},
		29: {}, // base-address line, no frame
		30: {1},
		31: {2}, // an address and a module+offset frame
		32: {}, 33: {},
		34: {}, // base-address lines (module, then its load address) are not stacks

		35: {}, // 0x + 28 hex digits: not an address
		36: {}, 37: {}, 38: {}, 39: {}, 40: {}, 41: {}, 42: {},
		43: {1}, 44: {1}, 45: {1}, 46: {1}, 47: {1}, 48: {2}, 49: {24}, 50: {1}, 51: {1}, 52: {3},
		53: {}, 54: {5}, 55: {2}, 56: {}, 57: {}, 58: {},
		59: {7}, 60: {1}, 61: {1}, 62: {5}, 63: {3, 2}, 64: {2, 2}, 65: {5},
		66: {6}, // five frame elements plus VCRUNTIME140+0xB8F0
		67: {5}, 68: {2}, 69: {2}, 70: {3, 2}, 71: {3, 2}, 72: {4}, 73: {4}, 74: {2, 2}, 75: {3, 3, 2},
		76: {4, 3}, 77: {2, 2}, 78: {4}, 79: {4}, 80: {5}, 81: {7}, 82: {},
	}
	samples := scscrSamples(t)
	if len(samples) != len(want) {
		t.Fatalf("%d samples, want %d", len(samples), len(want))
	}
	for i, s := range samples {
		stacks, err := Parse(s, ParseOptions{})
		if err != nil {
			t.Errorf("sample %d: %v", i, err)
			continue
		}
		if got := frameCounts(stacks); !slices.Equal(got, want[i]) {
			t.Errorf("sample %d: frame counts %v, want %v\n%.300s", i, got, want[i], s)
		}
	}
}

func TestCallstackRVAFrames(t *testing.T) {
	s := scscrSamples(t)[65] // E2ESymSrvXMLFramesEncoded: escaped, guid broken across a line
	stacks, err := Parse(s, ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := stacks[0].Frames[2]
	want := Frame{ID: 2, Module: "sqldk.dll", PDB: "SqlDK.pdb", GUID: "6A193443-3512-464B-8B8E-D905AD930EE6", Age: 2, RVA: 0x40609, HasRVA: true}
	if f != want {
		t.Errorf("frame 2 = %+v\nwant %+v", f, want)
	}
	if k := f.Key(); !k.HasIdentity() || k.Module != "sqldk" {
		t.Errorf("key %+v", k)
	}
	// Frames of a mutated GUID keep the frame but have no identity.
	bad, _ := Parse(scscrSamples(t)[61], ParseOptions{})
	if bad[0].Frames[0].Key().HasIdentity() {
		t.Errorf("mutated GUID accepted: %+v", bad[0].Frames[0])
	}
}

func TestBaseRecoveryFromFrameWithAddressAndRVA(t *testing.T) {
	// ExtractModuleInfoXMLFramesWithCalcBaseAddress: frame 02 has rva 0x40609
	// and address 0x100440609 (base 0x100400000); frame 04 has only a name
	// and an address.
	stacks, err := Parse(scscrSamples(t)[55], ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := stacks[0].Frames[1]
	if !f.HasRVA || f.RVA != 0x2249f || f.ModuleName() != "sqldk" {
		t.Fatalf("address-only frame not recovered: %+v", f)
	}
	if f.PDB != "SqlDK.pdb" || f.Age != 2 || f.GUID != "6A193443-3512-464B-8B8E-D905AD930EE6" {
		t.Errorf("identity not borrowed: %+v", f)
	}
	// IV's unsymbolised form module@0xADDRESS.
	iv := `<frame id="00" address="0x7FFD10441234" pdb="sqllang.pdb" age="1" guid="0B8BD6E5-2D45-4F8B-8A3C-7C2C4D1E9F10" module="sqllang" rva="0x41234"/>` +
		"\nsqllang@0x7FFD10450000"
	stacks, _ = Parse(iv, ParseOptions{})
	g := stacks[0].Frames[1]
	if !g.HasRVA || g.RVA != 0x50000 || !g.Key().HasIdentity() {
		t.Errorf("module@address frame not recovered: %+v", g)
	}
}

func TestVAOnlyWithBaseAddresses(t *testing.T) {
	bases, err := ParseBaseAddresses(readTestdata(t, "SCSR_tests_base_addresses_sql2016.txt"))
	if err != nil {
		t.Fatal(err)
	}
	stacks, err := Parse(scscrSamples(t)[49], ParseOptions{Bases: bases}) // SingleLineCallStack, 24 addresses
	if err != nil {
		t.Fatal(err)
	}
	// The same stack as the first slot of the LOCK_HASH histogram, which
	// SQL Server printed as module+offset: the two must agree frame by frame.
	hist, _ := Parse(readTestdata(t, "histogram_spinlock_backoff_LOCK_HASH_callstack.xml"), ParseOptions{})
	got, want := stacks[0].Frames, hist[0].Frames
	if len(got) != 24 || len(want) != 24 {
		t.Fatalf("frames %d and %d, want 24", len(got), len(want))
	}
	for i := range got {
		if got[i].ModuleName() != want[i].ModuleName() || got[i].RVA != want[i].RVA || !got[i].HasRVA {
			t.Errorf("frame %d: %s, histogram says %s", i, got[i], want[i])
		}
	}
	if n, _, ok := bases.Find(0x10); ok {
		t.Errorf("address 0x10 attributed to %s", n)
	}
}

func TestBaseAddressFiles(t *testing.T) {
	for _, tc := range []struct {
		file    string
		modules int
		module  string
		base    uint64
	}{
		{"SCSR_tests_base_addresses_sql2016.txt", 0, "sqlmin", 0x00007FFEAC0E0000},
		{"SCSR_tests_xe_wait_base_addresses_sql2017.txt", 0, "sqldk", 0x00007FFAF2AD0000},
		{"dm_os_loaded_modules_base_addresses_LOCK_HASH.txt", 0, "kernelbase", 0x00007FFEC0700000},
	} {
		text := readTestdata(t, tc.file)
		lines := 0
		for _, l := range strings.Split(text, "\n") {
			if strings.Contains(l, "0x") {
				lines++
			}
		}
		mb, err := ParseBaseAddresses(text)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if mb.Len() != lines {
			t.Errorf("%s: %d modules, file has %d address lines", tc.file, mb.Len(), lines)
		}
		if b, ok := mb.Base(tc.module); !ok || b != tc.base {
			t.Errorf("%s: base of %s = %#x, want %#x", tc.file, tc.module, b, tc.base)
		}
	}
	for _, in := range []string{"c:\\mssql\\binn\\sqldk.dll 00000001`00400000", "sqldk.dll 0x0000000100400000", "sqldk.dll 0000000100400000"} {
		mb, err := ParseBaseAddresses(in)
		if b, ok := mb.Base("sqldk"); err != nil || !ok || b != 0x100400000 {
			t.Errorf("%q: base %#x ok=%v err=%v", in, b, ok, err)
		}
	}
	if _, err := ParseBaseAddresses("C:\\Windows\\System32\\KERNELBASE.dll\t0x0xaaa"); err == nil {
		t.Error("malformed address accepted")
	}
}

func TestModuleInfoCSV(t *testing.T) {
	ids := ParseModuleInfo(scscrSamples(t)[53])
	if len(ids) != 5 {
		t.Errorf("%d modules, want 5: %v", len(ids), ids)
	}
	if k := ids["kernelbase"]; k.PDB != "kernelbase.pdb" || k.GUID != "1FBE0B2B-89D1-37F0-1510-431FFFBA123E" || k.Age != 1 {
		t.Errorf("kernelbase = %+v", k)
	}
	if k := ids["sqlservr"]; k.PDB != "sqlservr.pdb" || k.Age != 2 {
		t.Errorf("short form sqlservr = %+v", k)
	}
	// E2ESymSrv: module+offset lines get identity from the CSV lines in the same input.
	sample := scscrSamples(t)[59]
	stacks, _ := Parse(sample, ParseOptions{Identities: ParseModuleInfo(sample)})
	for _, f := range stacks[0].Frames {
		if !f.Key().HasIdentity() {
			t.Errorf("frame %s has no identity", f)
		}
	}
}

func TestHistogramFiles(t *testing.T) {
	// Expected values counted from the XML with an independent script
	// (lines per <value>, sum of Slot count attributes).
	for _, tc := range []struct {
		file                 string
		slots, frames        int
		events               int64
		mostCommonFrameCount int
		stacksWithMostCommon int
	}{
		{"histogram_page_allocated_freed_callstack.xml", 195, 4532, 27039, 24, 143},
		{"histogram_spinlock_backoff_LOCK_HASH_callstack.xml", 4, 96, 2181498, 24, 4},
		{"histogram_wait_info_PAGELATCH_EX_callstack.xml", 104, 2496, 22614, 24, 104},
	} {
		stacks, err := Parse(readTestdata(t, tc.file), ParseOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		frames, common := 0, 0
		var events int64
		for _, s := range stacks {
			frames += len(s.Frames)
			events += s.Count
			if len(s.Frames) == tc.mostCommonFrameCount {
				common++
			}
			for _, f := range s.Frames {
				if !f.HasRVA || f.Module == "" {
					t.Errorf("%s: frame %s without module+RVA", tc.file, f)
				}
			}
		}
		if len(stacks) != tc.slots || frames != tc.frames || events != tc.events || common != tc.stacksWithMostCommon {
			t.Errorf("%s: %d stacks, %d frames, %d events, %d stacks of %d frames; want %d, %d, %d, %d",
				tc.file, len(stacks), frames, events, common, tc.mostCommonFrameCount, tc.slots, tc.frames, tc.events, tc.stacksWithMostCommon)
		}
	}
}

func TestSQLDumpShortStack(t *testing.T) {
	stacks, err := Parse(readTestdata(t, "SQLDump0011_access_violation.txt"), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := frameCounts(stacks); !slices.Equal(got, []int{22}) {
		t.Fatalf("frame counts %v, want [22] (lines under Short Stack Dump)", got)
	}
	first := stacks[0].Frames[0]
	if first.ModuleName() != "sqllang" || first.RVA != 0x667057 || first.Address != 0x00007FFBAE407057 {
		t.Errorf("first frame %+v", first)
	}
	// Every frame's address minus its offset gives one base per module.
	bases := map[string]uint64{}
	for _, f := range stacks[0].Frames {
		b := f.Address - uint64(f.RVA)
		if old, ok := bases[f.ModuleName()]; ok && old != b {
			t.Errorf("%s: inconsistent base %#x vs %#x", f.ModuleName(), b, old)
		}
		bases[f.ModuleName()] = b
	}
}

func TestResolvedOracleFilesParseAsSymbolisedFrames(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []int // counted from the file: lines per blank-line-separated block with a '!' or '+'
	}{
		{"resolved_LOCK_HASH.txt", []int{24, 24, 24, 24}},
		{"resolved_OOM.txt", []int{24}},
		{"resolved_AV.txt", []int{22}},
	} {
		stacks, err := Parse(readTestdata(t, tc.file), ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := frameCounts(stacks); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.file, got, tc.want)
		}
	}
	stacks, _ := Parse(readTestdata(t, "resolved_LOCK_HASH.txt"), ParseOptions{})
	f := stacks[1].Frames[8]
	if f.ModuleName() != "sqlmin" || f.Symbol != "SqlAutoReadOnlyXact::`scalar deleting destructor'" {
		t.Errorf("frame with a quoted special name: %+v", f)
	}
}

func TestParseRejectsBadInput(t *testing.T) {
	if _, err := Parse(string([]byte{0xff, 0xfe, 0x41}), ParseOptions{}); err == nil {
		t.Error("invalid UTF-8 accepted")
	}
	if _, err := Parse(strings.Repeat("x", maxInputBytes+1), ParseOptions{}); err == nil {
		t.Error("oversized input accepted")
	}
}

func TestSplitSymbol(t *testing.T) {
	for _, tc := range []struct{ in, class, method string }{
		{"Spinlock<143,7,1>::SpinToAcquireWithExponentialBackoff", "Spinlock<143,7,1>", "SpinToAcquireWithExponentialBackoff"},
		{"SqlAutoReadOnlyXact::`scalar deleting destructor'", "SqlAutoReadOnlyXact", "`scalar deleting destructor'"},
		{"CAutoRefc<HkStorageInterface>::~CAutoRefc<HkStorageInterface>", "CAutoRefc<HkStorageInterface>", "~CAutoRefc<HkStorageInterface>"},
		{"XeSosPkg::spinlock_backoff::Publish", "XeSosPkg::spinlock_backoff", "Publish"},
		{"Map<A::B,C::D>::Get", "Map<A::B,C::D>", "Get"},
		{"lck_lockInternal", "", "lck_lockInternal"},
		{"`anonymous namespace'::Helper", "anonymous namespace", "Helper"},
	} {
		c, m := SplitSymbol(tc.in)
		if c != tc.class || m != tc.method {
			t.Errorf("SplitSymbol(%q) = %q, %q; want %q, %q", tc.in, c, m, tc.class, tc.method)
		}
	}
}

// mapSymbolizer resolves from a fixed table and counts lookups.
type mapSymbolizer struct {
	names   map[uint32]Symbol
	lookups int
}

func (m *mapSymbolizer) Lookup(_ context.Context, k ModuleKey, rva uint32) (Symbol, error) {
	m.lookups++
	if s, ok := m.names[rva]; ok {
		return s, nil
	}
	return Symbol{}, fmt.Errorf("%s+%#x: %w", k.Module, rva, ErrNoSymbol)
}

func TestTreeMergesAndResolvesEachFrameOnce(t *testing.T) {
	stacks, err := Parse(readTestdata(t, "histogram_wait_info_PAGELATCH_EX_callstack.xml"), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	distinct := map[string]bool{}
	prefixes := map[string]bool{} // caller chains, outermost first: one tree node each
	var tree Tree
	var events int64
	for _, s := range stacks {
		tree.Add(s)
		events += s.Count
		chain := ""
		for i := len(s.Frames) - 1; i >= 0; i-- {
			distinct[s.Frames[i].String()] = true
			chain += "/" + s.Frames[i].String()
			prefixes[chain] = true
		}
	}
	if tree.Root.Count != events || tree.Stacks != len(stacks) {
		t.Errorf("root count %d stacks %d", tree.Root.Count, tree.Stacks)
	}
	nodes := 0
	tree.Walk(func(*Node, int) { nodes++ })
	if nodes != len(prefixes) || nodes >= 2496 {
		t.Errorf("%d nodes, want %d (one per distinct caller chain, fewer than the 2496 frames)", nodes, len(prefixes))
	}
	sym := &mapSymbolizer{names: map[uint32]Symbol{0x47645: {Name: "XeSosPkg::wait_info::Publish", Offset: 0x49}}}
	r := &Resolver{Symbolizer: sym, Classifier: DefaultClassifier()}
	n, err := tree.Resolve(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(distinct) || sym.lookups != len(distinct) {
		t.Errorf("%d distinct resolved with %d lookups; the stacks have %d distinct frames", n, sym.lookups, len(distinct))
	}
	var publish *Node
	tree.Walk(func(nd *Node, _ int) {
		if nd.Frame.RVA == 0x47645 {
			publish = nd
		}
		if nd.Resolved == nil {
			t.Errorf("node %s unresolved", nd.Frame)
		}
	})
	if publish == nil || publish.Resolved.String() != "sqldk!XeSosPkg::wait_info::Publish+0x49" {
		t.Fatalf("publish node %+v", publish)
	}
	if c := publish.Resolved.Class; c.ModuleBadge != "SQL OS" || c.Category != "XEventInfrastructure" || !c.Infrastructure {
		t.Errorf("publish classification %+v", c)
	}
	// An unresolved frame prints module+rva and keeps the reason.
	var other *Node
	tree.Walk(func(nd *Node, _ int) {
		if nd.Frame.RVA == 0x1960 {
			other = nd
		}
	})
	if other.Resolved.String() != "sqldk+0x1960" || !errors.Is(other.Resolved.Err, ErrNoSymbol) {
		t.Errorf("unresolved frame %q err %v", other.Resolved.String(), other.Resolved.Err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range scscrSamples(f) {
		f.Add(s)
	}
	f.Add(readTestdata(f, "histogram_spinlock_backoff_LOCK_HASH_callstack.xml"))
	f.Fuzz(func(t *testing.T, in string) {
		stacks, err := Parse(in, ParseOptions{})
		if err != nil {
			return
		}
		var tree Tree
		for _, s := range stacks {
			tree.Add(s)
		}
		if _, err := tree.Resolve(context.Background(), &Resolver{Classifier: DefaultClassifier()}); err != nil {
			t.Fatal(err)
		}
	})
}

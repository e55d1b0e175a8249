package pdb

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/pkg/pdb/pdbtest"
)

// The benchmark PDB: a generated C++ DLL with benchFiles × benchClasses ×
// benchMethods plain methods plus template instantiations, built once per
// process.
const (
	benchFiles   = 40
	benchClasses = 25
	benchMethods = 20
	benchLookups = 100_000
	benchSample  = 200 // addresses timed with llvm-symbolizer
)

var (
	benchOnce sync.Once
	benchImg  pdbtest.Image
	benchErr  error
	benchDir  string
)

// writeBenchSources writes the generator's C++ files: namespaces, classes,
// methods with varied signatures and a class template with five
// instantiations per file.
func writeBenchSources(dir string) ([]string, error) {
	var files []string
	for f := range benchFiles {
		var b strings.Builder
		fmt.Fprintf(&b, "namespace gen%d {\n", f)
		fmt.Fprintf(&b, "template <int N> struct CQScanT%d { int GetRow(int x); int Open(long long y); int Close(); long long Seek(const char *k); };\n", f)
		fmt.Fprintf(&b, "template <int N> int CQScanT%d<N>::GetRow(int x) { return x * N + %d; }\n", f, f)
		fmt.Fprintf(&b, "template <int N> int CQScanT%d<N>::Open(long long y) { return (int)(y >> N); }\n", f)
		fmt.Fprintf(&b, "template <int N> int CQScanT%d<N>::Close() { return N; }\n", f)
		fmt.Fprintf(&b, "template <int N> long long CQScanT%d<N>::Seek(const char *k) { return k[0] + N; }\n", f)
		for c := range benchClasses {
			fmt.Fprintf(&b, "class Class%d_%d {\npublic:\n", f, c)
			for m := range benchMethods {
				fmt.Fprintf(&b, "  %s Method%d(%s);\n", benchRet(m), m, benchParams(m))
			}
			b.WriteString("  int state;\n};\n")
			for m := range benchMethods {
				fmt.Fprintf(&b, "%s Class%d_%d::Method%d(%s) { return (%s)(a + state * %d + %d); }\n",
					benchRet(m), f, c, m, benchParams(m), benchRet(m), m+1, c)
			}
		}
		fmt.Fprintf(&b, "int Use%d() { int s = 0;\n", f)
		for n := 1; n <= 5; n++ {
			fmt.Fprintf(&b, "  { CQScanT%d<%d> t; s += t.GetRow(1) + t.Open(2) + t.Close() + (int)t.Seek(\"k\"); }\n", f, n)
		}
		b.WriteString("  return s; }\n}\n")
		if f == 0 {
			b.WriteString("extern \"C\" int _DllMainCRTStartup(void *h, unsigned long r, void *p) { return 1; }\n")
			b.WriteString("extern \"C\" int _fltused = 0; // floating-point marker the CRT normally supplies\n")
		}
		name := filepath.Join(dir, fmt.Sprintf("gen%02d.cpp", f))
		if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
			return nil, err
		}
		files = append(files, name)
	}
	return files, nil
}

func benchRet(m int) string { return []string{"int", "long long", "short", "unsigned int"}[m%4] }
func benchParams(m int) string {
	return []string{"int a", "int a, int b", "long long a, const char *s", "int a, double d, char c"}[m%4]
}

func benchPDB(b *testing.B) (pdbtest.Tools, pdbtest.Image) {
	tools := pdbtest.Require(b)
	benchOnce.Do(func() {
		if benchDir, benchErr = os.MkdirTemp("", "pdbbench"); benchErr != nil {
			return
		}
		var srcs []string
		if srcs, benchErr = writeBenchSources(benchDir); benchErr != nil {
			return
		}
		start := time.Now()
		benchImg, benchErr = tools.Build(context.Background(), benchDir, "bench", srcs...)
		if benchErr == nil {
			st, _ := os.Stat(benchImg.PDB)
			fmt.Fprintf(os.Stderr, "built %s (%.1f MB) in %v\n", benchImg.PDB, float64(st.Size())/1e6, time.Since(start).Round(time.Millisecond))
		}
	})
	if benchErr != nil {
		b.Fatalf("build benchmark PDB: %v", benchErr)
	}
	return tools, benchImg
}

// benchRVAs picks n addresses inside the generated procedures.
func benchRVAs(b *testing.B, path string, n int) []uint32 {
	f, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	procs, err := f.Procedures()
	if err != nil {
		b.Fatal(err)
	}
	if len(procs) < benchFiles*benchClasses*benchMethods {
		b.Fatalf("only %d procedures, want at least %d methods", len(procs), benchFiles*benchClasses*benchMethods)
	}
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]uint32, n)
	for i := range out {
		p := procs[r.IntN(len(procs))]
		out[i] = p.RVA + uint32(r.IntN(int(max(p.Size, 1))))
	}
	return out
}

// BenchmarkResolve100k opens the PDB, builds the table and resolves 100,000
// RVAs to undecorated names — one iteration is the whole job.
func BenchmarkResolve100k(b *testing.B) {
	_, img := benchPDB(b)
	rvas := benchRVAs(b, img.PDB, benchLookups)
	b.ResetTimer()
	cpu0 := processCPU()
	for b.Loop() {
		f, err := Open(img.PDB)
		if err != nil {
			b.Fatal(err)
		}
		t, err := f.Table()
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range rvas {
			if _, ok := t.Lookup(r); !ok {
				b.Fatalf("no symbol for %#x", r)
			}
		}
		f.Close()
	}
	b.ReportMetric(float64(benchLookups)*float64(b.N)/b.Elapsed().Seconds(), "addrs/s")
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
}

// BenchmarkLLVMSymbolizer200 times llvm-symbolizer on 200 of the same kind of
// addresses (one process, all addresses on stdin) and checks that its names
// agree with ours.
func BenchmarkLLVMSymbolizer200(b *testing.B) {
	tools, img := benchPDB(b)
	rvas := benchRVAs(b, img.PDB, benchSample)
	var in strings.Builder
	for _, r := range rvas {
		fmt.Fprintf(&in, "0x%x\n", r)
	}
	f, err := Open(img.PDB)
	if err != nil {
		b.Fatal(err)
	}
	t, err := f.Table()
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var childCPU time.Duration
	for b.Loop() {
		cmd := exec.Command(tools.Symbolizer, "--obj="+img.DLL, "--relative-address", "--no-inlines")
		cmd.Stdin = strings.NewReader(in.String())
		outb, err := cmd.Output()
		if err != nil {
			b.Fatalf("llvm-symbolizer: %v", err)
		}
		childCPU += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		out := string(outb)
		b.StopTimer()
		names := symbolizerFunctions(out)
		if len(names) != len(rvas) {
			b.Fatalf("%d answers for %d addresses", len(names), len(rvas))
		}
		for i, r := range rvas {
			m, _ := t.Lookup(r)
			if normalizeName(m.Name) != normalizeName(stripSignature(names[i])) {
				b.Fatalf("%#x: ours %q, llvm-symbolizer %q", r, m.Name, names[i])
			}
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(benchSample)*float64(b.N)/b.Elapsed().Seconds(), "addrs/s")
	b.ReportMetric(float64(childCPU)/float64(b.N)/1e6, "cpu-ms/op")
}

package pdbbuild

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The benchmark PDB: a generated C++ DLL with benchFiles × benchClasses ×
// benchMethods plain methods plus template instantiations (about 9 MB of
// PDB). pkg/pdb's library benchmark and the CLI benchmark of
// "queryreplay symbols resolve" use the same one, so their figures compare.
const (
	benchFiles   = 40
	benchClasses = 25
	benchMethods = 20
	// BenchMethods is how many plain methods the benchmark PDB has at least.
	BenchMethods = benchFiles * benchClasses * benchMethods
)

// BuildBench writes the generator's sources into dir and builds
// dir/bench.dll and dir/bench.pdb, reporting the size and time on stderr.
func (t Tools) BuildBench(ctx context.Context, dir string) (Image, error) {
	srcs, err := writeBenchSources(dir)
	if err != nil {
		return Image{}, err
	}
	start := time.Now()
	img, err := t.Build(ctx, dir, "bench", srcs...)
	if err == nil {
		st, _ := os.Stat(img.PDB)
		fmt.Fprintf(os.Stderr, "built %s (%.1f MB) in %v\n", img.PDB, float64(st.Size())/1e6, time.Since(start).Round(time.Millisecond))
	}
	return img, err
}

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

package pdb

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/pkg/pdb/pdbtest"
)

const (
	benchLookups = 100_000
	benchSample  = 200 // addresses timed with llvm-symbolizer
)

var (
	benchOnce sync.Once
	benchImg  pdbtest.Image
	benchErr  error
	benchDir  string
)

func benchPDB(b *testing.B) (pdbtest.Tools, pdbtest.Image) {
	tools := pdbtest.Require(b)
	benchOnce.Do(func() {
		if benchDir, benchErr = os.MkdirTemp("", "pdbbench"); benchErr != nil {
			return
		}
		benchImg, benchErr = tools.BuildBench(context.Background(), benchDir)
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
	if len(procs) < pdbtest.BenchMethods {
		b.Fatalf("only %d procedures, want at least %d methods", len(procs), pdbtest.BenchMethods)
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

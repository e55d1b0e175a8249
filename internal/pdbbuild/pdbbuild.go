// Package pdbbuild builds PDB fixtures with the LLVM toolchain (clang
// --target=x86_64-pc-windows-msvc and lld-link /debug) and finds the LLVM
// oracles (llvm-pdbutil, llvm-symbolizer). The demo's symbol server
// (internal/demosymbols) and the tests (through pkg/pdb/pdbtest) use it. It
// runs local programs only, never downloads, and must not be imported by
// the datasource, the exporter or the tracer; it does not import testing,
// so the CLI can link it.
package pdbbuild

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// AptPackages are the Debian packages that provide the tools.
const AptPackages = "clang lld llvm"

// Tools holds absolute paths of the LLVM programs.
type Tools struct {
	Clang, LLDLink, PDBUtil, Symbolizer, Undname, NM string
}

// FindTools looks the programs up on PATH, accepting versioned names such as
// llvm-pdbutil-14 and the /usr/lib/llvm-N/bin directories Debian uses.
func FindTools() (Tools, error) {
	var t Tools
	var missing []string
	for _, want := range []struct {
		name string
		dst  *string
	}{{"clang", &t.Clang}, {"lld-link", &t.LLDLink}, {"llvm-pdbutil", &t.PDBUtil}, {"llvm-symbolizer", &t.Symbolizer}, {"llvm-undname", &t.Undname}, {"llvm-nm", &t.NM}} {
		p := findTool(want.name)
		if p == "" {
			missing = append(missing, want.name)
			continue
		}
		*want.dst = p
	}
	if len(missing) > 0 {
		return t, fmt.Errorf("missing %s (install the Debian packages: apt-get install -y %s)", strings.Join(missing, ", "), AptPackages)
	}
	return t, nil
}

func findTool(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	// Highest version first.
	for v := 30; v >= 11; v-- {
		if p, err := exec.LookPath(fmt.Sprintf("%s-%d", name, v)); err == nil {
			return p
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/llvm-*/bin")
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}

// Image is a linked DLL and its PDB.
type Image struct {
	DLL, PDB string
}

// Build compiles the C or C++ sources (by extension) with clang for
// x86_64-pc-windows-msvc at -O0 with CodeView debug info and links them into
// outDir/name.dll + outDir/name.pdb with lld-link /dll /debug. The sources
// must not need a C runtime (no entry point, /nodefaultlib). Objects are
// compiled in parallel, one clang per CPU.
func (t Tools) Build(ctx context.Context, outDir, name string, sources ...string) (Image, error) {
	if len(sources) == 0 {
		return Image{}, errors.New("pdbtest: no sources")
	}
	objs := make([]string, len(sources))
	errs := make(chan error, len(sources))
	slots := make(chan struct{}, runtime.NumCPU())
	for i, src := range sources {
		objs[i] = filepath.Join(outDir, fmt.Sprintf("%s.%d.obj", name, i))
		go func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			args := []string{"--target=x86_64-pc-windows-msvc", "-O0", "-g", "-gcodeview", "-fno-rtti", "-fno-exceptions", "-c", src, "-o", objs[i]}
			if strings.HasSuffix(src, ".cpp") {
				args = append([]string{"-std=c++17"}, args...)
			}
			errs <- run(ctx, t.Clang, args...)
		}()
	}
	var firstErr error
	for range sources {
		if err := <-errs; err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return Image{}, firstErr
	}
	img := Image{DLL: filepath.Join(outDir, name+".dll"), PDB: filepath.Join(outDir, name+".pdb")}
	args := append([]string{"/dll", "/noentry", "/nodefaultlib", "/debug", "/pdb:" + img.PDB, "/pdbaltpath:%_PDB%", "/Brepro", "/out:" + img.DLL}, objs...)
	if err := run(ctx, t.LLDLink, args...); err != nil {
		return Image{}, err
	}
	return img, nil
}

// Output runs a tool and returns its standard output.
func Output(ctx context.Context, name string, args ...string) (string, error) {
	return output(ctx, nil, name, args...)
}

// OutputWithInput runs a tool with stdin and returns its standard output.
func OutputWithInput(ctx context.Context, stdin string, name string, args ...string) (string, error) {
	return output(ctx, strings.NewReader(stdin), name, args...)
}

func output(ctx context.Context, stdin *strings.Reader, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w\n%s", filepath.Base(name), strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}

func run(ctx context.Context, name string, args ...string) error {
	_, err := output(ctx, nil, name, args...)
	return err
}

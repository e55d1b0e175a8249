// Package demosymbols builds PDBs for the modules the stand-in's call stacks
// name (standin.StackModules) and serves them from a loopback symbol
// server, so that traces of the stand-in resolve to sqlmin!BPool::ReadPage
// through the real path: pkg/symstore downloading over HTTP, pkg/pdb
// reading the files, pkg/callstack classifying the frames.
//
// Each module's PDB comes from a C++ file of naked functions, 256 bytes
// each, in the stand-in's layout order: clang and lld-link place function i
// at RVA 0x1000 + i·0x100, the RVAs the stand-in emits (Build checks every
// one through pkg/pdb and fails when a toolchain lays them out otherwise).
// lld's GUIDs are content hashes, so the stand-in is told them
// (Fixture.Builds → standin.Options.ModuleBuilds).
//
// It is the demo's and the tests' (through internal/symfixture): it needs
// the LLVM toolchain (internal/pdbbuild), serves only on loopback, and
// must not be imported by the datasource, the exporter or the tracer. It
// does not import testing, so the CLI can link it for the demo.
package demosymbols

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/queryreplay/queryreplay/internal/pdbbuild"
	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/pkg/pdb"
)

// Fixture is a built symbol store.
type Fixture struct {
	// Dir is a symbol store: <pdb>/<GUID><age>/<pdb>.
	Dir string
	// Builds are the PDB identities, for standin.Options.ModuleBuilds.
	Builds map[string]standin.ModuleBuild
}

// source writes the C++ of one module: each function naked, 256 bytes of
// int3, in layout order. Qualified names become nested namespaces, which
// the name-only demangling prints as Class::Method.
func source(m standin.StackModule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s: the stand-in's %d functions, %d bytes each from RVA 0x%X\n", m.File, len(m.Functions), standin.FunctionSize, standin.FirstFunctionRVA)
	for _, f := range m.Functions {
		parts := strings.Split(f, "::")
		for _, ns := range parts[:len(parts)-1] {
			fmt.Fprintf(&b, "namespace %s { ", ns)
		}
		fmt.Fprintf(&b, `__attribute__((naked)) void %s() { __asm__(".skip %d, 0xcc"); }`, parts[len(parts)-1], standin.FunctionSize)
		b.WriteString(strings.Repeat(" }", len(parts)-1))
		b.WriteByte('\n')
	}
	return b.String()
}

// contentKey names a build by what goes into it.
func contentKey(mods []standin.StackModule) string {
	h := sha256.New()
	for _, m := range mods {
		h.Write([]byte(source(m)))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Build builds the PDBs into a store under dir (reusing one already built
// there from the same sources) and checks their layout.
func Build(ctx context.Context, tools pdbbuild.Tools, dir string) (*Fixture, error) {
	mods := standin.StackModules()
	store := filepath.Join(dir, "store-"+contentKey(mods))
	if f, err := open(store, mods); err == nil {
		return f, nil
	}
	work, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	tmpStore := filepath.Join(work, "store")
	for _, m := range mods {
		src := filepath.Join(work, m.Name+".cpp")
		if err := os.WriteFile(src, []byte(source(m)), 0o644); err != nil {
			return nil, err
		}
		img, err := tools.Build(ctx, work, m.Name, src)
		if err != nil {
			return nil, fmt.Errorf("build %s: %w", m.PDB, err)
		}
		f, err := pdb.Open(img.PDB)
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", m.PDB, err)
		}
		key := f.SymbolServerKey()
		f.Close()
		dst := filepath.Join(tmpStore, m.PDB, key, m.PDB)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, err
		}
		if err := os.Rename(img.PDB, dst); err != nil {
			return nil, err
		}
	}
	if _, err := open(tmpStore, mods); err != nil {
		return nil, err
	}
	// Another process may have built the same store meanwhile: either
	// copy is right.
	if err := os.Rename(tmpStore, store); err != nil && !errors.Is(err, os.ErrExist) && !isNotEmpty(err) {
		return nil, err
	}
	return open(store, mods)
}

func isNotEmpty(err error) bool {
	return err != nil && strings.Contains(err.Error(), "directory not empty")
}

// open reads a built store and checks that every function sits where the
// stand-in's frames point.
func open(store string, mods []standin.StackModule) (*Fixture, error) {
	fx := &Fixture{Dir: store, Builds: map[string]standin.ModuleBuild{}}
	for _, m := range mods {
		keys, err := filepath.Glob(filepath.Join(store, m.PDB, "*", m.PDB))
		if err != nil || len(keys) != 1 {
			return nil, fmt.Errorf("%s: %d copies in %s", m.PDB, len(keys), store)
		}
		f, err := pdb.Open(keys[0])
		if err != nil {
			return nil, err
		}
		t, err := f.Table()
		if err != nil {
			f.Close()
			return nil, err
		}
		fx.Builds[m.Name] = standin.ModuleBuild{GUID: f.GUID.String(), Age: f.Age}
		f.Close()
		for i, fn := range m.Functions {
			rva := uint32(standin.FirstFunctionRVA + i*standin.FunctionSize)
			for _, at := range []uint32{rva, rva + standin.FunctionSize - 1} {
				got, ok := t.Lookup(at)
				if !ok || got.Name != fn {
					return nil, fmt.Errorf("%s: RVA 0x%X is %q, want %s (the toolchain laid the functions out differently)", m.PDB, at, got.Name, fn)
				}
			}
		}
	}
	return fx, nil
}

// shared is one fixture per process, under the system temp directory
// (reused across runs: its name is a hash of the sources).
var shared = sync.OnceValues(func() (*Fixture, error) {
	tools, err := pdbbuild.FindTools()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(os.TempDir(), "queryreplay-symfixture")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return Build(ctx, tools, dir)
})

// Shared returns the process's fixture, building it on first use.
func Shared() (*Fixture, error) { return shared() }

// Server is a loopback symbol server over a store.
type Server struct {
	URL string
	srv *http.Server
	ln  net.Listener
	mu  sync.Mutex
	// Requests counts the GETs served, by path.
	requests map[string]int
}

// Serve starts a symbol server for the store on 127.0.0.1 (the
// msdl-compatible layout is the store's directory layout).
func (f *Fixture) Serve() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String(), ln: ln, requests: map[string]int{}}
	files := http.FileServer(http.Dir(f.Dir))
	s.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests[r.URL.Path]++
		s.mu.Unlock()
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "read-only symbol server", http.StatusMethodNotAllowed)
			return
		}
		files.ServeHTTP(w, r)
	})}
	go s.srv.Serve(ln)
	return s, nil
}

// Requests returns how many requests each path got.
func (s *Server) Requests() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.requests))
	for k, v := range s.requests {
		out[k] = v
	}
	return out
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

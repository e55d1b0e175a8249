package main

import (
	"os"
	"path/filepath"

	"github.com/queryreplay/queryreplay/internal/demosymbols"
	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/pkg/callstack"
	"github.com/queryreplay/queryreplay/pkg/tracer"
)

// demoSymbols are the stand-in's PDBs on a loopback symbol server, so the
// demo's call stacks resolve to module!Class::Method through the real
// download path. They are built with clang and lld (internal/symfixture);
// without them the stacks stay module+RVA and the demo says why.
type demoSymbols struct {
	builds map[string]standin.ModuleBuild
	server *demosymbols.Server
	cache  string
}

func startDemoSymbols(d *demoRun) *demoSymbols {
	fx, err := demosymbols.Shared()
	if err != nil {
		d.step("call stacks stay module+RVA: the stand-in's PDBs could not be built (%v)", err)
		return nil
	}
	srv, err := fx.Serve()
	if err != nil {
		d.step("call stacks stay module+RVA: no symbol server (%v)", err)
		return nil
	}
	cache, err := os.MkdirTemp("", "queryreplay-demo-symbols-")
	if err != nil {
		srv.Close()
		d.step("call stacks stay module+RVA: %v", err)
		return nil
	}
	d.step("symbol server for the stand-in's modules on %s", srv.URL)
	return &demoSymbols{builds: fx.Builds, server: srv, cache: filepath.Join(cache, "symbols")}
}

// options points a trace at the symbol server; the stand-in's default
// persona (SQL Server 2017) prints raw addresses, so the modules' PDB
// identities are given as a user would give them (--modinfo).
func (s *demoSymbols) options(o *tracer.Options) {
	if s == nil {
		return
	}
	o.SymbolServers, o.SymbolCacheDir = []string{s.server.URL}, s.cache
	o.ModuleIdentities = map[string]callstack.ModuleKey{}
	for m, b := range s.builds {
		o.ModuleIdentities[m] = callstack.ModuleKey{Module: m, PDB: m + ".pdb", GUID: b.GUID, Age: b.Age}
	}
}

func (s *demoSymbols) moduleBuilds() map[string]standin.ModuleBuild {
	if s == nil {
		return nil
	}
	return s.builds
}

func (s *demoSymbols) close() {
	if s != nil {
		s.server.Close()
		os.RemoveAll(filepath.Dir(s.cache))
	}
}

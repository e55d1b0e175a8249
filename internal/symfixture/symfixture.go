// Package symfixture is the tests' access to the demo's symbol store
// (internal/demosymbols): the PDBs of the stand-in's call-stack modules,
// served from a loopback symbol server. Require and ServeTest end the test
// when the LLVM toolchain is missing. It imports testing and is for tests
// only; the CLI uses internal/demosymbols.
package symfixture

import (
	"testing"

	"github.com/queryreplay/queryreplay/internal/demosymbols"
	"github.com/queryreplay/queryreplay/pkg/pdb/pdbtest"
)

// Fixture and Server are internal/demosymbols' store and symbol server.
type (
	Fixture = demosymbols.Fixture
	Server  = demosymbols.Server
)

// Shared returns the process's fixture, building it on first use.
func Shared() (*Fixture, error) { return demosymbols.Shared() }

// Require returns the shared fixture or ends the test: a failure naming
// the missing tools, or a skip when QUERYREPLAY_ALLOW_SKIP=1.
func Require(tb testing.TB) *Fixture {
	tb.Helper()
	pdbtest.Require(tb)
	f, err := Shared()
	if err != nil {
		tb.Fatalf("build the symbol fixture: %v", err)
	}
	return f
}

// ServeTest serves the shared fixture for one test and returns it with
// the server's URL.
func ServeTest(tb testing.TB) (*Fixture, *Server) {
	tb.Helper()
	f := Require(tb)
	s, err := f.Serve()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return f, s
}

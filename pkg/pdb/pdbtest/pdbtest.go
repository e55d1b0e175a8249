// Package pdbtest is the tests' access to the PDB fixtures of
// internal/pdbbuild: the same tools and builders, and Require, which ends a
// test when the LLVM toolchain is missing — failing with the apt packages
// to install (clang lld llvm), unless QUERYREPLAY_ALLOW_SKIP=1 asks for a
// skip. It imports testing and is for tests only.
package pdbtest

import (
	"os"
	"testing"

	"github.com/queryreplay/queryreplay/internal/pdbbuild"
)

// The fixture builders, as internal/pdbbuild has them.
type (
	Tools = pdbbuild.Tools
	Image = pdbbuild.Image
)

// AptPackages are the Debian packages that provide the tools; BenchMethods
// is how many plain methods the benchmark PDB has at least.
const (
	AptPackages  = pdbbuild.AptPackages
	BenchMethods = pdbbuild.BenchMethods
)

var (
	FindTools       = pdbbuild.FindTools
	Output          = pdbbuild.Output
	OutputWithInput = pdbbuild.OutputWithInput
)

// Require returns the tools or ends the test: a clear failure naming the
// packages, or a skip when QUERYREPLAY_ALLOW_SKIP=1.
func Require(tb testing.TB) Tools {
	tb.Helper()
	t, err := FindTools()
	if err != nil {
		missingTools(tb, err)
	}
	return t
}

// missingTools ends the test because the tools are missing.
func missingTools(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv("QUERYREPLAY_ALLOW_SKIP") == "1" {
		tb.Skipf("PDB fixtures unavailable: %v", err)
		return
	}
	tb.Fatalf("PDB fixtures need the LLVM toolchain: %v; set QUERYREPLAY_ALLOW_SKIP=1 to skip instead", err)
}

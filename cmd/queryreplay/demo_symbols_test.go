package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/internal/symfixture"
	"github.com/queryreplay/queryreplay/pkg/bundle"
)

// The demo's call_stacks scenario resolves its stacks through the
// stand-in's PDBs on a loopback symbol server: every frame has a symbol.
func TestDemoCallStacksResolve(t *testing.T) {
	symfixture.Require(t)
	out := t.TempDir()
	code, _, stderr := runCLI(t, "demo", "--once", "--scenarios", "call_stacks", "--out", out, "--assets", "/nonexistent")
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "symbol server for the stand-in's modules") {
		t.Errorf("no symbol server started:\n%s", stderr)
	}
	b, err := bundle.Load(filepath.Join(out, "call_stacks.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	res := b.Result.Resolution
	if res.Stacks == 0 || res.FramesResolved != res.StackFrames || len(res.SymbolErrors) != 0 {
		t.Fatalf("resolution %d stacks, %d/%d frames, errors %v", res.Stacks, res.FramesResolved, res.StackFrames, res.SymbolErrors)
	}
	found := false
	for _, s := range b.Trace.Stacks {
		for _, f := range s.Frames {
			found = found || f.Module == "sqlmin" && f.Symbol == "BPool::ReadPage"
		}
	}
	if !found {
		t.Error("no page read stack names sqlmin!BPool::ReadPage")
	}
}

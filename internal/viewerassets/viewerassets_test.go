package viewerassets

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
)

// requireEnv is set by the Makefile (make test-go, after make build-cli
// copied the page in): then the binary's build must have embedded the page
// npm built, byte for byte.
const requireEnv = "QUERYREPLAY_REQUIRE_EMBEDDED_VIEWER"

func TestPlaceholderOnlyIsNotAPage(t *testing.T) {
	root := fstest.MapFS{"page/README.md": {Data: []byte("placeholder")}}
	if got, ok := pageFS(root); ok || got != nil {
		t.Fatalf("a page/ with only the placeholder counts as embedded: %v %v", got, ok)
	}
}

func TestBuiltPageIsServedFromItsRoot(t *testing.T) {
	root := fstest.MapFS{
		"page/README.md":             {Data: []byte("placeholder")},
		"page/harness.js":            {Data: []byte("console.log(1)")},
		"page/build/img/icons/x.svg": {Data: []byte("<svg/>")},
	}
	got, ok := pageFS(root)
	if !ok {
		t.Fatal("a page/ with harness.js does not count as embedded")
	}
	b, err := fs.ReadFile(got, "harness.js")
	if err != nil || string(b) != "console.log(1)" {
		t.Fatalf("harness.js = %q, %v", b, err)
	}
	if _, err := fs.Stat(got, "build/img/icons/x.svg"); err != nil {
		t.Fatalf("nested asset not reachable from the page root: %v", err)
	}
}

// TestRealBuildEmbedsTheBuiltPage: the real build (make build-cli) embeds
// the page npm run build:harness wrote, not the placeholder.
func TestRealBuildEmbedsTheBuiltPage(t *testing.T) {
	page, ok := FS()
	if os.Getenv(requireEnv) == "" {
		if !ok {
			t.Skipf("no page embedded (a clean clone before make build-cli); %s=1 makes this a failure", requireEnv)
		}
	} else if !ok {
		t.Fatal("the build embedded no viewer page: make build-cli must copy tests/browser/dist into internal/viewerassets/page first")
	}
	for _, name := range []string{Entry, "harness.css"} {
		got, err := fs.ReadFile(page, name)
		if err != nil || len(got) == 0 {
			t.Fatalf("embedded %s: %d bytes, %v", name, len(got), err)
		}
		if os.Getenv(requireEnv) == "" {
			continue
		}
		want, err := os.ReadFile(filepath.Join("..", "..", "tests", "browser", "dist", name))
		if err != nil {
			t.Fatalf("the built page: %v", err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("embedded %s (%d bytes) is not the built one (%d bytes): rebuild with make build-cli", name, len(got), len(want))
		}
	}
}

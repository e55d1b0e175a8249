package main

import (
	"context"
	"errors"
	"io/fs"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin"
)

// withEmbeddedViewer makes the binary's embedded page page (nil: none)
// for one test.
func withEmbeddedViewer(t *testing.T, page fs.FS) {
	t.Helper()
	old := embeddedViewer
	embeddedViewer = func() (fs.FS, bool) { return page, page != nil }
	t.Cleanup(func() { embeddedViewer = old })
	t.Setenv(viewerAssetsEnv, "")
}

// A binary on its own serves the replay: with no --assets, no
// $QUERYREPLAY_VIEWER_ASSETS and nothing on disk, view serves the page
// embedded in the binary.
func TestViewServesTheEmbeddedPage(t *testing.T) {
	const js = "window.__embeddedPage = true;"
	withEmbeddedViewer(t, fstest.MapFS{"harness.js": {Data: []byte(js)}, "harness.css": {Data: []byte("body{}")}})
	out := t.TempDir()
	if code, _, stderr := runCLI(t, "demo", "--once", "--scenarios", "hash_join", "--out", out); code != 0 {
		t.Fatalf("demo --once: exit %d: %s", code, stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done, stdout, stderr := runCLIContext(ctx, "view", filepath.Join(out, "hash_join.json.gz"))
	pageURL := waitForViewURL(t, done, stdout, stderr)
	u, _ := url.Parse(pageURL)
	if got := httpGet(t, u.Scheme+"://"+u.Host+"/assets/harness.js"); got != js {
		t.Fatalf("/assets/harness.js is not the embedded page: %.200q", got)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("view did not stop")
	}
}

// --assets (and the environment variable) override the embedded page, for
// working on the page without rebuilding the binary.
func TestAssetsFlagOverridesTheEmbeddedPage(t *testing.T) {
	withEmbeddedViewer(t, fstest.MapFS{"harness.js": {Data: []byte("embedded")}})
	dir := fakeViewerAssets(t)
	page, err := findViewerAssets(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := fs.ReadFile(page, "harness.js")
	if err != nil || string(b) != "window.__harnessLoaded = true;" {
		t.Fatalf("--assets did not win over the embedded page: %q %v", b, err)
	}
	t.Setenv(viewerAssetsEnv, dir)
	if page, err = findViewerAssets(""); err != nil {
		t.Fatal(err)
	}
	if b, _ = fs.ReadFile(page, "harness.js"); string(b) == "embedded" {
		t.Fatalf("$%s did not win over the embedded page", viewerAssetsEnv)
	}
}

// A binary built without the page (go build in a clean clone) says so and
// how to build it.
func TestNoPageAnywhereIsNamed(t *testing.T) {
	withEmbeddedViewer(t, nil)
	_, err := findViewerAssets(filepath.Join(t.TempDir(), "none"))
	if !errors.Is(err, errNoViewerAssets) || !strings.Contains(err.Error(), "make build-cli") {
		t.Fatalf("error = %v", err)
	}
}

// The default demo traces a scenario with call stacks, so the viewer's
// call stack view has data (issue 28).
func TestDefaultDemoTracesCallStacks(t *testing.T) {
	all := standin.Scenarios()
	for _, name := range defaultDemoScenarios {
		i := slices.IndexFunc(all, func(s standin.Scenario) bool { return s.Name == name })
		if i < 0 {
			t.Fatalf("default demo scenario %q is not a stand-in scenario", name)
		}
		if all[i].CallStacks {
			return
		}
	}
	t.Fatalf("no default demo scenario (%v) captures call stacks", defaultDemoScenarios)
}

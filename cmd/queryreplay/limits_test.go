package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/internal/testbomb"
)

// TestBundleCommandsRefuseGzipBombs: findings, compare and view given a
// megabyte of gzip that expands to a gigabyte fail naming the limit and
// --max-bundle-mb, at a memory cost bounded by the limit.
func TestBundleCommandsRefuseGzipBombs(t *testing.T) {
	const limitMB, expand = 8, 1 << 30
	dir := t.TempDir()
	bombs := map[string][]byte{
		"whitespace": testbomb.Gzip("{", ' ', expand),
		"string":     testbomb.Gzip(testbomb.BundlePrefix, 'A', expand),
	}
	for name, bomb := range bombs {
		path := filepath.Join(dir, name+".json.gz")
		if err := os.WriteFile(path, bomb, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"findings", "--max-bundle-mb", "8", path},
			{"compare", "--max-bundle-mb", "8", path, path},
			{"view", "--max-bundle-mb", "8", path},
		} {
			var code int
			var errOut string
			alloc := testbomb.Alloc(func() { code, _, errOut = runCLI(t, args...) })
			if code == 0 || !strings.Contains(errOut, "exceeds the limit of 8 MB") || !strings.Contains(errOut, "--max-bundle-mb") {
				t.Fatalf("%s bomb (%s): %v: exit %d, stderr %q", name, testbomb.Describe(bomb, expand), args, code, errOut)
			}
			if alloc > 5*limitMB<<20 {
				t.Errorf("%s bomb: %v allocated %d bytes", name, args, alloc)
			}
		}
	}
}

// TestPlanCommandsRefuseLargePlans: plan inspect and timeline --plan
// refuse a plan file over --max-plan-mb by name.
func TestPlanCommandsRefuseLargePlans(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.sqlplan")
	if err := os.WriteFile(path, []byte("<ShowPlanXML>"+strings.Repeat(" ", 1<<20)), 0o600); err != nil {
		t.Fatal(err)
	}
	events := filepath.Join(t.TempDir(), "events.xml")
	if err := os.WriteFile(events, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"plan", "inspect", "--max-plan-mb", "1", path},
		{"timeline", "--max-plan-mb", "1", "--plan", path, "--events", events},
	} {
		code, _, errOut := runCLI(t, args...)
		if code != 1 || !strings.Contains(errOut, "big.sqlplan exceeds the limit of 1 MB; raise it with --max-plan-mb") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

func TestLimitFlagsOutOfRangeAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"findings", "--max-bundle-mb", "0", "x.json"},
		{"compare", "--max-bundle-mb", "5000", "a.json", "b.json"},
		{"plan", "inspect", "--max-plan-mb", "0", "x.sqlplan"},
	} {
		code, _, errOut := runCLI(t, args...)
		if code != 2 || !strings.Contains(errOut, "is outside 1-4096") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

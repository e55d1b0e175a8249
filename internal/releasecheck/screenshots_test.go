package releasecheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeImage matches the README's absolute links to PNGs in this repository.
var readmeImage = regexp.MustCompile(`https://raw\.githubusercontent\.com/queryreplay/queryreplay/main/([^)\s]+\.png)`)

// recipe returns the command lines of a Makefile target (the tab-indented
// lines after "target:").
func recipe(makefile, target string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(makefile, "\n") {
		switch {
		case strings.HasPrefix(line, target+":"):
			in = true
		case in && strings.HasPrefix(line, "\t"):
			out = append(out, strings.TrimSpace(line))
		case in:
			return out
		}
	}
	return out
}

// browserShots turns the screenshot file names the browser tests write
// (literal or templated, `replay-${theme}-${size}.png`) into patterns.
func browserShots(t *testing.T) []*regexp.Regexp {
	t.Helper()
	files, err := filepath.Glob(repoPath(t, "tests/browser/*.mjs"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no browser tests under tests/browser: %v", err)
	}
	name := regexp.MustCompile("[`'\"]([A-Za-z0-9_${}.-]+\\.png)[`'\"]")
	var out []*regexp.Regexp
	for _, f := range files {
		for _, m := range name.FindAllStringSubmatch(string(readFile(t, f)), -1) {
			parts := regexp.MustCompile(`\$\{[^}]*\}`).Split(m[1], -1)
			for i := range parts {
				parts[i] = regexp.QuoteMeta(parts[i])
			}
			out = append(out, regexp.MustCompile("^"+strings.Join(parts, "[a-z0-9]+")+"$"))
		}
	}
	return out
}

// Every PNG the README and src/plugin.json show is copied by `make
// screenshots` from a screenshot the browser test writes, so one command
// refreshes them all and none can go stale.
func TestScreenshotsTargetRefreshesEveryImage(t *testing.T) {
	copies := map[string]string{} // destination → source
	for _, cmd := range recipe(string(readFile(t, repoPath(t, "Makefile"))), "screenshots") {
		f := strings.Fields(cmd)
		if len(f) == 3 && f[0] == "cp" {
			copies[f[2]] = f[1]
		}
	}
	if len(copies) == 0 {
		t.Fatal("the Makefile's screenshots target copies nothing")
	}
	shown := map[string]string{} // image → where it is shown
	for _, m := range readmeImage.FindAllStringSubmatch(string(readFile(t, repoPath(t, "README.md"))), -1) {
		shown[m[1]] = "README.md"
	}
	for _, s := range pluginByType(t, "app").Info.Screenshots {
		shown["src/"+s.Path] = "src/plugin.json"
	}
	if len(shown) == 0 {
		t.Fatal("neither the README nor src/plugin.json shows a PNG")
	}
	shots := browserShots(t)
	for img, where := range shown {
		if _, err := os.Stat(repoPath(t, img)); err != nil {
			t.Errorf("%s shows %s, which does not exist", where, img)
		}
		src, ok := copies[img]
		if !ok {
			t.Errorf("%s shows %s, but `make screenshots` does not refresh it", where, img)
			continue
		}
		written := false
		for _, re := range shots {
			written = written || re.MatchString(filepath.Base(src))
		}
		if !strings.HasPrefix(src, "tests/output/") || !written {
			t.Errorf("make screenshots copies %s to %s, but no browser test in tests/browser writes it to tests/output/", src, img)
		}
	}
}

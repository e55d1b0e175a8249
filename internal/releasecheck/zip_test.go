package releasecheck

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The rules below follow grafana/plugin-validator's analyzers (archive,
// archivename, metadatapaths, modulejs, jssourcemap, includesnested,
// backendbinary, binarypermissions, gomanifest, readme, brokenlinks,
// jargon, license, changelog, screenshots, logos, typesuffix), read in
// its source; the validator itself cannot be installed here
// (docs/design/grafana.md §1).

// mdLink is the validator's README link pattern (brokenlinks).
var mdLink = regexp.MustCompile(`\[.+?\]\((.+?)\)`)

// readmeProblems returns what the validator reports about a README.
func readmeProblems(readme []byte) []string {
	var out []string
	if len(bytes.TrimSpace(readme)) == 0 {
		return []string{"README.md is empty"}
	}
	if regexp.MustCompile(`<!--(.*?)-->`).Match(readme) {
		out = append(out, "README.md contains an HTML comment")
	}
	for _, word := range []string{"yarn", "nodejs"} {
		if bytes.Contains(readme, []byte(word)) {
			out = append(out, "README.md contains developer jargon: "+word)
		}
	}
	for _, m := range mdLink.FindAllSubmatch(readme, -1) {
		link := string(m[1])
		if f := strings.Fields(link); len(f) > 0 {
			link = f[0]
		}
		if strings.HasPrefix(link, "#") || strings.HasPrefix(link, "mailto:") ||
			strings.HasPrefix(link, "https://") || strings.HasPrefix(link, "http://") {
			continue
		}
		out = append(out, "README.md: relative link "+link+" (the catalog needs absolute https:// links)")
	}
	return out
}

// zipEntry is a file of the archive, by its path below the root directory.
type zipEntry struct {
	mode fs.FileMode
	data []byte
}

func readZip(zipPath string) (map[string]zipEntry, []string, error) {
	r, err := zip.OpenReader(zipPath)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	files := map[string]zipEntry{}
	roots := map[string]bool{}
	for _, f := range r.File {
		root, _, _ := strings.Cut(f.Name, "/")
		roots[root] = true
		if f.FileInfo().IsDir() {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, nil, err
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, nil, err
		}
		files[f.Name] = zipEntry{mode: f.Mode(), data: b}
	}
	var rootList []string
	for r := range roots {
		rootList = append(rootList, r)
	}
	slices.Sort(rootList)
	return files, rootList, nil
}

// zipProblems returns every problem of a plugin zip.
func zipProblems(zipPath string) []string {
	files, roots, err := readZip(zipPath)
	if err != nil {
		return []string{err.Error()}
	}
	if len(roots) != 1 {
		return []string{fmt.Sprintf("archive must hold one directory named after the plugin id, holds %v", roots)}
	}
	root := roots[0]
	var p []string
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	if _, ok := files[root]; ok {
		add("archive holds a file %s, not a directory", root)
		return p
	}
	get := func(rel string) (zipEntry, bool) { e, ok := files[root+"/"+rel]; return e, ok }
	rootMeta, ok := get("plugin.json")
	if !ok {
		return append(p, "no plugin.json at the archive's root")
	}
	var app pluginJSON
	if err := json.Unmarshal(rootMeta.data, &app); err != nil {
		return append(p, "plugin.json: "+err.Error())
	}
	if root != app.ID {
		add("the archive's directory is %s, the plugin id %s", root, app.ID)
	}
	for name := range files {
		if strings.HasPrefix(name, root+"/dist/") {
			add("%s: dist/ must be the archive's root directory, not inside it", name)
			break
		}
	}
	if !regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`).MatchString(app.Info.Version) {
		add("plugin.json version %q is not a semantic version", app.Info.Version)
	}
	// Every plugin.json in the archive: the root app and the nested ones.
	for name, e := range files {
		rel := strings.TrimPrefix(name, root+"/")
		if path.Base(rel) != "plugin.json" {
			continue
		}
		dir := path.Dir(rel)
		var meta pluginJSON
		if err := json.Unmarshal(e.data, &meta); err != nil {
			add("%s: %v", rel, err)
			continue
		}
		p = append(p, pluginProblems(rel, dir, meta, app, get)...)
	}
	for _, doc := range []string{"README.md", "LICENSE", "CHANGELOG.md"} {
		if _, ok := get(doc); !ok {
			add("no %s at the archive's root", doc)
		}
	}
	if readme, ok := get("README.md"); ok {
		p = append(p, readmeProblems(readme.data)...)
	}
	if lic, ok := get("LICENSE"); ok && (bytes.Contains(lic.data, []byte("{yyyy}")) || bytes.Contains(lic.data, []byte("{name of copyright owner}"))) {
		add("LICENSE still has the template's {yyyy} / {name of copyright owner}")
	}
	if cl, ok := get("CHANGELOG.md"); ok && !regexp.MustCompile(`(?m)^## `+regexp.QuoteMeta(app.Info.Version)+`\b`).Match(cl.data) {
		add("CHANGELOG.md has no entry for version %s", app.Info.Version)
	}
	if m, ok := get("MANIFEST.txt"); ok && len(bytes.TrimSpace(m.data)) == 0 {
		add("MANIFEST.txt is empty")
	}
	return p
}

// pluginProblems checks one plugin.json of the archive (at rel, in dir).
func pluginProblems(rel, dir string, meta, app pluginJSON, get func(string) (zipEntry, bool)) []string {
	var p []string
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	in := func(name string) string { return path.Join(dir, name) }
	if !strings.HasSuffix(meta.ID, "-"+meta.Type) {
		add("%s: id %s does not end with -%s", rel, meta.ID, meta.Type)
	}
	if strings.Contains(string(meta.Info.Version), "%") {
		add("%s: version placeholder %s left in", rel, meta.Info.Version)
	}
	for _, f := range []string{"module.js", "module.js.map"} {
		if _, ok := get(in(f)); !ok {
			add("%s: no %s beside it", rel, in(f))
		}
	}
	if dir != "." {
		declared := slices.ContainsFunc(app.Includes, func(i struct {
			Type string `json:"type"`
			Name string `json:"name"`
			Path string `json:"path"`
		}) bool {
			return i.Path == rel && i.Type == meta.Type
		})
		if !declared {
			add("nested plugin %s (%s) is not in the app's includes with its type", rel, meta.Type)
		}
	}
	for kind, img := range map[string]string{"small logo": meta.Info.Logos.Small, "large logo": meta.Info.Logos.Large} {
		p = append(p, assetProblems(rel, kind, img, in, get, false)...)
	}
	for _, s := range meta.Info.Screenshots {
		p = append(p, assetProblems(rel, "screenshot "+s.Name, s.Path, in, get, true)...)
	}
	if meta.Backend && meta.Executable != "" {
		p = append(p, backendProblems(rel, dir, meta, get)...)
	}
	return p
}

func assetProblems(rel, kind, img string, in func(string) string, get func(string) (zipEntry, bool), screenshot bool) []string {
	if img == "" {
		return []string{fmt.Sprintf("%s: empty %s path", rel, kind)}
	}
	if strings.HasPrefix(img, ".") || strings.HasPrefix(img, "/") || strings.Contains(img, "://") {
		return []string{fmt.Sprintf("%s: %s path %q must be relative to plugin.json, without ./ or /", rel, kind, img)}
	}
	e, ok := get(in(img))
	if !ok {
		return []string{fmt.Sprintf("%s: %s %s is not in the archive", rel, kind, in(img))}
	}
	if !screenshot {
		return nil
	}
	head := e.data[:min(512, len(e.data))]
	typ := http.DetectContentType(head)
	if (strings.Contains(typ, "text/plain") || strings.Contains(typ, "text/xml")) && bytes.Contains(head, []byte("<svg")) {
		typ = "image/svg+xml"
	}
	if !slices.Contains([]string{"image/svg+xml", "image/png", "image/jpeg", "image/gif"}, typ) {
		return []string{fmt.Sprintf("%s: %s %s is %s, not svg, png, jpeg or gif", rel, kind, img, typ)}
	}
	if mime.TypeByExtension(path.Ext(img)) != typ {
		return []string{fmt.Sprintf("%s: %s %s has extension %s but content %s", rel, kind, img, path.Ext(img), typ)}
	}
	return nil
}

func backendProblems(rel, dir string, meta pluginJSON, get func(string) (zipEntry, bool)) []string {
	var p []string
	prefix := path.Join(dir, meta.Executable) + "_"
	var found []string
	for _, osArch := range []string{"linux_amd64", "linux_arm64", "linux_arm", "darwin_amd64", "darwin_arm64", "windows_amd64.exe"} {
		e, ok := get(prefix + osArch)
		if !ok {
			continue
		}
		found = append(found, osArch)
		if !strings.HasSuffix(osArch, ".exe") && e.mode.Perm() != 0o755 {
			p = append(p, fmt.Sprintf("%s%s has mode %04o, the validator wants 0755", prefix, osArch, e.mode.Perm()))
		}
	}
	if !slices.Contains(found, "linux_amd64") {
		p = append(p, fmt.Sprintf("%s declares a backend but %slinux_amd64 is missing (Grafana requires linux/amd64)", rel, prefix))
	}
	if _, ok := get("go_plugin_build_manifest"); !ok {
		p = append(p, "no go_plugin_build_manifest at the archive's root (the SDK build writes it)")
	}
	return p
}

// The zip make dist builds passes every check. make test builds dist/
// first; a bare go test without a build has no plugin to package.
func TestDistZip(t *testing.T) {
	zipPath := os.Getenv("QUERYREPLAY_DIST_ZIP")
	if zipPath == "" {
		if _, err := os.Stat(repoPath(t, "dist/plugin.json")); err != nil {
			t.Skip("dist/ is not built (make build; make test builds it before the Go tests)")
		}
		cmd := exec.Command(repoPath(t, "scripts/dist.sh"), repoPath(t, "dist"), t.TempDir())
		cmd.Env = append(os.Environ(), "GRAFANA_ACCESS_POLICY_TOKEN=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("scripts/dist.sh: %v\n%s", err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		zipPath = lines[len(lines)-1]
	}
	for _, p := range zipProblems(zipPath) {
		t.Error(p)
	}
	files, _, err := readZip(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"datasource/plugin.json", "panel/plugin.json", "plugin.json"} {
		if _, ok := files[pluginByType(t, "app").ID+"/"+id]; !ok {
			t.Errorf("the zip has no %s", id)
		}
	}
	if _, ok := files[pluginByType(t, "app").ID+"/MANIFEST.txt"]; ok && os.Getenv("GRAFANA_ACCESS_POLICY_TOKEN") == "" {
		t.Error("an unsigned build carries a MANIFEST.txt (a stale signature)")
	}
}

// The repository README is the catalog page: absolute links only, no
// comments, no jargon.
func TestReadme(t *testing.T) {
	for _, p := range readmeProblems(readFile(t, repoPath(t, "README.md"))) {
		t.Error(p)
	}
	readme := string(readFile(t, repoPath(t, "README.md")))
	if !strings.Contains(readme, "docker compose up") || !strings.Contains(readme, "make demo") || !strings.Contains(readme, "make test") {
		t.Error("the README must say how to run make demo, make test and the compose stack")
	}
	if !regexp.MustCompile(`!\[[^\]]+\]\(https://[^)]+\.png\)`).MatchString(readme) {
		t.Error("the README shows no screenshot (an absolute link to a PNG)")
	}
}

// LICENSE has its placeholders filled; plugin.json has links and
// screenshots that exist under src/ (webpack copies them into dist/).
func TestPluginMetadata(t *testing.T) {
	lic := string(readFile(t, repoPath(t, "LICENSE")))
	if strings.Contains(lic, "{yyyy}") || strings.Contains(lic, "{name of copyright owner}") {
		t.Error("LICENSE still has the template's {yyyy} / {name of copyright owner}")
	}
	app := pluginByType(t, "app")
	if len(app.Info.Links) == 0 {
		t.Error("src/plugin.json has no info.links")
	}
	for _, l := range app.Info.Links {
		if !strings.HasPrefix(l.URL, "https://") || l.Name == "" {
			t.Errorf("src/plugin.json link %+v needs a name and an https:// URL", l)
		}
	}
	if len(app.Info.Screenshots) == 0 {
		t.Error("src/plugin.json has no screenshots")
	}
	for _, s := range app.Info.Screenshots {
		if _, err := os.Stat(repoPath(t, "src/"+s.Path)); err != nil || s.Name == "" {
			t.Errorf("screenshot %+v: %v", s, err)
		}
	}
	if app.Info.Description == "" {
		t.Error("src/plugin.json has no description (the catalog indexes it)")
	}
}

type fixtureFile struct {
	mode fs.FileMode
	data string
}

// goodPluginTree is a minimal archive the checks accept: an app nesting a
// backend datasource and a panel.
func goodPluginTree() map[string]fixtureFile {
	png := "\x89PNG\r\n\x1a\n" + strings.Repeat("\x00", 64)
	svg := `<svg xmlns="http://www.w3.org/2000/svg"></svg>`
	f := func(s string) fixtureFile { return fixtureFile{0o644, s} }
	return map[string]fixtureFile{
		"x-y-app/plugin.json": f(`{"type":"app","id":"x-y-app","info":{"version":"1.0.0","logos":{"small":"img/logo.svg","large":"img/logo.svg"},
			"screenshots":[{"name":"Replay","path":"img/shot.png"}]},
			"includes":[{"type":"datasource","name":"D","path":"datasource/plugin.json"},{"type":"panel","name":"P","path":"panel/plugin.json"}]}`),
		"x-y-app/module.js":                          f("define([],function(){})"),
		"x-y-app/module.js.map":                      f("{}"),
		"x-y-app/img/logo.svg":                       f(svg),
		"x-y-app/img/shot.png":                       f(png),
		"x-y-app/README.md":                          f("# X\n\nSee [the docs](https://example.com/docs) and [below](#install).\n"),
		"x-y-app/LICENSE":                            f("Apache License\nCopyright 2026 X\n"),
		"x-y-app/CHANGELOG.md":                       f("# Changelog\n\n## 1.0.0\n\n- first\n"),
		"x-y-app/go_plugin_build_manifest":           f("abc  cmd/main.go\n"),
		"x-y-app/datasource/plugin.json":             f(`{"type":"datasource","id":"x-y-datasource","backend":true,"executable":"gpx_y","info":{"version":"1.0.0","logos":{"small":"img/logo.svg","large":"img/logo.svg"}}}`),
		"x-y-app/datasource/module.js":               f("define([],function(){})"),
		"x-y-app/datasource/module.js.map":           f("{}"),
		"x-y-app/datasource/img/logo.svg":            f(svg),
		"x-y-app/datasource/gpx_y_linux_amd64":       {0o755, "\x7fELF"},
		"x-y-app/datasource/gpx_y_windows_amd64.exe": f("MZ"),
		"x-y-app/panel/plugin.json":                  f(`{"type":"panel","id":"x-y-panel","info":{"version":"1.0.0","logos":{"small":"img/logo.svg","large":"img/logo.svg"}}}`),
		"x-y-app/panel/module.js":                    f("define([],function(){})"),
		"x-y-app/panel/module.js.map":                f("{}"),
		"x-y-app/panel/img/logo.svg":                 f(svg),
	}
}

func writeFixtureZip(t *testing.T, files map[string]fixtureFile) string {
	t.Helper()
	zipPath := path.Join(t.TempDir(), "plugin.zip")
	out, err := os.Create(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	w := zip.NewWriter(out)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		h := &zip.FileHeader{Name: n, Method: zip.Deflate}
		h.SetMode(files[n].mode)
		fw, err := w.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(fw, files[n].data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return zipPath
}

// The zip checks accept a good archive and report each kind of mistake
// the validator would.
func TestZipProblemsFindsMistakes(t *testing.T) {
	if p := zipProblems(writeFixtureZip(t, goodPluginTree())); len(p) != 0 {
		t.Fatalf("the good fixture has problems: %v", p)
	}
	for _, tc := range []struct {
		name   string
		mutate func(m map[string]fixtureFile)
		want   string
	}{
		{"two roots", func(m map[string]fixtureFile) { m["other/x.txt"] = fixtureFile{0o644, "x"} }, "one directory named after the plugin id"},
		{"root not named after id", func(m map[string]fixtureFile) { rename(m, "x-y-app/", "dist/") }, "the archive's directory is dist"},
		{"dist inside", func(m map[string]fixtureFile) { m["x-y-app/dist/module.js"] = fixtureFile{0o644, "x"} }, "dist/ must be the archive's root"},
		{"no linux amd64", func(m map[string]fixtureFile) { delete(m, "x-y-app/datasource/gpx_y_linux_amd64") }, "linux_amd64 is missing"},
		{"binary not executable", func(m map[string]fixtureFile) {
			m["x-y-app/datasource/gpx_y_linux_amd64"] = fixtureFile{0o644, "\x7fELF"}
		}, "has mode 0644"},
		{"no go manifest", func(m map[string]fixtureFile) { delete(m, "x-y-app/go_plugin_build_manifest") }, "go_plugin_build_manifest"},
		{"relative readme link", func(m map[string]fixtureFile) {
			m["x-y-app/README.md"] = fixtureFile{0o644, "See [arch](docs/ARCHITECTURE.md).\n"}
		}, "relative link docs/ARCHITECTURE.md"},
		{"readme comment", func(m map[string]fixtureFile) { m["x-y-app/README.md"] = fixtureFile{0o644, "# X <!-- todo -->\n"} }, "HTML comment"},
		{"license placeholder", func(m map[string]fixtureFile) {
			m["x-y-app/LICENSE"] = fixtureFile{0o644, "Copyright {yyyy} {name of copyright owner}"}
		}, "{yyyy}"},
		{"no changelog entry", func(m map[string]fixtureFile) { m["x-y-app/CHANGELOG.md"] = fixtureFile{0o644, "## 0.9.0\n"} }, "no entry for version 1.0.0"},
		{"no source map", func(m map[string]fixtureFile) { delete(m, "x-y-app/panel/module.js.map") }, "panel/module.js.map"},
		{"missing screenshot", func(m map[string]fixtureFile) { delete(m, "x-y-app/img/shot.png") }, "screenshot Replay img/shot.png is not in the archive"},
		{"screenshot not an image", func(m map[string]fixtureFile) { m["x-y-app/img/shot.png"] = fixtureFile{0o644, "hello"} }, "not svg, png, jpeg or gif"},
		{"placeholder version", func(m map[string]fixtureFile) {
			m["x-y-app/panel/plugin.json"] = fixtureFile{0o644, `{"type":"panel","id":"x-y-panel","info":{"version":"%VERSION%","logos":{"small":"img/logo.svg","large":"img/logo.svg"}}}`}
		}, "version placeholder"},
		{"nested not included", func(m map[string]fixtureFile) {
			for _, f := range []string{"plugin.json", "module.js", "module.js.map", "img/logo.svg"} {
				m["x-y-app/extra/"+f] = m["x-y-app/panel/"+f]
			}
		}, "extra/plugin.json (panel) is not in the app's includes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := goodPluginTree()
			tc.mutate(m)
			problems := zipProblems(writeFixtureZip(t, m))
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.want) }) {
				t.Errorf("want a problem containing %q, got %v", tc.want, problems)
			}
		})
	}
}

func rename(m map[string]fixtureFile, from, to string) {
	for k, v := range m {
		if rest, ok := strings.CutPrefix(k, from); ok {
			delete(m, k)
			m[to+rest] = v
		}
	}
}

// docs/README.md indexes every page of docs/, and every relative link in
// docs/ and the README resolves to a file of the repository.
func TestDocsIndexAndLinks(t *testing.T) {
	index := string(readFile(t, repoPath(t, "docs/README.md")))
	pages, err := filepath.Glob(repoPath(t, "docs/*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		name := path.Base(p)
		if name != "README.md" && !strings.Contains(index, "]("+name+")") {
			t.Errorf("docs/README.md does not link %s", name)
		}
	}
	for _, p := range pages {
		text := readFile(t, p)
		for _, m := range mdLink.FindAllSubmatch(text, -1) {
			link := strings.Fields(string(m[1]))[0]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "#") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			link, _, _ = strings.Cut(link, "#")
			target := path.Join(path.Dir(p), link)
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s links %s, which does not exist", path.Base(p), link)
			}
		}
	}
	// The README's absolute links into this repository name files that exist.
	for _, m := range regexp.MustCompile(`https://github\.com/queryreplay/queryreplay/(?:blob|tree)/main/([^)#\s]+)`).FindAllStringSubmatch(string(readFile(t, repoPath(t, "README.md")))+index, -1) {
		if _, err := os.Stat(repoPath(t, m[1])); err != nil {
			t.Errorf("README links %s, which does not exist", m[1])
		}
	}
	for _, m := range regexp.MustCompile(`https://raw\.githubusercontent\.com/queryreplay/queryreplay/main/([^)\s]+)`).FindAllStringSubmatch(string(readFile(t, repoPath(t, "README.md"))), -1) {
		if _, err := os.Stat(repoPath(t, m[1])); err != nil {
			t.Errorf("README shows %s, which does not exist", m[1])
		}
	}
}

package releasecheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

var (
	rootOnce sync.Once
	rootDir  string
	rootErr  error
)

// repo returns the module root (the directory holding go.mod).
func repo(t testing.TB) string {
	t.Helper()
	rootOnce.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			rootErr = err
			return
		}
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				rootDir = dir
				return
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				rootErr = errors.New("no go.mod above the test directory")
				return
			}
			dir = parent
		}
	})
	if rootErr != nil {
		t.Fatal(rootErr)
	}
	return rootDir
}

// repoPath joins a slash-separated repository path to the module root.
func repoPath(t testing.TB, rel string) string {
	return filepath.Join(repo(t), filepath.FromSlash(rel))
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodeYAMLStrict decodes one YAML document into v, refusing keys that v
// does not declare, so that a misspelt key fails the test instead of being
// ignored the way Grafana or Docker would ignore (or refuse) it.
func decodeYAMLStrict(t testing.TB, path string, v any) {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(readFile(t, path)))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("%s: %v", path, err)
	}
}

// pluginJSON is the part of a plugin.json these tests read.
type pluginJSON struct {
	Type       string `json:"type"`
	ID         string `json:"id"`
	Name       string `json:"name"`
	Backend    bool   `json:"backend"`
	Executable string `json:"executable"`
	Info       struct {
		Description string `json:"description"`
		Links       []struct {
			Name string `json:"name"`
			URL  string `json:"url"`
		} `json:"links"`
		Logos struct {
			Small string `json:"small"`
			Large string `json:"large"`
		} `json:"logos"`
		Screenshots []struct {
			Name string `json:"name"`
			Path string `json:"path"`
		} `json:"screenshots"`
		Version string `json:"version"`
	} `json:"info"`
	Includes []struct {
		Type string `json:"type"`
		Name string `json:"name"`
		Path string `json:"path"`
	} `json:"includes"`
	Dependencies struct {
		GrafanaDependency string `json:"grafanaDependency"`
	} `json:"dependencies"`
}

// plugins reads every src/**/plugin.json, keyed by its path relative to src/.
func plugins(t testing.TB) map[string]pluginJSON {
	t.Helper()
	out := map[string]pluginJSON{}
	src := repoPath(t, "src")
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "node_modules" {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() != "plugin.json" {
			return nil
		}
		var p pluginJSON
		if err := json.Unmarshal(readFile(t, path), &p); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		rel, _ := filepath.Rel(src, path)
		out[filepath.ToSlash(rel)] = p
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no plugin.json under src/")
	}
	return out
}

// pluginByType returns the one plugin of a type (app, datasource, panel).
func pluginByType(t testing.TB, typ string) pluginJSON {
	t.Helper()
	var found []pluginJSON
	for _, p := range plugins(t) {
		if p.Type == typ {
			found = append(found, p)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want exactly one %s plugin under src/, found %d", typ, len(found))
	}
	return found[0]
}

func pluginIDs(t testing.TB) []string {
	var ids []string
	for _, p := range plugins(t) {
		ids = append(ids, p.ID)
	}
	sort.Strings(ids)
	return ids
}

// composeVar matches ${NAME}, ${NAME:-default} and ${NAME-default}.
var composeVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*))?\}`)

// interpolate applies compose's variable substitution with an empty
// environment (what a newcomer has): defaults apply, $$ is a literal $.
// It reports the variables that have no default.
func interpolate(s string) (string, []string) {
	var missing []string
	const dollar = "\x00"
	s = strings.ReplaceAll(s, "$$", dollar)
	s = composeVar.ReplaceAllStringFunc(s, func(m string) string {
		g := composeVar.FindStringSubmatch(m)
		if g[2] == "" {
			missing = append(missing, g[1])
			return ""
		}
		return g[3]
	})
	return strings.ReplaceAll(s, dollar, "$"), missing
}

// copyTree copies a file or a directory tree from src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

package releasecheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// docs/troubleshooting.md must list every error message a user can see
// from the commands and the datasource, and nothing that no longer
// exists. The messages are read from the Go sources: the format string of
// each error constructor in the packages below.

// messageSources are the directories whose errors reach users: the CLI,
// the datasource, its trace store and the viewer; the exporter's configuration problems;
// the tracer's refusals and missing permissions (the datasource and the
// trace command print them).
var messageSources = []struct {
	dir string
	// calls maps a function (pkg.Func or Func, optionally file.go:Func for
	// one file only) to the index of its format argument; Reason: fields
	// and append(missing, ...) are read too.
	calls map[string]int
	// onlyRefusals keeps just the refusal and permission texts: Reason:
	// fields, append(missing, …), the classifier's reasons (calls, and
	// constants named why…) and the messages assigned to msg.
	onlyRefusals bool
}{
	{dir: "cmd/queryreplay", calls: map[string]int{"errors.New": 0, "fmt.Errorf": 0}},
	{dir: "pkg/viewer", calls: map[string]int{"errors.New": 0, "fmt.Errorf": 0, "writeError": 2}},
	{dir: "pkg/plugin", calls: map[string]int{"errors.New": 0, "fmt.Errorf": 0, "pluginErr": 1, "downstreamErr": 1, "writeErr": 2, "settings.go:add": 0}},
	{dir: "pkg/exporter", calls: map[string]int{"bad": 1}},
	// The trace store's messages reach users through the datasource.
	{dir: "pkg/tracestore", calls: map[string]int{"errors.New": 0, "fmt.Errorf": 0, "fmt.Sprintf": 0}},
	{dir: "pkg/tracer", onlyRefusals: true, calls: map[string]int{"c.refuse": 1}},
	// the classifier's refusals (pkg/tsql)
	{dir: "pkg/tsql", onlyRefusals: true, calls: map[string]int{"c.refuse": 1}},
	// every size limit's error (bundles, plans, query JSON, request
	// bodies): its why… constants
	{dir: "pkg/sizelimit", calls: map[string]int{}},
	// the symbol store's sentinel errors: symbols resolve and the
	// datasource print them as the reason a module stayed unresolved
	{dir: "pkg/symstore", calls: map[string]int{"store.go:errors.New": 0}},
}

// notUserFacing are messages a user cannot meet: misuse of a Go API by
// our own code, caught by tests.
var notUserFacing = []string{
	"viewer: Config.Datasource is required",
	"viewer: Config.Assets is required (the built harness bundle)",
}

// message is one error format found in the sources.
type message struct {
	Format, File string
	Line         int
}

var verb = regexp.MustCompile(`%[-+# 0-9.*]*[a-zA-Z]`)

// signature is how the doc writes a message: each formatting verb as …,
// whitespace collapsed.
func signature(format string) string {
	s := verb.ReplaceAllString(strings.ReplaceAll(format, "%%", "\x00"), "…")
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\x00", "%")), " ")
}

// wrapper says whether a format only adds context to another error
// ("write output: %w"): the wrapped error is the message to look up.
func wrapper(format string) bool {
	// Only verbs and punctuation ("%s: %s"): no text of its own.
	if !regexp.MustCompile(`[A-Za-z]`).MatchString(verb.ReplaceAllString(format, "")) {
		return true
	}
	rest, ok := strings.CutSuffix(format, ": %w")
	if !ok {
		rest, ok = strings.CutSuffix(format, ": %v")
	}
	if !ok {
		return format == "%v" || format == "%s" || format == "%w"
	}
	return len(strings.Fields(verb.ReplaceAllString(rest, "x"))) <= 4
}

// userMessages extracts the user-facing messages of the sources.
func userMessages(t testing.TB) []message {
	t.Helper()
	var out []message
	for _, src := range messageSources {
		files, err := filepath.Glob(repoPath(t, src.dir+"/*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			out = append(out, fileMessages(t, f, src.calls, src.onlyRefusals)...)
		}
	}
	var kept []message
	for _, m := range out {
		if strings.TrimSpace(m.Format) == "" || wrapper(m.Format) || slices.Contains(notUserFacing, m.Format) {
			continue
		}
		kept = append(kept, m)
	}
	return kept
}

func fileMessages(t testing.TB, path string, calls map[string]int, onlyRefusals bool) []message {
	t.Helper()
	fset := token.NewFileSet()
	af, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(repo(t), path)
	var out []message
	add := func(e ast.Expr) {
		if s, ok := formatOf(e); ok {
			out = append(out, message{Format: s, File: filepath.ToSlash(rel), Line: fset.Position(e.Pos()).Line})
		}
	}
	ast.Inspect(af, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.KeyValueExpr:
			if k, ok := x.Key.(*ast.Ident); ok && k.Name == "Reason" {
				add(x.Value)
			}
		case *ast.AssignStmt:
			// missing = append(missing, "…"): the permission list.
			if len(x.Lhs) == 1 && len(x.Rhs) == 1 {
				if id, ok := x.Lhs[0].(*ast.Ident); ok && id.Name == "missing" {
					if c, ok := x.Rhs[0].(*ast.CallExpr); ok && len(c.Args) == 2 {
						add(c.Args[1])
					}
				}
				if id, ok := x.Lhs[0].(*ast.Ident); ok && id.Name == "msg" && onlyRefusals && x.Tok != token.ADD_ASSIGN {
					add(x.Rhs[0])
				}
			}
		case *ast.ValueSpec:
			for i, name := range x.Names {
				// constants named why… are refusal reasons in every
				// directory (pkg/viewer's 403 answers, the classifier's)
				if strings.HasPrefix(name.Name, "why") && i < len(x.Values) {
					add(x.Values[i])
				}
			}
		case *ast.CallExpr:
			i, ok := calls[callName(x)]
			if !ok {
				i, ok = calls[filepath.Base(path)+":"+callName(x)]
			}
			if ok && i < len(x.Args) {
				add(x.Args[i])
			}
		}
		return true
	})
	return out
}

func callName(c *ast.CallExpr) string {
	switch fn := c.Fun.(type) {
	case *ast.SelectorExpr:
		if id, ok := fn.X.(*ast.Ident); ok {
			return id.Name + "." + fn.Sel.Name
		}
	case *ast.Ident:
		return fn.Name
	}
	return ""
}

// formatOf returns a string literal, the format of an fmt.Sprintf, or a
// literal followed by + (the fixed head of a concatenation).
func formatOf(e ast.Expr) (string, bool) {
	switch x := e.(type) {
	case *ast.BasicLit:
		if x.Kind == token.STRING {
			s, err := strconv.Unquote(x.Value)
			return s, err == nil
		}
	case *ast.CallExpr:
		if callName(x) == "fmt.Sprintf" && len(x.Args) > 0 {
			return formatOf(x.Args[0])
		}
	case *ast.BinaryExpr:
		if x.Op == token.ADD {
			if s, ok := formatOf(x.X); ok {
				return s + "%s", true
			}
		}
	}
	return "", false
}

// docMessages are the messages the troubleshooting tables list: the first
// cell of each table row, in backticks.
var docRow = regexp.MustCompile("(?m)^\\| `([^`]+)` \\|")

func TestTroubleshootingListsEveryMessage(t *testing.T) {
	doc := string(readFile(t, repoPath(t, "docs/troubleshooting.md")))
	listed := map[string]bool{}
	for _, m := range docRow.FindAllStringSubmatch(doc, -1) {
		listed[strings.Join(strings.Fields(m[1]), " ")] = true
	}
	found := map[string]message{}
	for _, m := range userMessages(t) {
		found[signature(m.Format)] = m
	}
	if len(found) < 50 {
		t.Fatalf("found only %d messages in the sources; the extraction is broken", len(found))
	}
	var missing []string
	for sig, m := range found {
		if !listed[sig] {
			missing = append(missing, m.File+":"+strconv.Itoa(m.Line)+": | `"+sig+"` |")
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("docs/troubleshooting.md does not list %s", m)
	}
	var stale []string
	for sig := range listed {
		if _, ok := found[sig]; !ok {
			stale = append(stale, sig)
		}
	}
	sort.Strings(stale)
	for _, s := range stale {
		t.Errorf("docs/troubleshooting.md lists `%s`, which no source produces any more", s)
	}
	if os.Getenv("QUERYREPLAY_PRINT_MESSAGES") != "" {
		for _, m := range missing {
			t.Log(m)
		}
	}
}

// The extraction itself, on a small source.
func TestUserMessageExtraction(t *testing.T) {
	dir := t.TempDir()
	src := `package x
func f() {
	_ = errors.New("give --sql or --file")
	_ = fmt.Errorf("write output: %w", err)
	_ = fmt.Errorf("port %d is outside 1-65535", p)
	_ = &RefusedError{Reason: fmt.Sprintf("line %d: %s", n, why)}
	_ = &RefusedError{Reason: "the login lacks: " + strings.Join(missing, "; ")}
	missing = append(missing, "VIEW SERVER STATE to read the session's events")
	_ = pluginErr(400, "sql is empty: a %s query needs the batch", q)
}`
	path := filepath.Join(dir, "x.go")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range fileMessages(t, path, map[string]int{"errors.New": 0, "fmt.Errorf": 0, "pluginErr": 1}, false) {
		if !wrapper(m.Format) {
			got = append(got, signature(m.Format))
		}
	}
	want := []string{
		"give --sql or --file", "port … is outside 1-65535", "line …: …", "the login lacks: …",
		"VIEW SERVER STATE to read the session's events", "sql is empty: a … query needs the batch",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("extracted %q, want %q", got, want)
	}
}

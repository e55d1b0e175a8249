package releasecheck

import (
	"fmt"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// Code comments and documents cite Markdown pages ("see docs/design/
// tracing.md §12"). A newcomer with a clone must be able to follow every
// one, so these tests fail when a cited page is not in the repository, when
// the cited § section or #anchor has no heading in it, or when a citation
// points outside the repository (the team's shared folder, or a design note
// that was never added). External URLs are left alone: they are not pages
// of this repository.

const (
	citeSelf         = "internal/releasecheck/docs_citations_test.go"
	citeMaxFiles     = 20000   // a bound on the walk; the repository has far fewer
	citeMaxFileBytes = 2 << 20 // larger files are data, not prose
)

var (
	// citeSkipDirs are generated, vendored or tool directories.
	citeSkipDirs = map[string]bool{"node_modules": true, "dist": true, "bin": true, ".git": true}
	// citeExts are the source kinds that carry citations.
	citeExts = map[string]bool{".go": true, ".ts": true, ".tsx": true, ".md": true, ".sh": true, ".yaml": true, ".yml": true}

	// citeURL is any scheme://… run; the citations in it are external.
	citeURL = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s)\]>"'` + "`" + `]*`)
	// citeRef is a Markdown page name (with an optional relative path)
	// and an optional section: "§7.2" after spaces, or "#anchor".
	citeRef = regexp.MustCompile(`((?:\.{1,2}/)*(?:[A-Za-z0-9_-][A-Za-z0-9_.-]*/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*\.md)((?:[ \t]*§[ \t]*[0-9]+(?:\.[0-9]+)*)|#[A-Za-z0-9_-]+)?`)
	// citeSection is the number of a § section.
	citeSection = regexp.MustCompile(`[0-9]+(?:\.[0-9]+)*`)
	// citeOutside is a path into the team's shared folder next to the clone.
	citeOutside = regexp.MustCompile(`(?:\.\./)+shared\b|\bshared/docs\b`)
	// citeRetired are the stems of design notes that lived outside the
	// repository; their facts are now in docs/design/.
	citeRetired = []string{"xe-tracing", "symbols-and-xel", "xe-event-fields", "tds-standin", "exporter-anchors", "grafana-plugin", "TEAM"}
)

// citation is one Markdown page a source line cites.
type citation struct {
	line    int
	page    string // as written
	section string // "7.2" for §7.2, "" when none
	anchor  string // "lock-resources" for #lock-resources, "" when none
}

// citationsIn lists the Markdown citations of a text and the lines that
// point outside the repository. URLs are blanked first.
func citationsIn(text string) (cites []citation, outside []int) {
	for i, line := range strings.Split(text, "\n") {
		line = citeURL.ReplaceAllStringFunc(line, func(u string) string { return strings.Repeat(" ", len(u)) })
		if citeOutside.MatchString(line) {
			outside = append(outside, i+1)
		}
		for _, m := range citeRef.FindAllStringSubmatchIndex(line, -1) {
			end := m[3]
			if end < len(line) && isNameByte(line[end]) {
				continue // ".mdx", ".md_": not a Markdown page
			}
			if m[2] > 0 && (isNameByte(line[m[2]-1]) || line[m[2]-1] == '*' || line[m[2]-1] == '}') {
				continue // part of a longer token (a glob, a template)
			}
			c := citation{line: i + 1, page: line[m[2]:m[3]]}
			if m[4] >= 0 {
				suffix := line[m[4]:m[5]]
				if a, ok := strings.CutPrefix(suffix, "#"); ok {
					c.anchor = a
				} else {
					c.section = citeSection.FindString(suffix)
				}
			}
			cites = append(cites, c)
		}
	}
	return cites, outside
}

func isNameByte(b byte) bool {
	return b == '_' || b == '-' || b == '/' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// markdownSections returns the section numbers of a Markdown text's
// headings: "## 7.2 Plan files" and "## §7.2 Plan files" give "7.2",
// "## 1. Session" gives "1".
func markdownSections(text string) map[string]bool {
	out := map[string]bool{}
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		if fenceLine.MatchString(line) {
			inFence = !inFence
			continue
		}
		m := headingLine.FindStringSubmatch(line)
		if inFence || m == nil {
			continue
		}
		h := strings.TrimPrefix(m[2], "§")
		n := citeSection.FindString(h)
		if n == "" || !strings.HasPrefix(h, n) {
			continue
		}
		rest := strings.TrimPrefix(h[len(n):], ".")
		if rest == "" || rest[0] == ' ' {
			out[n] = true
		}
	}
	return out
}

// citeTarget resolves a cited page relative to the citing file, the
// repository root and docs/, returning its repository path or "".
func citeTarget(root, from, page string) string {
	for _, base := range []string{path.Dir(from), ".", "docs"} {
		p := path.Join(base, page)
		if strings.HasPrefix(p, "../") || p == ".." {
			continue
		}
		if st, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}

// citeSources lists the repository files that may carry citations, as
// slash-separated paths relative to root.
func citeSources(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (citeSkipDirs[d.Name()] || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !citeExts[filepath.Ext(d.Name())] && d.Name() != "Makefile" {
			return nil
		}
		if len(files) >= citeMaxFiles {
			return fmt.Errorf("more than %d source files under %s", citeMaxFiles, root)
		}
		rel, _ := filepath.Rel(root, p)
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	sort.Strings(files)
	return files, err
}

// citationProblems checks every citation of one file.
func citationProblems(root, file, text string, pages map[string]string) []string {
	var problems []string
	cites, outside := citationsIn(text)
	for _, n := range outside {
		problems = append(problems, fmt.Sprintf("%s:%d points into the shared folder outside the repository", file, n))
	}
	for _, c := range cites {
		where := fmt.Sprintf("%s:%d cites %s", file, c.line, c.page)
		target := citeTarget(root, file, c.page)
		// docs/design/symbols-and-xel.md reuses a retired name: a citation that resolves into docs/design/ is not retired.
		if retired(strings.TrimSuffix(path.Base(c.page), ".md")) && path.Dir(target) != "docs/design" {
			problems = append(problems, where+", a design note that is not in the repository (its facts are in docs/design/)")
			continue
		}
		if target == "" {
			problems = append(problems, where+", which is not in the repository")
			continue
		}
		if c.section == "" && c.anchor == "" {
			continue
		}
		text, ok := pages[target]
		if !ok {
			b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(target)))
			if err != nil {
				problems = append(problems, where+": "+err.Error())
				continue
			}
			text = string(b)
			pages[target] = text
		}
		if c.section != "" && !markdownSections(text)[c.section] {
			problems = append(problems, fmt.Sprintf("%s §%s, but %s has no heading numbered %s", where, c.section, target, c.section))
		}
		if c.anchor != "" && !markdownAnchors(text)[c.anchor] {
			problems = append(problems, fmt.Sprintf("%s#%s, but %s has no heading with that anchor", where, c.anchor, target))
		}
	}
	return problems
}

// goProse keeps a Go file's comments, blanking everything else but
// newlines so line numbers stay: citations live in comments, while page
// names in code are data (test fixtures, file names a program writes). A
// file that does not scan is kept whole.
func goProse(src string) string {
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	bad := false
	s.Init(file, []byte(src), func(token.Position, string) { bad = true }, scanner.ScanComments)
	keep := make([]bool, len(src))
	for range len(src) + 2 { // every token but a final implicit semicolon and EOF spans a byte
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.COMMENT {
			off := file.Offset(pos)
			for i := off; i < off+len(lit) && i < len(src); i++ {
				keep[i] = true
			}
		}
	}
	if bad {
		return src
	}
	b := []byte(src)
	for i := range b {
		if !keep[i] && b[i] != '\n' {
			b[i] = ' '
		}
	}
	return string(b)
}

func retired(stem string) bool {
	for _, r := range citeRetired {
		if strings.EqualFold(stem, r) {
			return true
		}
	}
	return false
}

// Every Markdown page a source file cites is in the repository and has the
// cited section; nothing cites the shared folder or a retired design note.
func TestDocsCitationsResolveInRepository(t *testing.T) {
	root := repo(t)
	files, err := citeSources(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("found only %d source files under %s; the walk is broken", len(files), root)
	}
	pages := map[string]string{}
	var problems []string
	for _, f := range files {
		if f == citeSelf {
			continue // its scanner test cites broken pages on purpose
		}
		p := filepath.Join(root, filepath.FromSlash(f))
		if st, err := os.Stat(p); err != nil || st.Size() > citeMaxFileBytes {
			continue
		}
		text := string(readFile(t, p))
		if strings.HasSuffix(f, ".go") {
			text = goProse(text)
		}
		problems = append(problems, citationProblems(root, f, text, pages)...)
	}
	for _, p := range problems {
		t.Error(p)
	}
	if len(problems) > 0 {
		t.Logf("%d citation problems", len(problems))
	}
}

// The scanner finds the citation forms the code uses and leaves URLs,
// globs and other extensions alone.
func TestDocsCitationScanner(t *testing.T) {
	text := strings.Join([]string{
		"// see docs/design/tracing.md §7.2 and frames.md#lanes",
		"// https://example.com/raw/main/guide.md is external",
		"// globs like *.md and ${name}.md are not pages, nor is notes.mdx",
		"// ../../shared/docs/old.md is outside",
		"x := \"README.md\"",
	}, "\n")
	cites, outside := citationsIn(text)
	want := []citation{
		{line: 1, page: "docs/design/tracing.md", section: "7.2"},
		{line: 1, page: "frames.md", anchor: "lanes"},
		{line: 4, page: "../../shared/docs/old.md"},
		{line: 5, page: "README.md"},
	}
	if fmt.Sprint(cites) != fmt.Sprint(want) {
		t.Errorf("citations:\n got %v\nwant %v", cites, want)
	}
	if fmt.Sprint(outside) != "[4]" {
		t.Errorf("outside lines = %v, want [4]", outside)
	}
	prose := goProse("package p\n\nvar x = \"fixture.md\" // see notes.md §2\n/* and\nplan.md */\n")
	if got, _ := citationsIn(prose); fmt.Sprint(got) != "[{3 notes.md 2 } {5 plan.md  }]" {
		t.Errorf("Go comments: got %v, want notes.md §2 on line 3 and plan.md on line 5, and no fixture.md", got)
	}
	secs := markdownSections("# Title\n## 1. Session\n### 1.1 Shape\n## §12 Keys\n```\n## 3 in a fence\n```\n## 10x\n")
	for _, s := range []string{"1", "1.1", "12"} {
		if !secs[s] {
			t.Errorf("section %s not found in %v", s, secs)
		}
	}
	for _, s := range []string{"3", "10"} {
		if secs[s] {
			t.Errorf("section %s found in %v", s, secs)
		}
	}
}

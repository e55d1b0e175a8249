package releasecheck

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// docs/README.md names, for every page, the sections it holds, each as a
// link to its heading (a page link ending in #anchor); these tests check that every such
// section exists, so the index cannot promise a section that was never
// written or has been renamed. The same check covers every #anchor link in
// docs/ and the README, within a page or to another one.

var (
	headingLine = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	htmlAnchor  = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
	inlineLink  = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	fenceLine   = regexp.MustCompile("^\\s*(```|~~~)")
)

// headingSlug is the anchor GitHub gives a heading: its text (links reduced
// to their text) lower-cased, every character that is not a letter, a
// digit, a space, a hyphen or an underscore removed, and spaces turned into
// hyphens.
func headingSlug(heading string) string {
	text := inlineLink.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// markdownAnchors returns the anchors of a Markdown text: one per heading
// outside code fences (a repeated slug gets -1, -2, … as on GitHub) and
// every HTML <a name> or <a id>.
func markdownAnchors(text string) map[string]bool {
	out := map[string]bool{}
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		if fenceLine.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		m := headingLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		slug := headingSlug(m[2])
		anchor := slug
		for n := 1; out[anchor]; n++ {
			anchor = slug + "-" + strconv.Itoa(n)
		}
		out[anchor] = true
	}
	return out
}

// anchorProblems lists the #anchor links of the Markdown file at p (within
// the page, or to another Markdown file) whose anchor no heading has.
// anchorsOf reads a linked page's anchors.
func anchorProblems(p, text string, anchorsOf func(string) (map[string]bool, error)) []string {
	var problems []string
	for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
		fields := strings.Fields(m[1])
		if len(fields) == 0 {
			continue
		}
		link := fields[0]
		if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
			continue
		}
		file, anchor, ok := strings.Cut(link, "#")
		if !ok || anchor == "" {
			continue
		}
		target := p
		if file != "" {
			if !strings.HasSuffix(file, ".md") {
				continue // an anchor into a source file is a line reference
			}
			target = path.Join(path.Dir(p), file)
		}
		anchors, err := anchorsOf(target)
		if err != nil {
			continue // TestDocsIndexAndLinks reports a missing file
		}
		if !anchors[anchor] {
			problems = append(problems, path.Base(p)+" links "+link+", but "+path.Base(target)+" has no heading with that anchor")
		}
	}
	return problems
}

func fileAnchors(cache map[string]map[string]bool) func(string) (map[string]bool, error) {
	return func(p string) (map[string]bool, error) {
		if a, ok := cache[p]; ok {
			return a, nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		cache[p] = markdownAnchors(string(b))
		return cache[p], nil
	}
}

// Every row of docs/README.md's table names its page's sections as links
// to their headings, and every #anchor link in docs/ and the README leads
// to a heading that exists.
func TestDocsIndexNamesSectionsThatExist(t *testing.T) {
	indexPath := repoPath(t, "docs/README.md")
	index := string(readFile(t, indexPath))
	rows := 0
	for _, line := range strings.Split(index, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), "|")
		if !strings.HasPrefix(line, "| [") || len(cells) < 3 {
			continue
		}
		rows++
		page := mdLink.FindStringSubmatch(cells[0])
		if page == nil {
			t.Errorf("docs/README.md row %q does not link its page", line)
			continue
		}
		says := strings.Join(cells[2:], "|")
		if !strings.Contains(says, "]("+page[1]+"#") {
			t.Errorf("docs/README.md: the row of %s names no section as a link (%s#<heading>)", page[1], page[1])
		}
	}
	if rows == 0 {
		t.Fatal("docs/README.md has no table rows")
	}
	pages, err := filepath.Glob(repoPath(t, "docs/*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, repoPath(t, "README.md"))
	anchorsOf := fileAnchors(map[string]map[string]bool{})
	for _, p := range pages {
		for _, problem := range anchorProblems(p, string(readFile(t, p)), anchorsOf) {
			t.Error(problem)
		}
	}
}

func TestHeadingSlugs(t *testing.T) {
	// slugs as GitHub renders them for headings of this repository's docs
	for heading, want := range map[string]string{
		"Deployment at scale":                              "deployment-at-scale",
		"The default port: 10617":                          "the-default-port-10617",
		"Azure SQL Database, Managed Instance, RDS, Linux": "azure-sql-database-managed-instance-rds-linux",
		"1. Protocol (internal/tds)":                       "1-protocol-internaltds",
		"1.2 TLS and encryption":                           "12-tls-and-encryption",
		"3.1 `trace` — one row; Table":                     "31-trace--one-row-table",
		"queryreplay demo and queryreplay view":            "queryreplay-demo-and-queryreplay-view",
		"See [the docs](docs/README.md) first":             "see-the-docs-first",
		"snake_case and Ünïcode":                           "snake_case-and-ünïcode",
	} {
		if got := headingSlug(heading); got != want {
			t.Errorf("headingSlug(%q) = %q, want %q", heading, got, want)
		}
	}
	anchors := markdownAnchors("# A\n## Notes\n```\n# not a heading\n```\n## Notes\n<a name=\"x1\"></a>\n### Notes ##\n")
	for _, want := range []string{"a", "notes", "notes-1", "notes-2", "x1"} {
		if !anchors[want] {
			t.Errorf("anchor %q missing from %v", want, anchors)
		}
	}
	if anchors["not-a-heading"] {
		t.Error("a line in a code fence was read as a heading")
	}
}

// The checker reports an index row that names a section its page lacks.
func TestAnchorProblemsFindsMissingSections(t *testing.T) {
	pages := map[string]map[string]bool{
		"/d/ops.md": markdownAnchors("# Ops\n## Configuration\n## Metrics\n"),
	}
	anchorsOf := func(p string) (map[string]bool, error) {
		if a, ok := pages[p]; ok {
			return a, nil
		}
		return nil, os.ErrNotExist
	}
	index := "| [ops.md](ops.md) | x | [deployment at scale](ops.md#deployment-at-scale), [metrics](ops.md#metrics) |\n" +
		"[back](#index) [intro](#intro) [code](../x.go#L10) [gone](missing.md#a) [web](https://example.com/#x)\n"
	got := anchorProblems("/d/README.md", index, func(p string) (map[string]bool, error) {
		if p == "/d/README.md" {
			return markdownAnchors("# Index\n"), nil
		}
		return anchorsOf(p)
	})
	want := []string{
		"README.md links ops.md#deployment-at-scale, but ops.md has no heading with that anchor",
		"README.md links #intro, but README.md has no heading with that anchor",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

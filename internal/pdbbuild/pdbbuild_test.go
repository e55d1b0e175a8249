package pdbbuild

import (
	"strings"
	"testing"
)

func TestFindToolsNamesMissingPackages(t *testing.T) {
	if p := findTool("no-such-tool-queryreplay"); p != "" {
		t.Errorf("found %s", p)
	}
	tools, err := FindTools()
	if err != nil {
		if !strings.Contains(err.Error(), AptPackages) {
			t.Errorf("error %q does not name the packages", err)
		}
		return
	}
	for _, p := range []string{tools.Clang, tools.LLDLink, tools.PDBUtil, tools.Symbolizer, tools.Undname} {
		if p == "" {
			t.Errorf("empty tool path in %+v", tools)
		}
	}
}

package showplan

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/sizelimit"
)

// TestReadLimit: a plan at most the limit parses as ParseBytes parses it;
// an endless one fails with the limit's name, value and knob.
func TestReadLimit(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "plans", "*", "*.sqlplan"))
	if len(files) == 0 {
		t.Fatal("no testdata plans")
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	lim := sizelimit.Error{What: "plan file x", Limit: int64(len(data)), Knob: "--max-plan-mb"}
	p, err := Read(strings.NewReader(string(data)), lim)
	want, werr := ParseBytes(data)
	if err != nil || werr != nil || len(p.Statements) != len(want.Statements) {
		t.Fatalf("a plan at the limit: %v (ParseBytes: %v)", err, werr)
	}
	lim.Limit--
	if _, err := Read(strings.NewReader(string(data)), lim); !errors.Is(err, sizelimit.ErrTooLarge) {
		t.Fatalf("a plan one byte over: %v", err)
	}
	endless := io.MultiReader(strings.NewReader("<ShowPlanXML>"), io.LimitReader(spaces{}, 1<<40))
	_, err = Read(endless, sizelimit.Error{Limit: 1 << 20, Knob: "--max-plan-mb"})
	if !errors.Is(err, sizelimit.ErrTooLarge) || !strings.Contains(err.Error(), "the plan exceeds the limit of 1 MB; raise it with --max-plan-mb") {
		t.Fatalf("an endless plan: %v", err)
	}
}

type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

package pdbtest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// recorder captures how a test would have ended.
type recorder struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (r *recorder) Helper() {}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped, r.msg = true, fmt.Sprintf(format, args...)
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
}

func TestMissingToolsFailUnlessSkipAllowed(t *testing.T) {
	err := errors.New("missing lld-link (install the Debian packages: apt-get install -y clang lld llvm)")
	t.Setenv("QUERYREPLAY_ALLOW_SKIP", "")
	r := &recorder{TB: t}
	missingTools(r, err)
	if !r.failed || r.skipped || !strings.Contains(r.msg, "apt-get install -y clang lld llvm") || !strings.Contains(r.msg, "QUERYREPLAY_ALLOW_SKIP=1") {
		t.Errorf("without the variable: failed=%v skipped=%v %q", r.failed, r.skipped, r.msg)
	}
	t.Setenv("QUERYREPLAY_ALLOW_SKIP", "1")
	r = &recorder{TB: t}
	missingTools(r, err)
	if !r.skipped || r.failed {
		t.Errorf("with QUERYREPLAY_ALLOW_SKIP=1: failed=%v skipped=%v", r.failed, r.skipped)
	}
}

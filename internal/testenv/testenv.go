// Package testenv holds what several packages' tests need from their
// environment: external programs from Debian packages, and a buffer that
// goroutines may write while a test reads it. It is for tests only and must
// not be imported by production code.
package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// AllowSkip reports whether QUERYREPLAY_ALLOW_SKIP=1 asks tests to skip,
// rather than fail, when something the machine should have is missing.
func AllowSkip() bool { return os.Getenv("QUERYREPLAY_ALLOW_SKIP") == "1" }

// Missing fails the test, naming the Debian package to install, or skips it
// when AllowSkip. make setup installs every package in
// scripts/apt-packages.txt, so on a prepared machine this never runs.
func Missing(tb testing.TB, what, debianPackage string, err error) {
	tb.Helper()
	msg := fmt.Sprintf("%s is not available (install it with `apt-get install -y %s`, or set QUERYREPLAY_ALLOW_SKIP=1 to skip): %v",
		what, debianPackage, err)
	if AllowSkip() {
		tb.Skip(msg)
		return
	}
	tb.Fatal(msg)
}

// RequireTool returns the path of the program name, from debianPackage, or
// ends the test through Missing.
func RequireTool(tb testing.TB, name, debianPackage string) string {
	tb.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		Missing(tb, name, debianPackage, err)
	}
	return path
}

// SyncBuffer is a bytes.Buffer safe for concurrent Write and String.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Golden compares got with the golden file at path, or writes it when update
// is set (each package's -update flag). A difference fails the test at the
// first line that differs, with the command to refresh the file.
func Golden(tb testing.TB, path string, got []byte, update bool) {
	tb.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("golden file: %v (run go test -update to create it)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) && i < len(wl); i++ {
		if gl[i] != wl[i] {
			tb.Fatalf("%s differs at line %d:\n got: %.300s\nwant: %.300s\n(run go test -update after checking the change)", path, i+1, gl[i], wl[i])
		}
	}
	tb.Fatalf("%s differs in length: got %d lines, want %d (run go test -update after checking the change)", path, len(gl), len(wl))
}

// pollInterval is how often Poll checks its condition: short, so a test
// goes on soon after what it waits for happened, and long enough not to
// keep a core busy on a loaded machine.
const pollInterval = 5 * time.Millisecond

// Poll checks cond every few milliseconds until it holds (true) or limit
// has passed (false, after one last check). It is how a test waits for
// something another goroutine, process or server does — a session to
// block, a socket close to be noticed — instead of sleeping and hoping.
func Poll(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return cond()
		}
		time.Sleep(pollInterval)
	}
	return true
}

// WaitFor polls cond as Poll does and fails the test, naming what it
// waited for, when cond does not hold within limit.
func WaitFor(tb testing.TB, limit time.Duration, what string, cond func() bool) {
	tb.Helper()
	if !Poll(limit, cond) {
		tb.Fatalf("timed out after %s waiting for %s", limit, what)
	}
}

package testenv

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recorder is a testing.TB that records how a helper ended the test.
type recorder struct {
	testing.TB
	msg             string
	failed, skipped bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Fatal(args ...any)     { r.failed, r.msg = true, fmt.Sprint(args...) }
func (r *recorder) Skip(args ...any)      { r.skipped, r.msg = true, fmt.Sprint(args...) }
func (r *recorder) Fatalf(string, ...any) {}

func TestRequireToolFailsOrSkips(t *testing.T) {
	t.Setenv("QUERYREPLAY_ALLOW_SKIP", "")
	r := &recorder{TB: t}
	RequireTool(r, "no-such-program-queryreplay", "some-package")
	if !r.failed || !strings.Contains(r.msg, "apt-get install -y some-package") {
		t.Fatalf("without the env: %+v", r)
	}
	t.Setenv("QUERYREPLAY_ALLOW_SKIP", "1")
	r = &recorder{TB: t}
	RequireTool(r, "no-such-program-queryreplay", "some-package")
	if !r.skipped || r.failed {
		t.Fatalf("with QUERYREPLAY_ALLOW_SKIP=1: %+v", r)
	}
	if p := RequireTool(t, "sh", "dash"); p == "" {
		t.Fatal("sh not found")
	}
}

func TestSyncBufferConcurrentWrites(t *testing.T) {
	var b SyncBuffer
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				fmt.Fprint(&b, "x")
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if n := len(b.String()); n != 800 {
		t.Fatalf("%d bytes, want 800", n)
	}
}

func TestGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "g.txt")
	Golden(t, path, []byte("a\nb\n"), true)
	Golden(t, path, []byte("a\nb\n"), false)
	if msg := goldenFailure(t, path, "a\nc\n"); !strings.Contains(msg, "differs at line 2") {
		t.Fatalf("message %q", msg)
	}
	if msg := goldenFailure(t, filepath.Join(t.TempDir(), "none.txt"), "x"); !strings.Contains(msg, "-update") {
		t.Fatalf("message %q", msg)
	}
}

// goldenFailure runs Golden on its own goroutine (a failing Golden ends it)
// and returns the failure message.
func goldenFailure(t *testing.T, path, got string) string {
	r := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Golden(r, path, []byte(got), false)
	}()
	<-done
	return r.msg
}

// fatalRecorder records the first Fatalf and stops the helper the way
// t.Fatalf would.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}
func (r *fatalRecorder) Fatalf(format string, args ...any) {
	if r.msg == "" {
		r.msg = fmt.Sprintf(format, args...)
	}
	runtime.Goexit()
}

// fatalfRecorder records a Fatalf, which WaitFor ends the test with.
type fatalfRecorder struct {
	testing.TB
	msg string
}

func (r *fatalfRecorder) Helper()                      {}
func (r *fatalfRecorder) Fatalf(f string, args ...any) { r.msg = fmt.Sprintf(f, args...) }

func TestPollWaitsForTheCondition(t *testing.T) {
	var n atomic.Int32
	go func() {
		for range 3 {
			n.Add(1)
			runtime.Gosched()
		}
	}()
	if !Poll(10*time.Second, func() bool { return n.Load() == 3 }) {
		t.Fatalf("Poll gave up with n = %d", n.Load())
	}
	checks := 0
	if Poll(20*time.Millisecond, func() bool { checks++; return false }) {
		t.Fatal("Poll reported a condition that never held")
	}
	if checks < 2 {
		t.Errorf("Poll checked %d times in 20 ms; want it to retry", checks)
	}
	r := &fatalfRecorder{TB: t}
	WaitFor(r, 10*time.Millisecond, "the moon", func() bool { return false })
	if !strings.Contains(r.msg, "waiting for the moon") {
		t.Errorf("WaitFor's failure %q does not name what it waited for", r.msg)
	}
	r = &fatalfRecorder{TB: t}
	WaitFor(r, time.Second, "something true", func() bool { return true })
	if r.msg != "" {
		t.Errorf("WaitFor failed on a condition that held: %q", r.msg)
	}
}

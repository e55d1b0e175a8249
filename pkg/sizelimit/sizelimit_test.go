package sizelimit

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/queryreplay/queryreplay/internal/testbomb"
)

func TestReadAll(t *testing.T) {
	lim := Error{What: "the thing", Limit: 1000, Knob: "--max-thing"}
	for _, n := range []int{0, 1, 511, 512, 513, 999, 1000} {
		in := bytes.Repeat([]byte{'x'}, n)
		got, err := ReadAll(iotest.HalfReader(bytes.NewReader(in)), lim)
		if err != nil || !bytes.Equal(got, in) {
			t.Errorf("%d bytes: %d bytes, %v", n, len(got), err)
		}
	}
	for _, n := range []int{1001, 1024, 1 << 20} {
		_, err := ReadAll(bytes.NewReader(make([]byte, n)), lim)
		var se *Error
		if !errors.As(err, &se) || !errors.Is(err, ErrTooLarge) || se.Limit != 1000 {
			t.Fatalf("%d bytes over a limit of 1000: %v", n, err)
		}
		for _, want := range []string{"the thing", "1000 bytes", "--max-thing"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
	}
	boom := errors.New("boom")
	if _, err := ReadAll(iotest.ErrReader(boom), lim); !errors.Is(err, boom) {
		t.Errorf("a read error came back as %v", err)
	}
}

// TestReadAllAllocates checks the point of ReadAll: an endless input costs
// about three times the limit, not what the input would give.
func TestReadAllAllocates(t *testing.T) {
	const limit = 4 << 20
	got := testbomb.Alloc(func() {
		if _, err := ReadAll(io.LimitReader(zeros{}, 1<<40), Error{What: "x", Limit: limit}); err == nil {
			t.Error("an endless input was read without error")
		}
	})
	if got > 4*limit {
		t.Fatalf("reading past a limit of %d bytes allocated %d bytes", limit, got)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{256 << 20: "256 MB", 4 << 10: "4 KB", 1000: "1000 bytes", (1 << 20) + 1: "1048577 bytes"} {
		if got := Format(n); got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCheck(t *testing.T) {
	lim := Error{What: "the body", Limit: 10}
	if Check(10, lim) != nil || !errors.Is(Check(11, lim), ErrTooLarge) {
		t.Fatal("Check misjudged 10 and 11 against 10")
	}
}

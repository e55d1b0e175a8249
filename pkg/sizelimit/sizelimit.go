// Package sizelimit bounds the bytes an input may take before it is parsed:
// a bundle, a plan, a query's JSON, a request body. Every bound is named,
// so that the error a too-large input gets says which limit it hit, its
// value, and the flag or setting that raises it.
package sizelimit

import (
	"errors"
	"fmt"
	"io"
)

// Error is an input larger than its limit.
type Error struct {
	// What is the input ("the bundle (decompressed)", "the query JSON").
	What string
	// Limit is the bound in bytes.
	Limit int64
	// Knob is the flag or setting that raises it ("--max-bundle-mb",
	// "datasource setting traceStore.maxBundleMB"); empty when none.
	Knob string
}

// The messages: with the knob that raises the limit, and without one.
const (
	whyTooLargeKnob = "%s exceeds the limit of %s; raise it with %s"
	whyTooLarge     = "%s exceeds the limit of %s"
)

func (e *Error) Error() string {
	if e.Knob != "" {
		return fmt.Sprintf(whyTooLargeKnob, e.What, Format(e.Limit), e.Knob)
	}
	return fmt.Sprintf(whyTooLarge, e.What, Format(e.Limit))
}

// Is makes errors.Is(err, ErrTooLarge) true for every *Error.
func (e *Error) Is(target error) bool { return target == ErrTooLarge }

// ErrTooLarge matches every *Error with errors.Is.
var ErrTooLarge = errors.New("input too large")

// Format writes n bytes as whole MB when it is a multiple of 1 MB (the
// unit the knobs take), else KB or bytes.
func Format(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadAll reads r to its end, at most limit bytes; more is an *Error.
// The buffer doubles as it grows but never past limit+1 bytes, so a read
// allocates at most about three times the limit in all, whatever r gives
// (io.ReadAll grows by a quarter at a time and without bound).
func ReadAll(r io.Reader, limit Error) ([]byte, error) {
	most := limit.Limit + 1
	buf := make([]byte, 0, min(512, most))
	for {
		if len(buf) == cap(buf) {
			if int64(cap(buf)) >= most {
				return nil, &limit
			}
			buf = append(make([]byte, 0, min(2*int64(cap(buf)), most)), buf...)
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			if int64(len(buf)) > limit.Limit {
				return nil, &limit
			}
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// Check fails with *Error when n bytes exceed the limit.
func Check(n int64, limit Error) error {
	if n > limit.Limit {
		return &limit
	}
	return nil
}

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/queryreplay/queryreplay/pkg/xe"
)

// eventSource reads events from event XML (any form xe.Decoder reads) or a
// binary .xel file, told apart by the file's first bytes. Events are views
// valid until the next call to next. A histogram target document holds no
// events: histogram is then set and next is nil.
type eventSource struct {
	next func() (xe.Event, error)
	// xml is the XML decoder, nil for .xel input.
	xml *xe.Decoder
	// histogram is the reader of a <HistogramTarget> document.
	histogram io.Reader
}

// readOptions change how a file is read.
type readOptions struct {
	// skipText skips text between events (the other columns of a result
	// set printed as a table) instead of reporting it as malformed rows.
	skipText bool
	// slot, when set, receives the slots of a histogram target document;
	// without it a histogram is an error.
	slot func(i int, s *xe.HistogramSlot) error
	// histogram, when set, receives the histogram's own attributes.
	histogram func(h *xe.Histogram)
}

func newEventSource(r io.Reader, opts readOptions) *eventSource {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(6)
	if xe.IsXEL(head) {
		xr := xe.NewXELReader(br)
		xr.ReuseEvents()
		return &eventSource{next: xr.Next}
	}
	if head, _ := br.Peek(1024); xe.IsHistogram(head) {
		return &eventSource{histogram: br}
	}
	dec := xe.NewDecoder(br)
	dec.ReuseEvents()
	if opts.skipText {
		dec.SkipTextBetweenEvents()
	}
	return &eventSource{next: dec.Next, xml: dec}
}

// errStopEvents, returned by eachEvent's callback, ends the file early
// without an error.
var errStopEvents = errors.New("stop reading events")

// eachEvent decodes one file ("-", or "" as kingpin passes a lone "-", is
// standard input) and calls fn for every event; fn must not keep the event.
// Malformed rows are reported on stderr (when e is not nil) and counted in
// bad; decoding goes on after them. src is nil only when the file could not
// be opened.
func eachEvent(ctx context.Context, name string, e *env, fn func(*xe.Event) error) (events, bad int, src *eventSource, err error) {
	return readEvents(ctx, name, e, readOptions{}, fn)
}

// readEvents is eachEvent with options; histogram slots count as events.
func readEvents(ctx context.Context, name string, e *env, opts readOptions, fn func(*xe.Event) error) (events, bad int, src *eventSource, err error) {
	var r io.Reader
	if name == "-" || name == "" {
		if e == nil {
			return 0, 0, nil, errors.New("standard input can be read once only")
		}
		r, name = e.stdin, "<stdin>"
	} else {
		f, err := os.Open(name)
		if err != nil {
			return 0, 0, nil, err
		}
		defer f.Close()
		r = f
	}
	src = newEventSource(r, opts)
	if src.histogram != nil {
		n, err := readHistogram(name, src.histogram, opts)
		return n, 0, src, err
	}
	for n := 0; ; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return events, bad, src, err
			}
		}
		ev, err := src.next()
		if err == io.EOF {
			return events, bad, src, nil
		}
		var rowErr *xe.RowError
		if errors.As(err, &rowErr) {
			bad++
			if e != nil {
				fmt.Fprintf(e.stderr, "%s: %v\n", name, rowErr)
			}
			continue
		}
		if err != nil {
			return events, bad, src, fmt.Errorf("%s: %w", name, err)
		}
		events++
		if err := fn(&ev); err != nil {
			if errors.Is(err, errStopEvents) {
				return events, bad, src, nil
			}
			return events, bad, src, err
		}
	}
}

// readHistogram hands a histogram target's slots to opts.slot.
func readHistogram(name string, r io.Reader, opts readOptions) (int, error) {
	if opts.slot == nil {
		return 0, fmt.Errorf("%s is a histogram target (<HistogramTarget>): its slots count events but hold none; read it with queryreplay xe decode", name)
	}
	h, err := xe.DecodeHistogram(r)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	if opts.histogram != nil {
		opts.histogram(&h)
	}
	for i := range h.Slots {
		if err := opts.slot(i, &h.Slots[i]); err != nil {
			return i, err
		}
	}
	return len(h.Slots), nil
}

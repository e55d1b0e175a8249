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
// valid until the next call to next.
type eventSource struct {
	next func() (xe.Event, error)
	// xml is the XML decoder, nil for .xel input.
	xml *xe.Decoder
}

func newEventSource(r io.Reader) *eventSource {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(6)
	if xe.IsXEL(head) {
		xr := xe.NewXELReader(br)
		xr.ReuseEvents()
		return &eventSource{next: xr.Next}
	}
	dec := xe.NewDecoder(br)
	dec.ReuseEvents()
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
	src = newEventSource(r)
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

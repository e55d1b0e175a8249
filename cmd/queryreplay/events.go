package main

import (
	"bufio"
	"io"

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

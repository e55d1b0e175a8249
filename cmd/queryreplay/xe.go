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

func init() {
	commands = append(commands, func(c *cli) {
		xeCmd := c.app.Command("xe", "Extended Events tools.")
		decode := xeCmd.Command("decode", "Decode events to JSON lines: event XML (result-set dumps, <event> streams, ring_buffer documents) or binary .xel files.")
		format := decode.Flag("format", "Output format.").Default("jsonl").Enum("jsonl")
		files := decode.Arg("FILE", "Event XML or .xel files; - reads standard input.").Required().Strings()
		c.register(decode, func(ctx context.Context, e *env) error {
			return runXEDecode(ctx, e, *format, *files)
		})
	})
}

// runXEDecode writes one JSON object per event to stdout. Malformed rows are
// reported on stderr with their file and row and decoding goes on; the exit
// status is 1 if any row failed.
func runXEDecode(ctx context.Context, e *env, format string, files []string) error {
	if format != "jsonl" {
		return withStatus(2, fmt.Errorf("unknown format %q", format))
	}
	out := bufio.NewWriterSize(e.stdout, 256<<10)
	failedRows := 0
	var fatal error
	for _, name := range files {
		n, err := decodeXEFile(ctx, e, out, name)
		failedRows += n
		if err != nil {
			fatal = errors.Join(fatal, err)
		}
	}
	if err := out.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	if fatal != nil {
		return withStatus(1, fatal)
	}
	if failedRows > 0 {
		return withStatus(1, fmt.Errorf("%d row(s) could not be decoded", failedRows))
	}
	return nil
}

func decodeXEFile(ctx context.Context, e *env, out *bufio.Writer, name string) (failed int, err error) {
	var r io.Reader
	// kingpin hands a lone "-" over as "" (an empty path can name no file).
	if name == "-" || name == "" {
		r = e.stdin
		name = "<stdin>"
	} else {
		f, err := os.Open(name)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		r = f
	}
	src := newEventSource(r) // each event is written out before the next is read
	var line []byte
	events := 0
	for {
		if events%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return failed, err
			}
		}
		ev, err := src.next()
		if err == io.EOF {
			break
		}
		var rowErr *xe.RowError
		if errors.As(err, &rowErr) {
			failed++
			fmt.Fprintf(e.stderr, "%s: %v\n", name, rowErr)
			continue
		}
		if err != nil {
			return failed, fmt.Errorf("%s: %w", name, err)
		}
		events++
		line = ev.AppendJSON(line[:0])
		line = append(line, '\n')
		if _, err := out.Write(line); err != nil {
			return failed, fmt.Errorf("write output: %w", err)
		}
	}
	if src.xml == nil {
		return failed, nil
	}
	if rb, ok := src.xml.RingBuffer(); ok {
		e.log.Info("ring_buffer target", "file", name, "truncated", rb.Truncated, "eventCount", rb.EventCount,
			"droppedCount", rb.DroppedCount, "totalEventsProcessed", rb.TotalEventsProcessed, "decoded", events)
		if rb.Truncated || rb.DroppedCount > 0 || uint64(events+failed) < rb.EventCount {
			e.log.Warn("ring_buffer document is missing events", "file", name, "truncated", rb.Truncated,
				"droppedCount", rb.DroppedCount, "eventCount", rb.EventCount, "decoded", events)
		}
	}
	return failed, nil
}

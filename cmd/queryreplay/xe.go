package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"

	"github.com/queryreplay/queryreplay/pkg/xe"
)

func init() {
	commands = append(commands, func(c *cli) {
		xeCmd := c.app.Command("xe", "Extended Events tools.")
		decode := xeCmd.Command("decode", "Decode events to JSON lines: event XML (result-set dumps, <event> streams, ring_buffer documents), histogram targets or binary .xel files.").
			Help("Decode events to JSON lines, one object per event.\n\n" +
				"Reads, told apart by their content: event XML — rows of sys.fn_xe_file_target_read_file, " +
				"also as a result set printed as a table (the other columns between the events are skipped), " +
				"concatenated <event> elements, ring_buffer <RingBufferTarget> documents —, histogram target " +
				"documents (<HistogramTarget>: one object per slot, {\"slot\":i,\"count\":n,\"value\":…}) " +
				"and binary .xel files. UTF-8 or UTF-16 (with or without a byte-order mark). Malformed rows are " +
				"reported on stderr with their row, line and the position of the problem, and decoding goes on; " +
				"the exit status is then 1.")
		format := decode.Flag("format", "Output format.").Default("jsonl").Enum("jsonl")
		strict := decode.Flag("strict", "Report text between events (result-set columns, log lines) as malformed rows instead of skipping it.").Bool()
		files := decode.Arg("FILE", "Event XML, histogram or .xel files; - reads standard input.").Required().Strings()
		c.register(decode, func(ctx context.Context, e *env) error {
			return runXEDecode(ctx, e, *format, *strict, *files)
		})
	})
}

// runXEDecode writes one JSON object per event to stdout. Malformed rows are
// reported on stderr with their file and row and decoding goes on; the exit
// status is 1 if any row failed.
func runXEDecode(ctx context.Context, e *env, format string, strict bool, files []string) error {
	if format != "jsonl" {
		return withStatus(2, fmt.Errorf("unknown format %q", format))
	}
	out := bufio.NewWriterSize(e.stdout, 256<<10)
	failedRows := 0
	var fatal error
	for _, name := range files {
		n, err := decodeXEFile(ctx, e, out, name, strict)
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

func decodeXEFile(ctx context.Context, e *env, out *bufio.Writer, name string, strict bool) (failed int, err error) {
	var line []byte
	write := func() error {
		line = append(line, '\n')
		if _, err := out.Write(line); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
		return nil
	}
	opts := readOptions{
		skipText: !strict,
		slot: func(i int, s *xe.HistogramSlot) error {
			line = s.AppendJSON(line[:0], i)
			return write()
		},
		histogram: func(h *xe.Histogram) {
			e.log.Info("histogram target", "file", name, "buckets", h.Buckets, "slots", len(h.Slots), "truncated", h.Truncated)
			if h.Truncated {
				e.log.Warn("histogram target is truncated: slots are missing", "file", name)
			}
		},
	}
	events, failed, src, err := readEvents(ctx, name, e, opts, func(ev *xe.Event) error {
		line = ev.AppendJSON(line[:0])
		return write()
	})
	if err != nil || src.xml == nil {
		return failed, err
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

package timeline

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// AppendJSON appends exactly what json.Marshal(t) writes (a nil t is
// null), without encoding/json's second pass over the lanes: it compacts
// and validates every byte a MarshalJSON method returns, and the lanes are
// nearly all of a trace. Storing a finished live trace (issue 29) writes
// the trace through here. The fields are Trace's, in its order, with its
// tags' omitempty; the small ones are json.Marshal's own work.
func (t *Trace) AppendJSON(dst []byte) ([]byte, error) {
	if t == nil {
		return append(dst, "null"...), nil
	}
	dst = slices.Grow(dst, t.Lanes.laneEntries()*entryJSONSize+len(t.Statement)+4096)
	dst = strconv.AppendInt(append(dst, `{"schema":`...), int64(t.Schema), 10)
	dst = appendStringField(dst, `,"zeroTime":`, t.ZeroTime)
	dst = appendInt(dst, `,"start":`, t.Start)
	dst = appendInt(dst, `,"end":`, t.End)
	if t.Statement != "" {
		dst = appendStringField(dst, `,"statement":`, t.Statement)
	}
	dst, err := appendMarshalled(dst, `,"operators":`, t.Operators)
	if err != nil {
		return nil, err
	}
	dst = t.Lanes.appendJSON(append(dst, `,"lanes":`...))
	if dst, err = appendMarshalled(dst, `,"summary":`, &t.Summary); err != nil {
		return nil, err
	}
	if len(t.Stacks) > 0 {
		if dst, err = appendMarshalled(dst, `,"stacks":`, t.Stacks); err != nil {
			return nil, err
		}
	}
	if len(t.Pages) > 0 {
		if dst, err = appendMarshalled(dst, `,"pages":`, t.Pages); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// appendMarshalled appends key and json.Marshal(v).
func appendMarshalled(dst []byte, key string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("trace %s: %w", key[2:len(key)-2], err)
	}
	return append(append(dst, key...), b...), nil
}

// UnmarshalJSON reads a saved trace (a tracer bundle's trace part). It reads
// this schema and schema 1, the JSON written before the schema field
// existed, and refuses a newer schema by name rather than misreading it.
//
// Schema 1 differs in what it lacks, except for one field: it marked open
// intervals only by LockInterval.HeldToEnd and IOInterval.Completed=false,
// which the upgrade turns into Open. Everything schema 2 added (ambiguous
// matches, gaps, duplicates, not-executed operators, cycles, threads,
// exchanges) is simply absent from a schema 1 trace.
func (t *Trace) UnmarshalJSON(b []byte) error {
	type plain Trace // no methods: no recursion
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	switch {
	case p.Schema > Schema:
		return fmt.Errorf("trace schema %d is newer than this build reads (up to %d): update queryreplay", p.Schema, Schema)
	case p.Schema < 0:
		return fmt.Errorf("trace schema %d is not a schema", p.Schema)
	case p.Schema <= 1:
		upgradeSchema1((*Trace)(&p))
	case p.Schema == 2:
		// schema 3 only added the stack table, per-entry stack ids and page
		// headers, which a schema 2 trace simply lacks
		p.Schema = Schema
	}
	upgradeWaits((*Trace)(&p))
	*t = Trace(p)
	return nil
}

// upgradeWaits gives a wait saved before durationSource existed its
// measured length: those traces copied the event's whole-millisecond
// duration onto a wait whose begin and end were both captured, so a
// 476 µs wait read 0 (issue 26).
func upgradeWaits(t *Trace) {
	for i := range t.Lanes.Wait {
		w := &t.Lanes.Wait[i]
		if w.DurationSource != "" || w.Open {
			continue
		}
		w.DurationMs = w.DurationUs / 1000
		w.UnderOneMs = w.DurationUs == 0
		if d := w.End - w.T; d > 0 && uint64(d) > w.DurationUs {
			w.DurationUs, w.DurationSource = uint64(d), "events"
		} else {
			w.DurationSource = "duration_ms"
		}
	}
}

func upgradeSchema1(t *Trace) {
	for i := range t.Lanes.Lock {
		if t.Lanes.Lock[i].HeldToEnd {
			t.Lanes.Lock[i].Open = true
		}
	}
	for i := range t.Lanes.IO {
		if !t.Lanes.IO[i].Completed {
			t.Lanes.IO[i].Open = true
		}
	}
	t.Schema = Schema
}

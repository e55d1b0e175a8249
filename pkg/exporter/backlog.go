package exporter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/pkg/tsql"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// The backlog of a kept session (drop_session_on_shutdown: false): the
// events it records while no exporter runs. The next process cannot tell
// them from the events its predecessor already counted by content, so the
// predecessor marks where it stopped reading: at a clean shutdown it stops
// and starts the session again, and the start time
// (sys.dm_xe_sessions.create_time) becomes the boundary. The next process
// counts the events recorded since then as lost (events_lost_total) instead
// of counting them as data in one burst at its start.
//
// After a killed exporter there is no mark: the session's create_time is
// that process's own start, so the events it already counted would be
// counted again as lost. The count is then an upper bound (docs/operations.md,
// "Session lifecycle").

// markKept stops and starts the kept session so that its create_time marks
// the end of this process's reading.
func (t *target) markKept(ctx context.Context) error {
	for _, ddl := range []string{t.spec.stopDDL(), t.spec.startDDL()} {
		if _, err := t.db.ExecContext(ctx, ddl); err != nil {
			return fmt.Errorf("target %s: mark the kept session %s: %w", t.cfg.Name, t.spec.name, err)
		}
	}
	t.log.Info("session kept running", "session", t.spec.name)
	return nil
}

// countBacklog counts the events the adopted session recorded since its
// last start as lost. The session is stopped first, so its buffered events
// reach the event file; a ring buffer's events are counted before, because
// a stopped session's ring buffer is gone.
func (t *target) countBacklog(ctx context.Context, spec *sessionSpec) error {
	prev := t.spec
	t.spec = spec
	st, running, err := t.readState(ctx)
	t.spec = prev
	if err != nil || !running {
		return err
	}
	var n uint64
	if spec.target == "ring_buffer" {
		n, err = countRingEvents(t.dec, st.targetData)
	} else {
		n, err = t.countFileEvents(ctx, spec, st.created)
	}
	if err != nil {
		return err
	}
	t.mu.Lock()
	t.st.lost += n
	t.mu.Unlock()
	if n > 0 {
		t.log.Warn("events recorded while no exporter ran are counted as lost", "session", spec.name, "events", n)
	}
	return nil
}

// countFileEvents stops the session and counts its file events stamped at
// or after since. timestamp_utc is the event's time in UTC
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-functions/sys-fn-xe-file-target-read-file-transact-sql);
// since is taken to the millisecond, the coarsest precision either column
// may have, so an event of the start's own millisecond is not left out.
func (t *target) countFileEvents(ctx context.Context, spec *sessionSpec, since time.Time) (uint64, error) {
	pattern := t.cursor.pattern
	if pattern == "" {
		return 0, errors.New("the event_file target reports no file name")
	}
	if _, err := t.db.ExecContext(ctx, spec.stopDDL()); err != nil {
		return 0, fmt.Errorf("stop the kept session: %w", err)
	}
	var n int64
	err := t.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM sys.fn_xe_file_target_read_file("+tsql.QuoteString(pattern)+
		", NULL, NULL, NULL) WHERE timestamp_utc >= @p1", since.UTC().Truncate(time.Millisecond)).Scan(&n)
	if err != nil {
		if isNoEventFile(err) {
			return 0, nil
		}
		return 0, fmt.Errorf("count the kept session's backlog: %w", err)
	}
	return uint64(max(n, 0)), nil
}

// countRingEvents counts the events of a ring buffer's target_data
// (malformed ones included: they were recorded too).
func countRingEvents(dec *xe.Decoder, data string) (uint64, error) {
	dec.Reset(strings.NewReader(data))
	var n uint64
	for range maxRingEvents {
		_, err := dec.Next()
		if err == io.EOF {
			return n, nil
		}
		var re *xe.RowError
		if err != nil && !errors.As(err, &re) {
			return n, fmt.Errorf("decode the ring buffer: %w", err)
		}
		n++
	}
	return n, nil
}

// maxRingEvents bounds the count loop; a ring buffer holds far fewer
// (session.ring_buffer.max_events).
const maxRingEvents = 10_000_000

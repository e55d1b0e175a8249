package exporter

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/tsql"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// seqTracker follows package0.event_sequence, which the session adds to
// every event: it numbers the events of one session start consecutively
// (docs/design/tracing.md §3). It tells a duplicate (an event already counted, read
// again after a poll failed half-way) from a new event, and how many events
// were lost before a new one.
//
// Sequences are compared only within one scope: an event file (a session
// start always opens a new file, so one file never holds two numberings)
// or, for the ring buffer, one session start (sys.dm_xe_sessions.create_time).
// In a new scope, a sequence above the last one continues the numbering (a
// rollover file); one at or below it starts a new numbering (the session was
// started again), whose events before it were lost.
type seqTracker struct {
	scope string
	last  uint64
	known bool
}

// startFresh marks a session just created: its numbering starts at 1.
func (s *seqTracker) startFresh() { *s = seqTracker{known: true} }

// startUnknown marks a resume point whose last sequence is unknown (events
// skipped at startup): the next event sets the baseline.
func (s *seqTracker) startUnknown() { *s = seqTracker{} }

// observe returns whether the event is a duplicate and how many events were
// lost just before it.
func (s *seqTracker) observe(scope string, seq uint64) (dup bool, lost uint64) {
	switch {
	case !s.known:
	case scope == s.scope && seq <= s.last:
		return true, 0
	case scope == s.scope || seq > s.last:
		lost = seq - s.last - 1
	case seq > 0:
		lost = seq - 1 // a new numbering
	}
	s.scope, s.last, s.known = scope, seq, true
	return false, lost
}

// skip marks the next n sequence numbers as seen: events the server left
// out of a truncated ring_buffer document, already counted lost, are
// duplicates should a later poll see them.
func (s *seqTracker) skip(n uint64) {
	if s.known {
		s.last += n
	}
}

// fileCursor is where the reading of an event_file target stands.
// fn_xe_file_target_read_file(pattern, NULL, initial_file_name,
// initial_offset) resumes after the buffer at that offset
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-functions/sys-fn-xe-file-target-read-file-transact-sql):
// every event of a buffer shares its file_offset, so the bookmark is the
// last buffer read to its end. A buffer read only in part (the connection
// dropped) is read again from its start, and event_sequence drops what was
// already counted.
type fileCursor struct {
	pattern string
	// bookmark: the last buffer read completely.
	bookFile   string
	bookOffset int64
	hasBook    bool
	// skip: after the server refused the bookmark (its file rolled over),
	// rows up to it are skipped here instead.
	skipFile   string
	skipOffset int64
	skipping   bool
	seq        seqTracker
}

// readQuery returns the read-back statement. The pattern and file name are
// quoted with tsql.QuoteString; the offset is a number.
func (c *fileCursor) readQuery() string {
	file, offset := "NULL", "NULL"
	if c.hasBook {
		file, offset = tsql.QuoteString(c.bookFile), strconv.FormatInt(c.bookOffset, 10)
	}
	return fmt.Sprintf("SELECT object_name, event_data, file_name, file_offset FROM sys.fn_xe_file_target_read_file(%s, NULL, %s, %s)",
		tsql.QuoteString(c.pattern), file, offset)
}

// fallBack drops the bookmark the server refused and skips up to it
// client-side on the next read.
func (c *fileCursor) fallBack() {
	if c.hasBook {
		c.skipFile, c.skipOffset, c.skipping = c.bookFile, c.bookOffset, true
	}
	c.hasBook = false
}

func (c *fileCursor) setBookmark(file string, offset int64) {
	c.bookFile, c.bookOffset, c.hasBook = file, offset, true
}

// fileRow is one row of fn_xe_file_target_read_file.
type fileRow struct {
	data   []byte
	file   string
	offset int64
}

// fileRows is the read-back result set (sqlFileRows in production; tests
// inject failures half-way through).
type fileRows interface {
	Next() bool
	Row() (fileRow, error)
	Err() error
	Close() error
}

// readStats counts what a read saw besides the aggregated events.
type readStats struct {
	events, duplicates, lost uint64
}

// consume reads rows into b, moving the bookmark at each buffer boundary.
// Whatever was aggregated stays in b when the rows fail half-way: those
// events are counted, and the sequence tracker will drop them when their
// buffer is read again.
//
// Each row's event_data is decoded where it lies (xe.Decoder.DecodeRow
// copies nothing), so a malformed row is counted and skipped without
// losing track of the others.
func (c *fileCursor) consume(rows fileRows, dec *xe.Decoder, b *batch, st *readStats) error {
	var curFile string
	var curOffset int64
	started := false
	for rows.Next() {
		r, err := rows.Row()
		if err != nil {
			return err
		}
		if c.skipping {
			if !after(r.file, r.offset, c.skipFile, c.skipOffset) {
				continue
			}
			c.skipping = false
		}
		if !started || r.file != curFile || r.offset != curOffset {
			if started {
				c.setBookmark(curFile, curOffset)
			}
			curFile, curOffset, started = r.file, r.offset, true
		}
		ev, err := dec.DecodeRow(r.data)
		if err != nil {
			b.malformed++
			continue
		}
		c.aggregate(&ev, r.file, b, st)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if started {
		c.setBookmark(curFile, curOffset)
	}
	return nil
}

// aggregate counts one event unless event_sequence says it was counted.
func (c *fileCursor) aggregate(ev *xe.Event, file string, b *batch, st *readStats) {
	ctx := contextOf(ev)
	if ctx.hasSeq {
		dup, lost := c.seq.observe(file, ctx.seq)
		if dup {
			st.duplicates++
			return
		}
		st.lost += lost
	}
	st.events++
	b.add(ev, ctx)
}

// after tells whether (file, offset) comes after (refFile, refOffset) in
// reading order: files by the FILETIME SQL Server puts in their names
// (<name>_0_<FILETIME>.xel), then by offset.
func after(file string, offset int64, refFile string, refOffset int64) bool {
	if strings.EqualFold(file, refFile) {
		return offset > refOffset
	}
	a, okA := fileTime(file)
	b, okB := fileTime(refFile)
	if okA && okB {
		return a > b
	}
	return strings.ToLower(file) > strings.ToLower(refFile)
}

// fileTime extracts the FILETIME of an event file name.
func fileTime(name string) (uint64, bool) {
	base := name[strings.LastIndexAny(name, `/\`)+1:]
	base = strings.TrimSuffix(strings.TrimSuffix(base, ".xel"), ".XEL")
	i := strings.LastIndex(base, "_")
	if i < 0 {
		return 0, false
	}
	v, err := strconv.ParseUint(base[i+1:], 10, 64)
	return v, err == nil
}

// readPattern turns the event file a running target reports (its <File
// name="…"/> in sys.dm_xe_session_targets) into the pattern of all its
// rollover files: <dir>/<name>_0_*.xel. The _0_ keeps
// queryreplay_exporter_a from matching queryreplay_exporter_ab's files.
// Azure Blob URLs take a wildcard-free prefix instead (docs/design/exporter.md
// §9.1).
func readPattern(currentFile string) (string, bool) {
	i := strings.LastIndex(strings.ToLower(currentFile), "_0_")
	if i < 0 {
		return "", false
	}
	prefix := currentFile[:i+3]
	if isBlobURL(currentFile) {
		return prefix, true
	}
	return prefix + "*.xel", true
}

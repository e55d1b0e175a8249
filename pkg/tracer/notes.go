package tracer

import (
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// SystemTaskNote is the warning a trace carries when log flushes were
// asked for and none arrived. The log writer hardens log blocks, and the
// lazy writer and checkpoint write dirty pages: system tasks, not the
// traced session, so the session_id predicate that keeps a trace to its
// own query leaves their events out (log_flush_complete, and the
// physical_page_write and file_write_completed of background writes).
// Capturing them by database instead would put system tasks behind the
// trace's NO_EVENT_LOSS buffers, which could make every commit on the
// server wait for QueryReplay, so they are left out and said to be.
const SystemTaskNote = "no log flushes were captured: the log writer, lazy writer and checkpoint are system tasks, " +
	"which the trace's session filter leaves out; the log lane shows the batch's own log records and WRITELOG waits, " +
	"and the write lanes only pages the traced session wrote itself"

// noteSystemTasks adds SystemTaskNote when the log group was asked for and
// the timeline holds no log flush.
func noteSystemTasks(b *bundle.Bundle, groups bundle.EventGroups, tr *timeline.Trace) {
	if !groups.Log || tr == nil {
		return
	}
	for _, l := range tr.Lanes.Log {
		if l.Kind == "flush" {
			return
		}
	}
	b.Result.Warnings = append(b.Result.Warnings, SystemTaskNote)
}

// ErrorLogUnknownNote is the warning of a trace whose login cannot see
// SERVERPROPERTY('ErrorLogFileName'), whose directory is where event files
// go by default: its events were read from a ring_buffer target instead.
const ErrorLogUnknownNote = "the server did not say where its error log is (SERVERPROPERTY('ErrorLogFileName') is empty for this login), " +
	"so events were read from a ring_buffer target, whose XML is capped near 4 MB; pass a trace directory to use an event file"

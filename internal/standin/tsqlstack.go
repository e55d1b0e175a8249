package standin

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The sqlserver.tsql_stack action: one <frame> per batch or module on the
// T-SQL call stack, level 1 the innermost (the statement running), each
// with the text's sql_handle and the running statement's line and byte
// offsets in it — the offsets sys.dm_exec_requests gives
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-requests-transact-sql),
// the same as the statement events' offset and offset_end.

// tsqlFrame is one frame of the stand-in's T-SQL call stack.
type tsqlFrame struct {
	handle     string
	line       int
	start, end int64
	// began is when the frame's current statement started: each nesting
	// level times its own statement, an EXEC's duration covering the
	// statements of the procedure it called
	began time.Time
}

// batchHandle is the sql_handle of an ad hoc batch: 0x02, a hash of the
// text, zero padding — 44 bytes, the shape of sys.dm_exec_sql_text handles
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-sql-text-transact-sql).
func batchHandle(text string) string {
	h := sha1.Sum([]byte(text))
	return "0x02000000" + strings.ToUpper(hex.EncodeToString(h[:])) + strings.Repeat("0", 40)
}

// moduleHandle is the sql_handle of a module: 0x03, the database and
// object ids, zero padding.
func moduleHandle(dbID int, objectID int64) string {
	return fmt.Sprintf("0x0300%04X%08X", dbID, uint32(objectID)) + strings.Repeat("0", 72)
}

// pushFrame enters a batch or module: its statements run in a new frame.
func (x *execCtx) pushFrame(handle string) {
	x.frames = append(x.frames, tsqlFrame{handle: handle, start: -1})
	x.renderStack()
}

// popFrame leaves it.
func (x *execCtx) popFrame() {
	if len(x.frames) > 0 {
		x.frames = x.frames[:len(x.frames)-1]
	}
	x.renderStack()
}

// atStatement records the statement now running in the innermost frame.
func (x *execCtx) atStatement(line int, start, end int64, began time.Time) {
	if len(x.frames) == 0 {
		return
	}
	f := &x.frames[len(x.frames)-1]
	f.line, f.start, f.end, f.began = line, start, end, began
	x.renderStack()
}

// statementBegan is when the innermost frame's statement started.
func (x *execCtx) statementBegan() time.Time {
	if len(x.frames) == 0 {
		return x.stmtStart
	}
	return x.frames[len(x.frames)-1].began
}

// renderStack refreshes the action's value: frames innermost first, and
// none until the outermost frame has a statement running.
func (x *execCtx) renderStack() {
	if x.ec == nil {
		return
	}
	if len(x.frames) == 0 || x.frames[0].start < 0 {
		x.ec.TSQLStack = ""
		return
	}
	var b strings.Builder
	b.WriteString("<frames>")
	level := 1
	for i := len(x.frames) - 1; i >= 0; i-- {
		f := x.frames[i]
		if f.start < 0 {
			continue // entered, no statement yet: not on the stack
		}
		b.WriteString(`<frame level="`)
		b.WriteString(strconv.Itoa(level))
		b.WriteString(`" handle="`)
		b.WriteString(f.handle)
		b.WriteString(`" line="`)
		b.WriteString(strconv.Itoa(f.line))
		b.WriteString(`" offsetStart="`)
		b.WriteString(strconv.FormatInt(f.start, 10))
		b.WriteString(`" offsetEnd="`)
		b.WriteString(strconv.FormatInt(f.end, 10))
		b.WriteString(`"/>`)
		level++
	}
	b.WriteString("</frames>")
	x.ec.TSQLStack = b.String()
}

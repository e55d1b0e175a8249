package xe

import (
	"strconv"
	"strings"
)

// TSQLFrame is one frame of the sqlserver.tsql_stack action: the module or
// batch (its sql_handle) and the statement running in it, as byte offsets
// into that text. Level 1 is the innermost frame, the statement the event
// fired in; each higher level is the statement that called the one below
// (an EXEC). Offsets are in bytes of the UTF-16 text, as the statement
// offsets of sys.dm_exec_requests and sys.dm_exec_query_stats are
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-sql-text-transact-sql);
// -1 as the end means "to the end of the text".
type TSQLFrame struct {
	Level       int
	Handle      string
	Line        int64
	OffsetStart int64
	OffsetEnd   int64
}

// MaxTSQLFrames bounds the frames read from one action: SQL Server nests
// modules at most 32 deep (Msg 217,
// https://learn.microsoft.com/en-us/sql/t-sql/functions/nestlevel-transact-sql),
// so more than that is not a stack this reader trusts.
const MaxTSQLFrames = 64

// ParseTSQLStack reads the <frame …/> elements of a tsql_stack value,
// innermost (level 1) first. The value is XML whether the reader printed
// it as child elements (event_file XML) or as escaped text (older
// ring_buffer output), and attributes may be quoted either way. ok is false
// when no frame with a handle is found or the stack is deeper than
// MaxTSQLFrames.
func ParseTSQLStack(raw string) (frames []TSQLFrame, ok bool) {
	rest := raw
	for {
		i := strings.Index(rest, "<frame")
		if i < 0 {
			break
		}
		rest = rest[i+len("<frame"):]
		end := strings.IndexByte(rest, '>')
		if end < 0 {
			break
		}
		attrs := rest[:end]
		rest = rest[end+1:]
		if attrs != "" && attrs[0] != ' ' && attrs[0] != '\t' && attrs[0] != '\n' && attrs[0] != '\r' && attrs[0] != '/' {
			continue // <frames>, not <frame>
		}
		if len(frames) == MaxTSQLFrames {
			return nil, false
		}
		f := TSQLFrame{OffsetEnd: -1}
		f.Handle = frameAttr(attrs, "handle")
		if f.Handle == "" {
			continue
		}
		f.Level, _ = strconv.Atoi(frameAttr(attrs, "level"))
		f.Line, _ = strconv.ParseInt(frameAttr(attrs, "line"), 10, 64)
		f.OffsetStart, _ = strconv.ParseInt(frameAttr(attrs, "offsetStart"), 10, 64)
		if v, err := strconv.ParseInt(frameAttr(attrs, "offsetEnd"), 10, 64); err == nil {
			f.OffsetEnd = v
		}
		frames = append(frames, f)
	}
	if len(frames) == 0 {
		return nil, false
	}
	// innermost first: by level when the levels are given, else as printed
	for i := 1; i < len(frames); i++ {
		for j := i; j > 0 && frames[j].Level < frames[j-1].Level; j-- {
			frames[j], frames[j-1] = frames[j-1], frames[j]
		}
	}
	return frames, true
}

// frameAttr returns the value of attribute name in attrs (' or " quoted),
// "" when absent.
func frameAttr(attrs, name string) string {
	for rest := attrs; ; {
		i := strings.Index(rest, name)
		if i < 0 {
			return ""
		}
		before := byte(' ')
		if i > 0 {
			before = rest[i-1]
		}
		rest = rest[i+len(name):]
		if before != ' ' && before != '\t' && before != '\n' && before != '\r' {
			continue
		}
		t := strings.TrimLeft(rest, " \t\r\n")
		if !strings.HasPrefix(t, "=") {
			continue
		}
		t = strings.TrimLeft(t[1:], " \t\r\n")
		if t == "" || (t[0] != '"' && t[0] != '\'') {
			return ""
		}
		q := t[0]
		j := strings.IndexByte(t[1:], q)
		if j < 0 {
			return ""
		}
		return t[1 : 1+j]
	}
}

// TSQLStackOf reads the event's tsql_stack action; ok is false when it has
// none or it does not parse.
func TSQLStackOf(ev *Event) ([]TSQLFrame, bool) {
	v, ok := ev.Action("tsql_stack")
	if !ok {
		return nil, false
	}
	return ParseTSQLStack(v.Raw)
}

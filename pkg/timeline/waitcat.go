package timeline

import "strings"

// WaitCategory groups wait types the way the reference tool colours them
// (docs/design/tracing.md §6.4): Parallelism, Io, Cpu or Concurrency. Anything else is
// Cpu, as there.
func WaitCategory(waitType string) string {
	w := strings.ToUpper(waitType)
	has := strings.HasPrefix
	switch {
	case has(w, "CX"), w == "EXCHANGE", w == "EXECSYNC", has(w, "HASH_TABLE"), has(w, "BITMAP"):
		return "Parallelism"
	case has(w, "PAGEIOLATCH"), w == "WRITELOG", w == "LOGBUFFER", has(w, "LOGMGR"), strings.Contains(w, "IO_COMPLETION"),
		w == "NETWORK_IO", w == "BACKUPIO", has(w, "DISKIO"), w == "WRITE_COMPLETION", w == "IO_RETRY", w == "IO_QUEUE_LIMIT":
		return "Io"
	case w == "SOS_SCHEDULER_YIELD", w == "THREADPOOL", has(w, "SOS_WORKER"), w == "CMEMTHREAD", w == "CMEMPARTITIONED":
		return "Cpu"
	case has(w, "LCK_"), has(w, "LATCH"), has(w, "PAGELATCH"), has(w, "TRANMARKLATCH"), strings.Contains(w, "TRANSACTION"):
		return "Concurrency"
	}
	return "Cpu"
}

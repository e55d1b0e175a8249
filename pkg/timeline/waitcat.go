package timeline

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
)

// The one wait-type table of QueryReplay: waitclasses.tsv maps each wait
// type to its class, written from the wait types Microsoft documents at
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-os-wait-stats-transact-sql
// (the class names are those monitoring tools publish). The timeline's
// lane categories, the findings and the exporter's wait_category label
// all derive from it.

//go:embed waitclasses.tsv
var waitClassesTSV string

// WaitClasses is a parsed wait-class table: exact names first, then the
// longest matching prefix, then "Other".
type WaitClasses struct {
	exact    map[string]string
	prefixes []classPrefix // longest first
}

type classPrefix struct{ prefix, class string }

var defaultWaitClasses = mustWaitClasses(waitClassesTSV)

func mustWaitClasses(tsv string) *WaitClasses {
	w, err := ParseWaitClasses(tsv)
	if err != nil {
		panic(err) // the embedded table is tested
	}
	return w
}

// ParseWaitClasses reads a PATTERN<TAB>CLASS table; a pattern is an exact
// wait type or a prefix ending in *.
func ParseWaitClasses(tsv string) (*WaitClasses, error) {
	w := &WaitClasses{exact: map[string]string{}}
	for n, line := range strings.Split(tsv, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		pat, class, ok := strings.Cut(line, "\t")
		if !ok || pat == "" || class == "" || strings.Contains(class, "\t") {
			return nil, fmt.Errorf("wait classes line %d: want PATTERN<TAB>CLASS", n+1)
		}
		if p, isPrefix := strings.CutSuffix(pat, "*"); isPrefix {
			w.prefixes = append(w.prefixes, classPrefix{p, class})
		} else {
			if _, dup := w.exact[pat]; dup {
				return nil, fmt.Errorf("wait classes line %d: %s listed twice", n+1, pat)
			}
			w.exact[pat] = class
		}
	}
	slices.SortStableFunc(w.prefixes, func(a, b classPrefix) int { return len(b.prefix) - len(a.prefix) })
	return w, nil
}

// Class returns the class of a wait type name ("Other" when no rule
// matches, so a new wait type never adds a class).
func (w *WaitClasses) Class(waitType string) string {
	waitType = strings.ToUpper(waitType)
	if c, ok := w.exact[waitType]; ok {
		return c
	}
	for _, p := range w.prefixes {
		if strings.HasPrefix(waitType, p.prefix) {
			return p.class
		}
	}
	return "Other"
}

// WaitClass is the class of a wait type in the shared table ("Lock",
// "Buffer IO", "Memory", "Network IO", "Parallelism", "Compilation", ...).
func WaitClass(waitType string) string { return defaultWaitClasses.Class(waitType) }

// Lane categories: the timeline's four wait lanes (docs/design/tracing.md
// §6.4), plus CategoryOther for classes none of them describes.
const (
	CategoryIo          = "Io"
	CategoryCPU         = "Cpu"
	CategoryConcurrency = "Concurrency"
	CategoryParallelism = "Parallelism"
	CategoryOther       = "Other"
)

// WaitCategory is a wait type's lane category, derived from its class:
// disk, log and network I/O are Io; waiting for a scheduler or a worker is
// Cpu; locks, latches, transactions and queues for shared resources (a
// memory grant, the compile gateway) are Concurrency, since the query
// waited on other work; exchanges are Parallelism. Anything else (idle,
// user waits, unknown types) is Other rather than being called CPU.
func WaitCategory(waitType string) string {
	switch WaitClass(waitType) {
	case "Parallelism":
		return CategoryParallelism
	case "Buffer IO", "Tran Log IO", "Other Disk IO", "Network IO", "Log Rate Governor":
		return CategoryIo
	case "CPU", "Worker Thread", "SQL CLR", "Preemptive":
		return CategoryCPU
	case "Lock", "Latch", "Buffer Latch", "Transaction", "Memory", "Compilation", "Mirroring", "Replication":
		return CategoryConcurrency
	}
	return CategoryOther
}

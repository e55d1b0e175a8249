package exporter

import (
	_ "embed"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/timeline"
)

//go:embed benignwaits.txt
var benignWaitsTxt string

// waitCategories is the wait_category label's table: the timeline's
// shared wait-class table (pkg/timeline waitclasses.tsv), so the exporter,
// the timeline and the findings name a wait type alike.
type waitCategories struct{}

var defaultWaitCategories waitCategories

func parseWaitCategories(tsv string) (*timeline.WaitClasses, error) {
	return timeline.ParseWaitClasses(tsv)
}

// category returns the class of a wait type name ("Other" when unknown).
func (w waitCategories) category(waitType string) string { return timeline.WaitClass(waitType) }

func benignWaits() []string {
	var out []string
	for _, line := range strings.Split(benignWaitsTxt, "\n") {
		line = strings.TrimSpace(line)
		if line != "" && line[0] != '#' {
			out = append(out, line)
		}
	}
	return out
}

// matchWait matches a wait type against a pattern where * is any run of
// characters, without regard to case.
func matchWait(pattern, name string) bool {
	ok, err := path.Match(strings.ToUpper(pattern), strings.ToUpper(name))
	return err == nil && ok
}

// keyRange is an inclusive range of map keys.
type keyRange struct{ lo, hi uint64 }

// waitKeyRanges resolves include and exclude patterns against a server's
// wait_types map (key → name) into sorted, merged key ranges of the wait
// types to keep. Keys are per server and per build (docs/design/event-fields.md
// §2.1), so this runs against each server's own sys.dm_xe_map_values, and
// ranges collapse runs of consecutive keys, as sp_HumanEvents does, to keep
// the predicate short. An empty include keeps every type not excluded.
// all reports that no type is excluded (no predicate needed).
func waitKeyRanges(waitTypes map[uint64]string, include, exclude []string) (ranges []keyRange, all bool) {
	keys := make([]uint64, 0, len(waitTypes))
	for k := range waitTypes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	all = true
	var kept []uint64
	for _, k := range keys {
		name := waitTypes[k]
		in := len(include) == 0 || slices.ContainsFunc(include, func(p string) bool { return matchWait(p, name) })
		out := slices.ContainsFunc(exclude, func(p string) bool { return matchWait(p, name) })
		if in && !out {
			kept = append(kept, k)
		} else {
			all = false
		}
	}
	return collapseKeys(kept), all
}

// collapseKeys turns sorted keys into ranges of consecutive keys.
func collapseKeys(keys []uint64) (ranges []keyRange) {
	for _, k := range keys {
		if n := len(ranges); n > 0 && ranges[n-1].hi+1 == k {
			ranges[n-1].hi = k
			continue
		}
		ranges = append(ranges, keyRange{k, k})
	}
	return ranges
}

// waitKeysLeftOut is the complement of waitKeyRanges: the ranges of the
// server's wait types the filters leave out. A predicate may name either
// (kept ranges, or NOT the ones left out); the shorter is written.
func waitKeysLeftOut(waitTypes map[uint64]string, kept []keyRange) []keyRange {
	var out []uint64
	for k := range waitTypes {
		if !slices.ContainsFunc(kept, func(r keyRange) bool { return r.lo <= k && k <= r.hi }) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return collapseKeys(out)
}

// rangePredicate writes ranges as an XE predicate on field:
// (field >= 1 AND field <= 21) OR field = 66 … An empty list matches
// nothing: (field = -1) would be refused for an unsigned map, so the caller
// must not create a session that keeps no wait type.
func rangePredicate(field string, ranges []keyRange) string {
	parts := make([]string, len(ranges))
	for i, r := range ranges {
		if r.lo == r.hi {
			parts[i] = fmt.Sprintf("%s = (%d)", field, r.lo)
		} else {
			parts[i] = fmt.Sprintf("(%s >= (%d) AND %s <= (%d))", field, r.lo, field, r.hi)
		}
	}
	return "(" + strings.Join(parts, " OR ") + ")"
}

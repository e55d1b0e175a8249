package exporter

import (
	"fmt"
	"strings"
	"testing"
)

// waitMap is a wait_types map of n keys named W0000…, as a server lists it.
func waitMap(n int) map[uint64]string {
	m := map[uint64]string{}
	for i := range n {
		m[uint64(i)] = fmt.Sprintf("W%04d", i)
	}
	return m
}

func waitSpec(dbs int, waits map[uint64]string, exclude []string) *sessionSpec {
	s := &sessionSpec{groups: []string{GroupWaits, GroupSplits}, waitEvent: "wait_info", waitMinMs: 1, hasEndOpcode: true, waitEndOpcode: 1}
	for i := range dbs {
		s.databaseIDs = append(s.databaseIDs, uint64(5+i))
	}
	s.waitRanges, s.waitAll = waitKeyRanges(waits, nil, exclude)
	s.waitLeftOut = waitKeysLeftOut(waits, s.waitRanges)
	return s
}

// longestWhere measures every WHERE of the DDL.
func longestWhere(ddl string) int {
	longest := 0
	for _, line := range strings.Split(ddl, "\n") {
		if i := strings.Index(line, " WHERE "); i >= 0 {
			longest = max(longest, len(line)-i-len(" WHERE ")-1)
		}
	}
	return longest
}

// The exporter's predicate never passes the documented 3,000 characters:
// scattered exclusions are written as NOT the excluded ranges when that is
// shorter; what cannot fit is refused naming the settings that grew it.
func TestPredicateGuard(t *testing.T) {
	waits := waitMap(900)
	every := func(step int) (out []string) {
		for i := 0; i < 900; i += step {
			out = append(out, fmt.Sprintf("W%04d", i))
		}
		return out
	}
	// 100 scattered exclusions: ~101 kept ranges (> 3,000 characters),
	// 100 excluded keys (< 3,000): the NOT form fits
	s := waitSpec(3, waits, every(9))
	if err := s.checkPredicates(); err != nil {
		t.Fatalf("scattered exclusions: %v", err)
	}
	ddl := s.createDDL()
	if n := longestWhere(ddl); n > maxPredicateChars || !strings.Contains(ddl, "NOT (wait_type") {
		t.Errorf("longest predicate %d, NOT form used %v", n, strings.Contains(ddl, "NOT (wait_type"))
	}
	if kept := len(rangePredicate("wait_type", s.waitRanges)); kept <= maxPredicateChars {
		t.Fatalf("the case does not need the NOT form (%d characters kept)", kept)
	}
	// 300 exclusions and 300 kept ranges: neither fits
	s = waitSpec(3, waits, every(3))
	err := s.checkPredicates()
	if err == nil || !strings.Contains(err.Error(), "waits.exclude") || !strings.Contains(err.Error(), "3000") {
		t.Errorf("300 scattered exclusions: %v", err)
	}
	// many databases alone
	s = waitSpec(150, waits, nil)
	err = s.checkPredicates()
	if err == nil || !strings.Contains(err.Error(), "databases (150 listed") {
		t.Errorf("150 databases: %v", err)
	}
	// whatever passes the check is within the limit
	for _, dbs := range []int{0, 20, 60, 90} {
		for _, step := range []int{2, 5, 9, 30, 100} {
			s := waitSpec(dbs, waits, every(step))
			if s.checkPredicates() == nil {
				if n := longestWhere(s.createDDL()); n > maxPredicateChars {
					t.Errorf("%d databases, every %d-th excluded: passed the check with %d characters", dbs, step, n)
				}
			}
		}
	}
}

// The configuration check refuses a databases list that alone passes the
// limit, before any server is asked.
func TestConfigRefusesTooManyDatabases(t *testing.T) {
	var dbs []string
	for i := range 120 {
		dbs = append(dbs, fmt.Sprintf("      - db%03d", i))
	}
	yaml := oneTarget("    databases:\n" + strings.Join(dbs, "\n") + "\n")
	_, err := ParseConfig([]byte(yaml), func(string) (string, bool) { return "sqlserver://x", true })
	if err == nil || !strings.Contains(err.Error(), "databases") || !strings.Contains(err.Error(), "3000") {
		t.Fatalf("120 databases: %v", err)
	}
	yaml = oneTarget("    databases:\n" + strings.Join(dbs[:10], "\n") + "\n")
	if _, err := ParseConfig([]byte(yaml), func(string) (string, bool) { return "sqlserver://x", true }); err != nil {
		t.Fatalf("10 databases: %v", err)
	}
}

// A session that passes the guard never carries a predicate over the
// limit, whatever the databases and the wait exclusions.
func FuzzPredicateGuard(f *testing.F) {
	f.Add(uint8(3), uint16(9), uint16(900))
	f.Add(uint8(150), uint16(1), uint16(10))
	f.Add(uint8(0), uint16(2), uint16(1200))
	f.Fuzz(func(t *testing.T, dbs uint8, step, keys uint16) {
		if step == 0 || keys == 0 || keys > 2000 {
			return
		}
		waits := waitMap(int(keys))
		var exclude []string
		for i := 0; i < int(keys); i += int(step) {
			exclude = append(exclude, fmt.Sprintf("W%04d", i))
		}
		s := waitSpec(int(dbs), waits, exclude)
		if len(s.waitRanges) == 0 {
			return // nothing kept: refused earlier (resolveWaits)
		}
		if s.checkPredicates() == nil {
			if n := longestWhere(s.createDDL()); n > maxPredicateChars {
				t.Fatalf("%d databases, every %d-th of %d excluded: %d characters passed", dbs, step, keys, n)
			}
		}
	})
}

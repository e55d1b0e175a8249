package engine

import "github.com/queryreplay/queryreplay/internal/standin/sqlfront"

// uniqueRows reports whether every row in reaches the output at most once
// because it is read straight from one table (a scan or seek, possibly
// under a projection of plain columns) whose output columns include the
// whole clustered key. SQL Server's optimizer knows such rows are already
// distinct and plans no distinct step for them (an EXCEPT or INTERSECT whose
// left input is a primary key needs no Hash Match (Aggregate)). A seek of
// several ranges is left out: its ranges could overlap.
func uniqueRows(in Iter) bool {
	var cols []int // table columns reaching the output
	var s *scanIter
	switch x := in.(type) {
	case *scanIter:
		s, cols = x, x.colMap
	case *projectIter:
		inner, ok := x.in.(*scanIter)
		if !ok {
			return false
		}
		s = inner
		for _, e := range x.exprs {
			c, ok := e.(*sqlfront.ColRef)
			if !ok {
				continue
			}
			if j, _ := inner.schema.LookupRef(c); j >= 0 {
				cols = append(cols, inner.colMap[j])
			}
		}
	default:
		return false
	}
	if s.lookup || len(s.t.PK) == 0 || s.seek != nil && len(s.seek.ranges) > 1 {
		return false
	}
	for _, k := range s.t.PK {
		found := false
		for _, c := range cols {
			found = found || c == k
		}
		if !found {
			return false
		}
	}
	return true
}

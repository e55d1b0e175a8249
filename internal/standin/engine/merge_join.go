package engine

import "github.com/queryreplay/queryreplay/internal/standin/sqlfront"

// MergeJoinKind is the logical join of a MERGE plan whose Hash Match builds
// on the target and probes with the source: it keeps the unmatched source
// rows (probe side: Right Outer Join) only for WHEN NOT MATCHED [BY TARGET],
// the unmatched target rows (build side: Left Outer Join) only for WHEN NOT
// MATCHED BY SOURCE, both for both, neither with WHEN MATCHED alone, as
// SQL Server's MERGE plans do (a Full Outer Join only with both kinds of
// NOT MATCHED clause).
func MergeJoinKind(s *sqlfront.MergeStmt) string {
	var bySource, byTarget bool
	for _, c := range s.Clauses {
		if !c.Matched {
			bySource = bySource || c.BySource
			byTarget = byTarget || !c.BySource
		}
	}
	switch {
	case bySource && byTarget:
		return "Full Outer Join"
	case byTarget:
		return "Right Outer Join"
	case bySource:
		return "Left Outer Join"
	}
	return "Inner Join"
}

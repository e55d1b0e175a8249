package engine

import (
	"strings"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// lookupOuterRows is the outer row estimate above which a correlated
// EXISTS is decorrelated into a hash semi join even though the inner table
// has an index on the correlated column, when that index would need a key
// lookup per inner row: seeking and looking rows up for every outer row
// costs many random reads, one scan of the inner table a few sequential
// ones, and SQL Server's optimizer picks the scan.
const lookupOuterRows = 50

// seekNeedsLookups reports whether the index that would serve a seek on the
// correlated column key is nonclustered and lacks a column the subquery's
// other predicates (rest) read from the same table: each seek would be
// followed by key lookups into the clustered index.
func (p *Planner) seekNeedsLookups(inner map[string]*sqlfront.TableName, key *sqlfront.ColRef, rest []sqlfront.Expr) bool {
	alias := strings.ToLower(key.Parts[len(key.Parts)-2])
	t, ci := p.innerColumn(inner, key)
	if t == nil {
		return false
	}
	var ix *Index
	for _, cand := range t.Indexes {
		if cand.ID == 1 && t.PK[0] == ci {
			return false // the clustered index itself: no lookups
		}
		if cand.ID != 1 && cand.KeyCols[0] == ci && ix == nil {
			ix = cand
		}
	}
	if ix == nil {
		return false
	}
	covered := map[int]bool{}
	for _, c := range append(append([]int{}, ix.KeyCols...), t.PK...) {
		covered[c] = true
	}
	for _, e := range rest {
		for _, c := range ColRefsOf(e) {
			if len(c.Parts) > 1 && strings.ToLower(c.Parts[len(c.Parts)-2]) != alias {
				continue
			}
			if j := t.Column(c.Parts[len(c.Parts)-1]); j >= 0 && !covered[j] {
				return true
			}
		}
	}
	return false
}

// innerColumn resolves the qualified column c of a subquery's FROM tables
// (inner, by alias) to its table and column position; nil when c names
// no table there.
func (p *Planner) innerColumn(inner map[string]*sqlfront.TableName, c *sqlfront.ColRef) (*Table, int) {
	tn := inner[strings.ToLower(c.Parts[len(c.Parts)-2])]
	if tn == nil {
		return nil, -1
	}
	t, _, err := p.x.ResolveTable(tn.Parts)
	if err != nil || t == nil {
		return nil, -1
	}
	return t, t.Column(c.Parts[len(c.Parts)-1])
}

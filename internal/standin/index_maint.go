package standin

import "sort"

// Nonclustered index maintenance row by row: a modification inserts or
// removes one entry at its place instead of re-sorting the index, so a
// statement changing many rows stays linear in them.

// entryOf is row's entry in a nonclustered index: its key columns, then
// the clustered key.
func (ix *index) entryOf(row []any) []any {
	t := ix.tbl
	e := make([]any, 0, len(ix.keyCols)+len(t.pk))
	for _, k := range ix.keyCols {
		e = append(e, row[k])
	}
	for _, k := range t.pk {
		e = append(e, row[k])
	}
	return e
}

func (ix *index) insertEntry(row []any) {
	e := ix.entryOf(row)
	i := sort.Search(len(ix.entries), func(i int) bool { return !lessKey(ix.entries[i], e) })
	ix.entries = append(ix.entries, nil)
	copy(ix.entries[i+1:], ix.entries[i:])
	ix.entries[i] = e
}

func (ix *index) removeEntry(row []any) {
	e := ix.entryOf(row)
	i := sort.Search(len(ix.entries), func(i int) bool { return !lessKey(ix.entries[i], e) })
	if i < len(ix.entries) && !lessKey(e, ix.entries[i]) {
		ix.entries = append(ix.entries[:i], ix.entries[i+1:]...)
	}
}

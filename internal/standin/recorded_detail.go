package standin

import (
	"sort"
	"strings"
)

// Recorded event detail for tests that check what a consumer made of the
// events, not only how many it saw: the events as the event files on the
// emulated disk hold them, and the storage layout that names the ids the
// events carry (database ids, HoBT ids, page ids). These read the server's
// own structures, never its DMV emulation, so a test that compares a
// consumer's catalog lookups with them checks the lookups too.

// EventFileXML returns the XML of every event in the event files whose path
// starts with prefix (the event_data column fn_xe_file_target_read_file
// returns), in file name order and, within a file, in the order written.
func (s *Server) EventFileXML(prefix string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var paths []string
	for p := range s.files {
		if strings.HasPrefix(p, prefix) {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	var out []string
	for _, p := range paths {
		for _, b := range s.files[p].Buffers {
			for _, e := range b.Events {
				out = append(out, e.File)
			}
		}
	}
	return out
}

// DatabaseNames returns the name of every database, by database_id.
func (s *Server) DatabaseNames() map[int]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[int]string, len(s.dbs))
	for _, d := range s.dbs {
		out[d.ID] = d.Name
	}
	return out
}

// StorageOwner names the owner of a page or a HoBT: the table as
// schema.name and the index by name ("" for a heap).
type StorageOwner struct {
	Object, Index string
}

// PageOwner returns the owner of page (file 1) in database dbID, or false
// when no index owns the page (unallocated, or the database has no such
// page).
func (s *Server) PageOwner(dbID int, page int64) (StorageOwner, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	db := s.dbByID(int64(dbID))
	if db == nil {
		return StorageOwner{}, false
	}
	pi := db.PageOwner[int32(page)]
	if pi == nil || pi.Idx == nil {
		return StorageOwner{}, false
	}
	return StorageOwner{pi.Idx.Tbl.FullName(), pi.Idx.Name}, true
}

// HoBTOwner returns the owner of a HoBT (partition) id in database dbID, or
// false when no index of the database has it.
func (s *Server) HoBTOwner(dbID int, hobt int64) (StorageOwner, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	db := s.dbByID(int64(dbID))
	if db == nil {
		return StorageOwner{}, false
	}
	for _, t := range db.Tables {
		for _, ix := range t.Indexes {
			if ix.PartitionID == hobt {
				return StorageOwner{t.FullName(), ix.Name}, true
			}
		}
	}
	return StorageOwner{}, false
}

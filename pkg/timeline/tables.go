package timeline

import "slices"

// laneTables fills a Lanes' Objects and CandidateSets, each distinct entry
// once, for Build and for reading a trace's JSON.
type laneTables struct {
	objects []ObjectName
	byName  map[ObjectName]ObjectRef
	// byPtr answers for the catalog's shared names (one pointer per
	// distinct name) without hashing the name's strings, and recent
	// before it for the few indexes a run of page events reads (a seek
	// and its key lookup, two indexes of one scan): a million page events
	// ask, and a map lookup each cost a sixth of filling the read lane.
	byPtr  map[*ObjectName]ObjectRef
	recent [4]struct {
		ptr *ObjectName
		ref ObjectRef
	}
	nextRecent int

	sets   [][]NodeID
	bySet  map[string]CandidatesRef
	keyBuf []byte
}

func newLaneTables() *laneTables {
	return &laneTables{byName: map[ObjectName]ObjectRef{}, byPtr: map[*ObjectName]ObjectRef{}, bySet: map[string]CandidatesRef{}}
}

// object is the handle of o's name, 0 for nil.
func (t *laneTables) object(o *ObjectName) ObjectRef {
	if o == nil {
		return 0
	}
	for i := range t.recent {
		if t.recent[i].ptr == o {
			return t.recent[i].ref
		}
	}
	r, ok := t.byPtr[o]
	if !ok {
		r = t.name(*o)
		t.byPtr[o] = r
	}
	t.recent[t.nextRecent].ptr, t.recent[t.nextRecent].ref = o, r
	t.nextRecent = (t.nextRecent + 1) % len(t.recent)
	return r
}

// name is the handle of the name o.
func (t *laneTables) name(o ObjectName) ObjectRef {
	if r, ok := t.byName[o]; ok {
		return r
	}
	t.objects = append(t.objects, o)
	r := ObjectRef(len(t.objects))
	t.byName[o] = r
	return r
}

// candidates is the handle of the list ids (copied when new), 0 for none.
func (t *laneTables) candidates(ids []NodeID) CandidatesRef {
	if len(ids) == 0 {
		return 0
	}
	key := t.keyBuf[:0]
	for _, id := range ids {
		key = append(key, byte(id), byte(id>>8), byte(id>>16), byte(id>>24))
	}
	t.keyBuf = key
	if r, ok := t.bySet[string(key)]; ok {
		return r
	}
	t.sets = append(t.sets, slices.Clone(ids))
	r := CandidatesRef(len(t.sets))
	t.bySet[string(key)] = r
	return r
}

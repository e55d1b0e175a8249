package timeline

// pageLookup answers the catalog's page lookups for one Build. Page events
// are most of a trace and each needs its object: a hash lookup per event
// was a tenth of the build (issue 26 performance), so
// pages of a file whose ids are dense (a trace touches runs of pages of a
// few indexes) are indexed by page id in a slice. Files whose pages are
// sparse, and pages whose ids do not pack, keep the catalog's maps. The
// answers are the catalog's: Catalog.page is the reference.
type pageLookup struct {
	c     *Catalog
	files map[uint64]*pageFile // packed db<<16|file → its pages
	// last is a one-entry cache in front of files: consecutive page
	// events mostly come from one file.
	lastKey  uint64
	lastFile *pageFile
	lastOK   bool
}

// pageFile holds one file's pages: objs[page−base], or sparse when the
// catalog map answers for it.
type pageFile struct {
	base   uint64
	objs   []*ObjectName
	sparse bool
}

// denseSlack bounds the slice of a file to this many times its pages (plus
// a little), so a file with a few far-apart pages stays in the map.
const denseSlack = 4

// newPageLookup indexes the catalog's pages when the trace has at least as
// many page events as the catalog has pages (indexing costs about one
// lookup per catalog page); otherwise, and without a catalog, it returns a
// lookup that asks the catalog directly.
func newPageLookup(c *Catalog, pageEvents int) *pageLookup {
	p := &pageLookup{c: c}
	if c == nil || len(c.pages) == 0 || pageEvents < len(c.pages) {
		return p
	}
	type span struct {
		lo, hi uint64
		n      int
	}
	spans := map[uint64]*span{}
	for k := range c.pages {
		fk, pg := k>>32, k&0xffffffff
		s := spans[fk]
		if s == nil {
			spans[fk] = &span{lo: pg, hi: pg, n: 1}
			continue
		}
		s.lo, s.hi, s.n = min(s.lo, pg), max(s.hi, pg), s.n+1
	}
	p.files = make(map[uint64]*pageFile, len(spans))
	for fk, s := range spans {
		if s.hi-s.lo+1 > uint64(denseSlack*s.n+64) {
			p.files[fk] = &pageFile{sparse: true}
			continue
		}
		p.files[fk] = &pageFile{base: s.lo, objs: make([]*ObjectName, s.hi-s.lo+1)}
	}
	for k, o := range c.pages {
		if f := p.files[k>>32]; !f.sparse {
			f.objs[k&0xffffffff-f.base] = o
		}
	}
	return p
}

// page is Catalog.page: the page in its database, else in database 0.
func (p *pageLookup) page(db, file, page uint64) *ObjectName {
	if p.files == nil {
		return p.c.page(db, file, page)
	}
	if o := p.pageOf(db, file, page); o != nil {
		return o
	}
	return p.pageOf(0, file, page)
}

func (p *pageLookup) pageOf(db, file, page uint64) *ObjectName {
	k, ok := packPage(db, file, page)
	if !ok {
		return p.c.widePages[pageKey{db, file, page}]
	}
	return p.packedOf(k)
}

// packed is page for a packed page key (packPage), as page events' records
// hold it: the same answer without unpacking and packing again.
func (p *pageLookup) packed(k uint64) *ObjectName {
	if p.files == nil {
		return p.c.page(k>>48, k>>32&0xffff, k&0xffffffff)
	}
	if o := p.packedOf(k); o != nil {
		return o
	}
	return p.packedOf(k & (1<<48 - 1)) // database 0
}

// packedOf looks a packed key up in its file.
func (p *pageLookup) packedOf(k uint64) *ObjectName {
	page := k & 0xffffffff
	fk := k >> 32
	if !p.lastOK || p.lastKey != fk {
		p.lastKey, p.lastFile, p.lastOK = fk, p.files[fk], true
	}
	f := p.lastFile
	switch {
	case f == nil:
		return nil // the catalog has no page of this file
	case f.sparse:
		return p.c.pages[k]
	}
	if i := page - f.base; i < uint64(len(f.objs)) {
		return f.objs[i]
	}
	return nil
}

package timeline

import "github.com/queryreplay/queryreplay/pkg/catalogfile"

// ObjectName names the table (and index) an event touched.
type ObjectName struct {
	Database string `json:"database,omitempty"`
	Schema   string `json:"schema,omitempty"`
	Table    string `json:"table"`
	// Index is empty for a heap or when only the object is known (an OBJECT
	// lock).
	Index string `json:"index,omitempty"`
}

func (o *ObjectName) String() string {
	if o == nil {
		return ""
	}
	s := o.Table
	if o.Schema != "" {
		s = o.Schema + "." + s
	}
	if o.Index != "" {
		s += "." + o.Index
	}
	return s
}

// Catalog resolves the identifiers events carry to object names. Database id
// 0 in an entry matches any database (a catalog taken from one database).
// The tracer fills it after the run with one batched query per trace (pages
// and HoBTs touched → allocation units → schema/table/index).
type Catalog struct {
	// pages holds every page whose ids fit one packed uint64 (database and
	// file below 2^16, page below 2^32: all real ones) — a single-word
	// key hashes several times faster than pageKey, and the lookup runs
	// once per page event; widePages holds any other.
	pages      map[uint64]*ObjectName
	widePages  map[pageKey]*ObjectName
	hobts      map[idKey]*ObjectName
	allocUnits map[idKey]*ObjectName
	objects    map[idKey]*ObjectName
	// names shares one *ObjectName per distinct name: a trace touches
	// thousands of pages of a few indexes, and the matcher caches its
	// candidates per name pointer.
	names map[ObjectName]*ObjectName
}

type pageKey struct {
	db   uint64
	file uint64
	page uint64
}

type idKey struct {
	db uint64
	id uint64
}

// NewCatalog returns an empty catalog.
func NewCatalog() *Catalog {
	return &Catalog{
		pages:      map[uint64]*ObjectName{},
		widePages:  map[pageKey]*ObjectName{},
		hobts:      map[idKey]*ObjectName{},
		allocUnits: map[idKey]*ObjectName{},
		objects:    map[idKey]*ObjectName{},
		names:      map[ObjectName]*ObjectName{},
	}
}

func (c *Catalog) name(o ObjectName) *ObjectName {
	if p, ok := c.names[o]; ok {
		return p
	}
	p := &o
	c.names[o] = p
	return p
}

// AddPage maps one page to its object.
func (c *Catalog) AddPage(databaseID, fileID, pageID uint64, o ObjectName) {
	if k, ok := packPage(databaseID, fileID, pageID); ok {
		c.pages[k] = c.name(o)
		return
	}
	c.widePages[pageKey{databaseID, fileID, pageID}] = c.name(o)
}

// AddHoBT maps a HoBT (sys.partitions.hobt_id; a lock's associated_object_id,
// a page split's rowset_id) to its object.
func (c *Catalog) AddHoBT(databaseID, hobtID uint64, o ObjectName) {
	c.hobts[idKey{databaseID, hobtID}] = c.name(o)
}

// AddAllocUnit maps an allocation unit (transaction_log.alloc_unit_id).
func (c *Catalog) AddAllocUnit(databaseID, allocUnitID uint64, o ObjectName) {
	c.allocUnits[idKey{databaseID, allocUnitID}] = c.name(o)
}

// AddObject maps an object id (an OBJECT lock) to its table; Index is unset.
func (c *Catalog) AddObject(databaseID, objectID uint64, o ObjectName) {
	o.Index = ""
	c.objects[idKey{databaseID, objectID}] = c.name(o)
}

func (c *Catalog) page(db, file, page uint64) *ObjectName {
	if c == nil {
		return nil
	}
	if o := c.pageOf(db, file, page); o != nil {
		return o
	}
	return c.pageOf(0, file, page)
}

func (c *Catalog) pageOf(db, file, page uint64) *ObjectName {
	if k, ok := packPage(db, file, page); ok {
		return c.pages[k]
	}
	return c.widePages[pageKey{db, file, page}]
}

// packPage packs a page's ids into one word when they fit.
func packPage(db, file, page uint64) (uint64, bool) {
	if db >= 1<<16 || file >= 1<<16 || page >= 1<<32 {
		return 0, false
	}
	return db<<48 | file<<32 | page, true
}

func lookupID(m map[idKey]*ObjectName, db, id uint64) *ObjectName {
	if o := m[idKey{db, id}]; o != nil {
		return o
	}
	return m[idKey{0, id}]
}

func (c *Catalog) hobt(db, id uint64) *ObjectName {
	if c == nil || id == 0 {
		return nil
	}
	return lookupID(c.hobts, db, id)
}

func (c *Catalog) allocUnit(db, id uint64) *ObjectName {
	if c == nil || id == 0 {
		return nil
	}
	return lookupID(c.allocUnits, db, id)
}

func (c *Catalog) object(db, id uint64) *ObjectName {
	if c == nil || id == 0 {
		return nil
	}
	return lookupID(c.objects, db, id)
}

// CatalogFromFile builds a Catalog from a decoded catalog file
// (pkg/catalogfile, the JSON of queryreplay timeline --catalog).
func CatalogFromFile(f *catalogfile.File) *Catalog {
	c := NewCatalog()
	if f == nil {
		return c
	}
	name := func(o catalogfile.Object) ObjectName {
		return ObjectName{Database: o.Database, Schema: o.Schema, Table: o.Table, Index: o.Index}
	}
	for _, p := range f.Pages {
		c.AddPage(p.DatabaseID, p.FileID, p.PageID, name(p.Object))
	}
	for _, h := range f.HoBTs {
		c.AddHoBT(h.DatabaseID, h.ID, name(h.Object))
	}
	for _, a := range f.AllocUnits {
		c.AddAllocUnit(a.DatabaseID, a.ID, name(a.Object))
	}
	for _, o := range f.Objects {
		c.AddObject(o.DatabaseID, o.ID, name(o.Object))
	}
	return c
}

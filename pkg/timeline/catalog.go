package timeline

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

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
	pages      map[pageKey]*ObjectName
	hobts      map[idKey]*ObjectName
	allocUnits map[idKey]*ObjectName
	objects    map[idKey]*ObjectName
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
		pages:      map[pageKey]*ObjectName{},
		hobts:      map[idKey]*ObjectName{},
		allocUnits: map[idKey]*ObjectName{},
		objects:    map[idKey]*ObjectName{},
	}
}

// AddPage maps one page to its object.
func (c *Catalog) AddPage(databaseID, fileID, pageID uint64, o ObjectName) {
	c.pages[pageKey{databaseID, fileID, pageID}] = &o
}

// AddHoBT maps a HoBT (sys.partitions.hobt_id; a lock's associated_object_id,
// a page split's rowset_id) to its object.
func (c *Catalog) AddHoBT(databaseID, hobtID uint64, o ObjectName) {
	c.hobts[idKey{databaseID, hobtID}] = &o
}

// AddAllocUnit maps an allocation unit (transaction_log.alloc_unit_id).
func (c *Catalog) AddAllocUnit(databaseID, allocUnitID uint64, o ObjectName) {
	c.allocUnits[idKey{databaseID, allocUnitID}] = &o
}

// AddObject maps an object id (an OBJECT lock) to its table; Index is unset.
func (c *Catalog) AddObject(databaseID, objectID uint64, o ObjectName) {
	o.Index = ""
	c.objects[idKey{databaseID, objectID}] = &o
}

func (c *Catalog) page(db, file, page uint64) *ObjectName {
	if c == nil {
		return nil
	}
	if o := c.pages[pageKey{db, file, page}]; o != nil {
		return o
	}
	return c.pages[pageKey{0, file, page}]
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

// catalogFile is the JSON form of a Catalog (queryreplay timeline --catalog).
type catalogFile struct {
	Pages []struct {
		DatabaseID uint64 `json:"databaseId"`
		FileID     uint64 `json:"fileId"`
		PageID     uint64 `json:"pageId"`
		ObjectName
	} `json:"pages"`
	HoBTs []struct {
		DatabaseID uint64 `json:"databaseId"`
		HoBTID     uint64 `json:"hobtId"`
		ObjectName
	} `json:"hobts"`
	AllocUnits []struct {
		DatabaseID  uint64 `json:"databaseId"`
		AllocUnitID uint64 `json:"allocUnitId"`
		ObjectName
	} `json:"allocUnits"`
	Objects []struct {
		DatabaseID uint64 `json:"databaseId"`
		ObjectID   uint64 `json:"objectId"`
		ObjectName
	} `json:"objects"`
}

// ReadCatalog reads a catalog in JSON:
//
//	{"pages":      [{"databaseId":5,"fileId":1,"pageId":280,"schema":"dbo","table":"Orders","index":"PK_Orders"}],
//	 "hobts":      [{"databaseId":5,"hobtId":72057594043170816,"schema":"dbo","table":"Orders","index":"PK_Orders"}],
//	 "allocUnits": [{"databaseId":5,"allocUnitId":72057594049200128,…}],
//	 "objects":    [{"databaseId":5,"objectId":581577110,"schema":"dbo","table":"Orders"}]}
//
// Every entry needs a table name.
func ReadCatalog(r io.Reader) (*Catalog, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var f catalogFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("read catalog: %w", err)
	}
	c := NewCatalog()
	check := func(kind string, i int, o ObjectName) error {
		if strings.TrimSpace(o.Table) == "" {
			return fmt.Errorf("read catalog: %s[%d] has no table name", kind, i)
		}
		return nil
	}
	for i, p := range f.Pages {
		if err := check("pages", i, p.ObjectName); err != nil {
			return nil, err
		}
		c.AddPage(p.DatabaseID, p.FileID, p.PageID, p.ObjectName)
	}
	for i, h := range f.HoBTs {
		if err := check("hobts", i, h.ObjectName); err != nil {
			return nil, err
		}
		c.AddHoBT(h.DatabaseID, h.HoBTID, h.ObjectName)
	}
	for i, a := range f.AllocUnits {
		if err := check("allocUnits", i, a.ObjectName); err != nil {
			return nil, err
		}
		c.AddAllocUnit(a.DatabaseID, a.AllocUnitID, a.ObjectName)
	}
	for i, o := range f.Objects {
		if err := check("objects", i, o.ObjectName); err != nil {
			return nil, err
		}
		c.AddObject(o.DatabaseID, o.ObjectID, o.ObjectName)
	}
	return c, nil
}

// Package catalogfile decodes the catalog JSON that `queryreplay timeline
// --catalog` reads: which schema, table and index each page, HoBT,
// allocation unit and object id of a trace belongs to.
//
//	{"pages":      [{"databaseId":5,"fileId":1,"pageId":280,"schema":"dbo","table":"Orders","index":"PK_Orders"}],
//	 "hobts":      [{"databaseId":5,"hobtId":72057594043170816,"schema":"dbo","table":"Orders","index":"PK_Orders"}],
//	 "allocUnits": [{"databaseId":5,"allocUnitId":72057594049200128,"schema":"dbo","table":"Orders","index":"PK_Orders"}],
//	 "objects":    [{"databaseId":5,"objectId":581577110,"schema":"dbo","table":"Orders"}]}
//
// Database id 0 in an entry means "any database" (a catalog taken from one
// database). Every entry needs a table name; an object entry's index is
// dropped (an OBJECT lock names a table, never an index). Unknown fields are
// errors, so a misspelt key is reported instead of silently ignored.
//
// It sits in the parser layer: it turns bytes into plain values and knows
// nothing of timelines. pkg/timeline builds its Catalog from a File
// (timeline.CatalogFromFile). It does no I/O beyond the reader it is given.
// encoding/json does the decoding; nothing here needs more than that.
package catalogfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Object names a table (and index) as the catalog gives it.
type Object struct {
	Database string `json:"database,omitempty"`
	Schema   string `json:"schema,omitempty"`
	Table    string `json:"table"`
	Index    string `json:"index,omitempty"`
}

// Page maps one page to its object.
type Page struct {
	DatabaseID uint64 `json:"databaseId"`
	FileID     uint64 `json:"fileId"`
	PageID     uint64 `json:"pageId"`
	Object
}

// ID maps an identifier (a HoBT, allocation unit or object id) to its
// object.
type ID struct {
	DatabaseID uint64
	ID         uint64
	Object
}

// File is a decoded catalog.
type File struct {
	Pages []Page
	// HoBTs are sys.partitions.hobt_id values (a lock's
	// associated_object_id, a page split's rowset_id).
	HoBTs []ID
	// AllocUnits are transaction_log alloc_unit_id values.
	AllocUnits []ID
	// Objects are object ids (OBJECT locks); their Index is always empty.
	Objects []ID
}

type hobtJSON struct {
	DatabaseID uint64 `json:"databaseId"`
	HoBTID     uint64 `json:"hobtId"`
	Object
}

type allocUnitJSON struct {
	DatabaseID  uint64 `json:"databaseId"`
	AllocUnitID uint64 `json:"allocUnitId"`
	Object
}

type objectJSON struct {
	DatabaseID uint64 `json:"databaseId"`
	ObjectID   uint64 `json:"objectId"`
	Object
}

type fileJSON struct {
	Pages      []Page          `json:"pages"`
	HoBTs      []hobtJSON      `json:"hobts"`
	AllocUnits []allocUnitJSON `json:"allocUnits"`
	Objects    []objectJSON    `json:"objects"`
}

// Read decodes one catalog document from r.
func Read(r io.Reader) (*File, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var f fileJSON
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("read catalog: the input is empty")
		}
		return nil, fmt.Errorf("read catalog: %w", err)
	}
	if dec.More() {
		return nil, errors.New("read catalog: more than one JSON value; a catalog is one object")
	}
	out := &File{}
	for i, p := range f.Pages {
		if err := named("pages", i, p.Object); err != nil {
			return nil, err
		}
		out.Pages = append(out.Pages, p)
	}
	for i, h := range f.HoBTs {
		if err := named("hobts", i, h.Object); err != nil {
			return nil, err
		}
		out.HoBTs = append(out.HoBTs, ID{h.DatabaseID, h.HoBTID, h.Object})
	}
	for i, a := range f.AllocUnits {
		if err := named("allocUnits", i, a.Object); err != nil {
			return nil, err
		}
		out.AllocUnits = append(out.AllocUnits, ID{a.DatabaseID, a.AllocUnitID, a.Object})
	}
	for i, o := range f.Objects {
		if err := named("objects", i, o.Object); err != nil {
			return nil, err
		}
		o.Index = ""
		out.Objects = append(out.Objects, ID{o.DatabaseID, o.ObjectID, o.Object})
	}
	return out, nil
}

func named(kind string, i int, o Object) error {
	if strings.TrimSpace(o.Table) == "" {
		return fmt.Errorf("read catalog: %s[%d] has no table name", kind, i)
	}
	return nil
}

package catalogfile

import (
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	good := `{"pages":[{"databaseId":5,"fileId":1,"pageId":9,"schema":"dbo","table":"T","index":"PK"}],
	  "hobts":[{"databaseId":0,"hobtId":77,"table":"T"}],"allocUnits":[{"databaseId":5,"allocUnitId":8,"table":"T","index":"PK"}],
	  "objects":[{"databaseId":5,"objectId":3,"database":"Shop","table":"T","index":"x"}]}`
	f, err := Read(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Pages) != 1 || f.Pages[0] != (Page{DatabaseID: 5, FileID: 1, PageID: 9, Object: Object{Schema: "dbo", Table: "T", Index: "PK"}}) {
		t.Errorf("pages %+v", f.Pages)
	}
	if len(f.HoBTs) != 1 || f.HoBTs[0].ID != 77 || f.HoBTs[0].DatabaseID != 0 || f.HoBTs[0].Table != "T" {
		t.Errorf("hobts %+v", f.HoBTs)
	}
	if len(f.AllocUnits) != 1 || f.AllocUnits[0].ID != 8 || f.AllocUnits[0].Index != "PK" {
		t.Errorf("alloc units %+v", f.AllocUnits)
	}
	// An object entry names a table; an index given there is dropped, as an
	// OBJECT lock never names one.
	if len(f.Objects) != 1 || f.Objects[0].ID != 3 || f.Objects[0].Database != "Shop" || f.Objects[0].Index != "" {
		t.Errorf("objects %+v", f.Objects)
	}
}

func TestReadErrorsNameTheProblem(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"pages":[{"fileId":1}]}`, "pages[0] has no table name"},
		{`{"hobts":[{"hobtId":1,"table":"  "}]}`, "hobts[0] has no table name"},
		{`{"pagez":[]}`, `unknown field "pagez"`},
		{`[`, "read catalog"},
		{`{"pages":[]} {"pages":[]}`, "more than one JSON value"},
		{``, "empty"},
	} {
		_, err := Read(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want it to mention %q", tc.in, err, tc.want)
		}
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"pages":[{"databaseId":5,"fileId":1,"pageId":9,"table":"T"}],"objects":[{"objectId":3,"table":"T"}]}`))
	f.Add([]byte(`{"hobts":[{"hobtId":1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Read(strings.NewReader(string(data)))
		if (c == nil) == (err == nil) {
			t.Fatalf("Read returned catalog %v and error %v", c, err)
		}
		if err != nil {
			return
		}
		for _, p := range c.Pages {
			if strings.TrimSpace(p.Table) == "" {
				t.Fatal("a page without a table was accepted")
			}
		}
		for _, o := range c.Objects {
			if o.Index != "" {
				t.Fatal("an object entry kept an index")
			}
		}
	})
}

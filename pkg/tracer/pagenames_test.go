package tracer

import (
	"context"
	"strings"
	"testing"
)

// Naming the pages a trace read must never enumerate the whole database:
// sys.dm_db_database_page_allocations (undocumented) walks every
// allocation of the database, minutes on a large one, and runs only when
// the user asks for it. On SQL Server 2019+ each traced page is named
// through sys.dm_db_page_info, one bounded lookup per page; before 2019,
// without the permission to use the undocumented DMV, pages stay unnamed
// and the resolution says why.
func TestPageNamesNeverEnumerateTheDatabaseUnasked(t *testing.T) {
	for _, c := range []struct {
		persona    string
		allow      bool
		wantNamed  bool
		wantDMVRun bool
	}{
		{"sql2019", false, true, false},
		{"sql2022", false, true, false},
		{"sql2017", false, false, false},
		{"sql2017", true, true, true},
	} {
		srv := startWithModules(t, c.persona, nil)
		tr, log, _ := newTracer(t, srv.dsn, Policy{AllowClearBufferPool: true})
		b, err := tr.Trace(context.Background(), Options{SQL: selectSQL, ClearBufferPool: true, DisableReadAhead: true,
			UndocumentedPageAllocations: c.allow, MaxPageHeaders: -1})
		if err != nil {
			t.Fatalf("%s: %v", c.persona, err)
		}
		ran := false
		for _, q := range log.texts() {
			if strings.Contains(q, "dm_db_database_page_allocations") {
				ran = true
			}
		}
		if ran != c.wantDMVRun {
			t.Errorf("%s allow=%v: sys.dm_db_database_page_allocations ran: %v, want %v", c.persona, c.allow, ran, c.wantDMVRun)
		}
		res := b.Result.Resolution
		if res.Pages == 0 {
			t.Fatalf("%s: the trace read no pages", c.persona)
		}
		if c.wantNamed && res.PagesNamed != res.Pages {
			t.Errorf("%s allow=%v: %d of %d pages named (%v)", c.persona, c.allow, res.PagesNamed, res.Pages, res.Errors)
		}
		if !c.wantNamed && (res.PagesNamed != 0 || !strings.Contains(res.PageNameNote, "sys.dm_db_page_info")) {
			t.Errorf("%s allow=%v: %d pages named, note %q", c.persona, c.allow, res.PagesNamed, res.PageNameNote)
		}
	}
}

// The page lookups are bounded: beyond MaxPageNames the rest stay unnamed
// and the resolution says how many were looked up.
func TestPageNamesBounded(t *testing.T) {
	srv := startWithModules(t, "sql2022", nil)
	tr, log, _ := newTracer(t, srv.dsn, Policy{AllowClearBufferPool: true})
	b, err := tr.Trace(context.Background(), Options{SQL: selectSQL, ClearBufferPool: true, DisableReadAhead: true,
		MaxPageHeaders: -1, MaxPageNames: 1})
	if err != nil {
		t.Fatal(err)
	}
	res := b.Result.Resolution
	if res.Pages < 2 || res.PagesNamed != 1 || !strings.Contains(res.PageNameNote, "1 of") {
		t.Errorf("%d pages, %d named, note %q", res.Pages, res.PagesNamed, res.PageNameNote)
	}
	lookups := 0
	for _, q := range log.texts() {
		if strings.Contains(q, "dm_db_page_info") {
			lookups++
		}
	}
	if lookups != 1 {
		t.Errorf("%d page-info queries for one page", lookups)
	}
}

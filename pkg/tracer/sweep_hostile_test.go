package tracer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/timeline"
	"github.com/queryreplay/queryreplay/pkg/tsql"
)

// hostileSessionNames are event-session names that anyone allowed to
// create an event session could choose: the exact shape of a generated
// name with something after it, or a near miss of the grammar. Each is
// built around a payload that changes data if it ever reaches SQL text.
// Families, not literals: every way out of a comment, a string literal or
// a bracketed name, and every way the grammar could be loosened.
func hostileSessionNames(t testing.TB) []string {
	t.Helper()
	fresh := func() string {
		n, err := NewSessionName()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	base := fresh()
	const change = "UPDATE dbo.Products SET ListPrice = 0"
	escapes := []string{
		"_x */ " + change + " /*",             // out of a /* */ comment
		"_1_20260101000000000 */ " + change,   // a valid owner, then out
		"_1_20260101000000000' ; " + change,   // out of N'…'
		"_1_20260101000000000] ; " + change,   // out of […]
		"_1_20260101000000000\n" + change,     // a new line after a -- comment
		"_1_20260101000000000 -- \n" + change, // a line comment, then a statement
		"_1_2026010100000000" + "0;" + change, // no space at all
		"_x'; " + change + "; --",
	}
	var names []string
	for _, e := range escapes {
		names = append(names, base+e)
	}
	// Near misses of the grammar, each harmless-looking but not generated.
	names = append(names,
		base+"_",                               // empty owner
		base+"_0_20260101000000000",            // session id 0
		base+"_01_20260101000000000",           // a leading zero
		base+"_53_2026010100000000",            // 16-digit login time
		base+"_53_202601010000000000",          // 18 digits
		base+"_53_20260101000000000_",          // trailing _
		base+"_53_20260101000000000 ",          // trailing space
		base+"_\u0665\u0663_20260101000000000", // Arabic-Indic digits
		base+"_53_2026010100000000\uff10",      // a fullwidth zero
		// Names compare case-insensitively on a server, so each case
		// variant starts from its own fresh name.
		strings.ToUpper(SessionPrefix)+fresh()[len(SessionPrefix):], // QUERYREPLAY_
		SessionPrefix+strings.ToUpper(fresh()[len(SessionPrefix):]), // upper-case hex
		base[:len(base)-1]+"g", // not hex
		base[:len(SessionPrefix)+12]+"4"+base[len(SessionPrefix)+13:], // a UUID v4
	)
	return names
}

// TestSweepNeverRunsHostileNames is issue 23's reproduction: a session named
// queryreplay_<32 hex>_x */ UPDATE … /* made the sweep run the UPDATE.
// Every hostile name is created on the stand-in; the sweep (with no grace,
// so it would drop anything it thinks is an orphan) and a trace must leave
// every row as it was, leave the look-alikes alone, report them, and never
// send their text to the server.
func TestSweepNeverRunsHostileNames(t *testing.T) {
	srv := startStandin(t)
	tr, log, db := newTracer(t, srv.dsn, Policy{})
	ctx := context.Background()
	hostile := hostileSessionNames(t)
	for _, name := range hostile {
		s := SessionSpec{Name: name, SPID: 999, Directory: "/var/opt/mssql/log", MaxFileSizeMB: 2}
		if _, err := db.ExecContext(ctx, "CREATE EVENT SESSION "+tsql.QuoteName(name)+" ON SERVER ADD EVENT sqlserver.sql_batch_starting ADD TARGET package0.ring_buffer"); err != nil {
			t.Fatalf("create %q: %v (spec %v)", name, err, s.Name != "")
		}
	}
	orphan := orphanName(t, time.Now().Add(-2*time.Hour)) // a real orphan beside them
	if _, err := db.ExecContext(ctx, SessionSpec{Name: orphan, SPID: 999, Directory: "/var/opt/mssql/log", MaxFileSizeMB: 2}.CreateDDL()); err != nil {
		t.Fatal(err)
	}
	before := tableContents(t, db)

	rep, err := tr.Sweep(ctx, 0)
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	if !slices.Equal(rep.Dropped, []string{orphan}) {
		t.Errorf("dropped %q, want only the real orphan %s", rep.Dropped, orphan)
	}
	for _, name := range hostile {
		// QUERYREPLAY_… is another tool's prefix: left alone, not reported.
		if strings.HasPrefix(name, SessionPrefix) && !slices.Contains(rep.Ignored, name) {
			t.Errorf("the look-alike %q is not reported as ignored (ignored: %q)", name, rep.Ignored)
		}
	}
	if _, err := tr.Trace(ctx, Options{SQL: selectSQL, GracePeriod: time.Nanosecond}); err != nil {
		t.Fatalf("trace beside the look-alikes: %v", err)
	}
	if after := tableContents(t, db); after != before {
		t.Fatal("a sweep or a trace changed data through a hostile session name")
	}
	left := sessions(t, db)
	for _, name := range hostile {
		if strings.HasPrefix(name, SessionPrefix) && !slices.Contains(left, name) {
			t.Errorf("the look-alike %q was dropped; only generated names may be acted on", name)
		}
	}
	for _, q := range log.texts() {
		for _, name := range hostile {
			if strings.Contains(q, name) {
				t.Errorf("a hostile name reached the server's SQL text: %q", q)
			}
		}
	}
}

// TestGeneratedNamesAreRecognised: every name the tracer writes is one the
// sweep will act on, and it cannot hold anything but [a-z0-9_].
func TestGeneratedNamesAreRecognised(t *testing.T) {
	owners := []SessionOwner{
		{SPID: 1, LoginTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		{SPID: 32767, LoginTime: time.Date(2099, 12, 31, 23, 59, 59, 997e6, time.UTC)},
		{SPID: 53, LoginTime: time.Now()},
	}
	for i := 0; i < 200; i++ {
		name, err := NewOwnedSessionName(owners[i%len(owners)])
		if err != nil {
			t.Fatal(err)
		}
		plain, err := NewSessionName()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{name, plain} {
			if !IsGeneratedSessionName(n) {
				t.Fatalf("%q was generated but is not recognised", n)
			}
			if strings.Trim(n, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
				t.Fatalf("%q holds characters outside [a-z0-9_]", n)
			}
		}
		if spid, _, ok := SessionOwnerOf(name); !ok || spid != owners[i%len(owners)].SPID {
			t.Fatalf("owner of %q = %d, %v", name, spid, ok)
		}
	}
	for _, n := range hostileSessionNames(t) {
		if IsGeneratedSessionName(n) {
			t.Errorf("%q is accepted as generated", n)
		}
		if m := (SessionSpec{Name: n}).Marker(); m != "" {
			t.Errorf("a hostile name gets a marker comment: %q", m)
		}
	}
}

// dropWords are the keywords and bare identifiers of dropSessionSQL, in
// order, whatever the name: the name must only ever be a string literal
// and a bracketed identifier.
var dropWords = map[Scope][]string{
	ScopeServer:   {"IF", "EXISTS", "SELECT", "FROM", "sys", "server_event_sessions", "WHERE", "name", "DROP", "EVENT", "SESSION", "ON", "SERVER"},
	ScopeDatabase: {"IF", "EXISTS", "SELECT", "FROM", "sys", "database_event_sessions", "WHERE", "name", "DROP", "EVENT", "SESSION", "ON", "DATABASE"},
}

// FuzzDropSessionSQL lexes the DROP statement for any name with the
// stand-in's independent lexer: the statement's words never change, so no
// name can add a statement, end a literal or open a comment.
func FuzzDropSessionSQL(f *testing.F) {
	for _, n := range hostileSessionNames(f) {
		f.Add(n)
	}
	f.Add("")
	f.Add("]")
	f.Add("'")
	f.Add("*/")
	f.Add("\x00")
	f.Fuzz(func(t *testing.T, name string) {
		for scope, want := range dropWords {
			q := dropSessionSQL(name, scope)
			_, words, err := standin.IdentifierStarts(q)
			if err != nil {
				t.Fatalf("%q does not lex: %v", q, err)
			}
			if !slices.Equal(words, want) {
				t.Fatalf("name %q changed the statement's words:\n%s\ngot  %q\nwant %q", name, q, words, want)
			}
		}
		if m := (SessionSpec{Name: name}).Marker(); m != "" && (!IsGeneratedSessionName(name) || strings.Count(m, "*/") != 1) {
			t.Fatalf("marker %q for %q", m, name)
		}
	})
}

// FuzzSessionDDLDirectory: the event file's directory comes from the
// server (SERVERPROPERTY('ErrorLogFileName')) or from the user; whatever it
// holds, the CREATE statement's words stay the same.
func FuzzSessionDDLDirectory(f *testing.F) {
	f.Add(`/var/opt/mssql/log`)
	f.Add(`C:\Program Files\MSSQL16.O'Brien\MSSQL\Log\`)
	f.Add(`x'); DROP TABLE dbo.Orders; --`)
	f.Add("*/ UPDATE dbo.Products SET ListPrice = 0 /*")
	base := SessionSpec{Name: goldenName, SPID: 53, MaxFileSizeMB: 4, MaxEvents: 10, Events: bundle.AllEventGroups()}
	_, want, err := standin.IdentifierStarts(base.CreateDDL())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, dir string) {
		s := base
		s.Directory = dir
		_, words, err := standin.IdentifierStarts(s.CreateDDL())
		if err != nil {
			t.Fatalf("does not lex with directory %q: %v", dir, err)
		}
		if !slices.Equal(words, want) {
			t.Fatalf("directory %q changed the statement's words: %s", dir, fmt.Sprint(words))
		}
	})
}

// FuzzCatalogNamesInSQL: schema, table and index names come from the
// server's catalog, where anyone who may create a table chooses them. The
// %%lockres%% lookup and a file read keep their words whatever the names.
func FuzzCatalogNamesInSQL(f *testing.F) {
	f.Add("dbo", "Orders", "PK_Orders", `/var/opt/mssql/log/x.xel`)
	f.Add("d]bo", "Or'ders", "*/ UPDATE dbo.Products SET ListPrice = 0 /*", `x'); DELETE dbo.Orders; --`)
	want := func(q string) []string {
		_, w, err := standin.IdentifierStarts(q)
		if err != nil {
			f.Fatal(err)
		}
		return w
	}
	lockWords := want(lockResSQL(timeline.ObjectName{Schema: "s", Table: "t", Index: "i"}, 3))
	bulk := func(p string) string {
		return "SELECT BulkColumn FROM OPENROWSET(BULK " + tsql.QuoteString(p) + ", SINGLE_BLOB) AS f"
	}
	bulkWords := want(bulk("p"))
	f.Fuzz(func(t *testing.T, schema, table, index, path string) {
		for _, c := range []struct {
			q    string
			want []string
		}{
			{lockResSQL(timeline.ObjectName{Schema: schema, Table: table, Index: index}, 3), lockWords},
			{bulk(path), bulkWords},
		} {
			_, words, err := standin.IdentifierStarts(c.q)
			if err != nil {
				t.Fatalf("%q does not lex: %v", c.q, err)
			}
			if !slices.Equal(words, c.want) {
				t.Fatalf("names changed the statement's words:\n%s\ngot  %q\nwant %q", c.q, words, c.want)
			}
		}
	})
}

package releasecheck

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/microsoft/go-mssqldb"

	"github.com/queryreplay/queryreplay/internal/standin"
)

const sampleDatabaseScript = "scripts/compose/sample-database.sql"

type scriptColumn struct {
	Name, Type string
	Length     int64 // nvarchar length, 0 otherwise
	NotNull    bool
}

type scriptTable struct {
	Name    string
	Columns []scriptColumn
	PK      string
	PKCols  []string
}

var (
	createTable = regexp.MustCompile(`(?s)CREATE TABLE dbo\.(\w+) \((.*?)\n\s*\);`)
	columnLine  = regexp.MustCompile(`^\s*(\w+)\s+(\w+)(?:\((\d+)\))?\s+(NOT NULL|NULL)(?:\s+CONSTRAINT (\w+) PRIMARY KEY CLUSTERED)?,?$`)
	tablePK     = regexp.MustCompile(`^\s*CONSTRAINT (\w+) PRIMARY KEY CLUSTERED \(([^)]*)\)$`)
	createIndex = regexp.MustCompile(`CREATE NONCLUSTERED INDEX (\w+) ON dbo\.(\w+) \((\w+)\)`)
	topRows     = regexp.MustCompile(`(?s)SELECT TOP \((\d+)\) ROW_NUMBER\(\).*?INSERT dbo\.(\w+)`)
	grantServer = regexp.MustCompile(`(?m)^GRANT ([A-Z ]+?) TO queryreplay;`)
	grantOnObj  = regexp.MustCompile(`(?m)^GRANT ([A-Z, ]+?) ON (SCHEMA|OBJECT)::(\w+) TO queryreplay;`)
)

// parseSampleTables reads the CREATE TABLE statements of the script.
func parseSampleTables(t testing.TB, script string) map[string]scriptTable {
	t.Helper()
	out := map[string]scriptTable{}
	for _, m := range createTable.FindAllStringSubmatch(script, -1) {
		tbl := scriptTable{Name: m[1]}
		for _, line := range strings.Split(strings.TrimSpace(m[2]), "\n") {
			if c := columnLine.FindStringSubmatch(line); c != nil {
				col := scriptColumn{Name: c[1], Type: strings.ToUpper(c[2]), NotNull: c[4] == "NOT NULL"}
				if c[3] != "" {
					col.Length, _ = strconv.ParseInt(c[3], 10, 64)
				}
				if c[5] != "" {
					tbl.PK, tbl.PKCols = c[5], []string{c[1]}
				}
				tbl.Columns = append(tbl.Columns, col)
				continue
			}
			if p := tablePK.FindStringSubmatch(line); p != nil {
				tbl.PK = p[1]
				for _, c := range strings.Split(p[2], ",") {
					tbl.PKCols = append(tbl.PKCols, strings.TrimSpace(c))
				}
				continue
			}
			t.Fatalf("%s: cannot read this line of CREATE TABLE dbo.%s: %q", sampleDatabaseScript, m[1], line)
		}
		out[tbl.Name] = tbl
	}
	return out
}

func startStandin(t testing.TB) *sql.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	run, err := standin.Start(ctx, "127.0.0.1:0", standin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Close() })
	db, err := sql.Open("sqlserver", run.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// The sample database has the stand-in's demo schema: the same tables,
// columns, types, primary keys, index and row counts, so that every demo
// scenario runs on the compose SQL Server as it does on the stand-in.
func TestSampleDatabaseMatchesStandin(t *testing.T) {
	script := string(readFile(t, repoPath(t, sampleDatabaseScript)))
	tables := parseSampleTables(t, script)
	want := []string{"Customers", "OrderLines", "Orders", "Products"}
	var got []string
	for name := range tables {
		got = append(got, name)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("the script creates %v, the stand-in's demo database has %v", got, want)
	}
	db := startStandin(t)
	ctx := context.Background()
	for _, name := range want {
		tbl := tables[name]
		rows, err := db.QueryContext(ctx, "SELECT TOP 0 * FROM dbo."+name)
		if err != nil {
			t.Fatal(err)
		}
		types, err := rows.ColumnTypes()
		rows.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(types) != len(tbl.Columns) {
			t.Errorf("dbo.%s: %d columns in the script, %d in the stand-in", name, len(tbl.Columns), len(types))
			continue
		}
		for i, ct := range types {
			c := tbl.Columns[i]
			if ct.Name() != c.Name || ct.DatabaseTypeName() != c.Type {
				t.Errorf("dbo.%s column %d: script %s %s, stand-in %s %s", name, i+1, c.Name, c.Type, ct.Name(), ct.DatabaseTypeName())
			}
			if n, ok := ct.Length(); ok && c.Length != 0 && n != c.Length {
				t.Errorf("dbo.%s.%s: length %d in the script, %d in the stand-in", name, c.Name, c.Length, n)
			}
		}
		checkNullability(t, db, tbl)
		checkIndexes(t, db, tbl, script)
	}
	// Row counts: generated tables have the stand-in's sizes.
	counts := map[string]int{}
	for _, m := range topRows.FindAllStringSubmatch(script, -1) {
		counts[m[2]], _ = strconv.Atoi(m[1])
	}
	for name, n := range counts {
		var have int
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM dbo."+name).Scan(&have); err != nil {
			t.Fatal(err)
		}
		if have != n {
			t.Errorf("dbo.%s: the script makes %d rows, the stand-in has %d", name, n, have)
		}
	}
	if len(counts) != 3 {
		t.Errorf("want generated row counts for Customers, Products and Orders, found %v", counts)
	}
}

// checkNullability compares NOT NULL with the stand-in's sys.columns (its
// result-set metadata marks every column nullable, so that is not the
// reference).
func checkNullability(t *testing.T, db *sql.DB, tbl scriptTable) {
	t.Helper()
	rows, err := db.Query("SELECT c.name, c.is_nullable FROM sys.columns AS c JOIN sys.objects AS o ON o.object_id = c.object_id WHERE o.name = @p1 ORDER BY c.column_id", tbl.Name)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var have []string
	for rows.Next() {
		var name string
		var nullable bool
		if err := rows.Scan(&name, &nullable); err != nil {
			t.Fatal(err)
		}
		have = append(have, fmt.Sprintf("%s notnull=%v", name, !nullable))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, c := range tbl.Columns {
		want = append(want, fmt.Sprintf("%s notnull=%v", c.Name, c.NotNull))
	}
	if !slices.Equal(have, want) {
		t.Errorf("dbo.%s nullability: script %v, stand-in sys.columns %v", tbl.Name, want, have)
	}
}

// checkIndexes compares the script's primary key and nonclustered indexes
// of one table with the stand-in's sys.indexes.
func checkIndexes(t *testing.T, db *sql.DB, tbl scriptTable, script string) {
	t.Helper()
	want := map[string]bool{tbl.PK: true}
	for _, m := range createIndex.FindAllStringSubmatch(script, -1) {
		if m[2] == tbl.Name {
			want[m[1]] = false
		}
	}
	rows, err := db.Query("SELECT i.name, i.is_primary_key FROM sys.indexes AS i JOIN sys.objects AS o ON o.object_id = i.object_id WHERE o.name = @p1 AND i.name IS NOT NULL", tbl.Name)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var name string
		var pk bool
		if err := rows.Scan(&name, &pk); err != nil {
			t.Fatal(err)
		}
		have[name] = pk
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(have) != fmt.Sprint(want) {
		t.Errorf("dbo.%s indexes (name → primary key): script %v, stand-in %v", tbl.Name, want, have)
	}
}

// The stand-in's demo scenarios name only tables the script creates, and
// through their aliases only columns those tables have.
func TestSampleDatabaseCoversScenarios(t *testing.T) {
	script := string(readFile(t, repoPath(t, sampleDatabaseScript)))
	tables := parseSampleTables(t, script)
	columns := map[string]map[string]bool{}
	for _, tbl := range tables {
		cols := map[string]bool{}
		for _, c := range tbl.Columns {
			cols[strings.ToLower(c.Name)] = true
		}
		columns[strings.ToLower(tbl.Name)] = cols
	}
	table := regexp.MustCompile(`(?i)\bdbo\.(\w+)(?:\s+(?:AS\s+)?(\w+))?`)
	column := regexp.MustCompile(`\b(\w+)\.(\w+)\b`)
	keywords := map[string]bool{"where": true, "join": true, "on": true, "with": true, "inner": true, "left": true, "cross": true, "order": true, "group": true, "set": true, "option": true, "output": true, "values": true}
	scenarios := standin.Scenarios()
	if len(scenarios) == 0 {
		t.Fatal("the stand-in has no scenarios")
	}
	checked := 0
	procs := sampleProcedures(t, script)
	for _, s := range scenarios {
		aliases := map[string]string{}
		for _, m := range table.FindAllStringSubmatch(s.SQL, -1) {
			name := strings.ToLower(m[1])
			if procs[name] {
				continue
			}
			if columns[name] == nil {
				t.Errorf("scenario %s uses dbo.%s, which the sample database does not have", s.Name, m[1])
				continue
			}
			aliases[name] = name
			if a := strings.ToLower(m[2]); a != "" && !keywords[a] {
				aliases[a] = name
			}
		}
		for _, m := range column.FindAllStringSubmatch(s.SQL, -1) {
			tbl, ok := aliases[strings.ToLower(m[1])]
			if !ok {
				continue // dbo.X itself, a CTE, a sys view
			}
			checked++
			if !columns[tbl][strings.ToLower(m[2])] && columns[strings.ToLower(m[2])] == nil {
				t.Errorf("scenario %s uses %s.%s, and dbo.%s has no column %s in the sample database", s.Name, m[1], m[2], tbl, m[2])
			}
		}
	}
	if checked == 0 {
		t.Fatal("no aliased column reference was checked; the pattern is broken")
	}
}

// The trace login gets exactly what the tracer's permission check asks for
// (pkg/tracer/permissions.go) and what docs/security.md lists: nothing
// more, and nothing the docs do not explain.
func TestSampleDatabaseGrants(t *testing.T) {
	script := string(readFile(t, repoPath(t, sampleDatabaseScript)))
	var server, database []string
	for _, m := range grantServer.FindAllStringSubmatch(script, -1) {
		server = append(server, m[1])
	}
	for _, m := range grantOnObj.FindAllStringSubmatch(script, -1) {
		for _, p := range strings.Split(m[1], ",") {
			database = append(database, strings.TrimSpace(p)+" ON "+m[2]+"::"+m[3])
		}
	}
	slices.Sort(server)
	if want := []string{"ALTER ANY EVENT SESSION", "VIEW SERVER STATE"}; !slices.Equal(server, want) {
		t.Errorf("server grants = %v, want %v (what pkg/tracer checks for)", server, want)
	}
	slices.Sort(database)
	if want := []string{"EXECUTE ON SCHEMA::dbo", "SELECT ON SCHEMA::dbo", "VIEW DEFINITION ON SCHEMA::dbo"}; !slices.Equal(database, want) {
		t.Errorf("database grants = %v, want %v", database, want)
	}
	if strings.Contains(strings.ToLower(script), "sp_addsrvrolemember") || regexp.MustCompile(`(?i)ALTER SERVER ROLE`).MatchString(script) {
		t.Error("the trace login must not join a server role")
	}
	perms := string(readFile(t, repoPath(t, "pkg/tracer/permissions.go")))
	for _, p := range server {
		if !strings.Contains(perms, `"`+p+`"`) {
			t.Errorf("the script grants %s, which pkg/tracer's permission check does not ask for", p)
		}
	}
	doc := readFile(t, repoPath(t, "docs/security.md"))
	for _, p := range append(server, "SELECT", "EXECUTE", "VIEW DEFINITION") {
		if !strings.Contains(string(doc), p) {
			t.Errorf("the script grants %s, which docs/security.md does not list", p)
		}
	}
}

var createProcedure = regexp.MustCompile(`(?is)CREATE OR ALTER PROCEDURE dbo\.(\w+)(.*?)\nGO\n`)

// sampleProcedures returns the procedures the script creates (lower-case
// names), after checking that they are the stand-in's demo procedures word
// for word, so a scenario that calls one runs the same statements on both.
func sampleProcedures(t *testing.T, script string) map[string]bool {
	t.Helper()
	inScript := map[string]string{}
	for _, m := range createProcedure.FindAllStringSubmatch(script, -1) {
		inScript[strings.ToLower(m[1])] = strings.Join(strings.Fields("CREATE PROCEDURE dbo."+m[1]+m[2]), " ")
	}
	out := map[string]bool{}
	for _, def := range standin.DemoProcedures() {
		words := strings.Fields(def)
		if len(words) < 3 || !strings.HasPrefix(strings.ToLower(words[2]), "dbo.") {
			t.Fatalf("demo procedure %q does not start CREATE PROCEDURE dbo.…", def)
		}
		name := strings.ToLower(strings.TrimPrefix(strings.ToLower(words[2]), "dbo."))
		got, ok := inScript[name]
		if !ok {
			t.Errorf("the sample database does not create the demo procedure dbo.%s", name)
			continue
		}
		if want := strings.Join(words, " "); got != want {
			t.Errorf("dbo.%s differs:\nscript:   %s\nstand-in: %s", name, got, want)
		}
		out[name] = true
	}
	if len(out) == 0 {
		t.Fatal("the stand-in has no demo procedures; the check is broken")
	}
	return out
}

package plugin

import (
	"context"
	"database/sql"
	"testing"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/internal/symfixture"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// seekSQL is the stand-in's seek_key_lookup scenario.
const seekSQL = "SELECT o.OrderID, o.OrderDate, o.Amount FROM dbo.Orders AS o WHERE o.CustomerID = 42"

// startWithModules starts the stand-in as persona with the symbol
// fixture's module builds.
func startWithModules(t *testing.T, persona string, builds map[string]standin.ModuleBuild) *fixture {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	run, err := standin.Start(ctx, "127.0.0.1:0", standin.Options{Persona: persona, ModuleBuilds: builds, XELEncoder: xe.EncodeXMLAsXEL})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	db, err := sql.Open("sqlserver", run.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(); run.Close(); cancel() })
	return &fixture{run: run, db: db, dir: t.TempDir()}
}

// The datasource's trace with call stacks downloads the PDBs from the
// configured symbol server into symbolCacheDir and returns each event's own
// resolved stack (lane rows → stack_frames) and the page headers.
func TestTraceReturnsEventStacksAndPageHeaders(t *testing.T) {
	fx, sym := symfixture.ServeTest(t)
	f := startWithModules(t, "sql2022", fx.Builds)
	d := f.datasource(t, "ds1", map[string]any{"allowBufferPoolClear": true, "symbolServers": []string{sym.URL}, "symbolCacheDir": t.TempDir()})
	fs := ok(t, run(t, d, context.Background(), query("A", map[string]any{"queryType": "trace", "sql": seekSQL,
		"options": map[string]any{"callStacks": true, "clearBufferPool": true, "disableReadAhead": true}}))["A"])
	sf := frameNamed(t, fs, "stack_frames")
	if c := custom(t, sf); c["resolved"] != c["frames"] || c["frames"] == float64(0) {
		t.Fatalf("stack_frames meta %v: every frame should resolve", c)
	}
	byStack := map[int64]map[string]string{} // stack → symbol → badge
	for i := 0; i < sf.Rows(); i++ {
		id := sf.Fields[0].At(i).(int64)
		if byStack[id] == nil {
			byStack[id] = map[string]string{}
		}
		sym, _ := sf.FieldByName("label")
		badge, _ := sf.FieldByName("badge")
		byStack[id][sym.At(i).(string)] = badge.At(i).(string)
	}
	read := frameNamed(t, fs, "lane_read")
	stackField, _ := read.FieldByName("stackId")
	if stackField == nil || read.Rows() == 0 {
		t.Fatal("no page reads with stacks")
	}
	id := stackField.At(0).(*int64)
	if id == nil {
		t.Fatal("the first page read has no stack")
	}
	found := false
	for label, badge := range byStack[*id] {
		if len(label) > len("sqlmin!BPool::ReadPage") && label[:len("sqlmin!BPool::ReadPage")] == "sqlmin!BPool::ReadPage" && badge == "BufferPool" {
			found = true
		}
	}
	if !found {
		t.Errorf("the page read's stack %d lacks sqlmin!BPool::ReadPage (BufferPool): %v", *id, byStack[*id])
	}
	pages := frameNamed(t, fs, "pages")
	if c := custom(t, pages); c["pageInfo"] != true {
		t.Fatalf("pages meta %v", c)
	}
	lv, _ := pages.FieldByName("indexLevel")
	levels := map[int64]bool{}
	for i := 0; i < pages.Rows(); i++ {
		if l := lv.At(i).(*int64); l != nil {
			levels[*l] = true
		}
	}
	if !levels[0] || !levels[1] {
		t.Errorf("a seek's pages should show the root (level 1) and leaves (level 0): %v", levels)
	}
}

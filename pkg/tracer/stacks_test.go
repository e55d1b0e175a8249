package tracer

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/internal/symfixture"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/callstack"
	"github.com/queryreplay/queryreplay/pkg/timeline"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// startWithModules starts the stand-in as persona with the symbol
// fixture's module builds.
func startWithModules(t *testing.T, persona string, builds map[string]standin.ModuleBuild) *testServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	run, err := standin.Start(ctx, "127.0.0.1:0", standin.Options{Persona: persona, ModuleBuilds: builds, XELEncoder: xe.EncodeXMLAsXEL})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Close(); cancel() })
	return &testServer{dsn: run.DSN, running: run}
}

// resolvedStack is a stack as module!symbol lines with their classification.
type resolvedStack struct {
	names   []string
	classes []*callstack.Classification
}

func classify(s *timeline.Stack) resolvedStack {
	c := callstack.DefaultClassifier()
	var out resolvedStack
	for _, f := range s.Frames {
		out.names = append(out.names, f.Module+"!"+f.Symbol)
		cl := c.Classify(f.Module, f.Symbol)
		out.classes = append(out.classes, &cl)
	}
	return out
}

// has reports whether the stack holds name with the category and module badge.
func (r resolvedStack) has(name, category, moduleBadge string) bool {
	i := slices.Index(r.names, name)
	return i >= 0 && r.classes[i].Category == category && r.classes[i].ModuleBadge == moduleBadge
}

func stackOfEntry(t *testing.T, tr *timeline.Trace, id uint32, what string) resolvedStack {
	t.Helper()
	s := tr.StackByID(id)
	if s == nil {
		t.Fatalf("%s has no stack (id %d)", what, id)
	}
	return classify(s)
}

// End to end: the tracer traces a seek on the stand-in with call stacks,
// downloads the PDBs from a loopback symbol server and resolves every frame
// to module!Class::Method; page reads, locks and waits carry their own
// stacks with the right badges. SQL Server 2022 gives callstack_rva frames
// (PDB identity included); SQL Server 2017 raw addresses, placed through
// sys.dm_os_loaded_modules, with the identities given.
func TestCallStacksResolveEndToEnd(t *testing.T) {
	fx, sym := symfixture.ServeTest(t)
	for _, persona := range []string{"sql2022", "sql2017"} {
		t.Run(persona, func(t *testing.T) {
			srv := startWithModules(t, persona, fx.Builds)
			tr, _, _ := newTracer(t, srv.dsn, Policy{AllowClearBufferPool: true})
			o := Options{SQL: selectSQL, CallStacks: true, ClearBufferPool: true, DisableReadAhead: true, Events: bundle.AllEventGroups(),
				SymbolServers: []string{sym.URL}, SymbolCacheDir: t.TempDir(), SymbolTimeout: time.Minute}
			if persona == "sql2017" {
				o.ModuleIdentities = map[string]callstack.ModuleKey{}
				for m, b := range fx.Builds {
					o.ModuleIdentities[m] = callstack.ModuleKey{Module: m, PDB: m + ".pdb", GUID: b.GUID, Age: b.Age}
				}
			}
			b, err := tr.Trace(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			res, trace := b.Result.Resolution, b.Trace
			if res.Stacks == 0 || res.FramesResolved != res.StackFrames || len(res.SymbolErrors) != 0 {
				t.Fatalf("resolution: %d stacks, %d of %d frames resolved, errors %v", res.Stacks, res.FramesResolved, res.StackFrames, res.SymbolErrors)
			}
			if len(trace.Lanes.Read) == 0 || len(trace.Lanes.Lock) == 0 || len(trace.Lanes.Wait) == 0 {
				t.Fatalf("reads %d locks %d waits %d", len(trace.Lanes.Read), len(trace.Lanes.Lock), len(trace.Lanes.Wait))
			}
			read := stackOfEntry(t, trace, trace.Lanes.Read[0].Stack, "the first page read")
			for _, w := range [][3]string{
				{"sqlmin!XeSqlPkg::physical_page_read::Publish", "XEventInfrastructure", "Storage Engine"},
				{"sqlmin!BPool::ReadPage", "BufferPool", "Storage Engine"},
				{"sqlmin!FixPageNotThruLinkage", "PageAccess", "Storage Engine"},
				{"sqlmin!BTreeMgr::Seek", "IndexAccess", "Storage Engine"},
				{"sqlmin!CQScanRangeNew::GetRow", "QueryOperator", "Storage Engine"},
			} {
				if !read.has(w[0], w[1], w[2]) {
					t.Errorf("page read stack lacks %s (%s, %s): %v", w[0], w[1], w[2], read.names)
				}
			}
			lock := stackOfEntry(t, trace, trace.Lanes.Lock[0].Stack, "the first lock")
			if !lock.has("sqlmin!lck_lockInternal", "Locking", "Storage Engine") || !lock.has("sqlmin!lck_ProduceExtendedEvent", "XEventInfrastructure", "Storage Engine") {
				t.Errorf("lock stack: %v", lock.names)
			}
			var latch *timeline.WaitInterval
			for i := range trace.Lanes.Wait {
				if strings.HasPrefix(trace.Lanes.Wait[i].WaitType, "PAGEIOLATCH") {
					latch = &trace.Lanes.Wait[i]
					break
				}
			}
			if latch == nil {
				t.Fatal("no PAGEIOLATCH wait")
			}
			wait := stackOfEntry(t, trace, latch.Stack, "the PAGEIOLATCH wait")
			if !wait.has("sqldk!SOS_Scheduler::SuspendNonPreemptive", "SqlOs", "SQL OS") || !wait.has("sqlmin!LatchBase::Suspend", "Latching", "Storage Engine") {
				t.Errorf("wait stack: %v", wait.names)
			}
			if i := slices.Index(wait.names, "sqldk!SOS_Scheduler::SuspendNonPreemptive"); i < 0 || !wait.classes[i].Infrastructure {
				t.Error("the scheduler frame is not infrastructure")
			}
			// a distinct stack is stored once, whatever the number of events on it
			total := 0
			for _, s := range trace.Stacks {
				total += s.Events
			}
			if len(trace.Stacks) >= total {
				t.Errorf("%d stacks for %d events: nothing deduplicated", len(trace.Stacks), total)
			}
		})
	}
}

// The page headers of the pages a seek touched: its root (level 1, index
// page, no neighbours) and leaves (level 0, data pages, chained to their
// neighbours), from sys.dm_db_page_info on SQL Server 2019+; before that
// only when the undocumented allocation DMV is allowed.
func TestPageHeaders(t *testing.T) {
	for _, c := range []struct {
		persona string
		allow   bool
		source  string
	}{{"sql2019", false, PageHeadersPageInfo}, {"sql2017", false, ""}, {"sql2017", true, PageHeadersAllocations}} {
		srv := startWithModules(t, c.persona, nil)
		tr, _, _ := newTracer(t, srv.dsn, Policy{AllowClearBufferPool: true})
		b, err := tr.Trace(context.Background(), Options{SQL: selectSQL, ClearBufferPool: true, DisableReadAhead: true, UndocumentedPageAllocations: c.allow})
		if err != nil {
			t.Fatal(err)
		}
		res := b.Result.Resolution
		if res.PageHeaderSource != c.source {
			t.Fatalf("%s allow=%v: source %q, want %q (%s)", c.persona, c.allow, res.PageHeaderSource, c.source, res.PageHeaderNote)
		}
		if c.source == "" {
			if len(b.Trace.Pages) != 0 || !strings.Contains(res.PageHeaderNote, "sys.dm_db_page_info") {
				t.Fatalf("%s without the undocumented DMV: %d headers, note %q", c.persona, len(b.Trace.Pages), res.PageHeaderNote)
			}
			continue
		}
		read := map[uint64]bool{}
		for _, e := range b.Trace.Lanes.Read {
			read[e.PageID] = true
		}
		if len(b.Trace.Pages) != len(read) || res.PageHeaders != len(read) {
			t.Fatalf("%s: %d headers for %d pages read", c.persona, len(b.Trace.Pages), len(read))
		}
		var roots, leaves int
		byPage := map[uint64]timeline.PageHeader{}
		for _, h := range b.Trace.Pages {
			byPage[h.PageID] = h
		}
		for _, h := range b.Trace.Pages {
			switch {
			case h.Level == 1 && h.Type == "INDEX_PAGE" && h.PrevPage == 0 && h.NextPage == 0:
				roots++
			case h.Level == 0 && h.ObjectID != 0 && (h.Type == "DATA_PAGE" && h.IndexID == 1 || h.Type == "INDEX_PAGE" && h.IndexID > 1):
				// a clustered index's leaves are data pages, a nonclustered
				// index's are index pages; a neighbour read too points back
				leaves++
				if n, ok := byPage[h.NextPage]; ok && h.NextPage != 0 && n.PrevPage != h.PageID {
					t.Errorf("%s: page %d's next is %d, whose previous is %d", c.persona, h.PageID, h.NextPage, n.PrevPage)
				}
			default:
				t.Errorf("%s: header %+v", c.persona, h)
			}
		}
		if roots == 0 || leaves == 0 {
			t.Errorf("%s: %d roots, %d leaves", c.persona, roots, leaves)
		}
	}
}

// Without symbol servers nothing is downloaded and frames stay module+RVA,
// saying why; an unreachable symbol server costs at most SymbolTimeout and
// never fails the trace.
func TestCallStacksUnresolvedAreReported(t *testing.T) {
	srv := startWithModules(t, "sql2022", nil)
	tr, _, _ := newTracer(t, srv.dsn, Policy{AllowClearBufferPool: true})
	b, err := tr.Trace(context.Background(), Options{SQL: selectSQL, CallStacks: true, ClearBufferPool: true, Events: bundle.AllEventGroups()})
	if err != nil {
		t.Fatal(err)
	}
	res := b.Result.Resolution
	if res.Stacks == 0 || res.FramesResolved != 0 || len(res.SymbolErrors) == 0 || !strings.Contains(strings.Join(res.SymbolErrors, ";"), "no symbol server or cache configured") {
		t.Fatalf("no servers: %+v", res)
	}
	f := b.Trace.Stacks[0].Frames[0]
	if f.Symbol != "" || !f.HasRVA || f.Module == "" || f.Unresolved == "" {
		t.Fatalf("frame %+v", f)
	}
	start := time.Now()
	b, err = tr.Trace(context.Background(), Options{SQL: selectSQL, CallStacks: true, ClearBufferPool: true, Events: bundle.AllEventGroups(), SymbolServers: []string{"http://127.0.0.1:1/symbols"},
		SymbolCacheDir: t.TempDir(), SymbolTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("an unreachable symbol server took %s", took)
	}
	res = b.Result.Resolution
	if res.FramesResolved != 0 || len(res.SymbolErrors) == 0 || !strings.Contains(res.SymbolErrors[0], "sql") {
		t.Fatalf("unreachable server: %+v", res)
	}
}

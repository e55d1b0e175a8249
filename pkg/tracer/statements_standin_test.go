package tracer

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/symfixture"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// TestTraceStatementsStandin (issue 30): a procedure of several statements,
// one a nested EXEC, replays with every statement on its own node of the
// tree, with its own plan and timeline: dbo.RegionReport counts customers
// and calls dbo.CustomerOrders, whose two SELECTs have plans of their own.
func TestTraceStatementsStandin(t *testing.T) {
	srv := startStandin(t)
	tr, _, db := newTracer(t, srv.dsn, Policy{})
	b, err := tr.Trace(context.Background(), Options{SQL: "EXEC dbo.RegionReport @region = N'West'", Events: bundle.AllEventGroups()})
	if err != nil {
		t.Fatalf("trace: %v", err)
	}
	for _, w := range b.Result.Warnings {
		if strings.Contains(w, "uses the first") {
			t.Errorf("warning %q: every statement should have its own timeline", w)
		}
	}
	st := b.Statements
	if len(st) == 0 || st[0].Kind != "batch" || st[0].Parent != -1 {
		t.Fatalf("statement tree %+v: want the batch as node 0", st)
	}
	find := func(prefix string) *timeline.Statement {
		for i := 1; i < len(st); i++ {
			if strings.HasPrefix(st[i].Text, prefix) {
				return &st[i]
			}
		}
		t.Fatalf("no statement %q in the tree: %v", prefix, texts(st))
		return nil
	}
	exec := find("EXEC dbo.RegionReport")
	count := find("SELECT COUNT(*) AS Customers")
	call := find("EXEC dbo.CustomerOrders")
	customers := find("SELECT c.CustomerID, c.Name")
	orders := find("SELECT o.OrderID")
	for _, c := range []struct {
		s      *timeline.Statement
		parent int
		nest   int
		object string
	}{{exec, 0, 0, ""}, {count, exec.ID, 1, "RegionReport"}, {call, exec.ID, 1, "RegionReport"},
		{customers, call.ID, 2, "CustomerOrders"}, {orders, call.ID, 2, "CustomerOrders"}} {
		if c.s.Parent != c.parent || c.s.NestLevel != c.nest || c.s.ObjectName != c.object {
			t.Errorf("%q: parent %d, nest %d, object %q; want %d, %d, %q", c.s.Text, c.s.Parent, c.s.NestLevel, c.s.ObjectName, c.parent, c.nest, c.object)
		}
		if c.s.Executions != 1 || c.s.Trace == nil {
			t.Errorf("%q: %d executions, trace %v", c.s.Text, c.s.Executions, c.s.Trace != nil)
		}
	}
	for _, s := range []*timeline.Statement{count, customers, orders} {
		if s.Plan == "" || s.Trace == nil || len(s.Trace.Operators) == 0 {
			t.Fatalf("%q has no plan or operators of its own", s.Text)
		}
		if !strings.HasPrefix(s.Trace.Statement, s.Text[:20]) {
			t.Errorf("statement %q has the timeline of %q", s.Text, s.Trace.Statement)
		}
		if s.Events == 0 || len(s.Trace.Lanes.Read) == 0 && s.PhysicalReads > 0 {
			t.Errorf("%q: %d events", s.Text, s.Events)
		}
		if s.Trace.Summary.Lanes["lock"] == 0 {
			t.Errorf("%q: no locks of its own (lanes %v)", s.Text, s.Trace.Summary.Lanes)
		}
		for lane, n := range s.Trace.Summary.Unmatched {
			if n > 0 && (lane == "read" || lane == "lock") {
				t.Errorf("%q: %d %s unmatched", s.Text, n, lane)
			}
		}
		if s.StartUs > s.EndUs || s.EndUs == 0 {
			t.Errorf("%q: boundaries %d..%d", s.Text, s.StartUs, s.EndUs)
		}
	}
	// statements in order, the nested ones inside their EXEC
	if !(count.EndUs <= call.StartUs && call.StartUs <= customers.StartUs && customers.EndUs <= orders.StartUs && orders.EndUs <= call.EndUs) {
		t.Errorf("boundaries out of order: count %d..%d, call %d..%d, customers %d..%d, orders %d..%d",
			count.StartUs, count.EndUs, call.StartUs, call.EndUs, customers.StartUs, customers.EndUs, orders.StartUs, orders.EndUs)
	}
	if b.Trace == nil || b.Trace.Statement != count.Trace.Statement {
		t.Errorf("the bundle's trace should be the first planned statement's")
	}
	if got := sessions(t, db); len(got) != 0 {
		t.Errorf("sessions left behind: %v", got)
	}
}

// TestTraceBatchStatementsStandin (issue 30, "what was seen"): a batch of
// two SELECTs no longer folds the second statement's events into the
// first plan's operators: each statement has its own plan, and the
// second's locks are matched on its own operators, none left unmatched.
func TestTraceBatchStatementsStandin(t *testing.T) {
	srv := startStandin(t)
	tr, _, _ := newTracer(t, srv.dsn, Policy{})
	for _, mode := range []ReadBackMode{ReadBackXML, ReadBackBinary} {
		sql := "SELECT CustomerID, Name FROM dbo.Customers WHERE Region = N'West';\nSELECT OrderID, Amount FROM dbo.Orders WHERE Amount > 4000;"
		b, err := tr.Trace(context.Background(), Options{SQL: sql, Events: bundle.AllEventGroups(), ReadBack: mode})
		if err != nil {
			t.Fatalf("read back %v: trace: %v", mode, err)
		}
		var planned []timeline.Statement
		for _, s := range b.Statements {
			if s.Plan != "" {
				planned = append(planned, s)
			}
		}
		if len(planned) != 2 {
			t.Fatalf("read back %v: %d statements with plans, want 2: %v", mode, len(planned), texts(b.Statements))
		}
		first, second := planned[0], planned[1]
		if !strings.HasPrefix(first.Text, "SELECT CustomerID") || !strings.HasPrefix(second.Text, "SELECT OrderID") || first.Parent != 0 || second.Parent != 0 {
			t.Errorf("read back %v: statements %q (parent %d), %q (parent %d)", mode, first.Text, first.Parent, second.Text, second.Parent)
		}
		if second.OffsetStart <= first.OffsetStart || second.StartUs < first.EndUs {
			t.Errorf("read back %v: the second statement does not follow the first: offsets %d, %d; times %d..%d, %d..%d", mode,
				first.OffsetStart, second.OffsetStart, first.StartUs, first.EndUs, second.StartUs, second.EndUs)
		}
		for _, s := range planned {
			if s.Trace.Summary.Lanes["lock"] == 0 || s.Trace.Summary.Unmatched["lock"] != 0 || s.Trace.Summary.Unmatched["read"] != 0 {
				t.Errorf("read back %v: %q: lanes %v, unmatched %v", mode, s.Text, s.Trace.Summary.Lanes, s.Trace.Summary.Unmatched)
			}
			// every operator the timeline has is one of this statement's plan
			if !strings.Contains(s.Plan, "StatementText") || s.Trace.Statement == "" || !strings.HasPrefix(s.Text, s.Trace.Statement[:15]) {
				t.Errorf("read back %v: %q carries the timeline of %q", mode, s.Text, s.Trace.Statement)
			}
		}
		for _, w := range b.Result.Warnings {
			if strings.Contains(w, "plans") {
				t.Errorf("read back %v: warning %q", mode, w)
			}
		}
	}
}

func texts(st []timeline.Statement) []string {
	var out []string
	for _, s := range st {
		out = append(out, s.Text)
	}
	return out
}

// Issue 30 review: call stacks and page headers were resolved for the
// bundle's trace only, so every other statement's timeline kept raw frames
// and no page headers. Each statement's timeline has its own stacks
// resolved and the headers of the pages it touched.
func TestTraceStatementsResolveStacksAndPages(t *testing.T) {
	fx, sym := symfixture.ServeTest(t)
	srv := startWithModules(t, "sql2022", fx.Builds)
	tr, _, _ := newTracer(t, srv.dsn, Policy{AllowClearBufferPool: true})
	sql := "SELECT CustomerID, Name FROM dbo.Customers WHERE Region = N'West';\nSELECT OrderID, Amount FROM dbo.Orders WHERE Amount > 4000;"
	b, err := tr.Trace(context.Background(), Options{SQL: sql, CallStacks: true, ClearBufferPool: true, DisableReadAhead: true,
		Events: bundle.AllEventGroups(), SymbolServers: []string{sym.URL}, SymbolCacheDir: t.TempDir(), SymbolTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, s := range b.Statements {
		if s.Plan == "" || s.Trace == nil {
			continue
		}
		if len(s.Trace.Stacks) == 0 || len(s.Trace.Lanes.Read) == 0 {
			t.Fatalf("%q: %d stacks, %d page reads: the check needs both", s.Text, len(s.Trace.Stacks), len(s.Trace.Lanes.Read))
		}
		checked++
		for _, st := range s.Trace.Stacks {
			for _, f := range st.Frames {
				if f.Symbol == "" {
					t.Errorf("%q: stack %d frame %s+%#x unresolved (%s)", s.Text, st.ID, f.Module, f.RVA, f.Unresolved)
				}
			}
		}
		headers := map[uint64]bool{}
		for _, h := range s.Trace.Pages {
			headers[h.PageID] = true
		}
		for _, e := range s.Trace.Lanes.Read {
			if !headers[e.PageID] {
				t.Errorf("%q: page %d:%d read without its header (%d headers)", s.Text, e.FileID, e.PageID, len(s.Trace.Pages))
				break
			}
		}
	}
	if checked != 2 {
		t.Fatalf("%d planned statements checked, want 2", checked)
	}
	if res := b.Result.Resolution; res.FramesResolved != res.StackFrames || res.PageHeaders == 0 {
		t.Errorf("resolution: %d of %d frames resolved, %d page headers", res.FramesResolved, res.StackFrames, res.PageHeaders)
	}
	// the bundle as written stores the first statement's timeline once:
	// it is the bundle's trace, pages and stacks included
	var buf bytes.Buffer
	if err := bundle.Write(&buf, b); err != nil {
		t.Fatal(err)
	}
	var wire struct {
		TraceStatement *struct{ ID int }            `json:"traceStatement"`
		Statements     []map[string]json.RawMessage `json:"statements"`
	}
	if err := json.Unmarshal(buf.Bytes(), &wire); err != nil {
		t.Fatal(err)
	}
	if wire.TraceStatement == nil {
		t.Fatal("the written bundle names no statement as its trace: the first statement's timeline is stored twice")
	}
	if _, ok := wire.Statements[wire.TraceStatement.ID]["trace"]; ok {
		t.Errorf("statement %d's timeline is stored beside the bundle's trace", wire.TraceStatement.ID)
	}
}

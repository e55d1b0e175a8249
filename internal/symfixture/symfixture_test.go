package symfixture

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/pkg/callstack"
	"github.com/queryreplay/queryreplay/pkg/pdb"
	"github.com/queryreplay/queryreplay/pkg/symstore"
)

// The served PDBs resolve the stand-in's RVAs to its function names
// through pkg/symstore, and the names classify as a SQL Server engineer
// would read them.
func TestServedPDBsResolveTheStandinLayout(t *testing.T) {
	fx, srv := ServeTest(t)
	store, err := symstore.New(symstore.Config{Servers: []string{srv.URL}, CacheDir: t.TempDir(), Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := symstore.NewResolver(store, symstore.ResolverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := &callstack.Resolver{Symbolizer: res, Classifier: callstack.DefaultClassifier()}
	want := map[string]string{"BPool::ReadPage": "BufferPool", "lck_lockInternal": "Locking", "SOS_Scheduler::SuspendNonPreemptive": "SqlOs",
		"CQScanRangeNew::GetRow": "QueryOperator", "LatchBase::Suspend": "Latching", "XeSqlPkg::lock_acquired::Publish": "XEventInfrastructure"}
	found := 0
	for _, m := range standin.StackModules() {
		b := fx.Builds[m.Name]
		for i, fn := range m.Functions {
			rva := uint32(standin.FirstFunctionRVA+i*standin.FunctionSize) + 0x24
			got, err := r.Resolve(context.Background(), callstack.Frame{Module: m.File, PDB: m.PDB, GUID: b.GUID, Age: b.Age, RVA: rva, HasRVA: true})
			if err != nil || got.Symbol != fn || got.Offset != 0x24 {
				t.Fatalf("%s+0x%X = %q+0x%x (%v), want %s+0x24", m.Name, rva, got.Symbol, got.Offset, got.Err, fn)
			}
			if cat, ok := want[fn]; ok {
				found++
				if got.Class.Category != cat {
					t.Errorf("%s!%s is %s, want %s", m.Name, fn, got.Class.Category, cat)
				}
			}
		}
	}
	if found != len(want) {
		t.Fatalf("only %d of the %d checked functions are in the stand-in's modules", found, len(want))
	}
	// the server is read-only and speaks the symbol-store layout
	g, _ := pdb.ParseGUID(fx.Builds["sqlmin"].GUID)
	resp, err := http.Get(srv.URL + "/sqlmin.pdb/" + pdb.SymbolServerKey(g, fx.Builds["sqlmin"].Age) + "/sqlmin.pdb")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(string(body), "Microsoft C/C++ MSF 7.00") {
		t.Fatalf("GET sqlmin.pdb: %d, %q", resp.StatusCode, body[:min(len(body), 30)])
	}
	if req, _ := http.NewRequest(http.MethodPut, srv.URL+"/x", nil); req != nil {
		if r, err := http.DefaultClient.Do(req); err == nil {
			r.Body.Close()
			if r.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("PUT answered %d", r.StatusCode)
			}
		}
	}
}

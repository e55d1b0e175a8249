package timeline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/callstack"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// withStack adds a call-stack action to the stream's last event.
func (st *stream) withStack(action, text string) {
	ev := &st.events[len(st.events)-1]
	ev.Actions = append(ev.Actions, xe.Field{Name: action, Package: "package0", Value: xe.StringValue(text)})
}

const (
	readRVA = `<frame id="00" pdb="sqlmin.pdb" age="2" guid="2a0ab7c4-4c6e-4f7a-8f55-0f0f0f0f0f0f" module="sqlmin.dll" rva="0x1024" />
<frame id="01" pdb="sqlmin.pdb" age="2" guid="2a0ab7c4-4c6e-4f7a-8f55-0f0f0f0f0f0f" module="sqlmin.dll" rva="0x1130" />
<frame id="02" pdb="sqllang.pdb" age="3" guid="9d3f0c11-0000-4a2b-9c77-1234567890ab" module="sqllang.dll" rva="0x2040" />`
	// the same module without identity: it borrows sqlmin's from the other stack
	lockRVA = `<frame id="00" module="sqlmin.dll" rva="0x1500" />
<frame id="01" pdb="sqllang.pdb" age="3" guid="9d3f0c11-0000-4a2b-9c77-1234567890ab" module="sqllang.dll" rva="0x2040" />`
)

// Every distinct call stack is stored once in the trace's stack table;
// each lane entry names its own by id; the table holds parsed frames.
func TestStackTable(t *testing.T) {
	st := newStream()
	st.batchStart(0)
	st.read(1, 1, 100)
	st.withStack("callstack_rva", readRVA)
	st.read(2, 1, 101)
	st.withStack("callstack_rva", readRVA)
	st.lock(3, false, 72057594043170816, "(8194443284a0)", 0)
	st.withStack("callstack_rva", lockRVA)
	st.lock(4, true, 72057594043170816, "(8194443284a0)", 100)
	st.withStack("callstack_rva", readRVA) // the release's stack is not the interval's
	st.wait(5, false, "PAGEIOLATCH_SH", 0)
	st.withStack("callstack", "sqlmin.dll+0x0000000000001500\nsqldk.dll+0x0000000000003010")
	st.wait(6, true, "PAGEIOLATCH_SH", 1)
	st.read(7, 1, 102) // no stack
	st.batchEnd(8, 8000)
	tr := build(t, nil, nil, nil, st.events)

	if len(tr.Stacks) != 3 {
		t.Fatalf("%d stacks, want 3 distinct: %+v", len(tr.Stacks), tr.Stacks)
	}
	read := tr.StackByID(tr.Lanes.Read[0].Stack)
	if read == nil || tr.Lanes.Read[1].Stack != read.ID || tr.Lanes.Read[2].Stack != 0 {
		t.Fatalf("read stacks %d %d %d", tr.Lanes.Read[0].Stack, tr.Lanes.Read[1].Stack, tr.Lanes.Read[2].Stack)
	}
	if read.Events != 3 || len(read.Frames) != 3 {
		t.Fatalf("read stack: %d events, %d frames", read.Events, len(read.Frames))
	}
	f := read.Frames[0]
	if f.Module != "sqlmin" || f.RVA != 0x1024 || !f.HasRVA || f.PDB != "sqlmin.pdb" || f.GUID != "2A0AB7C4-4C6E-4F7A-8F55-0F0F0F0F0F0F" || f.Age != 2 {
		t.Fatalf("frame 0: %+v", f)
	}
	lock := tr.StackByID(tr.Lanes.Lock[0].Stack)
	if lock == nil || lock.ID == read.ID || lock.Frames[0].PDB != "sqlmin.pdb" || lock.Frames[0].GUID != f.GUID {
		t.Fatalf("lock stack %+v: want its own, with sqlmin's identity borrowed", lock)
	}
	wait := tr.StackByID(tr.Lanes.Wait[0].Stack)
	if wait == nil || len(wait.Frames) != 2 || wait.Frames[1].Module != "sqldk" || wait.Frames[1].RVA != 0x3010 {
		t.Fatalf("wait stack %+v", wait)
	}
	if tr.StackByID(0) != nil || tr.StackByID(99) != nil {
		t.Fatal("StackByID of 0 or an unknown id")
	}
	js := traceJSON(t, tr)
	if rs := jsonLane(t, js, "read"); rs[0]["stack"] != float64(read.ID) || rs[2]["stack"] != nil {
		t.Fatalf("JSON read entries: %v / %v", rs[0]["stack"], rs[2]["stack"])
	}
	if _, ok := js["stacks"].([]any); !ok {
		t.Fatal("JSON has no stacks table")
	}
}

// Bare addresses become module+RVA through the module bases the tracer
// read from sys.dm_os_loaded_modules, and take the modules' identities.
func TestStackTableBareAddresses(t *testing.T) {
	bases, err := callstack.ParseBaseAddresses("C:\\Binn\\sqlmin.dll\t0x00007FFEA5E10000\nC:\\Binn\\sqldk.dll\t0x00007FFEA9A60000\n")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]callstack.ModuleKey{"sqlmin": {Module: "sqlmin", PDB: "sqlmin.pdb", GUID: "2A0AB7C4-4C6E-4F7A-8F55-0F0F0F0F0F0F", Age: 2}}
	st := newStream()
	st.batchStart(0)
	st.read(1, 1, 100)
	st.withStack("callstack", "0x00007FFEA5E11024\n0x00007FFEA9A63010\n0x0000000012345678")
	st.batchEnd(2, 2000)
	tr := build(t, nil, nil, &Options{Statement: -1, Stacks: callstack.ParseOptions{Bases: bases, Identities: ids}}, st.events)
	s := tr.StackByID(tr.Lanes.Read[0].Stack)
	if s == nil || len(s.Frames) != 3 {
		t.Fatalf("stack %+v", s)
	}
	if f := s.Frames[0]; f.Module != "sqlmin" || f.RVA != 0x1024 || f.GUID == "" || f.Address != 0x00007FFEA5E11024 {
		t.Errorf("frame 0 %+v", f)
	}
	if f := s.Frames[1]; f.Module != "sqldk" || f.RVA != 0x3010 || f.GUID != "" {
		t.Errorf("frame 1 %+v: sqldk has no identity given", f)
	}
	if f := s.Frames[2]; f.Module != "" || f.HasRVA {
		t.Errorf("frame 2 %+v: an address in no module stays bare", f)
	}
}

// A schema 2 trace (before the stack table) still loads, as schema 3.
func TestSchema2StillLoads(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "golden", "hash_join.json"))
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(string(data), `"schema": 3,`, `"schema": 2,`, 1)
	var tr Trace
	if err := json.Unmarshal([]byte(old), &tr); err != nil {
		t.Fatal(err)
	}
	if tr.Schema != 3 || len(tr.Lanes.Read) == 0 || tr.Stacks != nil {
		t.Fatalf("schema %d, %d reads, stacks %v", tr.Schema, len(tr.Lanes.Read), tr.Stacks)
	}
	if err := json.Unmarshal([]byte(strings.Replace(string(data), `"schema": 3,`, `"schema": 4,`, 1)), &tr); err == nil || !strings.Contains(err.Error(), "schema 4 is newer") {
		t.Fatalf("schema 4: %v", err)
	}
}

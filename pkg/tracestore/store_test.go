package tracestore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/testbomb"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/sizelimit"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

var ctx = context.Background()

// bundle is a small bundle with n reads on one shared object.
func testBundle(sql string, n int) *bundle.Bundle {
	tr := &timeline.Trace{ZeroTime: "2026-01-02T03:04:05Z", End: int64(n), Summary: timeline.Summary{Lanes: map[string]int{"read": n}}}
	tr.Lanes.Objects = []timeline.ObjectName{{Schema: "dbo", Table: "Orders", Index: "PK_Orders"}}
	for i := 0; i < n; i++ {
		tr.Lanes.Read = append(tr.Lanes.Read, timeline.PageEvent{T: int64(i), FileID: 1, PageID: uint64(i), Object: 1})
	}
	return &bundle.Bundle{Format: bundle.Format, Version: bundle.Version, SQL: sql,
		Server: bundle.ServerInfo{Database: "QueryReplayDemo"}, Run: bundle.RunInfo{StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		Result: bundle.Result{Events: int64(n)}, Trace: tr}
}

func dirStore(t *testing.T, dir string, o Options) *Store {
	t.Helper()
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(d, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestPutGetListDelete(t *testing.T) {
	s := dirStore(t, t.TempDir(), Options{})
	e, err := s.Put(ctx, testBundle("SELECT 1", 10))
	if err != nil {
		t.Fatal(err)
	}
	if !ValidID(e.ID) {
		t.Fatalf("id %q", e.ID)
	}
	got, err := s.Get(ctx, e.ID)
	if err != nil || got != e {
		t.Fatalf("get = %v, %v; want the cached entry", got, err)
	}
	list, err := s.List(ctx)
	if err != nil || len(list) != 1 || list[0].ID != e.ID || list[0].Statement != "SELECT 1" || list[0].Events != 10 || list[0].Bytes == 0 {
		t.Fatalf("list = %+v, %v", list, err)
	}
	gz, err := s.Bundle(ctx, e.ID)
	if err != nil || len(gz) < 2 || gz[0] != 0x1f {
		t.Fatalf("bundle: %v", err)
	}
	if err := s.Delete(ctx, e.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, e.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
	if err := s.Delete(ctx, e.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	for _, bad := range []string{"", "../etc/passwd", strings.Repeat("A", 32)} {
		if _, err := s.Get(ctx, bad); !errors.Is(err, ErrNotFound) {
			t.Errorf("get %q: %v", bad, err)
		}
	}
}

func TestRestartKeepsTraces(t *testing.T) {
	dir := t.TempDir()
	a := dirStore(t, dir, Options{})
	e, err := a.Put(ctx, testBundle("SELECT 2", 5))
	if err != nil {
		t.Fatal(err)
	}
	b := dirStore(t, dir, Options{}) // a new process
	got, err := b.Get(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Bundle.SQL != "SELECT 2" || len(got.Bundle.Trace.Lanes.Read) != 5 || got.Info.Events != 5 {
		t.Fatalf("reloaded %+v", got.Info)
	}
	// decoded objects are shared: one name in the table, every read naming it
	r, objs := got.Bundle.Trace.Lanes.Read, got.Bundle.Trace.Lanes.Objects
	if r[0].Object == 0 || r[0].Object != r[4].Object || len(objs) != 1 || objs[0].Table != "Orders" {
		t.Errorf("object names not shared after load: reads name %d and %d, table %+v", r[0].Object, r[4].Object, objs)
	}
}

func TestHAReplicasServeEachOther(t *testing.T) {
	dir := t.TempDir()
	one, two := dirStore(t, dir, Options{}), dirStore(t, dir, Options{})
	a, err := one.Put(ctx, testBundle("SELECT 'a'", 3))
	if err != nil {
		t.Fatal(err)
	}
	b, err := two.Put(ctx, testBundle("SELECT 'b'", 4))
	if err != nil {
		t.Fatal(err)
	}
	if e, err := two.Get(ctx, a.ID); err != nil || e.Bundle.SQL != "SELECT 'a'" {
		t.Fatalf("replica two: %v", err)
	}
	if e, err := one.Get(ctx, b.ID); err != nil || e.Bundle.SQL != "SELECT 'b'" {
		t.Fatalf("replica one: %v", err)
	}
	if err := one.Delete(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	// two still holds b in memory; the persisted copy is gone for everyone
	if l, _ := two.List(ctx); len(l) != 1 {
		t.Fatalf("list after delete = %+v", l)
	}
}

func TestMemoryBoundsByCountAndBytes(t *testing.T) {
	s := dirStore(t, t.TempDir(), Options{MaxTraces: 3})
	var ids []string
	for i := 0; i < 5; i++ {
		e, err := s.Put(ctx, testBundle("SELECT 1", 100))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	if _, n := s.MemoryBytes(); n != 3 {
		t.Fatalf("%d in memory, want 3", n)
	}
	// evicted ones still load from disk
	if _, err := s.Get(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	sample := testBundle("SELECT 1", 1000)
	compact(sample.Trace)
	one := EstimateBytes(sample)
	s2 := dirStore(t, t.TempDir(), Options{MaxTraces: 100, MaxMemoryBytes: 2*one + one/2})
	for i := 0; i < 6; i++ {
		if _, err := s2.Put(ctx, testBundle("SELECT 1", 1000)); err != nil {
			t.Fatal(err)
		}
		if b, _ := s2.MemoryBytes(); b > 2*one+one/2 {
			t.Fatalf("after %d puts %d bytes in memory, bound %d", i+1, b, 2*one+one/2)
		}
	}
	if _, n := s2.MemoryBytes(); n != 2 {
		t.Fatalf("%d traces in memory, want 2", n)
	}
}

func TestRetentionByAgeAndSize(t *testing.T) {
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	dir := t.TempDir()
	s := dirStore(t, dir, Options{MaxAge: time.Hour, MaxDiskBytes: -1, Now: clock})
	old, err := s.Put(ctx, testBundle("old", 10))
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Hour)
	fresh, err := s.Put(ctx, testBundle("fresh", 10)) // Put enforces retention
	if err != nil {
		t.Fatal(err)
	}
	list, _ := s.List(ctx)
	if len(list) != 1 || list[0].ID != fresh.ID {
		t.Fatalf("after age retention: %+v (old %s)", list, old.ID)
	}
	// size: each bundle is ~N bytes; keep at most two
	size := list[0].Bytes
	s2 := dirStore(t, t.TempDir(), Options{MaxAge: -1, MaxDiskBytes: 2*size + size/2, Now: clock})
	var ids []string
	for i := 0; i < 4; i++ {
		now = now.Add(time.Minute)
		e, err := s2.Put(ctx, testBundle("fresh", 10))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	list, _ = s2.List(ctx)
	if len(list) != 2 || list[0].ID != ids[3] || list[1].ID != ids[2] {
		t.Fatalf("after size retention: %+v, want the two newest", list)
	}
}

func TestConcurrentUse(t *testing.T) {
	s := dirStore(t, t.TempDir(), Options{MaxTraces: 2})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := s.Put(ctx, testBundle("SELECT 1", 50))
			if err != nil {
				errs <- err
				return
			}
			if _, err := s.Get(ctx, e.ID); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if l, _ := s.List(ctx); len(l) != 8 {
		t.Fatalf("%d listed", len(l))
	}
}

func TestBucketBackends(t *testing.T) {
	dir := t.TempDir()
	for _, url := range []string{"mem://", "file://" + filepath.ToSlash(dir)} {
		t.Run(strings.SplitN(url, ":", 2)[0], func(t *testing.T) {
			one, err := OpenBucket(ctx, url, BucketOptions{Prefix: "ds-uid"})
			if err != nil {
				t.Fatal(err)
			}
			a, err := New(one, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			e, err := a.Put(ctx, testBundle("SELECT 'bucket'", 7))
			if err != nil {
				t.Fatal(err)
			}
			got, err := a.Get(ctx, e.ID)
			if err != nil || got.Bundle.SQL != "SELECT 'bucket'" {
				t.Fatalf("get: %v", err)
			}
			list, err := a.List(ctx)
			if err != nil || len(list) != 1 || list[0].Events != 7 {
				t.Fatalf("list = %+v, %v", list, err)
			}
			if url != "mem://" {
				// a second replica on the same bucket loads it
				two, _ := OpenBucket(ctx, url, BucketOptions{Prefix: "ds-uid"})
				b, _ := New(two, Options{})
				defer b.Close()
				if got, err := b.Get(ctx, e.ID); err != nil || len(got.Bundle.Trace.Lanes.Read) != 7 {
					t.Fatalf("replica: %v", err)
				}
				if _, err := os.Stat(filepath.Join(dir, "ds-uid", e.ID+bundleSuffix)); err != nil {
					t.Fatalf("not under the prefix: %v", err)
				}
			}
			if err := a.Delete(ctx, e.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := a.Bundle(ctx, e.ID); !errors.Is(err, ErrNotFound) {
				t.Fatalf("bundle after delete: %v", err)
			}
		})
	}
}

func TestEstimateBytesCoversTheDecodedTrace(t *testing.T) {
	small, big := EstimateBytes(testBundle("x", 10)), EstimateBytes(testBundle("x", 10_000))
	if big <= small || big < 10_000*int64(40) {
		t.Fatalf("estimates %d and %d do not grow with the events", small, big)
	}
}

// TestGetGzipBomb: a bundle in the backend that expands past the limit
// (planted by anyone who can write the bucket) is refused with an error
// naming the limit and its setting, at a memory cost bounded by the limit.
func TestGetGzipBomb(t *testing.T) {
	const limit, expand = 8 << 20, 1 << 30
	dir := t.TempDir()
	s := dirStore(t, dir, Options{BundleLimit: bundle.ReadOptions{MaxBytes: limit, Knob: "traceStore.maxBundleMB"}})
	for name, bomb := range map[string][]byte{
		"whitespace": testbomb.Gzip("{", ' ', expand),
		"string":     testbomb.Gzip(testbomb.BundlePrefix, 'A', expand),
	} {
		id, err := NewID()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, id+bundleSuffix), bomb, 0o600); err != nil {
			t.Fatal(err)
		}
		alloc := testbomb.Alloc(func() { _, err = s.Get(ctx, id) })
		if !errors.Is(err, sizelimit.ErrTooLarge) || !strings.Contains(err.Error(), "8 MB") || !strings.Contains(err.Error(), "traceStore.maxBundleMB") {
			t.Fatalf("%s bomb: %v", name, err)
		}
		if alloc > 5*limit {
			t.Errorf("%s bomb (%s): loading it allocated %d bytes", name, testbomb.Describe(bomb, expand), alloc)
		}
	}
}

// TestOwnerIsRecordedAndSurvivesRestart: the login in the context of Put
// is the trace's owner, in its info, in the listing and through a new
// store on the same directory (another replica, or after a restart).
func TestOwnerIsRecordedAndSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	s := dirStore(t, dir, Options{})
	mine, err := s.Put(WithOwner(ctx, "alice"), testBundle("SELECT 1", 3))
	if err != nil {
		t.Fatal(err)
	}
	anon, err := s.Put(ctx, testBundle("SELECT 2", 3))
	if err != nil {
		t.Fatal(err)
	}
	if mine.Info.Owner != "alice" || anon.Info.Owner != "" {
		t.Fatalf("owners %q %q, want alice and none", mine.Info.Owner, anon.Info.Owner)
	}
	other := dirStore(t, dir, Options{})
	list, err := other.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	owners := map[string]string{}
	for _, i := range list {
		owners[i.ID] = i.Owner
	}
	if owners[mine.ID] != "alice" || owners[anon.ID] != "" {
		t.Fatalf("listed owners %v", owners)
	}
	info, err := other.Stat(ctx, mine.ID)
	if err != nil || info.Owner != "alice" {
		t.Fatalf("stat = %+v, %v", info, err)
	}
	if _, err := other.Stat(ctx, strings.Repeat("0", 32)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("stat of an absent trace: %v", err)
	}
	if _, err := other.Stat(ctx, "../x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("stat of a malformed id: %v", err)
	}
}

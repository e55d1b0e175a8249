package symstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/testenv"
	"github.com/queryreplay/queryreplay/pkg/callstack"
	"github.com/queryreplay/queryreplay/pkg/pdb"
	"github.com/queryreplay/queryreplay/pkg/pdb/pdbtest"
)

// Two fixture PDBs with different GUIDs, built once per test run.
var (
	fixOnce sync.Once
	fixA    fixturePDB
	fixB    fixturePDB
	fixErr  error
	fixDir  string
)

type fixturePDB struct {
	path string
	data []byte
	guid pdb.GUID
	age  uint32
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixDir != "" {
		os.RemoveAll(fixDir)
	}
	os.Exit(code)
}

func fixtures(t *testing.T) (fixturePDB, fixturePDB) {
	t.Helper()
	tools := pdbtest.Require(t)
	fixOnce.Do(func() {
		if fixDir, fixErr = os.MkdirTemp("", "symstore"); fixErr != nil {
			return
		}
		build := func(name, body string) fixturePDB {
			src := filepath.Join(fixDir, name+".c")
			if fixErr = os.WriteFile(src, []byte(body), 0o644); fixErr != nil {
				return fixturePDB{}
			}
			img, err := tools.Build(context.Background(), fixDir, name, src)
			if err != nil {
				fixErr = err
				return fixturePDB{}
			}
			f, err := pdb.Open(img.PDB)
			if err != nil {
				fixErr = err
				return fixturePDB{}
			}
			defer f.Close()
			data, _ := os.ReadFile(img.PDB)
			return fixturePDB{path: img.PDB, data: data, guid: f.GUID, age: f.Age}
		}
		fixA = build("sqldk", "int SOS_first(int a) { return a + 1; }\nint SOS_second(int a) { return a * 2; }\nint _DllMainCRTStartup(void *h, unsigned long r, void *p) { return 1; }\n")
		if fixErr == nil {
			fixB = build("other", "int other_fn(int a) { return a - 1; }\nint _DllMainCRTStartup(void *h, unsigned long r, void *p) { return 0; }\n")
		}
	})
	if fixErr != nil {
		t.Fatalf("build fixtures: %v", fixErr)
	}
	if fixA.guid == fixB.guid {
		t.Fatal("fixtures share a GUID")
	}
	return fixA, fixB
}

type countingServer struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func (c *countingServer) count(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits[path]
}

func newServer(t *testing.T, h func(w http.ResponseWriter, r *http.Request)) *countingServer {
	cs := &countingServer{hits: map[string]int{}}
	cs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cs.mu.Lock()
		cs.hits[r.URL.Path]++
		cs.mu.Unlock()
		if ua := r.Header.Get("User-Agent"); !strings.HasPrefix(ua, "QueryReplay") {
			http.Error(w, "no user agent", http.StatusForbidden)
			return
		}
		h(w, r)
	}))
	t.Cleanup(cs.Close)
	return cs
}

func newStore(t *testing.T, servers ...string) *Store {
	s, err := New(Config{Servers: servers, CacheDir: t.TempDir(), Retries: 2, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func key(f fixturePDB) string { return pdb.SymbolServerKey(f.guid, f.age) }

func TestFetchDirectAndCached(t *testing.T) {
	a, _ := fixtures(t)
	want := "/download/symbols/sqldk.pdb/" + key(a) + "/sqldk.pdb"
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == want {
			w.Write(a.data)
			return
		}
		http.NotFound(w, r)
	})
	s := newStore(t, srv.URL+"/download/symbols")
	p, err := s.Fetch(context.Background(), "sqldk.pdb", a.guid, a.age)
	if err != nil {
		t.Fatal(err)
	}
	if p != filepath.Join(s.CacheDir(), "sqldk.pdb", key(a), "sqldk.pdb") {
		t.Errorf("cached at %s, not in symbol-store layout", p)
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, a.data) {
		t.Error("cached file differs")
	}
	if _, err := s.Fetch(context.Background(), "sqldk.pdb", a.guid, a.age); err != nil {
		t.Fatal(err)
	}
	if n := srv.count(want); n != 1 {
		t.Errorf("server hit %d times, want 1 (second fetch from cache)", n)
	}
	// The key is upper case, age in hex.
	if strings.ToUpper(key(a)) != key(a) || !strings.HasSuffix(key(a), strconv.FormatUint(uint64(a.age), 16)) {
		t.Errorf("key %s", key(a))
	}
	left, _ := filepath.Glob(filepath.Join(s.CacheDir(), "sqldk.pdb", key(a), ".download-*"))
	if len(left) != 0 {
		t.Errorf("temp files left: %v", left)
	}
}

func TestFetchFollowsRedirect(t *testing.T) {
	a, _ := fixtures(t)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/symbols/"):
			http.Redirect(w, r, "/blob/abc123", http.StatusFound)
		case r.URL.Path == "/blob/abc123":
			w.Write(a.data)
		default:
			http.NotFound(w, r)
		}
	})
	s := newStore(t, srv.URL+"/symbols")
	if _, err := s.Fetch(context.Background(), "sqldk.pdb", a.guid, a.age); err != nil {
		t.Fatal(err)
	}
	if srv.count("/blob/abc123") != 1 {
		t.Error("redirect target not fetched")
	}
}

func TestFetchNotFoundIsRememberedAndTriesNextServer(t *testing.T) {
	a, _ := fixtures(t)
	empty := newServer(t, http.NotFound)
	s := newStore(t, empty.URL)
	_, err := s.Fetch(context.Background(), "sqldk.pdb", a.guid, a.age)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	p := "/sqldk.pdb/" + key(a) + "/sqldk.pdb"
	if _, err := s.Fetch(context.Background(), "sqldk.pdb", a.guid, a.age); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	if n := empty.count(p); n != 1 {
		t.Errorf("404 fetched %d times, want 1 (remembered for the run)", n)
	}
	// A second server has it.
	good := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write(a.data) })
	s2 := newStore(t, empty.URL, good.URL)
	if _, err := s2.Fetch(context.Background(), "sqldk.pdb", a.guid, a.age); err != nil {
		t.Fatalf("fallback to second server: %v", err)
	}
}

func TestFetchFilePtr(t *testing.T) {
	a, _ := fixtures(t)
	// PATH: form pointing to a URL, served by the same server.
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/file.ptr"):
			w.Write([]byte("PATH:" + "http://" + r.Host + "/real/sqldk.pdb\r\n"))
		case r.URL.Path == "/real/sqldk.pdb":
			w.Write(a.data)
		default:
			http.NotFound(w, r)
		}
	})
	s := newStore(t, srv.URL)
	if _, err := s.Fetch(context.Background(), "sqldk.pdb", a.guid, a.age); err != nil {
		t.Fatalf("file.ptr PATH: %v", err)
	}
	// Bare local path in a directory store (file share).
	store := t.TempDir()
	dir := filepath.Join(store, "sqldk.pdb", key(a))
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "file.ptr"), []byte(a.path), 0o644)
	s2 := newStore(t, store)
	if _, err := s2.Fetch(context.Background(), "sqldk.pdb", a.guid, a.age); err != nil {
		t.Fatalf("file.ptr bare path: %v", err)
	}
	// MSG: form.
	msg := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/file.ptr") {
			w.Write([]byte("MSG: symbols withdrawn"))
			return
		}
		http.NotFound(w, r)
	})
	_, err := newStore(t, msg.URL).Fetch(context.Background(), "sqldk.pdb", a.guid, a.age)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "symbols withdrawn") {
		t.Errorf("MSG file.ptr: %v", err)
	}
}

// TestFetchCompressedPD_: a server (or store directory) with only the
// cabinet sqldk.pd_ — made by gcab, as symstore /compress would — yields the
// PDB, expanded and verified; an LZX cabinet is refused by name.
func TestFetchCompressedPD_(t *testing.T) {
	a, _ := fixtures(t)
	gcab := testenv.RequireTool(t, "gcab", "gcab")
	dir := t.TempDir()
	src := filepath.Join(dir, "sqldk.pdb")
	os.WriteFile(src, a.data, 0o644)
	pd := filepath.Join(dir, "sqldk.pd_")
	if out, err := exec.Command(gcab, "-c", "-z", "-n", pd, src).CombinedOutput(); err != nil {
		t.Fatalf("gcab: %v %s", err, out)
	}
	cabBytes, _ := os.ReadFile(pd)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sqldk.pdb/"+key(a)+"/sqldk.pd_" {
			w.Write(cabBytes)
			return
		}
		http.NotFound(w, r)
	})
	// A local store directory holding only the .pd_ works the same way.
	storeDir := t.TempDir()
	os.MkdirAll(filepath.Join(storeDir, "sqldk.pdb", key(a)), 0o755)
	os.WriteFile(filepath.Join(storeDir, "sqldk.pdb", key(a), "sqldk.pd_"), cabBytes, 0o644)
	for _, server := range []string{srv.URL, storeDir} {
		s := newStore(t, server)
		p, err := s.Fetch(context.Background(), "sqldk.pdb", a.guid, a.age)
		if err != nil {
			t.Fatalf("%s: %v", server, err)
		}
		if got, _ := os.ReadFile(p); !bytes.Equal(got, a.data) {
			t.Errorf("%s: expanded PDB differs", server)
		}
		left, _ := filepath.Glob(filepath.Join(filepath.Dir(p), ".*"))
		if len(left) != 0 {
			t.Errorf("temp files left: %v", left)
		}
	}
	// LZX: the one compression this reader does not expand.
	lzx := bytes.Clone(cabBytes)
	binary.LittleEndian.PutUint16(lzx[36+6:], 0x1503)
	srv2 := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/sqldk.pd_") {
			w.Write(lzx)
			return
		}
		http.NotFound(w, r)
	})
	_, err := newStore(t, srv2.URL).Fetch(context.Background(), "sqldk.pdb", a.guid, a.age)
	if !errors.Is(err, ErrCompressed) || !strings.Contains(err.Error(), "sqldk.pd_") || !strings.Contains(err.Error(), "LZX") {
		t.Errorf("err = %v, want ErrCompressed naming sqldk.pd_ and LZX", err)
	}
	// Garbage under the .pd_ name is an error naming it, not "not found".
	srv3 := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/sqldk.pd_") {
			w.Write([]byte("MSCF"))
			return
		}
		http.NotFound(w, r)
	})
	if _, err := newStore(t, srv3.URL).Fetch(context.Background(), "sqldk.pdb", a.guid, a.age); err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "sqldk.pd_") {
		t.Errorf("garbage .pd_: %v", err)
	}
}

func TestFetchTruncatedDownloadRetriesThenFails(t *testing.T) {
	a, _ := fixtures(t)
	var calls atomic.Int32
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Length", strconv.Itoa(len(a.data)))
		w.Write(a.data[:len(a.data)/2])
	})
	s := newStore(t, srv.URL)
	_, err := s.Fetch(context.Background(), "sqldk.pdb", a.guid, a.age)
	if err == nil {
		t.Fatal("truncated download accepted")
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("%d attempts, want 3 (1 + 2 retries)", n)
	}
	if _, ok := s.fromCache("sqldk.pdb", key(a)); ok {
		t.Error("truncated file left in the cache")
	}
	// Recovers when the server does.
	var n atomic.Int32
	flaky := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Write(a.data)
	})
	if _, err := newStore(t, flaky.URL).Fetch(context.Background(), "sqldk.pdb", a.guid, a.age); err != nil {
		t.Errorf("retry after 503: %v", err)
	}
}

func TestFetchWrongGUIDRejected(t *testing.T) {
	a, b := fixtures(t)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write(b.data) })
	s := newStore(t, srv.URL)
	_, err := s.Fetch(context.Background(), "sqldk.pdb", a.guid, a.age)
	if !errors.Is(err, ErrMismatch) {
		t.Fatalf("err = %v, want ErrMismatch", err)
	}
	if _, ok := s.fromCache("sqldk.pdb", key(a)); ok {
		t.Error("wrong PDB cached")
	}
	// Wrong age too.
	good := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write(a.data) })
	if _, err := newStore(t, good.URL).Fetch(context.Background(), "sqldk.pdb", a.guid, a.age+1); !errors.Is(err, ErrMismatch) {
		t.Errorf("age mismatch: %v", err)
	}
}

func TestConcurrentFetchesShareOneDownload(t *testing.T) {
	a, _ := fixtures(t)
	release := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		<-release
		w.Write(a.data)
	})
	s := newStore(t, srv.URL)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Fetch(context.Background(), "sqldk.pdb", a.guid, a.age)
			errs <- err
		}()
	}
	// Let every goroutine reach Fetch before the server answers: one
	// downloads, the seven others wait for its download.
	testenv.WaitFor(t, 10*time.Second, "one download and seven Fetch calls waiting for it", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		c := s.inflight["sqldk.pdb/"+key(a)]
		return len(s.inflight) == 1 && c != nil && c.joined == 7 && srv.count("/sqldk.pdb/"+key(a)+"/sqldk.pdb") == 1
	})
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := srv.count("/sqldk.pdb/" + key(a) + "/sqldk.pdb"); n != 1 {
		t.Errorf("%d downloads, want 1", n)
	}
}

func TestOfflineAndExistingCacheLayouts(t *testing.T) {
	a, _ := fixtures(t)
	cache := t.TempDir()
	s, _ := New(Config{CacheDir: cache, Offline: true, Servers: []string{"http://127.0.0.1:1"}})
	if _, err := s.Fetch(context.Background(), "sqldk.pdb", a.guid, a.age); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "offline") {
		t.Fatalf("offline miss: %v", err)
	}
	// An existing cache written by other tools with a lower-case key.
	dir := filepath.Join(cache, "sqldk.pdb", strings.ToLower(key(a)))
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "sqldk.pdb"), a.data, 0o644)
	if _, err := s.Fetch(context.Background(), "sqldk.pdb", a.guid, a.age); err != nil {
		t.Fatalf("lower-case cache entry: %v", err)
	}
	// Two-tier store (index2.txt).
	two := t.TempDir()
	os.WriteFile(filepath.Join(two, "index2.txt"), nil, 0o644)
	tdir := filepath.Join(two, "sq", "sqldk.pdb", key(a))
	os.MkdirAll(tdir, 0o755)
	os.WriteFile(filepath.Join(tdir, "sqldk.pdb"), a.data, 0o644)
	s2, _ := New(Config{CacheDir: two, Offline: true})
	if _, err := s2.Fetch(context.Background(), "sqldk.pdb", a.guid, a.age); err != nil {
		t.Fatalf("two-tier cache: %v", err)
	}
	if _, err := s2.Fetch(context.Background(), "../evil.pdb", a.guid, a.age); err == nil {
		t.Error("path traversal in PDB name accepted")
	}
}

func TestParseSymbolPath(t *testing.T) {
	for _, tc := range []struct {
		in, cache string
		servers   []string
	}{
		{`srv*C:\Symbols*https://msdl.microsoft.com/download/symbols`, `C:\Symbols`, []string{MicrosoftServer}},
		{`cache*D:\cache;srv*https://a.example/sym;\\share\syms`, `D:\cache`, []string{"https://a.example/sym", `\\share\syms`}},
		{`srv*https://msdl.microsoft.com/download/symbols`, "", []string{MicrosoftServer}},
	} {
		c, s := ParseSymbolPath(tc.in)
		if c != tc.cache || strings.Join(s, "|") != strings.Join(tc.servers, "|") {
			t.Errorf("ParseSymbolPath(%q) = %q, %q", tc.in, c, s)
		}
	}
}

func TestResolverThroughStore(t *testing.T) {
	a, _ := fixtures(t)
	var gets atomic.Int32
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		w.Write(a.data)
	})
	s := newStore(t, srv.URL)
	r, err := NewResolver(s, ResolverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := pdb.Open(a.path)
	table, _ := f.Table()
	f.Close()
	mod := callstack.ModuleKey{Module: "sqldk", PDB: "sqldk.pdb", GUID: a.guid.String(), Age: a.age}
	for _, sym := range table.Symbols() {
		got, err := r.Lookup(context.Background(), mod, sym.RVA+2)
		if err != nil || got.Name != sym.Name || got.Offset != 2 {
			t.Errorf("Lookup(%#x) = %+v, %v; want %s+2", sym.RVA+2, got, err, sym.Name)
		}
	}
	if gets.Load() != 1 {
		t.Errorf("%d downloads", gets.Load())
	}
	if _, err := r.Lookup(context.Background(), callstack.ModuleKey{Module: "x"}, 1); !errors.Is(err, ErrNoIdentity) {
		t.Errorf("no identity: %v", err)
	}
	if _, err := r.Lookup(context.Background(), mod, 0x10); !errors.Is(err, callstack.ErrNoSymbol) {
		t.Errorf("header address: %v", err)
	}
	// End to end through callstack: a callstack_rva frame of the fixture.
	text := `<frame id="00" pdb="sqldk.pdb" age="` + strconv.Itoa(int(a.age)) + `" guid="` + strings.ToLower(a.guid.String()) + `" module="sqldk.dll" rva="0x` + strconv.FormatUint(uint64(table.Symbols()[0].RVA+5), 16) + `" />`
	stacks, err := callstack.Parse(text, callstack.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&callstack.Resolver{Symbolizer: r, Classifier: callstack.DefaultClassifier()}).Resolve(context.Background(), stacks[0].Frames[0])
	if err != nil || res.String() != "sqldk!"+table.Symbols()[0].Name+"+0x5" || res.Class.ModuleBadge != "SQL OS" {
		t.Errorf("resolved %q %+v %v", res.String(), res.Class, res.Err)
	}
}

func TestResolverConcurrentLookupsOpenThePDBOnce(t *testing.T) {
	a, _ := fixtures(t)
	var gets atomic.Int32
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		// a slow download, so that the lookups overlap: the delay is what
		// the test exercises, nothing waits on it
		time.Sleep(10 * time.Millisecond)
		w.Write(a.data)
	})
	r, err := NewResolver(newStore(t, srv.URL), ResolverOptions{MaxResults: 4})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := pdb.Open(a.path)
	table, _ := f.Table()
	f.Close()
	syms := table.Symbols()
	mod := callstack.ModuleKey{Module: "sqldk", PDB: "sqldk.pdb", GUID: a.guid.String(), Age: a.age}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := syms[i%len(syms)]
			off := uint32(i) % max(s.Size, 1) // inside the function: lookups honour sizes
			got, err := r.Lookup(context.Background(), mod, s.RVA+off)
			if err != nil || got.Name != s.Name || got.Offset != off {
				t.Errorf("Lookup %d = %+v, %v", i, got, err)
			}
		}()
	}
	wg.Wait()
	if gets.Load() != 1 {
		t.Errorf("%d downloads for one PDB", gets.Load())
	}
	if r.results.Len() > 4 {
		t.Errorf("result cache holds %d entries, bound is 4", r.results.Len())
	}
}

func TestFileResolver(t *testing.T) {
	a, _ := fixtures(t)
	r, err := NewFileResolver(a.path, ResolverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := pdb.Open(a.path)
	table, _ := f.Table()
	f.Close()
	s := table.Symbols()[1]
	for _, k := range []callstack.ModuleKey{
		{Module: "sqldk"}, {Module: "SqlDK"}, {Module: "sqldk", PDB: "SqlDK.pdb"},
		{Module: "sqldk", PDB: "sqldk.pdb", GUID: a.guid.String(), Age: a.age},
	} {
		got, err := r.Lookup(context.Background(), k, s.RVA+1)
		if err != nil || got.Name != s.Name || got.Offset != 1 {
			t.Errorf("Lookup(%+v) = %+v, %v; want %s+1", k, got, err, s.Name)
		}
	}
	// Frames of other modules, or of another build of this one, are not
	// resolved against the file: their names would be wrong.
	for _, k := range []callstack.ModuleKey{
		{Module: "anything"}, {Module: "sqlmin", PDB: "sqlmin.pdb"}, {Module: "sqldk", PDB: "other.pdb"},
		{Module: "sqldk", PDB: "sqldk.pdb", GUID: "6A193443-3512-464B-8B8E-D905AD930EE6", Age: 2},
	} {
		if got, err := r.Lookup(context.Background(), k, s.RVA+1); !errors.Is(err, ErrOtherModule) {
			t.Errorf("Lookup(%+v) = %+v, %v; want ErrOtherModule", k, got, err)
		}
	}
	if r.PDBName() != "sqldk.pdb" {
		t.Errorf("PDBName %q", r.PDBName())
	}
	if _, err := NewFileResolver(filepath.Join(t.TempDir(), "none.pdb"), ResolverOptions{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestTransientFailureIsNotRememberedAsMissing(t *testing.T) {
	a, _ := fixtures(t)
	down := newServer(t, func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", http.StatusBadGateway) })
	empty := newServer(t, http.NotFound)
	s := newStore(t, down.URL, empty.URL)
	p := "/sqldk.pdb/" + key(a) + "/sqldk.pdb"
	for range 2 {
		if _, err := s.Fetch(context.Background(), "sqldk.pdb", a.guid, a.age); err == nil || !strings.Contains(err.Error(), "502") {
			t.Fatalf("err = %v, want the 502 reported", err)
		}
	}
	if n := down.count(p); n != 6 {
		t.Errorf("failing server asked %d times, want 6 (2 fetches × 3 attempts: not remembered as missing)", n)
	}
}

// TestCorruptCachedPDBIsMovedAsideAndDownloadedAgain: a cached file that is
// not the PDB (truncated by a crash, overwritten) is renamed out of the way
// and fetched again, instead of failing every run.
func TestCorruptCachedPDBIsMovedAsideAndDownloadedAgain(t *testing.T) {
	a, b := fixtures(t)
	want := "/sqldk.pdb/" + key(a) + "/sqldk.pdb"
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == want {
			w.Write(a.data)
			return
		}
		http.NotFound(w, r)
	})
	for name, corrupt := range map[string][]byte{"truncated": a.data[:len(a.data)/3], "garbage": []byte("not a pdb"), "other build": b.data} {
		s := newStore(t, srv.URL)
		cached := filepath.Join(s.CacheDir(), "sqldk.pdb", key(a), "sqldk.pdb")
		os.MkdirAll(filepath.Dir(cached), 0o755)
		if err := os.WriteFile(cached, corrupt, 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := s.Fetch(context.Background(), "sqldk.pdb", a.guid, a.age)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, _ := os.ReadFile(p); !bytes.Equal(got, a.data) {
			t.Errorf("%s: cache not replaced", name)
		}
		aside, _ := filepath.Glob(cached + ".corrupt-*")
		if len(aside) != 1 {
			t.Errorf("%s: moved-aside copies %v, want one", name, aside)
		} else if got, _ := os.ReadFile(aside[0]); !bytes.Equal(got, corrupt) {
			t.Errorf("%s: moved-aside copy differs", name)
		}
	}
	// Offline, the corrupt file is still moved aside and the error says so.
	s, _ := New(Config{CacheDir: t.TempDir(), Offline: true})
	cached := filepath.Join(s.CacheDir(), "sqldk.pdb", key(a), "sqldk.pdb")
	os.MkdirAll(filepath.Dir(cached), 0o755)
	os.WriteFile(cached, []byte("junk"), 0o644)
	if _, err := s.Fetch(context.Background(), "sqldk.pdb", a.guid, a.age); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("offline corrupt cache: %v", err)
	}
}

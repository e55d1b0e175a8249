// Package symstore fetches PDB files from symbol servers into a local cache
// in the standard symbol-store layout (<cache>/<pdb>/<GUID><age-hex>/<pdb>,
// so existing caches such as C:\Symbols work), and resolves call-stack frames
// by opening those PDBs with pkg/pdb: Resolver implements
// callstack.Symbolizer, with LRU caches of open PDBs and of results per
// (pdb, GUID, age, RVA).
//
// This is QueryReplay's I/O layer for symbols. It must not parse call-stack
// text or classify frames (pkg/callstack does), and it never logs PDB
// contents. Usage of the Microsoft symbol server is covered by the Microsoft
// Symbol Server license terms.
//
// The download logic is written here rather than taken from a library
// because no Go symbol-store client exists; the protocol is a plain HTTP GET
// (dotnet/symstore "Simple Symbol Query Protocol"), with file.ptr redirection
// and compressed .pd_ files as the only wrinkles (docs/design/symbols-and-xel.md §6).
// Lookup order per server: <name>, then the cabinet <nam_> (expanded with
// pkg/cab: MSZIP or stored), then file.ptr.
package symstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/queryreplay/queryreplay/pkg/cab"
	"github.com/queryreplay/queryreplay/pkg/pdb"
)

// MicrosoftServer is Microsoft's public symbol server.
const MicrosoftServer = "https://msdl.microsoft.com/download/symbols"

// Errors returned (wrapped) by Fetch.
var (
	// ErrNotFound means no server has the PDB (or the store is offline and
	// the cache lacks it).
	ErrNotFound = errors.New("PDB not found")
	// ErrCompressed means a server only has a compressed .pd_ (cabinet) copy
	// in a form pkg/cab does not expand (LZX, which symstore.exe /compress
	// writes, or Quantum); MSZIP and stored copies are expanded. The
	// downloaded cabinet is kept in the cache directory where the .pdb
	// belongs, and the error names the cabextract command that puts the
	// .pdb there.
	ErrCompressed = errors.New("only a compressed .pd_ (cabinet) copy exists, in LZX or Quantum, which this reader does not expand: extract it with cabextract into the cache, give the .pdb directly, or use a symbol server that serves uncompressed .pdb files")
	// ErrMismatch means the downloaded file is not the requested PDB build.
	ErrMismatch = errors.New("PDB identity mismatch")
)

// Config configures a Store.
type Config struct {
	// Servers are tried in order: http(s) URLs of symbol servers, or local
	// directories holding a symbol store (a file share).
	Servers []string
	// CacheDir receives downloads; empty means DefaultCacheDir().
	CacheDir string
	// Offline uses the cache only.
	Offline bool
	// Client is the HTTP client; nil means one with a 5-minute timeout
	// (Go's client follows up to 10 redirects, which msdl uses).
	Client    *http.Client
	UserAgent string
	// Retries is how many times a transient failure (network error, 5xx,
	// truncated body) is retried; Backoff is the first delay, doubled each time.
	Retries int
	Backoff time.Duration
	Logger  *slog.Logger
}

// DefaultCacheDir is <user cache dir>/queryreplay/symbols.
func DefaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory: %w", err)
	}
	return filepath.Join(d, "queryreplay", "symbols"), nil
}

// ParseSymbolPath reads a Windows symbol path such as _NT_SYMBOL_PATH
// ("srv*C:\Symbols*https://msdl.microsoft.com/download/symbols",
// "cache*D:\cache;srv*https://…"): the first downstream store becomes the
// cache, the rest are servers. Plain directories are servers too.
func ParseSymbolPath(s string) (cache string, servers []string) {
	for _, elem := range strings.Split(s, ";") {
		elem = strings.TrimSpace(elem)
		if elem == "" {
			continue
		}
		parts := strings.Split(elem, "*")
		switch strings.ToLower(parts[0]) {
		case "srv", "symsrv":
			rest := parts[1:]
			if strings.EqualFold(parts[0], "symsrv") && len(rest) > 0 {
				rest = rest[1:] // symsrv*symsrv.dll*…
			}
			for i, p := range rest {
				if p == "" {
					continue
				}
				if i < len(rest)-1 && cache == "" && !isURL(p) {
					cache = p
					continue
				}
				servers = append(servers, p)
			}
		case "cache":
			if len(parts) > 1 && parts[1] != "" && cache == "" {
				cache = parts[1]
			}
		default:
			servers = append(servers, elem)
		}
	}
	return cache, servers
}

func isURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// Store fetches and caches PDBs. It is safe for concurrent use; concurrent
// requests for the same PDB share one download.
type Store struct {
	cfg      Config
	mu       sync.Mutex
	inflight map[string]*fetchCall
	missing  map[string]error // not found during this run
}

type fetchCall struct {
	done   chan struct{}
	path   string
	err    error
	joined int // Fetch calls waiting for this download (under Store.mu); tests wait on it
}

// New checks cfg and returns a Store.
func New(cfg Config) (*Store, error) {
	if cfg.CacheDir == "" {
		d, err := DefaultCacheDir()
		if err != nil {
			return nil, err
		}
		cfg.CacheDir = d
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 5 * time.Minute}
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "QueryReplay-symstore/1"
	}
	if cfg.Retries < 0 {
		cfg.Retries = 0
	} else if cfg.Retries == 0 {
		cfg.Retries = 3
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 500 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	for _, s := range cfg.Servers {
		if isURL(s) {
			if _, err := url.Parse(s); err != nil {
				return nil, fmt.Errorf("symbol server %q: %w", s, err)
			}
		}
	}
	return &Store{cfg: cfg, inflight: map[string]*fetchCall{}, missing: map[string]error{}}, nil
}

// CacheDir is the cache directory in use.
func (s *Store) CacheDir() string { return s.cfg.CacheDir }

// pdbFileName checks that name is a bare file name.
func pdbFileName(name string) (string, error) {
	base := filepath.Base(strings.ReplaceAll(name, `\`, "/"))
	if base == "" || base == "." || base == ".." || base == "/" || strings.ContainsAny(base, `/:*?"<>|`) {
		return "", fmt.Errorf("invalid PDB name %q", name)
	}
	return base, nil
}

// Fetch returns the local path of the PDB with the given name, GUID and age
// (the age a module's RSDS record and SQL Server frames carry), downloading
// it into the cache if needed. The file's identity is verified.
func (s *Store) Fetch(ctx context.Context, name string, guid pdb.GUID, age uint32) (string, error) {
	name, err := pdbFileName(name)
	if err != nil {
		return "", err
	}
	key := pdb.SymbolServerKey(guid, age)
	id := strings.ToLower(name) + "/" + key
	movedAside := ""
	if p, ok := s.fromCache(name, key); ok {
		err := verify(p, guid, age)
		if err == nil {
			return p, nil
		}
		// A truncated or foreign file (a crash mid-copy by another tool, a
		// hand-copied PDB) must not fail every run: keep it for inspection
		// under another name and fetch the PDB again.
		aside := fmt.Sprintf("%s.corrupt-%d", p, time.Now().UnixNano())
		if rerr := os.Rename(p, aside); rerr != nil {
			return "", fmt.Errorf("cached %s: %w (and it cannot be moved aside: %v)", p, err, rerr)
		}
		s.cfg.Logger.Warn("corrupt cached PDB moved aside", "path", p, "moved_to", aside, "err", err)
		movedAside = fmt.Sprintf("; the corrupt cached copy was moved to %s", aside)
	}
	if s.cfg.Offline {
		return "", fmt.Errorf("%s %s: %w (offline, not in cache %s%s)", name, key, ErrNotFound, s.cfg.CacheDir, movedAside)
	}
	s.mu.Lock()
	if err, ok := s.missing[id]; ok {
		s.mu.Unlock()
		return "", err
	}
	if c, ok := s.inflight[id]; ok {
		c.joined++
		s.mu.Unlock()
		select {
		case <-c.done:
			return c.path, c.err
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	c := &fetchCall{done: make(chan struct{})}
	s.inflight[id] = c
	s.mu.Unlock()

	var missing bool
	c.path, missing, c.err = s.download(ctx, name, key, guid, age)
	s.mu.Lock()
	delete(s.inflight, id)
	if missing {
		s.missing[id] = c.err
	}
	s.mu.Unlock()
	close(c.done)
	return c.path, c.err
}

// fromCache looks for <cache>/<name>/<key>/<name>, accepting a lower-case
// key directory and the two-tier layout (index2.txt).
func (s *Store) fromCache(name, key string) (string, bool) {
	for _, p := range storePaths(s.cfg.CacheDir, name, key) {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, true
		}
	}
	return "", false
}

func storePaths(root, name, key string) []string {
	dirs := []string{root}
	if _, err := os.Stat(filepath.Join(root, "index2.txt")); err == nil && len(name) >= 2 {
		dirs = append([]string{filepath.Join(root, strings.ToLower(name[:2]))}, dirs...)
	}
	var out []string
	for _, d := range dirs {
		out = append(out, filepath.Join(d, name, key, name), filepath.Join(d, name, strings.ToLower(key), name))
	}
	return out
}

// download tries each server in turn. missing is true when every server
// answered "not found", so the miss can be remembered for the run; a
// transient failure on any server leaves it retryable.
func (s *Store) download(ctx context.Context, name, key string, guid pdb.GUID, age uint32) (path string, missing bool, err error) {
	dest := filepath.Join(s.cfg.CacheDir, name, key, name)
	var errs []error
	missing = true
	for _, server := range s.cfg.Servers {
		err := s.fromServer(ctx, server, name, key, dest, guid, age)
		if err == nil {
			s.cfg.Logger.Debug("symbol downloaded", "pdb", name, "key", key, "server", server)
			return dest, false, nil
		}
		if ctx.Err() != nil {
			return "", false, ctx.Err()
		}
		s.cfg.Logger.Debug("symbol server miss", "pdb", name, "key", key, "server", server, "err", err)
		errs = append(errs, fmt.Errorf("%s: %w", server, err))
		if !errors.Is(err, ErrNotFound) {
			missing = false
		}
	}
	if len(errs) == 0 {
		return "", true, fmt.Errorf("%s %s: %w (no symbol servers configured)", name, key, ErrNotFound)
	}
	return "", missing, fmt.Errorf("%s %s: %w", name, key, errors.Join(errs...))
}

// fromServer tries <name>, then the compressed <nam_> (reported as
// unsupported), then file.ptr, on one server.
func (s *Store) fromServer(ctx context.Context, server, name, key, dest string, guid pdb.GUID, age uint32) error {
	base := strings.TrimRight(server, "/\\")
	join := func(file string) string {
		if isURL(base) {
			return base + "/" + url.PathEscape(name) + "/" + key + "/" + url.PathEscape(file)
		}
		return filepath.Join(base, name, key, file)
	}
	err := s.fetchTo(ctx, join(name), dest, guid, age, "")
	if !errors.Is(err, ErrNotFound) {
		return err
	}
	compressed := name[:len(name)-1] + "_"
	if cerr := s.fetchTo(ctx, join(compressed), dest, guid, age, name); !errors.Is(cerr, ErrNotFound) {
		if cerr != nil {
			return fmt.Errorf("%s: %w", compressed, cerr)
		}
		return nil
	}
	ptr, perr := s.readSmall(ctx, join("file.ptr"))
	if errors.Is(perr, ErrNotFound) {
		return err
	}
	if perr != nil {
		return fmt.Errorf("file.ptr: %w", perr)
	}
	target, msg := parseFilePtr(ptr)
	if msg != "" {
		return fmt.Errorf("file.ptr says %q: %w", msg, ErrNotFound)
	}
	if target == "" {
		return fmt.Errorf("file.ptr is empty: %w", ErrNotFound)
	}
	if !isURL(target) && !filepath.IsAbs(target) && !isURL(base) {
		target = filepath.Join(base, target)
	}
	if err := s.fetchTo(ctx, target, dest, guid, age, ""); err != nil {
		return fmt.Errorf("file.ptr → %s: %w", target, err)
	}
	return nil
}

// parseFilePtr reads a file.ptr body: "PATH:<path>", "MSG:<text>" or a bare
// path.
func parseFilePtr(b []byte) (path, msg string) {
	t := strings.TrimSpace(strings.TrimPrefix(string(b), "\ufeff"))
	switch {
	case strings.HasPrefix(t, "PATH:"):
		return strings.TrimSpace(t[5:]), ""
	case strings.HasPrefix(t, "MSG:"):
		return "", strings.TrimSpace(t[4:])
	}
	return t, ""
}

// fetchTo copies src (URL or path) to dest through a temp file in dest's
// directory, verifies it is the wanted PDB, and renames it into place. With
// member set, src is a cabinet (a compressed .pd_) and member the file to
// take out of it. Transient failures are retried with exponential backoff.
func (s *Store) fetchTo(ctx context.Context, src, dest string, guid pdb.GUID, age uint32, member string) error {
	delay := s.cfg.Backoff
	var err error
	for attempt := 0; attempt <= s.cfg.Retries; attempt++ {
		if attempt > 0 {
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				return ctx.Err()
			}
			delay *= 2
		}
		err = s.fetchOnce(ctx, src, dest, guid, age, member)
		if err == nil || !isTransient(err) {
			return err
		}
		s.cfg.Logger.Debug("symbol download retry", "src", src, "attempt", attempt+1, "err", err)
	}
	return err
}

type transientError struct{ err error }

func (e transientError) Error() string { return e.err.Error() }
func (e transientError) Unwrap() error { return e.err }

func isTransient(err error) bool {
	var t transientError
	return errors.As(err, &t)
}

func (s *Store) open(ctx context.Context, src string) (io.ReadCloser, int64, error) {
	if !isURL(src) {
		f, err := os.Open(src)
		if errors.Is(err, os.ErrNotExist) {
			return nil, 0, fmt.Errorf("%s: %w", src, ErrNotFound)
		}
		if err != nil {
			return nil, 0, err
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, 0, err
		}
		return f, st.Size(), nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("User-Agent", s.cfg.UserAgent)
	resp, err := s.cfg.Client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		return nil, 0, transientError{err}
	}
	switch {
	case resp.StatusCode == http.StatusOK:
		return resp.Body, resp.ContentLength, nil
	case resp.StatusCode == http.StatusNotFound:
		resp.Body.Close()
		return nil, 0, fmt.Errorf("%s: HTTP 404: %w", src, ErrNotFound)
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		resp.Body.Close()
		return nil, 0, transientError{fmt.Errorf("%s: HTTP %s", src, resp.Status)}
	default:
		resp.Body.Close()
		return nil, 0, fmt.Errorf("%s: HTTP %s", src, resp.Status)
	}
}

func (s *Store) fetchOnce(ctx context.Context, src, dest string, guid pdb.GUID, age uint32, member string) error {
	body, size, err := s.open(ctx, src)
	if err != nil {
		return err
	}
	defer body.Close()
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dest), ".download-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	n, err := io.Copy(tmp, body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return transientError{fmt.Errorf("%s: download interrupted after %d bytes: %w", src, n, err)}
	}
	if size >= 0 && n != size {
		return transientError{fmt.Errorf("%s: truncated download: %d of %d bytes", src, n, size)}
	}
	got := tmp.Name()
	if member != "" {
		if got, err = expandCabinet(got, member); err != nil {
			if errors.Is(err, ErrCompressed) {
				return keepCompressed(tmp.Name(), src, dest, err)
			}
			return fmt.Errorf("%s: %w", src, err)
		}
		defer os.Remove(got)
	}
	if err := verify(got, guid, age); err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	return os.Rename(got, dest)
}

// keepCompressed keeps a cabinet this reader cannot expand as <name>.pd_
// in the cache directory of dest, so that one cabextract run puts the
// .pdb where the cache looks, and says so in the error.
func keepCompressed(downloaded, src, dest string, cause error) error {
	dir := filepath.Dir(dest)
	base := filepath.Base(dest)
	kept := filepath.Join(dir, base[:len(base)-1]+"_")
	if err := os.Rename(downloaded, kept); err != nil {
		return fmt.Errorf("%s: %w (and it could not be kept in the cache: %v)", src, cause, err)
	}
	return fmt.Errorf("%s: %w; it is saved as %s: `cabextract -d %s %s` writes %s where the cache looks", src, cause, kept, dir, kept, base)
}

// expandCabinet takes member (or the cabinet's only file) out of the
// cabinet at path into a temp file beside it and returns that file's path.
// Cabinets this reader cannot expand (LZX, Quantum) fail with ErrCompressed.
func expandCabinet(path, member string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	c, err := cab.NewReader(f, st.Size())
	if err != nil {
		if errors.Is(err, cab.ErrUnsupported) {
			return "", fmt.Errorf("%w: %v", ErrCompressed, err)
		}
		return "", err
	}
	file, ok := c.Find(member)
	if !ok && len(c.Files) == 1 {
		file, ok = c.Files[0], true
	}
	if !ok {
		return "", fmt.Errorf("cabinet has no %s (it holds %d files)", member, len(c.Files))
	}
	r, err := file.Open()
	if err != nil {
		if errors.Is(err, cab.ErrUnsupported) {
			return "", fmt.Errorf("%w: %v", ErrCompressed, err)
		}
		return "", err
	}
	out, err := os.CreateTemp(filepath.Dir(path), ".expand-*")
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		os.Remove(out.Name())
		return "", fmt.Errorf("expand %s: %w", member, err)
	}
	if err := out.Close(); err != nil {
		os.Remove(out.Name())
		return "", err
	}
	return out.Name(), nil
}

// verify opens path as a PDB and checks its GUID and DBI age.
func verify(path string, guid pdb.GUID, age uint32) error {
	f, err := pdb.Open(path)
	if err != nil {
		return fmt.Errorf("not a readable PDB: %w", err)
	}
	defer f.Close()
	if f.GUID != guid || f.Age != age {
		return fmt.Errorf("%w: file is {%s} age %d, wanted {%s} age %d", ErrMismatch, f.GUID, f.Age, guid, age)
	}
	return nil
}

// readSmall reads a small file (file.ptr) from a server or directory.
func (s *Store) readSmall(ctx context.Context, src string) ([]byte, error) {
	body, _, err := s.open(ctx, src)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	return io.ReadAll(io.LimitReader(body, 64<<10))
}

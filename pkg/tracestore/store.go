// Package tracestore keeps the traces the datasource ran or was given, so
// that `view` and `bundle` queries, and every Grafana replica, can serve them
// without running anything again.
//
// A trace is held twice: decoded, in an LRU bounded by count and by an
// estimate of its bytes in memory (golang-lru/v2's simplelru under the
// store's own lock, so that eviction and the byte count change together);
// and persisted, as a gzip bundle in pkg/tracer's format plus a small info
// file, in a Backend — a directory, or a gocloud.dev blob bucket. A trace
// missing from memory is loaded from the backend, so replicas sharing one
// directory or bucket serve each other's traces. Retention removes the
// oldest persisted traces beyond an age and a total size.
//
// What it must not do: run traces, shape frames, or log query text; it
// stores the query text as part of the bundle only.
package tracestore

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/golang-lru/v2/simplelru"
	"github.com/queryreplay/queryreplay/pkg/bundle"
)

// Defaults of Options.
const (
	DefaultMaxTraces      = 20
	DefaultMaxMemoryBytes = 512 << 20
	DefaultMaxAge         = 7 * 24 * time.Hour
	DefaultMaxDiskBytes   = 2 << 30
	DefaultRevalidate     = 30 * time.Second
)

const (
	bundleSuffix = ".bundle.json.gz"
	infoSuffix   = ".info.json"
)

var idPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// ValidID tells whether s has the form of a trace id (32 lower-case hex).
func ValidID(s string) bool { return idPattern.MatchString(s) }

// NewID returns a UUID v7 in hex: its first 48 bits are the creation time.
func NewID() (string, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return "", fmt.Errorf("new trace id: %w", err)
	}
	return hex.EncodeToString(id[:]), nil
}

// Options bound the store.
type Options struct {
	MaxTraces      int           // in memory; 0: DefaultMaxTraces
	MaxMemoryBytes int64         // estimated, in memory; 0: DefaultMaxMemoryBytes
	MaxAge         time.Duration // persisted; 0: DefaultMaxAge, negative: forever
	MaxDiskBytes   int64         // persisted; 0: DefaultMaxDiskBytes, negative: unbounded
	// Revalidate is how long a trace held in memory is served before the
	// store checks that it is still persisted (another replica may have
	// deleted it, or retention removed it); 0: DefaultRevalidate,
	// negative: never.
	Revalidate time.Duration
	// BundleLimit bounds a bundle loaded from the backend once
	// decompressed (another replica, or anyone who can write the bucket,
	// may have put it there); zero: bundle.DefaultMaxBytes.
	BundleLimit bundle.ReadOptions
	Now         func() time.Time
	Logger      *slog.Logger
}

// Info describes a stored trace without loading it.
type Info struct {
	ID         string    `json:"traceId"`
	Statement  string    `json:"statement"`
	Database   string    `json:"database"`
	StartedAt  time.Time `json:"startedAt"`
	StoredAt   time.Time `json:"storedAt"`
	Events     int64     `json:"events"`
	DurationUs int64     `json:"durationUs"`
	Bytes      int64     `json:"bytes"` // of the persisted bundle
	// Owner is the Grafana login that ran or uploaded the trace (from the
	// context given to Put, see WithOwner); "" for traces stored before
	// owners were recorded, or without a user.
	Owner string `json:"owner,omitempty"`
}

type ownerKey struct{}

// WithOwner returns ctx carrying the login that Put records as a trace's
// owner. The owner travels in the context rather than as an argument
// because it belongs to the request (the Grafana user behind it), like
// its deadline, and every path that stores a trace for a request passes
// that request's context.
func WithOwner(ctx context.Context, login string) context.Context {
	return context.WithValue(ctx, ownerKey{}, login)
}

// OwnerFrom is the login WithOwner put in ctx, or "".
func OwnerFrom(ctx context.Context) string {
	s, _ := ctx.Value(ownerKey{}).(string)
	return s
}

// Entry is a stored trace, decoded. Entries are shared: never modify one.
type Entry struct {
	ID     string
	Bundle *bundle.Bundle // Bundle.Trace is set
	Info   Info
	// MemoryBytes estimates what the decoded entry occupies.
	MemoryBytes int64
	// confirmed is when the store last saw the bundle persisted (unix ns).
	confirmed atomic.Int64
}

// Store is safe for concurrent use.
type Store struct {
	backend Backend
	opts    Options

	mu    sync.Mutex
	lru   *simplelru.LRU[string, *Entry]
	bytes int64
	// infos caches the persisted info files (they never change), so that
	// listing — and retention after every Put — costs one backend listing
	// rather than a read per trace (a round trip each on object storage).
	infos map[string]Info
}

// New returns a store persisting to backend.
func New(backend Backend, o Options) (*Store, error) {
	if o.MaxTraces == 0 {
		o.MaxTraces = DefaultMaxTraces
	}
	if o.MaxMemoryBytes == 0 {
		o.MaxMemoryBytes = DefaultMaxMemoryBytes
	}
	if o.MaxAge == 0 {
		o.MaxAge = DefaultMaxAge
	}
	if o.MaxDiskBytes == 0 {
		o.MaxDiskBytes = DefaultMaxDiskBytes
	}
	if o.MaxTraces < 0 || o.MaxMemoryBytes < 0 {
		return nil, fmt.Errorf("trace store: maxTraces %d and memory bound %d must not be negative", o.MaxTraces, o.MaxMemoryBytes)
	}
	if o.Revalidate == 0 {
		o.Revalidate = DefaultRevalidate
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Store{backend: backend, opts: o, infos: map[string]Info{}}
	l, err := simplelru.NewLRU[string, *Entry](o.MaxTraces, func(_ string, e *Entry) { s.bytes -= e.MemoryBytes })
	if err != nil {
		return nil, fmt.Errorf("trace store: %w", err)
	}
	s.lru = l
	return s, nil
}

// Check proves the backend is usable now: reachable, and the credentials
// may list, write and delete. CheckHealth calls it.
func (s *Store) Check(ctx context.Context) error { return s.backend.Check(ctx) }

// String names where the traces persist, without secrets.
func (s *Store) String() string { return s.backend.String() }

// Close closes the backend.
func (s *Store) Close() error { return s.backend.Close() }

// MemoryBytes is the estimated size of the traces held in memory, and their count.
func (s *Store) MemoryBytes() (int64, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes, s.lru.Len()
}

// Put stores a bundle under a new id, persisted first: a trace the backend
// refused is not served from memory alone, or a replica could not find it.
// The owner recorded is OwnerFrom(ctx).
func (s *Store) Put(ctx context.Context, b *bundle.Bundle) (*Entry, error) {
	if b == nil || b.Trace == nil {
		return nil, errors.New("store trace: the bundle has no timeline")
	}
	id, err := NewID()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	// BestSpeed: a trace's JSON compresses about as well (the stored size
	// grew 2% on a 100k-event trace) in a fraction of the time, and a live
	// trace's finished replay waits for this (issue 29).
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err := bundle.WriteCompact(zw, b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("store trace: %w", err)
	}
	info := infoOf(id, b, int64(buf.Len()), s.opts.Now())
	info.Owner = OwnerFrom(ctx)
	ij, err := json.Marshal(info)
	if err != nil {
		return nil, fmt.Errorf("store trace: %w", err)
	}
	if err := s.backend.Put(ctx, id+bundleSuffix, buf.Bytes()); err != nil {
		return nil, err
	}
	if err := s.backend.Put(ctx, id+infoSuffix, ij); err != nil {
		_ = s.backend.Delete(ctx, id+bundleSuffix)
		return nil, err
	}
	s.mu.Lock()
	s.infos[id] = info
	s.mu.Unlock()
	b.RawTrace = nil // Trace is authoritative from here on
	compact(b.Trace)
	e := &Entry{ID: id, Bundle: b, Info: info, MemoryBytes: EstimateBytes(b)}
	e.confirmed.Store(s.opts.Now().UnixNano())
	s.cache(e)
	if _, err := s.Enforce(ctx); err != nil {
		s.opts.Logger.Warn("trace store retention failed", "error", err)
	}
	return e, nil
}

func infoOf(id string, b *bundle.Bundle, size int64, now time.Time) Info {
	return Info{ID: id, Statement: b.SQL, Database: b.Server.Database, StartedAt: b.Run.StartedAt, StoredAt: now.UTC(),
		Events: b.Result.Events, DurationUs: b.Result.DurationUs, Bytes: size}
}

func (s *Store) cache(e *Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.lru.Peek(e.ID); ok {
		s.bytes -= old.MemoryBytes
	}
	s.bytes += e.MemoryBytes
	s.lru.Add(e.ID, e) // may evict by count (the callback subtracts)
	for s.bytes > s.opts.MaxMemoryBytes && s.lru.Len() > 1 {
		s.lru.RemoveOldest()
	}
}

// Get returns a trace from memory, or loads it from the backend (one that
// another replica stored).
func (s *Store) Get(ctx context.Context, id string) (*Entry, error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("trace id %q is not 32 lower-case hex digits: %w", id, ErrNotFound)
	}
	s.mu.Lock()
	e, ok := s.lru.Get(id)
	s.mu.Unlock()
	if ok {
		if !s.stillPersisted(ctx, e) {
			return nil, fmt.Errorf("trace %s: %w", id, ErrNotFound)
		}
		return e, nil
	}
	data, err := s.backend.Get(ctx, id+bundleSuffix)
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("trace %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("load trace %s: %w", id, err)
	}
	b, err := bundle.ReadLimit(bytes.NewReader(data), s.opts.BundleLimit)
	if err != nil {
		return nil, fmt.Errorf("load trace %s: %w", id, err)
	}
	if b.Trace == nil {
		return nil, fmt.Errorf("load trace %s: its timeline does not decode", id)
	}
	b.RawTrace = nil
	compact(b.Trace)
	info := s.info(ctx, id, infoOf(id, b, int64(len(data)), s.opts.Now()))
	e = &Entry{ID: id, Bundle: b, Info: info, MemoryBytes: EstimateBytes(b)}
	e.confirmed.Store(s.opts.Now().UnixNano())
	s.cache(e)
	return e, nil
}

// stillPersisted tells whether a trace held in memory may be served: it
// is, unless the backend, asked at most once per Revalidate, says the
// bundle is gone (then it leaves memory too). A backend that cannot answer
// does not stop the trace being served from memory.
func (s *Store) stillPersisted(ctx context.Context, e *Entry) bool {
	now := s.opts.Now()
	if s.opts.Revalidate < 0 || now.Sub(time.Unix(0, e.confirmed.Load())) < s.opts.Revalidate {
		return true
	}
	ok, err := s.backend.Exists(ctx, e.ID+bundleSuffix)
	if err != nil {
		s.opts.Logger.Warn("trace store: serving a trace from memory; the backend could not confirm it", "traceId", e.ID, "error", err)
		return true
	}
	if !ok {
		s.mu.Lock()
		s.lru.Remove(e.ID)
		s.mu.Unlock()
		return false
	}
	e.confirmed.Store(now.UnixNano())
	return true
}

// Bundle returns the persisted gzip bundle of a trace.
func (s *Store) Bundle(ctx context.Context, id string) ([]byte, error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("trace id %q: %w", id, ErrNotFound)
	}
	data, err := s.backend.Get(ctx, id+bundleSuffix)
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("trace %s: %w", id, ErrNotFound)
	}
	return data, err
}

// Stat returns a stored trace's info (its owner among them) without
// loading the bundle.
func (s *Store) Stat(ctx context.Context, id string) (Info, error) {
	if !ValidID(id) {
		return Info{}, fmt.Errorf("trace id %q: %w", id, ErrNotFound)
	}
	ok, err := s.backend.Exists(ctx, id+bundleSuffix)
	if err != nil {
		return Info{}, fmt.Errorf("trace %s: %w", id, err)
	}
	if !ok {
		return Info{}, fmt.Errorf("trace %s: %w", id, ErrNotFound)
	}
	return s.info(ctx, id, Info{ID: id}), nil
}

// Delete removes a trace from memory and the backend.
func (s *Store) Delete(ctx context.Context, id string) error {
	if !ValidID(id) {
		return fmt.Errorf("trace id %q: %w", id, ErrNotFound)
	}
	s.mu.Lock()
	inMemory := s.lru.Remove(id)
	delete(s.infos, id)
	s.mu.Unlock()
	err := s.backend.Delete(ctx, id+bundleSuffix)
	_ = s.backend.Delete(ctx, id+infoSuffix)
	if errors.Is(err, ErrNotFound) && inMemory {
		return nil
	}
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("trace %s: %w", id, ErrNotFound)
	}
	return err
}

// List returns the persisted traces, newest first.
func (s *Store) List(ctx context.Context) ([]Info, error) {
	objs, err := s.backend.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []Info
	listed := map[string]bool{}
	for _, o := range objs {
		id, ok := strings.CutSuffix(o.Key, bundleSuffix)
		if !ok || !ValidID(id) {
			continue
		}
		listed[id] = true
		info := s.info(ctx, id, Info{ID: id, StoredAt: o.ModTime.UTC()})
		info.Bytes = o.Size
		out = append(out, info)
	}
	s.mu.Lock()
	for id := range s.infos {
		if !listed[id] { // removed, here or by another replica
			delete(s.infos, id)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b Info) int { return cmp.Or(b.StoredAt.Compare(a.StoredAt), strings.Compare(b.ID, a.ID)) })
	return out, nil
}

// info returns a trace's persisted info, read once; fallback stands in
// for an info file that is missing or unreadable (and is not cached).
func (s *Store) info(ctx context.Context, id string, fallback Info) Info {
	s.mu.Lock()
	info, ok := s.infos[id]
	s.mu.Unlock()
	if ok {
		return info
	}
	ij, err := s.backend.Get(ctx, id+infoSuffix)
	if err != nil {
		return fallback
	}
	info = fallback
	if json.Unmarshal(ij, &info) != nil {
		return fallback
	}
	s.mu.Lock()
	s.infos[id] = info
	s.mu.Unlock()
	return info
}

// Enforce applies retention: traces stored longer ago than MaxAge go, then
// the oldest until the persisted bundles fit MaxDiskBytes. It returns how
// many it removed.
func (s *Store) Enforce(ctx context.Context) (int, error) {
	all, err := s.List(ctx)
	if err != nil {
		return 0, err
	}
	now := s.opts.Now()
	var total int64
	for _, i := range all {
		total += i.Bytes
	}
	removed := 0
	var errs []error
	// all is newest first: walk from the oldest
	for k := len(all) - 1; k >= 0; k-- {
		i := all[k]
		old := s.opts.MaxAge > 0 && now.Sub(i.StoredAt) > s.opts.MaxAge
		big := s.opts.MaxDiskBytes > 0 && total > s.opts.MaxDiskBytes && k > 0 // never the newest
		if !old && !big {
			continue
		}
		if err := s.Delete(ctx, i.ID); err != nil && !errors.Is(err, ErrNotFound) {
			errs = append(errs, err)
			continue
		}
		total -= i.Bytes
		removed++
	}
	if removed > 0 {
		s.opts.Logger.Info("trace store retention removed traces", "count", removed)
	}
	return removed, errors.Join(errs...)
}

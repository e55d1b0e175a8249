package symstore

import (
	"context"
	"errors"
	"fmt"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/queryreplay/queryreplay/pkg/callstack"
	"github.com/queryreplay/queryreplay/pkg/pdb"
)

// ErrNoIdentity is returned for frames whose module has no PDB identity
// (no pdb name, GUID or age), when the Resolver is backed by a store.
var ErrNoIdentity = errors.New("module has no PDB identity (pdb, guid, age)")

// ResolverOptions size the caches.
type ResolverOptions struct {
	MaxPDBs    int // open PDB tables kept; default 32
	MaxResults int // cached (pdb, GUID, age, RVA) answers; default 1<<20
}

// Resolver implements callstack.Symbolizer with PDBs from a Store, or with
// one fixed PDB file (NewFileResolver).
type Resolver struct {
	store   *Store
	fixed   *tableEntry
	mu      sync.Mutex
	tables  *lru.Cache[tableKey, *tableEntry]
	results *lru.Cache[resultKey, result]
}

type tableKey struct {
	pdb  string
	guid pdb.GUID
	age  uint32
}

type resultKey struct {
	table tableKey
	rva   uint32
}

type result struct {
	sym callstack.Symbol
	err error
}

type tableEntry struct {
	once  sync.Once
	table *pdb.Table
	err   error
}

var _ callstack.Symbolizer = (*Resolver)(nil)

// NewResolver resolves through store.
func NewResolver(store *Store, opts ResolverOptions) (*Resolver, error) {
	if store == nil {
		return nil, errors.New("symstore: nil store")
	}
	return newResolver(store, nil, opts)
}

// NewFileResolver resolves every frame against one PDB file, whatever module
// the frame names (the CLI's --pdb mode).
func NewFileResolver(path string, opts ResolverOptions) (*Resolver, error) {
	table, err := loadTable(path)
	if err != nil {
		return nil, err
	}
	e := &tableEntry{table: table}
	e.once.Do(func() {})
	return newResolver(nil, e, opts)
}

func newResolver(store *Store, fixed *tableEntry, opts ResolverOptions) (*Resolver, error) {
	if opts.MaxPDBs <= 0 {
		opts.MaxPDBs = 32
	}
	if opts.MaxResults <= 0 {
		opts.MaxResults = 1 << 20
	}
	tables, err := lru.New[tableKey, *tableEntry](opts.MaxPDBs)
	if err != nil {
		return nil, err
	}
	results, err := lru.New[resultKey, result](opts.MaxResults)
	if err != nil {
		return nil, err
	}
	return &Resolver{store: store, fixed: fixed, tables: tables, results: results}, nil
}

func loadTable(path string) (*pdb.Table, error) {
	f, err := pdb.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := f.Table()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Lookup resolves rva in the module's PDB.
func (r *Resolver) Lookup(ctx context.Context, module callstack.ModuleKey, rva uint32) (callstack.Symbol, error) {
	var tk tableKey
	if r.fixed == nil {
		if !module.HasIdentity() {
			return callstack.Symbol{}, fmt.Errorf("%s: %w", module.Module, ErrNoIdentity)
		}
		g, err := pdb.ParseGUID(module.GUID)
		if err != nil {
			return callstack.Symbol{}, err
		}
		tk = tableKey{pdb: module.PDB, guid: g, age: module.Age}
	}
	rk := resultKey{tk, rva}
	if res, ok := r.results.Get(rk); ok {
		return res.sym, res.err
	}
	entry := r.fixed
	if entry == nil {
		entry = r.entry(tk)
		entry.once.Do(func() {
			var path string
			path, entry.err = r.store.Fetch(ctx, tk.pdb, tk.guid, tk.age)
			if entry.err == nil {
				entry.table, entry.err = loadTable(path)
			}
		})
		if entry.err != nil {
			err := entry.err
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				r.mu.Lock()
				r.tables.Remove(tk) // let a later call try again
				r.mu.Unlock()
			}
			return callstack.Symbol{}, err
		}
	}
	var res result
	if m, ok := entry.table.Lookup(rva); ok {
		res.sym = callstack.Symbol{Name: m.Name, Offset: m.Displacement}
	} else {
		res.err = fmt.Errorf("%s+%#x: %w", module.Module, rva, callstack.ErrNoSymbol)
	}
	r.results.Add(rk, res)
	return res.sym, res.err
}

func (r *Resolver) entry(k tableKey) *tableEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.tables.Get(k); ok {
		return e
	}
	e := &tableEntry{}
	r.tables.Add(k, e)
	return e
}

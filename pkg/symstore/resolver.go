package symstore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/queryreplay/queryreplay/pkg/callstack"
	"github.com/queryreplay/queryreplay/pkg/pdb"
)

// ErrOtherModule is returned (wrapped) by a file resolver for frames whose
// module is not the one its PDB describes: resolving them against it would
// print wrong names.
var ErrOtherModule = errors.New("frame is from another module than the PDB")

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
	fixedID fileIdentity
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

var _ callstack.CheapSymbolizer = (*Resolver)(nil)

// CheapLookups tells callstack.Resolver not to cache answers again: a
// Resolver answers from open PDB tables (and its own result cache).
func (r *Resolver) CheapLookups() bool { return true }

// NewResolver resolves through store.
func NewResolver(store *Store, opts ResolverOptions) (*Resolver, error) {
	if store == nil {
		return nil, errors.New("symstore: nil store")
	}
	return newResolver(store, nil, opts)
}

// fileIdentity is what a file resolver matches frames against.
type fileIdentity struct {
	name   string // the PDB's file name (sqlmin.pdb)
	module string // its module's short name (sqlmin)
	guid   pdb.GUID
	age    uint32
}

// NewFileResolver resolves frames against one PDB file (the CLI's --pdb
// mode). Only frames of the module the PDB describes are looked up: the
// frame's PDB name, or else its module name, must match the file name
// (sqlmin.pdb ↔ sqlmin.dll, case ignored), and a frame that carries a GUID
// and age must carry the file's. Other frames fail with ErrOtherModule.
func NewFileResolver(path string, opts ResolverOptions) (*Resolver, error) {
	f, err := pdb.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	table, err := f.Table()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	e := &tableEntry{table: table}
	e.once.Do(func() {})
	r, err := newResolver(nil, e, opts)
	if err != nil {
		return nil, err
	}
	name := filepath.Base(path)
	r.fixedID = fileIdentity{name: name, module: callstack.NormalizeModule(strings.TrimSuffix(name, filepath.Ext(name))), guid: f.GUID, age: f.Age}
	return r, nil
}

// PDBName is the file name of a file resolver's PDB ("" for a store).
func (r *Resolver) PDBName() string { return r.fixedID.name }

// checkModule reports why a frame's module is not the file's, or nil.
func (id fileIdentity) checkModule(m callstack.ModuleKey) error {
	switch {
	case m.PDB != "" && !strings.EqualFold(filepath.Base(strings.ReplaceAll(m.PDB, `\`, "/")), id.name):
		return fmt.Errorf("%s (PDB %s) is not %s: %w", m.Module, m.PDB, id.name, ErrOtherModule)
	case m.PDB == "" && callstack.NormalizeModule(m.Module) != id.module:
		return fmt.Errorf("%s is not the module of %s: %w", m.Module, id.name, ErrOtherModule)
	case m.HasIdentity():
		g, err := pdb.ParseGUID(m.GUID)
		if err != nil || g != id.guid || m.Age != id.age {
			return fmt.Errorf("%s build {%s} age %d is not %s's {%s} age %d: %w", m.Module, m.GUID, m.Age, id.name, id.guid, id.age, ErrOtherModule)
		}
	}
	return nil
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
	if r.fixed != nil {
		if err := r.fixedID.checkModule(module); err != nil {
			return callstack.Symbol{}, err
		}
		// One open table: a lookup is a binary search, cheaper than the
		// result cache would be.
		return lookupIn(r.fixed.table, module, rva)
	} else {
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
	res.sym, res.err = lookupIn(entry.table, module, rva)
	r.results.Add(rk, res)
	return res.sym, res.err
}

func lookupIn(t *pdb.Table, module callstack.ModuleKey, rva uint32) (callstack.Symbol, error) {
	if m, ok := t.Lookup(rva); ok {
		return callstack.Symbol{Name: m.Name, Offset: m.Displacement, ID: uint32(m.Index) + 1}, nil
	}
	return callstack.Symbol{}, fmt.Errorf("%s+%#x: %w", module.Module, rva, callstack.ErrNoSymbol)
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

package callstack

import (
	"context"
	"errors"
	"strconv"
)

// Resolved is a frame with its symbol and classification.
type Resolved struct {
	Frame  Frame
	Module string // short module name (sqlmin)
	// Symbol is the name-only function name; empty when unresolved.
	Symbol string
	Offset uint64
	// Class is the frame's classification, shared between all frames of
	// the same function: read it, do not modify it.
	Class *Classification
	// Owner is set on spinlock frames by AttributeSpinlocks: the category
	// (and its display text) of the code that took the spinlock — the
	// LOCK_HASH spinlock is the lock manager's, "Locking".
	Owner, OwnerDisplay string
	// Err says why the frame has no symbol (no PDB identity, PDB missing,
	// no symbol at the address).
	Err error
}

// String prints module!symbol+0xoffset, or module+0xrva when unresolved.
func (r Resolved) String() string { return string(r.AppendText(nil)) }

// AppendText appends what String prints to b (without fmt: the CLI prints
// 100,000 of these).
func (r Resolved) AppendText(b []byte) []byte {
	switch {
	case r.Symbol != "":
		b = append(append(append(b, r.Module...), '!'), r.Symbol...)
		return strconv.AppendUint(append(b, "+0x"...), r.Offset, 16)
	case r.Frame.HasRVA:
		b = append(b, r.Module...)
		return strconv.AppendUint(append(b, "+0x"...), uint64(r.Frame.RVA), 16)
	}
	return append(b, r.Frame.String()...)
}

// Errors that explain unresolved frames.
var (
	ErrNoModule = errors.New("frame has no module (bare address without base addresses)")
	ErrNoRVA    = errors.New("frame has no RVA")
)

// frameKey identifies a distinct frame for resolution.
type frameKey struct {
	key ModuleKey
	loc frameLocation
}

// frameLocation is where a frame points inside its module: a symbol and
// displacement, an RVA, or a bare address.
type frameLocation struct {
	hasRVA bool
	rva    uint32
	addr   uint64
	symbol string
	offset uint64
}

func locationOf(f Frame) frameLocation {
	l := frameLocation{symbol: f.Symbol}
	switch {
	case f.Symbol != "":
		l.offset = f.SymbolOffset
	case f.HasRVA:
		l.rva, l.hasRVA = f.RVA, true
	default:
		l.addr = f.Address
	}
	return l
}

func keyOf(f Frame) frameKey { return frameKey{key: f.Key(), loc: locationOf(f)} }

// Resolver resolves frames through a Symbolizer and classifies them,
// resolving each distinct frame once per Resolver (unless the Symbolizer is
// a CheapSymbolizer, which caches for itself).
type Resolver struct {
	Symbolizer Symbolizer // may be nil: frames stay unresolved (already symbolised frames still classify)
	Classifier *Classifier
	done       map[resolverKey]resolvedEntry
	doneRVA    map[uint64]resolvedEntry // module id << 32 | RVA: the common case, a fast map
	modules    map[ModuleKey]int32
	lastRaw    ModuleKey           // the previous frame's module fields as given, its
	lastMod    ModuleKey           // normalised key and its id: consecutive frames
	lastID     int32               // mostly share one
	classes    [][]*Classification // module id → Symbol.ID → classification
}

// classOf classifies through the Resolver's per-function cache (when the
// Symbolizer numbers its functions), then the Classifier's memo.
func (r *Resolver) classOf(moduleID int32, module string, sym Symbol) *Classification {
	if sym.ID == 0 || sym.ID > maxSymbolID {
		return r.Classifier.classifyShared(module, sym.Name)
	}
	for int(moduleID) >= len(r.classes) {
		r.classes = append(r.classes, nil)
	}
	byID := r.classes[moduleID]
	if int(sym.ID) < len(byID) {
		if c := byID[sym.ID]; c != nil {
			return c
		}
	} else {
		byID = append(byID, make([]*Classification, int(sym.ID)+1-len(byID)+len(byID)/2)...)
		r.classes[moduleID] = byID
	}
	// The per-function cache is the memo here: no need to fill the
	// Classifier's as well.
	var c *Classification
	if r.Classifier == nil {
		c = r.Classifier.classifyShared(module, sym.Name)
	} else {
		cl := r.Classifier.classify(module, sym.Name)
		c = &cl
	}
	byID[sym.ID] = c
	return c
}

// maxSymbolID bounds the per-function cache (sqlmin's public PDB has some
// 300,000 symbols).
const maxSymbolID = 1 << 22

// CheapSymbolizer is implemented by Symbolizers whose lookups are already
// cheap and cached — pkg/symstore answers from open PDB tables with a
// binary search — so the Resolver keeps no copy of each RVA's answer: for
// 100,000 distinct frames that copy costs more than the lookups it saves.
type CheapSymbolizer interface {
	Symbolizer
	CheapLookups() bool
}

func (r *Resolver) cheapLookups() bool {
	c, ok := r.Symbolizer.(CheapSymbolizer)
	return ok && c.CheapLookups()
}

// resolverKey is a compact frameKey: the module identity is numbered once
// per Resolver, so 100,000 distinct frames hash a few words each.
type resolverKey struct {
	module int32
	loc    frameLocation
}

// resolvedEntry is what the Resolver remembers of a distinct frame; the
// classification is shared with the Classifier's memo.
type resolvedEntry struct {
	module   string
	symbol   string
	symbolID uint32
	offset   uint64
	err      error
	class    *Classification
}

func (r *Resolver) keyOf(f Frame) (resolverKey, ModuleKey) {
	if r.modules == nil {
		r.modules = map[ModuleKey]int32{}
		r.done = map[resolverKey]resolvedEntry{}
		r.doneRVA = map[uint64]resolvedEntry{}
	}
	raw := ModuleKey{Module: f.Module, PDB: f.PDB, GUID: f.GUID, Age: f.Age}
	if len(r.modules) == 0 || raw != r.lastRaw {
		mk := f.Key()
		id, ok := r.modules[mk]
		if !ok {
			id = int32(len(r.modules))
			r.modules[mk] = id
		}
		r.lastRaw, r.lastMod, r.lastID = raw, mk, id
	}
	return resolverKey{module: r.lastID, loc: locationOf(f)}, r.lastMod
}

// Resolve resolves one frame. Symbolizer errors are recorded in the result,
// not returned; only context cancellation is returned.
func (r *Resolver) Resolve(ctx context.Context, f Frame) (Resolved, error) {
	var res Resolved
	err := r.ResolveInto(ctx, f, &res)
	return res, err
}

// ResolveInto is Resolve writing into *res, which saves copying the result
// for callers that resolve many frames into a slice.
func (r *Resolver) ResolveInto(ctx context.Context, f Frame, res *Resolved) error {
	k, mk := r.keyOf(f)
	rvaOnly := k.loc.hasRVA && k.loc.symbol == ""
	var e resolvedEntry
	var ok bool
	if rvaOnly {
		if len(r.doneRVA) > 0 {
			e, ok = r.doneRVA[uint64(k.module)<<32|uint64(k.loc.rva)]
		}
	} else {
		e, ok = r.done[k]
	}
	if !ok {
		if err := ctx.Err(); err != nil {
			return err
		}
		var err error
		if e, err = r.resolve(ctx, f, mk.Module, k.module); err != nil {
			return err
		}
		if rvaOnly {
			if !r.cheapLookups() {
				r.doneRVA[uint64(k.module)<<32|uint64(k.loc.rva)] = e
			}
		} else {
			r.done[k] = e
		}
	}
	*res = Resolved{Frame: f, Module: e.module, Symbol: e.symbol, Offset: e.offset, Err: e.err, Class: e.class}
	return nil
}

func (r *Resolver) resolve(ctx context.Context, f Frame, module string, moduleID int32) (resolvedEntry, error) {
	e := resolvedEntry{module: module}
	switch {
	case f.Symbol != "":
		e.symbol, e.offset = f.Symbol, f.SymbolOffset
	case f.Module == "":
		e.err = ErrNoModule
	case !f.HasRVA:
		e.err = ErrNoRVA
	case r.Symbolizer == nil:
		e.err = errors.New("no symbolizer configured")
	default:
		sym, err := r.Symbolizer.Lookup(ctx, ModuleKey{Module: module, PDB: f.PDB, GUID: f.GUID, Age: f.Age}, f.RVA)
		if err != nil {
			if ctx.Err() != nil {
				return e, ctx.Err()
			}
			e.err = err
		} else {
			e.symbol, e.offset, e.symbolID = sym.Name, uint64(sym.Offset), sym.ID
		}
	}
	e.class = r.classOf(moduleID, e.module, Symbol{Name: e.symbol, ID: e.symbolID})
	return e, nil
}

// Node is a call-tree node: one frame reached through one particular chain
// of callers. Count sums the counts of the stacks passing through it.
type Node struct {
	Frame    Frame
	Count    int64
	Children []*Node
	Resolved *Resolved

	index map[frameKey]*Node
}

// Tree merges stacks into a call tree rooted at the outermost frames
// (thread entry points), so shared prefixes are stored once.
type Tree struct {
	Root   Node
	Stacks int
}

// Add merges a stack (innermost frame first, as XE prints it).
func (t *Tree) Add(s Stack) {
	count := s.Count
	if count <= 0 {
		count = 1
	}
	t.Stacks++
	n := &t.Root
	n.Count += count
	for i := len(s.Frames) - 1; i >= 0; i-- {
		f := s.Frames[i]
		k := keyOf(f)
		if n.index == nil {
			n.index = map[frameKey]*Node{}
		}
		child, ok := n.index[k]
		if !ok {
			child = &Node{Frame: f}
			n.index[k] = child
			n.Children = append(n.Children, child)
		}
		child.Count += count
		n = child
	}
}

// Walk visits every node below the root, depth first, with its depth (1 for
// outermost frames).
func (t *Tree) Walk(fn func(n *Node, depth int)) {
	var walk func(n *Node, depth int)
	walk = func(n *Node, depth int) {
		for _, c := range n.Children {
			fn(c, depth)
			walk(c, depth+1)
		}
	}
	walk(&t.Root, 1)
}

// Resolve resolves every node; each distinct frame is looked up once (see
// Resolver). It returns the number of distinct frames in the tree.
func (t *Tree) Resolve(ctx context.Context, r *Resolver) (int, error) {
	var err error
	distinct := map[frameKey]bool{}
	t.Walk(func(n *Node, _ int) {
		if err != nil {
			return
		}
		distinct[keyOf(n.Frame)] = true
		var res Resolved
		res, err = r.Resolve(ctx, n.Frame)
		n.Resolved = &res
	})
	return len(distinct), err
}

package callstack

import (
	"context"
	"errors"
	"fmt"
)

// Resolved is a frame with its symbol and classification.
type Resolved struct {
	Frame  Frame
	Module string // short module name (sqlmin)
	// Symbol is the name-only function name; empty when unresolved.
	Symbol string
	Offset uint64
	Class  Classification
	// Err says why the frame has no symbol (no PDB identity, PDB missing,
	// no symbol at the address).
	Err error
}

// String prints module!symbol+0xoffset, or module+0xrva when unresolved.
func (r Resolved) String() string {
	switch {
	case r.Symbol != "":
		return fmt.Sprintf("%s!%s+0x%x", r.Module, r.Symbol, r.Offset)
	case r.Frame.HasRVA:
		return fmt.Sprintf("%s+0x%x", r.Module, r.Frame.RVA)
	}
	return r.Frame.String()
}

// Errors that explain unresolved frames.
var (
	ErrNoModule = errors.New("frame has no module (bare address without base addresses)")
	ErrNoRVA    = errors.New("frame has no RVA")
)

// frameKey identifies a distinct frame for resolution.
type frameKey struct {
	key    ModuleKey
	rva    uint32
	hasRVA bool
	addr   uint64
	symbol string
	offset uint64
}

func keyOf(f Frame) frameKey {
	k := frameKey{key: f.Key(), symbol: f.Symbol}
	switch {
	case f.Symbol != "":
		k.offset = f.SymbolOffset
	case f.HasRVA:
		k.rva, k.hasRVA = f.RVA, true
	default:
		k.addr = f.Address
	}
	return k
}

// Resolver resolves frames through a Symbolizer and classifies them,
// resolving each distinct frame once per Resolver.
type Resolver struct {
	Symbolizer Symbolizer // may be nil: frames stay unresolved (already symbolised frames still classify)
	Classifier *Classifier
	done       map[resolverKey]resolvedEntry
	modules    map[ModuleKey]int32
	lastMod    ModuleKey // the module of the previous frame and its id:
	lastID     int32     // consecutive frames mostly share one
}

// resolverKey is a compact frameKey: the module identity is numbered once
// per Resolver, so 100,000 distinct frames hash a few words each.
type resolverKey struct {
	module int32
	hasRVA bool
	rva    uint32
	addr   uint64
	symbol string
	offset uint64
}

// resolvedEntry is what the Resolver remembers of a distinct frame; the
// classification is shared with the Classifier's memo.
type resolvedEntry struct {
	module string
	symbol string
	offset uint64
	err    error
	class  *Classification
}

func (r *Resolver) keyOf(f Frame) (resolverKey, ModuleKey) {
	mk := f.Key()
	if r.modules == nil {
		r.modules = map[ModuleKey]int32{}
		r.done = map[resolverKey]resolvedEntry{}
	}
	id := r.lastID
	if len(r.modules) == 0 || mk != r.lastMod {
		var ok bool
		if id, ok = r.modules[mk]; !ok {
			id = int32(len(r.modules))
			r.modules[mk] = id
		}
		r.lastMod, r.lastID = mk, id
	}
	fk := keyOf(f)
	return resolverKey{module: id, hasRVA: fk.hasRVA, rva: fk.rva, addr: fk.addr, symbol: fk.symbol, offset: fk.offset}, mk
}

// Resolve resolves one frame. Symbolizer errors are recorded in the result,
// not returned; only context cancellation is returned.
func (r *Resolver) Resolve(ctx context.Context, f Frame) (Resolved, error) {
	k, mk := r.keyOf(f)
	e, ok := r.done[k]
	if !ok {
		if err := ctx.Err(); err != nil {
			return Resolved{}, err
		}
		var err error
		if e, err = r.resolve(ctx, f, mk.Module); err != nil {
			return Resolved{}, err
		}
		r.done[k] = e
	}
	return Resolved{Frame: f, Module: e.module, Symbol: e.symbol, Offset: e.offset, Err: e.err, Class: *e.class}, nil
}

func (r *Resolver) resolve(ctx context.Context, f Frame, module string) (resolvedEntry, error) {
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
			e.symbol, e.offset = sym.Name, uint64(sym.Offset)
		}
	}
	e.class = r.Classifier.classifyShared(e.module, e.symbol)
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

// Resolve resolves every node; each distinct frame is looked up once. It
// returns the number of distinct frames.
func (t *Tree) Resolve(ctx context.Context, r *Resolver) (int, error) {
	var err error
	t.Walk(func(n *Node, _ int) {
		if err != nil {
			return
		}
		var res Resolved
		res, err = r.Resolve(ctx, n.Frame)
		n.Resolved = &res
	})
	return len(r.done), err
}

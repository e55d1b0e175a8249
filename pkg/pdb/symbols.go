package pdb

import (
	"fmt"
	"slices"
	"sync/atomic"
)

// CodeView symbol record kinds used here (cvinfo.h).
const (
	sPub32      = 0x110E
	sLProc32    = 0x110F
	sGProc32    = 0x1110
	sLProc32ID  = 0x1146
	sGProc32ID  = 0x1147
	sProcRef    = 0x1125
	sLProcRef   = 0x1127
	sGData32    = 0x110D
	sLData32    = 0x110C
	cvSigC13    = 4
	pubFlagCode = 1
	pubFlagFunc = 2
)

// SymbolKind says where a symbol came from.
type SymbolKind uint8

const (
	// PublicSymbol is an S_PUB32 record: decorated name, no size. Microsoft's
	// public PDBs have only these.
	PublicSymbol SymbolKind = iota + 1
	// ProcedureSymbol is an S_GPROC32/S_LPROC32 record from a module stream:
	// undecorated qualified name and code size; present in private PDBs only.
	ProcedureSymbol
)

func (k SymbolKind) String() string {
	switch k {
	case PublicSymbol:
		return "public"
	case ProcedureSymbol:
		return "procedure"
	}
	return fmt.Sprintf("SymbolKind(%d)", uint8(k))
}

// Symbol is one named address.
type Symbol struct {
	Name    string // as stored: decorated for publics
	Kind    SymbolKind
	Segment uint16 // 1-based section number
	Offset  uint32 // offset inside the section
	RVA     uint32 // Segment:Offset as an image-relative address (after OMAP)
	Size    uint32 // code size; 0 when unknown (publics)
	Flags   uint32 // S_PUB32 flags (1 code, 2 function, 4 managed, 8 MSIL)
	Mapped  bool   // false when Segment:Offset has no RVA (bad segment, removed by OMAP)
}

// Publics reads every S_PUB32 record from the symbol record stream, in
// stream order.
func (f *File) Publics() ([]Symbol, error) {
	if f.symRecStream < 0 {
		return nil, nil
	}
	b, err := f.msf.stream(f.symRecStream)
	if err != nil {
		return nil, fmt.Errorf("symbol records: %w", err)
	}
	var out []Symbol
	err = walkRecords(b, 0, f.symRecStream, func(off int, kind uint16, rec []byte) error {
		if kind != sPub32 {
			return nil
		}
		if len(rec) < 14 {
			return formatErr(f.symRecStream, int64(off), "S_PUB32 record of %d bytes, need 14", len(rec))
		}
		name, _, ok := cstring(rec[14:])
		if !ok {
			name = string(rec[14:]) // some writers omit the NUL when the record is exactly full
		}
		s := Symbol{Name: name, Kind: PublicSymbol, Flags: le.Uint32(rec[4:]), Offset: le.Uint32(rec[8:]), Segment: le.Uint16(rec[12:])}
		s.RVA, s.Mapped = f.rva(s.Segment, s.Offset)
		out = append(out, s)
		return nil
	})
	return out, err
}

// GlobalCounts counts the records of the symbol record stream by family:
// publics, procedure references (S_PROCREF, S_LPROCREF) and data (S_GDATA32,
// S_LDATA32).
func (f *File) GlobalCounts() (publics, procRefs, data int, err error) {
	if f.symRecStream < 0 {
		return 0, 0, 0, nil
	}
	b, err := f.msf.stream(f.symRecStream)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("symbol records: %w", err)
	}
	err = walkRecords(b, 0, f.symRecStream, func(_ int, kind uint16, _ []byte) error {
		switch kind {
		case sPub32:
			publics++
		case sProcRef, sLProcRef:
			procRefs++
		case sGData32, sLData32:
			data++
		}
		return nil
	})
	return publics, procRefs, data, err
}

// Procedures reads the S_GPROC32 and S_LPROC32 records of every module
// stream. Stripped (public) PDBs have none.
func (f *File) Procedures() ([]Symbol, error) {
	var out []Symbol
	seen := map[int]bool{}
	for mi, m := range f.Modules {
		if m.SymbolStream < 0 || m.SymbolBytes < 4 || seen[m.SymbolStream] {
			continue // a stream shared by two modules is corrupt; read it once
		}
		seen[m.SymbolStream] = true
		b, err := f.msf.stream(m.SymbolStream)
		if err != nil {
			return nil, fmt.Errorf("module %d (%s): %w", mi, m.Name, err)
		}
		if uint64(m.SymbolBytes) > uint64(len(b)) {
			return nil, formatErr(m.SymbolStream, int64(len(b)), "module %q claims %d symbol bytes, stream has %d", m.Name, m.SymbolBytes, len(b))
		}
		if sig := le.Uint32(b); sig != cvSigC13 {
			return nil, formatErr(m.SymbolStream, 0, "module %q symbol signature %d, want %d", m.Name, sig, cvSigC13)
		}
		err = walkRecords(b[:m.SymbolBytes], 4, m.SymbolStream, func(off int, kind uint16, rec []byte) error {
			switch kind {
			case sGProc32, sLProc32, sGProc32ID, sLProc32ID:
			default:
				return nil
			}
			if len(rec) < 39 {
				return formatErr(m.SymbolStream, int64(off), "procedure record of %d bytes, need 39", len(rec))
			}
			name, _, ok := cstring(rec[39:])
			if !ok {
				name = string(rec[39:])
			}
			s := Symbol{Name: name, Kind: ProcedureSymbol, Size: le.Uint32(rec[16:]), Offset: le.Uint32(rec[32:]), Segment: le.Uint16(rec[36:])}
			s.RVA, s.Mapped = f.rva(s.Segment, s.Offset)
			out = append(out, s)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("module %d (%s): %w", mi, m.Name, err)
		}
	}
	return out, nil
}

// walkRecords calls fn for each CodeView record in b[start:]; rec is the
// whole record including its 2-byte length, so field offsets match cvinfo.h.
func walkRecords(b []byte, start, stream int, fn func(off int, kind uint16, rec []byte) error) error {
	for o := start; o < len(b); {
		if o+4 > len(b) {
			if allPadding(b[o:]) {
				return nil
			}
			return formatErr(stream, int64(o), "symbol record header truncated")
		}
		n := int(le.Uint16(b[o:]))
		if n < 2 {
			return formatErr(stream, int64(o), "symbol record length %d, need at least 2", n)
		}
		if o+2+n > len(b) {
			return formatErr(stream, int64(o), "symbol record of %d bytes runs past the stream end (%d)", n, len(b))
		}
		if err := fn(o, le.Uint16(b[o+2:]), b[o:o+2+n]); err != nil {
			return err
		}
		o += 2 + n
	}
	return nil
}

func allPadding(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Table is an address-sorted table of the PDB's code symbols for floor
// lookups. It is safe for concurrent use.
type Table struct {
	rvas     []uint32 // sorted start addresses
	syms     []Symbol // parallel to rvas
	sections []SectionHeader

	names []atomic.Pointer[string] // undecorated names, filled on first use

	// bucket[k] is the first index whose RVA is at least k<<shift: a
	// lookup binary-searches only its bucket's few entries instead of the
	// whole table (issue 26: 100,000 lookups, each a dozen cache misses).
	// Empty for an empty table.
	bucket []int32
	shift  uint
}

// maxBuckets bounds the bucket index (4 bytes each).
const maxBuckets = 1 << 22

// Table builds the lookup table: public symbols that are code (function or
// code flag, or placed in an executable section) plus module procedures,
// which add static functions that publics lack. Where both name the same
// address, the public wins, so the answer matches what a public-only PDB of
// the same image gives.
func (f *File) Table() (*Table, error) {
	pubs, err := f.Publics()
	if err != nil {
		return nil, err
	}
	procs, err := f.Procedures()
	if err != nil {
		return nil, err
	}
	syms := make([]Symbol, 0, len(pubs)+len(procs))
	for _, p := range pubs {
		sec := sectionIndex(f.Sections, p.RVA)
		if p.Mapped && (p.Flags&(pubFlagCode|pubFlagFunc) != 0 || (sec >= 0 && f.Sections[sec].Executable())) {
			syms = append(syms, p)
		}
	}
	for _, p := range procs {
		if p.Mapped {
			syms = append(syms, p)
		}
	}
	// A stable order keeps stream order among equal addresses; publics
	// come first, so deduplication keeps the public's name, and takes the
	// code size of a procedure at the same address (publics have none).
	syms = sortByRVA(syms)
	for first, i := 0, 1; i < len(syms); i++ {
		if syms[i].RVA != syms[first].RVA {
			first = i
		} else if syms[first].Size == 0 {
			syms[first].Size = syms[i].Size
		}
	}
	syms = slices.CompactFunc(syms, func(a, b Symbol) bool { return a.RVA == b.RVA })
	t := &Table{rvas: make([]uint32, len(syms)), syms: syms, sections: f.Sections, names: make([]atomic.Pointer[string], len(syms))}
	for i, s := range syms {
		t.rvas[i] = s.RVA
	}
	t.buildBuckets()
	return t, nil
}

// sortByRVA orders symbols by RVA, keeping their order among equal RVAs.
// It sorts one word per symbol (RVA above, index below: distinct keys, so
// any sort is stable) and moves each symbol once, where a stable sort of
// the symbols themselves merges them in place at O(n log² n) moves (issue
// 26: the table is built on every symbols resolve run).
func sortByRVA(syms []Symbol) []Symbol {
	keys := make([]uint64, len(syms))
	for i := range syms {
		keys[i] = uint64(syms[i].RVA)<<32 | uint64(i)
	}
	slices.Sort(keys)
	out := make([]Symbol, len(syms))
	for i, k := range keys {
		out[i] = syms[uint32(k)]
	}
	return out
}

// buildBuckets sizes buckets to about two symbols each (at most
// maxBuckets) and records where each bucket starts.
func (t *Table) buildBuckets() {
	if len(t.rvas) == 0 {
		return
	}
	last := uint64(t.rvas[len(t.rvas)-1])
	want := min(uint64(len(t.rvas))/2+1, maxBuckets)
	for t.shift = 0; last>>t.shift >= want; t.shift++ {
	}
	n := int(last>>t.shift) + 2
	t.bucket = make([]int32, n)
	i := 0
	for k := range t.bucket {
		start := uint64(k) << t.shift
		for i < len(t.rvas) && uint64(t.rvas[i]) < start {
			i++
		}
		t.bucket[k] = int32(i)
	}
}

// Len is the number of symbols in the table.
func (t *Table) Len() int { return len(t.syms) }

// Symbols returns the table's symbols in address order.
func (t *Table) Symbols() []Symbol { return slices.Clone(t.syms) }

// Match is the answer to a lookup.
type Match struct {
	Symbol       Symbol
	Name         string // undecorated, name-only form
	Displacement uint32 // rva − Symbol.RVA
	Index        int    // the symbol's position in the table (Symbols()[Index])
}

// Lookup finds the symbol with the greatest address ≤ rva in the same
// section, as DIA's findSymbolByRVA does for public symbols. Where the PDB
// gives the function's size (procedure records of private PDBs), an rva at
// or past its end is inside no function, and the lookup misses rather than
// name the function before the gap. ok is false when rva precedes every
// symbol of its section, lies outside all sections, or falls past a sized
// function.
func (t *Table) Lookup(rva uint32) (Match, bool) {
	lo, hi := 0, len(t.rvas)
	if k := int(rva >> t.shift); len(t.bucket) > 0 {
		// every RVA before bucket k is below rva; bucket k+1 starts
		// above it
		if k+1 < len(t.bucket) {
			lo, hi = int(t.bucket[k]), int(t.bucket[k+1])
		} else {
			lo = int(t.bucket[len(t.bucket)-1])
		}
	}
	for lo < hi { // first index with rvas[i] > rva
		mid := int(uint(lo+hi) >> 1)
		if t.rvas[mid] <= rva {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	i := lo - 1
	if i < 0 {
		return Match{}, false
	}
	s := &t.syms[i]
	if len(t.sections) > 0 {
		sec := sectionIndex(t.sections, rva)
		if sec < 0 || s.RVA < t.sections[sec].VirtualAddress {
			return Match{}, false
		}
	}
	if s.Size != 0 && rva-s.RVA >= s.Size {
		return Match{}, false
	}
	return Match{Symbol: *s, Name: t.name(i), Displacement: rva - s.RVA, Index: i}, true
}

// sectionIndex returns the index of the section containing rva, or -1.
func sectionIndex(secs []SectionHeader, rva uint32) int {
	for i, s := range secs {
		size := max(s.VirtualSize, s.SizeOfRawData)
		if rva >= s.VirtualAddress && rva-s.VirtualAddress < size {
			return i
		}
	}
	return -1
}

// name undecorates lazily: a public PDB of sqlmin has hundreds of thousands
// of publics, and a call stack touches a few dozen. Concurrent first uses may
// both compute the (identical) name; either store wins.
func (t *Table) name(i int) string {
	if p := t.names[i].Load(); p != nil {
		return *p
	}
	s := t.syms[i]
	n := s.Name
	if s.Kind == PublicSymbol {
		n = Undecorate(s.Name)
	}
	t.names[i].Store(&n)
	return n
}

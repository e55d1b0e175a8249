// Package pdb reads Microsoft program database (PDB) files, in the style of
// the standard library's debug/pe: Open or NewFile give a File with the PDB's
// identity (GUID and age), its image section headers and modules, and methods
// that read its public symbols (S_PUB32) and procedures (S_GPROC32,
// S_LPROC32) and build an address table for RVA → symbol lookups. Undecorate
// turns MSVC-decorated names into the "name only" form
// (sql::CStmtQuery::ErsqExecuteQuery).
//
// It is a parser only: it must not download, cache or log anything, and it
// knows nothing about SQL Server (see pkg/symstore and pkg/callstack).
//
// Why hand-written: no Go PDB module can be obtained as a dependency (the
// candidates are unpublished or unlicensed, docs/design/symbols-and-xel.md §1), and the
// subset needed — MSF 7.00 container, PDB info, DBI, section headers, publics,
// module procedures, OMAP — is small. Format references: LLVM's "The PDB File
// Format" pages and microsoft-pdb's cvinfo.h. Only the standard library is used.
package pdb

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// Stream numbers fixed by the format.
const (
	streamPDBInfo = 1
	streamDBI     = 3
)

const (
	pdbInfoVersionVC70 = 20000404
	dbiVersionSigNew   = 0xFFFFFFFF // -1: the "new" DBI header
	dbiHeaderSize      = 64
)

// Optional debug header slots (u16 stream numbers). [verified] docs/design/symbols-and-xel.md §2
const (
	dbgOMAPFromSrc       = 4
	dbgSectionHeaders    = 5
	dbgOrigSectionHeader = 10
)

// IMAGE_SECTION_HEADER characteristics that mark code.
const (
	scnCntCode    = 0x00000020
	scnMemExecute = 0x20000000
)

// SectionHeader is one image section as the DBI's section-header stream
// records it (the same 40-byte IMAGE_SECTION_HEADER a PE file has).
type SectionHeader struct {
	Name            string
	VirtualSize     uint32
	VirtualAddress  uint32
	SizeOfRawData   uint32
	Characteristics uint32
}

// Executable reports whether the section holds code.
func (s SectionHeader) Executable() bool {
	return s.Characteristics&(scnCntCode|scnMemExecute) != 0
}

// Module is one compiland (object file) listed in the DBI stream.
type Module struct {
	Name         string
	ObjectFile   string
	SymbolStream int    // -1 when the module has no symbol stream
	SymbolBytes  uint32 // size of the CodeView symbol substream, including its 4-byte signature
}

// File is an open PDB.
type File struct {
	// GUID and InfoAge come from the PDB info stream.
	GUID    GUID
	InfoAge uint32
	// Age is the DBI stream's age: the one a PE's RSDS record, SQL Server's
	// callstack_rva frames and symbol-store keys carry. It can be lower than
	// InfoAge after later rewrites. [verified] docs/design/symbols-and-xel.md §2
	Age       uint32
	Signature uint32 // a timestamp, not part of the identity
	Machine   uint16 // IMAGE_FILE_MACHINE_*, 0x8664 for x64
	// Sections are the image's section headers (the pre-OMAP "original"
	// headers are used internally when the PDB has OMAP).
	Sections []SectionHeader
	Modules  []Module

	msf          *msf
	closer       io.Closer
	symRecStream int
	globalStream int
	publicStream int
	omapFromSrc  []omapEntry
	origSections []SectionHeader
	hasDBI       bool
}

// Open opens the named file and reads its headers.
func Open(name string) (*File, error) {
	fh, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	f, err := NewFile(fh)
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f.closer = fh
	return f, nil
}

// NewFile reads the PDB headers (container, info stream, DBI, section
// headers, module list) from r. Symbols are read on demand.
func NewFile(r io.ReaderAt) (*File, error) {
	m, err := openMSF(r)
	if err != nil {
		return nil, err
	}
	f := &File{msf: m, symRecStream: -1}
	if err := f.readInfo(); err != nil {
		return nil, err
	}
	if m.streamExists(streamDBI) && m.sizes[streamDBI] > 0 {
		if err := f.readDBI(); err != nil {
			return nil, err
		}
	} else {
		f.Age = f.InfoAge
	}
	return f, nil
}

// Close closes the file if it was opened by Open; it is a no-op after NewFile.
func (f *File) Close() error {
	if f.closer == nil {
		return nil
	}
	err := f.closer.Close()
	f.closer = nil
	return err
}

// SymbolServerKey is the key this PDB is stored under in a symbol store.
func (f *File) SymbolServerKey() string { return SymbolServerKey(f.GUID, f.Age) }

func (f *File) readInfo() error {
	info, err := f.msf.stream(streamPDBInfo)
	if err != nil {
		return fmt.Errorf("PDB info stream: %w", err)
	}
	if len(info) < 28 {
		return formatErr(streamPDBInfo, int64(len(info)), "PDB info stream is %d bytes, need 28", len(info))
	}
	if v := le.Uint32(info); v < pdbInfoVersionVC70 {
		return &FormatError{Stream: streamPDBInfo, Msg: fmt.Sprintf("PDB info version %d has no GUID (older than VC7.0)", v), Err: ErrUnsupported}
	}
	f.Signature = le.Uint32(info[4:])
	f.InfoAge = le.Uint32(info[8:])
	copy(f.GUID[:], info[12:28])
	return nil
}

// dbi header field offsets. [verified] docs/design/symbols-and-xel.md §2
const (
	dbiOffVersionSig   = 0
	dbiOffAge          = 8
	dbiOffGlobalStream = 12 // unused: the symbol record stream is scanned directly
	dbiOffPublicStream = 16 // unused: its address map is an optional speed-up
	dbiOffSymRecStream = 20
	dbiOffModInfoSize  = 24
	dbiOffSecContrSize = 28
	dbiOffSecMapSize   = 32
	dbiOffSrcInfoSize  = 36
	dbiOffTSMapSize    = 40
	dbiOffOptDbgSize   = 48
	dbiOffECSize       = 52
	dbiOffMachine      = 58
)

func (f *File) readDBI() error {
	dbi, err := f.msf.stream(streamDBI)
	if err != nil {
		return fmt.Errorf("DBI stream: %w", err)
	}
	if len(dbi) < dbiHeaderSize {
		return formatErr(streamDBI, int64(len(dbi)), "DBI stream is %d bytes, shorter than its %d-byte header", len(dbi), dbiHeaderSize)
	}
	if le.Uint32(dbi[dbiOffVersionSig:]) != dbiVersionSigNew {
		return &FormatError{Stream: streamDBI, Msg: "old-style DBI header", Err: ErrUnsupported}
	}
	f.Age = le.Uint32(dbi[dbiOffAge:])
	f.symRecStream = streamIndex(le.Uint16(dbi[dbiOffSymRecStream:]))
	f.Machine = le.Uint16(dbi[dbiOffMachine:])

	// Substreams follow the header in this order; all sizes are signed.
	order := []int{dbiOffModInfoSize, dbiOffSecContrSize, dbiOffSecMapSize, dbiOffSrcInfoSize, dbiOffTSMapSize, dbiOffECSize, dbiOffOptDbgSize}
	starts := map[int]int{}
	pos := dbiHeaderSize
	for _, field := range order {
		size := int32(le.Uint32(dbi[field:]))
		if size < 0 || int64(pos)+int64(size) > int64(len(dbi)) {
			return formatErr(streamDBI, int64(field), "substream size %d at header offset %d runs past the %d-byte stream", size, field, len(dbi))
		}
		starts[field] = pos
		pos += int(size)
	}
	modStart := starts[dbiOffModInfoSize]
	if err := f.readModules(dbi[modStart:modStart+int(int32(le.Uint32(dbi[dbiOffModInfoSize:])))], modStart); err != nil {
		return err
	}
	optStart := starts[dbiOffOptDbgSize]
	opt := dbi[optStart : optStart+int(int32(le.Uint32(dbi[dbiOffOptDbgSize:])))]
	slot := func(i int) int {
		if 2*i+2 > len(opt) {
			return -1
		}
		return streamIndex(le.Uint16(opt[2*i:]))
	}
	if s := slot(dbgSectionHeaders); s >= 0 {
		if f.Sections, err = f.readSectionHeaders(s); err != nil {
			return err
		}
	}
	if s := slot(dbgOMAPFromSrc); s >= 0 {
		if f.omapFromSrc, err = f.readOMAP(s); err != nil {
			return err
		}
		if o := slot(dbgOrigSectionHeader); o >= 0 {
			if f.origSections, err = f.readSectionHeaders(o); err != nil {
				return err
			}
		}
	}
	return nil
}

// streamIndex maps the u16 "no stream" marker 0xFFFF to -1.
func streamIndex(v uint16) int {
	if v == 0xFFFF {
		return -1
	}
	return int(v)
}

func (f *File) readModules(b []byte, base int) error {
	const fixed = 64
	for o := 0; o < len(b); {
		if o+fixed > len(b) {
			return formatErr(streamDBI, int64(base+o), "module info entry truncated (%d bytes left, need %d)", len(b)-o, fixed)
		}
		name, n1, ok := cstring(b[o+fixed:])
		if !ok {
			return formatErr(streamDBI, int64(base+o+fixed), "module name not NUL-terminated")
		}
		obj, n2, ok := cstring(b[o+fixed+n1:])
		if !ok {
			return formatErr(streamDBI, int64(base+o+fixed+n1), "module object file name not NUL-terminated")
		}
		f.Modules = append(f.Modules, Module{
			Name:         name,
			ObjectFile:   obj,
			SymbolStream: streamIndex(le.Uint16(b[o+34:])),
			SymbolBytes:  le.Uint32(b[o+36:]),
		})
		o = (o + fixed + n1 + n2 + 3) &^ 3
	}
	return nil
}

// cstring returns the NUL-terminated string at the start of b and the bytes
// it used including the NUL.
func cstring(b []byte) (string, int, bool) {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return "", 0, false
	}
	return string(b[:i]), i + 1, true
}

func (f *File) readSectionHeaders(stream int) ([]SectionHeader, error) {
	b, err := f.msf.stream(stream)
	if err != nil {
		return nil, fmt.Errorf("section headers: %w", err)
	}
	if len(b)%40 != 0 {
		return nil, formatErr(stream, int64(len(b)), "section header stream is %d bytes, not a multiple of 40", len(b))
	}
	out := make([]SectionHeader, 0, len(b)/40)
	for o := 0; o < len(b); o += 40 {
		name := b[o : o+8]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		out = append(out, SectionHeader{
			Name:            string(name),
			VirtualSize:     le.Uint32(b[o+8:]),
			VirtualAddress:  le.Uint32(b[o+12:]),
			SizeOfRawData:   le.Uint32(b[o+16:]),
			Characteristics: le.Uint32(b[o+36:]),
		})
	}
	return out, nil
}

// omapEntry maps an address range start in one address space to another;
// To == 0 means the range was removed by the optimiser.
type omapEntry struct{ From, To uint32 }

func (f *File) readOMAP(stream int) ([]omapEntry, error) {
	b, err := f.msf.stream(stream)
	if err != nil {
		return nil, fmt.Errorf("OMAP: %w", err)
	}
	if len(b)%8 != 0 {
		return nil, formatErr(stream, int64(len(b)), "OMAP stream is %d bytes, not a multiple of 8", len(b))
	}
	out := make([]omapEntry, len(b)/8)
	for i := range out {
		out[i] = omapEntry{le.Uint32(b[8*i:]), le.Uint32(b[8*i+4:])}
		if i > 0 && out[i].From < out[i-1].From {
			return nil, formatErr(stream, int64(8*i), "OMAP entries not sorted")
		}
	}
	return out, nil
}

// translateOMAP maps a pre-optimisation RVA through the OMAP-from-source
// table; ok is false when the address was optimised away.
func translateOMAP(table []omapEntry, rva uint32) (uint32, bool) {
	lo, hi := 0, len(table)
	for lo < hi { // first entry with From > rva
		mid := (lo + hi) / 2
		if table[mid].From <= rva {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return 0, false
	}
	e := table[lo-1]
	if e.To == 0 {
		return 0, false
	}
	return e.To + (rva - e.From), true
}

// rva converts a segment:offset address (segments count from 1) to an RVA,
// going through OMAP when the PDB has it.
func (f *File) rva(seg uint16, off uint32) (uint32, bool) {
	secs := f.Sections
	if f.omapFromSrc != nil && f.origSections != nil {
		secs = f.origSections
	}
	if seg == 0 || int(seg) > len(secs) {
		return 0, false
	}
	r := secs[seg-1].VirtualAddress + off
	if f.omapFromSrc != nil {
		return translateOMAP(f.omapFromSrc, r)
	}
	return r, true
}

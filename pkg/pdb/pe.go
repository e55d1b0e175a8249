package pdb

import (
	"debug/pe"
	"errors"
	"fmt"
	"io"
)

// PEIdentity is the PDB reference a PE image (DLL, EXE) carries in its
// CodeView debug directory entry: the key to find its PDB.
type PEIdentity struct {
	GUID GUID
	Age  uint32 // matches the PDB's DBI age (File.Age)
	Path string // the PDB path recorded by the linker
}

// ErrNoCodeView is returned by ReadPEIdentity for images without an RSDS record.
var ErrNoCodeView = errors.New("PE image has no CodeView (RSDS) debug record")

const (
	imageDebugTypeCodeView = 2
	debugDirEntrySize      = 28
)

// ReadPEIdentity reads the RSDS record of a PE image through debug/pe:
// data directory 6 → IMAGE_DEBUG_DIRECTORY entries → the CODEVIEW entry's
// "RSDS", GUID, age, path. [verified] docs/design/symbols-and-xel.md §3
func ReadPEIdentity(r io.ReaderAt) (PEIdentity, error) {
	f, err := pe.NewFile(r)
	if err != nil {
		return PEIdentity{}, err
	}
	defer f.Close()
	var dd pe.DataDirectory
	switch oh := f.OptionalHeader.(type) {
	case *pe.OptionalHeader64:
		if oh.NumberOfRvaAndSizes > pe.IMAGE_DIRECTORY_ENTRY_DEBUG {
			dd = oh.DataDirectory[pe.IMAGE_DIRECTORY_ENTRY_DEBUG]
		}
	case *pe.OptionalHeader32:
		if oh.NumberOfRvaAndSizes > pe.IMAGE_DIRECTORY_ENTRY_DEBUG {
			dd = oh.DataDirectory[pe.IMAGE_DIRECTORY_ENTRY_DEBUG]
		}
	}
	if dd.Size == 0 {
		return PEIdentity{}, ErrNoCodeView
	}
	var dir []byte
	for _, s := range f.Sections {
		if dd.VirtualAddress >= s.VirtualAddress && dd.VirtualAddress-s.VirtualAddress < max(s.VirtualSize, s.Size) {
			data, err := s.Data()
			if err != nil {
				return PEIdentity{}, fmt.Errorf("section %s: %w", s.Name, err)
			}
			off := dd.VirtualAddress - s.VirtualAddress
			if uint64(off)+uint64(dd.Size) > uint64(len(data)) {
				return PEIdentity{}, fmt.Errorf("debug directory at RVA %#x runs past section %s", dd.VirtualAddress, s.Name)
			}
			dir = data[off : off+dd.Size]
			break
		}
	}
	if dir == nil {
		return PEIdentity{}, fmt.Errorf("debug directory RVA %#x is in no section", dd.VirtualAddress)
	}
	for o := 0; o+debugDirEntrySize <= len(dir); o += debugDirEntrySize {
		if le.Uint32(dir[o+12:]) != imageDebugTypeCodeView {
			continue
		}
		size, ptr := le.Uint32(dir[o+16:]), le.Uint32(dir[o+24:])
		if size < 24 || size > 4096 {
			return PEIdentity{}, fmt.Errorf("CodeView record of %d bytes", size)
		}
		rec := make([]byte, size)
		if _, err := r.ReadAt(rec, int64(ptr)); err != nil {
			return PEIdentity{}, fmt.Errorf("CodeView record at file offset %#x: %w", ptr, err)
		}
		if string(rec[:4]) != "RSDS" {
			continue // NB10 (PDB 2.0) records carry no GUID
		}
		var id PEIdentity
		copy(id.GUID[:], rec[4:20])
		id.Age = le.Uint32(rec[20:])
		id.Path, _, _ = cstring(append(rec[24:], 0))
		return id, nil
	}
	return PEIdentity{}, ErrNoCodeView
}

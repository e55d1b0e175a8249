package pdb

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// GUID is a PDB signature GUID in its on-disk byte order (Data1, Data2 and
// Data3 little-endian, Data4 as bytes), as stored in the PDB info stream and
// in a PE file's RSDS record. [verified] docs/design/symbols-and-xel.md §3
type GUID [16]byte

// String formats g in registry form, upper case:
// F7098D28-76A6-EA1F-4C4C-44205044422E.
func (g GUID) String() string {
	return fmt.Sprintf("%08X-%04X-%04X-%02X%02X-%X",
		le.Uint32(g[0:]), le.Uint16(g[4:]), le.Uint16(g[6:]), g[8], g[9], g[10:16])
}

// IsZero reports whether g is all zeros, which SQL Server uses for "no
// symbol information".
func (g GUID) IsZero() bool { return g == GUID{} }

// ParseGUID accepts the registry form with or without braces and dashes, in
// either case ("6a193443-3512-464b-8b8e-d905ad930ee6",
// "{C374E059-5793-9B92-6525-386A66A2D3F5}", "C374E05957939B926525386A66A2D3F5").
func ParseGUID(s string) (GUID, error) {
	var g GUID
	t := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(s), "{"), "}")
	if len(t) == 36 {
		if t[8] != '-' || t[13] != '-' || t[18] != '-' || t[23] != '-' {
			return g, fmt.Errorf("GUID %q: dashes not at positions 8, 13, 18, 23", s)
		}
		t = t[:8] + t[9:13] + t[14:18] + t[19:23] + t[24:]
	}
	if len(t) != 32 {
		return g, fmt.Errorf("GUID %q: want 32 hex digits, got %d characters", s, len(t))
	}
	raw, err := hex.DecodeString(t)
	if err != nil {
		return g, fmt.Errorf("GUID %q: %w", s, err)
	}
	// Registry form prints Data1..Data3 big-endian; storage is little-endian.
	g[0], g[1], g[2], g[3] = raw[3], raw[2], raw[1], raw[0]
	g[4], g[5] = raw[5], raw[4]
	g[6], g[7] = raw[7], raw[6]
	copy(g[8:], raw[8:])
	return g, nil
}

// SymbolServerKey is the directory name a symbol store uses for a PDB: the
// GUID's 32 hex digits, upper case, followed by the age in hex without
// padding. The age is hex, not decimal (the two agree below 10).
// [verified] docs/design/symbols-and-xel.md §6
func SymbolServerKey(g GUID, age uint32) string {
	return strings.ReplaceAll(g.String(), "-", "") + strings.ToUpper(strconv.FormatUint(uint64(age), 16))
}

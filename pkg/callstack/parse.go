package callstack

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
)

// ParseOptions supply what frames alone do not carry.
type ParseOptions struct {
	// Bases maps modules to load addresses (sys.dm_os_loaded_modules), to
	// turn bare virtual addresses into module+RVA.
	Bases *ModuleBases
	// Identities gives the PDB identity of modules for forms that carry
	// none (module+offset lines), keyed by NormalizeModule(name).
	Identities map[string]ModuleKey
}

// maxInputBytes bounds what Parse accepts; XE call stacks are at most a few
// KB per event and histogram dumps a few hundred KB.
const maxInputBytes = 64 << 20

var attrPattern = regexp.MustCompile(`(\w+)\s*=\s*"([^"]*)"`)

// parseFrameElement reads a <frame …> element's attributes: id, pdb, age,
// guid, module (or name), rva and address. [R] X7, docs/design/tracing.md §14.1
func parseFrameElement(el string) (Frame, bool) {
	f := Frame{ID: -1}
	for _, a := range attrPattern.FindAllStringSubmatch(el, -1) {
		v := strings.TrimSpace(a[2])
		switch strings.ToLower(a[1]) {
		case "id":
			if n, err := strconv.ParseInt(v, 16, 32); err == nil {
				f.ID = int(n)
			}
		case "pdb":
			f.PDB = v
		case "age":
			if n, err := strconv.ParseUint(v, 10, 32); err == nil {
				f.Age = uint32(n)
			}
		case "guid":
			f.GUID = normalizeGUID(v)
		case "module":
			f.Module = v
		case "name":
			if f.Module == "" {
				f.Module = v
			}
		case "rva":
			// Hex after 0x, else decimal (Internals Viewer's rule).
			if strings.HasPrefix(v, "0x") || strings.HasPrefix(v, "0X") {
				if n, ok := parseHex(v); ok && n <= 0xFFFFFFFF {
					f.RVA, f.HasRVA = uint32(n), true
				}
			} else if n, err := strconv.ParseUint(v, 10, 32); err == nil {
				f.RVA, f.HasRVA = uint32(n), true
			}
		case "address":
			f.Address, f.HasAddress = parseHex(v)
		}
	}
	if f.Module == "" && !f.HasAddress {
		return f, false // Internals Viewer skips frames with no module
	}
	return f, true
}

// completeFrames fills in what individual frames lack, across all stacks of
// one input: module identity from other frames of the module or from
// opts.Identities, RVAs for bare addresses from load bases (given, or
// recovered as address − rva from frames that carry both).
func completeFrames(stacks []Stack, opts ParseOptions) {
	identity := map[string]ModuleKey{}
	recovered := map[string]uint64{}
	for name, k := range opts.Identities {
		identity[NormalizeModule(name)] = k
	}
	for _, s := range stacks {
		for _, f := range s.Frames {
			name := f.ModuleName()
			if name == "" {
				continue
			}
			if k := f.Key(); k.HasIdentity() {
				identity[name] = k // the last mapping wins, as in SQLCallStackResolver
			}
			if f.HasRVA && f.HasAddress && f.Address >= uint64(f.RVA) {
				recovered[name] = f.Address - uint64(f.RVA)
			}
		}
	}
	if len(identity) == 0 && len(recovered) == 0 && opts.Bases == nil {
		return // nothing to fill in
	}
	for si := range stacks {
		for fi := range stacks[si].Frames {
			f := &stacks[si].Frames[fi]
			if !f.HasRVA && f.HasAddress && f.Symbol == "" {
				if f.Module == "" && opts.Bases != nil {
					if name, base, ok := opts.Bases.Find(f.Address); ok {
						f.Module = name
						f.RVA, f.HasRVA = uint32(f.Address-base), true
					}
				} else if base, ok := recovered[f.ModuleName()]; ok && f.Address >= base && f.Address-base <= 0xFFFFFFFF {
					f.RVA, f.HasRVA = uint32(f.Address-base), true
				} else if opts.Bases != nil {
					if base, ok := opts.Bases.Base(f.ModuleName()); ok && f.Address >= base && f.Address-base <= 0xFFFFFFFF {
						f.RVA, f.HasRVA = uint32(f.Address-base), true
					}
				}
			}
			if f.Module != "" && !f.Key().HasIdentity() {
				if k, ok := identity[f.ModuleName()]; ok {
					f.PDB, f.GUID, f.Age = k.PDB, k.GUID, k.Age
				}
			}
		}
	}
}

// ModuleBases maps module load addresses, as sys.dm_os_loaded_modules
// reports them, to module names.
type ModuleBases struct {
	byName map[string]uint64
	sorted []moduleBase
}

type moduleBase struct {
	name string
	base uint64
}

// ParseBaseAddresses reads the output of
//
//	select name, base_address from sys.dm_os_loaded_modules where name not like '%.rll'
//
// (https://learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-os-loaded-modules-transact-sql):
// one module per line, a path or name then a hex address (0x-prefixed or
// not, WinDbg backtick form accepted), separated by tabs or spaces. A header
// line and lines without an address are ignored; malformed addresses are
// errors naming the line.
func ParseBaseAddresses(text string) (*ModuleBases, error) {
	mb := &ModuleBases{byName: map[string]uint64{}}
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(line, "\ufeff"))
		if line == "" {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		addrText := fields[len(fields)-1]
		path := strings.TrimSpace(strings.TrimSuffix(line, addrText))
		if strings.EqualFold(path, "name") && strings.EqualFold(addrText, "base_address") {
			continue
		}
		addr, ok := parseHex(addrText)
		if !ok {
			if !strings.ContainsAny(addrText, "0123456789") {
				continue // not an address column at all
			}
			return nil, fmt.Errorf("base addresses line %d: %q is not a hex address", n+1, addrText)
		}
		name := NormalizeModule(strings.Trim(path, "<>\"' \t"))
		if name == "" {
			return nil, fmt.Errorf("base addresses line %d: no module name", n+1)
		}
		mb.byName[name] = addr
	}
	for name, base := range mb.byName {
		mb.sorted = append(mb.sorted, moduleBase{name, base})
	}
	sort.Slice(mb.sorted, func(i, j int) bool { return mb.sorted[i].base < mb.sorted[j].base })
	return mb, nil
}

// Len is the number of modules.
func (mb *ModuleBases) Len() int { return len(mb.byName) }

// Base returns a module's load address.
func (mb *ModuleBases) Base(module string) (uint64, bool) {
	b, ok := mb.byName[NormalizeModule(module)]
	return b, ok
}

// maxModuleSize bounds how far past its base an address may lie and still
// be attributed to a module (sqllang.dll, the largest, is about 60 MB).
const maxModuleSize = 1 << 30

// Find returns the module with the greatest base ≤ addr.
func (mb *ModuleBases) Find(addr uint64) (string, uint64, bool) {
	i := sort.Search(len(mb.sorted), func(i int) bool { return mb.sorted[i].base > addr }) - 1
	if i < 0 || addr-mb.sorted[i].base >= maxModuleSize {
		return "", 0, false
	}
	return mb.sorted[i].name, mb.sorted[i].base, true
}

var shortModuleInfoPattern = regexp.MustCompile(`^\s*"?([^",]+?)"?\s*,\s*"?\{?([0-9A-Fa-f]{8}-[0-9A-Fa-f-]{27})\}?"?\s*,\s*(\d+)\s*$`)

var moduleInfoPattern = regexp.MustCompile(`^\s*"?([^",]+?)"?\s*,.*?"?([^",]+\.pdb)"?\s*,\s*"?\{?([0-9A-Fa-f-]{32,36})\}?"?\s*,\s*\d+\s*,\s*(\d+)\s*$`)

// ParseModuleInfo reads SQLCallStackResolver's CSV module lines —
// "ntdll.dll","10.0.19041.662",2056192,666871280,2084960,"ntdll.pdb","{GUID}",0,1
// (the last field is the age), and the short form "sqlservr.exe,GUID,age" —
// which give module+offset input its PDB identity. Other lines are skipped.
func ParseModuleInfo(text string) map[string]ModuleKey {
	out := map[string]ModuleKey{}
	for len(text) > 0 {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		if strings.IndexByte(line, ',') < 0 {
			continue // not a CSV line: the common case in a frames file
		}
		line = strings.TrimSpace(line)
		m := moduleInfoPattern.FindStringSubmatch(line)
		if m == nil {
			// Short form: module,guid,age (the PDB is named after the module).
			if s := shortModuleInfoPattern.FindStringSubmatch(line); s != nil {
				m = []string{s[0], s[1], NormalizeModule(s[1]) + ".pdb", s[2], s[3]}
			} else {
				continue
			}
		}
		guid := normalizeGUID(m[3])
		age, err := strconv.ParseUint(m[4], 10, 32)
		if guid == "" || err != nil {
			continue
		}
		name := NormalizeModule(m[1])
		out[name] = ModuleKey{Module: name, PDB: m[2], GUID: guid, Age: uint32(age)}
	}
	return out
}

// DecodeText turns file bytes into a string: UTF-16 with a byte-order mark
// (SQLDump*.txt files are UTF-16LE), UTF-16 without one (ASCII text with
// every other byte zero: what PowerShell and SSMS save), or UTF-8 with or
// without a mark.
func DecodeText(b []byte) string {
	switch {
	case len(b) >= 2 && b[0] == 0xFF && b[1] == 0xFE:
		return decodeUTF16(b[2:], false)
	case len(b) >= 2 && b[0] == 0xFE && b[1] == 0xFF:
		return decodeUTF16(b[2:], true)
	case len(b) >= 4 && len(b)%2 == 0 && b[0] != 0 && b[1] == 0 && b[2] != 0 && b[3] == 0:
		return decodeUTF16(b, false)
	case len(b) >= 4 && len(b)%2 == 0 && b[0] == 0 && b[1] != 0 && b[2] == 0 && b[3] != 0:
		return decodeUTF16(b, true)
	case len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF:
		b = b[3:]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func decodeUTF16(b []byte, bigEndian bool) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		if bigEndian {
			u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
		} else {
			u[i] = uint16(b[2*i+1])<<8 | uint16(b[2*i])
		}
	}
	return string(utf16.Decode(u))
}

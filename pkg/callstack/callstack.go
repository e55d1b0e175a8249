// Package callstack is QueryReplay's model of SQL Server call stacks: it
// parses the raw call-stack text Extended Events and SQL Server dumps
// produce (SQL 2022+ callstack_rva frames, module+offset lines, bare virtual
// addresses with sys.dm_os_loaded_modules base addresses, histogram target
// XML, SQLDump short stacks, already symbolised frames), merges stacks into a
// call tree so each distinct frame is resolved once, resolves frames through
// a Symbolizer the caller supplies, and classifies resolved frames with the
// module / category / operator badges of an embedded, overridable rule file.
//
// It is pure: it must not do I/O (no files, no network, no symbol
// downloads — pkg/symstore implements Symbolizer), and it takes call-stack
// text as strings so it does not depend on pkg/xe.
//
// Parsing is hand-written (a line tokenizer, with regular expressions for the
// XML wrappers) rather than encoding/xml because the inputs are rarely
// well-formed XML: frames arrive entity-escaped or not, inside CDATA or not,
// with line breaks inside attribute values and annotations between histogram
// documents (realdata/callstack); and because `symbols resolve` reads
// 100,000-frame inputs, where the tokenizer is several times faster than
// one big regular expression. A text line yields frames only when all its
// tokens are frames, so register dumps and base-address lines never do.
//
// Classification (rules.txt) is checked frame by frame against
// SQLCallStackResolver's symbolised outputs (testdata/resolved_*.txt);
// spinlock frames get their own category and, per stack, the category of
// the code that took them (AttributeSpinlocks).
package callstack

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ModuleKey identifies the PDB that describes a module build: PDB file name,
// GUID (registry form, upper case, dashed) and age (decimal, as the
// callstack_rva action prints it). Module is the module's short name
// (sqlmin, ntdll); it is informational and not part of the PDB identity.
type ModuleKey struct {
	Module string
	PDB    string
	GUID   string
	Age    uint32
}

// HasIdentity reports whether the key names a PDB precisely enough to fetch
// it: a PDB name, a non-zero GUID and an age above zero (the rule of
// Internals Viewer's resolver, docs/design/tracing.md §14.3).
func (k ModuleKey) HasIdentity() bool {
	return k.PDB != "" && k.GUID != "" && strings.Trim(k.GUID, "0-") != "" && k.Age > 0
}

func (k ModuleKey) String() string {
	if !k.HasIdentity() {
		return k.Module
	}
	return fmt.Sprintf("%s {%s} age %d", k.PDB, k.GUID, k.Age)
}

// Frame is one raw call-stack frame. Which fields are set depends on the
// input form; see the Has* flags.
type Frame struct {
	ID     int    // frame number given in the input, -1 when none
	Module string // module name as given (sqldk.dll, sqllang, KERNELBASE)
	PDB    string
	GUID   string // normalised: upper case, dashed; "" when unknown
	Age    uint32
	RVA    uint32
	// HasRVA is set when RVA is known (callstack_rva, module+offset, or an
	// address resolved through a module base).
	HasRVA     bool
	Address    uint64
	HasAddress bool
	// Symbol is set for frames that arrive already symbolised
	// (sqldk!SOS_Scheduler::UpdateWaitTimeStats+789); SymbolOffset is the
	// displacement printed with it.
	Symbol       string
	SymbolOffset uint64
}

// ModuleName is the module's short name: path, extension and case removed
// (C:\...\sqlmin.dll → sqlmin).
func (f Frame) ModuleName() string { return NormalizeModule(f.Module) }

// Key returns the PDB identity of the frame's module.
func (f Frame) Key() ModuleKey {
	return ModuleKey{Module: f.ModuleName(), PDB: f.PDB, GUID: f.GUID, Age: f.Age}
}

// String prints the frame in its most precise raw form.
func (f Frame) String() string {
	switch {
	case f.Symbol != "":
		return fmt.Sprintf("%s!%s+0x%x", f.ModuleName(), f.Symbol, f.SymbolOffset)
	case f.HasRVA:
		return fmt.Sprintf("%s+0x%x", f.ModuleName(), f.RVA)
	case f.Module != "" && f.HasAddress:
		return fmt.Sprintf("%s@0x%X", f.ModuleName(), f.Address)
	case f.HasAddress:
		return fmt.Sprintf("0x%016X", f.Address)
	}
	return f.ModuleName()
}

// NormalizeModule reduces a module path or name to its lower-case base name
// without .dll/.exe/.sys.
func NormalizeModule(m string) string {
	if isNormalModule(m) {
		return m
	}
	m = strings.TrimSpace(m)
	if i := strings.LastIndexAny(m, `\/`); i >= 0 {
		m = m[i+1:]
	}
	m = strings.ToLower(m)
	for _, ext := range []string{".dll", ".exe", ".sys"} {
		m = strings.TrimSuffix(m, ext)
	}
	return m
}

// isNormalModule reports whether m is already a normalised name: lower
// case, no path, no space, no file extension (no '.'): the common case, with
// no allocation.
func isNormalModule(m string) bool {
	if m == "" {
		return false
	}
	for i := 0; i < len(m); i++ {
		c := m[i]
		if c >= 'A' && c <= 'Z' || c == '.' || c == '\\' || c == '/' || c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			return false
		}
	}
	return true
}

// Stack is one call stack, innermost frame first (frame 00 is the function
// that fired the event). Count is the number of events it stands for: the
// histogram slot count, or 1.
type Stack struct {
	Frames []Frame
	Count  int64
	// Label is text that preceded the stack's histogram (an annotation), if any.
	Label string
}

// Symbol is a resolved name: the name-only form of the function
// (Class::Method) and the displacement of the address inside it.
type Symbol struct {
	Name   string
	Offset uint32
	// ID, when not 0, numbers the function uniquely within its module
	// build (pkg/symstore uses the PDB table index + 1); the Resolver then
	// caches the function's classification by number instead of by name.
	ID uint32
}

// Symbolizer resolves an RVA inside a module build to a symbol.
// pkg/symstore implements it with downloaded PDBs.
type Symbolizer interface {
	Lookup(ctx context.Context, module ModuleKey, rva uint32) (Symbol, error)
}

// ErrNoSymbol is returned (wrapped) by a Symbolizer when the PDB has no
// symbol at or before the address.
var ErrNoSymbol = errors.New("no symbol at this address")

// normalizeGUID returns the registry form, upper case, or "" for values
// that are not 32 hex digits (after dropping braces, dashes and whitespace).
func normalizeGUID(s string) string {
	var hex []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c >= 'A' && c <= 'F':
			hex = append(hex, c)
		case c >= 'a' && c <= 'f':
			hex = append(hex, c-'a'+'A')
		case c == '-' || c == '{' || c == '}' || c == ' ' || c == '\t' || c == '\r' || c == '\n':
		default:
			return ""
		}
	}
	if len(hex) != 32 {
		return ""
	}
	h := string(hex)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// parseHex parses a hexadecimal number with an optional 0x prefix and
// optional backtick separator (WinDbg's 00000001`00400000).
func parseHex(s string) (uint64, bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	s = strings.ReplaceAll(s, "`", "")
	if s == "" || len(s) > 16 {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 16, 64)
	return v, err == nil
}

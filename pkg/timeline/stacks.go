package timeline

import (
	"github.com/queryreplay/queryreplay/pkg/callstack"
)

// buildStacks parses each distinct call-stack text once (pkg/callstack,
// with the module bases and identities of Options.Stacks) into the trace's
// stack table, counting the events that carried each. A module's PDB
// identity or load base known from any stack fills the frames of the others
// (a callstack_rva frame without pdb/guid/age takes the module's last
// mapping, docs/design/symbols-and-xel.md §7).
func (b *Builder) buildStacks(tr *Trace) {
	if len(b.stackText) == 0 {
		return
	}
	counts := make([]int, len(b.stackText)+1)
	for i := range b.recs {
		counts[b.recs[i].stack]++
	}
	parsed := make([][]callstack.Frame, len(b.stackText))
	identity := map[string]callstack.ModuleKey{}
	for i, text := range b.stackText {
		stacks, err := callstack.Parse(text, b.opts.Stacks)
		if err != nil || len(stacks) == 0 {
			continue
		}
		parsed[i] = stacks[0].Frames
		for _, f := range parsed[i] {
			if k := f.Key(); k.HasIdentity() {
				identity[k.Module] = k
			}
		}
	}
	tr.Stacks = make([]Stack, len(b.stackText))
	unparsed := 0
	for i, frames := range parsed {
		s := Stack{ID: uint32(i + 1), Events: counts[i+1], Frames: make([]StackFrame, 0, len(frames))}
		if frames == nil {
			unparsed++
		}
		for _, f := range frames {
			k := f.Key()
			if !k.HasIdentity() {
				if known, ok := identity[k.Module]; ok && k.Module != "" {
					f.PDB, f.GUID, f.Age = known.PDB, known.GUID, known.Age
				}
			}
			s.Frames = append(s.Frames, StackFrame{Module: f.ModuleName(), RVA: f.RVA, HasRVA: f.HasRVA, Address: f.Address,
				PDB: f.PDB, GUID: f.GUID, Age: f.Age, Symbol: f.Symbol, Offset: f.SymbolOffset})
		}
		tr.Stacks[i] = s
	}
	if unparsed > 0 {
		b.notes = append(b.notes, plural(unparsed, "call stack")+" could not be parsed and have no frames")
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return itoa(n) + " " + what + "s"
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// StackByID returns the stack with the given id, nil for 0 or an unknown id.
func (t *Trace) StackByID(id uint32) *Stack {
	if id == 0 || int(id) > len(t.Stacks) || t.Stacks[id-1].ID != id {
		return nil
	}
	return &t.Stacks[id-1]
}

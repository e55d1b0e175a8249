package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/callstack"
	"github.com/queryreplay/queryreplay/pkg/pdb"
	"github.com/queryreplay/queryreplay/pkg/symstore"
)

// symbolsResolveArgs are the flags of "symbols resolve".
type symbolsResolveArgs struct {
	pdbFile  string
	cache    string
	servers  []string
	offline  bool
	frames   string
	bases    string
	modinfo  string
	rules    string
	pdbName  string
	guid     string
	age      uint32
	rvaTexts []string
}

func init() {
	commands = append(commands, func(c *cli) {
		sym := c.app.Command("symbols", "Call-stack symbol tools.")

		var ra symbolsResolveArgs
		resolve := sym.Command("resolve", "Resolve RVAs or call-stack frames to module!Class::Method.").
			Help("Resolve RVAs or call-stack frames to module!Class::Method.\n\n" +
				"Prints one tab-separated line per RVA or frame: module!symbol+0xoffset, module badge, " +
				"category, \"infra\" or \"-\" (infrastructure frame), and the plan-operator badge or \"-\". " +
				"Frames that cannot be resolved print as module+0xrva; the command exits 1 when no frame " +
				"resolved. A spinlock frame's category names the code that took it: \"Spinlock (Locking)\". " +
				"With several stacks (one per histogram slot, event or blank-line-separated block), a blank line " +
				"separates them. Use of the Microsoft symbol server is covered by the Microsoft Symbol " +
				"Server license terms.")
		resolve.Flag("pdb", "Resolve against this PDB file: frames of its module only (sqlmin.pdb resolves sqlmin frames; others are reported and left unresolved).").StringVar(&ra.pdbFile)
		resolve.Flag("cache", "Symbol cache directory (symbol-store layout). Default: from _NT_SYMBOL_PATH, else the user cache directory.").StringVar(&ra.cache)
		resolve.Flag("server", "Symbol server URL or store directory; repeatable. Default: from _NT_SYMBOL_PATH, else "+symstore.MicrosoftServer+".").StringsVar(&ra.servers)
		resolve.Flag("offline", "Use the cache only; never download.").BoolVar(&ra.offline)
		resolve.Flag("frames", "File of call-stack text (any form: callstack_rva frames, module+offset, histogram XML, SQLDump, addresses); - for stdin.").StringVar(&ra.frames)
		resolve.Flag("bases", "sys.dm_os_loaded_modules output (name, base_address) for address-only stacks.").StringVar(&ra.bases)
		resolve.Flag("modinfo", "CSV module lines (\"ntdll.dll\",…,\"ntdll.pdb\",\"{GUID}\",0,age) giving module+offset frames their PDB identity.").StringVar(&ra.modinfo)
		resolve.Flag("rules", "Classification override file (rules.txt format), applied after the built-in rules.").StringVar(&ra.rules)
		resolve.Flag("pdb-name", "For RVA arguments with a symbol store: the PDB name (sqlmin.pdb).").StringVar(&ra.pdbName)
		resolve.Flag("guid", "For RVA arguments with a symbol store: the PDB GUID.").StringVar(&ra.guid)
		resolve.Flag("age", "For RVA arguments with a symbol store: the PDB age (decimal).").Uint32Var(&ra.age)
		resolve.Arg("rva", "RVAs (hex, 0x optional).").StringsVar(&ra.rvaTexts)
		c.register(resolve, func(ctx context.Context, e *env) error { return runSymbolsResolve(ctx, e, &ra) })

		var infoFile string
		info := sym.Command("pdb-info", "Print a PDB's GUID, age, sections and symbol counts.")
		info.Arg("file", "PDB file.").Required().StringVar(&infoFile)
		c.register(info, func(ctx context.Context, e *env) error { return runPDBInfo(e, infoFile) })
	})
}

func runSymbolsResolve(ctx context.Context, e *env, a *symbolsResolveArgs) error {
	// A short batch job over a few tens of MB: fewer, later collections
	// (GOGC 400 rather than 100) cost some memory and save time, most of
	// all on a busy machine. A GOGC set in the environment is respected.
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	if (a.frames == "") == (len(a.rvaTexts) == 0) {
		return withStatus(2, errors.New("give either RVA arguments or --frames FILE"))
	}
	if a.pdbFile != "" && (a.cache != "" || len(a.servers) > 0 || a.offline) {
		return withStatus(2, errors.New("--pdb cannot be combined with --cache, --server or --offline"))
	}
	rvas := make([]uint32, 0, len(a.rvaTexts))
	for _, t := range a.rvaTexts {
		v, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(t, "0x"), "0X"), 16, 32)
		if err != nil {
			return withStatus(2, fmt.Errorf("RVA %q: want a hex number below 2^32", t))
		}
		rvas = append(rvas, uint32(v))
	}
	if len(rvas) > 0 && a.pdbFile == "" && (a.pdbName == "" || a.guid == "" || a.age == 0) {
		return withStatus(2, errors.New("RVA arguments need --pdb FILE, or --pdb-name, --guid and --age with a symbol store"))
	}
	classifier := callstack.DefaultClassifier()
	if a.rules != "" {
		text, err := readInput(e, a.rules)
		if err != nil {
			return err
		}
		if classifier, err = callstack.ParseRules(text, classifier); err != nil {
			return withStatus(2, fmt.Errorf("%s: %w", a.rules, err))
		}
	}
	// Opening a PDB and parsing the input are independent: with two cores,
	// one need not wait for the other.
	type opened struct {
		sym callstack.Symbolizer
		err error
	}
	symDone := make(chan opened, 1)
	go func() {
		sym, err := newSymbolizer(e, a)
		symDone <- opened{sym, err}
	}()
	stacks, err := inputStacks(e, a, rvas)
	o := <-symDone
	if o.err != nil {
		return o.err
	}
	if err != nil {
		return err
	}
	resolver := &callstack.Resolver{Symbolizer: o.sym, Classifier: classifier}
	return printResolved(ctx, e, resolver, stacks, a.pdbFile)
}

// inputStacks reads the stacks of --frames, or makes one of the RVA
// arguments.
func inputStacks(e *env, a *symbolsResolveArgs, rvas []uint32) ([]callstack.Stack, error) {
	if a.frames != "" {
		return readStacks(e, a)
	}
	module := callstack.ModuleKey{PDB: a.pdbName, GUID: a.guid, Age: a.age}
	switch {
	case a.pdbFile != "":
		module.Module = callstack.NormalizeModule(strings.TrimSuffix(filepath.Base(a.pdbFile), filepath.Ext(a.pdbFile)))
	case a.pdbName != "":
		module.Module = callstack.NormalizeModule(strings.TrimSuffix(a.pdbName, filepath.Ext(a.pdbName)))
	}
	if a.guid != "" {
		g, err := pdb.ParseGUID(a.guid)
		if err != nil {
			return nil, withStatus(2, err)
		}
		module.GUID = g.String()
	}
	var frames []callstack.Frame
	for _, v := range rvas {
		frames = append(frames, callstack.Frame{ID: -1, Module: module.Module, PDB: module.PDB, GUID: module.GUID, Age: module.Age, RVA: v, HasRVA: true})
	}
	return []callstack.Stack{{Frames: frames, Count: 1}}, nil
}

// printResolved resolves and prints every stack, warns about unresolved
// frames by reason, and fails when no frame resolved at all.
func printResolved(ctx context.Context, e *env, resolver *callstack.Resolver, stacks []callstack.Stack, pdbFile string) error {
	w := bufio.NewWriterSize(e.stdout, 64<<10)
	reasons := map[string]int{}
	otherModules := map[string]int{}
	frames, resolved := 0, 0
	var res []callstack.Resolved
	var scratch []byte
	for i, s := range stacks {
		if i > 0 {
			w.WriteByte('\n')
		}
		res = slices.Grow(res[:0], len(s.Frames))[:len(s.Frames)]
		for i, f := range s.Frames {
			if err := resolver.ResolveInto(ctx, f, &res[i]); err != nil {
				return err
			}
		}
		callstack.AttributeSpinlocks(res)
		for i := range res {
			r := &res[i]
			frames++
			switch {
			case r.Symbol != "":
				resolved++
			case errors.Is(r.Err, symstore.ErrOtherModule):
				otherModules[r.Module]++
			case r.Err != nil:
				reasons[r.Err.Error()]++
			}
			scratch = writeResolved(w, r, scratch)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, m := range sortedKeys(otherModules) {
		e.log.Warn("frames not resolved: their module is not the --pdb file's", "module", m, "frames", otherModules[m], "pdb", filepath.Base(pdbFile))
	}
	for _, k := range sortedKeys(reasons) {
		e.log.Warn("unresolved frames", "count", reasons[k], "reason", k)
	}
	if resolved == 0 {
		return fmt.Errorf("no frame resolved (%d frames; see the warnings above)", frames)
	}
	return nil
}

// writeResolved prints one frame: module!symbol+0xoffset (or module+0xrva),
// module badge, category (with a spinlock's owner), infra, operator badge.
func writeResolved(w *bufio.Writer, r *callstack.Resolved, scratch []byte) []byte {
	scratch = r.AppendText(scratch[:0])
	w.Write(scratch)
	w.WriteByte('\t')
	w.WriteString(r.Class.ModuleBadge)
	w.WriteByte('\t')
	w.WriteString(r.Class.CategoryDisplay)
	if r.Owner != "" {
		w.WriteString(" (")
		w.WriteString(r.OwnerDisplay)
		w.WriteByte(')')
	}
	if r.Class.Infrastructure {
		w.WriteString("\tinfra\t")
	} else {
		w.WriteString("\t-\t")
	}
	if r.Class.OperatorBadge != "" {
		w.WriteString(r.Class.OperatorBadge)
	} else {
		w.WriteByte('-')
	}
	w.WriteByte('\n')
	return scratch
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func newSymbolizer(e *env, a *symbolsResolveArgs) (callstack.Symbolizer, error) {
	if a.pdbFile != "" {
		r, err := symstore.NewFileResolver(a.pdbFile, symstore.ResolverOptions{})
		if err != nil {
			return nil, err
		}
		return r, nil
	}
	cache, servers := a.cache, a.servers
	if p := os.Getenv("_NT_SYMBOL_PATH"); p != "" {
		pc, ps := symstore.ParseSymbolPath(p)
		if cache == "" {
			cache = pc
		}
		if len(servers) == 0 {
			servers = ps
		}
	}
	if len(servers) == 0 && !a.offline {
		servers = []string{symstore.MicrosoftServer}
	}
	store, err := symstore.New(symstore.Config{Servers: servers, CacheDir: cache, Offline: a.offline, Logger: e.log})
	if err != nil {
		return nil, err
	}
	e.log.Debug("symbol store", "cache", store.CacheDir(), "servers", servers, "offline", a.offline)
	return symstore.NewResolver(store, symstore.ResolverOptions{})
}

func readStacks(e *env, a *symbolsResolveArgs) ([]callstack.Stack, error) {
	text, err := readInput(e, a.frames)
	if err != nil {
		return nil, err
	}
	opts := callstack.ParseOptions{Identities: callstack.ParseModuleInfo(text)}
	if a.modinfo != "" {
		mi, err := readInput(e, a.modinfo)
		if err != nil {
			return nil, err
		}
		for k, v := range callstack.ParseModuleInfo(mi) {
			opts.Identities[k] = v
		}
	}
	if a.bases != "" {
		bt, err := readInput(e, a.bases)
		if err != nil {
			return nil, err
		}
		if opts.Bases, err = callstack.ParseBaseAddresses(bt); err != nil {
			return nil, withStatus(2, fmt.Errorf("%s: %w", a.bases, err))
		}
	}
	stacks, err := callstack.Parse(text, opts)
	if err != nil {
		return nil, withStatus(2, fmt.Errorf("%s: %w", a.frames, err))
	}
	if len(stacks) == 0 {
		return nil, withStatus(2, fmt.Errorf("%s: no call-stack frames found", a.frames))
	}
	return stacks, nil
}

// readInput reads a file (or stdin for "-") and decodes UTF-16/UTF-8.
func readInput(e *env, name string) (string, error) {
	var b []byte
	var err error
	if name == "-" {
		b, err = io.ReadAll(io.LimitReader(e.stdin, 256<<20))
	} else {
		b, err = os.ReadFile(name)
	}
	if err != nil {
		return "", err
	}
	return callstack.DecodeText(b), nil
}

func runPDBInfo(e *env, name string) error {
	f, err := pdb.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	pubs, procRefs, data, err := f.GlobalCounts()
	if err != nil {
		return err
	}
	procs, err := f.Procedures()
	if err != nil {
		return err
	}
	table, err := f.Table()
	if err != nil {
		return err
	}
	w := e.stdout
	fmt.Fprintf(w, "file\t%s\n", name)
	fmt.Fprintf(w, "guid\t{%s}\n", f.GUID)
	fmt.Fprintf(w, "age\t%d\n", f.Age)
	fmt.Fprintf(w, "info-age\t%d\n", f.InfoAge)
	fmt.Fprintf(w, "symbol-server-key\t%s\n", f.SymbolServerKey())
	fmt.Fprintf(w, "machine\t%#x\n", f.Machine)
	fmt.Fprintf(w, "modules\t%d\n", len(f.Modules))
	fmt.Fprintf(w, "publics\t%d\n", pubs)
	fmt.Fprintf(w, "procedures\t%d\n", len(procs))
	fmt.Fprintf(w, "procedure-refs\t%d\n", procRefs)
	fmt.Fprintf(w, "data-symbols\t%d\n", data)
	fmt.Fprintf(w, "code-symbols\t%d\n", table.Len())
	fmt.Fprintf(w, "sections\t%d\n", len(f.Sections))
	for i, s := range f.Sections {
		fmt.Fprintf(w, "section\t%d\t%s\tva=%#x\tsize=%#x\tflags=%#08x\n", i+1, s.Name, s.VirtualAddress, s.VirtualSize, s.Characteristics)
	}
	return nil
}

package tracer

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/callstack"
	"github.com/queryreplay/queryreplay/pkg/symstore"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// DefaultSymbolTimeout bounds symbol downloads and resolution after a
// trace when Options.SymbolTimeout is 0.
const DefaultSymbolTimeout = 2 * time.Minute

// maxSymbolErrors bounds Resolution.SymbolErrors.
const maxSymbolErrors = 20

// sqlLoadedModules reads the modules' load addresses, which turn the raw
// addresses of package0.callstack into module+RVA (docs/design/symbols-and-xel.md §8;
// .rll files are resources, never code):
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-os-loaded-modules-transact-sql
// (VIEW SERVER STATE; VIEW SERVER PERFORMANCE STATE from SQL Server 2022).
const sqlLoadedModules = "SELECT name, base_address FROM sys.dm_os_loaded_modules WHERE name NOT LIKE N'%.rll'"

// stackParseOptions are what the timeline needs to parse the events' call
// stacks: module bases for raw addresses (only package0.callstack has
// them; callstack_rva frames carry module, RVA and PDB identity) and the
// PDB identities Options.ModuleIdentities gives.
func (r *run) stackParseOptions(ctx context.Context, rva bool, res *bundle.Resolution) callstack.ParseOptions {
	opts := callstack.ParseOptions{Identities: r.o.ModuleIdentities}
	if !r.o.CallStacks || rva {
		return opts
	}
	bases, err := r.moduleBases(ctx)
	if err != nil {
		res.SymbolErrors = append(res.SymbolErrors, "module base addresses (sys.dm_os_loaded_modules): "+err.Error()+"; raw call-stack addresses stay unresolved")
		return opts
	}
	opts.Bases = bases
	return opts
}

func (r *run) moduleBases(ctx context.Context) (*callstack.ModuleBases, error) {
	rows, err := r.conn.QueryContext(ctx, r.spec.Marker()+sqlLoadedModules)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var name sql.NullString
		var base []byte
		if err := rows.Scan(&name, &base); err != nil {
			return nil, err
		}
		if len(base) == 0 || len(base) > 8 || !name.Valid {
			continue
		}
		var buf [8]byte
		copy(buf[8-len(base):], base) // varbinary(8), big-endian as SQL Server prints it
		fmt.Fprintf(&b, "%s\t0x%016X\n", name.String, binary.BigEndian.Uint64(buf[:]))
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return callstack.ParseBaseAddresses(b.String())
}

// symbolStore opens the symbol store the options configure, or returns
// nil when none is: without symbol servers nothing is downloaded (a
// cache directory alone is read offline), and without either the frames
// stay module+RVA.
func (o Options) symbolStore() (*symstore.Store, error) {
	if len(o.SymbolServers) == 0 && o.SymbolCacheDir == "" {
		return nil, nil
	}
	cache := o.SymbolCacheDir
	if cache == "" {
		d, err := symstore.DefaultCacheDir()
		if err != nil {
			return nil, err
		}
		cache = d
	}
	return symstore.New(symstore.Config{Servers: o.SymbolServers, CacheDir: cache, Offline: len(o.SymbolServers) == 0, Retries: 2})
}

// resolveStacks names the frames of the trace's stack table through the
// symbol store, within Options.SymbolTimeout. Each distinct frame is
// looked up once; what cannot be resolved keeps its module+RVA and says
// why (per module, in Resolution.SymbolErrors). It never fails the trace.
func (r *run) resolveStacks(ctx context.Context, tr *timeline.Trace, res *bundle.Resolution) {
	if tr == nil || len(tr.Stacks) == 0 {
		return
	}
	res.Stacks = len(tr.Stacks)
	store, err := r.o.symbolStore()
	if err != nil {
		res.SymbolErrors = append(res.SymbolErrors, "symbol store: "+err.Error())
		return
	}
	var sym callstack.Symbolizer
	if store != nil {
		sr, err := symstore.NewResolver(store, symstore.ResolverOptions{})
		if err != nil {
			res.SymbolErrors = append(res.SymbolErrors, "symbol store: "+err.Error())
			return
		}
		sym = sr
	}
	timeout := r.o.SymbolTimeout
	if timeout <= 0 {
		timeout = DefaultSymbolTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resolver := &callstack.Resolver{Symbolizer: sym, Classifier: callstack.DefaultClassifier()}
	why := map[string]string{} // module → first reason
	for si := range tr.Stacks {
		for fi := range tr.Stacks[si].Frames {
			f := &tr.Stacks[si].Frames[fi]
			res.StackFrames++
			if f.Symbol != "" {
				res.FramesResolved++
				continue
			}
			got, err := resolver.Resolve(ctx, callstack.Frame{Module: f.Module, PDB: f.PDB, GUID: f.GUID, Age: f.Age,
				RVA: f.RVA, HasRVA: f.HasRVA, Address: f.Address, HasAddress: f.Address != 0})
			switch {
			case err != nil:
				f.Unresolved = "symbol resolution stopped: " + err.Error()
			case got.Symbol != "":
				f.Symbol, f.Offset = got.Symbol, got.Offset
				res.FramesResolved++
				continue
			default:
				f.Unresolved = unresolvedReason(got.Err, store == nil)
			}
			module := f.Module
			if module == "" {
				module = "(no module)"
			}
			if _, ok := why[module]; !ok {
				why[module] = f.Unresolved
			}
		}
	}
	modules := make([]string, 0, len(why))
	for m := range why {
		modules = append(modules, m)
	}
	sort.Strings(modules)
	for _, m := range modules {
		if len(res.SymbolErrors) >= maxSymbolErrors {
			res.SymbolErrors = append(res.SymbolErrors, fmt.Sprintf("… and %d more modules", len(modules)-maxSymbolErrors))
			break
		}
		res.SymbolErrors = append(res.SymbolErrors, m+": "+why[m])
	}
}

// unresolvedReason words why a frame has no symbol.
func unresolvedReason(err error, noStore bool) string {
	switch {
	case errors.Is(err, callstack.ErrNoModule):
		return "a bare address in no known module (no base address from sys.dm_os_loaded_modules)"
	case errors.Is(err, callstack.ErrNoRVA):
		return "no RVA"
	case noStore:
		return "no symbol server or cache configured"
	case errors.Is(err, symstore.ErrNoIdentity):
		return "no PDB identity (package0.callstack carries none before SQL Server 2022: give the modules' identities)"
	case errors.Is(err, symstore.ErrNotFound):
		return "PDB not found on the symbol servers: " + err.Error()
	case err != nil:
		return err.Error()
	}
	return "no symbol"
}

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/callstack"
	"github.com/queryreplay/queryreplay/pkg/symstore"
	"github.com/queryreplay/queryreplay/pkg/tracer"
	"github.com/queryreplay/queryreplay/pkg/tsql"
)

type traceArgs struct {
	dsn              string
	sql              string
	file             string
	maxBatchBytes    int64
	output           string
	database         string
	clearBufferPool  bool
	allowClear       bool
	disableReadAhead bool
	modifications    string
	locks, waits     bool
	memory, splits   bool
	log, fileIO      bool
	callStacks       bool
	symbolServers    []string
	symbolCache      string
	symbolTimeout    time.Duration
	modinfo          string
	maxPageHeaders   int
	pageAllocations  bool
	timeout          time.Duration
	maxEvents        int
	maxFileSizeMB    int
	maxLockRows      int
	maxLockScanPages int
	traceDir         string
	grace            time.Duration
	quiet            bool
	readBack         string
	blockerInterval  time.Duration
	blockerSQL       bool
	live             bool
}

// Exit statuses of trace beyond 0 (traced), 1 (failed) and 2 (usage).
const (
	// exitRefused: refused before it ran (a statement outside the
	// allowlist, a missing permission, the policy, the edition).
	exitRefused = 3
	// exitTransactionEnded: the batch ended or replaced QueryReplay's
	// transaction; what it changed before that may be permanent.
	exitTransactionEnded = 4
)

func init() {
	commands = append(commands, func(c *cli) {
		cmd := c.app.Command("trace", "Run a query inside a private Extended Events session and rebuild its timeline.\n\n"+
			"The batch runs inside a transaction that is verified and always rolled back; see docs/security.md.\n\n"+
			"Exit status: 0 traced, 1 failed, 2 usage, 3 refused (the reason is printed), "+
			"4 the batch ended QueryReplay's transaction (its changes may be permanent).")
		a := &traceArgs{}
		cmd.Flag("dsn", "go-mssqldb connection string (sqlserver://user:pass@host?database=db). Default: $QUERYREPLAY_DSN (prefer it: a command line is visible to other users).").Envar("QUERYREPLAY_DSN").Required().StringVar(&a.dsn)
		cmd.Flag("sql", "The batch to trace.").StringVar(&a.sql)
		cmd.Flag("file", "Read the batch from a file (- for standard input): UTF-8, or UTF-16 with a byte-order mark.").StringVar(&a.file)
		cmd.Flag("max-batch-bytes", "Largest --file (or standard input) read, in bytes; the classifier refuses batches over tsql.MaxBatchBytes whatever this says.").Default(fmt.Sprint(tsql.MaxBatchBytes)).Int64Var(&a.maxBatchBytes)
		cmd.Flag("output", "Write the trace bundle here (JSON; gzip when the name ends in .gz).").Short('o').StringVar(&a.output)
		cmd.Flag("database", "Run the query in this database.").StringVar(&a.database)
		cmd.Flag("clear-buffer-pool", "CHECKPOINT + DBCC DROPCLEANBUFFERS first (instance-wide; needs --allow-clear-buffer-pool).").BoolVar(&a.clearBufferPool)
		cmd.Flag("allow-clear-buffer-pool", "Policy: allow clearing the buffer pool (test servers only).").BoolVar(&a.allowClear)
		cmd.Flag("disable-read-ahead", "Trace flag 652 for the session (always turned off afterwards).").BoolVar(&a.disableReadAhead)
		cmd.Flag("modifications", "Policy for INSERT/UPDATE/DELETE/MERGE/SELECT INTO: rollback (traced, always rolled back) or refuse.").Default("rollback").EnumVar(&a.modifications, "rollback", "refuse")
		cmd.Flag("locks", "Trace lock events.").Default("true").BoolVar(&a.locks)
		cmd.Flag("waits", "Trace wait events.").Default("true").BoolVar(&a.waits)
		cmd.Flag("memory", "Trace memory grant and spill events.").Default("true").BoolVar(&a.memory)
		cmd.Flag("splits", "Trace page splits.").Default("true").BoolVar(&a.splits)
		cmd.Flag("log", "Trace log flushes.").Default("true").BoolVar(&a.log)
		cmd.Flag("file-io", "Trace file reads and writes.").Default("true").BoolVar(&a.fileIO)
		cmd.Flag("callstacks", "Add call stacks to storage events (bigger traces).").BoolVar(&a.callStacks)
		cmd.Flag("symbol-server", "Symbol server URL (or symbol-store directory) to download the call stacks' PDBs from after the run; repeatable. None: nothing is downloaded (see docs/security.md). "+
			"Use of the Microsoft symbol server ("+symstore.MicrosoftServer+") is covered by the Microsoft Symbol Server license terms.").StringsVar(&a.symbolServers)
		cmd.Flag("symbol-cache", "Symbol cache directory (symbol-store layout; default: the user cache directory). Alone, it is read offline.").StringVar(&a.symbolCache)
		cmd.Flag("symbol-timeout", "Bound symbol downloads and resolution after the run; what is not resolved by then stays module+RVA.").Default(tracer.DefaultSymbolTimeout.String()).DurationVar(&a.symbolTimeout)
		cmd.Flag("modinfo", "CSV module lines (\"sqlmin.dll\",…,\"sqlmin.pdb\",\"{GUID}\",0,age) giving the PDB identity of modules whose frames carry none (package0.callstack before SQL Server 2022).").StringVar(&a.modinfo)
		cmd.Flag("max-page-headers", "Read the headers (type, B-tree level, previous/next) of at most this many touched pages (-1: none).").Default(fmt.Sprint(tracer.DefaultMaxPageHeaders)).IntVar(&a.maxPageHeaders)
		cmd.Flag("page-allocations-dmv", "Before SQL Server 2019 (no sys.dm_db_page_info), name pages and read their headers from the undocumented sys.dm_db_database_page_allocations, which walks every allocation of the database (slow on a large one).").BoolVar(&a.pageAllocations)
		cmd.Flag("timeout", "Stop the batch after this long: the session is stopped at once and the traced session killed; cleanup always runs.").Default(tracer.DefaultTimeout.String()).DurationVar(&a.timeout)
		cmd.Flag("max-events", "Read at most this many events; the rest is reported as truncated.").Default(fmt.Sprint(tracer.DefaultMaxEvents)).IntVar(&a.maxEvents)
		cmd.Flag("max-file-size", "Maximum trace file size on the server, MB; losses are reported.").Default(fmt.Sprint(tracer.DefaultMaxFileSizeMB)).IntVar(&a.maxFileSizeMB)
		cmd.Flag("max-lock-rows", "Resolve at most this many key locks to rows (each 2,000 cost a scan of their index; -1: none).").Default(fmt.Sprint(tracer.DefaultMaxLockRows)).IntVar(&a.maxLockRows)
		cmd.Flag("max-lock-scan-pages", "Resolve key locks to rows only in indexes of at most this many 8 KB pages (a lookup scans the whole index; -1: no bound).").Default(fmt.Sprint(tracer.DefaultMaxLockScanPages)).IntVar(&a.maxLockScanPages)
		cmd.Flag("trace-dir", "Server directory for the event file (default: the error log's directory).").StringVar(&a.traceDir)
		cmd.Flag("orphan-grace", "Drop leftover queryreplay_* sessions that name no owner once older than this (a session whose owner connection is gone is dropped at once).").Default(tracer.DefaultGracePeriod.String()).DurationVar(&a.grace)
		cmd.Flag("quiet", "No progress on standard error.").Short('q').BoolVar(&a.quiet)
		cmd.Flag("read-back", "How to read the event file: auto (the binary .xel over OPENROWSET BULK when the login may, else XML), xml or binary.").Default("auto").EnumVar(&a.readBack, "auto", "xml", "binary")
		cmd.Flag("blocker-interval", "While the batch runs, read sys.dm_exec_requests this often to name the session blocking it (needs VIEW SERVER STATE; 0: never).").Default(tracer.DefaultBlockerInterval.String()).DurationVar(&a.blockerInterval)
		cmd.Flag("blocker-statements", "Also keep each blocking session's last batch (sys.dm_exec_input_buffer) in the bundle: another user's SQL, off by default.").BoolVar(&a.blockerSQL)
		cmd.Flag("live", "While the batch runs, show each operator's progress (state, rows so far against the estimate, reads, elapsed) and the waits so far, about once a second (redrawn on a terminal, plain lines otherwise; see docs/live.md); then print the replay.").BoolVar(&a.live)
		c.register(cmd, func(ctx context.Context, e *env) error { return runTrace(ctx, e, a) })
	})
}

func runTrace(ctx context.Context, e *env, a *traceArgs) error {
	text, err := traceSQL(e, a)
	if err != nil {
		return withStatus(2, err)
	}
	policy := tracer.Policy{AllowClearBufferPool: a.allowClear}
	if a.modifications == "refuse" {
		policy.Modifications = tracer.ModificationsRefuse
	}
	o := tracer.Options{
		SQL: text, Database: a.database, ClearBufferPool: a.clearBufferPool, DisableReadAhead: a.disableReadAhead,
		Events:     bundle.EventGroups{Locks: a.locks, Waits: a.waits, Memory: a.memory, Splits: a.splits, Log: a.log, FileIO: a.fileIO},
		CallStacks: a.callStacks, Timeout: a.timeout, MaxEvents: a.maxEvents, MaxFileSizeMB: a.maxFileSizeMB, MaxLockRows: a.maxLockRows, MaxLockScanPages: a.maxLockScanPages,
		TraceDirectory: a.traceDir, GracePeriod: a.grace,
		SymbolServers: a.symbolServers, SymbolCacheDir: a.symbolCache, SymbolTimeout: a.symbolTimeout,
		MaxPageHeaders: a.maxPageHeaders, UndocumentedPageAllocations: a.pageAllocations,
		BlockerInterval: a.blockerInterval, BlockerStatements: a.blockerSQL,
	}
	if a.blockerInterval <= 0 {
		o.BlockerInterval = -1 // the flag's 0 means never; the option's 0 means the default
	}
	if a.modinfo != "" {
		mi, err := readInput(e, a.modinfo)
		if err != nil {
			return withStatus(2, err)
		}
		if o.ModuleIdentities = callstack.ParseModuleInfo(mi); len(o.ModuleIdentities) == 0 {
			return withStatus(2, fmt.Errorf("--modinfo %s: no module lines (\"name.dll\",…,\"name.pdb\",\"{GUID}\",0,age)", a.modinfo))
		}
	}
	if o.ReadBack, err = tracer.ParseReadBack(a.readBack); err != nil {
		return withStatus(2, err)
	}
	var (
		mu       sync.Mutex
		lastShow time.Time
	)
	if !a.quiet {
		// Progress only on long runs: a report once the trace has taken two
		// seconds, then at most once a second. Counts only, never query text.
		o.Progress = func(p tracer.Progress) {
			mu.Lock()
			defer mu.Unlock()
			if p.Elapsed < 2*time.Second || time.Since(lastShow) < time.Second {
				return
			}
			lastShow = time.Now()
			fmt.Fprintf(e.stderr, "trace: %s, %s elapsed, %d rows", p.Step, p.Elapsed.Round(100*time.Millisecond), p.Rows)
			if p.Events > 0 {
				fmt.Fprintf(e.stderr, ", %d events", p.Events)
			}
			fmt.Fprintln(e.stderr)
		}
	}
	if a.live {
		o.Live = newLiveView(e.stdout).update
	}
	if _, err := o.Validate(policy); err != nil {
		return traceFailure(e, err)
	}
	opener, err := tracer.NewDSNOpener(a.dsn)
	if err != nil {
		return withStatus(2, err)
	}
	tr := tracer.New(opener, policy, e.log)
	b, terr := tr.Trace(ctx, o)
	if b == nil {
		return traceFailure(e, terr)
	}
	out := bufio.NewWriter(e.stdout)
	writeTraceSummary(out, b)
	writeTraceFindings(out, b)
	if err := out.Flush(); err != nil {
		return errors.Join(traceFailure(e, terr), fmt.Errorf("write output: %w", err))
	}
	if a.output != "" {
		// also when the transaction ended: the bundle is the evidence
		if err := bundle.Save(a.output, b); err != nil {
			return errors.Join(traceFailure(e, terr), err)
		}
		fmt.Fprintf(e.stderr, "trace bundle written to %s\n", a.output)
	}
	return traceFailure(e, terr)
}

// traceFailure maps a refusal and an ended transaction to their own exit
// statuses; the ended transaction is announced loudly.
func traceFailure(e *env, err error) error {
	if err == nil {
		return nil
	}
	var re *tsql.RefusedError
	var ended *tracer.TransactionEndedError
	switch {
	case errors.As(err, &ended):
		fmt.Fprintln(e.stderr, "!!! QueryReplay could not roll the batch back: "+ended.Error()+" !!!")
		return withStatus(exitTransactionEnded, err)
	case errors.As(err, &re):
		return withStatus(exitRefused, err)
	}
	return withStatus(1, err)
}

// traceSQL reads the batch from --sql or --file (exactly one). A file is
// read up to --max-batch-bytes and decoded by tsql.DecodeBatch (a
// byte-order mark, UTF-16).
func traceSQL(e *env, a *traceArgs) (string, error) {
	switch {
	case a.sql != "" && a.file != "":
		return "", errors.New("give either --sql or --file, not both")
	case a.sql != "":
		return a.sql, nil
	case a.file == "-":
		return readBatch(e.stdin, "standard input", a.maxBatchBytes)
	case a.file != "":
		f, err := os.Open(a.file)
		if err != nil {
			return "", err
		}
		defer f.Close()
		return readBatch(f, a.file, a.maxBatchBytes)
	}
	return "", errors.New("give the batch to trace with --sql or --file")
}

// readBatch reads at most limit bytes of a batch and decodes it.
func readBatch(r io.Reader, name string, limit int64) (string, error) {
	if limit <= 0 {
		return "", fmt.Errorf("--max-batch-bytes must be positive (got %d)", limit)
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(b)) > limit {
		return "", fmt.Errorf("%s is larger than %d bytes, the limit set by --max-batch-bytes", name, limit)
	}
	sql, err := tsql.DecodeBatch(b)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return sql, nil
}

// writeTraceSummary prints rows, duration, reads, locks, waits, spills and the
// per-operator table.
func writeTraceSummary(w io.Writer, b *bundle.Bundle) {
	r := b.Result
	var rows int64
	for _, n := range r.Rows {
		rows += n
	}
	fmt.Fprintf(w, "Session %s on SQL Server %s (spid %d, database %s)\n", b.Run.Session, b.Server.ProductVersion, b.Server.SPID, b.Server.Database)
	if b.Run.ReadBack != "" {
		fmt.Fprintf(w, "Read back: %s", b.Run.ReadBack)
		if b.Run.ReadBackFallback != "" {
			fmt.Fprintf(w, " (binary not used: %s)", b.Run.ReadBackFallback)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "Rows: %d in %d result set(s)   Duration: %.3f ms", rows, len(r.Rows), float64(r.DurationUs)/1000)
	if b.Run.Modification {
		fmt.Fprintf(w, "   Modification rolled back: %v (%d log records)", r.RolledBack, len(r.LogRecords))
	} else if !r.RolledBack {
		fmt.Fprint(w, "   Rolled back: false")
	}
	fmt.Fprintln(w)
	if b.Trace == nil {
		fmt.Fprintln(w, "No timeline.")
		return
	}
	l := b.Trace.Lanes
	spills := 0
	for _, m := range l.Memory {
		if m.Spill {
			spills++
		}
	}
	waits := map[string]int{}
	for _, wt := range l.Wait {
		waits[wt.WaitType]++
	}
	types := make([]string, 0, len(waits))
	for k := range waits {
		types = append(types, k)
	}
	sort.Strings(types)
	var wl []string
	for _, k := range types {
		wl = append(wl, fmt.Sprintf("%s %d", k, waits[k]))
	}
	fmt.Fprintf(w, "Events: %d (lost %d, dropped %d)   Reads: %d   Locks: %d   Waits: %d", r.Events, r.Lost, r.DroppedEvents, len(l.Read), len(l.Lock), len(l.Wait))
	if len(wl) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(wl, ", "))
	}
	fmt.Fprintf(w, "   Spills: %d\n", spills)
	res := r.Resolution
	fmt.Fprintf(w, "Resolved: %d/%d pages, %d/%d HoBTs, %d/%d key locks\n", res.PagesNamed, res.Pages, res.HoBTsNamed, res.HoBTs, res.KeyLocksRows, res.KeyLocks)
	if res.Stacks > 0 {
		fmt.Fprintf(w, "Call stacks: %d distinct, %d/%d frames resolved to symbols\n", res.Stacks, res.FramesResolved, res.StackFrames)
		for _, e := range res.SymbolErrors {
			fmt.Fprintf(w, "  unresolved: %s\n", e)
		}
	}
	if res.PageHeaders > 0 {
		fmt.Fprintf(w, "Page headers: %d (%s)\n", res.PageHeaders, res.PageHeaderSource)
	} else if res.PageHeaderNote != "" {
		fmt.Fprintf(w, "Page headers: none (%s)\n", res.PageHeaderNote)
	}
	writeTimelineSummary(w, b.Trace)
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
}

// Package bundle is the trace bundle: what ran, where, with which options,
// what the tracer observed, and the timeline — the file `queryreplay trace
// -o` writes, the trace store keeps and the datasource, the viewer, the
// findings and compare read. It reads and writes bundles (gzip or plain
// JSON) within a bound on their decompressed size.
//
// It is a model package: it does no I/O but the reader, writer or file it
// is given, and must not import the tracer, a SQL driver, the symbol
// client or Grafana's SDK, so everything that only reads bundles stays
// free of them.
package bundle

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/pkg/sizelimit"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// Format identifies a trace bundle; Version is the version this
// package writes. It reads MinVersion to Version: version 2 added the
// statement tree (Statements), which a version 1 bundle simply lacks;
// version 3 stores the statement whose timeline is the bundle's Trace once
// (bundleJSON.TraceStatement) where version 2 stored it twice.
const (
	Format     = "queryreplay-trace"
	Version    = 3
	MinVersion = 1
)

// Bundle is a saved trace: what ran, where, with which options, what the
// tracer observed, and the timeline in exactly the JSON shape of
// `queryreplay timeline --json`.
type Bundle struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// SQL is the traced batch (the user's own text, kept so the bundle can be
	// understood later; it is never logged).
	SQL    string     `json:"sql"`
	Server ServerInfo `json:"server"`
	Run    RunInfo    `json:"run"`
	Result Result     `json:"result"`
	// Plan is the actual plan XML the trace captured (empty when none); the
	// timeline keeps times, not the plan's runtime counters.
	Plan string `json:"plan,omitempty"`
	// Trace is the timeline. A loaded bundle has it when its trace part
	// decodes as a timeline.Trace; RawTrace always holds the trace part
	// verbatim, and saving a loaded bundle writes it back unchanged.
	Trace    *timeline.Trace `json:"-"`
	RawTrace json.RawMessage `json:"-"`
	// Statements is the statement tree (version 2): the batch (node 0,
	// whose trace holds the events between statements), its statements and
	// those of the procedures they called, each with its own plan and
	// timeline. Absent from a version 1 bundle and from a trace whose events
	// carried no statement identity; Trace is then the only timeline.
	Statements []timeline.Statement `json:"-"`
	// traceStatement is the wire's TraceStatement of a loaded bundle whose
	// trace part did not decode, so saving it keeps the reference.
	traceStatement *traceRef
}

// traceRef names the statement whose timeline is the bundle's trace part:
// the statement's trace is not stored again (version 3). Lost is the
// statement's own Summary.Lost; the bundle's trace carries the session's.
type traceRef struct {
	ID   int    `json:"id"`
	Lost uint64 `json:"lost,omitempty"`
}

// bundleJSON is Bundle's wire form.
type bundleJSON struct {
	Format  string          `json:"format"`
	Version int             `json:"version"`
	SQL     string          `json:"sql"`
	Server  ServerInfo      `json:"server"`
	Run     RunInfo         `json:"run"`
	Result  Result          `json:"result"`
	Plan    string          `json:"plan,omitempty"`
	Trace   json.RawMessage `json:"trace"`
	// Statements: see Bundle.Statements.
	Statements []timeline.Statement `json:"statements,omitempty"`
	// TraceStatement: the node whose trace is Trace (traceRef).
	TraceStatement *traceRef `json:"traceStatement,omitempty"`
}

// MarshalJSON writes the bundle with its trace in the JSON shape of
// `queryreplay timeline --json`.
//
// It writes bundleJSON's fields itself, in their order and with
// json.Marshal's escaping, rather than json.Marshal(bundleJSON): the trace
// is most of the bytes, and encoding/json re-scans and compacts a
// RawMessage's bytes every time one is nested in another value. Storing a
// 100k-event live trace spent most of its time there (issue 29).
func (b *Bundle) MarshalJSON() ([]byte, error) {
	out, err := appendFields(append(make([]byte, 0, len(b.RawTrace)+len(b.Plan)+4096), '{'), []field{
		{"format", b.Format, false}, {"version", b.Version, false}, {"sql", b.SQL, false},
		{"server", b.Server, false}, {"run", b.Run, false}, {"result", b.Result, false},
		{"plan", b.Plan, b.Plan == ""}})
	if err != nil {
		return nil, err
	}
	out = append(out, `,"trace":`...)
	statements, ref := b.Statements, b.traceStatement
	switch {
	case b.Trace != nil:
		// json.Marshal(b.Trace)'s bytes, written in place, without
		// encoding/json's second pass over the lanes (Trace.AppendJSON)
		start := len(out)
		if out, err = b.Trace.AppendJSON(out); err != nil {
			return nil, err
		}
		if b.Version >= 3 {
			if statements, ref, err = storeOnce(b.Statements, b.Trace, out[start:], b.Trace.Summary.Lost); err != nil {
				return nil, err
			}
		}
	case b.RawTrace == nil:
		out = append(out, "null"...)
	default:
		// a raw trace as read (it may be indented): compacted and escaped as
		// json.Marshal would; one from json.Marshal already is
		var compact, escaped bytes.Buffer
		if err := json.Compact(&compact, b.RawTrace); err != nil {
			return nil, fmt.Errorf("the bundle's trace: %w", err)
		}
		json.HTMLEscape(&escaped, compact.Bytes())
		out = append(out, escaped.Bytes()...)
	}
	out, err = appendFields(out, []field{{"statements", statements, len(statements) == 0}, {"traceStatement", ref, ref == nil}})
	if err != nil {
		return nil, err
	}
	return append(out, '}'), nil
}

// field is one of bundleJSON's fields: its key, its value and whether
// omitempty leaves it out.
type field struct {
	key   string
	value any
	omit  bool
}

// appendFields appends the fields not omitted as json.Marshal writes them
// in an object, a comma before each unless it opens the object.
func appendFields(out []byte, fields []field) ([]byte, error) {
	for _, f := range fields {
		if f.omit {
			continue
		}
		if out[len(out)-1] != '{' {
			out = append(out, ',')
		}
		v, err := json.Marshal(f.value)
		if err != nil {
			return nil, err
		}
		out = append(append(append(append(out, '"'), f.key...), `":`...), v...)
	}
	return out, nil
}

// UnmarshalJSON reads a bundle; see Trace for when the timeline is decoded.
func (b *Bundle) UnmarshalJSON(data []byte) error {
	var w bundleJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*b = Bundle{Format: w.Format, Version: w.Version, SQL: w.SQL, Server: w.Server, Run: w.Run, Result: w.Result, Plan: w.Plan, Statements: w.Statements}
	if len(w.Trace) > 0 && string(w.Trace) != "null" {
		b.RawTrace = w.Trace
		var tr timeline.Trace
		if json.Unmarshal(w.Trace, &tr) == nil {
			b.Trace = &tr
		}
	}
	if r := w.TraceStatement; r != nil {
		if r.ID < 0 || r.ID >= len(b.Statements) {
			return fmt.Errorf("traceStatement %d is not one of the %d statements", r.ID, len(b.Statements))
		}
		if b.Trace == nil {
			b.traceStatement = r
			return nil
		}
		own := *b.Trace
		own.Summary.Lost = r.Lost
		b.Statements[r.ID].Trace = &own
	}
	return nil
}

// storeOnce returns the statements as written: the first planned
// statement whose timeline is, but for its own losses, the bundle's trace
// (trace, as marshalled, whose losses are lost) is written without it and named by the returned
// reference. Other statements keep their own: with one plan the bundle's
// trace is the whole batch's, unlike any statement's. Marshalled equality
// is what makes the reference exact: reading gives back the same JSON.
func storeOnce(st []timeline.Statement, main *timeline.Trace, trace []byte, lost uint64) ([]timeline.Statement, *traceRef, error) {
	for i := range st {
		if st[i].Plan == "" || st[i].Trace == nil {
			continue
		}
		own := *st[i].Trace
		own.Summary.Lost = lost
		if reflect.DeepEqual(&own, main) {
			// equal values marshal to equal JSON: no second encoding of a
			// large trace to find that out (issue 29)
			return storedOnce(st, i)
		}
		mine, err := own.AppendJSON(nil)
		if err != nil {
			return nil, nil, err
		}
		if !bytes.Equal(mine, trace) {
			return st, nil, nil
		}
		return storedOnce(st, i)
	}
	return st, nil, nil
}

func storedOnce(st []timeline.Statement, i int) ([]timeline.Statement, *traceRef, error) {
	out := slices.Clone(st)
	out[i].Trace = nil
	return out, &traceRef{ID: i, Lost: st[i].Trace.Summary.Lost}, nil
}

// ServerInfo is what the tracer learned about the server.
type ServerInfo struct {
	ProductVersion string `json:"productVersion,omitempty"`
	EngineEdition  int    `json:"engineEdition,omitempty"`
	Database       string `json:"database,omitempty"`
	SPID           int    `json:"spid,omitempty"`
}

// RunInfo records the trace's setup.
type RunInfo struct {
	Session          string    `json:"session"`
	StartedAt        time.Time `json:"startedAt"`
	Events           []string  `json:"events"`
	ClearBufferPool  bool      `json:"clearBufferPool"`
	DisableReadAhead bool      `json:"disableReadAhead"`
	Modification     bool      `json:"modification"`
	CallStacks       bool      `json:"callStacks"`
	Target           string    `json:"target"` // event file pattern or "ring_buffer"
	// ReadBack is how the events were read: "binary" (the .xel files,
	// fetched with OPENROWSET BULK), "xml" (sys.fn_xe_file_target_read_file)
	// or "ring_buffer". ReadBackFallback says why Auto did not use binary.
	ReadBack         string      `json:"readBack,omitempty"`
	ReadBackFallback string      `json:"readBackFallback,omitempty"`
	Groups           EventGroups `json:"groups"`
	// TimeoutSeconds and MaxEvents are the limits the run had (defaults
	// applied); 0 in bundles written before they were recorded.
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty"`
	MaxEvents      int     `json:"maxEvents,omitempty"`
}

// MaxEventsWarningPrefix starts the warning a trace cut at Options.MaxEvents
// carries, so adapters that say it their own way can leave it out.
const MaxEventsWarningPrefix = "only the first "

// Result is what the run produced besides the timeline.
type Result struct {
	// Rows is the number of rows drained per result set.
	Rows       []int64 `json:"rows"`
	DurationUs int64   `json:"durationUs"`
	// Events read back and decoded; BadRows could not be decoded.
	Events  int64 `json:"events"`
	BadRows int64 `json:"badRows,omitempty"`
	// SessionIDs are the distinct sqlserver.session_id values the events
	// carry: the traced connection's alone, unless the filter failed.
	SessionIDs []int64 `json:"sessionIds,omitempty"`
	// Batches counts sql_batch_starting events: 1 when the tracer's own
	// statements were kept out of the trace.
	Batches int `json:"batches"`
	// Truncated: MaxEvents stopped the read-back early.
	Truncated bool `json:"truncated,omitempty"`
	// Lost counts events the server dropped: event_sequence gaps (including
	// a head lost to the file cap) and sys.dm_xe_sessions' dropped count.
	Lost          uint64 `json:"lost,omitempty"`
	DroppedEvents int64  `json:"droppedEvents,omitempty"`
	// LogRecords are the fn_dblog records the modification wrote, read
	// before the rollback.
	LogRecords []LogRecord `json:"logRecords,omitempty"`
	// Blocking is who blocked the batch: sys.dm_exec_requests sampled
	// while it ran (blocking.go), one entry per blocking interval.
	// BlockingNote says why sampling stopped early or was refused.
	Blocking     []BlockingSample `json:"blocking,omitempty"`
	BlockingNote string           `json:"blockingNote,omitempty"`
	// RolledBack is true when a modification's transaction was rolled back.
	RolledBack bool `json:"rolledBack,omitempty"`
	// Resolution reports name resolution; partial results are kept.
	Resolution Resolution `json:"resolution"`
	// Warnings are things the reader should know (partial resolution, lost
	// events, side effects a rollback does not undo).
	Warnings []string `json:"warnings,omitempty"`
}

// LogRecord is one fn_dblog row (undocumented function; columns as
// docs/design/tracing.md §13 lists them).
type LogRecord struct {
	LSN           string `json:"lsn"`
	Operation     string `json:"operation"`
	Context       string `json:"context"`
	TransactionID string `json:"transactionId"`
	AllocUnitID   int64  `json:"allocUnitId,omitempty"`
	PageID        string `json:"pageId,omitempty"`
	SlotID        int64  `json:"slotId,omitempty"`
}

// Resolution counts what name resolution found.
type Resolution struct {
	Pages        int `json:"pages"`
	PagesNamed   int `json:"pagesNamed"`
	HoBTs        int `json:"hobts"`
	HoBTsNamed   int `json:"hobtsNamed"`
	KeyLocks     int `json:"keyLocks"`
	KeyLocksRows int `json:"keyLocksResolved"`
	// Errors are the lookups that failed; the rest of the trace stands.
	Errors []string `json:"errors,omitempty"`
	// Stacks, StackFrames and FramesResolved count the distinct call
	// stacks, their frames and the frames resolved to symbols, over every
	// timeline of the bundle (a batch split by statement: each statement's
	// stack table, so a stack two statements share counts in each);
	// SymbolErrors say, per module, why the others were not (a missing
	// PDB, no identity, no symbol server configured). They never fail a
	// trace.
	Stacks         int      `json:"stacks,omitempty"`
	StackFrames    int      `json:"stackFrames,omitempty"`
	FramesResolved int      `json:"framesResolved,omitempty"`
	SymbolErrors   []string `json:"symbolErrors,omitempty"`
	// PageHeaders counts the page headers read, from PageHeaderSource
	// (PageHeadersPageInfo or PageHeadersAllocations); PageHeaderNote
	// says why there are none when the server cannot give them.
	PageHeaders      int    `json:"pageHeaders,omitempty"`
	PageHeaderSource string `json:"pageHeaderSource,omitempty"`
	PageHeaderNote   string `json:"pageHeaderNote,omitempty"`
	// PageNameNote says why some or all pages stay unnamed: the server has
	// no sys.dm_db_page_info and the undocumented allocation DMV was not
	// allowed, or the trace touched more pages than the lookup bound.
	PageNameNote string `json:"pageNameNote,omitempty"`
}

// Write writes b as JSON.
func Write(w io.Writer, b *Bundle) error {
	return write(w, b, "  ")
}

// WriteCompact writes b as Write does, without indentation: for a store,
// where no one reads the JSON and indenting re-scans every byte of it (a
// third of storing a 100k-event live trace, issue 29). Read reads both.
func WriteCompact(w io.Writer, b *Bundle) error { return write(w, b, "") }

func write(w io.Writer, b *Bundle, indent string) error {
	if b.Format == "" {
		b.Format = Format
	}
	if b.Version == 0 {
		b.Version = Version
	}
	// b.MarshalJSON directly, not json.Encoder: the encoder would scan and
	// compact its whole output once more. The bytes are what Encode wrote.
	data, err := b.MarshalJSON()
	if err != nil {
		return fmt.Errorf("write bundle: %w", err)
	}
	if indent != "" {
		var ind bytes.Buffer
		ind.Grow(len(data) * 2)
		if err := json.Indent(&ind, data, "", indent); err != nil {
			return fmt.Errorf("write bundle: %w", err)
		}
		data = ind.Bytes()
	}
	if _, err := w.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("write bundle: %w", err)
	}
	return nil
}

// DefaultMaxBytes bounds a bundle's JSON, after decompression, when
// the reader is given no other bound (docs/security.md "Input size limits").
// The compressed size alone says nothing: a megabyte of gzip can expand to
// a gigabyte.
const DefaultMaxBytes = 256 << 20

// ReadOptions bound what ReadLimit reads.
type ReadOptions struct {
	// MaxBytes bounds the bundle's JSON after decompression (and so the
	// compressed bytes too); 0 means DefaultMaxBytes.
	MaxBytes int64
	// Knob names the flag or setting that raises MaxBytes, for the error.
	Knob string
}

func (o ReadOptions) limit() sizelimit.Error {
	n := o.MaxBytes
	if n <= 0 {
		n = DefaultMaxBytes
	}
	return sizelimit.Error{What: "the bundle's JSON", Limit: n, Knob: o.Knob}
}

// Read reads a bundle, gzip-compressed or not (told by its magic
// bytes), of at most DefaultMaxBytes; see ReadLimit.
func Read(r io.Reader) (*Bundle, error) { return ReadLimit(r, ReadOptions{}) }

// ReadLimit reads a bundle, gzip-compressed or not (told by its magic
// bytes), and refuses unknown formats and versions by name. Its JSON, once
// decompressed, may take at most o.MaxBytes: more is a *sizelimit.Error,
// found while decompressing, so a gzip bomb costs no more memory than a
// bundle of the limit's size. JSON is decoded only from those bytes.
func ReadLimit(r io.Reader, o ReadOptions) (*Bundle, error) {
	br := bufio.NewReader(r)
	var src io.Reader = br
	limit := o.limit()
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("read bundle: gzip: %w", err)
		}
		defer zr.Close()
		src = zr
		limit.What += ", decompressed,"
	}
	data, err := sizelimit.ReadAll(src, limit)
	if err != nil {
		return nil, fmt.Errorf("read bundle: %w", err)
	}
	return decodeBundle(data)
}

// decodeBundle checks the format and version, then decodes.
func decodeBundle(data []byte) (*Bundle, error) {
	var head struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("read bundle: not JSON: %w", err)
	}
	if head.Format != Format {
		return nil, fmt.Errorf("read bundle: format is %q, want %q", head.Format, Format)
	}
	if head.Version < MinVersion || head.Version > Version {
		return nil, fmt.Errorf("read bundle: version %d is not supported (this build reads versions %d to %d)", head.Version, MinVersion, Version)
	}
	var b Bundle
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("read bundle: %w", err)
	}
	if b.RawTrace == nil {
		return nil, errors.New("read bundle: it has no trace")
	}
	return &b, nil
}

// Save writes b to path, gzip-compressed when the name ends in .gz.
// It writes a temporary file and renames it, so a failed save never leaves a
// truncated bundle under the name.
func Save(path string, b *Bundle) (err error) {
	dir, base := ".", path
	if i := strings.LastIndexAny(path, `/\`); i >= 0 {
		dir, base = path[:i+1], path[i+1:]
	}
	f, err := os.CreateTemp(dir, "."+base+".*")
	if err != nil {
		return fmt.Errorf("save bundle: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	var w io.Writer = f
	var zw *gzip.Writer
	if strings.HasSuffix(path, ".gz") {
		zw = gzip.NewWriter(f)
		w = zw
	}
	bw := bufio.NewWriter(w)
	if err := Write(bw, b); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("save bundle: %w", err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return fmt.Errorf("save bundle: %w", err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("save bundle: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("save bundle: %w", err)
	}
	return nil
}

// Load reads a bundle file of at most DefaultMaxBytes.
func Load(path string) (*Bundle, error) { return LoadLimit(path, ReadOptions{}) }

// LoadLimit reads a bundle file within o's bound (see ReadLimit).
func LoadLimit(path string, o ReadOptions) (*Bundle, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load bundle: %w", err)
	}
	defer f.Close()
	b, err := ReadLimit(f, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// BlockingSample is one interval during which sys.dm_exec_requests showed
// the traced request waiting for the same session, with the same wait
// type and resource.
type BlockingSample struct {
	// SessionID is blocking_session_id: the session holding what the
	// traced request waited for (negative values as documented: -2 an
	// orphaned distributed transaction, -3 a deferred recovery
	// transaction, -4 a latch owner that could not be determined).
	SessionID    int    `json:"sessionId"`
	WaitType     string `json:"waitType"`
	WaitResource string `json:"waitResource,omitempty"`
	// FirstSeenUs and LastSeenUs are the first and last samples that saw
	// the wait, in µs since the batch was sent (the timeline's time zero is
	// the batch's start, so they compare with its lanes); FirstSeen and
	// LastSeen are the same instants by the tracer's clock.
	FirstSeenUs int64     `json:"firstSeenUs"`
	LastSeenUs  int64     `json:"lastSeenUs"`
	FirstSeen   time.Time `json:"firstSeen"`
	LastSeen    time.Time `json:"lastSeen"`
	// WaitStartUs is when the wait began by the first sample's wait_time
	// (µs since the batch was sent); WaitTimeMs is wait_time at the last.
	WaitStartUs int64 `json:"waitStartUs"`
	WaitTimeMs  int64 `json:"waitTimeMs"`
	Samples     int   `json:"samples"`
	// Login, Host, Program and Status are the blocker's
	// sys.dm_exec_sessions row when it was first seen.
	Login   string `json:"login,omitempty"`
	Host    string `json:"host,omitempty"`
	Program string `json:"program,omitempty"`
	Status  string `json:"status,omitempty"`
	// Statement is the blocker's last batch (sys.dm_exec_input_buffer),
	// read only with Options.BlockerStatements; never logged.
	Statement string `json:"statement,omitempty"`
	// Note says why the session's details are missing.
	Note string `json:"note,omitempty"`
}

// EventGroups switches groups of events on and off; every toggle changes the
// session DDL (docs/design/tracing.md §17 item 14). Page I/O (physical_page_read and
// physical_page_write), the batch events, query_thread_profile and the
// actual plan are always traced: the timeline cannot be built without them.
type EventGroups struct {
	Locks  bool // lock_acquired, lock_released, lock_escalation
	Waits  bool // sqlos.wait_info
	Memory bool // query_memory_grant_usage and the spill events
	Splits bool // page_split
	Log    bool // log_flush_complete (transaction_log is added for modifications regardless)
	FileIO bool // file_read, file_read_completed, file_write_completed
}

// AllEventGroups turns every group on.
func AllEventGroups() EventGroups {
	return EventGroups{Locks: true, Waits: true, Memory: true, Splits: true, Log: true, FileIO: true}
}

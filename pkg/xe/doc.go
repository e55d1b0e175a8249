// Package xe decodes SQL Server Extended Events XML into events.
//
// It reads the two renderings SQL Server produces:
//
//   - event_file rows, as sys.fn_xe_file_target_read_file returns them
//     (https://learn.microsoft.com/en-us/sql/relational-databases/system-functions/sys-fn-xe-file-target-read-file-transact-sql):
//     one <event> per row, no <type> children, strings in CDATA. A dump with
//     one event_data per line, or any concatenation of <event> elements, is
//     read the same way.
//   - ring_buffer target_data from sys.dm_xe_session_targets
//     (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-session-targets-transact-sql):
//     a <RingBufferTarget truncated eventCount droppedCount …> document whose
//     events carry <type> children; its attributes are surfaced by
//     Decoder.RingBuffer.
//
// Every event decodes generically (Event: name, package, timestamp, data
// fields, actions, in document order), so nothing is dropped; typed.go adds
// typed views (AsLock, AsWait, AsPageIO, …) of the events the tracer and the
// exporter use, with every duration normalised to microseconds and the
// source unit documented per field. Map fields keep both the key (<value>)
// and the name (<text>); when the name is missing it is looked up through a
// MapResolver filled from sys.dm_xe_map_values. No map key is ever
// hard-coded here: keys change between SQL Server builds.
//
// The decoder streams: memory depends on the largest event, not on how many
// there are. Readers that get event_data one row at a time (the tracer, from
// a SQL result set) keep one Decoder and call DecodeRow. A malformed row
// yields a *RowError with its row, line and offset, and where inside the row
// the problem is (RowError.Pos, ErrOffset), and decoding goes on. By
// default each Event owns its memory and costs two allocations;
// Decoder.ReuseEvents makes events views into reused buffers (zero
// allocations) for callers that consume each event before the next.
//
// Why a hand-written scanner instead of encoding/xml: the tracer and the
// exporter read event files of hundreds of MB, and encoding/xml decodes
// them at about 15 MB/s with dozens of allocations per event. Event XML is
// a small, fixed vocabulary (event, data, action, type, value, text), so a
// byte scanner specialised to it runs one to two orders of magnitude faster
// (see BenchmarkDecode). It still does what matters of XML: CDATA, the
// predefined and numeric character references, single- or double-quoted
// attributes in any order, whitespace and comments anywhere, line-end
// normalisation, and well-formedness checks on nested XML values, which it
// keeps verbatim (query_post_execution_showplan's plan is a child element of
// <value>, not text). It does not handle DTDs, namespaces on the event
// vocabulary or encodings other than UTF-8 and UTF-16 (UTF-16 input, with or
// without a byte-order mark — SSMS and PowerShell save it so — is transcoded
// on the fly; offsets in errors then count UTF-8 bytes).
//
// Memory: the buffer never grows past the event-size limit (plus 1 MB of
// read slack); an event of several MB keeps the buffer it was decoded in
// instead of a copy, and a large entity-escaped value is decoded in place
// once its event has been parsed. An event just under the limit therefore
// costs about 1.5× the limit at the peak (TestHugeValueMemory), in both
// event modes.
//
// Benchmarks (measurement only, not part of the tests): BenchmarkDecode
// decodes a generated 200 MB fn_xe_file_target_read_file-style stream
// (package xetest; QUERYREPLAY_XE_BENCH_MB changes the size) with this
// decoder, in both event modes, and with an encoding/xml baseline;
// BenchmarkLxmlPeer runs libxml2 (testdata/bench_lxml.py, Debian
// python3-lxml) on the same stream:
//
//	go test ./pkg/xe -run '^$' -bench 'Decode|LxmlPeer' -benchtime 3x -cpu 1
//
// Fast paths and projections (fastpath.go, project.go, layout.go): the
// exporter reads every event its session collects, a million a second on
// one core, so the common case is hand-written for speed. The fast paths
// read the exact shapes SQL Server writes — the event start tag in
// name/package/timestamp order, <data>/<action> with a plain or CDATA
// value, a field holding a plain number in one step, names and packages
// compared eight bytes at a time against the last ones seen, timestamps
// parsed once per second — and either decode their element completely,
// with the result the generic code would give, or touch nothing and leave
// it to the generic code, which reads every other form (whitespace in tags,
// other attribute orders, entities, comments, split CDATA, a buffer that
// ends too early). A Projection decodes only the fields and actions it
// names and passes over the rest without decoding them; it remembers the
// field names of the last event of each name, position by position, and
// tries the expected one first. What they must NOT do: give any result the
// generic, full decoder would not (a projected event is the full event
// with the unnamed fields left out; only a problem inside a skipped field
// goes unreported), trust a remembered name or package without comparing
// it with the input, or allocate per event. TestFastPathMatchesGeneric,
// TestProjectionMatchesFullDecoder, TestDecodeRowFastPathsAndProjections,
// FuzzFastPath and FuzzProjection hold them to that on the real captures,
// generated streams and tricky forms; BenchmarkProjectedRow times one row
// each way, and pkg/exporter's BenchmarkIngest the exporter's whole path.
//
// Binary event files: XELReader (xel.go) reads .xel files into the same
// Events, with map texts from the file's own metadata; its layout notes and
// why it is hand-written are in xel.go. XELWriter (xelwrite.go) writes the
// subset of the format documented there, for the stand-in and for tests;
// EncodeXMLAsXEL turns event_file XML into a .xel file.
//
// What this package must NOT do: talk to SQL Server, parse call stacks or showplans
// (their raw text is kept for pkg/callstack and pkg/showplan), or order and
// pair events into a timeline (pkg/timeline).
package xe

// Package xevents is the stand-in's Extended Events emulation, the part
// that needs no executor: the catalog of events, actions and maps the
// stand-in publishes (what sys.dm_xe_objects and sys.dm_xe_map_values
// list), event sessions built and validated from the sqlfront trees of
// CREATE/ALTER EVENT SESSION with SQL Server's messages, predicate
// evaluation, event rendering in the event_file and ring_buffer XML forms,
// and the in-memory .xel files with their buffers and rollover.
//
// It must not run statements, read tables, hold locks or know about
// connections or the TDS protocol. What it needs from the server is asked
// for through two small interfaces declared here, at the consumer:
// Instance (the persona a session runs on: its actions, log directory,
// event_file rules and product name) and Values (the engine's comparison,
// string form and LIKE, so a predicate matches as a WHERE clause would).
// The server (internal/standin) decides when an event fires and fills its
// EventData and EventCtx; this package decides what a session records and
// how it is written.
package xevents

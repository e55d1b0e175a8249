// Package engine is the stand-in's query engine: SQL Server's values and
// data types (conversion, comparison, rendering), the errors evaluation
// raises, and the operators' building blocks, over the trees that
// internal/standin/sqlfront parses.
//
// It must not import the server (internal/standin) or the protocol
// (internal/tds): it knows no connection, transaction, session, persona,
// system view or tds.Handler. What it needs from the server it declares
// itself, as small interfaces the server implements (the way
// internal/standin/xevents asks through Instance and Values).
// internal/releasecheck TestLayers checks its imports.
package engine

// Package engine is the stand-in's query engine, moving out of the server
// (internal/standin) in steps. It holds SQL Server's values and data types
// (conversion, comparison, rendering), expression analysis (Conjuncts,
// Visit, the aggregates and subqueries an expression holds, type
// precedence) and evaluation over the trees internal/standin/sqlfront
// parses (EvalEnv, Relation), the built-in scalar functions, and the SQL
// errors evaluation raises. The planner, the operators and showplan
// rendering still live in the server package.
//
// It must not import the server (internal/standin) or the protocol
// (internal/tds): it knows no connection, transaction, session, persona,
// system view or tds.Handler. What it needs from the server it declares
// itself as small interfaces the server implements, the way
// internal/standin/xevents asks through Instance and Values: Host
// (variables, subqueries, the metadata and security functions, the clock,
// the version's function set, the request's IN-list cache) and RowIndex (a
// base-table row's %%lockres%% and %%physloc%%).
// internal/releasecheck TestLayers checks its imports.
package engine

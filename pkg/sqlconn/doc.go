// Package sqlconn holds what every QueryReplay connection to SQL Server
// shares, below both the tracer and the exporter: the client application
// names our connections carry (so the exporter's server-wide event session
// can leave QueryReplay's own work out of production counts), setting that
// name on a DSN, where an event session lives (Scope), and looking a
// statement up by its query hash in the plan cache or Query Store.
//
// It is an I/O package: it may talk to SQL Server through database/sql,
// never shapes data for Grafana or Prometheus, never runs a trace and never
// imports pkg/tracer (the tracer imports it).
package sqlconn

package sqlconn

// Scope is where an event session lives.
type Scope int

const (
	// ScopeServer: CREATE EVENT SESSION … ON SERVER with an event_file target
	// (SQL Server, Managed Instance).
	ScopeServer Scope = iota
	// ScopeDatabase: … ON DATABASE with a ring_buffer target, for Azure SQL
	// Database (EngineEdition 5), where sessions are database-scoped and
	// event_file accepts only Azure Blob URLs (docs/design/exporter.md §9.1;
	// https://learn.microsoft.com/en-us/azure/azure-sql/database/xevent-db-diff-from-svr).
	ScopeDatabase
)

// Keyword is the scope as CREATE/ALTER/DROP EVENT SESSION … ON <keyword>
// spells it.
func (s Scope) Keyword() string {
	if s == ScopeDatabase {
		return "DATABASE"
	}
	return "SERVER"
}

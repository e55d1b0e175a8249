package tracer

import (
	"fmt"

	"github.com/queryreplay/queryreplay/pkg/tsql"
)

// edition is what SERVERPROPERTY('EngineEdition') says the server is
// (https://learn.microsoft.com/en-us/sql/t-sql/functions/serverproperty-transact-sql),
// and what of a trace it allows.
type edition struct{ id int }

// Engine editions the tracer treats apart.
const (
	editionAzureSQLDatabase = 5  // Azure SQL Database
	editionSynapse          = 6  // Azure Synapse dedicated SQL pool
	editionManagedInstance  = 8  // Azure SQL Managed Instance
	editionSynapseServeless = 11 // Azure Synapse serverless SQL pool
)

// scope: Azure SQL Database has database-scoped sessions only
// (https://learn.microsoft.com/en-us/azure/azure-sql/database/xevent-db-diff-from-svr).
func (e edition) scope() Scope {
	if e.id == editionAzureSQLDatabase {
		return ScopeDatabase
	}
	return ScopeServer
}

// ringBuffer: Azure SQL Database and Managed Instance cannot write a local
// event_file (their event_file target takes Azure Blob Storage URLs only:
// https://learn.microsoft.com/en-us/azure/azure-sql/managed-instance/transact-sql-tsql-differences-sql-server#extended-events),
// so their sessions use a ring_buffer.
func (e edition) ringBuffer() bool {
	return e.id == editionAzureSQLDatabase || e.id == editionManagedInstance
}

// fnDblog: whether the log records of a modification are read with
// fn_dblog. It is undocumented everywhere; on Azure SQL Database it is not
// used (there is no sysadmin to read it), and the trace says so.
func (e edition) fnDblog() bool { return e.id != editionAzureSQLDatabase }

// check refuses what the edition cannot do, before anything is created.
func (e edition) check(o Options) error {
	switch e.id {
	case editionSynapse, editionSynapseServeless:
		return &tsql.RefusedError{Reason: fmt.Sprintf("Azure Synapse Analytics (EngineEdition %d) is not supported: it has no Extended Events sessions QueryReplay can create", e.id)}
	case editionAzureSQLDatabase:
		if o.ClearBufferPool {
			// https://learn.microsoft.com/en-us/sql/t-sql/database-console-commands/dbcc-dropcleanbuffers-transact-sql
			return &tsql.RefusedError{Reason: "Azure SQL Database does not support DBCC DROPCLEANBUFFERS; trace without clearing the buffer pool"}
		}
		if o.DisableReadAhead {
			// https://learn.microsoft.com/en-us/sql/t-sql/database-console-commands/dbcc-traceon-transact-sql
			return &tsql.RefusedError{Reason: "Azure SQL Database does not support trace flags (DBCC TRACEON); trace without disabling read-ahead"}
		}
	case editionManagedInstance:
		if o.DisableReadAhead {
			// https://learn.microsoft.com/en-us/azure/azure-sql/managed-instance/transact-sql-tsql-differences-sql-server#dbcc
			return &tsql.RefusedError{Reason: "Azure SQL Managed Instance supports only a few global trace flags, not session trace flag 652; trace without disabling read-ahead"}
		}
	}
	return nil
}

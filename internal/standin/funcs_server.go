package standin

import (
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/engine"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// metadataFunc evaluates the server, database, object and schema
// metadata functions.
func (x *execCtx) metadataFunc(f engine.FuncArgs) (any, bool, *sqlfront.SQLError) {
	name, a, argc, str, c := f.Name, f.A, f.Argc, f.Str, x.conn
	switch f.Builtin() {
	case "SERVERPROPERTY":
		if err := argc(1, 1); err != nil {
			return nil, true, err
		}
		return x.srv.serverProperty(str(0)), true, nil
	case "CURRENT_TRANSACTION_ID":
		return x.currentTransactionID(), true, nil // safety.go
	case "DB_ID":
		if len(a) == 0 {
			return int64(c.db.ID), true, nil
		}
		if d := x.srv.dbByName(str(0)); d != nil {
			return int64(d.ID), true, nil
		}
		return nil, true, nil
	case "DB_NAME":
		if len(a) == 0 || a[0] == nil {
			return c.db.Name, true, nil
		}
		n, _ := engine.ConvertValue(a[0], engine.TBigInt)
		if id, ok := n.(int64); ok {
			if d := x.srv.dbByID(id); d != nil {
				return d.Name, true, nil
			}
		}
		return nil, true, nil
	case "OBJECT_ID":
		if err := argc(1, 2); err != nil {
			return nil, true, err
		}
		if t := x.resolveTableName(str(0)); t != nil {
			return t.ObjectID, true, nil
		}
		return x.procObjectID(str(0)), true, nil // procs.go
	case "OBJECT_DEFINITION":
		if err := argc(1, 1); err != nil {
			return nil, true, err
		}
		return x.objectDefinition(a[0]), true, nil // procs.go
	case "OBJECT_NAME", "OBJECT_SCHEMA_NAME":
		if err := argc(1, 2); err != nil {
			return nil, true, err
		}
		db := c.db
		if len(a) == 2 {
			id, _ := engine.ConvertValue(a[1], engine.TBigInt)
			if n, ok := id.(int64); ok {
				db = x.srv.dbByID(n)
			}
		}
		id, _ := engine.ConvertValue(a[0], engine.TBigInt)
		if n, ok := id.(int64); ok && db != nil && procByID(db, n) != nil {
			return procNamePart(procByID(db, n), name), true, nil // procs.go
		}
		if db != nil {
			for _, t := range db.Tables {
				if n, ok := id.(int64); ok && t.ObjectID == n {
					if name == "OBJECT_SCHEMA_NAME" {
						return t.Schema, true, nil
					}
					return t.Name, true, nil
				}
			}
		}
		return nil, true, nil
	case "SCHEMA_NAME":
		if len(a) == 0 {
			return "dbo", true, nil
		}
		switch v, _ := engine.ConvertValue(a[0], engine.TBigInt); v {
		case int64(1):
			return "dbo", true, nil
		case int64(4):
			return "sys", true, nil
		}
		return nil, true, nil
	case "SCHEMA_ID":
		if len(a) == 0 || strings.EqualFold(str(0), "dbo") {
			return int64(1), true, nil
		}
		if strings.EqualFold(str(0), "sys") {
			return int64(4), true, nil
		}
		return nil, true, nil
	}
	return nil, false, nil
}

// securityFunc evaluates the login, user, role and permission functions.
func (x *execCtx) securityFunc(f engine.FuncArgs) (any, bool, *sqlfront.SQLError) {
	a, argc, str, c := f.A, f.Argc, f.Str, x.conn
	switch f.Builtin() {
	case "SUSER_NAME", "SUSER_SNAME", "ORIGINAL_LOGIN", "SYSTEM_USER", "CURRENT_USER":
		return c.user, true, nil
	case "USER_NAME":
		if c.sysadmin {
			return "dbo", true, nil
		}
		return c.user, true, nil
	case "IS_SRVROLEMEMBER":
		if err := argc(1, 2); err != nil {
			return nil, true, err
		}
		switch strings.ToLower(str(0)) {
		case "sysadmin":
			return engine.BoolInt(c.sysadmin), true, nil
		case "serveradmin", "securityadmin", "processadmin", "setupadmin", "bulkadmin", "diskadmin", "dbcreator", "public":
			return engine.BoolInt(c.sysadmin || strings.EqualFold(str(0), "public")), true, nil
		}
		return nil, true, nil
	case "IS_MEMBER":
		return engine.BoolInt(c.sysadmin), true, nil
	case "HAS_PERMS_BY_NAME":
		// https://learn.microsoft.com/en-us/sql/t-sql/functions/has-perms-by-name-transact-sql
		if err := argc(3, 5); err != nil {
			return nil, true, err
		}
		if a[2] == nil {
			return nil, true, nil
		}
		// a NULL securable and class ask about a server-level permission,
		// as in the documentation's HAS_PERMS_BY_NAME(null, null, 'VIEW
		// SERVER STATE') example
		class := "SERVER"
		if a[1] != nil {
			class = strings.ToUpper(str(1))
		}
		perm := strings.ToUpper(str(2))
		if !x.srv.persona.KnowsPermission(perm) {
			return nil, true, nil // a permission this version does not know: NULL
		}
		switch class {
		case "SERVER", "DATABASE", "OBJECT", "SCHEMA":
		default:
			return nil, true, nil
		}
		if perm == "ADMINISTER BULK OPERATIONS" && class == "SERVER" || perm == "ADMINISTER DATABASE BULK OPERATIONS" && class == "DATABASE" {
			return engine.BoolInt(c.bulk), true, nil
		}
		if c.sysadmin || perm == "CONNECT SQL" || perm == "CONNECT" || perm == "VIEW ANY DATABASE" {
			return int64(1), true, nil
		}
		if class == "SERVER" {
			return engine.BoolInt(x.srv.persona.EngineEdition != 5 && x.holdsServer(perm)), true, nil
		}
		return engine.BoolInt(x.holdsDatabase(perm)), true, nil // granted to the login's user (permissions.go)
	}
	return nil, false, nil
}

// hasSQL2022Functions tells whether the persona's SQL Server has the
// functions added in SQL Server 2022 (GREATEST, LEAST, DATETRUNC), as SQL
// Server 2022 and later and the Azure offerings do.
func (s *Server) hasSQL2022Functions() bool {
	return s.persona.Version.Major >= 16 || strings.HasPrefix(s.persona.Name, "azure")
}

// Variable implements Host.
func (x *execCtx) Variable(name string) (any, *sqlfront.SQLError) { return x.variable(name) }

// SubqueryRows implements Host.
func (x *execCtx) SubqueryRows(sel *sqlfront.SelectStmt, env *engine.EvalEnv, limit int) ([][]any, *sqlfront.SQLError) {
	return x.subqueryRows(sel, env, limit)
}

// ServerFunc implements Host: the metadata functions, then the security
// functions.
func (x *execCtx) ServerFunc(f engine.FuncArgs) (any, bool, *sqlfront.SQLError) {
	if v, ok, err := x.metadataFunc(f); ok {
		return v, ok, err
	}
	return x.securityFunc(f)
}

// Now implements Host.
func (x *execCtx) Now() time.Time { return x.srv.now() }

// SQL2022Functions implements Host.
func (x *execCtx) SQL2022Functions() bool { return x.srv.hasSQL2022Functions() }

// InSetCache implements Host.
func (x *execCtx) InSetCache() map[*sqlfront.InExpr]*engine.InSet {
	if x.inSets == nil {
		x.inSets = map[*sqlfront.InExpr]*engine.InSet{}
	}
	return x.inSets
}

// serverProperty answers SERVERPROPERTY; unknown properties are NULL, as in
// https://learn.microsoft.com/en-us/sql/t-sql/functions/serverproperty-transact-sql
func serverProperty(p string) any {
	switch strings.ToLower(p) {
	case "productversion":
		return productVersion
	case "productmajorversion":
		return "14"
	case "productminorversion":
		return "0"
	case "productlevel":
		return "RTM"
	case "productupdatelevel":
		return "CU15"
	case "edition":
		return "Developer Edition (64-bit)"
	case "engineedition":
		return int64(3)
	case "errorlogfilename":
		return errorLogFile
	case "instancedefaultlogpath":
		return dataDir
	case "instancedefaultdatapath":
		return dataDir
	case "machinename", "servername", "computernamephysicalnetbios":
		return serverName
	case "instancename":
		return nil
	case "isclustered", "ishadrenabled", "isintegratedsecurityonly", "issingleuser":
		return int64(0)
	case "collation":
		return "SQL_Latin1_General_CP1_CI_AS"
	case "processid":
		return int64(1)
	}
	return nil
}

package standin

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"github.com/queryreplay/queryreplay/internal/standin/engine"
	"math"
	"strings"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// scalarFunc evaluates a built-in scalar function. Unknown names are
// Msg 195, as in SQL Server.
func (x *execCtx) scalarFunc(name string, a []any) (any, *sqlfront.SQLError) {
	if v, ok, err := x.moreFunc(name, a); ok {
		return v, err
	}
	f := funcArgs{name, a}
	families := []func(funcArgs) (any, bool, *sqlfront.SQLError){
		x.metadataFunc, x.securityFunc, stringSliceFunc, stringSearchFunc, stringEditFunc, nullFunc, roundingFunc, x.systemFunc,
	}
	for _, family := range families {
		if v, ok, err := family(f); ok {
			return v, err
		}
	}
	return nil, engine.ErrNotBuiltin(strings.ToLower(name))
}

// builtin is the function's name without the sys schema it may be
// written with (sys.fn_varbintohexstr).
func (f funcArgs) builtin() string { return strings.TrimPrefix(f.name, "SYS.") }

// str is argument i as a string.
func (f funcArgs) str(i int) string { return engine.ValueString(f.a[i]) }

// metadataFunc evaluates the server, database, object and schema
// metadata functions.
func (x *execCtx) metadataFunc(f funcArgs) (any, bool, *sqlfront.SQLError) {
	name, a, argc, str, c := f.name, f.a, f.argc, f.str, x.conn
	switch f.builtin() {
	case "SERVERPROPERTY":
		if err := argc(1, 1); err != nil {
			return nil, true, err
		}
		return x.srv.serverProperty(str(0)), true, nil
	case "CURRENT_TRANSACTION_ID":
		return x.currentTransactionID(), true, nil // safety.go
	case "DB_ID":
		if len(a) == 0 {
			return int64(c.db.id), true, nil
		}
		if d := x.srv.dbByName(str(0)); d != nil {
			return int64(d.id), true, nil
		}
		return nil, true, nil
	case "DB_NAME":
		if len(a) == 0 || a[0] == nil {
			return c.db.name, true, nil
		}
		n, _ := engine.ConvertValue(a[0], engine.TBigInt)
		if id, ok := n.(int64); ok {
			if d := x.srv.dbByID(id); d != nil {
				return d.name, true, nil
			}
		}
		return nil, true, nil
	case "OBJECT_ID":
		if err := argc(1, 2); err != nil {
			return nil, true, err
		}
		if t := x.resolveTableName(str(0)); t != nil {
			return t.objectID, true, nil
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
			for _, t := range db.tables {
				if n, ok := id.(int64); ok && t.objectID == n {
					if name == "OBJECT_SCHEMA_NAME" {
						return t.schema, true, nil
					}
					return t.name, true, nil
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
func (x *execCtx) securityFunc(f funcArgs) (any, bool, *sqlfront.SQLError) {
	a, argc, str, c := f.a, f.argc, f.str, x.conn
	switch f.builtin() {
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
		if c.sysadmin {
			return int64(1), true, nil
		}
		return engine.BoolInt(perm == "CONNECT SQL" || perm == "CONNECT" || perm == "VIEW ANY DATABASE"), true, nil
	}
	return nil, false, nil
}

// stringSliceFunc evaluates the string functions that measure a string
// or cut out part of it.
func stringSliceFunc(f funcArgs) (any, bool, *sqlfront.SQLError) {
	name, a, argc, str, anyNull := f.name, f.a, f.argc, f.str, f.null
	switch f.builtin() {
	case "LEFT", "RIGHT":
		if err := argc(2, 2); err != nil {
			return nil, true, err
		}
		if anyNull() {
			return nil, true, nil
		}
		s := []rune(str(0))
		n, _ := engine.ConvertValue(a[1], engine.TBigInt)
		k := int(n.(int64))
		if k < 0 {
			return nil, true, sqlfront.NewError(536, 16, "Invalid length parameter passed to the %s function.", strings.ToLower(name))
		}
		if k > len(s) {
			k = len(s)
		}
		if name == "LEFT" {
			return string(s[:k]), true, nil
		}
		return string(s[len(s)-k:]), true, nil
	case "LEN":
		if a[0] == nil {
			return nil, true, nil
		}
		return int64(len([]rune(strings.TrimRight(str(0), " ")))), true, nil
	case "DATALENGTH":
		switch v := a[0].(type) {
		case nil:
			return nil, true, nil
		case string:
			return int64(2 * len([]rune(v))), true, nil
		case []byte:
			return int64(len(v)), true, nil
		case int64:
			return int64(4), true, nil
		}
		return int64(8), true, nil
	case "SUBSTRING":
		if err := argc(3, 3); err != nil {
			return nil, true, err
		}
		if anyNull() {
			return nil, true, nil
		}
		r := []rune(str(0))
		st, _ := engine.ConvertValue(a[1], engine.TBigInt)
		ln, _ := engine.ConvertValue(a[2], engine.TBigInt)
		from := int(st.(int64)) - 1
		to := from + int(ln.(int64))
		if from < 0 {
			from = 0
		}
		if to > len(r) {
			to = len(r)
		}
		if from >= to {
			return "", true, nil
		}
		return string(r[from:to]), true, nil
	}
	return nil, false, nil
}

// stringSearchFunc evaluates the string functions that find a substring
// or pattern.
func stringSearchFunc(f funcArgs) (any, bool, *sqlfront.SQLError) {
	a, argc, str, anyNull := f.a, f.argc, f.str, f.null
	switch f.builtin() {
	case "CHARINDEX":
		if err := argc(2, 3); err != nil {
			return nil, true, err
		}
		if anyNull() {
			return nil, true, nil
		}
		hay := strings.ToUpper(str(1))
		start := 0
		if len(a) == 3 {
			n, _ := engine.ConvertValue(a[2], engine.TBigInt)
			start = int(n.(int64)) - 1
			if start < 0 {
				start = 0
			}
		}
		r := []rune(hay)
		if start > len(r) {
			return int64(0), true, nil
		}
		i := strings.Index(string(r[start:]), strings.ToUpper(str(0)))
		if i < 0 {
			return int64(0), true, nil
		}
		return int64(len([]rune(string(r[start:])[:i])) + start + 1), true, nil
	case "PATINDEX":
		if err := argc(2, 2); err != nil {
			return nil, true, err
		}
		if anyNull() {
			return nil, true, nil
		}
		pat := str(0)
		s := []rune(str(1))
		inner := strings.TrimSuffix(strings.TrimPrefix(pat, "%"), "%")
		for i := range s {
			for j := i + 1; j <= len(s); j++ {
				if likeMatch(string(s[i:j]), inner) {
					return int64(i + 1), true, nil
				}
			}
		}
		return int64(0), true, nil
	}
	return nil, false, nil
}

// stringEditFunc evaluates the string functions that rewrite, trim,
// quote or join strings.
func stringEditFunc(f funcArgs) (any, bool, *sqlfront.SQLError) {
	a, argc, str, anyNull := f.a, f.argc, f.str, f.null
	switch f.builtin() {
	case "REVERSE":
		if a[0] == nil {
			return nil, true, nil
		}
		r := []rune(str(0))
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return string(r), true, nil
	case "REPLACE":
		if err := argc(3, 3); err != nil {
			return nil, true, err
		}
		if anyNull() {
			return nil, true, nil
		}
		return replaceCI(str(0), str(1), str(2)), true, nil
	case "UPPER":
		if a[0] == nil {
			return nil, true, nil
		}
		return strings.ToUpper(str(0)), true, nil
	case "LOWER":
		if a[0] == nil {
			return nil, true, nil
		}
		return strings.ToLower(str(0)), true, nil
	case "LTRIM":
		if a[0] == nil {
			return nil, true, nil
		}
		return strings.TrimLeft(str(0), " "), true, nil
	case "RTRIM":
		if a[0] == nil {
			return nil, true, nil
		}
		return strings.TrimRight(str(0), " "), true, nil
	case "TRIM":
		if a[0] == nil {
			return nil, true, nil
		}
		return strings.Trim(str(0), " "), true, nil
	case "QUOTENAME":
		if a[0] == nil {
			return nil, true, nil
		}
		q := "["
		if len(a) > 1 {
			q = str(1)
		}
		switch q {
		case "[", "]":
			return "[" + strings.ReplaceAll(str(0), "]", "]]") + "]", true, nil
		case "'":
			return "'" + strings.ReplaceAll(str(0), "'", "''") + "'", true, nil
		case `"`:
			return `"` + strings.ReplaceAll(str(0), `"`, `""`) + `"`, true, nil
		}
		return nil, true, nil
	case "CONCAT":
		var b strings.Builder
		for _, v := range a {
			b.WriteString(engine.ValueString(v))
		}
		return b.String(), true, nil
	}
	return nil, false, nil
}

// nullFunc evaluates the NULL-handling functions.
func nullFunc(f funcArgs) (any, bool, *sqlfront.SQLError) {
	a, argc := f.a, f.argc
	switch f.builtin() {
	case "ISNULL":
		if err := argc(2, 2); err != nil {
			return nil, true, err
		}
		if a[0] == nil {
			return a[1], true, nil
		}
		return a[0], true, nil
	case "COALESCE":
		for _, v := range a {
			if v != nil {
				return v, true, nil
			}
		}
		return nil, true, nil
	case "NULLIF":
		if err := argc(2, 2); err != nil {
			return nil, true, err
		}
		if a[0] != nil && a[1] != nil {
			if cmp, err := engine.CompareValues(a[0], a[1]); err == nil && cmp == 0 {
				return nil, true, nil
			}
		}
		return a[0], true, nil
	}
	return nil, false, nil
}

// roundingFunc evaluates ABS and the rounding functions.
func roundingFunc(f funcArgs) (any, bool, *sqlfront.SQLError) {
	name, a := f.name, f.a
	switch f.builtin() {
	case "ABS":
		switch v := a[0].(type) {
		case int64:
			if v < 0 {
				return -v, true, nil
			}
			return v, true, nil
		case float64:
			return math.Abs(v), true, nil
		}
		return nil, true, nil
	case "FLOOR", "CEILING", "ROUND":
		if name == "ROUND" && len(a) < 2 {
			return nil, true, sqlfront.NewError(174, 15, "The round function requires 2 to 3 arguments.")
		}
		if a[0] == nil {
			return nil, true, nil
		}
		digits := int64(0)
		if len(a) > 1 {
			if n, ok := a[1].(int64); ok {
				digits = n
			}
		}
		truncate := len(a) > 2 && a[2] != nil && toFloat(a[2]) != 0
		switch v := a[0].(type) {
		case int64:
			if name != "ROUND" || digits >= 0 {
				return v, true, nil
			}
			p := int64(math.Pow(10, float64(-digits)))
			if truncate {
				return v / p * p, true, nil
			}
			return int64(math.Round(float64(v)/float64(p))) * p, true, nil
		case float64:
			switch name {
			case "FLOOR":
				return math.Floor(v), true, nil
			case "CEILING":
				return math.Ceil(v), true, nil
			}
			p := math.Pow(10, float64(digits))
			if truncate {
				return math.Trunc(v*p) / p, true, nil
			}
			return math.Round(v*p) / p, true, nil
		}
		return a[0], true, nil
	}
	return nil, false, nil
}

// systemFunc evaluates the clock, NEWID and the undocumented page-locator
// and hex helpers.
func (x *execCtx) systemFunc(f funcArgs) (any, bool, *sqlfront.SQLError) {
	a := f.a
	switch f.builtin() {
	case "GETDATE", "SYSDATETIME", "CURRENT_TIMESTAMP", "GETUTCDATE", "SYSUTCDATETIME":
		return x.srv.now(), true, nil
	case "NEWID":
		var b [16]byte
		rand.Read(b[:])
		h := strings.ToUpper(hex.EncodeToString(b[:]))
		return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], true, nil
	case "FN_PHYSLOCFORMATTER":
		b, ok := a[0].([]byte)
		if !ok || len(b) != 8 {
			return nil, true, nil
		}
		page := int32(b[0]) | int32(b[1])<<8 | int32(b[2])<<16 | int32(b[3])<<24
		return fmt.Sprintf("(%d:%d:%d)", int(b[4])|int(b[5])<<8, page, int(b[6])|int(b[7])<<8), true, nil
	case "FN_VARBINTOHEXSTR":
		b, ok := a[0].([]byte)
		if !ok {
			return nil, true, nil
		}
		return "0x" + hex.EncodeToString(b), true, nil
	}
	return nil, false, nil
}

func replaceCI(s, old, repl string) string {
	if old == "" {
		return s
	}
	var b strings.Builder
	us, uo := strings.ToUpper(s), strings.ToUpper(old)
	for {
		i := strings.Index(us, uo)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteString(repl)
		s, us = s[i+len(old):], us[i+len(old):]
	}
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

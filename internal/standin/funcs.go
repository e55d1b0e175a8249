package standin

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
)

// scalarFunc evaluates a built-in scalar function. Unknown names are
// Msg 195, as in SQL Server.
func (x *execCtx) scalarFunc(name string, a []any) (any, *SQLError) {
	argc := func(min, max int) *SQLError {
		if len(a) < min || len(a) > max {
			return sqlErr(174, 15, "The %s function requires %d argument(s).", strings.ToLower(name), min)
		}
		return nil
	}
	str := func(i int) string { return valueString(a[i]) }
	anyNull := func() bool {
		for _, v := range a {
			if v == nil {
				return true
			}
		}
		return false
	}
	c := x.conn
	if v, ok, err := x.moreFunc(name, a); ok {
		return v, err
	}
	switch strings.TrimPrefix(name, "SYS.") {
	case "SERVERPROPERTY":
		if err := argc(1, 1); err != nil {
			return nil, err
		}
		return x.srv.serverProperty(str(0)), nil
	case "CURRENT_TRANSACTION_ID":
		return x.currentTransactionID(), nil // safety.go
	case "DB_ID":
		if len(a) == 0 {
			return int64(c.db.id), nil
		}
		if d := x.srv.dbByName(str(0)); d != nil {
			return int64(d.id), nil
		}
		return nil, nil
	case "DB_NAME":
		if len(a) == 0 || a[0] == nil {
			return c.db.name, nil
		}
		n, _ := convertValue(a[0], tBigInt)
		if id, ok := n.(int64); ok {
			if d := x.srv.dbByID(id); d != nil {
				return d.name, nil
			}
		}
		return nil, nil
	case "OBJECT_ID":
		if err := argc(1, 2); err != nil {
			return nil, err
		}
		if t := x.resolveTableName(str(0)); t != nil {
			return t.objectID, nil
		}
		return nil, nil
	case "OBJECT_NAME", "OBJECT_SCHEMA_NAME":
		if err := argc(1, 2); err != nil {
			return nil, err
		}
		db := c.db
		if len(a) == 2 {
			id, _ := convertValue(a[1], tBigInt)
			if n, ok := id.(int64); ok {
				db = x.srv.dbByID(n)
			}
		}
		id, _ := convertValue(a[0], tBigInt)
		if db != nil {
			for _, t := range db.tables {
				if n, ok := id.(int64); ok && t.objectID == n {
					if name == "OBJECT_SCHEMA_NAME" {
						return t.schema, nil
					}
					return t.name, nil
				}
			}
		}
		return nil, nil
	case "SCHEMA_NAME":
		if len(a) == 0 {
			return "dbo", nil
		}
		switch v, _ := convertValue(a[0], tBigInt); v {
		case int64(1):
			return "dbo", nil
		case int64(4):
			return "sys", nil
		}
		return nil, nil
	case "SCHEMA_ID":
		if len(a) == 0 || strings.EqualFold(str(0), "dbo") {
			return int64(1), nil
		}
		if strings.EqualFold(str(0), "sys") {
			return int64(4), nil
		}
		return nil, nil
	case "SUSER_NAME", "SUSER_SNAME", "ORIGINAL_LOGIN", "SYSTEM_USER", "CURRENT_USER":
		return c.user, nil
	case "USER_NAME":
		if c.sysadmin {
			return "dbo", nil
		}
		return c.user, nil
	case "IS_SRVROLEMEMBER":
		if err := argc(1, 2); err != nil {
			return nil, err
		}
		switch strings.ToLower(str(0)) {
		case "sysadmin":
			return boolInt(c.sysadmin), nil
		case "serveradmin", "securityadmin", "processadmin", "setupadmin", "bulkadmin", "diskadmin", "dbcreator", "public":
			return boolInt(c.sysadmin || strings.EqualFold(str(0), "public")), nil
		}
		return nil, nil
	case "IS_MEMBER":
		return boolInt(c.sysadmin), nil
	case "HAS_PERMS_BY_NAME":
		// https://learn.microsoft.com/en-us/sql/t-sql/functions/has-perms-by-name-transact-sql
		if err := argc(3, 5); err != nil {
			return nil, err
		}
		if a[2] == nil {
			return nil, nil
		}
		// a NULL securable and class ask about a server-level permission,
		// as in the documentation's HAS_PERMS_BY_NAME(null, null, 'VIEW
		// SERVER STATE') example
		class := "SERVER"
		if a[1] != nil {
			class = strings.ToUpper(str(1))
		}
		perm := strings.ToUpper(str(2))
		switch class {
		case "SERVER", "DATABASE", "OBJECT", "SCHEMA":
		default:
			return nil, nil
		}
		if perm == "ADMINISTER BULK OPERATIONS" && class == "SERVER" || perm == "ADMINISTER DATABASE BULK OPERATIONS" && class == "DATABASE" {
			return boolInt(c.bulk), nil
		}
		if c.sysadmin {
			return int64(1), nil
		}
		return boolInt(perm == "CONNECT SQL" || perm == "CONNECT" || perm == "VIEW ANY DATABASE"), nil
	case "LEFT", "RIGHT":
		if err := argc(2, 2); err != nil {
			return nil, err
		}
		if anyNull() {
			return nil, nil
		}
		s := []rune(str(0))
		n, _ := convertValue(a[1], tBigInt)
		k := int(n.(int64))
		if k < 0 {
			return nil, sqlErr(536, 16, "Invalid length parameter passed to the %s function.", strings.ToLower(name))
		}
		if k > len(s) {
			k = len(s)
		}
		if name == "LEFT" {
			return string(s[:k]), nil
		}
		return string(s[len(s)-k:]), nil
	case "LEN":
		if a[0] == nil {
			return nil, nil
		}
		return int64(len([]rune(strings.TrimRight(str(0), " ")))), nil
	case "DATALENGTH":
		switch v := a[0].(type) {
		case nil:
			return nil, nil
		case string:
			return int64(2 * len([]rune(v))), nil
		case []byte:
			return int64(len(v)), nil
		case int64:
			return int64(4), nil
		}
		return int64(8), nil
	case "CHARINDEX":
		if err := argc(2, 3); err != nil {
			return nil, err
		}
		if anyNull() {
			return nil, nil
		}
		hay := strings.ToUpper(str(1))
		start := 0
		if len(a) == 3 {
			n, _ := convertValue(a[2], tBigInt)
			start = int(n.(int64)) - 1
			if start < 0 {
				start = 0
			}
		}
		r := []rune(hay)
		if start > len(r) {
			return int64(0), nil
		}
		i := strings.Index(string(r[start:]), strings.ToUpper(str(0)))
		if i < 0 {
			return int64(0), nil
		}
		return int64(len([]rune(string(r[start:])[:i])) + start + 1), nil
	case "PATINDEX":
		if err := argc(2, 2); err != nil {
			return nil, err
		}
		if anyNull() {
			return nil, nil
		}
		pat := str(0)
		s := []rune(str(1))
		inner := strings.TrimSuffix(strings.TrimPrefix(pat, "%"), "%")
		for i := range s {
			for j := i + 1; j <= len(s); j++ {
				if likeMatch(string(s[i:j]), inner) {
					return int64(i + 1), nil
				}
			}
		}
		return int64(0), nil
	case "REVERSE":
		if a[0] == nil {
			return nil, nil
		}
		r := []rune(str(0))
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return string(r), nil
	case "SUBSTRING":
		if err := argc(3, 3); err != nil {
			return nil, err
		}
		if anyNull() {
			return nil, nil
		}
		r := []rune(str(0))
		st, _ := convertValue(a[1], tBigInt)
		ln, _ := convertValue(a[2], tBigInt)
		from := int(st.(int64)) - 1
		to := from + int(ln.(int64))
		if from < 0 {
			from = 0
		}
		if to > len(r) {
			to = len(r)
		}
		if from >= to {
			return "", nil
		}
		return string(r[from:to]), nil
	case "REPLACE":
		if err := argc(3, 3); err != nil {
			return nil, err
		}
		if anyNull() {
			return nil, nil
		}
		return replaceCI(str(0), str(1), str(2)), nil
	case "UPPER":
		if a[0] == nil {
			return nil, nil
		}
		return strings.ToUpper(str(0)), nil
	case "LOWER":
		if a[0] == nil {
			return nil, nil
		}
		return strings.ToLower(str(0)), nil
	case "LTRIM":
		if a[0] == nil {
			return nil, nil
		}
		return strings.TrimLeft(str(0), " "), nil
	case "RTRIM":
		if a[0] == nil {
			return nil, nil
		}
		return strings.TrimRight(str(0), " "), nil
	case "TRIM":
		if a[0] == nil {
			return nil, nil
		}
		return strings.Trim(str(0), " "), nil
	case "ISNULL":
		if err := argc(2, 2); err != nil {
			return nil, err
		}
		if a[0] == nil {
			return a[1], nil
		}
		return a[0], nil
	case "COALESCE":
		for _, v := range a {
			if v != nil {
				return v, nil
			}
		}
		return nil, nil
	case "NULLIF":
		if err := argc(2, 2); err != nil {
			return nil, err
		}
		if a[0] != nil && a[1] != nil {
			if cmp, err := compareValues(a[0], a[1]); err == nil && cmp == 0 {
				return nil, nil
			}
		}
		return a[0], nil
	case "QUOTENAME":
		if a[0] == nil {
			return nil, nil
		}
		q := "["
		if len(a) > 1 {
			q = str(1)
		}
		switch q {
		case "[", "]":
			return "[" + strings.ReplaceAll(str(0), "]", "]]") + "]", nil
		case "'":
			return "'" + strings.ReplaceAll(str(0), "'", "''") + "'", nil
		case `"`:
			return `"` + strings.ReplaceAll(str(0), `"`, `""`) + `"`, nil
		}
		return nil, nil
	case "CONCAT":
		var b strings.Builder
		for _, v := range a {
			b.WriteString(valueString(v))
		}
		return b.String(), nil
	case "GETDATE", "SYSDATETIME", "CURRENT_TIMESTAMP", "GETUTCDATE", "SYSUTCDATETIME":
		return x.srv.now(), nil
	case "NEWID":
		var b [16]byte
		rand.Read(b[:])
		h := strings.ToUpper(hex.EncodeToString(b[:]))
		return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
	case "ABS":
		switch v := a[0].(type) {
		case int64:
			if v < 0 {
				return -v, nil
			}
			return v, nil
		case float64:
			return math.Abs(v), nil
		}
		return nil, nil
	case "FLOOR", "CEILING", "ROUND":
		if name == "ROUND" && len(a) < 2 {
			return nil, sqlErr(174, 15, "The round function requires 2 to 3 arguments.")
		}
		if a[0] == nil {
			return nil, nil
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
				return v, nil
			}
			p := int64(math.Pow(10, float64(-digits)))
			if truncate {
				return v / p * p, nil
			}
			return int64(math.Round(float64(v)/float64(p))) * p, nil
		case float64:
			switch name {
			case "FLOOR":
				return math.Floor(v), nil
			case "CEILING":
				return math.Ceil(v), nil
			}
			p := math.Pow(10, float64(digits))
			if truncate {
				return math.Trunc(v*p) / p, nil
			}
			return math.Round(v*p) / p, nil
		}
		return a[0], nil
	case "FN_PHYSLOCFORMATTER":
		b, ok := a[0].([]byte)
		if !ok || len(b) != 8 {
			return nil, nil
		}
		page := int32(b[0]) | int32(b[1])<<8 | int32(b[2])<<16 | int32(b[3])<<24
		return fmt.Sprintf("(%d:%d:%d)", int(b[4])|int(b[5])<<8, page, int(b[6])|int(b[7])<<8), nil
	case "FN_VARBINTOHEXSTR":
		b, ok := a[0].([]byte)
		if !ok {
			return nil, nil
		}
		return "0x" + hex.EncodeToString(b), nil
	}
	return nil, errNotBuiltin(strings.ToLower(name))
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

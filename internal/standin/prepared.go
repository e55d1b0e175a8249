package standin

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/engine"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/tds"
)

// RPC procedures beyond plain sp_executesql: output parameters, and the
// prepared-statement procedures clients use for repeated statements
// (tedious' prepare/execute/unprepare, ODBC/JDBC):
//
//   - sp_executesql: https://learn.microsoft.com/en-us/sql/relational-databases/system-stored-procedures/sp-executesql-transact-sql
//     (OUTPUT parameters come back as RETURNVALUE tokens);
//   - sp_prepare (@handle int OUTPUT, @params, @stmt [, @options]):
//     https://learn.microsoft.com/en-us/sql/relational-databases/system-stored-procedures/sp-prepare-transact-sql
//   - sp_execute (@handle, args...): https://learn.microsoft.com/en-us/sql/relational-databases/system-stored-procedures/sp-execute-transact-sql
//   - sp_prepexec (@handle OUTPUT, @params, @stmt, args...): https://learn.microsoft.com/en-us/sql/relational-databases/system-stored-procedures/sp-prepexec-transact-sql
//   - sp_unprepare (@handle): https://learn.microsoft.com/en-us/sql/relational-databases/system-stored-procedures/sp-unprepare-transact-sql
//
// An unknown handle is Msg 8179, as SQL Server answers. Prepared handles
// belong to the session and end with it.

type preparedStmt struct {
	sql   string
	decls []paramDecl
}

// paramDecl is one entry of a parameter declaration list such as
// "@p1 int, @name nvarchar(10) OUTPUT".
type paramDecl struct {
	name   string // lower case, with "@"
	typ    string
	output bool
}

// parseParamDecls splits a declaration list at top-level commas (types such
// as decimal(10, 2) contain commas).
func parseParamDecls(list string) ([]paramDecl, *sqlfront.SQLError) {
	var out []paramDecl
	depth, start := 0, 0
	flush := func(item string) *sqlfront.SQLError {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil
		}
		fields := strings.Fields(item)
		if !strings.HasPrefix(fields[0], "@") || len(fields) < 2 {
			return sqlfront.ErrSyntaxNear(fields[0])
		}
		d := paramDecl{name: strings.ToLower(fields[0]), typ: strings.Join(fields[1:], " ")}
		last := strings.ToUpper(fields[len(fields)-1])
		if last == "OUTPUT" || last == "OUT" {
			d.output = true
			d.typ = strings.Join(fields[1:len(fields)-1], " ")
		}
		out = append(out, d)
		return nil
	}
	for i, r := range list {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				if err := flush(list[start:i]); err != nil {
					return nil, err
				}
				start = i + 1
			}
		}
	}
	if err := flush(list[start:]); err != nil {
		return nil, err
	}
	return out, nil
}

// bindArgs binds RPC arguments to declared parameters: named ones by name,
// unnamed ones by position (go-mssqldb names positional arguments @p1...).
func bindArgs(decls []paramDecl, args []tds.Param) (map[string]any, map[string]tds.Param, *sqlfront.SQLError) {
	values := map[string]any{}
	outputs := map[string]tds.Param{}
	for i, p := range args {
		name := strings.ToLower(p.Name)
		if name == "" {
			if i < len(decls) {
				name = decls[i].name
			} else {
				name = fmt.Sprintf("@p%d", i+1)
			}
		}
		if len(decls) > 0 && !declared(decls, name) {
			// Msg 8145: "%.*ls is not a parameter for procedure %.*ls."
			return nil, nil, sqlfront.NewError(8145, 16, "%s is not a parameter for procedure sp_executesql.", p.Name)
		}
		values[name] = normalizeParam(p.Value)
		if p.Output {
			outputs[name] = p
		}
	}
	for _, d := range decls {
		if _, ok := values[d.name]; !ok {
			// Msg 8178: the parameterized query expects a parameter that was not supplied
			return nil, nil, sqlfront.NewError(8178, 16, "The parameterized query '(%s)' expects the parameter '%s', which was not supplied.", declList(decls), d.name)
		}
	}
	return values, outputs, nil
}

func declared(decls []paramDecl, name string) bool {
	for _, d := range decls {
		if d.name == name {
			return true
		}
	}
	return false
}

func declList(decls []paramDecl) string {
	parts := make([]string, len(decls))
	for i, d := range decls {
		parts[i] = d.name + " " + d.typ
	}
	return strings.Join(parts, ",")
}

// rpc dispatches an RPC by procedure.
func (c *connState) rpc(ctx context.Context, call *tds.RPCCall, w tds.ResultWriter) error {
	if x, ok := call.ExecuteSQL(); ok {
		decls, err := parseParamDecls(x.ParamDecl)
		if err != nil {
			return toTDS(err)
		}
		return c.runWithOutputs(ctx, x.Statement, decls, x.Args, w)
	}
	switch procName(call) {
	case "sp_prepare":
		return c.spPrepare(ctx, call, w, false)
	case "sp_prepexec":
		return c.spPrepare(ctx, call, w, true)
	case "sp_execute":
		return c.spExecute(ctx, call, w)
	case "sp_unprepare":
		return c.spUnprepare(call)
	}
	return toTDS(engine.ErrProcNotFound(call.ProcName))
}

// procName is the call's procedure in lower case without "sys." / "dbo.".
func procName(call *tds.RPCCall) string {
	n := strings.ToLower(call.ProcName)
	n = strings.TrimPrefix(n, "sys.")
	return strings.TrimPrefix(n, "dbo.")
}

// runWithOutputs runs statement with args bound and sends the OUTPUT
// parameters' final values as RETURNVALUE tokens.
func (c *connState) runWithOutputs(ctx context.Context, statement string, decls []paramDecl, args []tds.Param, w tds.ResultWriter) error {
	values, outputs, err := bindArgs(decls, args)
	if err != nil {
		return toTDS(err)
	}
	if rerr := c.run(ctx, statement, values, w, true); rerr != nil {
		return rerr
	}
	for _, a := range args {
		name := strings.ToLower(a.Name)
		p, ok := outputs[name]
		if !ok {
			continue
		}
		c.srv.mu.Lock()
		v := values[name]
		c.srv.mu.Unlock()
		out, cerr := outputValue(v, p.Type)
		if cerr != nil {
			return toTDS(cerr)
		}
		if err := w.ReturnValue(tds.Param{Name: p.Name, Type: p.Type, Value: out, Output: true}); err != nil {
			return err
		}
	}
	return nil
}

// outputValue converts a stand-in value to the Go type the parameter's
// declared TDS type takes.
func outputValue(v any, ti tds.TypeInfo) (any, *sqlfront.SQLError) {
	if v == nil {
		return nil, nil
	}
	fail := func() (any, *sqlfront.SQLError) {
		return nil, sqlfront.NewError(8114, 16, "Error converting data type %s to %s.", valueTypeName(v), strings.ToLower(ti.Type.String()))
	}
	switch ti.Type {
	case tds.TypeInt, tds.TypeBigInt, tds.TypeSmallInt, tds.TypeTinyInt:
		switch x := v.(type) {
		case int64:
			return x, nil
		case float64:
			return int64(x), nil
		case bool:
			if x {
				return int64(1), nil
			}
			return int64(0), nil
		case string:
			n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
			if err != nil {
				return fail()
			}
			return n, nil
		}
	case tds.TypeBit:
		if b, ok := engine.Truth(v); ok {
			return b, nil
		}
	case tds.TypeFloat, tds.TypeReal, tds.TypeDecimal:
		switch x := v.(type) {
		case int64:
			return float64(x), nil
		case float64:
			return x, nil
		case string:
			f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if err != nil {
				return fail()
			}
			return f, nil
		}
	case tds.TypeNVarChar, tds.TypeVarChar, tds.TypeNChar, tds.TypeChar, tds.TypeXML:
		if b, ok := v.([]byte); ok {
			return string(b), nil
		}
		return engine.ValueString(v), nil
	case tds.TypeVarBinary, tds.TypeBinary:
		switch x := v.(type) {
		case []byte:
			return x, nil
		case string:
			return []byte(x), nil
		}
	case tds.TypeDateTime2, tds.TypeDateTime, tds.TypeDate, tds.TypeTime, tds.TypeDateTimeOffset:
		if t, ok := v.(time.Time); ok {
			return t, nil
		}
	case tds.TypeUniqueIdentifier:
		return engine.ValueString(v), nil
	case 0: // a typeless NULL argument: answer as nvarchar
		return engine.ValueString(v), nil
	}
	return fail()
}

func valueTypeName(v any) string {
	switch v.(type) {
	case int64:
		return "bigint"
	case float64:
		return "float"
	case string:
		return "nvarchar"
	case []byte:
		return "varbinary"
	case bool:
		return "bit"
	case time.Time:
		return "datetime2"
	}
	return "sql_variant"
}

// param returns the call's parameter by name or, failing that, position.
func param(call *tds.RPCCall, name string, pos int) (tds.Param, bool) {
	for _, p := range call.Params {
		if strings.EqualFold(p.Name, name) {
			return p, true
		}
	}
	if pos < len(call.Params) && call.Params[pos].Name == "" {
		return call.Params[pos], true
	}
	return tds.Param{}, false
}

func errPreparedHandle(h int64) *sqlfront.SQLError { // Msg 8179
	return sqlfront.NewError(8179, 16, "Could not find prepared statement with handle %d.", h)
}

// spPrepare implements sp_prepare and, with exec, sp_prepexec.
func (c *connState) spPrepare(ctx context.Context, call *tds.RPCCall, w tds.ResultWriter, exec bool) error {
	hp, ok := param(call, "@handle", 0)
	if !ok || !hp.Output {
		return toTDS(sqlfront.NewError(201, 16, "Procedure or function '%s' expects parameter '@handle', which was not supplied.", procName(call)))
	}
	declP, _ := param(call, "@params", 1)
	stmtP, ok := param(call, "@stmt", 2)
	stmt, isString := stmtP.Value.(string)
	if !ok || !isString || stmt == "" {
		return toTDS(sqlfront.NewError(201, 16, "Procedure or function '%s' expects parameter '@stmt', which was not supplied.", procName(call)))
	}
	declText, _ := declP.Value.(string)
	decls, err := parseParamDecls(declText)
	if err != nil {
		return toTDS(err)
	}
	if _, _, perr := sqlfront.ParseBatchSpans(stmt); perr != nil {
		return toTDS(perr) // SQL Server compiles at prepare: a syntax error fails it
	}
	c.srv.mu.Lock()
	if c.prepared == nil {
		c.prepared = map[int32]*preparedStmt{}
	}
	c.nextHandle++
	h := c.nextHandle
	c.prepared[h] = &preparedStmt{sql: stmt, decls: decls}
	c.srv.mu.Unlock()
	if err := w.ReturnValue(tds.Param{Name: hp.Name, Type: tds.TypeInfo{Type: tds.TypeInt}, Value: int64(h), Output: true}); err != nil {
		return err
	}
	if !exec {
		return nil
	}
	return c.runWithOutputs(ctx, stmt, decls, rest(call.Params, 3), w)
}

// rest returns the arguments after the procedure's own parameters.
func rest(ps []tds.Param, n int) []tds.Param {
	if len(ps) <= n {
		return nil
	}
	return ps[n:]
}

func (c *connState) lookupPrepared(call *tds.RPCCall) (int32, *preparedStmt, *sqlfront.SQLError) {
	hp, ok := param(call, "@handle", 0)
	h, isInt := hp.Value.(int64)
	if !ok || !isInt {
		return 0, nil, sqlfront.NewError(201, 16, "Procedure or function '%s' expects parameter '@handle', which was not supplied.", procName(call))
	}
	c.srv.mu.Lock()
	defer c.srv.mu.Unlock()
	p := c.prepared[int32(h)]
	if p == nil {
		return 0, nil, errPreparedHandle(h)
	}
	return int32(h), p, nil
}

func (c *connState) spExecute(ctx context.Context, call *tds.RPCCall, w tds.ResultWriter) error {
	_, p, err := c.lookupPrepared(call)
	if err != nil {
		return toTDS(err)
	}
	return c.runWithOutputs(ctx, p.sql, p.decls, rest(call.Params, 1), w)
}

func (c *connState) spUnprepare(call *tds.RPCCall) error {
	h, _, err := c.lookupPrepared(call)
	if err != nil {
		return toTDS(err)
	}
	c.srv.mu.Lock()
	delete(c.prepared, h)
	c.srv.mu.Unlock()
	return nil
}

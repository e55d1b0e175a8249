package tracer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/sqlconn"
	"github.com/queryreplay/queryreplay/pkg/tsql"
)

// maxModuleDepth bounds how deep procedure calls (and the triggers their
// modifications fire) are followed; a deeper chain is refused. SQL Server
// itself stops at 32 nesting levels
// (https://learn.microsoft.com/en-us/sql/t-sql/functions/nestlevel-transact-sql).
const maxModuleDepth = 8

// maxModules bounds the definitions one trace reads.
const maxModules = 256

// module is one procedure or trigger as the catalog describes it.
type module struct {
	id   int64
	name string         // schema.name, for messages
	typ  string         // sys.objects.type: P, PC, X, TR, TA, …
	def  sql.NullString // OBJECT_DEFINITION: NULL when encrypted, CLR or not visible
}

// moduleSource reads definitions from the catalog.
type moduleSource interface {
	// procedure returns the object a call names (found false when none).
	procedure(ctx context.Context, name tsql.Name) (m module, found bool, err error)
	// triggers returns the enabled DML triggers on the named table, or on
	// every table of the database when name resolves to none (an alias, a
	// CTE), so that no trigger goes unchecked.
	triggers(ctx context.Context, name tsql.Name) ([]module, error)
}

// pending is a module still to check, and the chain that reached it.
type pending struct {
	m     module
	depth int
	via   string
}

// checkModules reads and classifies every procedure the batch calls and
// every trigger its modifications fire, recursively: the batch may run only
// if every statement of each is allowed. The returned classification is
// the batch's with theirs merged.
func checkModules(ctx context.Context, src moduleSource, class tsql.Classification) (tsql.Classification, error) {
	w := &moduleWalk{src: src, seen: map[int64]bool{}, out: class}
	if err := w.calls(ctx, class.Calls, 1, "the batch"); err != nil {
		return class, err
	}
	w.out.Calls = nil
	if err := w.fireTriggers(ctx, class.Targets, 1, "the batch"); err != nil {
		return class, err
	}
	for len(w.queue) > 0 {
		p := w.queue[0]
		w.queue = w.queue[1:]
		if err := w.check(ctx, p); err != nil {
			return class, err
		}
	}
	return w.out, nil
}

// moduleWalk is one run of checkModules.
type moduleWalk struct {
	src   moduleSource
	seen  map[int64]bool
	queue []pending
	out   tsql.Classification
	read  int
}

func (w *moduleWalk) push(p pending) error {
	if w.seen[p.m.id] {
		return nil
	}
	if p.depth > maxModuleDepth {
		return &tsql.RefusedError{Reason: fmt.Sprintf("%s %s is nested more than %d deep (via %s); QueryReplay follows procedures and triggers to that depth only", kindName(p.m.typ), p.m.name, maxModuleDepth, p.via)}
	}
	w.read++
	if w.read > maxModules {
		return &tsql.RefusedError{Reason: fmt.Sprintf("the batch reaches more than %d procedures and triggers", maxModules)}
	}
	w.seen[p.m.id] = true
	w.queue = append(w.queue, p)
	return nil
}

// calls looks up each called procedure.
func (w *moduleWalk) calls(ctx context.Context, calls []tsql.Call, depth int, via string) error {
	for _, c := range calls {
		m, found, err := w.src.procedure(ctx, c.Proc)
		if err != nil {
			return fmt.Errorf("read the definition of %s: %w", c.Proc, err)
		}
		if !found {
			return &tsql.RefusedError{Reason: fmt.Sprintf("%s calls %s (line %d: %s), which is not a procedure QueryReplay can find in this database, so its statements cannot be read", via, c.Proc, c.Line, c.Statement), Line: c.Line, Statement: c.Statement}
		}
		if err := w.push(pending{m: m, depth: depth, via: via}); err != nil {
			return err
		}
	}
	return nil
}

// fireTriggers looks up the triggers on each modified table.
func (w *moduleWalk) fireTriggers(ctx context.Context, targets []tsql.Name, depth int, via string) error {
	for _, t := range targets {
		if len(t.Parts) > 2 {
			return &tsql.RefusedError{Reason: fmt.Sprintf("%s modifies %s, a table named with its database, whose triggers QueryReplay does not read; trace it from that database", via, t)}
		}
		list, err := w.src.triggers(ctx, t)
		if err != nil {
			return fmt.Errorf("read the triggers of %s: %w", t, err)
		}
		for _, m := range list {
			if err := w.push(pending{m: m, depth: depth, via: via}); err != nil {
				return err
			}
		}
	}
	return nil
}

// check classifies one module and queues what it calls and fires.
func (w *moduleWalk) check(ctx context.Context, p pending) error {
	what := kindName(p.m.typ) + " " + p.m.name
	switch {
	case p.m.typ == "X":
		return &tsql.RefusedError{Reason: fmt.Sprintf("%s is an extended procedure: it runs code outside SQL Server, which no rollback undoes and QueryReplay cannot inspect", what)}
	case p.m.typ == "PC" || p.m.typ == "TA":
		return &tsql.RefusedError{Reason: fmt.Sprintf("%s is a CLR module: its code is not T-SQL QueryReplay can read", what)}
	case p.m.typ != "P" && p.m.typ != "TR":
		return &tsql.RefusedError{Reason: fmt.Sprintf("%s is not a T-SQL procedure (type %s)", what, strings.TrimSpace(p.m.typ))}
	case !p.m.def.Valid:
		// OBJECT_DEFINITION returns NULL for an encrypted module or one the
		// login may not see: https://learn.microsoft.com/en-us/sql/t-sql/functions/object-definition-transact-sql
		return &tsql.RefusedError{Reason: fmt.Sprintf("%s cannot be read: its definition is NULL (created WITH ENCRYPTION, or the login lacks VIEW DEFINITION), so its statements cannot be classified", what)}
	}
	_, c, err := tsql.ClassifyModule(p.m.def.String)
	if err != nil {
		var re *tsql.RefusedError
		if errors.As(err, &re) {
			return &tsql.RefusedError{Reason: fmt.Sprintf("%s (called from %s): %s", what, p.via, re.Reason), Line: re.Line, Statement: re.Statement}
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	w.out.Merge(tsql.Classification{Modification: c.Modification, Verbs: c.Verbs, Warnings: c.Warnings})
	if err := w.calls(ctx, c.Calls, p.depth+1, what); err != nil {
		return err
	}
	return w.fireTriggers(ctx, c.Targets, p.depth+1, what)
}

func kindName(typ string) string {
	switch strings.TrimSpace(typ) {
	case "TR", "TA":
		return "trigger"
	}
	return "procedure"
}

// catalogModules reads modules through the control connection. Every name
// is a parameter (OBJECT_ID(@name)); nothing is spliced.
type catalogModules struct{ c Conn }

// sqlProcedure: the object a call names, with its definition
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-objects-transact-sql,
// https://learn.microsoft.com/en-us/sql/t-sql/functions/object-definition-transact-sql).
const sqlProcedure = "SELECT o.object_id, OBJECT_SCHEMA_NAME(o.object_id) + N'.' + o.name, o.type, OBJECT_DEFINITION(o.object_id) FROM sys.objects AS o WHERE o.object_id = OBJECT_ID(@name)"

// sqlTriggers: the enabled DML triggers on a table, or on every table
// when @name resolves to none
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-triggers-transact-sql).
const sqlTriggers = "SELECT t.object_id, OBJECT_SCHEMA_NAME(t.object_id) + N'.' + t.name, t.type, OBJECT_DEFINITION(t.object_id) FROM sys.triggers AS t " +
	"WHERE t.parent_class = 1 AND t.is_disabled = 0 AND (t.parent_id = OBJECT_ID(@name) OR OBJECT_ID(@name) IS NULL)"

func (s catalogModules) procedure(ctx context.Context, name tsql.Name) (module, bool, error) {
	list, err := s.query(ctx, sqlProcedure, name)
	if err != nil || len(list) == 0 {
		return module{}, false, err
	}
	return list[0], true, nil
}

func (s catalogModules) triggers(ctx context.Context, name tsql.Name) ([]module, error) {
	return s.query(ctx, sqlTriggers, name)
}

func (s catalogModules) query(ctx context.Context, q string, name tsql.Name) ([]module, error) {
	rows, err := s.c.QueryContext(ctx, q, sql.Named("name", name.Quoted()))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []module
	for rows.Next() {
		var m module
		var n, typ sql.NullString
		if err := rows.Scan(&m.id, &n, &typ, &m.def); err != nil {
			return nil, err
		}
		m.name, m.typ = n.String, strings.TrimSpace(typ.String)
		if len(out) >= maxModules {
			return nil, fmt.Errorf("more than %d triggers", maxModules)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// checkModules runs checkModules for the run's batch on the control
// connection, before anything is created, and applies the modification
// policy to what the procedures and triggers do.
func (r *run) checkModules(ctx context.Context) error {
	if len(r.class.Calls) == 0 && len(r.class.Targets) == 0 {
		return nil
	}
	class, err := checkModules(ctx, catalogModules{r.conn}, r.class)
	if err != nil {
		r.noteConnErr(err)
		return err
	}
	if class.Modification && r.t.policy.Modifications == ModificationsRefuse {
		return &tsql.RefusedError{Reason: fmt.Sprintf("the batch modifies data through the procedures and triggers it runs (%s) and the configuration refuses modifications", strings.Join(class.Verbs, ", "))}
	}
	r.class = class
	return nil
}

// asParameterized turns a batch that is one sp_executesql call with literal
// values (the form ORMs send and Profiler captures) into its statement and
// typed parameters, so that it is traced as the application ran it: the
// statement classified like any batch, the values passed as typed
// arguments, never spliced. Any other batch is returned unchanged.
func asParameterized(o Options) Options {
	if o.Params != nil {
		return o
	}
	call, ok := tsql.SplitExecuteSQL(o.SQL)
	if !ok || call.Params == "" {
		return o
	}
	params, err := bindLiterals(call)
	if err != nil {
		return o // runs as the batch it is
	}
	o.SQL, o.Params = call.Statement, params
	return o
}

// bindLiterals matches sp_executesql's values to its declarations: by
// position first, then by name, as sp_executesql binds them.
func bindLiterals(call tsql.ExecuteSQL) (*sqlconn.Params, error) {
	decl, err := sqlconn.ParseDeclarations(call.Params)
	if err != nil {
		return nil, err
	}
	if len(call.Args) != len(decl) {
		return nil, fmt.Errorf("%d declared, %d values", len(decl), len(call.Args))
	}
	set := make([]bool, len(decl))
	named := false
	for i, a := range call.Args {
		at := i
		if a.Name != "" {
			named = true
			at = -1
			for k, d := range decl {
				if strings.EqualFold(d.Name, a.Name) {
					at = k
				}
			}
		} else if named {
			return nil, fmt.Errorf("a value by position follows one by name")
		}
		if at < 0 || set[at] {
			return nil, fmt.Errorf("value %d matches no declaration", i+1)
		}
		if up := strings.ToUpper(decl[at].Type); strings.HasSuffix(up, " OUTPUT") || strings.HasSuffix(up, " OUT") {
			return nil, fmt.Errorf("%s is an OUTPUT parameter", decl[at].Name)
		}
		v, err := sqlconn.LiteralValue(a.Literal)
		if err != nil {
			return nil, err
		}
		set[at] = true
		decl[at].Compiled, decl[at].Value = a.Literal, v
	}
	return &sqlconn.Params{Decl: call.Params, List: decl}, nil
}

package tracer

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/internal/tsqlcorpus"
	"github.com/queryreplay/queryreplay/pkg/tsql"
)

// fakeModules is a catalog of procedures and triggers by name: the
// stand-in has no triggers, so the trigger side is tested against it.
type fakeModules struct {
	procs map[string]string
	trigs map[string]string
	asked []string
	ids   map[string]int64
}

// id gives each module its own object id.
func (f *fakeModules) id(name string) int64 {
	if f.ids == nil {
		f.ids = map[string]int64{}
	}
	if _, ok := f.ids[name]; !ok {
		f.ids[name] = int64(len(f.ids) + 1)
	}
	return f.ids[name]
}

func (f *fakeModules) procedure(_ context.Context, n tsql.Name) (module, bool, error) {
	f.asked = append(f.asked, n.Quoted())
	name := n.String()
	if len(n.Parts) == 1 {
		name = "dbo." + name
	}
	def, ok := f.procs[name]
	if !ok {
		return module{}, false, nil
	}
	return module{id: f.id(name), name: name, typ: "P", def: sql.NullString{String: def, Valid: def != ""}}, true, nil
}

func (f *fakeModules) triggers(_ context.Context, n tsql.Name) ([]module, error) {
	def, ok := f.trigs[n.String()]
	if !ok {
		return nil, nil
	}
	return []module{{id: f.id("trigger on " + n.String()), name: "dbo.trg", typ: "TR", def: sql.NullString{String: def, Valid: true}}}, nil
}

// TestCheckModulesPrograms: a batch that reaches a procedure or trigger
// that commits, runs dynamic SQL or an extended procedure, runs as another
// principal or cannot be read is refused with that module's reason; a
// procedure that modifies makes the batch a modification.
func TestCheckModulesPrograms(t *testing.T) {
	for _, p := range tsqlcorpus.Programs {
		class, err := tsql.ClassifyWith(p.Batch, tsql.Options{UserProcedures: true})
		if err != nil {
			t.Fatalf("ClassifyWith(%q): %v", p.Batch, err)
		}
		got, err := checkModules(context.Background(), &fakeModules{procs: p.Procs, trigs: p.Triggers}, class)
		if p.Refuse != "" {
			var re *tsql.RefusedError
			if !errors.As(err, &re) || !strings.Contains(re.Reason, p.Refuse) {
				t.Errorf("%q: %v; want a refusal naming %q", p.Batch, err, p.Refuse)
			}
			continue
		}
		if err != nil || got.Modification != p.Mod {
			t.Errorf("%q: %+v, %v; want modification %v", p.Batch, got, err, p.Mod)
		}
	}
}

// TestCheckModulesNamesTheProcedure: the refusal says which procedure and
// statement, and through which caller.
func TestCheckModulesNamesTheProcedure(t *testing.T) {
	f := &fakeModules{procs: map[string]string{
		"dbo.Outer": "CREATE PROCEDURE dbo.Outer AS EXEC dbo.Inner",
		"dbo.Inner": "CREATE PROCEDURE dbo.Inner AS\nSELECT 1\nCOMMIT",
	}}
	class, _ := tsql.ClassifyWith("EXEC [dbo].[Outer]", tsql.Options{UserProcedures: true})
	_, err := checkModules(context.Background(), f, class)
	var re *tsql.RefusedError
	if !errors.As(err, &re) || !strings.Contains(re.Reason, "procedure dbo.Inner (called from procedure dbo.Outer): line 3 (COMMIT)") {
		t.Fatalf("refusal %v", err)
	}
	if strings.Join(f.asked, " ") != "[dbo].[Outer] [dbo].[Inner]" {
		t.Errorf("asked for %q: names go as QUOTENAME'd parameters", f.asked)
	}
}

// TestCheckModulesDepth: a chain deeper than maxModuleDepth is refused.
func TestCheckModulesDepth(t *testing.T) {
	procs := map[string]string{}
	names := []string{"dbo.A", "dbo.B", "dbo.C", "dbo.D", "dbo.E", "dbo.F", "dbo.G", "dbo.H", "dbo.I", "dbo.J"}
	for i, n := range names {
		body := "SELECT 1"
		if i+1 < len(names) {
			body = "EXEC " + names[i+1]
		}
		procs[n] = "CREATE PROCEDURE " + n + " AS " + body
	}
	class, _ := tsql.ClassifyWith("EXEC dbo.A", tsql.Options{UserProcedures: true})
	_, err := checkModules(context.Background(), &fakeModules{procs: procs}, class)
	if err == nil || !strings.Contains(err.Error(), "nested more than 8 deep") {
		t.Fatalf("err = %v; want the depth limit", err)
	}
	delete(procs, "dbo.J")
	procs["dbo.I"] = "CREATE PROCEDURE dbo.I AS SELECT 1"
	for _, n := range names[:2] {
		delete(procs, n)
	}
	class, _ = tsql.ClassifyWith("EXEC dbo.C", tsql.Options{UserProcedures: true})
	if _, err := checkModules(context.Background(), &fakeModules{procs: procs}, class); err != nil {
		t.Fatalf("a chain of 7: %v", err)
	}
}

// TestAsParameterized: the form ORMs send becomes the statement and its
// typed parameters, bound by position and by name.
func TestAsParameterized(t *testing.T) {
	o := asParameterized(Options{SQL: "EXEC sp_executesql N'SELECT * FROM dbo.Orders WHERE CustomerID = @c AND Region = @r', N'@c int, @r nvarchar(10)', 42, @r = N'West'"})
	if o.SQL != "SELECT * FROM dbo.Orders WHERE CustomerID = @c AND Region = @r" || o.Params == nil || o.Params.Decl != "@c int, @r nvarchar(10)" {
		t.Fatalf("asParameterized = %q, %+v", o.SQL, o.Params)
	}
	if v := o.Params.Values(); len(v) != 2 || v[0] != "42" || v[1] != "West" {
		t.Errorf("values %#v", v)
	}
	for _, keep := range []string{
		"EXEC sp_executesql N'SELECT @c', N'@c int', @d = 1",
		"EXEC sp_executesql N'SELECT @c', N'@c int', @c = 1, @c = 2",
		"EXEC sp_executesql N'SELECT @c', N'@c int'",
		"EXEC sp_executesql N'SELECT @c', N'@c int OUTPUT', 1",
		"EXEC sp_executesql N'SELECT @c, @d', N'@c int, @d int', @c = 1, 2",
		"EXEC sp_executesql N'SELECT 1'",
		"SELECT 1",
	} {
		if o := asParameterized(Options{SQL: keep}); o.SQL != keep || o.Params != nil {
			t.Errorf("asParameterized(%q) = %q, %+v; want it unchanged", keep, o.SQL, o.Params)
		}
	}
}

// FuzzAsParameterized: whatever the batch, a split call's values match its
// declarations one for one.
func FuzzAsParameterized(f *testing.F) {
	f.Add("EXEC sp_executesql N'SELECT @c', N'@c int', @c = 42")
	f.Add("EXEC sp_executesql N'SELECT @a, @b', N'@a int, @b varbinary(4)', 1, @b = 0x0A")
	f.Add("EXEC sp_executesql N'SELECT @a', N'@a decimal(10, 2)', -1.5")
	f.Fuzz(func(t *testing.T, src string) {
		o := asParameterized(Options{SQL: src})
		if o.Params == nil {
			if o.SQL != src {
				t.Fatalf("changed without parameters: %q", o.SQL)
			}
			return
		}
		if _, err := o.Validate(Policy{}); err != nil {
			var re *tsql.RefusedError
			if !errors.As(err, &re) {
				t.Fatalf("Validate: %v", err)
			}
		}
	})
}

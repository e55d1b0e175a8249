package standin

import (
	"bytes"
	"path"
	"sort"
	"strings"

	"github.com/queryreplay/queryreplay/internal/standin/engine"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/standin/xevents"
)

// Reading event files as files: OPENROWSET(BULK N'<path>', SINGLE_BLOB)
// returns one row, one varbinary(max) column BulkColumn, with the file's
// bytes
// (https://learn.microsoft.com/en-us/sql/t-sql/functions/openrowset-bulk-transact-sql).
// It needs ADMINISTER BULK OPERATIONS, or ADMINISTER DATABASE BULK
// OPERATIONS
// (https://learn.microsoft.com/en-us/sql/relational-databases/import-export/import-bulk-data-by-using-bulk-insert-or-openrowset-bulk-sql-server
// "Permissions"); without it SQL Server answers Msg 4834, and for a path
// that does not exist Msg 4860. The stand-in's files are its event files
// (kept in memory as event XML), rendered as .xel through
// Options.XELEncoder. sys.dm_os_enumerate_filesystem lists them.

func errBulkPermission() *sqlfront.SQLError {
	return sqlfront.NewError(4834, 16, "You do not have permission to use the bulk load statement.")
}

func errBulkNoFile(p string) *sqlfront.SQLError {
	return sqlfront.NewError(4860, 16, "Cannot bulk load. The file \"%s\" does not exist or you don't have file access rights.", p)
}

// eventFile finds an event file by its full path (case-insensitive, either
// slash, as SQL Server on Linux maps C:\x to /x).
func (s *Server) eventFile(p string) *xevents.File {
	norm := func(s string) string {
		s = strings.ReplaceAll(s, `\`, "/")
		if len(s) >= 2 && s[1] == ':' {
			s = s[2:]
		}
		return strings.ToLower(s)
	}
	want := norm(p)
	for name, f := range s.files {
		if norm(name) == want {
			return f
		}
	}
	return nil
}

func (x *execCtx) openRowsetBulk(f *sqlfront.TableFunc, args []any) (*engine.Relation, *sqlfront.SQLError) {
	if f.Bulk != "SINGLE_BLOB" || len(args) != 1 {
		return nil, sqlfront.ErrSyntaxNear("OPENROWSET")
	}
	if !x.conn.bulk {
		return nil, errBulkPermission()
	}
	p, ok := args[0].(string)
	if !ok {
		return nil, errBulkNoFile(engine.ValueString(args[0]))
	}
	x.srv.dispatchDue()
	file := x.srv.eventFile(p)
	if file == nil || x.srv.opts.XELEncoder == nil {
		return nil, errBulkNoFile(p)
	}
	var events []string
	for _, b := range file.Buffers {
		for _, e := range b.Events {
			events = append(events, e.File)
		}
	}
	var buf bytes.Buffer
	if err := x.srv.opts.XELEncoder(events, &buf); err != nil {
		x.srv.opts.Logger.Error("standin: XELEncoder failed", "file", p, "err", err)
		return nil, sqlfront.NewError(4861, 16, "Cannot bulk load because the file \"%s\" could not be read.", p)
	}
	return &engine.Relation{Cols: cols("BulkColumn", engine.TVarBin(0)), Rows: [][]any{{buf.Bytes()}}}, nil
}

// enumerateFilesystem implements sys.dm_os_enumerate_filesystem(path,
// pattern) for the event files
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-os-enumerate-filesystem-transact-sql;
// it needs VIEW SERVER STATE, which only the sysadmin has here). Only files
// directly in path are listed; other files of the server are not emulated.
func (x *execCtx) enumerateFilesystem(args []any) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("full_filesystem_path", engine.TNVar(512), "parent_directory", engine.TNVar(512), "file_or_directory_name", engine.TNVar(512),
		"level", engine.TInt, "is_directory", engine.TBit, "size_in_bytes", engine.TBigInt)}
	if !x.conn.sysadmin {
		return nil, sqlfront.NewError(300, 14, "VIEW SERVER STATE permission was denied on object 'server', database 'master'.")
	}
	dir, _ := args[0].(string)
	pattern, _ := args[1].(string)
	if pattern == "" {
		pattern = "*"
	}
	norm := func(s string) string { return strings.TrimRight(strings.ToLower(strings.ReplaceAll(s, `\`, "/")), "/") }
	x.srv.dispatchDue()
	var names []string
	for name := range x.srv.files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		f := x.srv.files[name]
		parent, base := path.Split(strings.ReplaceAll(name, `\`, "/"))
		if norm(parent) != norm(dir) {
			continue
		}
		if ok, err := path.Match(strings.ToLower(pattern), strings.ToLower(base)); err != nil || !ok {
			continue
		}
		r.Rows = append(r.Rows, []any{name, strings.TrimRight(parent, "/"), base, int64(0), false, f.Size})
	}
	return r, nil
}

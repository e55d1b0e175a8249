package tracer

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/queryreplay/queryreplay/pkg/tsql"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// The binary read-back path: the session's .xel files are fetched whole and
// decoded locally with xe.XELReader, which is faster than having the server
// render every event as XML (sys.fn_xe_file_target_read_file) and sends
// fewer bytes.
//
//   - Permission: OPENROWSET(BULK …) needs ADMINISTER BULK OPERATIONS (or,
//     on Azure SQL Database, ADMINISTER DATABASE BULK OPERATIONS):
//     https://learn.microsoft.com/en-us/sql/t-sql/functions/openrowset-bulk-transact-sql
//     and https://learn.microsoft.com/en-us/sql/relational-databases/import-export/import-bulk-data-by-using-bulk-insert-or-openrowset-bulk-sql-server
//     (Permissions), checked with HAS_PERMS_BY_NAME
//     (https://learn.microsoft.com/en-us/sql/t-sql/functions/has-perms-by-name-transact-sql).
//   - File list: SQL Server names the files <name>_0_<FILETIME>.xel, with
//     rollover files; fn_xe_file_target_read_file cannot list them, so they
//     are found with sys.dm_os_enumerate_filesystem(directory, pattern).
//     The function has no learn.microsoft.com page; it exists from SQL
//     Server 2017 (on 2016 it is Msg 208, an unknown object), so it is not
//     sent to an older server, and the XML read-back is used instead.
//     It may recurse into subdirectories (community code filters on
//     level = 0 [U]), so only level 0 is taken. xp_dirtree is not used: it
//     is undocumented.
//   - Fetch: SELECT BulkColumn FROM OPENROWSET(BULK N'<file>', SINGLE_BLOB)
//     returns the file as one varbinary(max) value; each file goes to a local
//     temporary file, read twice (the plan first, then the timeline).

// fetchXEL lists and downloads the session's event files. cleanup removes
// the local copies.
func (r *run) fetchXEL(ctx context.Context) (files []string, cleanup func(), err error) {
	if !r.hasBulkPermission(ctx) {
		return nil, nil, errors.New("the login lacks ADMINISTER BULK OPERATIONS (and ADMINISTER DATABASE BULK OPERATIONS), which OPENROWSET(BULK …) needs")
	}
	if r.info.major < 14 && r.ed.id != editionAzureSQLDatabase && r.ed.id != editionManagedInstance {
		return nil, nil, fmt.Errorf("sys.dm_os_enumerate_filesystem, which lists the event files, exists from SQL Server 2017; this server is version %d", r.info.major)
	}
	m := r.spec.Marker()
	q := m + "SELECT full_filesystem_path FROM sys.dm_os_enumerate_filesystem(" + tsql.QuoteString(r.spec.Directory) + ", " +
		tsql.QuoteString(r.spec.Name+"*.xel") + ") WHERE is_directory = 0 AND level = 0 ORDER BY full_filesystem_path"
	rows, err := r.conn.QueryContext(ctx, q)
	if err != nil {
		r.noteConnErr(err)
		return nil, nil, fmt.Errorf("list the event files: %w", err)
	}
	var remote []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return nil, nil, fmt.Errorf("list the event files: %w", err)
		}
		remote = append(remote, p)
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		r.noteConnErr(err)
		return nil, nil, fmt.Errorf("list the event files: %w", err)
	}
	rows.Close()
	if len(remote) == 0 {
		return nil, nil, fmt.Errorf("no event file matches %s", r.spec.ReadPattern())
	}
	cleanup = func() {
		for _, f := range files {
			os.Remove(f)
		}
	}
	for _, p := range remote {
		local, err := r.fetchFile(ctx, p)
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		files = append(files, local)
	}
	return files, cleanup, nil
}

func (r *run) hasBulkPermission(ctx context.Context) bool {
	for _, q := range []string{
		"SELECT HAS_PERMS_BY_NAME(NULL, NULL, N'ADMINISTER BULK OPERATIONS')",
		"SELECT HAS_PERMS_BY_NAME(DB_NAME(), N'DATABASE', N'ADMINISTER DATABASE BULK OPERATIONS')",
	} {
		var has sql.NullInt64
		if err := r.queryRow(ctx, "check the bulk permission", r.spec.Marker()+q, &has); err != nil {
			continue // e.g. a permission name this edition does not know
		}
		if has.Valid && has.Int64 == 1 {
			return true
		}
	}
	return false
}

// fetchFile copies one server file to a local temporary file.
func (r *run) fetchFile(ctx context.Context, remote string) (string, error) {
	q := r.spec.Marker() + "SELECT BulkColumn FROM OPENROWSET(BULK " + tsql.QuoteString(remote) + ", SINGLE_BLOB) AS f"
	var blob []byte
	if err := r.queryRow(ctx, "fetch "+remote, q, &blob); err != nil {
		return "", err
	}
	if !xe.IsXEL(blob) {
		return "", fmt.Errorf("fetch %s: the %d bytes are not a .xel file", remote, len(blob))
	}
	f, err := os.CreateTemp("", "queryreplay-trace-*.xel")
	if err != nil {
		return "", fmt.Errorf("fetch %s: local copy: %w", remote, err)
	}
	if _, err := f.Write(blob); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", fmt.Errorf("fetch %s: local copy: %w", remote, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("fetch %s: local copy: %w", remote, err)
	}
	return f.Name(), nil
}

// readXELFiles runs the events of the files, in order, through fn, at most
// max of them (0: all); truncated reports that more were left.
func readXELFiles(files []string, max int, fn func(*xe.Event)) (truncated bool, err error) {
	n := 0
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return false, fmt.Errorf("read .xel: %w", err)
		}
		rd := xe.NewXELReader(bufio.NewReaderSize(f, 1<<20))
		rd.ReuseEvents()
		for {
			ev, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				f.Close()
				return false, fmt.Errorf("read .xel: %w", err)
			}
			if max > 0 && n >= max {
				f.Close()
				return true, nil
			}
			n++
			fn(&ev)
		}
		f.Close()
	}
	return false, nil
}

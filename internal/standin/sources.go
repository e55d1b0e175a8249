package standin

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/engine"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/standin/xevents"
)

// resolveTableName resolves "schema.table" text (OBJECT_ID's argument).
func (x *execCtx) resolveTableName(s string) *engine.Table {
	parts, err := sqlfront.NameParts(s)
	if err != nil || len(parts) == 0 {
		return nil
	}
	db := x.conn.db
	if len(parts) == 3 {
		db = x.srv.dbByName(parts[0])
		if db == nil {
			return nil
		}
	}
	schema := ""
	if len(parts) >= 2 {
		schema = parts[len(parts)-2]
	}
	return db.Table(schema, parts[len(parts)-1])
}

type viewFunc func(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError)

func cols(spec ...any) []engine.RelCol {
	var out []engine.RelCol
	for i := 0; i < len(spec); i += 2 {
		out = append(out, engine.RelCol{Name: spec[i].(string), Typ: spec[i+1].(sqlfront.SQLType)})
	}
	return out
}

var sysViews map[string]viewFunc

func init() {
	sysViews = map[string]viewFunc{
		"databases": databasesView,
		"schemas":   schemasView,
		"objects":   objectsView, "tables": tablesOnly(objectsView),
		"sql_modules": sqlModulesView, "procedures": proceduresView, "triggers": triggersView, // procs.go
		"columns":    columnsView,
		"indexes":    indexesView,
		"partitions": partitionsView,
		// https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-allocation-units-transact-sql
		"allocation_units":                  allocUnitsView(false),
		"system_internals_allocation_units": allocUnitsView(true),
		"server_event_sessions":             eventSessionsView(false),
		"database_event_sessions":           eventSessionsView(true),
		"server_event_session_events":       sessionEventsView(false),
		"database_event_session_events":     sessionEventsView(true),
		"server_event_session_actions":      sessionActionsView(false),
		"database_event_session_actions":    sessionActionsView(true),
		"server_event_session_targets":      sessionTargetsView(false),
		"database_event_session_targets":    sessionTargetsView(true),
		"server_event_session_fields":       sessionFieldsView(false),
		"database_event_session_fields":     sessionFieldsView(true),
		"dm_xe_sessions":                    dmXESessions(false),
		"dm_xe_database_sessions":           dmXESessions(true),
		"dm_xe_session_targets":             dmXETargets(false),
		"dm_xe_database_session_targets":    dmXETargets(true),
		"dm_tran_session_transactions":      dmTranSessionTransactions, // safety.go
		"dm_xe_map_values":                  dmXEMapValues,
		"dm_xe_objects":                     dmXEObjects,
		"dm_xe_packages":                    dmXEPackages,
		"dm_tran_current_transaction":       dmTranCurrentTransaction,
		"dm_tran_locks":                     dmTranLocks,
		"dm_exec_connections":               dmExecConnections, // connections.go
		"dm_os_loaded_modules":              loadedModulesView, // callstacks.go
		// dm_exec_requests, dm_exec_sessions: requests.go
	}
}

// databasesView is sys.databases:
// https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-databases-transact-sql
func databasesView(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("name", engine.TSysname, "database_id", engine.TInt, "state_desc", engine.TNVar(60), "compatibility_level", engine.TTinyInt, "recovery_model_desc", engine.TNVar(60), "create_date", engine.TDT2)}
	for _, d := range x.srv.dbs {
		r.Rows = append(r.Rows, []any{d.Name, int64(d.ID), "ONLINE", x.srv.persona.CompatLevel, "SIMPLE", x.srv.start})
	}
	return r, nil
}

// schemasView is sys.schemas:
// https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/schemas-catalog-views-sys-schemas
func schemasView(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("name", engine.TSysname, "schema_id", engine.TInt, "principal_id", engine.TInt)}
	r.Rows = [][]any{{"dbo", int64(1), int64(1)}, {"guest", int64(2), int64(2)}, {"INFORMATION_SCHEMA", int64(3), int64(3)}, {"sys", int64(4), int64(4)}}
	return r, nil
}

// columnsView is sys.columns:
// https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-columns-transact-sql
func columnsView(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("object_id", engine.TInt, "name", engine.TSysname, "column_id", engine.TInt, "system_type_id", engine.TTinyInt, "max_length", engine.TSmallInt, "is_nullable", engine.TBit)}
	for _, t := range db.Tables {
		for i, c := range t.Columns {
			r.Rows = append(r.Rows, []any{t.ObjectID, c.Name, int64(i + 1), int64(systemTypeID(c.Type)), int64(maxLength(c.Type)), !c.NotNull})
		}
	}
	return r, nil
}

// indexesView is sys.indexes:
// https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-indexes-transact-sql
func indexesView(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("object_id", engine.TInt, "name", engine.TSysname, "index_id", engine.TInt, "type", engine.TTinyInt, "type_desc", engine.TNVar(60), "is_unique", engine.TBit, "data_space_id", engine.TInt, "is_primary_key", engine.TBit)}
	for _, t := range db.Tables {
		for _, ix := range t.Indexes {
			typ, desc := int64(1), "CLUSTERED"
			if ix.ID != 1 {
				typ, desc = 2, "NONCLUSTERED"
			}
			r.Rows = append(r.Rows, []any{t.ObjectID, ix.Name, int64(ix.ID), typ, desc, ix.Unique, int64(1), ix.PK})
		}
	}
	return r, nil
}

// partitionsView is sys.partitions:
// https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-partitions-transact-sql
func partitionsView(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("partition_id", engine.TBigInt, "object_id", engine.TInt, "index_id", engine.TInt, "partition_number", engine.TInt, "hobt_id", engine.TBigInt, "rows", engine.TBigInt, "data_compression", engine.TTinyInt, "data_compression_desc", engine.TNVar(60))}
	for _, t := range db.Tables {
		for _, ix := range t.Indexes {
			r.Rows = append(r.Rows, []any{ix.PartitionID, t.ObjectID, int64(ix.ID), int64(1), ix.PartitionID, int64(len(t.Rows)), int64(0), "NONE"})
		}
	}
	return r, nil
}

// dmXEMapValues is sys.dm_xe_map_values:
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-map-values-transact-sql
func dmXEMapValues(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("name", engine.TNVar(60), "object_package_guid", engine.TGUID, "map_key", engine.TInt, "map_value", engine.TNVar(2048))}
	for _, m := range xevents.Maps {
		for _, e := range m.Entries {
			r.Rows = append(r.Rows, []any{m.Name, packageGUID(m.Pkg), int64(e.Key), e.Text})
		}
	}
	return r, nil
}

// dmXEObjects is sys.dm_xe_objects: the events, the actions the persona
// has (package0.callstack_rva only from SQL Server 2022) and the two
// targets the stand-in emulates:
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-objects-transact-sql
func dmXEObjects(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("name", engine.TNVar(60), "object_type", engine.TNVar(60), "package_guid", engine.TGUID, "description", engine.TNVar(512))}
	for _, n := range sortedKeys(xevents.Events) {
		r.Rows = append(r.Rows, []any{n, "event", packageGUID(xevents.Events[n].Pkg), nil})
	}
	for _, n := range sortedKeys(xevents.Actions) {
		if x.srv.persona.HasAction(n) {
			r.Rows = append(r.Rows, []any{n, "action", packageGUID(xevents.Actions[n]), nil})
		}
	}
	for _, n := range []string{"event_file", "ring_buffer"} {
		r.Rows = append(r.Rows, []any{n, "target", packageGUID("package0"), nil})
	}
	return r, nil
}

// xePackages are the packages the stand-in's objects belong to.
var xePackages = []string{"package0", "sqlos", "sqlserver"}

// dmXEPackages is sys.dm_xe_packages, joined to sys.dm_xe_objects on
// package_guid = guid:
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-packages-transact-sql
func dmXEPackages(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("name", engine.TNVar(60), "guid", engine.TGUID, "description", engine.TNVar(3072), "capabilities", engine.TInt, "capabilities_desc", engine.TNVar(256), "module_guid", engine.TGUID)}
	for _, n := range xePackages {
		r.Rows = append(r.Rows, []any{n, packageGUID(n), n + " events, actions and targets", nil, nil, "D5149520-6282-11DE-8A39-0800200C9A66"})
	}
	return r, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// dmTranCurrentTransaction is sys.dm_tran_current_transaction:
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-tran-current-transaction-transact-sql
func dmTranCurrentTransaction(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("transaction_id", engine.TBigInt, "transaction_sequence_num", engine.TBigInt, "transaction_is_snapshot", engine.TBit)}
	id := x.srv.nextTxn + 1 // the statement's own autocommit transaction
	if x.conn.txn != nil {
		id = x.conn.txn.id
	}
	r.Rows = [][]any{{id, nil, false}}
	return r, nil
}

// dmTranLocks is sys.dm_tran_locks (granted locks of every session, in session id order):
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-tran-locks-transact-sql
func dmTranLocks(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("resource_type", engine.TNVar(60), "resource_database_id", engine.TInt, "resource_description", engine.TNVar(256),
		"resource_associated_entity_id", engine.TBigInt, "request_mode", engine.TNVar(60), "request_type", engine.TNVar(60), "request_status", engine.TNVar(60),
		"request_owner_type", engine.TNVar(60), "request_session_id", engine.TInt, "request_owner_id", engine.TBigInt)}
	for _, id := range x.srv.sessionIDs() {
		c := x.srv.conns[id]
		if c.txn == nil {
			continue
		}
		for _, l := range c.txn.locks {
			entity := l.hobt
			if l.resType == "OBJECT" {
				entity = l.objectID
			}
			r.Rows = append(r.Rows, []any{l.resType, int64(c.db.ID), l.desc, entity, l.mode, "LOCK", "GRANT", "TRANSACTION", int64(id), c.txn.id})
		}
	}
	return r, nil
}

// packageGUID is an XE package's guid. The sqlserver value (and the module
// guid D5149520-…) are the ones in the real fn_xe_file_target_read_file
// rows of realdata/xe_event_xml/msdocs; the others are unverified.
func packageGUID(pkg string) string {
	switch pkg {
	case "sqlserver":
		return "03FDA7D0-91BA-45F8-9875-8B6DD0B8E9F2"
	case "sqlos":
		return "BD97CC63-3F38-4922-AA93-607BD12E78B2"
	}
	return "60AA9FBF-673B-4553-B7ED-75DCE9A6D3F0"
}

func systemTypeID(t sqlfront.SQLType) int {
	switch t.Kind {
	case sqlfront.TypeInt:
		return 56
	case sqlfront.TypeBigInt:
		return 127
	case sqlfront.TypeFloat:
		return 62
	case sqlfront.TypeDateTime2:
		return 42
	case sqlfront.TypeNVarChar:
		return 231
	}
	return 0
}

func maxLength(t sqlfront.SQLType) int {
	switch t.Kind {
	case sqlfront.TypeInt:
		return 4
	case sqlfront.TypeNVarChar:
		return 2 * t.Size
	}
	return 8
}

func objectsView(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("name", engine.TSysname, "object_id", engine.TInt, "principal_id", engine.TInt, "schema_id", engine.TInt, "parent_object_id", engine.TInt,
		"type", engine.TNVar(2), "type_desc", engine.TNVar(60), "create_date", engine.TDT2, "modify_date", engine.TDT2, "is_ms_shipped", engine.TBit)}
	for _, t := range db.Tables {
		r.Rows = append(r.Rows, []any{t.Name, t.ObjectID, nil, int64(1), int64(0), "U ", "USER_TABLE", t.Created, t.Created, false})
	}
	r.Rows = append(r.Rows, procObjectRows(db)...) // procs.go
	return r, nil
}

func pageAddress(p int32) []byte {
	// first_page/root_page/first_iam_page: 6 bytes, page id (4 LE) + file id (2 LE)
	return []byte{byte(p), byte(p >> 8), byte(p >> 16), byte(p >> 24), 1, 0}
}

func allocUnitsView(internals bool) viewFunc {
	return func(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
		spec := []any{"allocation_unit_id", engine.TBigInt, "type", engine.TTinyInt, "type_desc", engine.TNVar(60), "container_id", engine.TBigInt, "data_space_id", engine.TInt, "total_pages", engine.TBigInt, "used_pages", engine.TBigInt, "data_pages", engine.TBigInt}
		if internals {
			spec = append(spec, "first_page", engine.TVarBin(6), "root_page", engine.TVarBin(6), "first_iam_page", engine.TVarBin(6))
		}
		r := &engine.Relation{Cols: cols(spec...)}
		for _, t := range db.Tables {
			for _, ix := range t.Indexes {
				used := int64(len(ix.LeafPages) + 1)
				if ix.RootPage != 0 {
					used++
				}
				row := []any{ix.AllocUnitID, int64(1), "IN_ROW_DATA", ix.PartitionID, int64(1), (used + 7) / 8 * 8, used, int64(len(ix.LeafPages))}
				if internals {
					root := ix.RootPage
					if root == 0 {
						root = ix.LeafPages[0]
					}
					row = append(row, pageAddress(ix.LeafPages[0]), pageAddress(root), pageAddress(ix.IAMPage))
				}
				r.Rows = append(r.Rows, row)
			}
		}
		return r, nil
	}
}

func (x *execCtx) sessionsOf(database bool) []*xevents.Session {
	var out []*xevents.Session
	for _, s := range x.srv.sessions {
		if s.Database == database {
			out = append(out, s)
		}
	}
	return out
}

// https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-server-event-sessions-transact-sql
func eventSessionsView(dbScoped bool) viewFunc {
	return func(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
		r := &engine.Relation{Cols: cols("event_session_id", engine.TInt, "name", engine.TSysname, "event_retention_mode", engine.TNVar(1), "event_retention_mode_desc", engine.TNVar(60),
			"max_dispatch_latency", engine.TInt, "max_memory", engine.TInt, "max_event_size", engine.TInt, "memory_partition_mode", engine.TNVar(1), "memory_partition_mode_desc", engine.TNVar(60),
			"track_causality", engine.TBit, "startup_state", engine.TBit)}
		for _, s := range x.sessionsOf(dbScoped) {
			o := s.Opts
			mode := map[string]string{"ALLOW_SINGLE_EVENT_LOSS": "S", "ALLOW_MULTIPLE_EVENT_LOSS": "M", "NO_EVENT_LOSS": "N"}[o.Retention]
			pm := map[string]string{"NONE": "G", "PER_NODE": "N", "PER_CPU": "C"}[o.PartitionMode]
			lat := o.DispatchLatencySec * 1000
			if o.DispatchLatencySec == 0 {
				lat = 0
			}
			r.Rows = append(r.Rows, []any{int64(s.ID), s.Name, mode, o.Retention, lat, o.MaxMemoryKB, o.MaxEventSizeKB, pm, o.PartitionMode, o.TrackCausality, o.StartupState})
		}
		return r, nil
	}
}

func sessionEventsView(dbScoped bool) viewFunc {
	return func(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
		r := &engine.Relation{Cols: cols("event_session_id", engine.TInt, "event_id", engine.TInt, "name", engine.TNVar(128), "package", engine.TNVar(128), "module", engine.TNVar(128), "predicate", engine.TNMax, "predicate_xml", engine.TNMax)}
		for _, s := range x.sessionsOf(dbScoped) {
			for _, e := range s.Events {
				var pred any
				if e.PredText != "" {
					pred = e.PredText
				}
				r.Rows = append(r.Rows, []any{int64(s.ID), int64(e.ID), e.Name, e.Pkg, "D5149520-6282-11DE-8A39-0800200C9A66", pred, nil})
			}
		}
		return r, nil
	}
}

func sessionActionsView(dbScoped bool) viewFunc {
	return func(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
		r := &engine.Relation{Cols: cols("event_session_id", engine.TInt, "event_id", engine.TInt, "name", engine.TNVar(128), "package", engine.TNVar(128), "module", engine.TNVar(128))}
		for _, s := range x.sessionsOf(dbScoped) {
			for _, e := range s.Events {
				for _, a := range e.Actions {
					r.Rows = append(r.Rows, []any{int64(s.ID), int64(e.ID), a.Name, a.Package, "D5149520-6282-11DE-8A39-0800200C9A66"})
				}
			}
		}
		return r, nil
	}
}

func sessionTargetsView(dbScoped bool) viewFunc {
	return func(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
		r := &engine.Relation{Cols: cols("event_session_id", engine.TInt, "target_id", engine.TInt, "name", engine.TNVar(128), "package", engine.TNVar(128), "module", engine.TNVar(128))}
		for _, s := range x.sessionsOf(dbScoped) {
			for _, t := range s.Targets {
				r.Rows = append(r.Rows, []any{int64(s.ID), int64(t.ID), t.Name, t.Pkg, "D5149520-6282-11DE-8A39-0800200C9A66"})
			}
		}
		return r, nil
	}
}

func sessionFieldsView(dbScoped bool) viewFunc {
	return func(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
		r := &engine.Relation{Cols: cols("event_session_id", engine.TInt, "object_id", engine.TInt, "name", engine.TNVar(128), "value", engine.TNVar(4000))}
		for _, s := range x.sessionsOf(dbScoped) {
			for _, t := range s.Targets {
				for _, st := range t.Settings {
					r.Rows = append(r.Rows, []any{int64(s.ID), int64(t.ID), st.Name, engine.ValueString(st.Value)})
				}
			}
			for _, e := range s.Events {
				for _, st := range e.Settings {
					r.Rows = append(r.Rows, []any{int64(s.ID), int64(e.ID), st.Name, engine.ValueString(st.Value)})
				}
			}
		}
		return r, nil
	}
}

func sessionAddress(id int) []byte {
	return []byte{0, 0, 0x01, 0xE4, 0xC0, byte(id >> 16), byte(id >> 8), byte(id)}
}

// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-sessions-transact-sql
func dmXESessions(dbScoped bool) viewFunc {
	return func(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
		if err := x.checkXEViewState(dbScoped); err != nil {
			return nil, err
		}
		x.srv.dispatchDue()
		r := &engine.Relation{Cols: cols("address", engine.TVarBin(8), "name", engine.TNVar(256), "pending_buffers", engine.TInt, "total_regular_buffers", engine.TInt, "regular_buffer_size", engine.TBigInt,
			"total_large_buffers", engine.TInt, "large_buffer_size", engine.TBigInt, "total_buffer_size", engine.TBigInt, "buffer_policy_flags", engine.TInt, "buffer_policy_desc", engine.TNVar(256),
			"flags", engine.TInt, "flag_desc", engine.TNVar(256), "dropped_event_count", engine.TInt, "dropped_buffer_count", engine.TInt, "blocked_event_fire_time", engine.TInt,
			"create_time", engine.TDT2, "largest_event_dropped_size", engine.TInt, "session_source", engine.TNVar(256), "buffer_processed_count", engine.TBigInt,
			"buffer_full_count", engine.TBigInt, "total_bytes_generated", engine.TBigInt)}
		for _, s := range x.sessionsOf(dbScoped) {
			if !s.Running {
				continue
			}
			src := "server"
			if dbScoped {
				src = db.Name
			}
			bufSize := s.RegularBufferBytes()
			pending := int64(0)
			if len(s.Pending) > 0 {
				pending = 1
			}
			var logged int64
			for _, t := range s.Targets {
				logged += t.BuffersLogged
			}
			large := int64(0)
			if s.LargeBufferBytes() > 0 {
				large = 2 // MAX_EVENT_SIZE sets two large buffers aside
			}
			r.Rows = append(r.Rows, []any{sessionAddress(s.ID), s.Name, pending, int64(3), bufSize, large, s.LargeBufferBytes(), bufSize*3 + large*s.LargeBufferBytes(), int64(0), "",
				int64(0), "flush_on_close", s.Dropped, int64(0), int64(0), s.Started, s.LargestDrop, src, logged, int64(0), s.TotalBytes})
		}
		return r, nil
	}
}

// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-session-targets-transact-sql
func dmXETargets(dbScoped bool) viewFunc {
	return func(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
		if err := x.checkXEViewState(dbScoped); err != nil {
			return nil, err
		}
		x.srv.dispatchDue()
		r := &engine.Relation{Cols: cols("event_session_address", engine.TVarBin(8), "target_name", engine.TNVar(60), "target_package_guid", engine.TGUID, "execution_count", engine.TBigInt,
			"execution_duration_ms", engine.TBigInt, "target_data", engine.TNMax, "bytes_written", engine.TBigInt)}
		for _, s := range x.sessionsOf(dbScoped) {
			if !s.Running {
				continue
			}
			for _, t := range s.Targets {
				var data string
				var written int64
				switch t.Name {
				case "ring_buffer":
					data = t.RingXML()
				case "event_file":
					name := ""
					if t.Current != nil {
						name = t.Current.Path
						written = t.Current.Size
					}
					data = fmt.Sprintf(`<EventFileTarget truncated="0"><Buffers logged="%d" dropped="0" /><File name="%s" /></EventFileTarget>`, t.BuffersLogged, engine.XMLEscape(name))
				}
				r.Rows = append(r.Rows, []any{sessionAddress(s.ID), t.Name, packageGUID("package0"), t.ExecCount, int64(0), data, written})
			}
		}
		return r, nil
	}
}

// Table-valued functions.

func (x *execCtx) tableFunction(f *sqlfront.TableFunc, outer *engine.EvalEnv) (*engine.Relation, *sqlfront.SQLError) {
	name := strings.ToLower(f.Parts[len(f.Parts)-1])
	env := &engine.EvalEnv{X: x, Outer: outer}
	args := make([]any, len(f.Args))
	for i, a := range f.Args {
		v, err := env.Eval(a)
		if err != nil {
			if x.schemaOnly {
				continue // the columns do not depend on the arguments
			}
			return nil, err
		}
		args[i] = v
	}
	need := func(n int) *sqlfront.SQLError {
		if len(args) != n {
			return sqlfront.NewError(216, 16, "Parameters supplied for object '%s' which is not a function. If the parameters are intended as a table hint, a WITH keyword is required.", name)
		}
		return nil
	}
	switch name {
	case "string_split":
		// https://learn.microsoft.com/en-us/sql/t-sql/functions/string-split-transact-sql
		// (SQL Server 2016+; the enable_ordinal argument came in 2022)
		if len(args) != 2 {
			return nil, sqlfront.NewError(174, 15, "The string_split function requires 2 argument(s).")
		}
		r := &engine.Relation{Cols: cols("value", engine.TNVar(4000))}
		if x.schemaOnly || args[0] == nil {
			return r, nil
		}
		sep := engine.ValueString(args[1])
		if len([]rune(sep)) != 1 {
			return nil, sqlfront.NewError(214, 16, "Procedure expects parameter 'separator' of type 'nchar(1)/nvarchar(1)'.")
		}
		for _, part := range strings.Split(engine.ValueString(args[0]), sep) {
			r.Rows = append(r.Rows, []any{part})
		}
		return r, nil
	case "fn_dblog":
		if err := need(2); err != nil {
			return nil, err
		}
		if !x.conn.sysadmin {
			return nil, sqlfront.NewError(229, 14, "The SELECT permission was denied on the object 'fn_dblog', database 'mssqlsystemresource', schema 'sys'.")
		}
		from, hasFrom, err := dblogBound(args[0])
		if err != nil {
			return nil, err
		}
		to, hasTo, err := dblogBound(args[1])
		if err != nil {
			return nil, err
		}
		return x.fnDblog(func(lsn string) bool { return (!hasFrom || lsn >= from) && (!hasTo || lsn <= to) }), nil
	case "fn_xe_file_target_read_file":
		if err := need(4); err != nil {
			return nil, err
		}
		// VIEW SERVER STATE (Azure SQL Database: VIEW DATABASE STATE),
		// https://learn.microsoft.com/en-us/sql/relational-databases/system-functions/sys-fn-xe-file-target-read-file-transact-sql#permissions
		if err := x.checkViewState(); err != nil {
			return nil, err
		}
		return x.readEventFiles(args)
	case "dm_db_page_info":
		if !x.srv.persona.hasPageInfo() {
			return nil, sqlfront.NewError(208, 16, "Invalid object name 'sys.dm_db_page_info'.")
		}
		if err := need(4); err != nil {
			return nil, err
		}
		return x.pageInfo(args)
	case "dm_db_database_page_allocations":
		if err := need(5); err != nil {
			return nil, err
		}
		return x.pageAllocations(args)
	case "fn_my_permissions":
		if err := need(2); err != nil {
			return nil, err
		}
		return x.myPermissions(args)
	case "openrowset":
		return x.openRowsetBulk(f, args)
	case "dm_os_enumerate_filesystem":
		if !x.srv.persona.EnumerateFilesystem() {
			return nil, engine.ErrInvalidObject(strings.Join(f.Parts, "."))
		}
		if err := need(2); err != nil {
			return nil, err
		}
		return x.enumerateFilesystem(args)
	}
	if fn, ok := extraTableFunctions[name]; ok {
		return fn(x, args)
	}
	return nil, engine.ErrInvalidObject(strings.Join(f.Parts, "."))
}

// fnDblog returns the active log (undocumented sys.fn_dblog; columns as
// community tooling reads them, docs/design/tracing.md §13).
// in selects the records between the start and end LSN arguments (LSNs
// compare as fixed-width hexadecimal text).
func (x *execCtx) fnDblog(in func(lsn string) bool) *engine.Relation {
	r := &engine.Relation{Cols: cols("Current LSN", engine.TNVar(23), "Operation", engine.TNVar(31), "Context", engine.TNVar(31), "Transaction ID", engine.TNVar(14),
		"Log Record Length", engine.TSmallInt, "Previous LSN", engine.TNVar(23), "AllocUnitId", engine.TBigInt, "AllocUnitName", engine.TNVar(387), "Page ID", engine.TNVar(14),
		"Slot ID", engine.TInt, "PartitionId", engine.TBigInt, "Transaction Name", engine.TNVar(33), "Begin Time", engine.TNVar(24), "End Time", engine.TNVar(24),
		"RowLog Contents 0", engine.TVarBin(8000), "RowLog Contents 1", engine.TVarBin(8000), "Log Record", engine.TVarBin(8000))}
	for _, rec := range x.srv.log.recs {
		if !in(rec.lsn) {
			continue
		}
		var au, part any
		var auName, pageID, slot any
		if rec.ix != nil {
			au, part = rec.ix.AllocUnitID, rec.ix.PartitionID
			auName = rec.ix.Tbl.FullName() + "." + rec.ix.Name
			pageID = fmt.Sprintf("0001:%08x", rec.page)
			slot = int64(rec.slot)
		}
		var name, begin, end any
		if rec.op == "LOP_BEGIN_XACT" {
			name, begin = rec.txnName, rec.beginTime.Format("2006/01/02 15:04:05:000")
		}
		if !rec.endTime.IsZero() {
			end = rec.endTime.Format("2006/01/02 15:04:05:000")
		}
		var r0, r1 any
		if rec.rowlog0 != nil {
			r0 = rec.rowlog0
		}
		if rec.rowlog1 != nil {
			r1 = rec.rowlog1
		}
		r.Rows = append(r.Rows, []any{rec.lsn, rec.op, rec.context, txnIDString(rec.txnID), int64(len(rec.raw)), rec.prevLSN, au, auName, pageID, slot, part, name, begin, end, r0, r1, rec.raw})
	}
	return r
}

// readEventFiles implements sys.fn_xe_file_target_read_file
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-functions/sys-fn-xe-file-target-read-file-transact-sql).
func (x *execCtx) readEventFiles(args []any) (*engine.Relation, *sqlfront.SQLError) {
	x.srv.dispatchDue()
	r := &engine.Relation{Cols: cols("module_guid", engine.TGUID, "package_guid", engine.TGUID, "object_name", engine.TNVar(256), "event_data", engine.TNMax,
		"file_name", engine.TNVar(260), "file_offset", engine.TBigInt, "timestamp_utc", engine.TDT2)}
	if x.schemaOnly {
		return r, nil
	}
	pattern, ok := args[0].(string)
	if !ok {
		return nil, errXEReadFileName(engine.ValueString(args[0]))
	}
	initFile, hasFile := args[2].(string)
	var initOffset int64
	hasOffset := args[3] != nil
	if hasOffset {
		v, err := engine.ConvertValue(args[3], engine.TBigInt)
		if err != nil {
			return nil, err
		}
		initOffset = v.(int64)
	}
	if hasFile != hasOffset {
		return nil, errXEReadPair()
	}
	if !strings.ContainsAny(pattern, `/\`) {
		pattern = x.srv.logDir() + pattern
	}
	var paths []string
	for p := range x.srv.files {
		if xevents.MatchXELPattern(pattern, p) {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	if len(paths) == 0 {
		return nil, errXEReadFileName(pattern)
	}
	skipping := hasFile
	if hasFile {
		found := false
		for _, p := range paths {
			if strings.EqualFold(p, initFile) {
				found = true
				f := x.srv.files[p]
				okOffset := false
				for _, b := range f.Buffers {
					if b.Offset == initOffset {
						okOffset = true
					}
				}
				if !okOffset {
					return nil, errXEReadOffset(initOffset, initFile)
				}
			}
		}
		if !found {
			return nil, errXEReadFileName(initFile)
		}
	}
	for _, p := range paths {
		f := x.srv.files[p]
		for _, b := range f.Buffers {
			if skipping {
				// resume after the given buffer: skip through it
				if strings.EqualFold(p, initFile) && b.Offset == initOffset {
					skipping = false
				}
				continue
			}
			for _, e := range b.Events {
				r.Rows = append(r.Rows, []any{"D5149520-6282-11DE-8A39-0800200C9A66", packageGUID(pkgOfEvent(e.Name)), e.Name, e.File, p, b.Offset, e.Time.Truncate(time.Millisecond)})
			}
		}
	}
	return r, nil
}

func pkgOfEvent(name string) string {
	if d, ok := xevents.Events[name]; ok {
		return d.Pkg
	}
	return "sqlserver"
}

// pageInfo implements sys.dm_db_page_info(db, file, page, mode)
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-db-page-info-transact-sql).
func (x *execCtx) pageInfo(args []any) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("database_id", engine.TInt, "file_id", engine.TInt, "page_id", engine.TInt, "page_type", engine.TInt, "page_type_desc", engine.TNVar(64),
		"page_level", engine.TInt, "object_id", engine.TInt, "index_id", engine.TInt, "partition_id", engine.TBigInt, "alloc_unit_id", engine.TBigInt, "slot_count", engine.TInt,
		"is_iam_page", engine.TBit, "next_page_file_id", engine.TInt, "next_page_page_id", engine.TInt, "prev_page_file_id", engine.TInt, "prev_page_page_id", engine.TInt)}
	if x.schemaOnly {
		return r, nil
	}
	ids := make([]int64, 3)
	for i := 0; i < 3; i++ {
		v, err := engine.ConvertValue(args[i], engine.TBigInt)
		if err != nil || v == nil {
			return nil, sqlfront.NewError(2561, 16, "Parameter %d is incorrect for this DMV.", i+1)
		}
		ids[i] = v.(int64)
	}
	mode := strings.ToUpper(engine.ValueString(args[3]))
	if mode != "LIMITED" && mode != "DETAILED" {
		return nil, sqlfront.NewError(2561, 16, "Parameter %d is incorrect for this DMV.", 4)
	}
	db := x.srv.dbByID(ids[0])
	if db == nil {
		return nil, sqlfront.NewError(2561, 16, "Parameter %d is incorrect for this DMV.", 1)
	}
	if ids[1] != 1 || ids[2] < 0 || ids[2] >= int64(db.NextPage)+64 {
		return nil, sqlfront.NewError(2561, 16, "Parameter %d is incorrect for this DMV.", 3)
	}
	pi := db.PageOwner[int32(ids[2])]
	if pi == nil {
		var unknown any = "UNKNOWN"
		if mode == "LIMITED" {
			unknown = nil
		}
		r.Rows = append(r.Rows, []any{ids[0], int64(1), ids[2], int64(0), unknown, int64(0), nil, nil, nil, nil, int64(0), false, int64(0), int64(0), int64(0), int64(0)})
		return r, nil
	}
	ix := pi.Idx
	typ := map[string]int64{"DATA_PAGE": 1, "INDEX_PAGE": 2, "IAM_PAGE": 10}[pi.Kind]
	var next, prev int64
	slots := int64(0)
	if pi.Kind != "IAM_PAGE" && pi.Level == 0 {
		if pi.Pos+1 < len(ix.LeafPages) {
			next = int64(ix.LeafPages[pi.Pos+1])
		}
		if pi.Pos > 0 {
			prev = int64(ix.LeafPages[pi.Pos-1])
		}
		n := len(ix.Tbl.Rows) - pi.Pos*ix.RowsPerPage
		if n > ix.RowsPerPage {
			n = ix.RowsPerPage
		}
		if n < 0 {
			n = 0
		}
		slots = int64(n)
	}
	nf, pf := int64(0), int64(0)
	if next != 0 {
		nf = 1
	}
	if prev != 0 {
		pf = 1
	}
	var desc any = pi.Kind
	if mode == "LIMITED" {
		desc = nil // LIMITED returns NULL for every description column
	}
	r.Rows = append(r.Rows, []any{ids[0], int64(1), ids[2], typ, desc, int64(pi.Level), ix.Tbl.ObjectID, int64(ix.ID), ix.PartitionID, ix.AllocUnitID,
		slots, pi.Kind == "IAM_PAGE", nf, next, pf, prev})
	return r, nil
}

// pageAllocations implements the undocumented
// sys.dm_db_database_page_allocations(db, object, index, partition, mode).
func (x *execCtx) pageAllocations(args []any) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("database_id", engine.TSmallInt, "object_id", engine.TInt, "index_id", engine.TSmallInt, "partition_id", engine.TBigInt, "rowset_id", engine.TBigInt,
		"allocation_unit_id", engine.TBigInt, "allocation_unit_type", engine.TTinyInt, "allocation_unit_type_desc", engine.TNVar(60), "extent_file_id", engine.TSmallInt,
		"extent_page_id", engine.TInt, "allocated_page_iam_file_id", engine.TSmallInt, "allocated_page_iam_page_id", engine.TInt, "allocated_page_file_id", engine.TSmallInt,
		"allocated_page_page_id", engine.TInt, "is_allocated", engine.TBit, "is_iam_page", engine.TBit, "page_type", engine.TTinyInt, "page_type_desc", engine.TNVar(64), "page_level", engine.TTinyInt,
		"next_page_file_id", engine.TSmallInt, "next_page_page_id", engine.TInt, "previous_page_file_id", engine.TSmallInt, "previous_page_page_id", engine.TInt)}
	if x.schemaOnly {
		return r, nil
	}
	dbv, _ := engine.ConvertValue(args[0], engine.TBigInt)
	dbID, _ := dbv.(int64)
	db := x.srv.dbByID(dbID)
	if db == nil {
		return nil, sqlfront.NewError(2561, 16, "Parameter %d is incorrect for this DMV.", 1)
	}
	objv, _ := engine.ConvertValue(args[1], engine.TBigInt)
	ixv, _ := engine.ConvertValue(args[2], engine.TBigInt)
	var pages []int32
	for p := range db.PageOwner {
		pages = append(pages, p)
	}
	sort.Slice(pages, func(i, j int) bool { return pages[i] < pages[j] })
	for _, p := range pages {
		pi := db.PageOwner[p]
		ix := pi.Idx
		if objv != nil && objv.(int64) != ix.Tbl.ObjectID || ixv != nil && ixv.(int64) != int64(ix.ID) {
			continue
		}
		typ := map[string]int64{"DATA_PAGE": 1, "INDEX_PAGE": 2, "IAM_PAGE": 10}[pi.Kind]
		var next, prev int64
		if pi.Kind != "IAM_PAGE" && pi.Level == 0 {
			if pi.Pos+1 < len(ix.LeafPages) {
				next = int64(ix.LeafPages[pi.Pos+1])
			}
			if pi.Pos > 0 {
				prev = int64(ix.LeafPages[pi.Pos-1])
			}
		}
		r.Rows = append(r.Rows, []any{int64(db.ID), ix.Tbl.ObjectID, int64(ix.ID), ix.PartitionID, ix.PartitionID, ix.AllocUnitID, int64(1), "IN_ROW_DATA",
			int64(1), int64(p / 8 * 8), int64(1), int64(ix.IAMPage), int64(1), int64(p), true, pi.Kind == "IAM_PAGE", typ, pi.Kind, int64(pi.Level),
			int64(1), next, int64(1), prev})
	}
	return r, nil
}

// myPermissions implements sys.fn_my_permissions(securable, class)
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-functions/sys-fn-my-permissions-transact-sql).
func (x *execCtx) myPermissions(args []any) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("entity_name", engine.TSysname, "subentity_name", engine.TSysname, "permission_name", engine.TNVar(60))}
	if x.schemaOnly {
		return r, nil
	}
	class := strings.ToUpper(engine.ValueString(args[1]))
	var perms []string
	switch class {
	case "SERVER":
		perms = []string{"CONNECT SQL", "VIEW ANY DATABASE"}
		if x.conn.sysadmin {
			perms = []string{"CONNECT SQL", "SHUTDOWN", "CREATE ENDPOINT", "CREATE ANY DATABASE", "ALTER ANY LOGIN", "ALTER ANY CREDENTIAL",
				"ALTER ANY EVENT SESSION", "ALTER SERVER STATE", "ALTER TRACE", "VIEW ANY DATABASE", "VIEW ANY DEFINITION", "VIEW SERVER STATE",
				"CONTROL SERVER", "ALTER ANY EVENT NOTIFICATION"}
		}
	case "DATABASE":
		perms = []string{"CONNECT"}
		if x.conn.sysadmin {
			perms = []string{"CREATE TABLE", "CREATE VIEW", "CREATE PROCEDURE", "SELECT", "INSERT", "UPDATE", "DELETE", "CONNECT", "SHOWPLAN",
				"VIEW DATABASE STATE", "ALTER ANY DATABASE EVENT SESSION", "CONTROL"}
		}
	default:
		return nil, sqlfront.NewError(15151, 16, "Cannot find the object '%s', because it does not exist or you do not have permission.", engine.ValueString(args[0]))
	}
	if !x.conn.sysadmin {
		perms = x.grantedPermissions(class, perms)
	}
	perms = x.srv.persona.adjustPermissions(class, perms, x.conn.sysadmin)
	if x.conn.bulk {
		// agrees with HAS_PERMS_BY_NAME and OPENROWSET(BULK …)
		if class == "SERVER" {
			perms = append(perms, "ADMINISTER BULK OPERATIONS")
		} else {
			perms = append(perms, "ADMINISTER DATABASE BULK OPERATIONS")
		}
	}
	for _, p := range perms {
		r.Rows = append(r.Rows, []any{engine.ValueString(args[0]), "", p})
	}
	return r, nil
}

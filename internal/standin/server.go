package standin

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/engine"
	"github.com/queryreplay/queryreplay/internal/standin/xevents"
	"github.com/queryreplay/queryreplay/internal/tds"
	"github.com/queryreplay/queryreplay/internal/tds/tdsfault"
)

// Identity of the emulated server. The wait_types map keys come from a real
// SQL Server 2017 14.0.3192.2 event file, so the version matches that build.
const (
	productVersion = "14.0.3192.2"
	serverName     = "QRSTANDIN"
	instanceLogDir = "/var/opt/mssql/log/"
	errorLogFile   = "/var/opt/mssql/log/errorlog"
	dataDir        = "/var/opt/mssql/data/"
	versionString  = "Microsoft SQL Server 2017 (RTM-CU15-GDR) (KB4505225) - 14.0.3192.2 (X64) \n\tJun 15 2019 00:26:19 \n\tCopyright (C) 2017 Microsoft Corporation\n\tDeveloper Edition (64-bit) on Linux (Ubuntu 16.04.6 LTS)"
)

// Options configures a stand-in server.
type Options struct {
	// User and Password are the one SQL login accepted (a sysadmin).
	// Defaults: "sa" / "QueryReplay-Standin1".
	User, Password string
	// ExtraLogins are further logins; they hold no server permissions
	// (fn_my_permissions returns only CONNECT SQL and VIEW ANY DATABASE)
	// unless ServerPermissions or DatabasePermissions grant them some.
	ExtraLogins map[string]string
	// ServerPermissions grants, per login of ExtraLogins, server
	// permissions ("ALTER ANY EVENT SESSION", "VIEW SERVER STATE", SQL
	// Server 2022's "CREATE ANY EVENT SESSION", "CONTROL SERVER", ...): the
	// least-privilege personas. Names the persona does not know (a 2022
	// permission on 2019) are not granted; Azure SQL Database has no
	// server permissions. permissions.go has the model.
	ServerPermissions map[string][]string
	// DatabasePermissions grants, per login, permissions to its user in
	// every database ("ALTER ANY DATABASE EVENT SESSION", "VIEW DATABASE
	// STATE", "CONTROL", ...): Azure SQL Database's least privilege.
	DatabasePermissions map[string][]string
	// Now is the wall clock; a session's event clock is raised to it when
	// its batch or query starts and after real waits (clock.go).
	Now func() time.Time
	// GuessedColumns also emits event columns docs/design/event-fields.md marks [U]
	// (unverified against a real server), e.g. transaction_log's
	// log_record_size or query_thread_profile's row and I/O counters.
	GuessedColumns bool
	// ThreadProfileAtClose fires query_thread_profile as the engine closes
	// each operator (a hash join's build input when the build ends, a
	// sort's input once consumed, an inner input after each execution)
	// instead of for every operator when the query ends. Which SQL Server
	// does is not documented; the timeline must read both (engine/optiming.go).
	ThreadProfileAtClose bool
	// Logger receives protocol-independent diagnostics; nil discards.
	Logger *slog.Logger
	// BulkPermission overrides, per login, whether it holds ADMINISTER BULK
	// OPERATIONS (and ADMINISTER DATABASE BULK OPERATIONS), which
	// OPENROWSET(BULK …) needs. By default the sysadmin login has it and
	// ExtraLogins do not. Setting false for the sysadmin is a test knob: it
	// stands for a login granted the tracer's permissions but not the bulk
	// one (on a real server a sysadmin always has it).
	// https://learn.microsoft.com/en-us/sql/relational-databases/import-export/import-bulk-data-by-using-bulk-insert-or-openrowset-bulk-sql-server
	BulkPermission map[string]bool
	// XELEncoder renders an event file as binary .xel bytes for
	// OPENROWSET(BULK …, SINGLE_BLOB): it receives the file's events in the
	// XML form fn_xe_file_target_read_file returns, in file order. The
	// stand-in does not import pkg/xe (the decoder it is a test double for),
	// so callers plug in pkg/xe's XELWriter. Nil: reading an event file with
	// OPENROWSET fails with Msg 4860 (no file access).
	XELEncoder func(eventXML []string, w io.Writer) error
	// Persona is the product the stand-in pretends to be (see Personas);
	// "" means DefaultPersona, SQL Server 2017 on Linux.
	Persona string
	// Encryption is the TLS policy, SQL Server's Force Encryption settings
	// (default tds.EncryptOptional: clients choose; see tds.Encryption).
	Encryption tds.Encryption
	// Certificate is the server certificate; nil means a CA and certificate
	// for 127.0.0.1/localhost generated at Start (Running.CAPEM pins it).
	Certificate *tls.Certificate
	// NoTLS turns TLS off: PRELOGIN answers ENCRYPT_NOT_SUP.
	NoTLS bool
	// ModuleBuilds sets the PDB identity of the modules the call stacks
	// name (by short name: sqlmin, sqldk, …; see StackModules); modules
	// not listed get a build derived from the persona (callstacks.go).
	ModuleBuilds map[string]ModuleBuild
	// Directories lists further directories that exist on the emulated
	// server's file system, besides /var/opt/mssql/log, /var/opt/mssql/data
	// and /tmp. An event_file target in any other directory fails to start.
	Directories []string
	// MaxStatementMemory and MaxStatementRows bound what one statement's
	// blocking operators (sorts, hash tables, spools, window partitions,
	// temporary results) may hold; past either the statement fails with
	// Msg 701. Defaults: DefaultMaxStatementMemory, DefaultMaxStatementRows.
	MaxStatementMemory int64
	MaxStatementRows   int64
	// PaceToWallClock makes every session's event clock follow the wall
	// clock: a statement whose simulated work has outrun the wall clock
	// waits, without the server latch, at its next yield (every few
	// hundred rows) until the wall clock catches up, and one the
	// simulation has left behind the wall clock is raised to it there. A
	// query that costs 5 s of event time then takes at least 5 s of wall
	// time, and its events become readable while it runs, as on a real
	// server (a live trace's tests and benchmark). Default off: a
	// statement runs as fast as the stand-in can simulate it.
	PaceToWallClock bool
}

// Server is the emulated SQL Server. It implements tds.Handler. All
// statements of all connections execute under one lock, one at a time:
// the stand-in emulates results, not concurrency. The lock is a fair
// latch (latch.go), handed over in arrival order.
type Server struct {
	mu            latch
	opts          Options
	start         time.Time
	clock         time.Time // event clock of the session holding the latch (clock.go)
	clockOwner    clockOwner
	dbs           []*engine.Database
	demo          *engine.Database
	sessions      []*xevents.Session
	nextSessionID int
	files         map[string]*xevents.File
	cached        map[int32]bool // demo database pages in the buffer pool; value = dirty
	log           *txLog
	nextTxn       int64
	conns         map[int]*connState
	globalFlags   map[int]bool
	stamps        xevents.StampCache
	lockCond      *sync.Cond         // signalled whenever a transaction releases its locks
	curThread     int                // worker thread of the operator being simulated (parallel plans)
	eng           *engineState       // the query engine's server-wide state (standin-sql)
	curOps        []*engine.PlanNode // operators being simulated, root first (their frames are in call stacks)
	stacks        *stackModel        // call stacks of events (callstacks.go)

	persona *Persona

	recorded map[string]map[string]int64 // events recorded per session name (recorded.go)
	plans    planCache                   // sys.dm_exec_query_stats (plancache.go)

	commitTriggers []*commitTrigger // Faults.EndTransactionIn (safety.go)

	// Faults lets tests inject failures; see Faults. Its request faults
	// act only through the handler Running installs (Faults.Wrap(Server)).
	Faults *Faults
}

// New builds a stand-in with its demo database loaded and warm in the buffer
// pool.
func New(opts Options) *Server {
	if opts.User == "" {
		opts.User, opts.Password = "sa", "QueryReplay-Standin1"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	now := opts.Now().UTC()
	s := &Server{opts: opts, start: now, clock: now, files: map[string]*xevents.File{}, cached: map[int32]bool{},
		conns: map[int]*connState{}, globalFlags: map[int]bool{}, nextSessionID: 65536, nextTxn: 700000}
	s.Faults = &Faults{Injector: &tdsfault.Injector{}, srv: s}
	p, err := LookupPersona(opts.Persona)
	if err != nil {
		// Start validates the name first; New keeps working with the default
		opts.Logger.Error("standin: unknown persona; using the default", "err", err)
		p, _ = LookupPersona(DefaultPersona)
	}
	s.persona = p
	s.stacks = newStackModel(p, opts.ModuleBuilds)
	s.lockCond = sync.NewCond(&s.mu)
	s.loadDatabases(now)
	return s
}

func (s *Server) loadDatabases(now time.Time) {
	created := time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC)
	s.dbs = []*engine.Database{
		{ID: 1, Name: "master", PageOwner: map[int32]*engine.PageInfo{}},
		{ID: 2, Name: "tempdb", PageOwner: map[int32]*engine.PageInfo{}},
		{ID: 3, Name: "model", PageOwner: map[int32]*engine.PageInfo{}},
		{ID: 4, Name: "msdb", PageOwner: map[int32]*engine.PageInfo{}},
	}
	s.demo = newDemoDatabase(created)
	s.dbs = append(s.dbs, s.demo)
	s.cached = map[int32]bool{}
	for p := range s.demo.PageOwner {
		s.cached[p] = false
	}
	s.log = newTxLog()
}

// directoryExists reports whether dir exists on the emulated server. SQL
// Server on Linux maps a Windows-style path (C:\x\y) to /x/y.
func (s *Server) directoryExists(dir string) bool {
	norm := func(p string) string {
		p = strings.ReplaceAll(p, `\`, "/")
		if len(p) >= 2 && p[1] == ':' {
			p = p[2:]
		}
		return strings.TrimRight(p, "/")
	}
	d := norm(dir)
	for _, known := range append([]string{instanceLogDir, dataDir, "/tmp", s.persona.LogDir, s.persona.DataDir}, s.opts.Directories...) {
		if known == "" {
			continue
		}
		k := norm(known)
		if d == k || strings.HasPrefix(k, d+"/") {
			return true
		}
	}
	return false
}

func (s *Server) dbByName(name string) *engine.Database {
	for _, d := range s.dbs {
		if strings.EqualFold(d.Name, name) {
			return d
		}
	}
	return nil
}

func (s *Server) dbByID(id int64) *engine.Database {
	for _, d := range s.dbs {
		if int64(d.ID) == id {
			return d
		}
	}
	return nil
}

// now advances the running session's event clock to at least the wall
// clock.
func (s *Server) now() time.Time {
	w := s.opts.Now().UTC()
	if w.After(s.clock) {
		s.clock = w
	}
	return s.clock
}

func (s *Server) advance(d time.Duration) time.Time {
	s.clock = s.clock.Add(d)
	return s.clock
}

// Login implements tds.Handler.
func (s *Server) Login(ctx context.Context, sess *tds.Session, req *tds.LoginRequest) (*tds.LoginResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pw, ok := s.opts.ExtraLogins[req.User]
	sysadmin := false
	if req.User == s.opts.User {
		pw, ok, sysadmin = s.opts.Password, true, true
	}
	if !ok {
		return nil, &tds.LoginError{State: 5, Reason: "Could not find a login matching the name provided."}
	}
	if pw != req.Password {
		return nil, &tds.LoginError{State: 8, Reason: "Password did not match that for the login provided."}
	}
	dbName := req.Database
	if dbName == "" {
		dbName = demoDBName
	}
	db := s.dbByName(dbName)
	if db == nil {
		return nil, &tds.Error{Number: 4060, Severity: 11, State: 1, Message: fmt.Sprintf("Cannot open database \"%s\" requested by the login. The login failed.", dbName)}
	}
	c := &connState{srv: s, tsess: sess, spid: int(sess.SPID), db: db, user: req.User, app: req.AppName, host: req.HostName,
		pid: int(req.ClientPID), sysadmin: sysadmin, vars: map[string]any{}, loginDB: db, lockTimeoutMs: -1,
		killCh: make(chan struct{})}
	s.useClock(c)
	c.loginAt = s.now()
	c.bulk = sysadmin
	if b, ok := s.opts.BulkPermission[req.User]; ok {
		c.bulk = b
	}
	s.conns[c.spid] = c
	if s.anySessionRunning() {
		// login (fields as in real .xel metadata, docs/design/tracing.md §5.2)
		ec := c.eventCtx()
		s.emit(ec, &xevents.EventData{Name: "login", Pkg: "sqlserver", Time: s.advance(20 * time.Microsecond), Fields: []xevents.Field{
			xevents.FBool("is_cached", false), xevents.FBool("is_recovered", false), xevents.FBool("is_dac", false), xevents.FUint("database_id", "uint32", int64(db.ID)),
			xevents.FUint("packet_size", "uint32", int64(sess.PacketSize)), {Name: "options", Typ: "binary_data", Pkg: "package0", Value: "2000002838f8ff3c00000000"},
			xevents.FStr("options_text", ""), xevents.FStr("database_name", db.Name)}})
	}
	return &tds.LoginResult{Session: c, Database: db.Name}, nil
}

// Restart emulates a service restart: connections are dropped by the caller
// (Running.Restart closes them), open transactions roll back, the buffer
// pool is cold, and event sessions without STARTUP_STATE=ON are stopped;
// those with it are started again. Session definitions stay in the catalog,
// as they do on a real server; event files stay on "disk".
func (s *Server) Restart() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.useClock(nil)
	for _, c := range s.conns {
		if c.txn != nil {
			x := &execCtx{srv: s, conn: c}
			x.rollbackAll()
		}
		c.kill()
	}
	s.conns = map[int]*connState{}
	s.cached = map[int32]bool{}
	s.globalFlags = map[int]bool{}
	s.clearPlanCache()
	s.lockCond.Broadcast()
	now := s.now()
	for _, sess := range s.sessions {
		if sess.Running {
			sess.Stop(s.files)
		}
		if sess.Opts.StartupState {
			sess.Start(now, s.files)
		}
	}
}

// connState is one logged-in connection (SQL Server session).
type connState struct {
	srv             *Server
	tsess           *tds.Session
	spid            int
	db              *engine.Database
	loginDB         *engine.Database
	user            string
	app             string
	host            string
	pid             int
	sysadmin        bool
	bulk            bool // holds ADMINISTER BULK OPERATIONS
	vars            map[string]any
	txn             *transaction
	nocount         bool
	statsXML        bool
	xactAbort       bool
	flags           map[int]bool  // session trace flags (DBCC TRACEON without -1)
	killed          bool          // KILLed (or the service restarted): no request of it may run again
	killCh          chan struct{} // closed when killed, to wake a request held by a delay
	batches         int
	rowcount        int64
	loginAt         time.Time
	waitingOn       *connState              // the connection this one waits for a lock from
	lockWait        lockWaitState           // what that wait is for (requests.go)
	lastBatch       string                  // the last batch sent, for sys.dm_exec_input_buffer (requests.go)
	hold            *Hold                   // the lock hold this session runs (hold.go); nil for a client's session
	lockTimeoutMs   int64                   // SET LOCK_TIMEOUT; -1 waits forever
	readUncommitted bool                    // SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED: readers do not wait
	prepared        map[int32]*preparedStmt // sp_prepare handles (prepared.go)
	nextHandle      int32
	reads           int64 // logical reads and writes over the connection's life, for logout
	writes          int64
	sqls            *sessionSQL  // the query engine's per-session state (standin-sql)
	modes           sessionModes // SET NOEXEC, PARSEONLY, FMTONLY, ROWCOUNT, TEXTSIZE (safety.go)
	clock           connClock    // its event clock while another session runs (clock.go)
	live            *liveQuery   // the query it runs now, for sys.dm_exec_query_profiles (queryprofiles.go)
}

// Close implements tds.SessionHandler: an open transaction rolls back.
func (c *connState) Close() {
	s := c.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	s.useClock(c)
	defer s.useClock(nil)
	if c.txn != nil {
		x := &execCtx{srv: s, conn: c}
		x.rollbackAll()
	}
	if s.anySessionRunning() && !c.killed {
		dur := s.now().Sub(c.loginAt).Microseconds()
		s.emit(c.eventCtx(), &xevents.EventData{Name: "logout", Pkg: "sqlserver", Time: s.advance(10 * time.Microsecond), Fields: []xevents.Field{
			xevents.FUint("duration", "uint64", dur), xevents.FUint("cpu_time", "uint64", dur/100), xevents.FUint("reads", "uint64", c.reads), xevents.FUint("writes", "uint64", c.writes)}})
	}
	if s.conns[c.spid] == c { // a KILLed session's SPID may already serve a new connection
		delete(s.conns, c.spid)
	}
}

// kill marks the session killed and wakes whatever its request waits on.
// The caller holds the server lock.
func (c *connState) kill() {
	if c.killed {
		return
	}
	c.killed = true
	if c.killCh != nil {
		close(c.killCh)
	}
	c.srv.lockCond.Broadcast() // a killed lock waiter stops waiting
}

// isKilled reads killed under the server lock, for code running without it.
func (c *connState) isKilled() bool {
	c.srv.mu.Lock()
	defer c.srv.mu.Unlock()
	return c.killed
}

func (c *connState) traceFlag(n int) bool {
	return c.flags[n] || c.srv.globalFlags[n]
}

func (c *connState) eventCtx() *xevents.EventCtx {
	e := &xevents.EventCtx{SPID: c.spid, DBID: c.db.ID, DBName: c.db.Name, AppName: c.app, HostName: c.host, ClientPID: c.pid,
		User: c.user, ServerName: serverName}
	if c.txn != nil {
		e.TxnID = c.txn.id
	}
	return e
}

// emit offers an event to every started session; each session whose event
// list contains it and whose predicate matches records it with its actions.
func (s *Server) emit(ec *xevents.EventCtx, ev *xevents.EventData) {
	if ev.Thread == 0 {
		ev.Thread = s.curThread
	}
	for _, sess := range s.sessions {
		if !sess.Running {
			continue
		}
		for _, e := range sess.Events {
			if e.Name != ev.Name || !e.Def.Fires {
				continue
			}
			if !xevents.EvalPred(e.Pred, ec, ev, sqlValues{}) {
				continue
			}
			sess.Sequence++
			s.noteRecorded(sess.Name, ev.Name)
			if ev.Stack == nil && wantsStack(e.Actions) {
				ev.Stack = s.stacks.render(ev, s.curOps)
			}
			var b strings.Builder
			xevents.RenderEvent(&b, ev, e.Actions, ec, sess.Sequence, false, &s.stamps)
			r := xevents.RenderedEvent{Name: ev.Name, File: b.String(), Time: ev.Time}
			if !sess.Admit(int64(len(r.File) / 2)) {
				continue
			}
			for _, t := range sess.Targets {
				if t.Name == "ring_buffer" {
					var rb strings.Builder
					xevents.RenderEvent(&rb, ev, e.Actions, ec, sess.Sequence, true, &s.stamps)
					r.Ring = rb.String()
					break
				}
			}
			if len(sess.Pending) == 0 {
				sess.OldestPending = ev.Time
			}
			sess.Pending = append(sess.Pending, r)
			sess.PendingBytes += len(r.File) / 2
			sess.TotalBytes += int64(len(r.File) / 2)
			if int64(sess.PendingBytes) >= sess.Opts.MaxMemoryKB*1024/3 {
				sess.Flush(s.files)
			}
		}
	}
}

// dispatchDue flushes sessions whose MAX_DISPATCH_LATENCY has passed.
func (s *Server) dispatchDue() {
	now := s.now()
	for _, sess := range s.sessions {
		if sess.Running && len(sess.Pending) > 0 && sess.Opts.DispatchLatencySec > 0 &&
			now.Sub(sess.OldestPending) >= time.Duration(sess.Opts.DispatchLatencySec)*time.Second {
			sess.Flush(s.files)
		}
	}
}

func (s *Server) anySessionRunning() bool {
	for _, sess := range s.sessions {
		if sess.Running {
			return true
		}
	}
	return false
}

package exporter

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"maps"
	"regexp"
	"strings"
	"sync"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/queryreplay/queryreplay/pkg/sqlconn"
	"github.com/queryreplay/queryreplay/pkg/tsql"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// querier is the part of *sql.DB a target uses.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// target polls one server's session. Only its poll goroutine touches the
// poll state; mu guards what Collect and the HTTP handlers read.
type target struct {
	cfg    Target
	global *Global
	log    *slog.Logger
	db     *sql.DB
	// owner keeps the session's owner connection (owner.go); nil until the
	// first initialisation.
	owner *owner
	// adopted: the owner id was taken over from a predecessor's kept
	// session, whose backlog initialize counts as lost (backlog.go).
	adopted bool
	run     runCtl // its poll loop (reload.go)
	// respec: the configuration changed under a running session (a
	// reload); the next poll redefines it under the same name.
	respec bool

	// pollMu serialises polls (the schedule and PollNow); the poll state
	// below belongs to whoever holds it.
	pollMu    sync.Mutex
	spec      *sessionSpec
	cursor    fileCursor
	ringSeq   seqTracker
	created   time.Time // the running session's create_time
	dropped   int64     // its dropped_event_count at the last poll
	dec       *xe.Decoder
	cat       *catalog
	waitNames map[uint64]string

	mu     sync.Mutex
	groups map[string]*groupStore
	top    *topTable
	st     targetStats
}

type targetStats struct {
	up, polled  bool
	session     string // the session's name, once initialised
	lastSuccess time.Time
	decoded     map[string]uint64
	malformed   uint64
	lost        uint64
	duplicates  uint64
	xeDropped   uint64
	restarts    map[string]uint64
	pollErrors  map[string]uint64
	lastError   string
	poll        histogram
}

// Poll steps, the step label of poll_errors_total.
const (
	stepConnect = "connect"
	stepSession = "session"
	stepRead    = "read"
	stepNames   = "names"
)

// stepError is a poll failure at one step.
type stepError struct {
	step string
	err  error
}

func (e *stepError) Error() string { return e.step + ": " + e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

func failAt(step string, err error) error {
	if err == nil {
		return nil
	}
	return &stepError{step, err}
}

func newTarget(cfg Target, g *Global, log *slog.Logger) *target {
	t := &target{cfg: cfg, global: g, log: log.With("target", cfg.Name), dec: newEventDecoder(),
		cat: newCatalog(*cfg.PageLookupsPerPoll), groups: map[string]*groupStore{},
		top: newTopTable(g.TopQueries.Size, g.TopQueries.MaxAge.D())}
	for _, def := range groupDefs {
		t.groups[def.name] = newGroupStore(def, t.labelLimit(def.name))
	}
	t.st = targetStats{decoded: map[string]uint64{}, restarts: map[string]uint64{}, pollErrors: map[string]uint64{}, poll: newHistogram(pollBuckets)}
	return t
}

func (t *target) labelLimit(group string) int {
	if n, ok := t.cfg.LabelLimits[group]; ok {
		return n
	}
	if n, ok := t.global.LabelLimits[group]; ok {
		return n
	}
	return t.global.LabelLimit
}

// withAppName sets the client application name the session's predicate
// excludes; it overrides any app name the DSN gives.
func withAppName(dsn string) string { return withApp(dsn, AppName) }

// withApp sets the client application name app on a DSN.
func withApp(dsn, app string) string { return sqlconn.WithApp(dsn, app) }

// open creates the connection pool. Parse errors from go-mssqldb name the
// parameter that is wrong, never the password.
func (t *target) open() error {
	if t.db != nil {
		return nil
	}
	db, err := sql.Open("sqlserver", withAppName(t.cfg.dsn))
	if err != nil {
		return fmt.Errorf("the DSN does not parse: %w", err)
	}
	// One poll at a time uses the pool; a second connection serves a probe
	// or a lookup while the first is still being drained.
	db.SetMaxOpenConns(2)
	db.SetMaxIdleConns(2)
	db.SetConnMaxIdleTime(10 * time.Minute)
	t.db = db
	return nil
}

// loop polls until ctx ends: one poll right away, then one per interval.
func (t *target) loop(ctx context.Context) { every(ctx, t.cfg.PollInterval.D(), t.poll) }

// every calls fn at once and then interval after each call ended, until ctx
// ends (a slow call delays the next rather than piling calls up).
func every(ctx context.Context, interval time.Duration, fn func(context.Context)) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		fn(ctx)
		timer.Reset(interval)
	}
}

// poll runs one poll with the poll timeout and records its outcome.
func (t *target) poll(ctx context.Context) {
	t.pollMu.Lock()
	defer t.pollMu.Unlock()
	start := time.Now()
	pctx, cancel := context.WithTimeout(ctx, t.global.PollTimeout.D())
	err := t.pollOnce(pctx)
	cancel()
	elapsed := time.Since(start)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.st.poll.observe(elapsed.Seconds())
	t.st.polled = true
	if err == nil {
		t.st.up, t.st.lastSuccess, t.st.lastError = true, time.Now(), ""
		return
	}
	if ctx.Err() != nil {
		return // shutting down
	}
	t.st.up = false
	step := stepRead
	var se *stepError
	if errors.As(err, &se) {
		step = se.step
	}
	t.st.pollErrors[step]++
	t.st.lastError = err.Error()
	t.log.Warn("poll failed", "step", step, "err", err)
}

func (t *target) pollOnce(ctx context.Context) error {
	if err := t.open(); err != nil {
		return failAt(stepConnect, err)
	}
	if err := t.db.PingContext(ctx); err != nil {
		return failAt(stepConnect, err)
	}
	if t.spec == nil {
		if err := t.initialize(ctx); err != nil {
			return failAt(stepSession, err)
		}
	}
	if err := t.keepOwner(ctx); err != nil {
		return failAt(stepSession, err)
	}
	state, err := t.ensureSession(ctx)
	if err != nil {
		return failAt(stepSession, err)
	}
	b := newBatch()
	var rs readStats
	readErr := t.read(ctx, state, b, &rs)
	nameErr := t.resolveNames(ctx, b)
	t.mu.Lock()
	t.merge(b, &rs, time.Now())
	t.mu.Unlock()
	if readErr != nil {
		return failAt(stepRead, readErr)
	}
	if t.respec {
		if err := t.redefineSession(ctx); err != nil {
			return failAt(stepSession, err)
		}
	}
	if err := t.lookupTop(ctx); err != nil && nameErr == nil {
		nameErr = err
	}
	if nameErr != nil {
		// names are best effort: the counts are in, under "unknown"
		t.log.Debug("name lookup failed", "err", nameErr)
	}
	return nil
}

// initialize resolves the session against the server (edition, databases,
// map keys) and (re)creates it. At startup the session is always made
// anew, so that it matches the configuration; files left by earlier
// sessions are skipped, so that events from before the start are never
// counted in one burst.
func (t *target) initialize(ctx context.Context) error {
	spec, err := t.resolveSpec(ctx)
	if err != nil {
		return err
	}
	if err := t.takeOwnership(ctx, spec); err != nil {
		return err
	}
	if err := t.setFile(ctx, spec); err != nil {
		return err
	}
	if t.adopted {
		t.adopted = false // once: later initialisations follow session loss
		if err := t.countBacklog(ctx, spec); err != nil {
			// the count is best effort; the session setup goes on
			t.log.Warn("could not count the kept session's backlog", "session", spec.name, "err", err)
		}
	}
	if _, err := t.db.ExecContext(ctx, spec.dropDDL()); err != nil {
		return fmt.Errorf("drop the previous session: %w", err)
	}
	if _, err := t.db.ExecContext(ctx, spec.createDDL()); err != nil {
		return fmt.Errorf("create session %s: %w", spec.name, err)
	}
	if _, err := t.db.ExecContext(ctx, spec.startDDL()); err != nil {
		return fmt.Errorf("start session %s: %w", spec.name, err)
	}
	t.spec = spec
	t.mu.Lock()
	t.st.session = spec.name
	t.mu.Unlock()
	t.cursor = fileCursor{}
	if p, ok := readPattern(strings.TrimSuffix(spec.file, ".xel") + "_0_0.xel"); ok {
		t.cursor.pattern = p // until the target reports its file
	}
	t.ringSeq.startFresh()
	t.cursor.seq.startFresh()
	if spec.target == "event_file" {
		if err := t.skipExistingFiles(ctx); err != nil {
			t.spec = nil
			return err
		}
	}
	t.log.Info("session started", "session", spec.name, "xe_target", spec.target, "events", len(spec.events()))
	return nil
}

// resolveSpec builds the session for this server.
func (t *target) resolveSpec(ctx context.Context) (*sessionSpec, error) {
	c := t.cfg
	s := &sessionSpec{
		groups: c.Events, maxFileMB: c.Session.EventFile.MaxFileSizeMB,
		rollover: c.Session.EventFile.MaxRolloverFiles, ringEvents: c.Session.RingBuffer.MaxEvents,
		ringKB: c.Session.RingBuffer.MaxMemoryKB, maxMemoryMB: c.Session.MaxMemoryMB,
		latencySec: int(c.Session.MaxDispatchLatency.D() / time.Second), startup: c.Session.StartupState,
		waitEvent: c.Waits.Event, waitAll: true,
	}
	// SERVERPROPERTY('EngineEdition'): 5 = Azure SQL Database, 8 = Managed
	// Instance (https://learn.microsoft.com/en-us/sql/t-sql/functions/serverproperty-transact-sql).
	// Asked alone: a SELECT that mixes it with server-level DMVs fails as a
	// whole on Azure SQL Database (docs/design/exporter.md §9.1).
	var edition sql.NullInt64
	if err := t.db.QueryRowContext(ctx, "SELECT CAST(SERVERPROPERTY('EngineEdition') AS int)").Scan(&edition); err != nil {
		return nil, fmt.Errorf("read the engine edition: %w", err)
	}
	azure := edition.Int64 == 5 || edition.Int64 == 8
	switch c.Session.Scope {
	case "database":
		s.scope = sqlconn.ScopeDatabase
	case "auto":
		if edition.Int64 == 5 {
			s.scope = sqlconn.ScopeDatabase
		}
	}
	s.target = c.Session.Target
	if s.target == "auto" {
		s.target = "event_file"
		if azure && !isBlobURL(c.Session.EventFile.Path) {
			s.target = "ring_buffer"
		}
	}
	if s.target == "event_file" && azure && !isBlobURL(c.Session.EventFile.Path) {
		return nil, fmt.Errorf("azure SQL (engine edition %d) writes event files only to Azure Blob Storage: set session.event_file.path to a blob container URL (with its database-scoped credential), or use session.target: ring_buffer", edition.Int64)
	}
	if err := t.cat.refreshDatabases(ctx, t.db, nil, true); err != nil {
		return nil, err
	}
	for _, name := range c.Databases {
		id, ok := t.databaseID(name)
		if !ok {
			return nil, fmt.Errorf("database %q (in databases) does not exist on the server", name)
		}
		s.databaseIDs = append(s.databaseIDs, id)
	}
	if err := t.resolveWaits(ctx, s); err != nil {
		return nil, err
	}
	if err := s.checkPredicates(); err != nil {
		return nil, err
	}
	return s, nil
}

// setFile names the event file after the session (known once the owner
// is).
func (t *target) setFile(ctx context.Context, s *sessionSpec) error {
	s.file = defaultFileName(t.cfg.Session.EventFile.Path, s.name)
	if s.target == "event_file" && !isAbsolutePath(s.file) {
		dir, err := t.logDirectory(ctx)
		if err != nil {
			return err
		}
		s.file = dir + s.file
	}
	return nil
}

// logDirectory is where SQL Server puts an event file given a bare name:
// the directory of its error log (SERVERPROPERTY('ErrorLogFileName'),
// https://learn.microsoft.com/en-us/sql/t-sql/functions/serverproperty-transact-sql),
// with its trailing separator. The session is created with the full path,
// so the read pattern is known before the target reports its file.
func (t *target) logDirectory(ctx context.Context) (string, error) {
	var errorLog sql.NullString
	if err := t.db.QueryRowContext(ctx, "SELECT CAST(SERVERPROPERTY('ErrorLogFileName') AS nvarchar(4000))").Scan(&errorLog); err != nil {
		return "", fmt.Errorf("read the error log's path: %w", err)
	}
	i := strings.LastIndexAny(errorLog.String, `/\`)
	if i < 0 {
		return "", fmt.Errorf("cannot tell the log directory from ErrorLogFileName %q: set session.event_file.path", errorLog.String)
	}
	return errorLog.String[:i+1], nil
}

// isAbsolutePath: /var/…, C:\…, \\server\share or an https:// URL.
func isAbsolutePath(p string) bool {
	return strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\\`) || isBlobURL(p) ||
		len(p) > 2 && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}

func (t *target) databaseID(name string) (uint64, bool) {
	for id, n := range t.cat.databases {
		if strings.EqualFold(n, name) {
			return id, true
		}
	}
	return 0, false
}

// resolveWaits turns the wait patterns into key ranges of this server's
// wait_types map and finds the End key of event_opcode
// (sys.dm_xe_map_values,
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-map-values-transact-sql).
func (t *target) resolveWaits(ctx context.Context, s *sessionSpec) error {
	rows, err := t.db.QueryContext(ctx, "SELECT name, map_key, map_value FROM sys.dm_xe_map_values WHERE name = N'wait_types' OR name = N'event_opcode'")
	if err != nil {
		return fmt.Errorf("read the wait type map: %w", err)
	}
	defer rows.Close()
	waits := map[uint64]string{}
	for rows.Next() {
		var name, value string
		var key int64
		if err := rows.Scan(&name, &key, &value); err != nil {
			return fmt.Errorf("read the wait type map: %w", err)
		}
		switch {
		case name == "wait_types":
			waits[uint64(key)] = value
		case strings.EqualFold(value, "End"):
			s.waitEndOpcode, s.hasEndOpcode = uint64(key), true
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the wait type map: %w", err)
	}
	t.waitNames = waits
	if !containsGroup(s.groups, GroupWaits) {
		return nil
	}
	exclude := append([]string(nil), t.cfg.Waits.Exclude...)
	if *t.cfg.Waits.ExcludeBenign {
		exclude = append(exclude, benignWaits()...)
	}
	s.waitRanges, s.waitAll = waitKeyRanges(waits, t.cfg.Waits.Include, exclude)
	s.waitLeftOut = waitKeysLeftOut(waits, s.waitRanges)
	if len(waits) > 0 && len(s.waitRanges) == 0 {
		return errors.New("waits.include and waits.exclude keep no wait type of this server")
	}
	if len(waits) == 0 {
		s.waitAll = len(t.cfg.Waits.Include) == 0 && len(exclude) == 0
		if !s.waitAll {
			return errors.New("the server lists no wait_types map values: wait type filters cannot be resolved")
		}
	}
	if ms := t.cfg.Waits.MinDuration.D().Milliseconds(); ms > 0 {
		s.waitMinMs = uint64(ms)
	}
	return nil
}

func containsGroup(groups []string, g string) bool {
	for _, x := range groups {
		if x == g {
			return true
		}
	}
	return false
}

// sessionState is the running session as the DMVs show it.
type sessionState struct {
	created    time.Time
	dropped    int64
	targetData string
}

// ensureSession reads the running session's state; a session that is
// missing (dropped by someone) is created again and one that is stopped (a
// server restart, a STOP) is started again.
func (t *target) ensureSession(ctx context.Context) (sessionState, error) {
	st, ok, err := t.readState(ctx)
	if err != nil || ok {
		t.noteState(st)
		return st, err
	}
	var n int
	if err := t.db.QueryRowContext(ctx, t.spec.existsQuery()).Scan(&n); err != nil {
		return st, fmt.Errorf("look for session %s: %w", t.spec.name, err)
	}
	reason := "started"
	if n == 0 {
		reason = "created"
		if _, err := t.db.ExecContext(ctx, t.spec.createDDL()); err != nil {
			return st, fmt.Errorf("create session %s again: %w", t.spec.name, err)
		}
	}
	if _, err := t.db.ExecContext(ctx, t.spec.startDDL()); err != nil && !isAlreadyStarted(err) {
		return st, fmt.Errorf("start session %s again: %w", t.spec.name, err)
	}
	t.mu.Lock()
	t.st.restarts[reason]++
	t.mu.Unlock()
	t.log.Warn("session was not running; started it again", "session", t.spec.name, "reason", reason)
	st, ok, err = t.readState(ctx)
	if err == nil && !ok {
		err = fmt.Errorf("session %s is still not running after START", t.spec.name)
	}
	t.noteState(st)
	return st, err
}

func (t *target) readState(ctx context.Context) (sessionState, bool, error) {
	var st sessionState
	var data sql.NullString
	var dropped sql.NullInt64
	err := t.db.QueryRowContext(ctx, t.spec.stateQuery()).Scan(&st.created, &dropped, &data)
	if errors.Is(err, sql.ErrNoRows) {
		return st, false, nil
	}
	if err != nil {
		return st, false, fmt.Errorf("read session state: %w", err)
	}
	st.dropped, st.targetData = dropped.Int64, data.String
	if t.spec.target == "event_file" {
		if name, ok := currentFile(st.targetData); ok {
			if p, ok := readPattern(name); ok {
				t.cursor.pattern = p
			}
		}
	}
	return st, true, nil
}

// noteState counts XE's dropped events: dropped_event_count restarts at 0
// with each session start (a new create_time).
func (t *target) noteState(st sessionState) {
	if st.created.IsZero() {
		return
	}
	var delta int64
	if !st.created.Equal(t.created) {
		t.created, delta = st.created, st.dropped
	} else if st.dropped > t.dropped {
		delta = st.dropped - t.dropped
	}
	t.dropped = st.dropped
	if delta > 0 {
		t.mu.Lock()
		t.st.xeDropped += uint64(delta)
		t.mu.Unlock()
	}
}

var fileNameAttr = regexp.MustCompile(`<File\s+name="([^"]*)"`)

// currentFile reads the file an event_file target writes from its
// target_data (<EventFileTarget><File name="…"/>).
func currentFile(targetData string) (string, bool) {
	m := fileNameAttr.FindStringSubmatch(targetData)
	if m == nil || m[1] == "" {
		return "", false
	}
	return html.UnescapeString(m[1]), true
}

// skipExistingFiles sets the bookmark after the last buffer of every file
// the new session did not write, in one aggregate query.
func (t *target) skipExistingFiles(ctx context.Context) error {
	if t.cursor.pattern == "" {
		if _, _, err := t.readState(ctx); err != nil {
			return err
		}
	}
	if t.cursor.pattern == "" {
		return errors.New("the event_file target reports no file name")
	}
	st, _, _ := t.readState(ctx)
	current, _ := currentFile(st.targetData)
	rows, err := t.db.QueryContext(ctx, "SELECT file_name, MAX(file_offset) FROM sys.fn_xe_file_target_read_file("+
		tsql.QuoteString(t.cursor.pattern)+", NULL, NULL, NULL) GROUP BY file_name")
	if err != nil {
		if isNoEventFile(err) {
			return nil
		}
		return fmt.Errorf("skip the events of earlier sessions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var file string
		var offset int64
		if err := rows.Scan(&file, &offset); err != nil {
			return fmt.Errorf("skip the events of earlier sessions: %w", err)
		}
		if strings.EqualFold(file, current) {
			continue
		}
		if !t.cursor.hasBook || after(file, offset, t.cursor.bookFile, t.cursor.bookOffset) {
			t.cursor.setBookmark(file, offset)
		}
	}
	return rows.Err()
}

// read reads the session's new events into b.
func (t *target) read(ctx context.Context, st sessionState, b *batch, rs *readStats) error {
	if t.spec.target == "ring_buffer" {
		return t.readRing(st, b, rs)
	}
	for attempt := 0; attempt < 3; attempt++ {
		rows, err := t.db.QueryContext(ctx, t.cursor.readQuery())
		if err != nil {
			if isNoEventFile(err) || isBadOffset(err) {
				if t.cursor.hasBook {
					// the bookmarked file rolled over (max_rollover_files):
					// read what is left, skipping up to the bookmark.
					t.cursor.fallBack()
					continue
				}
				if isNoEventFile(err) {
					return nil // no file yet
				}
			}
			return fmt.Errorf("read events: %w", err)
		}
		err = t.cursor.consume(&sqlFileRows{rows: rows}, t.dec, b, rs)
		rows.Close()
		if err != nil {
			return fmt.Errorf("read events: %w", err)
		}
		return nil
	}
	return nil
}

// readRing reads the ring buffer's target_data; events already counted are
// recognised by event_sequence within the session start.
func (t *target) readRing(st sessionState, b *batch, rs *readStats) error {
	t.dec.Reset(strings.NewReader(st.targetData))
	scope := st.created.UTC().Format(time.RFC3339Nano)
	inDoc := uint64(0)
	for {
		ev, err := t.dec.Next()
		if err == io.EOF {
			t.noteRingTruncation(inDoc, rs)
			return nil
		}
		inDoc++
		var re *xe.RowError
		if errors.As(err, &re) {
			b.malformed++
			continue
		}
		if err != nil {
			return fmt.Errorf("decode the ring buffer: %w", err)
		}
		ctx := contextOf(&ev)
		if ctx.hasSeq {
			dup, lost := t.ringSeq.observe(scope, ctx.seq)
			if dup {
				continue // still in the ring from an earlier poll
			}
			rs.lost += lost
		}
		rs.events++
		b.add(&ev, ctx)
	}
}

// noteRingTruncation honours the ring_buffer's truncated attribute. The
// server caps target_data near 4 MB and leaves out the newest events
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-session-targets-transact-sql,
// https://learn.microsoft.com/en-us/sql/t-sql/statements/create-event-session-transact-sql):
// the events the ring holds (eventCount) but the document lacks are
// counted lost, and their sequence numbers skipped so that a later poll
// that sees them does not count them twice.
func (t *target) noteRingTruncation(inDoc uint64, rs *readStats) {
	rb, ok := t.dec.RingBuffer()
	if !ok || !rb.Truncated || rb.EventCount <= inDoc {
		return
	}
	missing := rb.EventCount - inDoc
	rs.lost += missing
	t.ringSeq.skip(missing)
}

// sqlFileRows adapts *sql.Rows to fileRows. event_data and file_name are
// scanned into reused RawBytes; the file name string is made only when it
// changes (once per file, not once per row).
type sqlFileRows struct {
	rows    *sql.Rows
	object  sql.RawBytes
	data    sql.RawBytes
	fileRaw sql.RawBytes
	file    string
	offset  int64
}

func (r *sqlFileRows) Next() bool   { return r.rows.Next() }
func (r *sqlFileRows) Err() error   { return r.rows.Err() }
func (r *sqlFileRows) Close() error { return r.rows.Close() }
func (r *sqlFileRows) Row() (fileRow, error) {
	if err := r.rows.Scan(&r.object, &r.data, &r.fileRaw, &r.offset); err != nil {
		return fileRow{}, err
	}
	if string(r.fileRaw) != r.file {
		r.file = string(r.fileRaw)
	}
	return fileRow{data: r.data, file: r.file, offset: r.offset}, nil
}

// SQL Server errors the reader handles (numbers from
// https://learn.microsoft.com/en-us/sql/relational-databases/errors-events/database-engine-events-and-errors).
func sqlErrorNumber(err error) int32 {
	var e mssql.Error
	if errors.As(err, &e) {
		return e.Number
	}
	var pe *mssql.Error
	if errors.As(err, &pe) && pe != nil {
		return pe.Number
	}
	return 0
}

// isNoEventFile: Msg 25718, the log file name is invalid (no file matches
// the pattern, or the initial file is gone).
func isNoEventFile(err error) bool { return sqlErrorNumber(err) == 25718 }

// isBadOffset: Msg 25722, the offset is invalid for the file.
func isBadOffset(err error) bool { return sqlErrorNumber(err) == 25722 }

// isAlreadyStarted: Msg 25705, the session is already started.
func isAlreadyStarted(err error) bool { return sqlErrorNumber(err) == 25705 }

// isInvalidObject: Msg 208, invalid object name.
func isInvalidObject(err error) bool { return sqlErrorNumber(err) == 208 }

// resolveNames names the databases, HoBTs and pages of a batch.
func (t *target) resolveNames(ctx context.Context, b *batch) error {
	var dbs []uint64
	for k := range b.waits {
		dbs = append(dbs, k.db)
	}
	for k := range b.spills {
		dbs = append(dbs, k.db)
	}
	for k := range b.splits {
		dbs = append(dbs, k.db)
	}
	for k := range b.pages {
		dbs = append(dbs, k.db)
	}
	for k := range b.stmts {
		dbs = append(dbs, k.db)
	}
	for k := range b.memory {
		dbs = append(dbs, k)
	}
	for k := range b.logs {
		dbs = append(dbs, k)
	}
	var errs []error
	if err := t.cat.refreshDatabases(ctx, t.db, dbs, false); err != nil {
		errs = append(errs, err)
	}
	hobts := make([]idKey, 0, len(b.splits))
	for k := range b.splits {
		hobts = append(hobts, idKey{k.db, k.hobt})
	}
	if err := t.cat.resolveHoBTs(ctx, t.db, hobts); err != nil {
		errs = append(errs, err)
	}
	pages := make([]pageKey, 0, len(b.pages))
	for k := range b.pages {
		pages = append(pages, k)
	}
	if err := t.cat.resolvePages(ctx, t.db, pages); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		t.mu.Lock()
		t.st.pollErrors[stepNames]++
		t.mu.Unlock()
	}
	return errors.Join(errs...)
}

// lookupTop fills in the top queries' statements from the plan cache,
// else from the Query Store of the database each was seen in.
func (t *target) lookupTop(ctx context.Context) error {
	if !*t.global.TopQueries.StatementText {
		return nil
	}
	t.mu.Lock()
	want := t.top.pendingLookups(time.Now())
	t.mu.Unlock()
	maxBytes := t.global.TopQueries.MaxStatementBytes
	found, err := fetchStatements(ctx, t.db, want, maxBytes)
	if err == nil {
		missing := map[uint64]string{}
		t.mu.Lock()
		for _, h := range want {
			if _, ok := found[h]; !ok {
				missing[h] = t.top.databaseOf(h)
			}
		}
		t.mu.Unlock()
		maps.Copy(found, fetchFromQueryStore(ctx, t.db, missing, maxBytes, t.log))
	}
	t.mu.Lock()
	t.top.setStatements(found)
	t.mu.Unlock()
	return err
}

// shutdown drops the session when the configuration says so, from a
// context of its own so that it runs after the pollers stopped.
func (t *target) shutdown(ctx context.Context, drop bool) error {
	t.pollMu.Lock()
	defer t.pollMu.Unlock()
	if t.db == nil {
		return nil
	}
	defer t.db.Close()
	// the owner goes last: until the drop, no other exporter's sweep may
	// judge the session orphaned
	defer t.owner.close()
	if t.spec == nil {
		return nil
	}
	if !drop {
		return t.markKept(ctx)
	}
	if _, err := t.db.ExecContext(ctx, t.spec.dropDDL()); err != nil {
		return fmt.Errorf("target %s: drop session %s: %w", t.cfg.Name, t.spec.name, err)
	}
	t.log.Info("session dropped", "session", t.spec.name)
	return nil
}

package xevents

import (
	_ "embed"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

//go:embed wait_types_sql2017.tsv
var waitTypesTSV string

func init() {
	for i := range Maps {
		if Maps[i].Name != "wait_types" {
			continue
		}
		for _, line := range strings.Split(waitTypesTSV, "\n") {
			if line == "" || line[0] == '#' {
				continue
			}
			k, v, ok := strings.Cut(strings.TrimRight(line, "\r"), "\t")
			n, err := strconv.Atoi(k)
			if !ok || err != nil {
				continue
			}
			Maps[i].Entries = append(Maps[i].Entries, MapEntry{n, v})
		}
	}
	indexMaps()
}

// Instance is what a session needs from the server instance it runs on:
// the actions it knows, its log directory (where relative event_file names
// go), which event_file paths it accepts and its product name.
type Instance interface {
	HasAction(name string) bool
	LogDirOrDefault() string
	EventFileAllowed(filename string) bool
	ProductName() string
	// DatabaseScopedUnavailable reports whether an event or action
	// (kind "event" or "action", name package.name) is refused in a
	// database-scoped session.
	DatabaseScopedUnavailable(kind, name string) bool
}

// Session is one event session: its definition (catalog) and, while
// started, its runtime state (buffers, targets).
type Session struct {
	ID       int
	Name     string
	Database bool // ON DATABASE
	persona  Instance
	Events   []*SessionEvent
	Targets  []*Target
	Opts     SessionOptions
	Running  bool
	Started  time.Time
	Sequence int64

	Pending       []RenderedEvent
	PendingBytes  int
	OldestPending time.Time
	Dropped       int64
	LargestDrop   int64
	TotalBytes    int64
}

// RegularBufferBytes is the size of one of the session's three event
// buffers: MAX_MEMORY divided among them, as sys.dm_xe_sessions describes
// regular_buffer_size
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-sessions-transact-sql).
func (s *Session) RegularBufferBytes() int64 { return s.Opts.MaxMemoryKB * 1024 / 3 }

// LargeBufferBytes is the size of the session's two large buffers,
// MAX_EVENT_SIZE (0 when the option is not set, and there are none).
func (s *Session) LargeBufferBytes() int64 { return s.Opts.MaxEventSizeKB * 1024 }

// Admit says whether an event of size bytes can be buffered, and counts
// it dropped when it cannot: an event larger than a regular buffer needs a
// large buffer, which exists only when MAX_EVENT_SIZE allows it (CREATE
// EVENT SESSION, MAX_EVENT_SIZE:
// https://learn.microsoft.com/en-us/sql/t-sql/statements/create-event-session-transact-sql).
// A large actual plan is the event this loses.
func (s *Session) Admit(size int64) bool {
	if size <= s.RegularBufferBytes() || size <= s.LargeBufferBytes() {
		return true
	}
	s.Dropped++
	s.LargestDrop = max(s.LargestDrop, size)
	return false
}

type SessionEvent struct {
	ID        int
	Pkg, Name string
	Actions   []sqlfront.XEName
	Pred      sqlfront.XEPred
	PredText  string
	Settings  []sqlfront.XESetting
	Def       EventDef
}

type SessionOptions struct {
	MaxMemoryKB        int64
	Retention          string
	DispatchLatencySec int64 // 0 = INFINITE
	MaxEventSizeKB     int64
	PartitionMode      string
	TrackCausality     bool
	StartupState       bool
}

func defaultSessionOptions() SessionOptions {
	// Defaults from the CREATE EVENT SESSION reference: 4 MB, single event
	// loss, 30 s latency, no partitioning, causality and startup off.
	return SessionOptions{MaxMemoryKB: 4096, Retention: "ALLOW_SINGLE_EVENT_LOSS", DispatchLatencySec: 30, PartitionMode: "NONE"}
}

type RenderedEvent struct {
	Name string
	File string // event_file form (no <type>)
	Ring string // ring_buffer form (with <type>)
	Time time.Time
}

type Target struct {
	LogDir    string // the persona's instance log directory, for relative file names
	ID        int
	Pkg, Name string
	Settings  []sqlfront.XESetting
	// event_file
	Filename    string
	maxFileMB   int64
	maxRollover int64
	Current     *File
	// ring_buffer
	Ring          []RenderedEvent
	ringMax       int
	ringMaxKB     int64
	RingTotal     int64
	RingDropped   int64
	ExecCount     int64
	BuffersLogged int64
}

// File is an event file "on disk" (kept in memory): buffers of events,
// each buffer at a file offset shared by all its events, as
// fn_xe_file_target_read_file reports it.
type File struct {
	Path    string
	Buffers []Buffer
	Size    int64
}

type Buffer struct {
	Offset int64
	Events []RenderedEvent
}

// FileHeaderBytes is where the first event buffer starts. A real .xel file
// starts with a header and metadata buffers; the exact size varies, this is
// a plausible fixed value (documented as emulated).
const FileHeaderBytes = 4608

// SessionFromDDL validates a CREATE EVENT SESSION statement as SQL Server
// does and builds the session definition.
func SessionFromDDL(s *sqlfront.CreateEventSessionStmt, p Instance) (*Session, *sqlfront.SQLError) {
	sess := &Session{Name: s.Name, Database: s.Database, persona: p, Opts: defaultSessionOptions()}
	if err := sess.AddEvents(s.Events); err != nil {
		return nil, err
	}
	if err := sess.AddTargets(s.Targets); err != nil {
		return nil, err
	}
	if err := sess.ApplyOptions(s.Options); err != nil {
		return nil, err
	}
	return sess, nil
}

func (sess *Session) AddEvents(specs []sqlfront.XEEventSpec) *sqlfront.SQLError {
	for _, spec := range specs {
		def, name, ok := lookupEvent(spec.Package, spec.Name)
		if !ok {
			return sqlfront.ErrXEObjectInvalid("event", Qualify(spec.Package, spec.Name))
		}
		for _, e := range sess.Events {
			if e.Name == name {
				return errXEDuplicate("event", def.Pkg+"."+name)
			}
		}
		if sess.Database && sess.persona.DatabaseScopedUnavailable("event", def.Pkg+"."+name) {
			return errXEEventUnavailable(def.Pkg+"."+name, sess.persona.ProductName())
		}
		// the predicate as written, WHERE excluded: "Predicates are limited
		// to 3,000 characters"
		// (https://learn.microsoft.com/en-us/sql/t-sql/statements/create-event-session-transact-sql)
		if n := spec.PredicateChars; n > MaxPredicateChars {
			return errXEPredicateTooLong(def.Pkg+"."+name, n)
		}
		ev := &SessionEvent{ID: len(sess.Events) + 1, Pkg: def.Pkg, Name: name, Def: def, Pred: spec.Predicate, PredText: spec.PredicateText, Settings: spec.Settings}
		for _, st := range spec.Settings {
			if !HasString(def.custom, st.Name) {
				return errXEAttrMissing("event", def.Pkg+"."+name, st.Name)
			}
		}
		seen := map[string]bool{}
		for _, a := range spec.Actions {
			pkg, ok := Actions[strings.ToLower(a.Name)]
			if !ok || !sess.persona.HasAction(a.Name) || a.Package != "" && !strings.EqualFold(a.Package, pkg) {
				return sqlfront.ErrXEObjectInvalid("action", Qualify(a.Package, a.Name))
			}
			n := strings.ToLower(a.Name)
			if sess.Database && sess.persona.DatabaseScopedUnavailable("action", pkg+"."+n) {
				return errXEActionUnavailable(pkg+"."+n, sess.persona.ProductName())
			}
			if seen[n] {
				return errXEDuplicate("action", pkg+"."+n)
			}
			seen[n] = true
			ev.Actions = append(ev.Actions, sqlfront.XEName{Package: pkg, Name: n})
		}
		if err := validatePred(spec.Predicate, def, name); err != nil {
			return err
		}
		sess.Events = append(sess.Events, ev)
	}
	return nil
}

func Qualify(pkg, name string) string {
	if pkg == "" {
		return name
	}
	return pkg + "." + name
}

func validatePred(p sqlfront.XEPred, def EventDef, event string) *sqlfront.SQLError {
	switch x := p.(type) {
	case nil:
		return nil
	case *sqlfront.XEPredAnd:
		if err := validatePred(x.L, def, event); err != nil {
			return err
		}
		return validatePred(x.R, def, event)
	case *sqlfront.XEPredOr:
		if err := validatePred(x.L, def, event); err != nil {
			return err
		}
		return validatePred(x.R, def, event)
	case *sqlfront.XEPredNot:
		return validatePred(x.P, def, event)
	case *sqlfront.XEPredLeaf:
		if x.Source.Package == "" {
			if !HasString(def.Fields, x.Source.Name) {
				return sqlfront.ErrXEObjectInvalid("predicate source", x.Source.Name)
			}
			return nil
		}
		pkg, ok := Actions[x.Source.Name]
		if !ok || pkg != x.Source.Package {
			return sqlfront.ErrXEObjectInvalid("predicate source", x.Source.Package+"."+x.Source.Name)
		}
		if (x.Op == "LIKE" || x.Op == "NOT LIKE") && !isStringSource(x.Source.Name) {
			return sqlfront.NewError(25715, 16, "The predicate on event \"%s\" is invalid. Operator '%s' is not defined for type \"%s\", predicate source: \"%s\".", event, strings.ToLower(x.Op), "uint16", x.Source.Package+"."+x.Source.Name)
		}
	}
	return nil
}

func isStringSource(name string) bool {
	switch name {
	case "sql_text", "database_name", "client_app_name", "client_hostname", "username", "server_principal_name",
		"server_instance_name", "nt_username", "session_nt_username":
		return true
	}
	return false
}

func (sess *Session) AddTargets(specs []sqlfront.XETargetSpec) *sqlfront.SQLError {
	for _, spec := range specs {
		name := strings.ToLower(spec.Name)
		if spec.Package != "" && !strings.EqualFold(spec.Package, "package0") {
			return sqlfront.ErrXEObjectInvalid("target", Qualify(spec.Package, spec.Name))
		}
		for _, t := range sess.Targets {
			if t.Name == name {
				return errXEDuplicate("target", "package0."+name)
			}
		}
		t := &Target{ID: len(sess.Targets) + 1, Pkg: "package0", Name: name, Settings: spec.Settings, LogDir: sess.persona.LogDirOrDefault()}
		switch name {
		case "event_file", "asynchronous_file_target":
			t.Name = "event_file"
			t.maxFileMB, t.maxRollover = 1024, 5
			for _, st := range spec.Settings {
				switch st.Name {
				case "filename":
					s, ok := st.Value.(string)
					if !ok || s == "" {
						return sqlfront.NewError(25641, 16, "For target, \"package0.event_file\", the parameter \"filename\" passed is invalid. The file name is empty or not a string.")
					}
					if !sess.persona.EventFileAllowed(s) {
						// SQL Server has no blob URLs; Azure has no local disk
						return errXEConfig("target", "package0.event_file", "The file name \""+s+"\" is not valid on "+sess.persona.ProductName()+".")
					}
					t.Filename = s
				case "max_file_size":
					n, ok := st.Value.(int64)
					if !ok || n < 1 {
						return sqlfront.NewError(25641, 16, "For target, \"package0.event_file\", the parameter \"max_file_size\" passed is invalid. The value must be at least 1 MB.")
					}
					t.maxFileMB = n
				case "max_rollover_files":
					n, ok := st.Value.(int64)
					if !ok || n < 0 {
						return sqlfront.NewError(25641, 16, "For target, \"package0.event_file\", the parameter \"max_rollover_files\" passed is invalid.")
					}
					t.maxRollover = n
				case "increment", "metadatafile", "lazy_create_blob", "add_app_name":
				default:
					return errXEAttrMissing("target", "package0.event_file", st.Name)
				}
			}
			if t.Filename == "" {
				return errXEMandatoryMissing("target", "package0.event_file")
			}
		case "ring_buffer":
			t.ringMax, t.ringMaxKB = 1000, 4096
			for _, st := range spec.Settings {
				n, _ := st.Value.(int64)
				switch st.Name {
				case "max_events_limit":
					t.ringMax = int(n)
				case "max_memory":
					t.ringMaxKB = n
				case "occurrence_number":
				default:
					return errXEAttrMissing("target", "package0.ring_buffer", st.Name)
				}
			}
		case "histogram", "pair_matching", "event_counter", "etw_classic_sync_target", "synchronous_event_counter", "asynchronous_bucketizer", "synchronous_bucketizer":
			return errXEConfig("target", "package0."+name, "The SQL Server stand-in emulates only the event_file and ring_buffer targets.")
		default:
			return sqlfront.ErrXEObjectInvalid("target", Qualify(spec.Package, spec.Name))
		}
		sess.Targets = append(sess.Targets, t)
	}
	return nil
}

func (sess *Session) ApplyOptions(opts []sqlfront.XEOption) *sqlfront.SQLError {
	seen := map[string]bool{}
	for _, o := range opts {
		if seen[o.Name] {
			return errXEOptionTwice(o.Name)
		}
		seen[o.Name] = true
		if sess.Running && (o.Name == "MAX_MEMORY" || o.Name == "MEMORY_PARTITION_MODE" || o.Name == "MAX_EVENT_SIZE" || o.Name == "EVENT_RETENTION_MODE" || o.Name == "TRACK_CAUSALITY" || o.Name == "MAX_DISPATCH_LATENCY") {
			return errXEOptionWhileRunning(o.Name)
		}
		switch o.Name {
		case "MAX_MEMORY", "MAX_EVENT_SIZE":
			kb := o.Num
			switch o.Value {
			case "MB":
				kb *= 1024
			case "KB", "":
			default:
				return sqlfront.ErrXEOptionInvalid(o.Name)
			}
			if o.Name == "MAX_MEMORY" {
				if kb < 200 {
					return errXEBufferTooSmall()
				}
				sess.Opts.MaxMemoryKB = kb
			} else {
				sess.Opts.MaxEventSizeKB = kb
			}
		case "EVENT_RETENTION_MODE":
			switch o.Value {
			case "ALLOW_SINGLE_EVENT_LOSS", "ALLOW_MULTIPLE_EVENT_LOSS", "NO_EVENT_LOSS":
				sess.Opts.Retention = o.Value
			default:
				return sqlfront.ErrXEOptionInvalid(o.Name)
			}
		case "MAX_DISPATCH_LATENCY":
			switch {
			case o.Value == "INFINITE":
				sess.Opts.DispatchLatencySec = 0
			case o.Value == "SECONDS":
				if o.Num < 1 {
					return errXELatencyTooSmall()
				}
				sess.Opts.DispatchLatencySec = o.Num
			default:
				return sqlfront.ErrXEOptionInvalid(o.Name)
			}
		case "MEMORY_PARTITION_MODE":
			switch o.Value {
			case "NONE", "PER_NODE", "PER_CPU":
				sess.Opts.PartitionMode = o.Value
			default:
				return sqlfront.ErrXEOptionInvalid(o.Name)
			}
		case "TRACK_CAUSALITY", "STARTUP_STATE":
			if o.Value != "ON" && o.Value != "OFF" {
				return sqlfront.ErrXEOptionInvalid(o.Name)
			}
			if o.Name == "TRACK_CAUSALITY" {
				sess.Opts.TrackCausality = o.Value == "ON"
			} else {
				sess.Opts.StartupState = o.Value == "ON"
			}
		default:
			return sqlfront.ErrSyntaxNear(o.Name)
		}
	}
	// MAX_EVENT_SIZE exists for events larger than MAX_MEMORY's buffers;
	// the CREATE EVENT SESSION page says a value below MAX_MEMORY raises an
	// error.
	if sess.Opts.MaxEventSizeKB != 0 && sess.Opts.MaxEventSizeKB < sess.Opts.MaxMemoryKB {
		return errXEEventSizeBelowMemory()
	}
	return nil
}

// start begins collecting: every event_file target opens a new file named
// <base>_0_<FILETIME>.xel, as SQL Server names rollover files.
func (sess *Session) Start(now time.Time, files map[string]*File) {
	sess.Running = true
	sess.Started = now
	for _, t := range sess.Targets {
		t.Ring = nil
		if t.Name == "event_file" {
			t.Current = nil
			t.Rollover(now, files)
		}
	}
}

func (sess *Session) Stop(files map[string]*File) {
	sess.Flush(files)
	sess.Running = false
	for _, t := range sess.Targets {
		t.Current = nil
	}
}

// fileTime is the Windows FILETIME (100 ns ticks since 1601) SQL Server puts
// in event file names.
func fileTime(t time.Time) int64 {
	return t.UnixNano()/100 + 116444736000000000
}

// ResolveXELPath applies SQL Server's naming: a relative file name goes to
// the instance log directory; the .xel extension is added when missing.
func ResolveXELPath(name, logDir string) (base, ext string) {
	if !strings.ContainsAny(name, `/\`) {
		name = logDir + name
	}
	ext = ".xel"
	if i := strings.LastIndex(name, "."); i > strings.LastIndexAny(name, `/\`) {
		return name[:i], name[i:]
	}
	return name, ext
}

func (t *Target) Rollover(now time.Time, files map[string]*File) {
	base, ext := ResolveXELPath(t.Filename, t.LogDir)
	stamp := fileTime(now)
	for {
		p := fmt.Sprintf("%s_0_%d%s", base, stamp, ext)
		if _, exists := files[p]; !exists {
			f := &File{Path: p, Size: FileHeaderBytes}
			files[p] = f
			t.Current = f
			break
		}
		stamp++
	}
	// keep at most max_rollover_files files of this target (0 = unlimited)
	if t.maxRollover > 0 {
		var mine []string
		prefix := base + "_0_"
		for p := range files {
			if strings.HasPrefix(p, prefix) && strings.HasSuffix(p, ext) {
				mine = append(mine, p)
			}
		}
		sortStrings(mine)
		for len(mine) > int(t.maxRollover) {
			delete(files, mine[0])
			mine = mine[1:]
		}
	}
}

// flush dispatches the session's pending events to its targets: for
// event_file, one buffer per flush at the file's current end.
func (sess *Session) Flush(files map[string]*File) {
	if len(sess.Pending) == 0 {
		return
	}
	evs := sess.Pending
	sess.Pending = nil
	sess.PendingBytes = 0
	for _, t := range sess.Targets {
		t.ExecCount++
		switch t.Name {
		case "event_file":
			if t.Current == nil {
				continue
			}
			// split into buffers no larger than a third of MAX_MEMORY, the
			// size SQL Server's three buffers per session have
			limit := int(sess.Opts.MaxMemoryKB * 1024 / 3)
			start := 0
			size := 0
			for i, e := range evs {
				size += len(e.File) / 2
				if size >= limit || i == len(evs)-1 {
					t.writeBuffer(evs[start:i+1], size, files)
					start, size = i+1, 0
				}
			}
		case "ring_buffer":
			t.Ring = append(t.Ring, evs...)
			t.RingTotal += int64(len(evs))
			if t.ringMax > 0 && len(t.Ring) > t.ringMax {
				t.RingDropped += int64(len(t.Ring) - t.ringMax)
				t.Ring = append([]RenderedEvent(nil), t.Ring[len(t.Ring)-t.ringMax:]...)
			}
			t.evictByMemory()
		}
	}
}

// RingEventBytes is the memory the stand-in charges a ring_buffer event:
// half its XML, an emulated stand-in for the binary size.
func RingEventBytes(e RenderedEvent) int64 { return int64(len(e.Ring) / 2) }

// evictByMemory drops the oldest events while the ring holds more than its
// max_memory, as a ring buffer does (first in, first out:
// https://learn.microsoft.com/en-us/sql/relational-databases/extended-events/targets-for-extended-events-in-sql-server).
func (t *Target) evictByMemory() {
	if t.ringMaxKB <= 0 {
		return
	}
	var mem int64
	for _, e := range t.Ring {
		mem += RingEventBytes(e)
	}
	drop := 0
	for mem > t.ringMaxKB*1024 && drop < len(t.Ring)-1 {
		mem -= RingEventBytes(t.Ring[drop])
		drop++
	}
	if drop > 0 {
		t.RingDropped += int64(drop)
		t.Ring = append([]RenderedEvent(nil), t.Ring[drop:]...)
	}
}

// RingXMLCap is where the stand-in cuts a ring_buffer's target_data: the
// XML is capped near 4 MB and the newest events are left out, with
// truncated="1" (sys.dm_xe_session_targets and CREATE EVENT SESSION,
// which recommends max_memory 2048 KB on the target to stay under it:
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-session-targets-transact-sql,
// https://learn.microsoft.com/en-us/sql/t-sql/statements/create-event-session-transact-sql).
// The exact cap is not documented; 4 MiB of event XML is the stand-in's.
const RingXMLCap = 4 << 20

// RingXML renders the ring_buffer's target_data: the oldest events first,
// up to RingXMLCap.
func (t *Target) RingXML() string {
	var b strings.Builder
	var mem int64
	for _, e := range t.Ring {
		mem += RingEventBytes(e)
	}
	n, size := 0, 0
	for _, e := range t.Ring {
		if size+len(e.Ring) > RingXMLCap {
			break
		}
		size += len(e.Ring)
		n++
	}
	truncated := 0
	if n < len(t.Ring) {
		truncated = 1
	}
	fmt.Fprintf(&b, `<RingBufferTarget truncated="%d" processingTime="0" totalEventsProcessed="%d" eventCount="%d" droppedCount="%d" memoryUsed="%d">`,
		truncated, t.RingTotal, len(t.Ring), t.RingDropped, mem)
	for _, e := range t.Ring[:n] {
		b.WriteString(e.Ring)
	}
	b.WriteString("</RingBufferTarget>")
	return b.String()
}

func (t *Target) writeBuffer(evs []RenderedEvent, size int, files map[string]*File) {
	bytes := int64((size + 64 + 511) / 512 * 512)
	if t.Current.Size+bytes > t.maxFileMB*1024*1024 && len(t.Current.Buffers) > 0 {
		t.Rollover(evs[0].Time, files)
	}
	f := t.Current
	f.Buffers = append(f.Buffers, Buffer{Offset: f.Size, Events: append([]RenderedEvent(nil), evs...)})
	f.Size += bytes
	t.BuffersLogged++
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// MatchXELPattern implements fn_xe_file_target_read_file's path argument: a
// path whose file part may contain * wildcards.
func MatchXELPattern(pattern, p string) bool {
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, `\`, "/")) }
	ok, err := path.Match(norm(pattern), norm(p))
	return err == nil && ok
}

package standin

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
	for i := range xeMaps {
		if xeMaps[i].name != "wait_types" {
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
			xeMaps[i].entries = append(xeMaps[i].entries, xeMapEntry{n, v})
		}
	}
	indexMaps()
}

// xeSession is one event session: its definition (catalog) and, while
// started, its runtime state (buffers, targets).
type xeSession struct {
	id       int
	name     string
	database bool // ON DATABASE
	persona  *Persona
	events   []*xeSessionEvent
	targets  []*xeTarget
	opts     sessionOptions
	running  bool
	started  time.Time
	sequence int64

	pending       []renderedEvent
	pendingBytes  int
	oldestPending time.Time
	dropped       int64
	totalBytes    int64
}

type xeSessionEvent struct {
	id        int
	pkg, name string
	actions   []sqlfront.XEName
	pred      sqlfront.XEPred
	predText  string
	settings  []sqlfront.XESetting
	def       xeEventDef
}

type sessionOptions struct {
	maxMemoryKB        int64
	retention          string
	dispatchLatencySec int64 // 0 = INFINITE
	maxEventSizeKB     int64
	partitionMode      string
	trackCausality     bool
	startupState       bool
}

func defaultSessionOptions() sessionOptions {
	// Defaults from the CREATE EVENT SESSION reference: 4 MB, single event
	// loss, 30 s latency, no partitioning, causality and startup off.
	return sessionOptions{maxMemoryKB: 4096, retention: "ALLOW_SINGLE_EVENT_LOSS", dispatchLatencySec: 30, partitionMode: "NONE"}
}

type renderedEvent struct {
	name string
	file string // event_file form (no <type>)
	ring string // ring_buffer form (with <type>)
	ts   time.Time
}

type xeTarget struct {
	logDir    string // the persona's instance log directory, for relative file names
	id        int
	pkg, name string
	settings  []sqlfront.XESetting
	// event_file
	filename    string
	maxFileMB   int64
	maxRollover int64
	current     *xeFile
	// ring_buffer
	ring          []renderedEvent
	ringMax       int
	ringMaxKB     int64
	ringTotal     int64
	ringDropped   int64
	execCount     int64
	buffersLogged int64
}

// xeFile is an event file "on disk" (kept in memory): buffers of events,
// each buffer at a file offset shared by all its events, as
// fn_xe_file_target_read_file reports it.
type xeFile struct {
	path    string
	buffers []xeBuffer
	size    int64
}

type xeBuffer struct {
	offset int64
	events []renderedEvent
}

// fileHeaderBytes is where the first event buffer starts. A real .xel file
// starts with a header and metadata buffers; the exact size varies, this is
// a plausible fixed value (documented as emulated).
const fileHeaderBytes = 4608

// sessionFromDDL validates a CREATE EVENT SESSION statement as SQL Server
// does and builds the session definition.
func sessionFromDDL(s *sqlfront.CreateEventSessionStmt, p *Persona) (*xeSession, *sqlfront.SQLError) {
	sess := &xeSession{name: s.Name, database: s.Database, persona: p, opts: defaultSessionOptions()}
	if err := sess.addEvents(s.Events); err != nil {
		return nil, err
	}
	if err := sess.addTargets(s.Targets); err != nil {
		return nil, err
	}
	if err := sess.applyOptions(s.Options); err != nil {
		return nil, err
	}
	return sess, nil
}

func (sess *xeSession) addEvents(specs []sqlfront.XEEventSpec) *sqlfront.SQLError {
	for _, spec := range specs {
		def, name, ok := lookupEvent(spec.Package, spec.Name)
		if !ok {
			return sqlfront.ErrXEObjectInvalid("event", qualify(spec.Package, spec.Name))
		}
		for _, e := range sess.events {
			if e.name == name {
				return errXEDuplicate("event", def.pkg+"."+name)
			}
		}
		ev := &xeSessionEvent{id: len(sess.events) + 1, pkg: def.pkg, name: name, def: def, pred: spec.Predicate, predText: spec.PredicateText, settings: spec.Settings}
		for _, st := range spec.Settings {
			if !hasString(def.custom, st.Name) {
				return errXEAttrMissing("event", def.pkg+"."+name, st.Name)
			}
		}
		seen := map[string]bool{}
		for _, a := range spec.Actions {
			pkg, ok := xeActions[strings.ToLower(a.Name)]
			if !ok || !sess.persona.hasAction(a.Name) || a.Package != "" && !strings.EqualFold(a.Package, pkg) {
				return sqlfront.ErrXEObjectInvalid("action", qualify(a.Package, a.Name))
			}
			n := strings.ToLower(a.Name)
			if seen[n] {
				return errXEDuplicate("action", pkg+"."+n)
			}
			seen[n] = true
			ev.actions = append(ev.actions, sqlfront.XEName{Package: pkg, Name: n})
		}
		if err := validatePred(spec.Predicate, def, name); err != nil {
			return err
		}
		sess.events = append(sess.events, ev)
	}
	return nil
}

func qualify(pkg, name string) string {
	if pkg == "" {
		return name
	}
	return pkg + "." + name
}

func validatePred(p sqlfront.XEPred, def xeEventDef, event string) *sqlfront.SQLError {
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
			if !hasString(def.fields, x.Source.Name) {
				return sqlfront.ErrXEObjectInvalid("predicate source", x.Source.Name)
			}
			return nil
		}
		pkg, ok := xeActions[x.Source.Name]
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

func (sess *xeSession) addTargets(specs []sqlfront.XETargetSpec) *sqlfront.SQLError {
	for _, spec := range specs {
		name := strings.ToLower(spec.Name)
		if spec.Package != "" && !strings.EqualFold(spec.Package, "package0") {
			return sqlfront.ErrXEObjectInvalid("target", qualify(spec.Package, spec.Name))
		}
		for _, t := range sess.targets {
			if t.name == name {
				return errXEDuplicate("target", "package0."+name)
			}
		}
		t := &xeTarget{id: len(sess.targets) + 1, pkg: "package0", name: name, settings: spec.Settings, logDir: sess.persona.logDirOrDefault()}
		switch name {
		case "event_file", "asynchronous_file_target":
			t.name = "event_file"
			t.maxFileMB, t.maxRollover = 1024, 5
			for _, st := range spec.Settings {
				switch st.Name {
				case "filename":
					s, ok := st.Value.(string)
					if !ok || s == "" {
						return sqlfront.NewError(25641, 16, "For target, \"package0.event_file\", the parameter \"filename\" passed is invalid. The file name is empty or not a string.")
					}
					if !sess.persona.eventFileAllowed(s) {
						// SQL Server has no blob URLs; Azure has no local disk
						return errXEConfig("target", "package0.event_file", "The file name \""+s+"\" is not valid on "+sess.persona.Product+".")
					}
					t.filename = s
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
			if t.filename == "" {
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
			return sqlfront.ErrXEObjectInvalid("target", qualify(spec.Package, spec.Name))
		}
		sess.targets = append(sess.targets, t)
	}
	return nil
}

func (sess *xeSession) applyOptions(opts []sqlfront.XEOption) *sqlfront.SQLError {
	seen := map[string]bool{}
	for _, o := range opts {
		if seen[o.Name] {
			return errXEOptionTwice(o.Name)
		}
		seen[o.Name] = true
		if sess.running && (o.Name == "MAX_MEMORY" || o.Name == "MEMORY_PARTITION_MODE" || o.Name == "MAX_EVENT_SIZE" || o.Name == "EVENT_RETENTION_MODE" || o.Name == "TRACK_CAUSALITY" || o.Name == "MAX_DISPATCH_LATENCY") {
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
				sess.opts.maxMemoryKB = kb
			} else {
				sess.opts.maxEventSizeKB = kb
			}
		case "EVENT_RETENTION_MODE":
			switch o.Value {
			case "ALLOW_SINGLE_EVENT_LOSS", "ALLOW_MULTIPLE_EVENT_LOSS", "NO_EVENT_LOSS":
				sess.opts.retention = o.Value
			default:
				return sqlfront.ErrXEOptionInvalid(o.Name)
			}
		case "MAX_DISPATCH_LATENCY":
			switch {
			case o.Value == "INFINITE":
				sess.opts.dispatchLatencySec = 0
			case o.Value == "SECONDS":
				if o.Num < 1 {
					return errXELatencyTooSmall()
				}
				sess.opts.dispatchLatencySec = o.Num
			default:
				return sqlfront.ErrXEOptionInvalid(o.Name)
			}
		case "MEMORY_PARTITION_MODE":
			switch o.Value {
			case "NONE", "PER_NODE", "PER_CPU":
				sess.opts.partitionMode = o.Value
			default:
				return sqlfront.ErrXEOptionInvalid(o.Name)
			}
		case "TRACK_CAUSALITY", "STARTUP_STATE":
			if o.Value != "ON" && o.Value != "OFF" {
				return sqlfront.ErrXEOptionInvalid(o.Name)
			}
			if o.Name == "TRACK_CAUSALITY" {
				sess.opts.trackCausality = o.Value == "ON"
			} else {
				sess.opts.startupState = o.Value == "ON"
			}
		default:
			return sqlfront.ErrSyntaxNear(o.Name)
		}
	}
	return nil
}

// start begins collecting: every event_file target opens a new file named
// <base>_0_<FILETIME>.xel, as SQL Server names rollover files.
func (sess *xeSession) start(now time.Time, files map[string]*xeFile) {
	sess.running = true
	sess.started = now
	for _, t := range sess.targets {
		t.ring = nil
		if t.name == "event_file" {
			t.current = nil
			t.rollover(now, files)
		}
	}
}

func (sess *xeSession) stop(files map[string]*xeFile) {
	sess.flush(files)
	sess.running = false
	for _, t := range sess.targets {
		t.current = nil
	}
}

// fileTime is the Windows FILETIME (100 ns ticks since 1601) SQL Server puts
// in event file names.
func fileTime(t time.Time) int64 {
	return t.UnixNano()/100 + 116444736000000000
}

// resolveXELPath applies SQL Server's naming: a relative file name goes to
// the instance log directory; the .xel extension is added when missing.
func resolveXELPath(name, logDir string) (base, ext string) {
	if !strings.ContainsAny(name, `/\`) {
		name = logDir + name
	}
	ext = ".xel"
	if i := strings.LastIndex(name, "."); i > strings.LastIndexAny(name, `/\`) {
		return name[:i], name[i:]
	}
	return name, ext
}

func (t *xeTarget) rollover(now time.Time, files map[string]*xeFile) {
	base, ext := resolveXELPath(t.filename, t.logDir)
	stamp := fileTime(now)
	for {
		p := fmt.Sprintf("%s_0_%d%s", base, stamp, ext)
		if _, exists := files[p]; !exists {
			f := &xeFile{path: p, size: fileHeaderBytes}
			files[p] = f
			t.current = f
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
func (sess *xeSession) flush(files map[string]*xeFile) {
	if len(sess.pending) == 0 {
		return
	}
	evs := sess.pending
	sess.pending = nil
	sess.pendingBytes = 0
	for _, t := range sess.targets {
		t.execCount++
		switch t.name {
		case "event_file":
			if t.current == nil {
				continue
			}
			// split into buffers no larger than a third of MAX_MEMORY, the
			// size SQL Server's three buffers per session have
			limit := int(sess.opts.maxMemoryKB * 1024 / 3)
			start := 0
			size := 0
			for i, e := range evs {
				size += len(e.file) / 2
				if size >= limit || i == len(evs)-1 {
					t.writeBuffer(evs[start:i+1], size, files)
					start, size = i+1, 0
				}
			}
		case "ring_buffer":
			t.ring = append(t.ring, evs...)
			t.ringTotal += int64(len(evs))
			if t.ringMax > 0 && len(t.ring) > t.ringMax {
				t.ringDropped += int64(len(t.ring) - t.ringMax)
				t.ring = append([]renderedEvent(nil), t.ring[len(t.ring)-t.ringMax:]...)
			}
		}
	}
}

func (t *xeTarget) writeBuffer(evs []renderedEvent, size int, files map[string]*xeFile) {
	bytes := int64((size + 64 + 511) / 512 * 512)
	if t.current.size+bytes > t.maxFileMB*1024*1024 && len(t.current.buffers) > 0 {
		t.rollover(evs[0].ts, files)
	}
	f := t.current
	f.buffers = append(f.buffers, xeBuffer{offset: f.size, events: append([]renderedEvent(nil), evs...)})
	f.size += bytes
	t.buffersLogged++
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// matchXELPattern implements fn_xe_file_target_read_file's path argument: a
// path whose file part may contain * wildcards.
func matchXELPattern(pattern, p string) bool {
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, `\`, "/")) }
	ok, err := path.Match(norm(pattern), norm(p))
	return err == nil && ok
}

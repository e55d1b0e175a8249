package exporter

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// Config is the exporter's configuration file (--config.file), or the
// one-target configuration made from --dsn.
type Config struct {
	Global  Global   `yaml:"global"`
	Targets []Target `yaml:"targets"`
	Probes  []Probe  `yaml:"probes"`
}

// Global holds defaults for every target and process-wide settings.
type Global struct {
	// PollInterval is how often each target's session is read (default 5s).
	PollInterval Duration `yaml:"poll_interval"`
	// PollTimeout bounds one poll: connect, session checks, read, name
	// lookups (default 30s, at least the interval).
	PollTimeout Duration `yaml:"poll_timeout"`
	// LabelLimit is the default number of label sets each metric group keeps
	// per target before the least recently used fold into "other" (1000).
	LabelLimit int `yaml:"label_limit"`
	// LabelLimits overrides LabelLimit per metric group (see MetricGroups).
	LabelLimits map[string]int `yaml:"label_limits"`
	// DropSessionOnShutdown drops each exporter session on a clean shutdown
	// (default true). False leaves it running for the next start; the events
	// in between are then skipped, never counted in one burst.
	DropSessionOnShutdown *bool `yaml:"drop_session_on_shutdown"`
	// TopQueries configures the per-target query table.
	TopQueries TopQueries `yaml:"top_queries"`
	// GrafanaURL, when set, makes the replay links absolute
	// (https://grafana.example.com); otherwise they are paths.
	GrafanaURL string `yaml:"grafana_url"`
	// RunbookURL is the page the alert rules' runbook links open, with the
	// alert's anchor (default: docs/operations.md on GitHub). Published in
	// queryreplay_exporter_links_info with GrafanaURL, so that the alerts'
	// links are absolute.
	RunbookURL string `yaml:"runbook_url"`
}

// DefaultRunbookURL is the runbook the alerts link to by default.
const DefaultRunbookURL = "https://github.com/queryreplay/queryreplay/blob/main/docs/operations.md"

// TopQueries configures the bounded table of the queries that spill and read
// the most, per target.
type TopQueries struct {
	// Size is how many queries are served (JSON, info metric): default 20.
	Size int `yaml:"size"`
	// MaxAge drops a query not seen for this long (default 1h).
	MaxAge Duration `yaml:"max_age"`
	// StatementText looks statements up in the plan cache (default true).
	// Off, the table carries query hashes only.
	StatementText *bool `yaml:"statement_text"`
	// MaxStatementBytes caps the statement text kept (default 4096).
	MaxStatementBytes int `yaml:"max_statement_bytes"`
}

// Target is one SQL Server (or Azure SQL database) with its session.
type Target struct {
	// Name labels every series (target="…") and names the session
	// queryreplay_exporter_<name>_<owner id>: letters, digits and _, at
	// most 64. Empty: named after the DSN's host and port
	// (DefaultTargetName).
	Name string `yaml:"name"`
	// Exactly one of DSN, DSNEnv, DSNFile. DSN must not hold a password;
	// PasswordEnv or PasswordFile add one to a sqlserver:// DSN.
	DSN          string `yaml:"dsn"`
	DSNEnv       string `yaml:"dsn_env"`
	DSNFile      string `yaml:"dsn_file"`
	PasswordEnv  string `yaml:"password_env"`
	PasswordFile string `yaml:"password_file"`
	// Events are the event groups (default: all of EventGroupNames).
	Events []string `yaml:"events"`
	// Databases restricts every event to these databases (names); empty:
	// all databases.
	Databases []string `yaml:"databases"`
	// GrafanaDatasource is the uid of the QueryReplay datasource in Grafana
	// that connects to this target's server: replay links of the target's
	// queries open the replay dashboard on it, so a query that spilled on
	// one server replays on that server (default DefaultGrafanaDatasource).
	GrafanaDatasource string  `yaml:"grafana_datasource"`
	Waits             Waits   `yaml:"waits"`
	Session           Session `yaml:"session"`
	// PollInterval and LabelLimits override the global ones.
	PollInterval Duration       `yaml:"poll_interval"`
	LabelLimits  map[string]int `yaml:"label_limits"`
	// PageLookupsPerPoll bounds the sys.dm_db_page_info lookups that name the
	// object of pages read or written (default 1000; 0 turns them off).
	PageLookupsPerPoll *int `yaml:"page_lookups_per_poll"`

	dsn      string // resolved, never printed
	dsnField string // where dsn came from when not the file (--dsn)
}

// Waits configures the wait group's predicates.
type Waits struct {
	// Event is wait_info (default; End events only) or wait_completed (SQL
	// Server 2014+).
	Event string `yaml:"event"`
	// MinDuration keeps waits at least this long (XE measures them in ms).
	MinDuration Duration `yaml:"min_duration"`
	// Include and Exclude are wait type names; * matches any run of
	// characters. They are resolved against the server's
	// sys.dm_xe_map_values into key ranges. Empty Include: every type.
	Include []string `yaml:"include"`
	Exclude []string `yaml:"exclude"`
	// ExcludeBenign adds the built-in list of idle and background waits to
	// Exclude (default true).
	ExcludeBenign *bool `yaml:"exclude_benign"`
}

// Session configures the Extended Events session.
type Session struct {
	// Target is event_file, ring_buffer or auto (default): event_file on
	// SQL Server, ring_buffer on Azure SQL Database and Managed Instance
	// unless EventFile.Path is an Azure Blob URL.
	Target string `yaml:"target"`
	// Scope is server, database or auto (default: database on Azure SQL
	// Database, server elsewhere).
	Scope      string     `yaml:"scope"`
	EventFile  EventFile  `yaml:"event_file"`
	RingBuffer RingBuffer `yaml:"ring_buffer"`
	// MaxMemoryMB is the session's MAX_MEMORY (default 4).
	MaxMemoryMB int `yaml:"max_memory_mb"`
	// MaxDispatchLatency is MAX_DISPATCH_LATENCY (default 5s, whole seconds).
	MaxDispatchLatency Duration `yaml:"max_dispatch_latency"`
	// StartupState starts the session with the server (default false).
	StartupState bool `yaml:"startup_state"`
}

// EventFile configures the event_file target.
type EventFile struct {
	// Path is the file name; default <session name>.xel, which
	// SQL Server puts in its log directory. On Azure it must be a blob URL.
	Path             string `yaml:"path"`
	MaxFileSizeMB    int    `yaml:"max_file_size_mb"`   // default 64
	MaxRolloverFiles int    `yaml:"max_rollover_files"` // default 4
}

// RingBuffer configures the ring_buffer target.
type RingBuffer struct {
	MaxEvents   int `yaml:"max_events"`    // default 10000
	MaxMemoryKB int `yaml:"max_memory_kb"` // default 4096
}

// DefaultGrafanaDatasource is the uid of the provisioned QueryReplay
// datasource (provisioning/datasources), the replay links' default.
const DefaultGrafanaDatasource = "queryreplay"

// datasourceUID is what Grafana accepts as a datasource uid.
var datasourceUID = regexp.MustCompile(`^[a-zA-Z0-9._-]{1,40}$`)

// Probe is a named read-only query traced on a schedule with pkg/tracer.
type Probe struct {
	Name     string   `yaml:"name"`
	Target   string   `yaml:"target"`
	SQL      string   `yaml:"sql"`
	Database string   `yaml:"database"`
	Interval Duration `yaml:"interval"` // default 5m
	Timeout  Duration `yaml:"timeout"`  // default 30s
}

// Duration is a time.Duration written as "5s", "1m30s".
type Duration time.Duration

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// MarshalYAML writes the duration as text.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// Event groups. Each adds events to the session and a metric group.
const (
	GroupReads      = "reads"      // physical_page_read, physical_page_write
	GroupWaits      = "waits"      // wait_info / wait_completed
	GroupSpills     = "spills"     // sort_warning, hash_warning, exchange_spill
	GroupSplits     = "splits"     // page_split
	GroupMemory     = "memory"     // query_memory_grant_usage
	GroupLog        = "log"        // log_flush_complete
	GroupStatements = "statements" // sql_statement_completed
)

// EventGroupNames lists the event groups in session order.
var EventGroupNames = []string{GroupReads, GroupWaits, GroupSpills, GroupSplits, GroupMemory, GroupLog, GroupStatements}

const (
	defaultPollInterval   = 5 * time.Second
	defaultPollTimeout    = 30 * time.Second
	defaultLabelLimit     = 1000
	defaultTopSize        = 20
	defaultTopMaxAge      = time.Hour
	defaultStatementBytes = 4096
	defaultPageLookups    = 1000
	defaultFileSizeMB     = 64
	defaultRollover       = 4
	defaultRingEvents     = 10000
	defaultRingMemoryKB   = 4096
	defaultMaxMemoryMB    = 4
	defaultLatency        = 5 * time.Second
	defaultProbeInterval  = 5 * time.Minute
	defaultProbeTimeout   = 30 * time.Second
	maxTargetName         = 64
)

// ConfigError lists every problem of a configuration, each naming its field
// (targets[1].waits.min_duration: …).
type ConfigError struct{ Problems []string }

func (e *ConfigError) Error() string {
	if len(e.Problems) == 1 {
		return "config: " + e.Problems[0]
	}
	return "config: " + fmt.Sprint(len(e.Problems)) + " problems:\n  " + strings.Join(e.Problems, "\n  ")
}

// LoadConfig reads and validates a configuration file. Secrets (DSNs,
// passwords) are read from the environment or files it names; none of them
// ever appears in an error.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return ParseConfig(data, os.LookupEnv)
}

// ParseConfig parses and validates a configuration; lookupEnv resolves
// dsn_env and password_env (os.LookupEnv in production).
func ParseConfig(data []byte, lookupEnv func(string) (string, bool)) (*Config, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, errEOF) {
			return nil, &ConfigError{Problems: []string{"the file is empty: it needs at least one target"}}
		}
		return nil, fmt.Errorf("config: %w", err)
	}
	var problems []string
	checkNode(&root, configSchema, "", &problems)
	var c Config
	if err := root.Decode(&c); err != nil {
		if len(problems) > 0 {
			return nil, &ConfigError{Problems: problems}
		}
		return nil, fmt.Errorf("config: %w", err)
	}
	// Unknown keys and the rest are reported together, so one run lists
	// every problem.
	var ce *ConfigError
	if err := c.finish(lookupEnv); errors.As(err, &ce) {
		problems = append(problems, ce.Problems...)
	} else if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, &ConfigError{Problems: problems}
	}
	return &c, nil
}

// ConfigFromDSN is the configuration of --dsn: one target with every
// default, named name or, when name is empty, after the DSN's host and
// port (DefaultTargetName).
func ConfigFromDSN(dsn, name string) (*Config, error) {
	c := &Config{Targets: []Target{{Name: name, dsn: dsn, dsnField: "--dsn"}}}
	if err := c.finish(func(string) (string, bool) { return "", false }); err != nil {
		return nil, err
	}
	return c, nil
}

// finish applies defaults, resolves secrets and validates.
func (c *Config) finish(lookupEnv func(string) (string, bool)) error {
	var p []string
	bad := func(field, format string, args ...any) { p = append(p, field+": "+fmt.Sprintf(format, args...)) }
	g := &c.Global
	if g.PollInterval == 0 {
		g.PollInterval = Duration(defaultPollInterval)
	}
	if g.PollInterval.D() < 100*time.Millisecond {
		bad("global.poll_interval", "%s is too short (at least 100ms)", g.PollInterval.D())
	}
	if g.PollTimeout == 0 {
		g.PollTimeout = Duration(max(defaultPollTimeout, g.PollInterval.D()))
	}
	if g.LabelLimit == 0 {
		g.LabelLimit = defaultLabelLimit
	}
	if g.LabelLimit < 1 {
		bad("global.label_limit", "must be at least 1, got %d", g.LabelLimit)
	}
	checkLimits("global.label_limits", g.LabelLimits, bad)
	if g.DropSessionOnShutdown == nil {
		g.DropSessionOnShutdown = ptr(true)
	}
	t := &g.TopQueries
	if t.Size == 0 {
		t.Size = defaultTopSize
	}
	if t.Size < 1 || t.Size > 1000 {
		bad("global.top_queries.size", "must be 1 to 1000, got %d", t.Size)
	}
	if t.MaxAge == 0 {
		t.MaxAge = Duration(defaultTopMaxAge)
	}
	if t.StatementText == nil {
		t.StatementText = ptr(true)
	}
	if t.MaxStatementBytes == 0 {
		t.MaxStatementBytes = defaultStatementBytes
	}
	if t.MaxStatementBytes < 64 {
		bad("global.top_queries.max_statement_bytes", "must be at least 64, got %d", t.MaxStatementBytes)
	}
	if g.GrafanaURL != "" {
		if u, err := url.Parse(g.GrafanaURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("global.grafana_url", "must be an http(s) URL such as https://grafana.example.com")
		}
	}
	if g.RunbookURL == "" {
		g.RunbookURL = DefaultRunbookURL
	}
	if u, err := url.Parse(g.RunbookURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Fragment != "" {
		bad("global.runbook_url", "must be an http(s) URL without #anchor (the alerts add theirs)")
	}
	if len(c.Targets) == 0 {
		bad("targets", "at least one target is needed")
	}
	names := map[string]int{}
	for i := range c.Targets {
		field := fmt.Sprintf("targets[%d]", i)
		tg := &c.Targets[i]
		tg.finish(field, g, lookupEnv, bad)
		if j, dup := names[tg.Name]; dup && tg.Name != "" {
			bad(field+".name", "%q is also the name of targets[%d] (two targets on one server need names of their own)", tg.Name, j)
		}
		names[tg.Name] = i
	}
	probeNames := map[string]bool{}
	for i := range c.Probes {
		field := fmt.Sprintf("probes[%d]", i)
		pr := &c.Probes[i]
		if !namePattern.MatchString(pr.Name) {
			bad(field+".name", "%q must be letters, digits and _ (1 to %d)", pr.Name, maxTargetName)
		}
		if probeNames[pr.Name] {
			bad(field+".name", "%q is used twice", pr.Name)
		}
		probeNames[pr.Name] = true
		if _, ok := names[pr.Target]; !ok {
			bad(field+".target", "%q is not a target name", pr.Target)
		}
		if strings.TrimSpace(pr.SQL) == "" {
			bad(field+".sql", "is empty")
		} else if err := checkProbe(*pr); err != nil {
			// the tracer's safety classifier, the same check New runs: a
			// configuration that --config.check passes starts
			bad(field+".sql", "%v", err)
		}
		if pr.Interval == 0 {
			pr.Interval = Duration(defaultProbeInterval)
		}
		if pr.Interval.D() < time.Second {
			bad(field+".interval", "%s is too short (at least 1s)", pr.Interval.D())
		}
		if pr.Timeout == 0 {
			pr.Timeout = Duration(defaultProbeTimeout)
		}
	}
	if len(p) > 0 {
		return &ConfigError{Problems: p}
	}
	return nil
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)

func ptr[T any](v T) *T { return &v }

func checkLimits(field string, limits map[string]int, bad func(string, string, ...any)) {
	for k, v := range limits {
		if !slices.Contains(metricGroupNames(), k) {
			bad(field+"."+k, "unknown metric group (known: %s)", strings.Join(metricGroupNames(), ", "))
		} else if v < 1 {
			bad(field+"."+k, "must be at least 1, got %d", v)
		}
	}
}

func (t *Target) finish(field string, g *Global, lookupEnv func(string) (string, bool), bad func(string, string, ...any)) {
	t.resolveDSN(field, lookupEnv, bad)
	if t.dsn != "" {
		name, err := DefaultTargetName(t.dsn)
		if err != nil {
			bad(t.dsnSource(field), "%v", err)
			t.dsn = ""
		} else if t.Name == "" {
			t.Name = name
		}
	}
	if !namePattern.MatchString(t.Name) && (t.Name != "" || t.dsn != "") {
		bad(field+".name", "%q must be letters, digits and _ (1 to %d): it names the session queryreplay_exporter_<name>_<owner id>", t.Name, maxTargetName)
	}
	if t.GrafanaDatasource == "" {
		t.GrafanaDatasource = DefaultGrafanaDatasource
	} else if !datasourceUID.MatchString(t.GrafanaDatasource) {
		bad(field+".grafana_datasource", "%q must be a Grafana datasource uid (letters, digits, -, _ and ., 1 to 40)", t.GrafanaDatasource)
	}
	if len(t.Events) == 0 {
		t.Events = append([]string(nil), EventGroupNames...)
	}
	seen := map[string]bool{}
	for i, e := range t.Events {
		if !slices.Contains(EventGroupNames, e) {
			bad(fmt.Sprintf("%s.events[%d]", field, i), "unknown event group %q (known: %s)", e, strings.Join(EventGroupNames, ", "))
		}
		if seen[e] {
			bad(fmt.Sprintf("%s.events[%d]", field, i), "%q is listed twice", e)
		}
		seen[e] = true
	}
	for i, d := range t.Databases {
		if strings.TrimSpace(d) == "" || len(d) > 128 {
			bad(fmt.Sprintf("%s.databases[%d]", field, i), "must be a database name of 1 to 128 characters")
		}
	}
	if n := databasesPredicateChars(len(t.Databases)); n > maxPredicateChars {
		bad(field+".databases", "%d databases make every event's predicate up to %d characters, over the documented %d "+
			"(CREATE EVENT SESSION); list fewer (the wait filters, measured at start against the server's map, add more)",
			len(t.Databases), n, maxPredicateChars)
	}
	w := &t.Waits
	switch w.Event {
	case "":
		w.Event = "wait_info"
	case "wait_info", "wait_completed":
	default:
		bad(field+".waits.event", "%q must be wait_info or wait_completed", w.Event)
	}
	if w.MinDuration < 0 {
		bad(field+".waits.min_duration", "must not be negative")
	} else if w.MinDuration.D()%time.Millisecond != 0 {
		// XE's wait duration is in milliseconds: 500us would truncate
		// to 0, no filter at all
		bad(field+".waits.min_duration", "%s must be a whole number of milliseconds (XE measures waits in ms)", w.MinDuration.D())
	}
	if w.ExcludeBenign == nil {
		w.ExcludeBenign = ptr(true)
	}
	for i, pat := range append(append([]string(nil), w.Include...), w.Exclude...) {
		name := fmt.Sprintf("%s.waits.include[%d]", field, i)
		if i >= len(w.Include) {
			name = fmt.Sprintf("%s.waits.exclude[%d]", field, i-len(w.Include))
		}
		if !waitPattern.MatchString(pat) {
			bad(name, "%q is not a wait type name or pattern (letters, digits, _ and *)", pat)
		}
	}
	t.Session.finish(field+".session", bad)
	if t.PollInterval == 0 {
		t.PollInterval = g.PollInterval
	}
	if t.PollInterval.D() < 100*time.Millisecond {
		bad(field+".poll_interval", "%s is too short (at least 100ms)", t.PollInterval.D())
	}
	checkLimits(field+".label_limits", t.LabelLimits, bad)
	if t.PageLookupsPerPoll == nil {
		t.PageLookupsPerPoll = ptr(defaultPageLookups)
	}
	if *t.PageLookupsPerPoll < 0 {
		bad(field+".page_lookups_per_poll", "must not be negative")
	}
}

var waitPattern = regexp.MustCompile(`^[A-Za-z0-9_*]{1,128}$`)

func (s *Session) finish(field string, bad func(string, string, ...any)) {
	switch s.Target {
	case "":
		s.Target = "auto"
	case "auto", "event_file", "ring_buffer":
	default:
		bad(field+".target", "%q must be auto, event_file or ring_buffer", s.Target)
	}
	switch s.Scope {
	case "":
		s.Scope = "auto"
	case "auto", "server", "database":
	default:
		bad(field+".scope", "%q must be auto, server or database", s.Scope)
	}
	if s.Scope == "database" && s.Target == "event_file" && !isBlobURL(s.EventFile.Path) {
		bad(field+".event_file.path", "a database-scoped session (Azure SQL Database) writes event files only to Azure Blob Storage: give an https:// blob URL, or use target: ring_buffer")
	}
	if strings.ContainsAny(s.EventFile.Path, "*?") {
		bad(field+".event_file.path", "must not contain wildcards")
	}
	ef := &s.EventFile
	if ef.MaxFileSizeMB == 0 {
		ef.MaxFileSizeMB = defaultFileSizeMB
	}
	if ef.MaxFileSizeMB < 1 {
		bad(field+".event_file.max_file_size_mb", "must be at least 1, got %d", ef.MaxFileSizeMB)
	}
	if ef.MaxRolloverFiles == 0 {
		ef.MaxRolloverFiles = defaultRollover
	}
	if ef.MaxRolloverFiles < 1 {
		bad(field+".event_file.max_rollover_files", "must be at least 1, got %d", ef.MaxRolloverFiles)
	}
	rb := &s.RingBuffer
	if rb.MaxEvents == 0 {
		rb.MaxEvents = defaultRingEvents
	}
	if rb.MaxMemoryKB == 0 {
		rb.MaxMemoryKB = defaultRingMemoryKB
	}
	if rb.MaxEvents < 1 || rb.MaxMemoryKB < 1 {
		bad(field+".ring_buffer", "max_events and max_memory_kb must be at least 1")
	}
	if s.MaxMemoryMB == 0 {
		s.MaxMemoryMB = defaultMaxMemoryMB
	}
	if s.MaxMemoryMB < 1 || s.MaxMemoryMB > 1024 {
		bad(field+".max_memory_mb", "must be 1 to 1024, got %d", s.MaxMemoryMB)
	}
	if s.MaxDispatchLatency == 0 {
		s.MaxDispatchLatency = Duration(defaultLatency)
	}
	if s.MaxDispatchLatency.D() < time.Second || s.MaxDispatchLatency.D()%time.Second != 0 {
		bad(field+".max_dispatch_latency", "%s must be a whole number of seconds, at least 1s", s.MaxDispatchLatency.D())
	}
}

func isBlobURL(p string) bool { return strings.HasPrefix(strings.ToLower(p), "https://") }

// resolveDSN reads the DSN and password from where the config says. Error
// messages name the field and the variable or file, never the value.
func (t *Target) resolveDSN(field string, lookupEnv func(string) (string, bool), bad func(string, string, ...any)) {
	if t.dsn != "" { // ConfigFromDSN
		return
	}
	set := 0
	for _, s := range []string{t.DSN, t.DSNEnv, t.DSNFile} {
		if s != "" {
			set++
		}
	}
	if set != 1 {
		bad(field, "exactly one of dsn, dsn_env and dsn_file is needed")
		return
	}
	switch {
	case t.DSN != "":
		if dsnHasPassword(t.DSN) {
			bad(field+".dsn", "holds a password: keep it out of the config file (password_env, password_file, or the whole DSN in dsn_env or dsn_file)")
			return
		}
		t.dsn = t.DSN
	case t.DSNEnv != "":
		v, ok := lookupEnv(t.DSNEnv)
		if !ok || strings.TrimSpace(v) == "" {
			bad(field+".dsn_env", "environment variable %s is not set", t.DSNEnv)
			return
		}
		t.dsn = strings.TrimSpace(v)
	default:
		b, err := os.ReadFile(t.DSNFile)
		if err != nil {
			bad(field+".dsn_file", "cannot read %s: %v", t.DSNFile, pathError(err))
			return
		}
		t.dsn = strings.TrimSpace(string(b))
		if t.dsn == "" {
			bad(field+".dsn_file", "%s is empty", t.DSNFile)
			return
		}
	}
	if t.PasswordEnv != "" && t.PasswordFile != "" {
		bad(field, "password_env and password_file are exclusive")
		return
	}
	var password string
	switch {
	case t.PasswordEnv != "":
		v, ok := lookupEnv(t.PasswordEnv)
		if !ok {
			bad(field+".password_env", "environment variable %s is not set", t.PasswordEnv)
			return
		}
		password = v
	case t.PasswordFile != "":
		b, err := os.ReadFile(t.PasswordFile)
		if err != nil {
			bad(field+".password_file", "cannot read %s: %v", t.PasswordFile, pathError(err))
			return
		}
		password = strings.TrimRight(string(b), "\r\n")
	default:
		return
	}
	u, err := url.Parse(t.dsn)
	if err != nil || u.Scheme != "sqlserver" || u.User == nil {
		bad(field, "a password from password_env or password_file needs a sqlserver://user@host DSN")
		t.dsn = ""
		return
	}
	if _, has := u.User.Password(); has {
		bad(field, "the DSN already holds a password and password_env/password_file gives another")
		t.dsn = ""
		return
	}
	u.User = url.UserPassword(u.User.Username(), password)
	t.dsn = u.String()
}

// pathError keeps an os error's reason without repeating the path.
func pathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// dsnHasPassword tells whether a go-mssqldb DSN (URL, ADO or ODBC form)
// carries a password.
func dsnHasPassword(dsn string) bool {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" && u.User != nil {
		if _, ok := u.User.Password(); ok {
			return true
		}
	}
	return adoPassword.MatchString(dsn)
}

var adoPassword = regexp.MustCompile(`(?i)(^|;)\s*(password|pwd)\s*=`)

// ResolvedDSN returns the target's connection string. Never log it.
func (t *Target) ResolvedDSN() string { return t.dsn }

// dsnSource is the field the target's DSN came from, for errors about it.
func (t *Target) dsnSource(field string) string {
	switch {
	case t.dsnField != "":
		return t.dsnField
	case t.DSNEnv != "":
		return field + ".dsn_env"
	case t.DSNFile != "":
		return field + ".dsn_file"
	}
	return field + ".dsn"
}

package exporter

import (
	"errors"
	"github.com/queryreplay/queryreplay/pkg/tracer"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// Every invalid configuration is refused with a message naming the field.
func TestConfigValidationNamesTheField(t *testing.T) {
	dir := t.TempDir()
	emptyFile := filepath.Join(dir, "empty")
	if err := os.WriteFile(emptyFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	const ok = "targets:\n  - name: a\n    dsn_env: DSN\n"
	cases := []struct {
		name, yaml string
		want       []string // every substring must be in the error
	}{
		{"empty file", "", []string{"at least one target"}},
		{"no targets", "global:\n  poll_interval: 5s\n", []string{"targets: at least one target"}},
		{"unknown top-level key", ok + "globl: {}\n", []string{"globl: unknown field", "known: global, probes, targets"}},
		{"unknown nested key", ok + "    waits:\n      min_durration: 5ms\n", []string{"targets[0].waits.min_durration: unknown field", "min_duration"}},
		{"bad duration", "global:\n  poll_interval: fast\n" + ok, []string{"global.poll_interval", `"fast" is not a duration`}},
		{"bad int", ok + "    page_lookups_per_poll: many\n", []string{"targets[0].page_lookups_per_poll", "not a whole number"}},
		{"bad bool", ok + "    session:\n      startup_state: yes please\n", []string{"targets[0].session.startup_state: must be true or false"}},
		{"list expected", ok + "    events: waits\n", []string{"targets[0].events: must be a list"}},
		{"short interval", "global:\n  poll_interval: 10ms\n" + ok, []string{"global.poll_interval", "too short"}},
		{"bad target name", "targets:\n  - name: prod-1\n    dsn_env: DSN\n", []string{"targets[0].name", "letters, digits and _"}},
		{"duplicate names", ok + "  - name: a\n    dsn_env: DSN\n", []string{"targets[1].name", "also the name of targets[0]"}},
		{"no dsn", "targets:\n  - name: a\n", []string{"targets[0]: exactly one of dsn, dsn_env and dsn_file"}},
		{"two dsns", "targets:\n  - name: a\n    dsn_env: DSN\n    dsn_file: /x\n", []string{"exactly one of"}},
		{"password in dsn", "targets:\n  - name: a\n    dsn: sqlserver://sa:Secret-123@db1\n", []string{"targets[0].dsn: holds a password"}},
		{"password in ado dsn", "targets:\n  - name: a\n    dsn: server=db1;user id=sa;Password=Secret-123\n", []string{"targets[0].dsn: holds a password"}},
		{"env missing", "targets:\n  - name: a\n    dsn_env: NOPE\n", []string{"targets[0].dsn_env", "NOPE is not set"}},
		{"dsn file missing", "targets:\n  - name: a\n    dsn_file: " + filepath.Join(dir, "nope") + "\n", []string{"targets[0].dsn_file", "cannot read"}},
		{"dsn file empty", "targets:\n  - name: a\n    dsn_file: " + emptyFile + "\n", []string{"targets[0].dsn_file", "is empty"}},
		{"password for ado dsn", "targets:\n  - name: a\n    dsn: server=db1;user id=sa\n    password_env: PW\n", []string{"needs a sqlserver://user@host DSN"}},
		{"two passwords", "targets:\n  - name: a\n    dsn_env: DSN\n    password_env: PW\n    password_file: /x\n", []string{"password_env and password_file are exclusive"}},
		{"unknown event group", ok + "    events: [waits, locks]\n", []string{"targets[0].events[1]", `unknown event group "locks"`}},
		{"repeated event group", ok + "    events: [waits, waits]\n", []string{"targets[0].events[1]", "listed twice"}},
		{"bad wait event", ok + "    waits:\n      event: wait_begin\n", []string{"targets[0].waits.event"}},
		{"bad wait pattern", ok + "    waits:\n      exclude: [\"LCK_M_%\"]\n", []string{"targets[0].waits.exclude[0]", "not a wait type name or pattern"}},
		{"bad session target", ok + "    session:\n      target: histogram\n", []string{"targets[0].session.target"}},
		{"bad scope", ok + "    session:\n      scope: instance\n", []string{"targets[0].session.scope"}},
		{"azure db event_file needs blob", ok + "    session:\n      scope: database\n      target: event_file\n", []string{"targets[0].session.event_file.path", "Azure Blob"}},
		{"wildcard path", ok + "    session:\n      event_file: {path: /var/x*.xel}\n", []string{"event_file.path: must not contain wildcards"}},
		{"latency not whole seconds", ok + "    session:\n      max_dispatch_latency: 1500ms\n", []string{"max_dispatch_latency", "whole number of seconds"}},
		{"memory too big", ok + "    session:\n      max_memory_mb: 4096\n", []string{"targets[0].session.max_memory_mb"}},
		{"unknown label group", ok + "    label_limits: {wait: 10}\n", []string{"targets[0].label_limits.wait", "unknown metric group"}},
		{"zero label limit", "global:\n  label_limits: {waits: 0}\n" + ok, []string{"global.label_limits.waits", "at least 1"}},
		{"bad grafana url", "global:\n  grafana_url: grafana.local\n" + ok, []string{"global.grafana_url"}},
		{"top size", "global:\n  top_queries: {size: 0}\n" + ok, []string{}}, // 0 means default: valid
		{"top size big", "global:\n  top_queries: {size: 5000}\n" + ok, []string{"global.top_queries.size"}},
		{"probe unknown target", ok + "probes:\n  - name: p\n    target: b\n    sql: SELECT 1\n", []string{"probes[0].target", `"b" is not a target name`}},
		{"probe empty sql", ok + "probes:\n  - name: p\n    target: a\n    sql: \"  \"\n", []string{"probes[0].sql: is empty"}},
		{"probe duplicate", ok + "probes:\n  - {name: p, target: a, sql: SELECT 1}\n  - {name: p, target: a, sql: SELECT 2}\n", []string{"probes[1].name", "used twice"}},
		{"probe that writes", ok + "probes:\n  - {name: p, target: a, sql: \"DELETE FROM dbo.Orders WHERE 1 = 0\"}\n", []string{"probes[0].sql"}},
		{"probe that writes in a CTE", ok + "probes:\n  - {name: p, target: a, sql: \"WITH x AS (SELECT 1 AS a) UPDATE dbo.t SET a = 1\"}\n", []string{"probes[0].sql"}},
		{"sub-millisecond wait filter", ok + "    waits:\n      min_duration: 500us\n", []string{"targets[0].waits.min_duration", "whole number of milliseconds"}},
		{"fractional millisecond wait filter", ok + "    waits:\n      min_duration: 1500us\n", []string{"targets[0].waits.min_duration", "whole number of milliseconds"}},
		{"negative duration", "global:\n  poll_timeout: -5s\n" + ok, []string{"global.poll_timeout", "must not be negative"}},
		{"several problems at once", "targets:\n  - name: a-b\n    dsn_env: DSN\n    events: [nope]\n", []string{"2 problems", "targets[0].name", "targets[0].events[0]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(c.yaml), env("DSN", "sqlserver://sa@db1", "PW", "x"))
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("valid configuration refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, want an error mentioning %q", c.want)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %T %v is not a *ConfigError", err, err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// No error ever shows a secret: not a password from the environment, a file
// or an inline DSN.
func TestConfigErrorsNeverShowSecrets(t *testing.T) {
	const secret = "Sup3r-Secret-Pw"
	dir := t.TempDir()
	dsnFile := filepath.Join(dir, "dsn")
	if err := os.WriteFile(dsnFile, []byte("server=db1;user id=sa;password="+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inputs := []string{
		"targets:\n  - name: a\n    dsn: sqlserver://sa:" + secret + "@db1\n",
		"targets:\n  - name: a\n    dsn_file: " + dsnFile + "\n    password_env: PW\n",
		"targets:\n  - name: a\n    dsn_env: DSN\n    password_env: PW\n",
		"targets:\n  - name: a-1\n    dsn_env: DSN\n",
	}
	for _, in := range inputs {
		_, err := ParseConfig([]byte(in), env("DSN", "sqlserver://sa:"+secret+"@db1", "PW", secret))
		if err == nil {
			t.Fatalf("accepted %q", in)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows the secret: %v", err)
		}
	}
}

// Defaults are applied, secrets resolve from the environment and files, and
// a password is added to a sqlserver:// DSN.
func TestConfigDefaultsAndSecrets(t *testing.T) {
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwFile, []byte("p@ss:w/rd\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dsnFile := filepath.Join(dir, "dsn")
	if err := os.WriteFile(dsnFile, []byte("  sqlserver://sa:x@db2?database=Sales\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseConfig([]byte(`
global:
  label_limits: {waits: 50}
targets:
  - name: a
    dsn: sqlserver://monitor@db1:1433?database=master
    password_file: `+pwFile+`
    waits: {min_duration: 2ms, include: ["PAGEIOLATCH_*"]}
  - name: b
    dsn_file: `+dsnFile+`
    events: [spills]
    poll_interval: 15s
    label_limits: {spills: 7}
`), env())
	if err != nil {
		t.Fatal(err)
	}
	g := cfg.Global
	if g.PollInterval.D() != 5*time.Second || g.PollTimeout.D() != 30*time.Second || g.LabelLimit != 1000 || !*g.DropSessionOnShutdown {
		t.Errorf("global defaults: %+v", g)
	}
	if g.TopQueries.Size != 20 || g.TopQueries.MaxAge.D() != time.Hour || !*g.TopQueries.StatementText || g.TopQueries.MaxStatementBytes != 4096 {
		t.Errorf("top query defaults: %+v", g.TopQueries)
	}
	a, b := cfg.Targets[0], cfg.Targets[1]
	if a.ResolvedDSN() != "sqlserver://monitor:p%40ss%3Aw%2Frd@db1:1433?database=master" {
		t.Errorf("password not added to the DSN as escaped userinfo: %q", a.ResolvedDSN())
	}
	if b.ResolvedDSN() != "sqlserver://sa:x@db2?database=Sales" {
		t.Errorf("dsn_file not trimmed: %q", b.ResolvedDSN())
	}
	if len(a.Events) != len(EventGroupNames) || a.Waits.Event != "wait_info" || !*a.Waits.ExcludeBenign || a.Waits.MinDuration.D() != 2*time.Millisecond {
		t.Errorf("target a: %+v", a)
	}
	s := a.Session
	if s.Target != "auto" || s.Scope != "auto" || s.EventFile.MaxFileSizeMB != 64 || s.EventFile.MaxRolloverFiles != 4 ||
		s.MaxMemoryMB != 4 || s.MaxDispatchLatency.D() != 5*time.Second || s.RingBuffer.MaxEvents != 10000 {
		t.Errorf("session defaults: %+v", s)
	}
	if a.PollInterval.D() != 5*time.Second || b.PollInterval.D() != 15*time.Second {
		t.Errorf("poll intervals %s, %s", a.PollInterval.D(), b.PollInterval.D())
	}
	ta, tb := newTarget(a, &cfg.Global, discardLog()), newTarget(b, &cfg.Global, discardLog())
	if ta.labelLimit("waits") != 50 || ta.labelLimit("spills") != 1000 || tb.labelLimit("spills") != 7 {
		t.Errorf("label limits: a waits %d, a spills %d, b spills %d", ta.labelLimit("waits"), ta.labelLimit("spills"), tb.labelLimit("spills"))
	}
}

func TestConfigFromDSN(t *testing.T) {
	cfg, err := ConfigFromDSN("sqlserver://sa:pw@127.0.0.1:1433", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Targets) != 1 || cfg.Targets[0].Name != "127_0_0_1_1433" || cfg.Targets[0].ResolvedDSN() != "sqlserver://sa:pw@127.0.0.1:1433" {
		t.Fatalf("%+v", cfg.Targets)
	}
	if cfg, err := ConfigFromDSN("sqlserver://sa:pw@127.0.0.1:1433", "prod_eu"); err != nil || cfg.Targets[0].Name != "prod_eu" {
		t.Fatalf("given name: %v", err)
	}
	if _, err := ConfigFromDSN("sqlserver://sa:pw@127.0.0.1:1433", "bad-name"); err == nil {
		t.Fatal("a name outside the charset was accepted")
	}
}

// Every target without a name is named after its server's host and port
// (or instance), in the allowed charset: distinct servers, distinct names,
// the same server the same name at every start.
func TestDefaultTargetNames(t *testing.T) {
	for dsn, want := range map[string]string{
		"sqlserver://u@db1.example.com:1433?database=a":   "db1_example_com_1433",
		"sqlserver://u@db1.example.com:14330":             "db1_example_com_14330",
		"sqlserver://u@db1.example.com":                   "db1_example_com_1433",
		"sqlserver://u@db1/SQLEXPRESS":                    "db1_SQLEXPRESS",
		"server=db-2.corp,1444;user id=u;database=x":      "db_2_corp_1444",
		`server=db3\PROD;user id=u`:                       "db3_PROD",
		"sqlserver://u@[2001:db8::1]:1433":                "2001_db8__1_1433",
		"sqlserver://u@" + strings.Repeat("h", 80) + ":1": "",
	} {
		cfg, err := ConfigFromDSN(dsn, "")
		if err != nil {
			t.Errorf("%s: %v", dsn, err)
			continue
		}
		got := cfg.Targets[0].Name
		if !namePattern.MatchString(got) {
			t.Errorf("%s: name %q is outside the charset", dsn, got)
		}
		if want != "" && got != want {
			t.Errorf("%s: name %q, want %q", dsn, got, want)
		}
		again, _ := ConfigFromDSN(dsn, "")
		if again.Targets[0].Name != got {
			t.Errorf("%s: name %q then %q", dsn, got, again.Targets[0].Name)
		}
	}
	long1, _ := ConfigFromDSN("sqlserver://u@"+strings.Repeat("h", 80)+"a:1", "")
	long2, _ := ConfigFromDSN("sqlserver://u@"+strings.Repeat("h", 80)+"b:1", "")
	if long1.Targets[0].Name == long2.Targets[0].Name {
		t.Errorf("two long host names share the name %q", long1.Targets[0].Name)
	}
	two := "targets:\n  - dsn_env: A\n  - dsn_env: B\n"
	cfg, err := ParseConfig([]byte(two), func(k string) (string, bool) {
		return map[string]string{"A": "sqlserver://u@db1:1433", "B": "sqlserver://u@db1:1434"}[k], true
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Targets[0].Name != "db1_1433" || cfg.Targets[1].Name != "db1_1434" {
		t.Errorf("names %q %q", cfg.Targets[0].Name, cfg.Targets[1].Name)
	}
	_, err = ParseConfig([]byte(two), func(k string) (string, bool) { return "sqlserver://u@db1:1433", true })
	if err == nil || !strings.Contains(err.Error(), "targets[1].name") {
		t.Errorf("two targets on one server without names: %v", err)
	}
}

// A DSN that does not parse is a start error that names the field (and
// never the password), not a running exporter with up 0.
func TestUnparsableDSNIsAStartError(t *testing.T) {
	for _, dsn := range []string{"sqlserver://u:Secr3t@h:1433?packet+size=huge", "server=h;port=notaport;password=Secr3t", "sqlserver://u:Secr3t@h:99999"} {
		_, err := ConfigFromDSN(dsn, "x")
		if err == nil || !strings.Contains(err.Error(), "--dsn") {
			t.Errorf("%q: %v", dsn, err)
		} else if strings.Contains(err.Error(), "Secr3t") {
			t.Errorf("%q: the error shows the password: %v", dsn, err)
		}
		_, err = ParseConfig([]byte("targets:\n  - name: a\n    dsn_env: A\n"), func(string) (string, bool) { return dsn, true })
		if err == nil || !strings.Contains(err.Error(), "targets[0].dsn_env") {
			t.Errorf("%q in dsn_env: %v", dsn, err)
		} else if strings.Contains(err.Error(), "Secr3t") {
			t.Errorf("%q: the error shows the password: %v", dsn, err)
		}
	}
}

func TestWithAppName(t *testing.T) {
	for in, want := range map[string]string{
		"sqlserver://sa@h?database=x&app+name=mine": "sqlserver://sa@h?app+name=queryreplay-exporter&database=x",
		"server=h;user id=sa;":                      "server=h;user id=sa;app name=queryreplay-exporter",
	} {
		if got := withAppName(in); got != want {
			t.Errorf("withAppName(%q) = %q, want %q", in, got, want)
		}
	}
}

// The shipped example configuration is valid.
func TestExampleConfigIsValid(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("../../provisioning/exporter/queryreplay-exporter.example.yml")
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "dsn")
	if err := os.WriteFile(secret, []byte("sqlserver://sa:x@sales1"), 0o600); err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(b), "/run/secrets/sales_primary_dsn", secret)
	cfg, err := ParseConfig([]byte(text), env("REPORTING_PASSWORD", "pw", "ORDERS_AZURE_DSN", "sqlserver://u:p@x.database.windows.net"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Targets) != 3 || len(cfg.Probes) != 1 {
		t.Fatalf("%d targets, %d probes", len(cfg.Targets), len(cfg.Probes))
	}
	if _, err := New(cfg, discardLog(), WithTracing(tracer.ExporterTracing{})); err != nil {
		t.Fatal(err)
	}
}

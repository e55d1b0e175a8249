package releasecheck

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/exporter"
)

// composeFile is the part of the Compose specification
// (https://github.com/compose-spec/compose-spec/blob/main/spec.md) that
// docker-compose.yaml uses. Decoding is strict: a key not declared here
// fails the test.
type composeFile struct {
	Name     string                    `yaml:"name"`
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]*struct{}      `yaml:"volumes"`
}

type composeService struct {
	Image       string                      `yaml:"image"`
	Build       *composeBuild               `yaml:"build"`
	DependsOn   map[string]composeDependsOn `yaml:"depends_on"`
	Environment map[string]string           `yaml:"environment"`
	Entrypoint  []string                    `yaml:"entrypoint"`
	Command     []string                    `yaml:"command"`
	Volumes     []string                    `yaml:"volumes"`
	Ports       []string                    `yaml:"ports"`
	Healthcheck *composeHealthcheck         `yaml:"healthcheck"`
	Restart     string                      `yaml:"restart"`
}

type composeBuild struct {
	Context    string `yaml:"context"`
	Dockerfile string `yaml:"dockerfile"`
}

type composeDependsOn struct {
	Condition string `yaml:"condition"`
}

type composeHealthcheck struct {
	Test        []string `yaml:"test"`
	Interval    string   `yaml:"interval"`
	Timeout     string   `yaml:"timeout"`
	Retries     int      `yaml:"retries"`
	StartPeriod string   `yaml:"start_period"`
}

// mount is one short-syntax volume: a bind mount (Source starts with ./)
// or a named volume.
type mount struct {
	Source, Target string
	ReadOnly       bool
}

func (m mount) bind() bool { return strings.HasPrefix(m.Source, "./") }

func (s composeService) mounts(t testing.TB) []mount {
	t.Helper()
	var out []mount
	for _, v := range s.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) < 2 || len(parts) > 3 {
			t.Fatalf("volume %q is not source:target[:mode]", v)
		}
		m := mount{Source: parts[0], Target: parts[1]}
		if len(parts) == 3 {
			if parts[2] != "ro" && parts[2] != "rw" {
				t.Fatalf("volume %q: mode %q is not ro or rw", v, parts[2])
			}
			m.ReadOnly = parts[2] == "ro"
		}
		if !path.IsAbs(m.Target) {
			t.Fatalf("volume %q: target must be an absolute container path", v)
		}
		out = append(out, m)
	}
	return out
}

// env returns the service's environment after interpolation with defaults.
func (s composeService) env(t testing.TB) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range s.Environment {
		val, missing := interpolate(v)
		if len(missing) > 0 {
			t.Fatalf("environment %s=%q uses %v without a default", k, v, missing)
		}
		out[k] = val
	}
	return out
}

func loadCompose(t testing.TB) composeFile {
	t.Helper()
	var c composeFile
	decodeYAMLStrict(t, repoPath(t, "docker-compose.yaml"), &c)
	return c
}

func (c composeFile) service(t testing.TB, name string) composeService {
	t.Helper()
	s, ok := c.Services[name]
	if !ok {
		t.Fatalf("docker-compose.yaml has no service %q", name)
	}
	return s
}

// The stack has the services the README names, each with an image or a
// build, and dependencies that exist and end.
func TestComposeServices(t *testing.T) {
	c := loadCompose(t)
	want := []string{"exporter", "grafana", "prometheus", "sqlserver", "sqlserver-init"}
	var got []string
	for name := range c.Services {
		got = append(got, name)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("services = %v, want %v", got, want)
	}
	for name, s := range c.Services {
		if (s.Image == "") == (s.Build == nil) {
			t.Errorf("service %s: want exactly one of image and build", name)
		}
		for dep, d := range s.DependsOn {
			if _, ok := c.Services[dep]; !ok {
				t.Errorf("service %s depends on unknown service %s", name, dep)
			}
			switch d.Condition {
			case "service_started", "service_completed_successfully":
			case "service_healthy":
				if c.Services[dep].Healthcheck == nil {
					t.Errorf("service %s waits for %s to be healthy, which has no healthcheck", name, dep)
				}
			default:
				t.Errorf("service %s: depends_on %s condition %q is not a compose condition", name, dep, d.Condition)
			}
		}
		for _, m := range s.mounts(t) {
			if !m.bind() {
				if _, ok := c.Volumes[m.Source]; !ok {
					t.Errorf("service %s mounts volume %q that is not declared under volumes", name, m.Source)
				}
			}
		}
	}
	// Dependencies form no cycle: Compose would refuse to start.
	state := map[string]int{}
	var visit func(string, []string)
	visit = func(n string, stack []string) {
		switch state[n] {
		case 1:
			t.Fatalf("depends_on cycle: %v", append(stack, n))
		case 2:
			return
		}
		state[n] = 1
		for dep := range c.Services[n].DependsOn {
			visit(dep, append(stack, n))
		}
		state[n] = 2
	}
	for n := range c.Services {
		visit(n, nil)
	}
	// The init job runs once, the long-running services come back.
	if c.service(t, "sqlserver-init").Restart != "no" {
		t.Error("sqlserver-init must have restart: \"no\" (it is a one-shot job)")
	}
}

// Every bind mount names a file that exists in the repository, except
// dist/, which make build writes (the webpack output directory).
func TestComposeBindMountsExist(t *testing.T) {
	c := loadCompose(t)
	constants := string(readFile(t, repoPath(t, ".config/bundler/constants.ts")))
	if !strings.Contains(constants, "DIST_DIR = 'dist'") {
		t.Fatal(".config/bundler/constants.ts no longer builds into dist/; update the grafana plugin mount")
	}
	for name, s := range c.Services {
		for _, m := range s.mounts(t) {
			if !m.bind() {
				continue
			}
			if m.Source == "./dist" {
				continue
			}
			if _, err := os.Stat(repoPath(t, m.Source)); err != nil {
				t.Errorf("service %s mounts %s, which does not exist: %v", name, m.Source, err)
			}
			if !m.ReadOnly {
				t.Errorf("service %s mounts %s read-write; the stack must not write into the checkout", name, m.Source)
			}
		}
	}
}

// Published ports are on loopback, distinct, and agree with what listens
// behind them and with who connects to them.
func TestComposePorts(t *testing.T) {
	c := loadCompose(t)
	hostPorts := map[string]string{}
	containerPort := map[string]map[int]bool{}
	for name, s := range c.Services {
		containerPort[name] = map[int]bool{}
		for _, p := range s.Ports {
			parts := strings.Split(p, ":")
			if len(parts) != 3 {
				t.Errorf("service %s: port %q must be 127.0.0.1:host:container (published on loopback only)", name, p)
				continue
			}
			if ip := net.ParseIP(parts[0]); ip == nil || !ip.IsLoopback() {
				t.Errorf("service %s: port %q is published beyond loopback", name, p)
			}
			if other, dup := hostPorts[parts[1]]; dup {
				t.Errorf("host port %s published by %s and %s", parts[1], other, name)
			}
			hostPorts[parts[1]] = name
			n, err := strconv.Atoi(parts[2])
			if err != nil {
				t.Errorf("service %s: port %q: %v", name, p, err)
			}
			containerPort[name][n] = true
		}
	}
	want := map[string]int{"sqlserver": 1433, "grafana": 3000, "prometheus": 9090, "exporter": exporterPort(t, c)}
	for name, port := range want {
		if !containerPort[name][port] {
			t.Errorf("service %s does not publish its port %d", name, port)
		}
	}
	// Prometheus scrapes the exporter where it listens.
	prom := string(readFile(t, repoPath(t, "scripts/compose/prometheus.yml")))
	if target := fmt.Sprintf("exporter:%d", want["exporter"]); !strings.Contains(prom, `"`+target+`"`) {
		t.Errorf("scripts/compose/prometheus.yml does not scrape %s", target)
	}
	// The exporter and Grafana reach SQL Server on its port.
	exp := string(readFile(t, repoPath(t, "scripts/compose/exporter.yaml")))
	if !strings.Contains(exp, "@sqlserver:1433") {
		t.Error("scripts/compose/exporter.yaml does not connect to sqlserver:1433")
	}
}

// exporterPort reads --web.listen-address from the exporter's command and
// checks it against the command's own default.
func exporterPort(t testing.TB, c composeFile) int {
	t.Helper()
	for _, arg := range c.service(t, "exporter").Command {
		if addr, ok := strings.CutPrefix(arg, "--web.listen-address="); ok {
			_, port, err := net.SplitHostPort(addr)
			if err != nil {
				t.Fatalf("exporter --web.listen-address %q: %v", addr, err)
			}
			n, _ := strconv.Atoi(port)
			src := string(readFile(t, repoPath(t, "cmd/queryreplay/exporter.go")))
			if !strings.Contains(src, fmt.Sprintf(`defaultExporterAddress = ":%d"`, n)) {
				t.Errorf("the compose exporter listens on %d, which is not queryreplay exporter's default (cmd/queryreplay/exporter.go)", n)
			}
			return n
		}
	}
	t.Fatal("the exporter service's command has no --web.listen-address")
	return 0
}

// Images are the ones the docs promise: SQL Server 2022, a Grafana the
// plugin supports, an exporter built from this checkout with the Go of
// go.mod.
func TestComposeImages(t *testing.T) {
	c := loadCompose(t)
	for _, name := range []string{"sqlserver", "sqlserver-init"} {
		if got := c.service(t, name).Image; got != "mcr.microsoft.com/mssql/server:2022-latest" {
			t.Errorf("service %s image = %q, want mcr.microsoft.com/mssql/server:2022-latest", name, got)
		}
	}
	image, missing := interpolate(c.service(t, "grafana").Image)
	if len(missing) > 0 {
		t.Fatalf("grafana image %q needs %v", c.service(t, "grafana").Image, missing)
	}
	repoName, tag, ok := strings.Cut(image, ":")
	if !ok || repoName != "grafana/grafana" {
		t.Fatalf("grafana image = %q, want grafana/grafana:<version>", image)
	}
	dep := pluginByType(t, "app").Dependencies.GrafanaDependency
	min, ok := strings.CutPrefix(dep, ">=")
	if !ok {
		t.Fatalf("src/plugin.json grafanaDependency %q is not >=X.Y.Z", dep)
	}
	if compareVersions(tag, min) < 0 {
		t.Errorf("grafana image %s is older than the plugin's grafanaDependency %s", tag, dep)
	}
	for _, p := range plugins(t) {
		if d := p.Dependencies.GrafanaDependency; d != "" && d != dep {
			t.Errorf("plugin %s has grafanaDependency %q, the app %q", p.ID, d, dep)
		}
	}

	b := c.service(t, "exporter").Build
	if b == nil || b.Context != "." {
		t.Fatal("the exporter must be built from the repository root (build.context: .)")
	}
	dockerfile := string(readFile(t, repoPath(t, b.Dockerfile)))
	goMod := string(readFile(t, repoPath(t, "go.mod")))
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(goMod)
	if goVersion == nil {
		t.Fatal("go.mod has no go directive")
	}
	if !strings.Contains(dockerfile, "FROM golang:"+goVersion[1]+"-") {
		t.Errorf("%s does not build with golang:%s (go.mod says go %s)", b.Dockerfile, goVersion[1], goVersion[1])
	}
	for _, m := range regexp.MustCompile(`(?m)^COPY (?:--from=\S+ )?(.+) \S+$`).FindAllStringSubmatch(dockerfile, -1) {
		if strings.Contains(m[0], "--from=") {
			continue
		}
		for _, src := range strings.Fields(m[1]) {
			if _, err := os.Stat(repoPath(t, src)); err != nil {
				t.Errorf("%s copies %s: %v", b.Dockerfile, src, err)
			}
		}
	}
	if !strings.Contains(dockerfile, "./cmd/queryreplay") {
		t.Errorf("%s does not build ./cmd/queryreplay", b.Dockerfile)
	}
	if cmd := c.service(t, "exporter").Command; len(cmd) == 0 || cmd[0] != "exporter" {
		t.Errorf("the exporter service must run `queryreplay exporter`, runs %v", cmd)
	}
}

// compareVersions compares dotted numeric versions (12.4.10 vs 12.3.0).
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x - y
		}
	}
	return 0
}

// Passwords have defaults that SQL Server's password policy accepts (at
// least 8 characters from three of: upper case, lower case, digits,
// symbols; https://learn.microsoft.com/en-us/sql/relational-databases/security/password-policy),
// and every service that uses a password gets it from the same variable.
func TestComposePasswords(t *testing.T) {
	c := loadCompose(t)
	seen := map[string]string{}
	for name, s := range c.Services {
		for k, v := range s.env(t) {
			if !strings.Contains(k, "PASSWORD") {
				continue
			}
			if prev, ok := seen[k]; ok && prev != v {
				t.Errorf("%s has different defaults across services (%s)", k, name)
			}
			seen[k] = v
			if strings.HasPrefix(k, "GF_") {
				continue
			}
			classes := 0
			for _, re := range []string{`[A-Z]`, `[a-z]`, `[0-9]`, `[^A-Za-z0-9]`} {
				if regexp.MustCompile(re).MatchString(v) {
					classes++
				}
			}
			if len(v) < 8 || classes < 3 {
				t.Errorf("service %s: default %s does not meet SQL Server's password policy", name, k)
			}
			if strings.ContainsAny(v, `'"$`) {
				t.Errorf("service %s: default %s holds a quote or $, which the sqlcmd -v and N'...' quoting would break", name, k)
			}
		}
	}
	// The exporter gets only the trace login's password, not sa's.
	if _, ok := c.service(t, "exporter").Environment["MSSQL_SA_PASSWORD"]; ok {
		t.Error("the exporter must not receive the sa password")
	}
	if _, ok := c.service(t, "grafana").Environment["MSSQL_SA_PASSWORD"]; ok {
		t.Error("grafana must not receive the sa password")
	}
}

// containerFS builds, in a temporary directory, the files a service sees:
// each bind mount copied to its container path. dist/ is left out (make
// build writes it); the caller checks plugin files from src/ instead.
func containerFS(t testing.TB, s composeService) string {
	t.Helper()
	root := t.TempDir()
	for _, m := range s.mounts(t) {
		if !m.bind() || m.Source == "./dist" {
			continue
		}
		if err := copyTree(repoPath(t, m.Source), filepath.Join(root, filepath.FromSlash(m.Target))); err != nil {
			t.Fatalf("copy %s to %s: %v", m.Source, m.Target, err)
		}
	}
	return root
}

// mountedTarget returns the container path a repository path is mounted
// at in s, if any (a file inside a mounted directory counts).
func mountedTarget(t testing.TB, s composeService, repoRel string) (string, bool) {
	t.Helper()
	repoRel = "./" + strings.TrimPrefix(repoRel, "./")
	for _, m := range s.mounts(t) {
		if !m.bind() {
			continue
		}
		if repoRel == m.Source {
			return m.Target, true
		}
		if rest, ok := strings.CutPrefix(repoRel, m.Source+"/"); ok {
			return path.Join(m.Target, rest), true
		}
	}
	return "", false
}

// The compose exporter's configuration passes the exporter's own parser,
// with the environment the compose service gives it, and connects as the
// login and to the database the sample script creates.
func TestComposeExporterConfig(t *testing.T) {
	c := loadCompose(t)
	s := c.service(t, "exporter")
	target, ok := mountedTarget(t, s, "scripts/compose/exporter.yaml")
	if !ok || !slices.Contains(s.Command, "--config.file="+target) {
		t.Fatalf("the exporter runs with %v, not the mounted scripts/compose/exporter.yaml (%s)", s.Command, target)
	}
	env := s.env(t)
	cfg, err := exporter.ParseConfig(readFile(t, repoPath(t, "scripts/compose/exporter.yaml")), func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	})
	if err != nil {
		t.Fatalf("scripts/compose/exporter.yaml: %v", err)
	}
	if len(cfg.Targets) != 1 {
		t.Fatalf("want one target, got %d", len(cfg.Targets))
	}
	u, err := url.Parse(cfg.Targets[0].ResolvedDSN())
	if err != nil {
		t.Fatal(err)
	}
	password, _ := u.User.Password()
	if u.User.Username() != "queryreplay" || password != env["QUERYREPLAY_SQL_PASSWORD"] || u.Query().Get("database") != "QueryReplayDemo" {
		t.Errorf("the exporter connects as %q to database %q; want the script's login queryreplay (with QUERYREPLAY_SQL_PASSWORD) and QueryReplayDemo", u.User.Username(), u.Query().Get("database"))
	}
	if got := c.service(t, "sqlserver-init").env(t)["QUERYREPLAY_SQL_PASSWORD"]; got != env["QUERYREPLAY_SQL_PASSWORD"] {
		t.Error("the exporter and the init job use different QUERYREPLAY_SQL_PASSWORD defaults")
	}
}

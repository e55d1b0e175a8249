package releasecheck

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/queryreplay/queryreplay/pkg/plugin"
)

// Grafana's file provisioning formats
// (https://grafana.com/docs/grafana/latest/administration/provisioning/),
// the keys QueryReplay uses. Decoding is strict.

type datasourcesFile struct {
	APIVersion        int                 `yaml:"apiVersion"`
	DeleteDatasources []datasourceRef     `yaml:"deleteDatasources"`
	Prune             bool                `yaml:"prune"`
	Datasources       []provisionedSource `yaml:"datasources"`
}

type datasourceRef struct {
	Name  string `yaml:"name"`
	OrgID int    `yaml:"orgId"`
}

type provisionedSource struct {
	Name            string            `yaml:"name"`
	Type            string            `yaml:"type"`
	UID             string            `yaml:"uid"`
	Access          string            `yaml:"access"`
	OrgID           int               `yaml:"orgId"`
	URL             string            `yaml:"url"`
	User            string            `yaml:"user"`
	Database        string            `yaml:"database"`
	BasicAuth       bool              `yaml:"basicAuth"`
	BasicAuthUser   string            `yaml:"basicAuthUser"`
	WithCredentials bool              `yaml:"withCredentials"`
	IsDefault       bool              `yaml:"isDefault"`
	Version         int               `yaml:"version"`
	Editable        bool              `yaml:"editable"`
	JSONData        map[string]any    `yaml:"jsonData"`
	SecureJSONData  map[string]string `yaml:"secureJsonData"`
}

type dashboardProvidersFile struct {
	APIVersion int                 `yaml:"apiVersion"`
	Providers  []dashboardProvider `yaml:"providers"`
}

type dashboardProvider struct {
	Name                  string `yaml:"name"`
	OrgID                 int    `yaml:"orgId"`
	Folder                string `yaml:"folder"`
	FolderUID             string `yaml:"folderUid"`
	Type                  string `yaml:"type"`
	DisableDeletion       bool   `yaml:"disableDeletion"`
	AllowUIUpdates        bool   `yaml:"allowUiUpdates"`
	UpdateIntervalSeconds int    `yaml:"updateIntervalSeconds"`
	Options               struct {
		Path                      string `yaml:"path"`
		FoldersFromFilesStructure bool   `yaml:"foldersFromFilesStructure"`
	} `yaml:"options"`
}

type appsFile struct {
	APIVersion int `yaml:"apiVersion"`
	Apps       []struct {
		Type           string            `yaml:"type"`
		OrgID          int               `yaml:"org_id"`
		OrgName        string            `yaml:"org_name"`
		Disabled       bool              `yaml:"disabled"`
		JSONData       map[string]any    `yaml:"jsonData"`
		SecureJSONData map[string]string `yaml:"secureJsonData"`
	} `yaml:"apps"`
}

// yamlFiles lists *.yaml and *.yml directly in dir (none when dir is
// missing).
func yamlFiles(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && (strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml")) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// datasources reads every datasource provisioning file in dir, keyed by uid.
func datasources(t testing.TB, dir string) map[string]provisionedSource {
	t.Helper()
	out := map[string]provisionedSource{}
	for _, f := range yamlFiles(t, dir) {
		var df datasourcesFile
		decodeYAMLStrict(t, f, &df)
		if df.APIVersion != 1 {
			t.Errorf("%s: apiVersion %d, want 1", f, df.APIVersion)
		}
		for _, ds := range df.Datasources {
			if ds.UID == "" || ds.Name == "" || ds.Type == "" {
				t.Errorf("%s: datasource %+v needs name, type and uid (dashboards and alerts reference the uid)", f, ds.Name)
			}
			if _, dup := out[ds.UID]; dup {
				t.Errorf("%s: datasource uid %q provisioned twice", f, ds.UID)
			}
			out[ds.UID] = ds
		}
	}
	return out
}

// builtinDatasourceTypes are the core datasource types our provisioning
// may use besides our own plugin.
var builtinDatasourceTypes = []string{"prometheus"}

// composeDatasources are the datasources the compose Grafana loads: the
// files mounted into its datasources directory, as it sees them.
func composeDatasources(t testing.TB) (map[string]provisionedSource, string) {
	t.Helper()
	root := containerFS(t, loadCompose(t).service(t, "grafana"))
	dir := filepath.Join(root, "etc", "grafana", "provisioning", "datasources")
	return datasources(t, dir), dir
}

// The repository's provisioning (for any Grafana) and the compose stack's
// agree: same uids and types, the contract uids present, types that are
// our plugin ids or core types, every ${VAR} set for Grafana in compose.
func TestProvisioningDatasources(t *testing.T) {
	dsID := pluginByType(t, "datasource").ID
	repoDS := datasources(t, repoPath(t, "provisioning/datasources"))
	composeDS, composeDir := composeDatasources(t)
	if len(repoDS) == 0 {
		t.Fatal("provisioning/datasources provisions no datasource")
	}
	for _, set := range []struct {
		where string
		ds    map[string]provisionedSource
	}{{"provisioning/datasources", repoDS}, {"the compose grafana", composeDS}} {
		for uid, ds := range set.ds {
			if ds.Type != dsID && !slices.Contains(builtinDatasourceTypes, ds.Type) {
				t.Errorf("%s: datasource %s has type %q, neither %s (src/datasource/plugin.json) nor a core type", set.where, uid, ds.Type, dsID)
			}
		}
		if got := set.ds["queryreplay"]; got.Type != dsID {
			t.Errorf("%s: uid queryreplay must be the %s datasource (docs/design/contracts.md §2), got type %q", set.where, dsID, got.Type)
		}
		if got := set.ds["prometheus"]; got.Type != "prometheus" {
			t.Errorf("%s: uid prometheus must be a Prometheus datasource (docs/design/contracts.md §2), got type %q", set.where, got.Type)
		}
	}
	for uid, ds := range repoDS {
		c, ok := composeDS[uid]
		if !ok {
			t.Errorf("datasource uid %s of provisioning/datasources is missing from the compose stack", uid)
			continue
		}
		if c.Type != ds.Type {
			t.Errorf("datasource uid %s: type %s in provisioning, %s in compose", uid, ds.Type, c.Type)
		}
	}
	// Variables the compose datasources interpolate are set for Grafana,
	// and point at the stack.
	env := loadCompose(t).service(t, "grafana").env(t)
	for _, f := range yamlFiles(t, composeDir) {
		for _, name := range provisioningVariables(t, f) {
			if _, ok := env[name]; !ok {
				t.Errorf("%s uses $%s, which the compose grafana does not set", filepath.Base(f), name)
			}
		}
	}
	if got := env["PROMETHEUS_URL"]; got != "http://prometheus:9090" {
		t.Errorf("the compose grafana's PROMETHEUS_URL = %q, want the stack's http://prometheus:9090", got)
	}
}

// grafanaVar is what Grafana's provisioning expands from the environment
// in a value: ${…} first, then $NAME; $$ is a literal $
// (https://grafana.com/docs/grafana/latest/administration/provisioning/#use-environment-variables).
var grafanaVar = regexp.MustCompile(`\$\$|\$\{([^}]*)\}|\$([A-Za-z0-9_]+)`)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// provisioningVariables lists the environment variables a provisioning
// file's values use, and fails on a $ Grafana would expand that is not a
// variable: a data-link macro such as ${__value.raw} must be written
// $${__value.raw}, or Grafana replaces it with an empty string.
func provisioningVariables(t testing.TB, file string) []string {
	t.Helper()
	var names []string
	for i, line := range strings.Split(string(readFile(t, file)), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, m := range grafanaVar.FindAllStringSubmatch(line, -1) {
			switch {
			case m[0] == "$$":
			case m[1] != "" || strings.HasPrefix(m[0], "${"):
				name, _, _ := strings.Cut(m[1], ":")
				if !envName.MatchString(name) {
					t.Errorf("%s:%d: Grafana expands %s from the environment (to nothing); write $%s for a literal", file, i+1, m[0], m[0])
					continue
				}
				names = append(names, name)
			default:
				names = append(names, m[2])
			}
		}
	}
	return names
}

// Every datasource and dashboard-provider file of the repository uses $
// only for environment variables. (Alert rule annotations are not
// expanded by Grafana, so alerting files are left out.)
func TestProvisioningDollarSigns(t *testing.T) {
	for _, dir := range []string{"provisioning/datasources", "provisioning/dashboards", "provisioning/plugins", "scripts/compose/grafana/datasources"} {
		for _, f := range yamlFiles(t, repoPath(t, dir)) {
			provisioningVariables(t, f)
		}
	}
}

// Every provisioning file for Grafana reaches the compose Grafana at the
// path Grafana reads it from, and the apps it enables are ours.
func TestProvisioningMountedInCompose(t *testing.T) {
	grafana := loadCompose(t).service(t, "grafana")
	for _, kind := range []string{"dashboards", "plugins", "alerting"} {
		for _, f := range yamlFiles(t, repoPath(t, "provisioning/"+kind)) {
			rel := "provisioning/" + kind + "/" + filepath.Base(f)
			target, ok := mountedTarget(t, grafana, rel)
			if want := "/etc/grafana/provisioning/" + kind + "/" + filepath.Base(f); !ok || target != want {
				t.Errorf("%s is not mounted at %s in the compose grafana (got %q)", rel, want, target)
			}
		}
	}
	appID := pluginByType(t, "app").ID
	var enabled []string
	for _, f := range yamlFiles(t, repoPath(t, "provisioning/plugins")) {
		var af appsFile
		decodeYAMLStrict(t, f, &af)
		for _, a := range af.Apps {
			if a.Type != appID {
				t.Errorf("%s enables app %q; the plugin is %s", f, a.Type, appID)
			}
			if !a.Disabled {
				enabled = append(enabled, a.Type)
			}
		}
	}
	if !slices.Contains(enabled, appID) {
		t.Errorf("provisioning/plugins does not enable %s", appID)
	}
}

// The compose Grafana loads the built plugin unsigned, under its id.
func TestComposeGrafanaPlugin(t *testing.T) {
	grafana := loadCompose(t).service(t, "grafana")
	appID := pluginByType(t, "app").ID
	target, ok := mountedTarget(t, grafana, "dist")
	if want := "/var/lib/grafana/plugins/" + appID; !ok || target != want {
		t.Errorf("dist/ must be mounted at %s, got %q", want, target)
	}
	allowed := strings.Split(grafana.env(t)["GF_PLUGINS_ALLOW_LOADING_UNSIGNED_PLUGINS"], ",")
	for _, id := range pluginIDs(t) {
		if !slices.Contains(allowed, id) {
			t.Errorf("GF_PLUGINS_ALLOW_LOADING_UNSIGNED_PLUGINS does not list %s (src/**/plugin.json)", id)
		}
	}
	for _, id := range allowed {
		if !slices.Contains(pluginIDs(t), id) {
			t.Errorf("GF_PLUGINS_ALLOW_LOADING_UNSIGNED_PLUGINS lists %s, which no src/**/plugin.json declares", id)
		}
	}
	if grafana.env(t)["GF_SECURITY_ADMIN_PASSWORD"] == "" {
		t.Error("the compose grafana needs an admin password (the README says how to log in)")
	}
}

// providers reads the dashboard providers of provisioning/dashboards.
func providers(t testing.TB) []dashboardProvider {
	t.Helper()
	var out []dashboardProvider
	for _, f := range yamlFiles(t, repoPath(t, "provisioning/dashboards")) {
		var pf dashboardProvidersFile
		decodeYAMLStrict(t, f, &pf)
		if pf.APIVersion != 1 {
			t.Errorf("%s: apiVersion %d, want 1", f, pf.APIVersion)
		}
		for _, p := range pf.Providers {
			if p.Type != "file" || !path.IsAbs(p.Options.Path) {
				t.Errorf("%s: provider %s must be type file with an absolute options.path", f, p.Name)
			}
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		t.Fatal("provisioning/dashboards has no dashboard provider")
	}
	return out
}

// composeDashboards returns the dashboards the compose Grafana's providers
// load, by uid, read from the container's view of the files.
func composeDashboards(t testing.TB) (map[string]string, string) {
	t.Helper()
	grafana := loadCompose(t).service(t, "grafana")
	root := containerFS(t, grafana)
	byUID := map[string]string{}
	for _, p := range providers(t) {
		dir := filepath.Join(root, filepath.FromSlash(p.Options.Path))
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("provider %s reads %s, which nothing is mounted at in the compose grafana", p.Name, p.Options.Path)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, f := range files {
			d := readDashboard(t, f)
			rel, _ := filepath.Rel(root, f)
			byUID[d.UID] = "/" + filepath.ToSlash(rel)
		}
	}
	return byUID, root
}

// Opening the compose Grafana shows the replay dashboard: the home
// dashboard path is a provisioned file whose uid is the replay contract's.
func TestComposeHomeDashboard(t *testing.T) {
	if len(repoDashboards(t)) == 0 {
		t.Fatal("dashboards/ holds no dashboard: the replay dashboard must ship")
	}
	byUID, root := composeDashboards(t)
	home := loadCompose(t).service(t, "grafana").env(t)["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
	if home == "" {
		t.Fatal("the compose grafana sets no GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH")
	}
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(home))); err != nil {
		var have []string
		for uid, p := range byUID {
			have = append(have, uid+" at "+p)
		}
		sort.Strings(have)
		t.Fatalf("home dashboard %s is not in the compose grafana; provisioned: %v", home, have)
	}
	if got := byUID[replayDashboardUID]; got != home {
		t.Errorf("home dashboard is %s, but the replay dashboard (uid %s) is at %q", home, replayDashboardUID, got)
	}
}

// The QueryReplay datasources provisioned pass the datasource's own
// settings validation, as Grafana would hand them to it: the compose one
// with the stack's environment, the repository's with its placeholders
// filled in.
func TestProvisionedQueryReplaySettingsValidate(t *testing.T) {
	env := loadCompose(t).service(t, "grafana").env(t)
	placeholders := map[string]string{"QUERYREPLAY_SQL_HOST": "sql01.example.com", "QUERYREPLAY_SQL_USER": "queryreplay", "QUERYREPLAY_SQL_PASSWORD": "secret"}
	composeDS, _ := composeDatasources(t)
	for _, set := range []struct {
		where string
		ds    map[string]provisionedSource
		env   map[string]string
	}{
		{"provisioning/datasources", datasources(t, repoPath(t, "provisioning/datasources")), placeholders},
		{"the compose grafana", composeDS, env},
	} {
		ds := set.ds["queryreplay"]
		expand := func(s string) string {
			return os.Expand(s, func(k string) string { return set.env[k] })
		}
		raw, err := json.Marshal(ds.JSONData)
		if err != nil {
			t.Fatal(err)
		}
		secure := map[string]string{}
		for k, v := range ds.SecureJSONData {
			secure[k] = expand(v)
		}
		st := backend.DataSourceInstanceSettings{UID: ds.UID, Type: ds.Type, JSONData: []byte(expand(string(raw))), DecryptedSecureJSONData: secure}
		cfg, err := plugin.LoadSettings(st)
		if err != nil {
			t.Errorf("%s: the QueryReplay datasource's settings: %v", set.where, err)
			continue
		}
		if set.where == "the compose grafana" && (cfg.Host != "sqlserver" || cfg.User != "queryreplay" || cfg.Database != "QueryReplayDemo" || cfg.Password != env["QUERYREPLAY_SQL_PASSWORD"]) {
			t.Errorf("the compose QueryReplay datasource connects to %s as %s in %s; want the stack's sqlserver, the script's login and QueryReplayDemo", cfg.Host, cfg.User, cfg.Database)
		}
	}
}

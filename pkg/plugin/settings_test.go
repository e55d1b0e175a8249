package plugin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/microsoft/go-mssqldb/integratedauth"
	"github.com/microsoft/go-mssqldb/msdsn"

	"github.com/queryreplay/queryreplay/pkg/tracer"
)

func load(t *testing.T, json string, secure map[string]string) (Settings, error) {
	t.Helper()
	return LoadSettings(backend.DataSourceInstanceSettings{JSONData: []byte(json), DecryptedSecureJSONData: secure})
}

func TestSettingsValidationNamesEveryField(t *testing.T) {
	pw := map[string]string{"password": "pw"}
	tests := []struct {
		name     string
		json     string
		secure   map[string]string
		problems []string
	}{
		{"valid sql", `{"host":"db1","port":1433,"user":"qr","database":"Demo","encrypt":"strict","traceTimeout":"2m","maxEvents":5000}`, pw, nil},
		{"valid azuread managed identity", `{"host":"x.database.windows.net","authType":"azuread","azureCredential":"managedIdentity"}`, nil, nil},
		{"empty", `{}`, nil, []string{"host is missing", "user is missing", "password is missing"}},
		{"bad json", `{"port":"x"}`, pw, []string{"jsonData is not valid JSON"}},
		{"bad fields", `{"host":"sqlserver://db1","port":70000,"user":"u","encrypt":"maybe","connectTimeoutSeconds":-1,"maxConcurrentTraces":99,
			"traceTimeout":"forever","maxEvents":-5}`, pw,
			[]string{`host "sqlserver://db1"`, "port 70000", `encrypt "maybe"`, "connectTimeoutSeconds -1", `traceTimeout "forever"`}},
		{"bad limits", `{"host":"h","user":"u","maxConcurrentTraces":99,"maxEvents":-5,"traceQueueTimeout":-1,"symbolServers":["ftp://x"],
			"traceStore":{"directory":"relative/dir","maxTraces":-1}}`, pw,
			[]string{"maxConcurrentTraces 99", "maxEvents -5", "traceQueueTimeout", `symbolServers entry "ftp://x"`, "traceStore.directory", "traceStore limits"}},
		{"bad auth type", `{"host":"h","user":"u","authType":"ldap"}`, pw, []string{`authType "ldap"`}},
		{"azuread service principal incomplete", `{"host":"h","authType":"azuread"}`, nil,
			[]string{"application (client) id", "tenantId is missing", "clientSecret is missing"}},
		{"azuread bad credential", `{"host":"h","authType":"azuread","azureCredential":"cert"}`, nil, []string{`azureCredential "cert"`}},
		{"windows with password lacks realm", `{"host":"h","authType":"windows","user":"svc"}`, pw, []string{"kerberosRealm", "kerberosConfigFile"}},
		{"windows missing files", `{"host":"h","authType":"windows","user":"svc","kerberosKeytabFile":"/nonexistent/k.keytab"}`, nil,
			[]string{"kerberosKeytabFile"}},
		{"valid s3 bucket with keys", `{"host":"h","user":"u","traceStore":{"bucketURL":"s3://traces?region=eu-west-1"}}`,
			map[string]string{"password": "pw", "traceStoreAccessKey": "AKIAEXAMPLE", "traceStoreSecretKey": "s3cr3t-value"}, nil},
		{"valid gcs and azure buckets", `{"host":"h","user":"u","traceStore":{"bucketURL":"gs://traces"}}`, pw, nil},
		{"bad bucket URL", `{"host":"h","user":"u","traceStore":{"bucketURL":"ftp://traces"}}`,
			map[string]string{"password": "pw", "traceStoreSecretKey": "s3cr3t-value"},
			[]string{`traceStore.bucketURL: the bucket URL scheme "ftp" is not supported`, "go together", "apply only to an s3://"}},
		{"bucket URL without a bucket", `{"host":"h","user":"u","traceStore":{"bucketURL":"s3://?region=x"}}`, pw, []string{"names no bucket"}},
		{"tls CA neither PEM nor file", `{"host":"h","user":"u","tlsCA":"/nonexistent/ca.pem"}`, pw, []string{"tlsCA"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, tt.json, tt.secure)
			if len(tt.problems) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !isSettingsError(err) {
				t.Fatalf("err = %v, want a SettingsError", err)
			}
			for _, p := range tt.problems {
				if !strings.Contains(err.Error(), p) {
					t.Errorf("error %q does not mention %q", err, p)
				}
			}
			if tt.secure != nil && strings.Contains(err.Error(), tt.secure["password"]+"@") {
				t.Errorf("error leaks the password: %v", err)
			}
			if s := tt.secure["traceStoreSecretKey"]; s != "" && strings.Contains(err.Error(), s) {
				t.Errorf("error leaks the S3 secret key: %v", err)
			}
		})
	}
}

func TestDurationsAcceptSecondsAndStrings(t *testing.T) {
	s, err := load(t, `{"host":"h","user":"u","traceTimeout":90,"traceQueueTimeout":"1.5"}`, map[string]string{"password": "p"})
	if err != nil {
		t.Fatal(err)
	}
	if s.traceTimeout() != 90*time.Second || s.queueTimeout() != 1500*time.Millisecond {
		t.Fatalf("timeouts %s %s", s.traceTimeout(), s.queueTimeout())
	}
	def, _ := load(t, `{"host":"h","user":"u"}`, map[string]string{"password": "p"})
	if def.traceTimeout() != DefaultTraceTimeout || def.maxConcurrent() != DefaultMaxConcurrentTraces || def.maxEvents() != tracer.DefaultMaxEvents {
		t.Fatal("defaults not applied")
	}
	if def.Policy().Modifications != tracer.ModificationsRefuse || def.Policy().AllowClearBufferPool {
		t.Fatal("default policy is not the safe one")
	}
}

func TestSQLAuthDSNAndRedaction(t *testing.T) {
	s := Settings{Host: "db1", User: "qr", Password: "s3cret@x/y", Database: "Demo", Encrypt: "disable"}
	dsn, err := s.DSN()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"sqlserver://qr:s3cret%40x%2Fy@db1:1433", "database=Demo", "encrypt=disable", "app+name=QueryReplay"} {
		if !strings.Contains(dsn, want) {
			t.Errorf("DSN %q lacks %q", dsn, want)
		}
	}
	if strings.Contains(s.Redacted(), "s3cret") {
		t.Fatalf("Redacted leaks the password: %s", s.Redacted())
	}
	if _, err := s.Connector(); err != nil {
		t.Fatal(err)
	}
}

func TestAzureADConnectors(t *testing.T) {
	// What can be tested without Azure: the DSN carries go-mssqldb's fedauth
	// workflow and credentials, and the azuread package accepts it. Getting
	// a token needs Entra ID and is not tested here.
	sp := Settings{Host: "x.database.windows.net", AuthType: AuthAzureAD, User: "11111111-2222-3333-4444-555555555555", TenantID: "tenant-1", ClientSecret: "cs!"}
	dsn, err := sp.DSN()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"fedauth=ActiveDirectoryServicePrincipal", "11111111-2222-3333-4444-555555555555%40tenant-1:cs%21@"} {
		if !strings.Contains(dsn, want) {
			t.Errorf("DSN %q lacks %q", dsn, want)
		}
	}
	if _, err := sp.Connector(); err != nil {
		t.Fatalf("service principal connector: %v", err)
	}
	mi := Settings{Host: "x.database.windows.net", AuthType: AuthAzureAD, AzureCredential: AzureManagedIdentity}
	dsn, _ = mi.DSN()
	if !strings.Contains(dsn, "fedauth=ActiveDirectoryManagedIdentity") || strings.Contains(dsn, "@x.database") && strings.Contains(dsn, ":@") {
		t.Errorf("managed identity DSN %q", dsn)
	}
	if _, err := mi.Connector(); err != nil {
		t.Fatalf("managed identity connector: %v", err)
	}
	if strings.Contains(sp.Redacted(), "cs!") {
		t.Fatal("Redacted leaks the client secret")
	}
}

func TestWindowsKerberosConnector(t *testing.T) {
	// What can be tested without a KDC: the DSN selects go-mssqldb's krb5
	// authenticator with our settings, and that authenticator accepts a
	// complete configuration and names what an incomplete one lacks.
	// Logging in needs a KDC and is not tested here.
	dir := t.TempDir()
	conf := filepath.Join(dir, "krb5.conf")
	if err := os.WriteFile(conf, []byte("[libdefaults]\n  default_realm = EXAMPLE.COM\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := Settings{Host: "sql1.example.com", AuthType: AuthWindows, User: "svc", Password: "pw", KerberosRealm: "EXAMPLE.COM", KerberosConfigFile: conf}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	dsn, err := s.DSN()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"authenticator=krb5", "krb5-realm=EXAMPLE.COM", "krb5-configfile="} {
		if !strings.Contains(dsn, want) {
			t.Errorf("DSN %q lacks %q", dsn, want)
		}
	}
	cfg, err := msdsn.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if a, err := integratedauth.GetIntegratedAuthenticator(cfg); err != nil || a == nil {
		t.Fatalf("krb5 authenticator: %v", err)
	}
	if _, err := s.Connector(); err != nil {
		t.Fatal(err)
	}
	noConf := s
	noConf.KerberosConfigFile = filepath.Join(dir, "missing.conf")
	dsn, _ = noConf.DSN()
	cfg, _ = msdsn.Parse(dsn)
	if _, err := integratedauth.GetIntegratedAuthenticator(cfg); err == nil || !strings.Contains(err.Error(), "krb5") {
		t.Fatalf("missing krb5.conf: %v", err)
	}
}

func TestTLSCAFromPEMText(t *testing.T) {
	pem := "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	s := Settings{Host: "h", User: "u", Password: "p", TLSCA: pem}
	dsn, err := s.DSN()
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(dsn, "certificate=")
	if i < 0 {
		t.Fatalf("DSN %q has no certificate", dsn)
	}
	cfg, err := msdsn.Parse(dsn)
	if err == nil {
		t.Log("driver accepted the placeholder certificate") // the body is not a real certificate
	}
	_ = cfg
	path := strings.SplitN(strings.SplitN(dsn[i+len("certificate="):], "&", 2)[0], "%2F", -1)
	file := strings.Join(path, "/")
	got, err := os.ReadFile(file)
	if err != nil || string(got) != pem {
		t.Fatalf("CA file %s: %v", file, err)
	}
}

func TestStoreDirectoryFallbacks(t *testing.T) {
	t.Setenv("GF_PLUGIN_TRACE_STORE_DIR", "")
	t.Setenv("GF_PATHS_DATA", "/var/lib/grafana")
	if got := StoreDirectory(TraceStoreSettings{}, "ab/c"); got != "/var/lib/grafana/queryreplay/traces/ab_c" {
		t.Errorf("GF_PATHS_DATA: %s", got)
	}
	t.Setenv("GF_PLUGIN_TRACE_STORE_DIR", "/srv/traces")
	if got := StoreDirectory(TraceStoreSettings{}, "u1"); got != "/srv/traces/u1" {
		t.Errorf("GF_PLUGIN_TRACE_STORE_DIR: %s", got)
	}
	if got := StoreDirectory(TraceStoreSettings{Directory: "/data/qr"}, ""); got != "/data/qr/default" {
		t.Errorf("traceStore.directory: %s", got)
	}
}

// TestHostWithCredentialsIsNotEchoed: a URL pasted into the host field
// is refused without repeating its user or password (issue 25 item 7).
func TestHostWithCredentialsIsNotEchoed(t *testing.T) {
	for _, host := range []string{"sqlserver://sa:Pa55-word@db1:1433", "sa:Pa55-word@db1", "Pa55-word@@db1", "a@b:Pa55-word@db1/x"} {
		_, err := load(t, fmt.Sprintf(`{"host":%q,"user":"u"}`, host), map[string]string{"password": "p"})
		if err == nil || !strings.Contains(err.Error(), "host ") || strings.Contains(err.Error(), "Pa55-word") || strings.Contains(err.Error(), "sa:") {
			t.Errorf("host %q: %v", host, err)
		}
	}
}

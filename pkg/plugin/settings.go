package plugin

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	mssql "github.com/microsoft/go-mssqldb"
	"github.com/microsoft/go-mssqldb/azuread"

	// Registers the "krb5" integrated authenticator used by authType windows.
	_ "github.com/microsoft/go-mssqldb/integratedauth/krb5"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/sizelimit"
	"github.com/queryreplay/queryreplay/pkg/tracer"
	"github.com/queryreplay/queryreplay/pkg/tracestore"
)

// Authentication types (docs/frames.md §2).
const (
	AuthSQL     = "sql"
	AuthWindows = "windows"
	AuthAzureAD = "azuread"
)

// Azure AD credentials of authType azuread.
const (
	AzureServicePrincipal = "servicePrincipal"
	AzureManagedIdentity  = "managedIdentity"
)

// Settings defaults.
const (
	DefaultMaxConcurrentTraces = 2
	DefaultTraceTimeout        = 5 * time.Minute
	DefaultQueueTimeout        = 30 * time.Second
	DefaultConnectTimeout      = 15 * time.Second
	MaxConcurrentTracesLimit   = 32
	MaxEventsLimit             = 10_000_000
	// DefaultMaxQueryMB bounds a query's JSON (maxQueryMB): the batch text
	// is the big part, and a batch of megabytes is already unusual.
	DefaultMaxQueryMB = 4
	MaxQueryMBLimit   = 256
	// MaxBundleMBLimit caps traceStore.maxBundleMB; the default is
	// bundle.DefaultMaxBytes (256 MB).
	MaxBundleMBLimit = 4096
)

// Duration reads a number of seconds or a Go duration string ("90s",
// "5m"). A value that is neither is kept as Invalid, so that Validate can
// name the field along with every other problem.
type Duration struct {
	time.Duration
	Invalid string
}

// UnmarshalJSON accepts 300, 300.5, "300" or "5m".
func (d *Duration) UnmarshalJSON(b []byte) error {
	*d = Duration{}
	var n float64
	if err := json.Unmarshal(b, &n); err == nil {
		d.Duration = time.Duration(n * float64(time.Second))
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		d.Invalid = string(b)
		return nil
	}
	if s == "" {
		return nil
	}
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		d.Duration = time.Duration(n * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		d.Invalid = s
		return nil
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes seconds.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.Seconds()) }

// TraceStoreSettings is jsonData.traceStore.
type TraceStoreSettings struct {
	Directory   string `json:"directory"`
	BucketURL   string `json:"bucketURL"`
	MaxTraces   int    `json:"maxTraces"`
	MaxMemoryMB int    `json:"maxMemoryMB"`
	MaxAgeHours int    `json:"maxAgeHours"`
	MaxDiskMB   int    `json:"maxDiskMB"`
	// MaxBundleMB bounds a bundle uploaded or loaded from the store, once
	// decompressed (and so compressed too); 0: 256.
	MaxBundleMB int `json:"maxBundleMB"`

	// Static S3 credentials, from the secure fields traceStoreAccessKey
	// and traceStoreSecretKey; never serialised, logged or in messages.
	// Without them each driver takes its credentials its own way.
	AccessKey string `json:"-"`
	SecretKey string `json:"-"`
}

// Settings is the datasource configuration a Grafana admin saves: the
// non-secret part arrives as JSONData, the secrets as secure JSON data. The
// JSON names are a contract (docs/frames.md §2).
type Settings struct {
	Host     string `json:"host"`
	Port     int    `json:"port"`
	Database string `json:"database"`
	User     string `json:"user"`
	AuthType string `json:"authType"`

	AzureCredential string `json:"azureCredential"`
	TenantID        string `json:"tenantId"`

	KerberosRealm           string `json:"kerberosRealm"`
	KerberosConfigFile      string `json:"kerberosConfigFile"`
	KerberosKeytabFile      string `json:"kerberosKeytabFile"`
	KerberosCredentialCache string `json:"kerberosCredentialCache"`

	// Encrypt is go-mssqldb's encrypt parameter: disable, true or strict.
	// Empty means true, the driver's safe default.
	Encrypt string `json:"encrypt"`
	// TrustServerCertificate skips certificate validation; only for labs.
	TrustServerCertificate bool `json:"trustServerCertificate"`
	// TLSCA is PEM text or the path of a PEM file.
	TLSCA string `json:"tlsCA"`
	// ConnectTimeoutSeconds bounds dialing and the health check; 0 means 15.
	ConnectTimeoutSeconds int `json:"connectTimeoutSeconds"`

	MaxConcurrentTraces  int      `json:"maxConcurrentTraces"`
	TraceQueueTimeout    Duration `json:"traceQueueTimeout"`
	TraceTimeout         Duration `json:"traceTimeout"`
	MaxEvents            int      `json:"maxEvents"`
	MaxQueryMB           int      `json:"maxQueryMB"`
	AllowBufferPoolClear bool     `json:"allowBufferPoolClear"`
	AllowModifications   bool     `json:"allowModifications"`
	SymbolServers        []string `json:"symbolServers"`
	SymbolCacheDir       string   `json:"symbolCacheDir"`
	// MinTraceRole is the lowest Grafana org role that may run traces and
	// probes, upload and list every trace: Viewer, Editor or Admin; empty
	// means Editor (roles.go, docs/security.md).
	MinTraceRole string `json:"minTraceRole"`

	TraceStore TraceStoreSettings `json:"traceStore"`

	// Secrets, from DecryptedSecureJSONData; never serialised.
	Password     string `json:"-"`
	ClientSecret string `json:"-"`
}

// SettingsError lists every problem found in the saved settings, so that the
// admin can fix them all at once.
type SettingsError struct{ Problems []string }

func (e *SettingsError) Error() string {
	return "invalid datasource settings: " + strings.Join(e.Problems, "; ")
}

// LoadSettings decodes and validates the instance settings.
func LoadSettings(s backend.DataSourceInstanceSettings) (Settings, error) {
	var cfg Settings
	if len(s.JSONData) > 0 {
		if err := json.Unmarshal(s.JSONData, &cfg); err != nil {
			return Settings{}, &SettingsError{Problems: []string{fmt.Sprintf("jsonData is not valid JSON for these settings: %v", err)}}
		}
	}
	cfg.Password = s.DecryptedSecureJSONData["password"]
	cfg.ClientSecret = s.DecryptedSecureJSONData["clientSecret"]
	cfg.TraceStore.AccessKey = s.DecryptedSecureJSONData["traceStoreAccessKey"]
	cfg.TraceStore.SecretKey = s.DecryptedSecureJSONData["traceStoreSecretKey"]
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

var validEncrypt = map[string]bool{"": true, "true": true, "strict": true, "disable": true}

// withoutCredentials is a mistyped host as a message may show it: whatever
// stands before its last @ (user:password in a pasted URL) is replaced by
// "…", so a password typed into the host field is never echoed.
func withoutCredentials(host string) string {
	if i := strings.LastIndex(host, "@"); i >= 0 {
		scheme := ""
		if j := strings.Index(host[:i], "://"); j >= 0 {
			scheme = host[:j+3]
		}
		return scheme + "…@" + host[i+1:]
	}
	return host
}

// Validate reports every missing or invalid field, by its JSON name.
func (s Settings) Validate() error {
	var p []string
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	if strings.TrimSpace(s.Host) == "" {
		add("host is missing")
	} else if strings.ContainsAny(s.Host, "/?#@ ;") {
		add("host %q must be a host name or address, without scheme, path or credentials", withoutCredentials(s.Host))
	}
	if s.Port < 0 || s.Port > 65535 {
		add("port %d is outside 1-65535", s.Port)
	}
	p = append(p, s.authProblems()...)
	if !validEncrypt[s.Encrypt] {
		add("encrypt %q must be one of disable, true, strict", s.Encrypt)
	}
	if s.TLSCA != "" && !isPEM(s.TLSCA) {
		if _, err := os.Stat(s.TLSCA); err != nil {
			add("tlsCA is neither PEM text nor a readable file: %v", err)
		}
	}
	if s.ConnectTimeoutSeconds < 0 || s.ConnectTimeoutSeconds > 300 {
		add("connectTimeoutSeconds %d is outside 0-300", s.ConnectTimeoutSeconds)
	}
	if s.MaxConcurrentTraces < 0 || s.MaxConcurrentTraces > MaxConcurrentTracesLimit {
		add("maxConcurrentTraces %d is outside 1-%d", s.MaxConcurrentTraces, MaxConcurrentTracesLimit)
	}
	for _, v := range []struct {
		name string
		d    Duration
	}{{"traceTimeout", s.TraceTimeout}, {"traceQueueTimeout", s.TraceQueueTimeout}} {
		if v.d.Invalid != "" {
			add("%s %q is neither seconds nor a duration such as \"5m\"", v.name, v.d.Invalid)
		}
	}
	if s.TraceTimeout.Duration < 0 || s.TraceTimeout.Duration > 24*time.Hour {
		add("traceTimeout %s is outside 0-24h", s.TraceTimeout.Duration)
	}
	if s.TraceQueueTimeout.Duration < 0 || s.TraceQueueTimeout.Duration > time.Hour {
		add("traceQueueTimeout %s is outside 0-1h", s.TraceQueueTimeout.Duration)
	}
	if s.MaxEvents < 0 || s.MaxEvents > MaxEventsLimit {
		add("maxEvents %d is outside 1-%d", s.MaxEvents, MaxEventsLimit)
	}
	if s.MaxQueryMB < 0 || s.MaxQueryMB > MaxQueryMBLimit {
		add("maxQueryMB %d is outside 1-%d", s.MaxQueryMB, MaxQueryMBLimit)
	}
	for _, u := range s.SymbolServers {
		if v, err := url.Parse(u); err != nil || (v.Scheme != "http" && v.Scheme != "https") || v.Host == "" {
			add("symbolServers entry %q is not an http(s) URL", u)
		}
	}
	if s.SymbolCacheDir != "" && !filepath.IsAbs(s.SymbolCacheDir) {
		add("symbolCacheDir %q must be an absolute path", s.SymbolCacheDir)
	}
	if _, ok := roleRanks[s.MinTraceRole]; !ok && s.MinTraceRole != "" {
		add("minTraceRole %q must be one of Viewer, Editor, Admin", s.MinTraceRole)
	}
	ts := s.TraceStore
	if ts.MaxTraces < 0 || ts.MaxMemoryMB < 0 || ts.MaxAgeHours < 0 || ts.MaxDiskMB < 0 {
		add("traceStore limits must not be negative")
	}
	if ts.MaxBundleMB < 0 || ts.MaxBundleMB > MaxBundleMBLimit {
		add("traceStore.maxBundleMB %d is outside 1-%d", ts.MaxBundleMB, MaxBundleMBLimit)
	}
	if ts.Directory != "" && !filepath.IsAbs(ts.Directory) {
		add("traceStore.directory %q must be an absolute path", ts.Directory)
	}
	p = append(p, ts.bucketProblems()...)
	if len(p) > 0 {
		return &SettingsError{Problems: p}
	}
	return nil
}

// bucketProblems checks traceStore.bucketURL and the S3 keys without
// touching the network (CheckHealth and the first use reach the bucket).
func (ts TraceStoreSettings) bucketProblems() []string {
	var p []string
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	if ts.BucketURL != "" {
		if err := tracestore.CheckBucketURL(ts.BucketURL); err != nil {
			add("traceStore.bucketURL: %v", err)
		}
	}
	if (ts.AccessKey == "") != (ts.SecretKey == "") {
		add("traceStoreAccessKey and traceStoreSecretKey (secure fields) go together: set both or neither")
	}
	if (ts.AccessKey != "" || ts.SecretKey != "") && !strings.HasPrefix(ts.BucketURL, "s3://") {
		add("traceStoreAccessKey and traceStoreSecretKey apply only to an s3:// traceStore.bucketURL")
	}
	return p
}

func (s Settings) authProblems() []string {
	var p []string
	switch s.authType() {
	case AuthSQL:
		if strings.TrimSpace(s.User) == "" {
			p = append(p, "user is missing")
		}
		if s.Password == "" {
			p = append(p, "password is missing (secure field)")
		}
	case AuthWindows:
		if strings.TrimSpace(s.User) == "" && s.KerberosCredentialCache == "" {
			p = append(p, "authType windows needs user (the Kerberos principal) or kerberosCredentialCache")
		}
		if s.Password != "" && (s.KerberosRealm == "" && !strings.Contains(s.User, "@") || s.KerberosConfigFile == "") {
			p = append(p, "authType windows with a password needs kerberosRealm (or user@REALM) and kerberosConfigFile")
		}
		for _, f := range [][2]string{{"kerberosConfigFile", s.KerberosConfigFile}, {"kerberosKeytabFile", s.KerberosKeytabFile},
			{"kerberosCredentialCache", s.KerberosCredentialCache}} {
			if f[1] != "" {
				if _, err := os.Stat(f[1]); err != nil {
					p = append(p, fmt.Sprintf("%s: %v", f[0], err))
				}
			}
		}
	case AuthAzureAD:
		switch s.AzureCredential {
		case "", AzureServicePrincipal:
			if strings.TrimSpace(s.User) == "" {
				p = append(p, "authType azuread (service principal) needs user: the application (client) id")
			}
			if strings.TrimSpace(s.TenantID) == "" {
				p = append(p, "tenantId is missing (azuread service principal)")
			}
			if s.ClientSecret == "" {
				p = append(p, "clientSecret is missing (secure field; azuread service principal)")
			}
		case AzureManagedIdentity:
		default:
			p = append(p, fmt.Sprintf("azureCredential %q must be servicePrincipal or managedIdentity", s.AzureCredential))
		}
	default:
		p = append(p, fmt.Sprintf("authType %q must be one of sql, windows, azuread", s.AuthType))
	}
	return p
}

func (s Settings) authType() string {
	if s.AuthType == "" {
		return AuthSQL
	}
	return s.AuthType
}

func isPEM(s string) bool { return strings.Contains(s, "-----BEGIN ") }

// ConnectTimeout is the configured timeout or the default of 15 seconds.
func (s Settings) ConnectTimeout() time.Duration {
	if s.ConnectTimeoutSeconds == 0 {
		return DefaultConnectTimeout
	}
	return time.Duration(s.ConnectTimeoutSeconds) * time.Second
}

// Limits with defaults applied.
func (s Settings) maxConcurrent() int {
	return cmpOr(s.MaxConcurrentTraces, DefaultMaxConcurrentTraces)
}
func (s Settings) traceTimeout() time.Duration {
	return cmpOr(s.TraceTimeout.Duration, DefaultTraceTimeout)
}
func (s Settings) queueTimeout() time.Duration {
	return cmpOr(s.TraceQueueTimeout.Duration, DefaultQueueTimeout)
}
func (s Settings) maxEvents() int { return cmpOr(s.MaxEvents, tracer.DefaultMaxEvents) }

// queryLimit bounds a query's JSON (maxQueryMB).
func (s Settings) queryLimit() sizelimit.Error {
	return sizelimit.Error{What: "the query's JSON", Limit: int64(cmpOr(s.MaxQueryMB, DefaultMaxQueryMB)) << 20,
		Knob: "the datasource setting maxQueryMB"}
}

// bundleLimit bounds a bundle, decompressed (traceStore.maxBundleMB).
func (ts TraceStoreSettings) bundleLimit() bundle.ReadOptions {
	o := bundle.ReadOptions{MaxBytes: bundle.DefaultMaxBytes, Knob: "the datasource setting traceStore.maxBundleMB"}
	if ts.MaxBundleMB > 0 {
		o.MaxBytes = int64(ts.MaxBundleMB) << 20
	}
	return o
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Policy is what the settings allow a trace to do to the server.
func (s Settings) Policy() tracer.Policy {
	p := tracer.Policy{AllowClearBufferPool: s.AllowBufferPoolClear, Modifications: tracer.ModificationsRefuse}
	if s.AllowModifications {
		p.Modifications = tracer.ModificationsRollback
	}
	return p
}

// DSN builds the go-mssqldb URL for the configured authentication. It
// carries the secret, so it must never be logged; use Redacted.
func (s Settings) DSN() (string, error) {
	port := s.Port
	if port == 0 {
		port = 1433
	}
	q := url.Values{}
	if s.Database != "" {
		q.Set("database", s.Database)
	}
	if s.Encrypt != "" {
		q.Set("encrypt", s.Encrypt)
	}
	if s.TrustServerCertificate {
		q.Set("TrustServerCertificate", "true")
	}
	if s.TLSCA != "" {
		path, err := caFile(s.TLSCA)
		if err != nil {
			return "", err
		}
		q.Set("certificate", path)
	}
	q.Set("dial timeout", strconv.Itoa(int(s.ConnectTimeout()/time.Second)))
	q.Set("connection timeout", strconv.Itoa(int(s.ConnectTimeout()/time.Second)))
	q.Set("app name", "QueryReplay")
	u := url.URL{Scheme: "sqlserver", Host: s.Host + ":" + strconv.Itoa(port)}
	switch s.authType() {
	case AuthSQL:
		u.User = url.UserPassword(s.User, s.Password)
	case AuthWindows:
		// go-mssqldb's krb5 authenticator:
		// https://github.com/microsoft/go-mssqldb#kerberos-active-directory-authentication-outside-windows
		q.Set("authenticator", "krb5")
		setIf(q, "krb5-realm", s.KerberosRealm)
		setIf(q, "krb5-configfile", s.KerberosConfigFile)
		setIf(q, "krb5-keytabfile", s.KerberosKeytabFile)
		setIf(q, "krb5-credcachefile", s.KerberosCredentialCache)
		if s.Password != "" {
			u.User = url.UserPassword(s.User, s.Password)
		} else if s.User != "" {
			u.User = url.User(s.User)
		}
	case AuthAzureAD:
		// go-mssqldb's azuread package, fedauth workflows:
		// https://github.com/microsoft/go-mssqldb#azure-active-directory-authentication
		if s.AzureCredential == AzureManagedIdentity {
			q.Set("fedauth", azuread.ActiveDirectoryManagedIdentity)
			if s.User != "" {
				u.User = url.User(s.User)
			}
		} else {
			q.Set("fedauth", azuread.ActiveDirectoryServicePrincipal)
			u.User = url.UserPassword(s.User+"@"+s.TenantID, s.ClientSecret)
		}
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func setIf(q url.Values, key, v string) {
	if v != "" {
		q.Set(key, v)
	}
}

// Connector builds the driver connector: go-mssqldb's for sql and windows,
// the azuread package's (driver "azuresql") for azuread. A parse error is
// redacted by the DSN's own secrets (tracer.RedactDSNError) before it is
// wrapped.
func (s Settings) Connector() (*mssql.Connector, error) {
	dsn, err := s.DSN()
	if err != nil {
		return nil, err
	}
	return s.connectorFor(dsn)
}

// connectorFor builds the connector of dsn, one of s's DSNs.
func (s Settings) connectorFor(dsn string) (*mssql.Connector, error) {
	if s.authType() == AuthAzureAD {
		c, err := azuread.NewConnector(dsn)
		if err != nil {
			return nil, fmt.Errorf("azuread connector for %s: %w", s.Redacted(), tracer.RedactDSNError(err, dsn))
		}
		return c, nil
	}
	c, err := mssql.NewConnector(dsn)
	if err != nil {
		return nil, fmt.Errorf("connector for %s: %w", s.Redacted(), tracer.RedactDSNError(err, dsn))
	}
	return c, nil
}

// caFile returns the path of a PEM file holding pem: the setting itself
// when it is a path, else a file named by the content's hash in a private
// directory (the driver reads CA certificates only from files).
func caFile(v string) (string, error) {
	if !isPEM(v) {
		return v, nil
	}
	sum := sha256.Sum256([]byte(v))
	dir := filepath.Join(os.TempDir(), "queryreplay-ca")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("tlsCA: %w", err)
	}
	path := filepath.Join(dir, hex.EncodeToString(sum[:8])+".pem")
	if b, err := os.ReadFile(path); err == nil && string(b) == v {
		return path, nil
	}
	tmp, err := os.CreateTemp(dir, ".ca-*")
	if err != nil {
		return "", fmt.Errorf("tlsCA: %w", err)
	}
	if _, err := tmp.WriteString(v); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", fmt.Errorf("tlsCA: %w", err)
	}
	tmp.Close()
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("tlsCA: %w", err)
	}
	return path, nil
}

// symbolCache is the PDB cache directory: symbolCacheDir, else
// <GF_PATHS_DATA>/queryreplay/symbols (Grafana's data path, writable by the
// plugin), else the user cache directory; "" when no symbol server is set
// and no cache is configured (nothing to read or download).
func (s Settings) symbolCache() string {
	if s.SymbolCacheDir != "" {
		return s.SymbolCacheDir
	}
	if len(s.SymbolServers) == 0 {
		return ""
	}
	if d := os.Getenv("GF_PATHS_DATA"); d != "" {
		return filepath.Join(d, "queryreplay", "symbols")
	}
	return "" // the tracer falls back to the user cache directory
}

// Redacted describes the target without secrets: user (a login, Kerberos
// principal or Azure AD client id — none of them secret), host, port,
// database and the authentication type; never the password or client
// secret, which only DSN() carries. Messages that must show a connection
// string use tracer.RedactDSN on it instead.
func (s Settings) Redacted() string {
	port := s.Port
	if port == 0 {
		port = 1433
	}
	return fmt.Sprintf("%s@%s:%d/%s (%s)", s.User, s.Host, port, s.Database, s.authType())
}

// isSettingsError tells whether err came from validation.
func isSettingsError(err error) bool {
	var se *SettingsError
	return errors.As(err, &se)
}

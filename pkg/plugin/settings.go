package plugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// Settings is the datasource configuration a Grafana admin saves: the
// non-secret part arrives as JSONData, the password as secure JSON data.
type Settings struct {
	Host     string `json:"host"`
	Port     int    `json:"port"`
	Database string `json:"database"`
	User     string `json:"user"`
	// Encrypt is go-mssqldb's encrypt parameter: "true", "false", "strict"
	// or "disable". Empty means "true", the driver's safe default.
	Encrypt string `json:"encrypt"`
	// TrustServerCertificate skips certificate validation; only for labs.
	TrustServerCertificate bool `json:"trustServerCertificate"`
	// ConnectTimeoutSeconds bounds dialing and the health check; 0 means 15.
	ConnectTimeoutSeconds int `json:"connectTimeoutSeconds"`

	// Password comes from DecryptedSecureJSONData["password"]; it is never
	// serialised back.
	Password string `json:"-"`
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
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

var validEncrypt = map[string]bool{"": true, "true": true, "false": true, "strict": true, "disable": true}

// Validate reports every missing or invalid field.
func (s Settings) Validate() error {
	var problems []string
	if strings.TrimSpace(s.Host) == "" {
		problems = append(problems, "host is missing")
	} else if strings.ContainsAny(s.Host, "/?#@ ") {
		problems = append(problems, fmt.Sprintf("host %q must be a host name or address, without scheme, path or credentials", s.Host))
	}
	if s.Port < 0 || s.Port > 65535 {
		problems = append(problems, fmt.Sprintf("port %d is outside 1-65535", s.Port))
	}
	if strings.TrimSpace(s.User) == "" {
		problems = append(problems, "user is missing")
	}
	if s.Password == "" {
		problems = append(problems, "password is missing (secure field)")
	}
	if !validEncrypt[s.Encrypt] {
		problems = append(problems, fmt.Sprintf("encrypt %q must be one of true, false, strict, disable", s.Encrypt))
	}
	if s.ConnectTimeoutSeconds < 0 || s.ConnectTimeoutSeconds > 300 {
		problems = append(problems, fmt.Sprintf("connectTimeoutSeconds %d is outside 0-300", s.ConnectTimeoutSeconds))
	}
	if len(problems) > 0 {
		return &SettingsError{Problems: problems}
	}
	return nil
}

// ConnectTimeout is the configured timeout or the default of 15 seconds.
func (s Settings) ConnectTimeout() time.Duration {
	if s.ConnectTimeoutSeconds == 0 {
		return 15 * time.Second
	}
	return time.Duration(s.ConnectTimeoutSeconds) * time.Second
}

// DSN builds the go-mssqldb URL. It carries the password, so it must never
// be logged; use Redacted for messages.
func (s Settings) DSN() string {
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
	q.Set("dial timeout", strconv.Itoa(int(s.ConnectTimeout()/time.Second)))
	q.Set("app name", "QueryReplay")
	u := url.URL{
		Scheme:   "sqlserver",
		User:     url.UserPassword(s.User, s.Password),
		Host:     s.Host + ":" + strconv.Itoa(port),
		RawQuery: q.Encode(),
	}
	return u.String()
}

// Redacted describes the target without the password.
func (s Settings) Redacted() string {
	port := s.Port
	if port == 0 {
		port = 1433
	}
	return fmt.Sprintf("%s@%s:%d/%s", s.User, s.Host, port, s.Database)
}

// isSettingsError tells whether err came from validation.
func isSettingsError(err error) bool {
	var se *SettingsError
	return errors.As(err, &se)
}

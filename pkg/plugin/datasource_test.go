package plugin

import (
	"context"
	"strings"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

func TestLoadSettings(t *testing.T) {
	tests := []struct {
		name     string
		json     string
		password string
		problems []string
	}{
		{"valid", `{"host":"db1","port":1433,"user":"qr","database":"Demo","encrypt":"true"}`, "pw", nil},
		{"empty", `{}`, "", []string{"host is missing", "user is missing", "password is missing"}},
		{"bad json", `{"port":"x"}`, "pw", []string{"jsonData is not valid JSON"}},
		{"bad fields", `{"host":"sqlserver://db1","port":70000,"user":"u","encrypt":"maybe","connectTimeoutSeconds":-1}`, "pw",
			[]string{`host "sqlserver://db1" must be a host name`, "port 70000", `encrypt "maybe"`, "connectTimeoutSeconds -1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadSettings(backend.DataSourceInstanceSettings{
				JSONData:                []byte(tt.json),
				DecryptedSecureJSONData: map[string]string{"password": tt.password},
			})
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
		})
	}
}

func TestDSNCarriesSettingsAndRedactedHidesPassword(t *testing.T) {
	s := Settings{Host: "db1", User: "qr", Password: "s3cret@x/y", Database: "Demo", Encrypt: "disable"}
	dsn := s.DSN()
	for _, want := range []string{"sqlserver://qr:s3cret%40x%2Fy@db1:1433", "database=Demo", "encrypt=disable", "app+name=QueryReplay"} {
		if !strings.Contains(dsn, want) {
			t.Errorf("DSN %q lacks %q", dsn, want)
		}
	}
	if strings.Contains(s.Redacted(), "s3cret") {
		t.Fatalf("Redacted leaks the password: %s", s.Redacted())
	}
}

func TestQueryDataAnswersEveryQuery(t *testing.T) {
	inst, err := NewDatasource(context.Background(), backend.DataSourceInstanceSettings{JSONData: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	ds := inst.(*Datasource)
	resp, err := ds.QueryData(context.Background(), &backend.QueryDataRequest{Queries: []backend.DataQuery{{RefID: "A"}, {RefID: "B"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"A", "B"} {
		r := resp.Responses[ref]
		if r.Error == nil || !strings.Contains(r.Error.Error(), "host is missing") {
			t.Errorf("%s: %v, want the settings problem", ref, r.Error)
		}
		if r.ErrorSource != backend.ErrorSourceDownstream {
			t.Errorf("%s: error source %v", ref, r.ErrorSource)
		}
	}
	good := &Datasource{settings: Settings{Host: "h", User: "u", Password: "p"}}
	resp, _ = good.QueryData(context.Background(), &backend.QueryDataRequest{Queries: []backend.DataQuery{{RefID: "Z"}}})
	if r := resp.Responses["Z"]; r.Status != backend.StatusNotImplemented || r.ErrorSource != backend.ErrorSourcePlugin {
		t.Fatalf("got %+v", r)
	}
}

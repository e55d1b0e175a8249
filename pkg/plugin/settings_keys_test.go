package plugin

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// tsInterfaceKeys returns the property names of one exported interface in
// the config editor's src/datasource/types.ts: the names the editor writes
// into jsonData and secureJsonData.
func tsInterfaceKeys(t *testing.T, src, name string) []string {
	t.Helper()
	start := regexp.MustCompile(`(?m)^export interface ` + name + `\b[^{]*\{`).FindStringIndex(src)
	if start == nil {
		t.Fatalf("src/datasource/types.ts has no interface %s", name)
	}
	body := src[start[1]:]
	end := strings.Index(body, "\n}")
	if end < 0 {
		t.Fatalf("interface %s is not closed", name)
	}
	var keys []string
	for _, m := range regexp.MustCompile(`(?m)^  (\w+)\??:`).FindAllStringSubmatch(body[:end], -1) {
		keys = append(keys, m[1])
	}
	slices.Sort(keys)
	return keys
}

// goJSONKeys returns the JSON names of a settings struct's serialised fields.
func goJSONKeys(v any) []string {
	var keys []string
	rt := reflect.TypeOf(v)
	for i := range rt.NumField() {
		tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if tag != "" && tag != "-" {
			keys = append(keys, tag)
		}
	}
	slices.Sort(keys)
	return keys
}

// TestSettingsKeysMatchTheEditor: the settings the config editor saves
// (src/datasource/types.ts) are exactly the ones LoadSettings reads, so a
// key added on one side only fails here rather than being silently dropped.
func TestSettingsKeysMatchTheEditor(t *testing.T) {
	raw, err := os.ReadFile("../../src/datasource/types.ts")
	if err != nil {
		t.Fatal(err)
	}
	src := string(raw)
	for _, c := range []struct {
		ts  string
		go_ any
	}{
		{"ReplayDataSourceOptions", Settings{}},
		{"TraceStoreSettings", TraceStoreSettings{}},
	} {
		if got, want := tsInterfaceKeys(t, src, c.ts), goJSONKeys(c.go_); !slices.Equal(got, want) {
			t.Errorf("%s keys differ from %T's JSON names:\n ts %q\n go %q", c.ts, c.go_, got, want)
		}
	}
	// Secure keys: each one the editor can set must land in a secret, and
	// every secret must come from one of them.
	secure := tsInterfaceKeys(t, src, "ReplaySecureJsonData")
	in := backend.DataSourceInstanceSettings{DecryptedSecureJSONData: map[string]string{}}
	for _, k := range secure {
		in.DecryptedSecureJSONData[k] = "value-of-" + k
	}
	cfg, _ := LoadSettings(in) // validation problems are beside the point here
	got := []string{cfg.Password, cfg.ClientSecret, cfg.TraceStore.AccessKey, cfg.TraceStore.SecretKey}
	for _, k := range secure {
		if !slices.Contains(got, "value-of-"+k) {
			t.Errorf("secure key %q from the editor is never read by LoadSettings", k)
		}
	}
	for i, v := range got {
		if !strings.HasPrefix(v, "value-of-") {
			t.Errorf("secret %d is read from a key the editor does not write (got %q)", i, v)
		}
	}
}

// TestTraceRolesMatchTheEditor: the roles the config editor offers for
// minTraceRole (types.ts TraceRole) are exactly the ones Validate accepts
// and ranks, in the same order, lowest first.
func TestTraceRolesMatchTheEditor(t *testing.T) {
	raw, err := os.ReadFile("../../src/datasource/types.ts")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^export type TraceRole = ([^;]+);`).FindStringSubmatch(string(raw))
	if m == nil {
		t.Fatal("src/datasource/types.ts has no TraceRole union")
	}
	var ts []string
	for _, v := range regexp.MustCompile(`'(\w+)'`).FindAllStringSubmatch(m[1], -1) {
		ts = append(ts, v[1])
	}
	for i, r := range ts {
		if roleRanks[r] != i+1 {
			t.Errorf("editor role %q is #%d, the backend ranks it %d", r, i+1, roleRanks[r])
		}
		s := Settings{Host: "h", User: "u", Password: "p", MinTraceRole: r}
		if err := s.Validate(); err != nil {
			t.Errorf("minTraceRole %q from the editor is refused: %v", r, err)
		}
	}
	if len(ts) != len(roleRanks) {
		t.Errorf("editor roles %q, backend ranks %v", ts, roleRanks)
	}
	if (Settings{Host: "h", User: "u", Password: "p", MinTraceRole: "Owner"}).Validate() == nil {
		t.Error("minTraceRole Owner was accepted")
	}
}

package viewer

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRequestBodyLimit: a body over the limit, on the resource and query
// endpoints, is refused with 413 naming the limit and its flag and never
// reaches the datasource; one at the limit is forwarded.
func TestRequestBodyLimit(t *testing.T) {
	ds := &fakeDS{}
	v := start(t, Config{Datasource: ds, MaxRequestBytes: 1 << 20, MaxRequestKnob: "--max-bundle-mb"})
	for _, path := range []string{"api/datasources/uid/queryreplay/resources/traces", "api/ds/query"} {
		code, b := post(t, v, v.URL()+path, strings.Repeat(" ", 1<<20+1))
		if code != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "exceeds the limit of 1 MB") ||
			!strings.Contains(string(b), "--max-bundle-mb") {
			t.Errorf("%s, 1 MB + 1 byte: %d %s", path, code, b)
		}
	}
	if len(ds.resources) != 0 || len(ds.queries) != 0 {
		t.Fatalf("an oversized body reached the datasource: %d resources, %d queries", len(ds.resources), len(ds.queries))
	}
	code, _ := post(t, v, v.URL()+"api/datasources/uid/queryreplay/resources/traces/x", strings.Repeat(" ", 1<<20))
	if code != 201 || len(ds.resources) != 1 || len(ds.resources[0].Body) != 1<<20 {
		t.Errorf("a body at the limit: %d, %d forwarded", code, len(ds.resources))
	}
}

// TestBundleFileLimit: a bundle file over the limit fails Start by name
// before it is read.
func TestBundleFileLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(path, make([]byte, 1<<20+1), 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := New(Config{Datasource: &fakeDS{}, Assets: assets, Bundles: []string{path}, MaxRequestBytes: 1 << 20, MaxRequestKnob: "--max-bundle-mb"})
	if err != nil {
		t.Fatal(err)
	}
	err = v.Start(context.Background(), "127.0.0.1:0")
	if err == nil {
		_ = v.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "big.json exceeds the limit of 1 MB") || !strings.Contains(err.Error(), "--max-bundle-mb") {
		t.Fatalf("Start with a bundle file over the limit: %v", err)
	}
}

package viewer

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strings"
	"testing"
)

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// uploadReq is the page's "open a bundle file": the file as it is.
func uploadReq(t *testing.T, v *Server, path, contentType string, body []byte) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, v.URL()+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(TokenHeader, v.Token())
	req.Header.Set("Content-Type", contentType)
	return req
}

// A gzip bundle file goes up as it is, byte for byte, to the datasource's
// upload resource, with its content type; the answer's trace id comes back.
func TestPageUploadsAGzipBundle(t *testing.T) {
	ds := &fakeDS{}
	v := start(t, Config{Datasource: ds})
	body := gzipped(t, `{"version":1}`)
	code, _, got := send(t, uploadReq(t, v, "api/datasources/uid/queryreplay/resources/traces", "application/gzip", body))
	if code != 200 || !strings.Contains(got, `"traceId"`) {
		t.Fatalf("gzip upload: %d %s", code, got)
	}
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if len(ds.resources) != 1 || !bytes.Equal(ds.resources[0].Body, body) ||
		ds.resources[0].Headers["Content-Type"][0] != "application/gzip" || ds.resources[0].Path != "traces" {
		t.Fatalf("forwarded: %+v", ds.resources)
	}
}

// gzip is accepted only where a bundle file goes: every other write,
// including the query endpoint and other resources, still needs JSON; and
// the upload keeps every other guard and the body bound.
func TestGzipOnlyForTheUploadAndStillGuarded(t *testing.T) {
	ds := &fakeDS{}
	v := start(t, Config{Datasource: ds, MaxRequestBytes: 1 << 16, MaxRequestKnob: "--max-bundle-mb"})
	body := gzipped(t, `{}`)
	for _, path := range []string{"api/ds/query", "api/datasources/uid/queryreplay/resources/traces/abc", "api/datasources/uid/queryreplay/resources/databases"} {
		code, _, got := send(t, uploadReq(t, v, path, "application/gzip", body))
		if code != http.StatusForbidden || !strings.Contains(got, whyContentType) {
			t.Errorf("gzip to %s: %d %s", path, code, got)
		}
	}
	upload := "api/datasources/uid/queryreplay/resources/traces"
	for name, edit := range map[string]func(*http.Request){
		"no token":          func(r *http.Request) { r.Header.Del(TokenHeader) },
		"cross-site":        func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") },
		"rebinding host":    func(r *http.Request) { r.Host = "evil.example" },
		"octet-stream":      func(r *http.Request) { r.Header.Set("Content-Type", "application/octet-stream") },
		"text/plain (CSRF)": func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") },
	} {
		req := uploadReq(t, v, upload, "application/gzip", body)
		edit(req)
		if code, _, got := send(t, req); code != http.StatusForbidden {
			t.Errorf("upload, %s: %d %s", name, code, got)
		}
	}
	code, _, got := send(t, uploadReq(t, v, upload, "application/gzip", make([]byte, 1<<16+1)))
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(got, "--max-bundle-mb") {
		t.Errorf("upload over the bound: %d %s", code, got)
	}
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if len(ds.resources) != 0 {
		t.Fatalf("refused uploads reached the datasource: %d", len(ds.resources))
	}
}

// Package s3fake runs a loopback S3 server for tests: gofakes3 (an
// in-memory implementation of the S3 REST protocol) behind httptest on
// 127.0.0.1, with a gate that refuses chosen access keys the way S3 does
// (403 AccessDenied), so that the trace store's S3 path is tested over the
// real protocol and the real AWS SDK.
//
// What it must not do: be imported by production code (tests only), or
// listen anywhere but the loopback interface.
package s3fake

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Static credentials the tests use. Denied is refused on every request.
const (
	AccessKey = "AKIAQUERYREPLAYTEST"
	SecretKey = "queryreplay-test-secret-key-0123456789"
	Denied    = "AKIAQUERYREPLAYDENIED"
)

// Server is one loopback S3 endpoint.
type Server struct {
	http    *httptest.Server
	Backend *s3mem.Backend

	mu   sync.Mutex
	keys map[string]int // requests per access key
}

// Start serves an S3 endpoint with the given buckets until the test ends,
// after Isolate.
func Start(t testing.TB, buckets ...string) *Server {
	t.Helper()
	Isolate(t)
	s := &Server{Backend: s3mem.New(), keys: map[string]int{}}
	for _, b := range buckets {
		if err := s.Backend.CreateBucket(b); err != nil {
			t.Fatalf("create bucket %s: %v", b, err)
		}
	}
	fake := gofakes3.New(s.Backend)
	s.http = httptest.NewServer(s.gate(fake.Server()))
	t.Cleanup(s.Close)
	return s
}

// Isolate keeps the AWS SDK, for the rest of the test, away from the
// host's AWS configuration and credentials and from the instance metadata
// service, so that nothing leaves loopback.
func Isolate(t testing.TB) {
	t.Helper()
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent/queryreplay-test")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/queryreplay-test")
	t.Setenv("AWS_REGION", "us-east-1")
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"} {
		t.Setenv(k, "")
	}
}

// gate answers requests signed with Denied as S3 does for a key without
// rights, and counts requests per key.
func (s *Server) gate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := accessKeyOf(r.Header.Get("Authorization"))
		s.mu.Lock()
		s.keys[key]++
		s.mu.Unlock()
		if key == Denied {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// accessKeyOf reads the key id of a SigV4 Authorization header
// ("AWS4-HMAC-SHA256 Credential=KEY/date/region/s3/aws4_request, ...").
func accessKeyOf(auth string) string {
	_, rest, ok := strings.Cut(auth, "Credential=")
	if !ok {
		return ""
	}
	key, _, _ := strings.Cut(rest, "/")
	return key
}

// Requests counts the requests signed with an access key.
func (s *Server) Requests(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[key]
}

// Endpoint is the server's base URL (http://127.0.0.1:port).
func (s *Server) Endpoint() string { return s.http.URL }

// URL is an s3blob URL for bucket on this server: custom endpoint,
// path-style addressing, plain HTTP.
func (s *Server) URL(bucket string) string {
	return "s3://" + bucket + "?endpoint=" + url.QueryEscape(s.http.URL) + "&use_path_style=true&disable_https=true&region=us-east-1"
}

// Close stops the server (a bucket that went away); idempotent.
func (s *Server) Close() {
	s.http.CloseClientConnections()
	s.http.Close()
}

// Keys lists every object key in a bucket, sorted, read from the fake's
// memory rather than over the protocol.
func (s *Server) Keys(bucket string) ([]string, error) {
	list, err := s.Backend.ListBucket(bucket, nil, gofakes3.ListBucketPage{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range list.Contents {
		out = append(out, c.Key)
	}
	slices.Sort(out)
	return out, nil
}

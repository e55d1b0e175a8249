package tracestore

import (
	"errors"
	"net"
	neturl "net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gocloud.dev/gcerrors"

	"github.com/queryreplay/queryreplay/internal/s3fake"
)

func s3Store(t *testing.T, url string, key string, o Options) *Store {
	t.Helper()
	b, err := OpenBucket(ctx, url, BucketOptions{Prefix: "ds-uid", AccessKeyID: key, SecretAccessKey: s3fake.SecretKey, Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(b, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// objectKeys lists what is really in the fake bucket.
func objectKeys(t *testing.T, srv *s3fake.Server) []string {
	t.Helper()
	keys, err := srv.Keys("traces")
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func TestS3ReplicasShareABucket(t *testing.T) {
	srv := s3fake.Start(t, "traces")
	one := s3Store(t, srv.URL("traces"), s3fake.AccessKey, Options{})
	two := s3Store(t, srv.URL("traces"), s3fake.AccessKey, Options{})
	if err := one.Check(ctx); err != nil {
		t.Fatalf("check: %v", err)
	}
	e, err := one.Put(ctx, testBundle("SELECT 's3'", 9))
	if err != nil {
		t.Fatal(err)
	}
	if keys := objectKeys(t, srv); !slices.Equal(keys, []string{"ds-uid/" + e.ID + bundleSuffix, "ds-uid/" + e.ID + infoSuffix}) {
		t.Fatalf("bucket holds %v (the health probe must be gone, the trace under the prefix)", keys)
	}
	got, err := two.Get(ctx, e.ID) // the other replica loads it over S3
	if err != nil || got.Bundle.SQL != "SELECT 's3'" || len(got.Bundle.Trace.Lanes.Read) != 9 {
		t.Fatalf("replica get: %+v, %v", got, err)
	}
	list, err := two.List(ctx)
	if err != nil || len(list) != 1 || list[0].ID != e.ID || list[0].Events != 9 || list[0].Statement != "SELECT 's3'" {
		t.Fatalf("replica list = %+v, %v", list, err)
	}
	if srv.Requests(s3fake.AccessKey) == 0 {
		t.Fatal("the static access key was not used to sign the requests")
	}
	// the info files are read once: listing again is one request
	before := srv.Requests(s3fake.AccessKey)
	if _, err := two.List(ctx); err != nil {
		t.Fatal(err)
	}
	if n := srv.Requests(s3fake.AccessKey) - before; n != 1 {
		t.Errorf("a second listing made %d requests, want 1 (ListObjectsV2)", n)
	}
	if err := two.Delete(ctx, e.ID); err != nil {
		t.Fatal(err)
	}
	if keys := objectKeys(t, srv); len(keys) != 0 {
		t.Fatalf("after delete the bucket holds %v", keys)
	}
	if _, err := one.Bundle(ctx, e.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("bundle after the other replica deleted it: %v", err)
	}
}

func TestDeletedOnAnotherReplicaLeavesMemory(t *testing.T) {
	srv := s3fake.Start(t, "traces")
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	one := s3Store(t, srv.URL("traces"), s3fake.AccessKey, Options{Now: clock, Revalidate: time.Minute})
	two := s3Store(t, srv.URL("traces"), s3fake.AccessKey, Options{Now: clock})
	e, err := one.Put(ctx, testBundle("SELECT 1", 3))
	if err != nil {
		t.Fatal(err)
	}
	if err := two.Delete(ctx, e.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := one.Get(ctx, e.ID); err != nil {
		t.Fatalf("within Revalidate the cached trace is served: %v", err)
	}
	now = now.Add(2 * time.Minute)
	if _, err := one.Get(ctx, e.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after Revalidate a trace deleted elsewhere must be gone: %v", err)
	}
	if _, n := one.MemoryBytes(); n != 0 {
		t.Fatalf("%d traces still in memory", n)
	}
}

func TestS3RetentionAndRestart(t *testing.T) {
	srv := s3fake.Start(t, "traces")
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	probe := s3Store(t, srv.URL("traces"), s3fake.AccessKey, Options{MaxAge: -1, MaxDiskBytes: -1, Now: clock})
	p, err := probe.Put(ctx, testBundle("size", 10))
	if err != nil {
		t.Fatal(err)
	}
	size := p.Info.Bytes
	if err := probe.Delete(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	s := s3Store(t, srv.URL("traces"), s3fake.AccessKey, Options{MaxAge: time.Hour, MaxDiskBytes: 2*size + size/2, Now: clock})
	old, err := s.Put(ctx, testBundle("old", 10))
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Hour) // old is now past MaxAge
	var fresh []string
	for i := 0; i < 3; i++ {
		now = now.Add(time.Minute)
		e, err := s.Put(ctx, testBundle("fresh", 10)) // each Put enforces retention
		if err != nil {
			t.Fatal(err)
		}
		fresh = append(fresh, e.ID)
	}
	want := []string{}
	for _, id := range fresh[1:] {
		want = append(want, "ds-uid/"+id+bundleSuffix, "ds-uid/"+id+infoSuffix)
	}
	slices.Sort(want)
	if keys := objectKeys(t, srv); !slices.Equal(keys, want) {
		t.Fatalf("after retention the bucket holds %v, want the two newest (%v); old was %s", keys, fresh[1:], old.ID)
	}
	// restart: a new process on the same bucket sees what was kept
	s.Close()
	again := s3Store(t, srv.URL("traces"), s3fake.AccessKey, Options{MaxAge: -1, MaxDiskBytes: -1, Now: clock})
	list, err := again.List(ctx)
	if err != nil || len(list) != 2 || list[0].ID != fresh[2] || list[1].ID != fresh[1] {
		t.Fatalf("after restart: %+v, %v", list, err)
	}
	if e, err := again.Get(ctx, fresh[1]); err != nil || len(e.Bundle.Trace.Lanes.Read) != 10 {
		t.Fatalf("after restart get: %v", err)
	}
}

func TestS3ErrorsNameTheProblem(t *testing.T) {
	srv := s3fake.Start(t, "traces")
	denied := s3Store(t, srv.URL("traces"), s3fake.Denied, Options{})
	err := denied.Check(ctx)
	if err == nil || !strings.Contains(err.Error(), "permission denied") || gcerrors.Code(err) != gcerrors.PermissionDenied {
		t.Fatalf("denied check: %v", err)
	}
	if _, err := denied.Put(ctx, testBundle("x", 1)); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("denied put: %v", err)
	}
	missing := s3Store(t, srv.URL("nosuchbucket"), s3fake.AccessKey, Options{})
	if err := missing.Check(ctx); err == nil || !strings.Contains(err.Error(), "trace bucket s3://nosuchbucket") ||
		!strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("missing bucket: %v", err)
	}
	for _, err := range []error{denied.Check(ctx), missing.Check(ctx)} {
		t.Log(err)
		if strings.Contains(err.Error(), s3fake.SecretKey) {
			t.Fatalf("the secret key is in %q", err)
		}
	}

	// the bucket goes away mid-run: a bounded, clear error
	s := s3Store(t, srv.URL("traces"), s3fake.AccessKey, Options{MaxTraces: 1})
	a, err := s.Put(ctx, testBundle("a", 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, testBundle("b", 1)); err != nil { // evicts a from memory
		t.Fatal(err)
	}
	srv.Close()
	start := time.Now()
	_, err = s.Get(ctx, a.ID)
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("get took %s with the endpoint gone", took)
	}
	if err == nil || errors.Is(err, ErrNotFound) || !(strings.Contains(err.Error(), "cannot reach trace bucket") ||
		strings.Contains(err.Error(), "did not answer within")) {
		t.Fatalf("get with the endpoint gone: %v", err)
	}
	t.Log(err)
	if err := s.Check(ctx); err == nil {
		t.Fatal("check passed with the endpoint gone")
	}
}

// An endpoint that accepts connections and never answers: every
// operation ends at the bucket timeout with a message saying so.
func TestS3SilentEndpointTimesOut(t *testing.T) {
	s3fake.Isolate(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}()
	url := "s3://traces?endpoint=" + neturl.QueryEscape("http://"+ln.Addr().String()) + "&use_path_style=true&disable_https=true&region=us-east-1"
	b, err := OpenBucket(ctx, url, BucketOptions{Prefix: "p", AccessKeyID: s3fake.AccessKey, SecretAccessKey: s3fake.SecretKey, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	start := time.Now()
	err = b.Check(ctx)
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("check took %s against a silent endpoint", took)
	}
	if err == nil || !strings.Contains(err.Error(), "did not answer within 1s (while listing the traces)") {
		t.Fatalf("check against a silent endpoint: %v", err)
	}
}

func TestBucketURLsAndRedaction(t *testing.T) {
	for url, want := range map[string]string{
		"ftp://host/x":        `scheme "ftp" is not supported: use s3://, gs://, azblob://, file:// or mem://`,
		"/var/lib/traces":     `scheme "" is not supported`,
		"s3://?region=eu":     "names no bucket",
		"s3://b\x7f":          "is not a valid URL",
		"gs://b?sig=SECRET1x": "", // accepted
	} {
		err := CheckBucketURL(url)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: %v, want %q", url, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "\x7f") {
			t.Errorf("%q: the URL is echoed in %v", url, err)
		}
	}
	if _, err := OpenBucket(ctx, "gs://b", BucketOptions{AccessKeyID: "k", SecretAccessKey: "s"}); err == nil ||
		!strings.Contains(err.Error(), "not s3://") {
		t.Errorf("an S3 key with gs://: %v", err)
	}
	if _, err := OpenBucket(ctx, "s3://b", BucketOptions{AccessKeyID: "k"}); err == nil || !strings.Contains(err.Error(), "needs its secret key") {
		t.Errorf("a key without secret: %v", err)
	}
	if _, err := OpenBucket(ctx, "s3://b?profile=x", BucketOptions{AccessKeyID: "k", SecretAccessKey: "s"}); err == nil ||
		!strings.Contains(err.Error(), "conflicts with the S3 access key") {
		t.Errorf("profile and key: %v", err)
	}
	got := RedactBucketURL("azblob://c?storage_account=acct&sig=TOPSECRET&se=2027")
	if strings.Contains(got, "TOPSECRET") || !strings.Contains(got, "storage_account=acct") {
		t.Errorf("redacted: %s", got)
	}
	if got := RedactBucketURL("s3://user:pw@b?region=eu-west-1"); strings.Contains(got, "pw") || !strings.Contains(got, "region=eu-west-1") {
		t.Errorf("redacted: %s", got)
	}
}

// TestGCSAndAzureURLsOpen: the gs:// and azblob:// drivers are linked and
// accept their URLs without touching the network (no emulator or live
// service here: they are not tested against one).
func TestGCSAndAzureURLsOpen(t *testing.T) {
	// gcsblob's default opener looks for Application Default Credentials,
	// which may ask the GCE metadata server; with an emulator host set it
	// uses placeholder credentials and dials nothing until used.
	t.Setenv("STORAGE_EMULATOR_HOST", "127.0.0.1:1")
	for _, url := range []string{"gs://queryreplay-traces", "azblob://queryreplay-traces?storage_account=queryreplay"} {
		b, err := OpenBucket(ctx, url, BucketOptions{Prefix: "uid"})
		if err != nil {
			t.Errorf("%s: %v", url, err)
			continue
		}
		if !strings.Contains(b.String(), url) {
			t.Errorf("%s: named %q", url, b.String())
		}
		b.Close()
	}
}

package plugin

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/queryreplay/queryreplay/internal/s3fake"
)

// bucketDatasource is a datasource whose trace store is an S3 bucket on
// the loopback fake, with the static keys in the secure fields.
func bucketDatasource(t *testing.T, f *fixture, uid, bucketURL, key string) *Datasource {
	t.Helper()
	s := f.settings(t, uid, map[string]any{"traceStore": map[string]any{"bucketURL": bucketURL}})
	s.DecryptedSecureJSONData["traceStoreAccessKey"] = key
	s.DecryptedSecureJSONData["traceStoreSecretKey"] = s3fake.SecretKey
	return openDatasource(t, s)
}

func health(t *testing.T, d *Datasource) (*backend.CheckHealthResult, Health) {
	t.Helper()
	r, err := d.CheckHealth(bg, &backend.CheckHealthRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var h Health
	if err := json.Unmarshal(r.JSONDetails, &h); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{s3fake.SecretKey, s3fake.AccessKey, s3fake.Denied} {
		if strings.Contains(r.Message, secret) || strings.Contains(string(r.JSONDetails), secret) {
			t.Fatalf("health leaks a credential: %s", r.JSONDetails)
		}
	}
	return r, h
}

// Two Grafana replicas share one S3 bucket: a trace run on one is viewed
// (and zoomed) on the other, listed and deleted through either.
func TestHAReplicasShareAnS3Bucket(t *testing.T) {
	f := startStandin(t)
	srv := s3fake.Start(t, "traces")
	one := bucketDatasource(t, f, "shared", srv.URL("traces"), s3fake.AccessKey)
	two := bucketDatasource(t, f, "shared", srv.URL("traces"), s3fake.AccessKey)
	r, h := health(t, one)
	if r.Status != backend.HealthStatusOk || !strings.Contains(h.TraceStore, "bucket s3://traces") || h.TraceStoreError != "" {
		t.Fatalf("health: %s / %+v", r.Message, h)
	}

	id := traceIDOf(t, ok(t, run(t, one, bg, query("A", map[string]any{"sql": hashJoinSQL}))["A"]))
	if keys, _ := srv.Keys("traces"); len(keys) != 2 || !strings.HasPrefix(keys[0], "shared/"+id) {
		t.Fatalf("bucket holds %v", keys)
	}
	vs := ok(t, run(t, two, bg, query("V", map[string]any{"queryType": "view", "traceId": id, "maxDataPoints": 100}))["V"])
	if traceIDOf(t, vs) != id {
		t.Fatal("replica two served another trace")
	}
	zoom := ok(t, run(t, two, bg, query("Z", map[string]any{"queryType": "view", "traceId": id,
		"window": map[string]any{"fromUs": 0, "toUs": 1}}))["Z"])
	if traceIDOf(t, zoom) != id {
		t.Fatal("replica two's zoom served another trace")
	}

	status, body, _ := call(t, two, http.MethodGet, "traces", nil)
	var list []map[string]any
	if status != 200 || json.Unmarshal(body, &list) != nil || len(list) != 1 || list[0]["traceId"] != id || list[0]["statement"] != hashJoinSQL {
		t.Fatalf("list on replica two: %d %s", status, body)
	}
	if status, _, _ = call(t, two, http.MethodDelete, "traces/"+id, nil); status != 204 {
		t.Fatalf("delete on replica two: %d", status)
	}
	if keys, _ := srv.Keys("traces"); len(keys) != 0 {
		t.Fatalf("after delete the bucket holds %v", keys)
	}
	if status, _, _ = call(t, one, http.MethodGet, "traces/"+id+"/bundle", nil); status != 404 {
		t.Errorf("download on replica one after the delete: %d", status)
	}
	status, body, _ = call(t, one, http.MethodGet, "traces", nil)
	if status != 200 || strings.TrimSpace(string(body)) != "[]" {
		t.Errorf("list on replica one after the delete: %d %s", status, body)
	}
}

func TestTraceStoreBucketErrors(t *testing.T) {
	f := startStandin(t)
	srv := s3fake.Start(t, "traces")

	denied := bucketDatasource(t, f, "denied", srv.URL("traces"), s3fake.Denied)
	r, h := health(t, denied)
	if r.Status != backend.HealthStatusError || !strings.Contains(r.Message, "the trace store is not usable") ||
		!strings.Contains(h.TraceStoreError, "permission denied") {
		t.Errorf("health with a denied key: %s", r.Message)
	}
	fails(t, run(t, denied, bg, query("A", map[string]any{"sql": hashJoinSQL}))["A"], backend.StatusBadGateway, backend.ErrorSourceDownstream,
		"the trace ran but could not be stored", "permission denied")

	missing := bucketDatasource(t, f, "missing", srv.URL("nosuchbucket"), s3fake.AccessKey)
	if r, h := health(t, missing); r.Status != backend.HealthStatusError || !strings.Contains(h.TraceStoreError, "does not exist") {
		t.Errorf("health with a missing bucket: %s", r.Message)
	}

	bad := f.settings(t, "bad", map[string]any{"traceStore": map[string]any{"bucketURL": "ftp://traces"}})
	bad.DecryptedSecureJSONData["traceStoreAccessKey"] = s3fake.AccessKey
	badDS := openDatasource(t, bad)
	fails(t, run(t, badDS, bg, query("A", map[string]any{"sql": "SELECT 1"}))["A"], backend.StatusBadRequest, backend.ErrorSourceDownstream,
		`traceStore.bucketURL: the bucket URL scheme "ftp" is not supported`, "go together", "apply only to an s3://")

	// the endpoint goes away mid-run: a clear error, within bounds
	one := bucketDatasource(t, f, "gone", srv.URL("traces"), s3fake.AccessKey)
	id := traceIDOf(t, ok(t, run(t, one, bg, query("A", map[string]any{"sql": hashJoinSQL}))["A"]))
	later := bucketDatasource(t, f, "gone", srv.URL("traces"), s3fake.AccessKey) // has nothing in memory
	srv.Close()
	start := time.Now()
	fails(t, run(t, later, bg, query("V", map[string]any{"queryType": "view", "traceId": id}))["V"], backend.StatusBadGateway,
		backend.ErrorSourceDownstream, "cannot reach trace bucket s3://traces")
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the view took %s with the bucket gone", took)
	}
	ok(t, run(t, one, bg, query("V", map[string]any{"queryType": "view", "traceId": id}))["V"]) // still in one's memory
	if r, h := health(t, later); r.Status != backend.HealthStatusError || !strings.Contains(h.TraceStoreError, "cannot reach trace bucket") {
		t.Errorf("health with the bucket gone: %s", r.Message)
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/queryreplay/queryreplay/internal/s3fake"
)

// Two plugin processes — two Grafana replicas — keep their traces in one
// S3 bucket (the loopback fake): a trace run through one is viewed through
// the other, so the binary really links s3blob and the credentials travel
// in the secure settings.
func TestBinaryReplicasShareAnS3Bucket(t *testing.T) {
	host, port := startStandin(t)
	s3 := s3fake.Start(t, "traces") // before the hosts: they inherit its AWS_* environment
	one, two := startHost(t), startHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	settings := func() backend.PluginContext {
		p := pluginContext(fmt.Sprintf(`{"host":%q,"port":%s,"user":"sa","database":"QueryReplayDemo","encrypt":"disable","traceStore":{"bucketURL":%q}}`,
			host, port, s3.URL("traces")), map[string]string{"password": "QueryReplay-Standin1",
			"traceStoreAccessKey": s3fake.AccessKey, "traceStoreSecretKey": s3fake.SecretKey})
		p.DataSourceInstanceSettings.UID = "replicated"
		return p
	}
	pOne, pTwo := settings(), settings()

	health, err := one.CheckHealth(ctx, pOne)
	if err != nil || health.Status != backend.HealthStatusOk || !strings.Contains(string(health.JSONDetails), "bucket s3://traces") {
		t.Fatalf("health: %v %+v", err, health)
	}
	if strings.Contains(string(health.JSONDetails), s3fake.SecretKey) || strings.Contains(health.Message, s3fake.SecretKey) {
		t.Fatal("health leaks the S3 secret key")
	}
	const sql = "SELECT c.Name, o.OrderID FROM dbo.Customers AS c JOIN dbo.Orders AS o ON o.CustomerID = c.CustomerID WHERE c.Region = N'West'"
	resp, err := one.QueryData(ctx, &backend.QueryDataRequest{PluginContext: pOne, Queries: []backend.DataQuery{
		{RefID: "T", QueryType: "trace", JSON: []byte(`{"queryType":"trace","run":"` + runRequest() + `","sql":"` + sql + `"}`)},
	}})
	if err != nil || resp.Responses["T"].Error != nil {
		t.Fatalf("trace through replica one: %v %v", err, resp.Responses["T"].Error)
	}
	var meta map[string]any
	b, _ := json.Marshal(resp.Responses["T"].Frames[0].Meta.Custom)
	_ = json.Unmarshal(b, &meta)
	id, _ := meta["traceId"].(string)
	if keys, _ := s3.Keys("traces"); len(keys) != 2 || !strings.HasPrefix(keys[0], "replicated/"+id) {
		t.Fatalf("the bucket holds %v", keys)
	}

	resp, err = two.QueryData(ctx, &backend.QueryDataRequest{PluginContext: pTwo, Queries: []backend.DataQuery{
		{RefID: "V", QueryType: "view", MaxDataPoints: 10, JSON: []byte(`{"queryType":"view","traceId":"` + id + `"}`)},
	}})
	if err != nil || resp.Responses["V"].Error != nil {
		t.Fatalf("view through replica two: %v %v", err, resp.Responses["V"].Error)
	}
	if l := findFrame(resp.Responses["V"].Frames, "lane_lock"); l == nil || l.Rows() == 0 {
		t.Fatal("replica two's view has no locks")
	}
	res, err := two.CallResource(ctx, &backend.CallResourceRequest{PluginContext: pTwo, Method: "DELETE", Path: "traces/" + id, URL: "traces/" + id})
	if err != nil || res.Status != 204 {
		t.Fatalf("delete through replica two: %v %+v", err, res)
	}
	if keys, _ := s3.Keys("traces"); len(keys) != 0 {
		t.Fatalf("after the delete the bucket holds %v", keys)
	}
}

package plugin

import (
	"context"
	"strings"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/log"
)

// A query that panics (here: a datasource built without its trace store)
// fails alone with an error naming the bug; the process, and the other
// queries of the same request, go on.
func TestAQueryThatPanicsFailsAlone(t *testing.T) {
	d := &Datasource{log: log.DefaultLogger}
	req := &backend.QueryDataRequest{Queries: []backend.DataQuery{
		{RefID: "A", QueryType: "bundle", JSON: []byte(`{"queryType":"bundle","traceId":"0190a1b2c3d47e5f8a9b0c1d2e3f4a5b"}`)},
		{RefID: "B", QueryType: "nosuchtype", JSON: []byte(`{"queryType":"nosuchtype"}`)},
	}}
	resp, err := d.QueryData(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	a, b := resp.Responses["A"], resp.Responses["B"]
	if a.Error == nil || !strings.Contains(a.Error.Error(), "failed inside the datasource") || a.Status != backend.StatusInternal {
		t.Errorf("A: %v (status %d)", a.Error, a.Status)
	}
	if b.Error == nil || strings.Contains(b.Error.Error(), "failed inside the datasource") {
		t.Errorf("B should fail on its own terms: %v", b.Error)
	}
}

package plugin

import (
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/queryreplay/queryreplay/pkg/frames"
)

func TestViewWindow(t *testing.T) {
	zero := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	span := traceSpan{zero: zero, start: 0, end: 10_000} // a 10 ms trace
	at := func(us int64) time.Time { return zero.Add(time.Duration(us) * time.Microsecond) }
	cases := []struct {
		name string
		m    Query
		want *frames.Window
	}{
		{"explicit window wins", Query{Window: &frames.Window{FromUs: 5, ToUs: 6}, TimeRange: backend.TimeRange{From: at(1), To: at(2)}}, &frames.Window{FromUs: 5, ToUs: 6}},
		{"time range inside the trace: a zoom", Query{TimeRange: backend.TimeRange{From: at(2000), To: at(3000)}}, &frames.Window{FromUs: 2000, ToUs: 3000}},
		{"time range overlapping the end is clipped", Query{TimeRange: backend.TimeRange{From: at(9000), To: at(20_000)}}, &frames.Window{FromUs: 9000, ToUs: 10_000}},
		{"time range covering the trace: all", Query{TimeRange: backend.TimeRange{From: zero.Add(-time.Hour), To: zero.Add(time.Hour)}}, nil},
		{"time range elsewhere (yesterday's trace, last hour): all", Query{TimeRange: backend.TimeRange{From: zero.Add(time.Hour), To: zero.Add(2 * time.Hour)}}, nil},
		{"no time range: all", Query{}, nil},
	}
	for _, c := range cases {
		got := c.m.viewWindow(span)
		if (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestTraceOptionsStayWithinTheSettings(t *testing.T) {
	s := Settings{TraceTimeout: Duration{Duration: time.Minute}, MaxEvents: 1000}
	o, err := Query{SQL: "SELECT 1", Options: QueryOptions{TimeoutSeconds: 3600, MaxEvents: 5000, Events: []string{"locks", "fileIO"}}}.traceOptions(s)
	if err != nil {
		t.Fatal(err)
	}
	if o.Timeout != time.Minute || o.MaxEvents != 1000 || !o.Events.Locks || !o.Events.FileIO || o.Events.Waits {
		t.Fatalf("options = %+v", o)
	}
	o, _ = Query{SQL: "SELECT 1", Options: QueryOptions{TimeoutSeconds: 2, MaxEvents: 10}}.traceOptions(s)
	if o.Timeout != 2*time.Second || o.MaxEvents != 10 || !o.Events.Waits {
		t.Fatalf("options = %+v, want the query's smaller limits and every event group", o)
	}
	if _, err := (Query{SQL: "SELECT 1", Options: QueryOptions{TimeoutSeconds: -1}}).traceOptions(s); err == nil {
		t.Fatal("a negative timeout was accepted")
	}
}

package plugin

import (
	"fmt"
	"strings"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// The event cap (issue 15, Limits): a trace whose options.maxEvents stops
// the read-back says so in the trace frame (field truncated, meta.custom
// truncated) and in a warning notice, as docs/frames.md §1 and §3.1
// document; a trace under the cap says nothing of the kind.

// traceSummary is what the truncation contract is about, read from a
// response's trace frame.
type traceSummary struct {
	events       int64
	truncated    bool // the frame's truncated field
	metaTrunc    any  // meta.custom.truncated
	notices      []data.Notice
	countsEvents any            // meta.custom.counts.events
	options      map[string]any // meta.custom.options
}

func summarize(t *testing.T, fs data.Frames) traceSummary {
	t.Helper()
	tf := frameNamed(t, fs, "trace")
	var s traceSummary
	ev, _ := tf.FieldByName("events")
	tr, _ := tf.FieldByName("truncated")
	if ev == nil || tr == nil || tf.Rows() != 1 {
		t.Fatalf("trace frame lacks events/truncated or has %d rows", tf.Rows())
	}
	s.events, _ = ev.At(0).(int64)
	s.truncated, _ = tr.At(0).(bool)
	c := custom(t, tf)
	s.metaTrunc = c["truncated"]
	s.options, _ = c["options"].(map[string]any)
	if counts, ok := c["counts"].(map[string]any); ok {
		s.countsEvents = counts["events"]
	}
	s.notices = tf.Meta.Notices
	return s
}

// truncationNotice returns the notice that reports the cap, if any.
func truncationNotice(ns []data.Notice) (data.Notice, bool) {
	for _, n := range ns {
		if strings.Contains(n.Text, "truncated") {
			return n, true
		}
	}
	return data.Notice{}, false
}

func traceQuery(refID string, maxEvents int) map[string]any {
	opts := map[string]any{"clearBufferPool": true, "disableReadAhead": true}
	if maxEvents > 0 {
		opts["maxEvents"] = maxEvents
	}
	return map[string]any{"queryType": "trace", "sql": hashJoinSQL, "maxDataPoints": 100000, "options": opts}
}

func TestTraceTruncatedAtMaxEvents(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "trunc", map[string]any{"allowBufferPoolClear": true})

	// the same trace without a cap: how many events it has, and that an
	// untruncated trace reports nothing
	full := summarize(t, ok(t, run(t, d, bg, query("F", traceQuery("F", 0)))["F"]))
	if full.truncated || full.metaTrunc != false {
		t.Fatalf("the uncapped trace says truncated (field %v, meta %v)", full.truncated, full.metaTrunc)
	}
	if n, found := truncationNotice(full.notices); found {
		t.Errorf("the uncapped trace has a truncation notice: %q", n.Text)
	}
	if full.events < 40 {
		t.Fatalf("the uncapped trace has %d events; the test needs more to cap", full.events)
	}

	limit := int(full.events / 4)
	fs := ok(t, run(t, d, bg, query("T", traceQuery("T", limit)))["T"])
	got := summarize(t, fs)
	if !got.truncated || got.metaTrunc != true {
		t.Errorf("capped at %d of %d events: truncated field %v, meta.custom.truncated %v; want true", limit, full.events, got.truncated, got.metaTrunc)
	}
	if got.events != int64(limit) {
		t.Errorf("the capped trace read %d events, want the cap %d", got.events, limit)
	}
	if got.countsEvents != float64(limit) {
		t.Errorf("meta.custom.counts.events = %v, want %d", got.countsEvents, limit)
	}
	// the cap is said once, and the options say the limits the run had
	capNotices := 0
	for _, n := range got.notices {
		if strings.Contains(n.Text, "truncated") || strings.Contains(n.Text, "events were read") {
			capNotices++
		}
	}
	if capNotices != 1 {
		t.Errorf("%d notices report the cap, want 1: %v", capNotices, got.notices)
	}
	if got.options["maxEvents"] != float64(limit) || got.options["timeoutSeconds"] == nil {
		t.Errorf("meta.custom.options = %v, want maxEvents %d and timeoutSeconds", got.options, limit)
	}
	n, found := truncationNotice(got.notices)
	want := fmt.Sprintf("truncated at %d events (maxEvents)", limit)
	switch {
	case !found:
		t.Errorf("no truncation notice among %v", got.notices)
	case n.Severity != data.NoticeSeverityWarning || !strings.Contains(n.Text, want):
		t.Errorf("notice %q (severity %v), want a warning saying %q", n.Text, n.Severity, want)
	}
	if s := f.sessions(t); len(s) != 0 {
		t.Errorf("sessions left after the capped trace: %v", s)
	}

	// the stored trace keeps its truncation: a view of it says so too
	id := traceIDOf(t, fs)
	v := summarize(t, ok(t, run(t, d, bg, query("V", map[string]any{"queryType": "view", "traceId": id, "maxDataPoints": 1000}))["V"]))
	if !v.truncated || v.metaTrunc != true {
		t.Errorf("the view of the capped trace: truncated field %v, meta %v", v.truncated, v.metaTrunc)
	}
	if _, found := truncationNotice(v.notices); !found {
		t.Error("the view of the capped trace has no truncation notice")
	}
}

// The cap a query asks for never exceeds the datasource's maxEvents
// setting: with the setting below the query's option, the setting truncates.
func TestTraceTruncatedAtTheSettingsCap(t *testing.T) {
	f := startStandin(t)
	const setting = 25
	d := f.datasource(t, "trunc-setting", map[string]any{"allowBufferPoolClear": true, "maxEvents": setting})
	got := summarize(t, ok(t, run(t, d, bg, query("T", traceQuery("T", 1_000_000)))["T"]))
	if !got.truncated || got.events != setting {
		t.Errorf("settings cap %d, query asks 1,000,000: truncated %v at %d events", setting, got.truncated, got.events)
	}
	if n, found := truncationNotice(got.notices); !found || !strings.Contains(n.Text, fmt.Sprintf("truncated at %d events", setting)) {
		t.Errorf("notice %q, found %v", n.Text, found)
	}
}

package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/frames"
	"github.com/queryreplay/queryreplay/pkg/tracer"
)

// packets collects a stream's live frames as their status.
type packets chan frames.LiveStatus

func (p packets) Send(pk *backend.StreamPacket) error {
	var f data.Frame
	if err := json.Unmarshal(pk.Data, &f); err != nil {
		return err
	}
	b, _ := json.Marshal(f.Meta.Custom.(map[string]any)["live"])
	var st frames.LiveStatus
	if err := json.Unmarshal(b, &st); err != nil {
		return err
	}
	p <- st
	return nil
}

func (p packets) next(t *testing.T) frames.LiveStatus {
	t.Helper()
	select {
	case st := <-p:
		return st
	case <-time.After(30 * time.Second):
		t.Fatal("no live frame within 30 s")
	}
	return frames.LiveStatus{}
}

// untilSeq reads frames until one of update seq (the first frames may be
// the empty one sent before any update).
func (p packets) untilSeq(t *testing.T, seq int) frames.LiveStatus {
	t.Helper()
	for n := 0; n < 10; n++ {
		if st := p.next(t); st.Seq >= seq {
			if !st.Running {
				t.Fatalf("frame %+v is not running", st)
			}
			return st
		}
	}
	t.Fatalf("no frame of update %d in ten frames", seq)
	return frames.LiveStatus{}
}

var editorUser = &backend.User{Login: "editor", Role: RoleEditor}

// startLiveQuery runs a live trace query and returns its channel path.
func startLiveQuery(t *testing.T, d *Datasource) string {
	t.Helper()
	fs := ok(t, run(t, d, context.Background(), query("A", map[string]any{"queryType": "trace", "sql": hashJoinSQL, "live": true}))["A"])
	f := frameNamed(t, fs, frames.LiveFrameName)
	want := "ds/ds1/trace/"
	if f.Meta == nil || !strings.HasPrefix(f.Meta.Channel, want) {
		t.Fatalf("live frame channel %q, want %s<id>", f.Meta.Channel, want)
	}
	return strings.TrimPrefix(f.Meta.Channel, "ds/ds1/")
}

// A live trace query answers at once with its channel; RunStream runs the
// trace, sends a frame per update and ends with the stored trace's id.
func TestLiveTraceStreams(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "ds1", nil)
	seen := make(packets, 16)
	real := d.trace
	ran := false
	d.trace = func(ctx context.Context, o tracer.Options) (*bundle.Bundle, error) {
		ran = true
		for seq := 1; seq <= 3; seq++ {
			o.Live(tracer.LiveUpdate{Seq: seq, Running: true, Elapsed: time.Duration(seq) * time.Second, EventsSoFar: int64(seq),
				Operators: []tracer.OperatorProgress{{NodeID: 0, PhysicalOp: "Hash Match", State: "running", Rows: int64(seq)}},
				Events:    []tracer.LiveEvent{{TUs: int64(seq), Lane: "read", Name: "physical_page_read"}}})
			// the next update once this one reached the stream, so
			// that none coalesces with it
			if st := seen.untilSeq(t, seq); st.Seq != seq {
				t.Errorf("frame seq %d after update %d", st.Seq, seq)
			}
		}
		return real(ctx, o)
	}
	path := startLiveQuery(t, d)
	if ran {
		t.Fatal("the live query ran the trace before a subscriber came")
	}
	sub, err := d.SubscribeStream(context.Background(), &backend.SubscribeStreamRequest{PluginContext: backend.PluginContext{User: editorUser}, Path: path})
	if err != nil || sub.Status != backend.SubscribeStreamStatusOK || sub.InitialData == nil {
		t.Fatalf("subscribe: %+v %v", sub, err)
	}
	fwd := make(packets, 16)
	done := make(chan error, 1)
	go func() {
		done <- d.RunStream(context.Background(), &backend.RunStreamRequest{PluginContext: backend.PluginContext{User: editorUser}, Path: path},
			backend.NewStreamSender(tee{fwd, seen}))
	}()
	var last frames.LiveStatus
	for n := 0; n < 10 && !last.Done; n++ {
		last = fwd.next(t)
	}
	if err := <-done; err != nil {
		t.Fatalf("RunStream: %v", err)
	}
	if !last.Done || last.Running || len(last.TraceID) != 32 || last.Error != "" {
		t.Fatalf("last frame %+v", last)
	}
	fs := ok(t, run(t, d, context.Background(), query("B", map[string]any{"queryType": "bundle", "traceId": last.TraceID}))["B"])
	if ev, _ := frameNamed(t, fs, "trace").FieldByName("events"); ev == nil || ev.At(0).(int64) == 0 {
		t.Fatal("the finished live trace has no events")
	}
	if s := f.sessions(t); len(s) != 0 {
		t.Fatalf("sessions left: %v", s)
	}
}

// tee sends each packet to both.
type tee struct{ a, b packets }

func (t tee) Send(p *backend.StreamPacket) error {
	if err := t.a.Send(p); err != nil {
		return err
	}
	return t.b.Send(p)
}

// Who may watch a live trace: who may trace, and its owner or an Admin.
func TestLiveSubscribeRoles(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "ds1", nil)
	path := startLiveQuery(t, d)
	for _, c := range []struct {
		u    *backend.User
		path string
		want backend.SubscribeStreamStatus
	}{
		{editorUser, path, backend.SubscribeStreamStatusOK},
		{&backend.User{Login: "boss", Role: RoleAdmin}, path, backend.SubscribeStreamStatusOK},
		{&backend.User{Login: "other", Role: RoleEditor}, path, backend.SubscribeStreamStatusPermissionDenied},
		{&backend.User{Login: "editor", Role: RoleViewer}, path, backend.SubscribeStreamStatusPermissionDenied},
		{nil, path, backend.SubscribeStreamStatusPermissionDenied},
		{editorUser, "trace/0123", backend.SubscribeStreamStatusNotFound},
		{editorUser, "other/" + strings.TrimPrefix(path, "trace/"), backend.SubscribeStreamStatusNotFound},
	} {
		r, err := d.SubscribeStream(context.Background(), &backend.SubscribeStreamRequest{PluginContext: backend.PluginContext{User: c.u}, Path: c.path})
		if err != nil || r.Status != c.want {
			t.Errorf("%+v on %s: %+v %v, want %v", c.u, c.path, r, err, c.want)
		}
	}
	err := d.RunStream(context.Background(), &backend.RunStreamRequest{PluginContext: backend.PluginContext{User: &backend.User{Login: "other", Role: RoleEditor}}, Path: path},
		backend.NewStreamSender(make(packets, 4)))
	if err == nil || !strings.Contains(err.Error(), whyLiveNotYours) {
		t.Errorf("RunStream by another user: %v", err)
	}
	p, err := d.PublishStream(context.Background(), &backend.PublishStreamRequest{PluginContext: backend.PluginContext{User: editorUser}, Path: path})
	if err != nil || p.Status != backend.PublishStreamStatusPermissionDenied {
		t.Errorf("publish: %+v %v", p, err)
	}
}

// blockingProducer sends one update, then waits for cancellation.
func blockingProducer(stopped chan<- error) func(context.Context, tracer.Options) (*bundle.Bundle, error) {
	return func(ctx context.Context, o tracer.Options) (*bundle.Bundle, error) {
		o.Live(tracer.LiveUpdate{Seq: 1, Running: true})
		<-ctx.Done()
		stopped <- ctx.Err()
		return nil, ctx.Err()
	}
}

// The stream's context ending (the last subscriber left) cancels the
// trace and frees its slot before RunStream returns.
func TestLiveStreamEndCancelsTrace(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "ds1", nil)
	stopped := make(chan error, 1)
	d.trace = blockingProducer(stopped)
	path := startLiveQuery(t, d)
	ctx, cancel := context.WithCancel(context.Background())
	got := make(packets, 8)
	done := make(chan error, 1)
	go func() {
		done <- d.RunStream(ctx, &backend.RunStreamRequest{PluginContext: backend.PluginContext{User: editorUser}, Path: path}, backend.NewStreamSender(got))
	}()
	got.untilSeq(t, 1) // the producer runs
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("RunStream: %v", err)
	}
	select {
	case err := <-stopped:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the trace ended with %v", err)
		}
	default:
		t.Fatal("RunStream returned before the trace was cancelled")
	}
	if n := len(d.slots); n != 0 {
		t.Errorf("%d trace slots still taken", n)
	}
	st := d.lives.get(strings.TrimPrefix(path, "trace/")).acc.Status()
	if !st.Done || st.Error != whyLiveCanceled {
		t.Errorf("status after cancel %+v", st)
	}
}

// The cancel resource stops a running live trace; the stream ends with a
// frame saying so.
func TestLiveCancelResource(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "ds1", nil)
	stopped := make(chan error, 1)
	d.trace = blockingProducer(stopped)
	path := startLiveQuery(t, d)
	id := strings.TrimPrefix(path, "trace/")
	got := make(packets, 8)
	done := make(chan error, 1)
	go func() {
		done <- d.RunStream(context.Background(), &backend.RunStreamRequest{PluginContext: backend.PluginContext{User: editorUser}, Path: path}, backend.NewStreamSender(got))
	}()
	got.untilSeq(t, 1)
	if st, body, _ := callAs(t, d, &backend.User{Login: "other", Role: RoleEditor}, http.MethodPost, "live/"+id+"/cancel", nil); st != http.StatusForbidden {
		t.Fatalf("cancel by another user: %d %s", st, body)
	}
	if st, body, _ := callAs(t, d, editorUser, http.MethodPost, "live/"+id+"/cancel", nil); st != http.StatusOK {
		t.Fatalf("cancel: %d %s", st, body)
	}
	<-stopped
	var last frames.LiveStatus
	for n := 0; n < 5 && !last.Done; n++ {
		last = got.next(t)
	}
	if last.Error != whyLiveCanceled {
		t.Errorf("last frame %+v", last)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if st, _, _ := callAs(t, d, editorUser, http.MethodPost, "live/0123/cancel", nil); st != http.StatusNotFound {
		t.Errorf("cancel of an unknown live trace: %d", st)
	}
}

// Live traces waiting for a subscriber are bounded.
func TestLiveRegistryBounded(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "ds1", nil)
	for i := 0; i < d.liveLimit(); i++ {
		startLiveQuery(t, d)
	}
	r := run(t, d, context.Background(), query("A", map[string]any{"queryType": "trace", "sql": hashJoinSQL, "live": true}))["A"]
	fails(t, r, backend.StatusTooManyRequests, backend.ErrorSourcePlugin, "too many live traces")
}

// Alert rules and server-side expressions cannot follow a live channel:
// Grafana marks their requests (FromAlert; X-Grafana-From-Expr, which a
// plugin receives as http_X-Grafana-From-Expr) and reads only the frames,
// through the data plane contract. A live trace query from them runs to
// the end and answers with the finished trace; a live probe still passes
// the numeric contract; neither registers a live trace.
func TestLiveIgnoredWithoutStreamConsumer(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "ds1", nil)
	for _, h := range []map[string]string{
		{"FromAlert": "true"},
		{"Fromalert": "true"}, // canonicalised on the wire
		{"http_X-Grafana-From-Expr": "true"},
		{"X-Grafana-From-Expr": "true"},
	} {
		req := &backend.QueryDataRequest{PluginContext: backend.PluginContext{User: editorUser}, Headers: h, Queries: []backend.DataQuery{
			query("T", map[string]any{"queryType": "trace", "sql": hashJoinSQL, "live": true}),
			query("P", map[string]any{"queryType": "probe", "sql": hashJoinSQL, "live": true, "metrics": []string{"duration"}}),
		}}
		resp, err := d.QueryData(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		fs := ok(t, resp.Responses["T"])
		for _, fr := range fs {
			if fr.Meta != nil && fr.Meta.Channel != "" || fr.Name == frames.LiveFrameName {
				t.Fatalf("%v: a live frame (channel %q) for a request nobody streams", h, fr.Meta.Channel)
			}
		}
		if id := traceIDOf(t, fs); len(id) != 32 {
			t.Errorf("%v: the trace did not run to the end: trace id %q", h, id)
		}
		checkProbeForAlerting(t, ok(t, resp.Responses["P"]), 1)
		d.lives.mu.Lock()
		n := len(d.lives.m)
		d.lives.mu.Unlock()
		if n != 0 {
			t.Errorf("%v: %d live traces registered", h, n)
		}
	}
	if s := f.sessions(t); len(s) != 0 {
		t.Fatalf("sessions left: %v", s)
	}
}

// Only the alerting and expression markers turn live off; a panel's own
// headers, or the marker set to false, leave it on.
func TestLiveWatched(t *testing.T) {
	for _, c := range []struct {
		h    map[string]string
		want bool
	}{
		{nil, true},
		{map[string]string{"http_X-Panel-Id": "3", "http_X-Dashboard-Uid": "d"}, true},
		{map[string]string{"FromAlert": "false"}, true},
		{map[string]string{"FromAlert": "true"}, false},
		{map[string]string{"fromalert": ""}, false},
		{map[string]string{"HTTP_x-grafana-from-expr": "true"}, false},
		{map[string]string{"http_": "true"}, true},
	} {
		if got := liveWatched(&backend.QueryDataRequest{Headers: c.h}); got != c.want {
			t.Errorf("headers %v: liveWatched %v, want %v", c.h, got, c.want)
		}
	}
}

// RunStream adds no delay of its own: the frame so far goes out as soon as
// the stream starts (before the trace's first update), each update as soon
// as it is added, and the finished frame as soon as the trace is stored —
// nothing waits for a tick, and an unchanged frame is never sent twice.
// The producer moves on only once the stream carried its update, so the
// frames are exactly: the empty one, one per update, the finished one.
func TestLiveStreamSendsAtOnceInOrder(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "ds1", nil)
	got := make(packets, 16)
	first := make(chan frames.LiveStatus, 1)
	seen := make(chan frames.LiveStatus, 16)
	real := d.trace
	d.trace = func(ctx context.Context, o tracer.Options) (*bundle.Bundle, error) {
		// the stream's first frame went out before the trace did anything
		select {
		case st := <-first:
			if st.Seq != 0 || st.Done {
				t.Errorf("first frame %+v, want the empty one", st)
			}
		case <-time.After(30 * time.Second):
			t.Error("no frame before the trace's first update")
		}
		for seq := 1; seq <= 3; seq++ {
			o.Live(tracer.LiveUpdate{Seq: seq, Running: seq < 3, Elapsed: time.Duration(seq) * time.Second})
			select {
			case st := <-seen:
				if st.Seq != seq {
					t.Errorf("after update %d the stream sent %+v", seq, st)
				}
			case <-time.After(30 * time.Second):
				t.Errorf("update %d never reached the stream", seq)
			}
		}
		o.Live = nil // the stored trace only: no updates of its own
		return real(ctx, o)
	}
	path := startLiveQuery(t, d)
	done := make(chan error, 1)
	n := 0
	go func() {
		done <- d.RunStream(context.Background(), &backend.RunStreamRequest{PluginContext: backend.PluginContext{User: editorUser}, Path: path},
			backend.NewStreamSender(senderFunc(func(p *backend.StreamPacket) error {
				if err := got.Send(p); err != nil {
					return err
				}
				st := <-got
				if n++; n == 1 {
					first <- st
				} else {
					seen <- st
				}
				return nil
			})))
	}()
	if err := <-done; err != nil {
		t.Fatalf("RunStream: %v", err)
	}
	// the empty frame, three updates, the finished frame: nothing more
	if n != 5 {
		t.Fatalf("%d frames, want 5 (empty, one per update, finished)", n)
	}
	last := <-seen
	if !last.Done || len(last.TraceID) != 32 {
		t.Fatalf("last frame %+v, want the finished trace", last)
	}
}

// senderFunc is a backend.StreamPacketSender from a function.
type senderFunc func(*backend.StreamPacket) error

func (f senderFunc) Send(p *backend.StreamPacket) error { return f(p) }

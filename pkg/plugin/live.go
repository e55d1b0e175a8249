package plugin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/queryreplay/queryreplay/pkg/frames"
	"github.com/queryreplay/queryreplay/pkg/tracer"
)

// Live traces (docs/frames.md §3.14, issue 29). A trace query with
// `live: true` does not run the batch inside QueryData: it registers the
// trace and answers at once with the live frame, whose meta.channel is the
// trace's Grafana Live channel `ds/<datasource uid>/trace/<live id>`.
// Grafana's frontend (@grafana/runtime DataSourceWithBackend) turns that
// frame into a stream of the channel; Grafana then asks SubscribeStream
// for each subscriber and calls RunStream once per channel, whose context
// ends when the last subscriber leaves
// (https://grafana.com/developers/plugin-tools/how-to-guides/data-source-plugins/add-features-for-data-source-plugins/add-streaming).
// RunStream runs the trace — in a trace slot, like any trace — and sends the
// live frame after each update of the tracer's (about four a second); the last frame says the trace is done and
// names the stored trace, which the panel then opens as usual. The stream
// ending early (last subscriber gone, or the cancel resource) cancels the
// trace: the tracer stops the query and drops its session.

var _ backend.StreamHandler = (*Datasource)(nil)

// Bounds of the live registry.
const (
	// livePendingTTL: a registered live trace nobody subscribed to within
	// it is forgotten (its batch never ran).
	livePendingTTL = time.Minute
	// liveDoneTTL: a finished live trace's last frame is kept this long for
	// late subscribers.
	liveDoneTTL = 5 * time.Minute
	// livePathPrefix is the channel path's first part.
	livePathPrefix = "trace/"
)

// What a refused or failed live stream says (docs/troubleshooting.md).
const (
	whyLiveNotFound = "live trace not found: it ended more than five minutes ago or was never started; run the trace again"
	whyLiveBusy     = "too many live traces are waiting to start on this datasource; try again later"
	whyLiveNotYours = "live trace belongs to another user: only who started it or an org Admin may watch or cancel it"
	whyLiveCanceled = "live trace cancelled: the query was stopped and its event session dropped"
)

type liveState int

const (
	livePending liveState = iota
	liveRunning
	liveDone
)

// liveTrace is one registered live trace.
type liveTrace struct {
	id    string
	owner caller
	opts  tracer.Options
	run   string // the run request, marked done when the trace is stored
	acc   *frames.Live

	mu       sync.Mutex
	state    liveState
	since    time.Time // registered, or finished
	cancel   context.CancelFunc
	watchers map[chan struct{}]bool
	done     chan struct{} // closed when the trace has ended and cleaned up
}

// liveRegistry holds the live traces of one datasource.
type liveRegistry struct {
	mu sync.Mutex
	m  map[string]*liveTrace
}

func newLiveRegistry() *liveRegistry { return &liveRegistry{m: map[string]*liveTrace{}} }

// add registers t unless limit live traces are already pending or
// running; finished and stale ones are forgotten first.
func (r *liveRegistry) add(t *liveTrace, limit int, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	waiting := 0
	for id, o := range r.m {
		o.mu.Lock()
		st, since := o.state, o.since
		o.mu.Unlock()
		switch {
		case st == livePending && now.Sub(since) > livePendingTTL, st == liveDone && now.Sub(since) > liveDoneTTL:
			delete(r.m, id)
		case st != liveDone:
			waiting++
		}
	}
	if waiting >= limit {
		return false
	}
	r.m[t.id] = t
	return true
}

func (r *liveRegistry) get(id string) *liveTrace {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[id]
}

// liveLimit bounds the live traces registered at once: the running ones
// are bounded by the trace slots anyway; this bounds the waiting ones.
func (d *Datasource) liveLimit() int { return 2*d.settings.maxConcurrent() + 2 }

func newLiveID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// LiveChannel is the Grafana Live channel of a live trace.
func LiveChannel(uid, id string) string { return "ds/" + uid + "/" + livePathPrefix + id }

// Who can follow a live channel. Grafana's alerting engine marks its
// QueryData requests with the plain header FromAlert (ngalert's
// models.FromAlertHeaderName, mirrored by the SDK's
// backend.FromAlertHeaderName), and server-side expressions with
// X-Grafana-From-Expr (query.HeaderFromExpression in Grafana's
// pkg/services/query/query.go; @grafana/runtime's DataSourceWithBackend
// sends it too, and plugins receive HTTP headers as "http_<name>"). Both
// read only the frames of the response, through the data plane contract
// (https://grafana.com/developers/dataplane/): nothing subscribes to a
// channel there, so a live frame would answer with no numbers and register a
// trace that never runs. grafana-aws-sdk's async datasource
// (pkg/awsds/asyncDatasource.go) runs such requests synchronously for the
// same reason; so does a live query here.
const (
	headerFromAlert = "FromAlert"
	headerFromExpr  = "X-Grafana-From-Expr"
)

// liveWatched tells whether the request's consumer can follow a live
// channel: not an alert rule, not a server-side expression. Header names
// are compared without case (Grafana notes FromAlert travels as
// "Fromalert" once canonicalised).
func liveWatched(req *backend.QueryDataRequest) bool {
	for k, v := range req.Headers {
		name := k
		if len(name) > len("http_") && strings.EqualFold(name[:len("http_")], "http_") {
			name = name[len("http_"):]
		}
		if (strings.EqualFold(name, headerFromAlert) || strings.EqualFold(name, headerFromExpr)) && !strings.EqualFold(strings.TrimSpace(v), "false") {
			return false
		}
	}
	return true
}

// startLive registers a live trace and answers with its first live frame.
func (d *Datasource) startLive(ctx context.Context, who caller, m Query) (backend.DataResponse, error) {
	o, err := d.prepare(ctx, m)
	if err != nil {
		return backend.DataResponse{}, err
	}
	t := &liveTrace{id: newLiveID(), owner: who, opts: o, run: m.Run, acc: frames.NewLive(),
		since: time.Now(), watchers: map[chan struct{}]bool{}, done: make(chan struct{})}
	if !d.lives.add(t, d.liveLimit(), time.Now()) {
		return backend.DataResponse{}, pluginErr(backend.StatusTooManyRequests, "%s", whyLiveBusy)
	}
	f := t.frame()
	f.Meta.Channel = LiveChannel(d.uid, t.id)
	return backend.DataResponse{Frames: data.Frames{f}}, nil
}

// frame is the live frame now, with the live id in meta.custom.
func (t *liveTrace) frame() *data.Frame {
	f := t.acc.Frame()
	f.Meta.Custom.(map[string]any)["liveId"] = t.id
	return f
}

// lookup finds the live trace of a channel path and checks the caller may
// watch it: the same roles as running the trace, and its owner or an
// Admin.
func (d *Datasource) lookup(who caller, path string) (*liveTrace, backend.SubscribeStreamStatus) {
	id, ok := strings.CutPrefix(path, livePathPrefix)
	if !ok || d.lives == nil {
		return nil, backend.SubscribeStreamStatusNotFound
	}
	t := d.lives.get(id)
	if t == nil {
		return nil, backend.SubscribeStreamStatusNotFound
	}
	if !d.settings.mayTrace(who) || !(who.mayTouch(t.owner.login)) {
		return nil, backend.SubscribeStreamStatusPermissionDenied
	}
	return t, backend.SubscribeStreamStatusOK
}

// SubscribeStream admits a subscriber to a live trace's channel, with the
// live frame so far as its initial data.
func (d *Datasource) SubscribeStream(_ context.Context, req *backend.SubscribeStreamRequest) (*backend.SubscribeStreamResponse, error) {
	t, status := d.lookup(callerOf(req.PluginContext.User), req.Path)
	if status != backend.SubscribeStreamStatusOK {
		return &backend.SubscribeStreamResponse{Status: status}, nil
	}
	initial, err := backend.NewInitialFrame(t.frame(), data.IncludeAll)
	if err != nil {
		return nil, err
	}
	return &backend.SubscribeStreamResponse{Status: status, InitialData: initial}, nil
}

// PublishStream is refused: a live trace's channel is the plugin's alone.
func (d *Datasource) PublishStream(context.Context, *backend.PublishStreamRequest) (*backend.PublishStreamResponse, error) {
	return &backend.PublishStreamResponse{Status: backend.PublishStreamStatusPermissionDenied}, nil
}

// RunStream runs the live trace of the channel (the first call) or
// follows it (later ones), sending the live frame whenever it changed
// until the trace has ended. The first call's ctx ending cancels the trace
// and waits for its cleanup.
func (d *Datasource) RunStream(ctx context.Context, req *backend.RunStreamRequest, sender *backend.StreamSender) error {
	t, status := d.lookup(callerOf(req.PluginContext.User), req.Path)
	if status != backend.SubscribeStreamStatusOK {
		if status == backend.SubscribeStreamStatusNotFound {
			return errors.New(whyLiveNotFound)
		}
		return errors.New(whyLiveNotYours)
	}
	t.mu.Lock()
	runner := t.state == livePending
	var tctx context.Context
	if runner {
		t.state = liveRunning
		tctx, t.cancel = context.WithCancel(ctx)
	}
	t.mu.Unlock()
	if !runner {
		return t.follow(ctx, sender)
	}
	go d.runLive(tctx, t)
	err := t.follow(ctx, sender)
	t.stop()
	<-t.done // the tracer has stopped the query and dropped the session
	return err
}

// runLive runs the trace and records its end.
func (d *Datasource) runLive(ctx context.Context, t *liveTrace) {
	o := t.opts
	o.Live = func(u tracer.LiveUpdate) {
		t.acc.Add(u)
		t.notify()
	}
	e, err := d.runTrace(ctx, t.owner, o)
	id := ""
	switch {
	case err == nil:
		id = e.ID
		if t.run != "" {
			d.runs.done(t.run, e.ID)
		}
	case ctx.Err() != nil:
		err = errors.New(whyLiveCanceled)
	}
	t.acc.Finish(id, err)
	t.mu.Lock()
	t.state, t.since = liveDone, time.Now()
	t.mu.Unlock()
	close(t.done)
	t.notify()
}

// stop cancels the trace if it runs.
func (t *liveTrace) stop() {
	t.mu.Lock()
	c := t.cancel
	t.mu.Unlock()
	if c != nil {
		c()
	}
}

// notify wakes every follower; a follower still sending keeps one wake-up
// (the frames coalesce: each is the whole trace so far).
func (t *liveTrace) notify() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for w := range t.watchers {
		select {
		case w <- struct{}{}:
		default:
		}
	}
}

// follow sends the live frame whenever it changed, and the last one.
func (t *liveTrace) follow(ctx context.Context, sender *backend.StreamSender) error {
	w := make(chan struct{}, 1)
	t.mu.Lock()
	t.watchers[w] = true
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(t.watchers, w)
		t.mu.Unlock()
	}()
	sent := -1
	for {
		select {
		case <-t.done:
			return sender.SendFrame(t.frame(), data.IncludeAll)
		default:
		}
		if s := t.acc.Status(); s.Seq != sent {
			if err := sender.SendFrame(t.frame(), data.IncludeAll); err != nil {
				return err
			}
			sent = s.Seq
		}
		select {
		case <-w:
		case <-t.done:
		case <-ctx.Done():
			return nil
		}
	}
}

// cancelLive is the resource POST live/{id}/cancel: the panel's Cancel
// button.
func (d *Datasource) cancelLive(w http.ResponseWriter, r *http.Request) {
	t, status := d.lookup(callerFromContext(r.Context()), livePathPrefix+r.PathValue("id"))
	switch status {
	case backend.SubscribeStreamStatusNotFound:
		writeErr(w, http.StatusNotFound, "%s", whyLiveNotFound)
		return
	case backend.SubscribeStreamStatusPermissionDenied:
		writeErr(w, http.StatusForbidden, "%s", whyLiveNotYours)
		return
	}
	t.mu.Lock()
	pending := t.state == livePending
	if pending { // never ran: nothing to stop, forget it
		t.state, t.since = liveDone, time.Now()
	}
	t.mu.Unlock()
	if pending {
		t.acc.Finish("", errors.New(whyLiveCanceled))
		close(t.done)
		t.notify()
	}
	t.stop()
	select {
	case <-t.done:
	case <-r.Context().Done():
	}
	writeJSON(w, http.StatusOK, t.acc.Status())
}

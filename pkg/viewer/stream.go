package viewer

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// Live traces over server-sent events (docs/frames.md §3.14). In Grafana a
// live trace query's frame carries meta.channel and Grafana Live runs the
// datasource's stream; the viewer plays Grafana Live's part for the page:
//
//	GET  /api/live/stream?channel=ds/<uid>/<path>  → text/event-stream
//	POST /api/live/cancel {"channel": "…"}         → stops the viewer's streams of it
//
// The stream asks the datasource's SubscribeStream (its rules decide who may
// watch), then runs RunStream with the request's context: a closed
// connection ends it, which cancels the trace. Both are API routes behind
// the guard (host, origin, token), so the page reads the stream with fetch
// (EventSource cannot send the token header).
//
// Back-pressure: RunStream never waits for the client. Each frame it sends
// replaces the one not yet written, so a slow client gets fewer, later
// frames and the viewer holds at most one — correct because a live frame is
// the whole trace so far, never a delta.

// Bounds of the live streams.
const (
	// MaxLiveStreams bounds the viewer's open streams at once.
	MaxLiveStreams = 8
	// maxStreamMessage bounds one frame written to a stream; a live frame
	// stays far below it (pkg/frames MaxLiveFrameBytes).
	maxStreamMessage = 8 << 20
	// streamWriteTimeout bounds one write to a client: a client that reads
	// nothing for that long is dropped, which cancels its trace.
	streamWriteTimeout = 30 * time.Second
)

// What a refused stream says (docs/troubleshooting.md).
const (
	whyNoStreams    = "this datasource has no live streams"
	whyStreamsLimit = "too many live streams are open in this viewer; close one first"
	whyChannel      = "channel must be ds/<this viewer's datasource uid>/<path>"
	whyNoLiveStream = "no live stream of this channel is open in this viewer"
)

// streams are the viewer's open live streams by channel.
type streams struct {
	mu sync.Mutex
	m  map[string]map[*liveConn]bool
	n  int
}

// liveConn is one open stream: the frame waiting to be written and the
// cancel of its RunStream.
type liveConn struct {
	mu      sync.Mutex
	pending []byte
	wake    chan struct{}
	cancel  context.CancelFunc
	// cancelled: ended by the cancel endpoint (the end event says so)
	cancelled bool
}

// Send implements backend.StreamPacketSender: keep the newest frame only.
func (c *liveConn) Send(p *backend.StreamPacket) error {
	if len(p.Data) > maxStreamMessage {
		return fmt.Errorf("a stream frame of %d bytes is over the viewer's %d", len(p.Data), maxStreamMessage)
	}
	c.mu.Lock()
	c.pending = append(c.pending[:0], p.Data...)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return nil
}

func (c *liveConn) take() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.pending
	c.pending = nil
	return b
}

func (st *streams) add(channel string, c *liveConn) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.n >= MaxLiveStreams {
		return false
	}
	if st.m == nil {
		st.m = map[string]map[*liveConn]bool{}
	}
	if st.m[channel] == nil {
		st.m[channel] = map[*liveConn]bool{}
	}
	st.m[channel][c] = true
	st.n++
	return true
}

func (st *streams) remove(channel string, c *liveConn) {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.m[channel], c)
	if len(st.m[channel]) == 0 {
		delete(st.m, channel)
	}
	st.n--
}

// cancel ends every stream of channel; how many there were.
func (st *streams) cancel(channel string) int {
	st.mu.Lock()
	defer st.mu.Unlock()
	for c := range st.m[channel] {
		c.mu.Lock()
		c.cancelled = true
		c.mu.Unlock()
		c.cancel()
	}
	return len(st.m[channel])
}

// cancelAll ends every stream (the viewer is closing).
func (st *streams) cancelAll() {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, cs := range st.m {
		for c := range cs {
			c.cancel()
		}
	}
}

// streamPath checks a channel names this viewer's datasource and returns
// the datasource's path of it.
func (s *Server) streamPath(channel string) (string, bool) {
	rest, ok := strings.CutPrefix(channel, "ds/"+s.uid+"/")
	return rest, ok && rest != "" && len(channel) <= 512
}

// liveStream serves GET /api/live/stream.
func (s *Server) liveStream(w http.ResponseWriter, r *http.Request) {
	h, ok := s.cfg.Datasource.(backend.StreamHandler)
	if !ok {
		writeError(w, http.StatusNotFound, whyNoStreams)
		return
	}
	channel := r.URL.Query().Get("channel")
	path, ok := s.streamPath(channel)
	if !ok {
		writeError(w, http.StatusBadRequest, whyChannel)
		return
	}
	sub, err := h.SubscribeStream(r.Context(), &backend.SubscribeStreamRequest{PluginContext: s.pluginContext(), Path: path})
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	switch sub.Status {
	case backend.SubscribeStreamStatusOK:
	case backend.SubscribeStreamStatusNotFound:
		writeError(w, http.StatusNotFound, "stream not found: "+channel)
		return
	default:
		writeError(w, http.StatusForbidden, "stream refused by the datasource: "+channel)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	c := &liveConn{wake: make(chan struct{}, 1), cancel: cancel}
	if !s.live.add(channel, c) {
		writeError(w, http.StatusTooManyRequests, whyStreamsLimit)
		return
	}
	defer s.live.remove(channel, c)
	s.serveEvents(ctx, w, func(ctx context.Context) error {
		return h.RunStream(ctx, &backend.RunStreamRequest{PluginContext: s.pluginContext(), Path: path}, backend.NewStreamSender(c))
	}, c)
}

// serveEvents writes the stream's frames as server-sent events while run
// runs, then the last one and an "end" event.
func (s *Server) serveEvents(ctx context.Context, w http.ResponseWriter, run func(context.Context) error, c *liveConn) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if rc.Flush() != nil {
		return
	}
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	write := func(event string, b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	for {
		select {
		case <-c.wake:
			if b := c.take(); b != nil && !write("frame", b) {
				c.cancel() // the client is gone or stalled: stop its trace
				<-done
				return
			}
		case err := <-done:
			if b := c.take(); b != nil {
				write("frame", b)
			}
			c.mu.Lock()
			cancelled := c.cancelled
			c.mu.Unlock()
			end, _ := json.Marshal(map[string]any{"error": errText(err), "cancelled": cancelled})
			write("end", end)
			return
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// liveCancel serves POST /api/live/cancel.
func (s *Server) liveCancel(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		writeError(w, bodyStatus(err), err.Error())
		return
	}
	var req struct {
		Channel string `json:"channel"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "live cancel: request body: "+err.Error())
		return
	}
	if _, ok := s.streamPath(req.Channel); !ok {
		writeError(w, http.StatusBadRequest, whyChannel)
		return
	}
	n := s.live.cancel(req.Channel)
	if n == 0 {
		writeError(w, http.StatusNotFound, whyNoLiveStream)
		return
	}
	writeJSON(w, http.StatusOK, map[string]int{"cancelled": n})
}

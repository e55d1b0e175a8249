package viewer

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// streamDS is fakeDS with a stream handler whose RunStream the test
// scripts.
type streamDS struct {
	fakeDS
	run func(ctx context.Context, s *backend.StreamSender) error
	mu  sync.Mutex
	// subscribers seen, by user login
	subs []string
}

func (d *streamDS) SubscribeStream(_ context.Context, req *backend.SubscribeStreamRequest) (*backend.SubscribeStreamResponse, error) {
	d.mu.Lock()
	d.subs = append(d.subs, req.PluginContext.User.Login)
	d.mu.Unlock()
	if req.Path == "trace/forbidden" {
		return &backend.SubscribeStreamResponse{Status: backend.SubscribeStreamStatusPermissionDenied}, nil
	}
	return &backend.SubscribeStreamResponse{Status: backend.SubscribeStreamStatusOK}, nil
}

func (d *streamDS) PublishStream(context.Context, *backend.PublishStreamRequest) (*backend.PublishStreamResponse, error) {
	return &backend.PublishStreamResponse{Status: backend.PublishStreamStatusPermissionDenied}, nil
}

func (d *streamDS) RunStream(ctx context.Context, _ *backend.RunStreamRequest, s *backend.StreamSender) error {
	return d.run(ctx, s)
}

// sse is an open event stream.
type sse struct {
	body io.ReadCloser
	r    *bufio.Reader
}

func openStream(t *testing.T, v *Server, channel string) (*sse, int) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, v.URL()+"api/live/stream?channel="+channel, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(TokenHeader, v.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, resp.StatusCode
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return &sse{body: resp.Body, r: bufio.NewReaderSize(resp.Body, 1<<16)}, resp.StatusCode
}

// next reads one event: its name and data.
func (s *sse) next(t *testing.T) (string, []byte) {
	t.Helper()
	var event string
	for n := 0; n < 4; n++ {
		line, err := s.r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("read the stream: %v", err)
		}
		switch {
		case strings.HasPrefix(string(line), "event: "):
			event = strings.TrimSpace(string(line[7:]))
		case strings.HasPrefix(string(line), "data: "):
			data := line[6 : len(line)-1]
			if _, err := s.r.ReadBytes('\n'); err != nil { // the blank line
				t.Fatal(err)
			}
			return event, data
		}
	}
	t.Fatal("no event in four lines")
	return "", nil
}

type seqMsg struct {
	Seq int    `json:"seq"`
	Pad string `json:"pad"`
}

func packet(seq int, pad int) *backend.StreamPacket {
	b, _ := json.Marshal(seqMsg{Seq: seq, Pad: strings.Repeat("x", pad)})
	return &backend.StreamPacket{Data: b}
}

// A client that does not read never holds RunStream up, and gets the
// newest frames, coalesced, then the end.
func TestLiveStreamCoalescesForASlowClient(t *testing.T) {
	const frames = 200
	sent := make(chan struct{})
	ds := &streamDS{run: func(ctx context.Context, s *backend.StreamSender) error {
		for i := 1; i <= frames; i++ {
			if err := s.SendBytes(packet(i, 256<<10).Data); err != nil {
				return err
			}
		}
		close(sent)
		return nil
	}}
	v := start(t, Config{Datasource: ds})
	st, code := openStream(t, v, "ds/"+DefaultUID+"/trace/abc")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	select {
	case <-sent: // every frame sent while the client read nothing
	case <-time.After(30 * time.Second):
		t.Fatal("RunStream waited for the client")
	}
	got, last := 0, 0
	for n := 0; n <= frames+1; n++ {
		ev, data := st.next(t)
		if ev == "end" {
			break
		}
		var m seqMsg
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		if m.Seq <= last {
			t.Fatalf("frame %d after %d", m.Seq, last)
		}
		got, last = got+1, m.Seq
	}
	if last != frames {
		t.Errorf("the last frame written is %d, want %d", last, frames)
	}
	if got > frames/4 {
		t.Errorf("%d of %d frames reached a client that did not read: not coalesced", got, frames)
	}
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if len(ds.subs) != 1 || ds.subs[0] != "local" {
		t.Errorf("subscribed as %v", ds.subs)
	}
}

// waitingRun sends one frame and waits for its context to end.
func waitingRun(ended chan<- struct{}) func(ctx context.Context, s *backend.StreamSender) error {
	return func(ctx context.Context, s *backend.StreamSender) error {
		if err := s.SendBytes(packet(1, 0).Data); err != nil {
			return err
		}
		<-ctx.Done()
		select {
		case ended <- struct{}{}:
		default:
		}
		return nil
	}
}

// A closed connection ends RunStream's context (which cancels the trace).
func TestLiveStreamClosedConnectionCancels(t *testing.T) {
	ended := make(chan struct{}, 1)
	v := start(t, Config{Datasource: &streamDS{run: waitingRun(ended)}})
	st, _ := openStream(t, v, "ds/"+DefaultUID+"/trace/abc")
	if ev, _ := st.next(t); ev != "frame" {
		t.Fatalf("first event %q", ev)
	}
	st.body.Close()
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("RunStream still runs after the client left")
	}
}

// The cancel endpoint ends the channel's streams; the end event says so.
func TestLiveStreamCancelEndpoint(t *testing.T) {
	ended := make(chan struct{}, 1)
	v := start(t, Config{Datasource: &streamDS{run: waitingRun(ended)}})
	ch := "ds/" + DefaultUID + "/trace/abc"
	st, _ := openStream(t, v, ch)
	st.next(t)
	if code, body := post(t, v, v.URL()+"api/live/cancel", `{"channel":"ds/`+DefaultUID+`/trace/other"}`); code != http.StatusNotFound {
		t.Errorf("cancel of a channel with no stream: %d %s", code, body)
	}
	if code, body := post(t, v, v.URL()+"api/live/cancel", fmt.Sprintf(`{"channel":%q}`, ch)); code != http.StatusOK {
		t.Fatalf("cancel: %d %s", code, body)
	}
	<-ended
	ev, data := st.next(t)
	var end struct {
		Cancelled bool `json:"cancelled"`
	}
	if ev != "end" || json.Unmarshal(data, &end) != nil || !end.Cancelled {
		t.Fatalf("after cancel: %s %s", ev, data)
	}
}

// Streams are refused for another datasource's channel, a channel the
// datasource refuses, a datasource without streams, and past the limit.
func TestLiveStreamRefusals(t *testing.T) {
	ended := make(chan struct{}, 1)
	ds := &streamDS{run: waitingRun(ended)}
	v := start(t, Config{Datasource: ds})
	for ch, want := range map[string]int{
		"ds/other/trace/abc":                    http.StatusBadRequest,
		"grafana/x/y":                           http.StatusBadRequest,
		"ds/" + DefaultUID + "/":                http.StatusBadRequest,
		"ds/" + DefaultUID + "/trace/forbidden": http.StatusForbidden,
	} {
		if _, code := openStream(t, v, ch); code != want {
			t.Errorf("%s: %d, want %d", ch, code, want)
		}
	}
	for i := 0; i < MaxLiveStreams; i++ {
		st, code := openStream(t, v, fmt.Sprintf("ds/%s/trace/%d", DefaultUID, i))
		if code != http.StatusOK {
			t.Fatalf("stream %d: %d", i, code)
		}
		st.next(t)
	}
	if _, code := openStream(t, v, "ds/"+DefaultUID+"/trace/one-more"); code != http.StatusTooManyRequests {
		t.Errorf("stream past the limit: %d", code)
	}
	plain := start(t, Config{Datasource: &fakeDS{}})
	if _, code := openStream(t, plain, "ds/"+DefaultUID+"/trace/abc"); code != http.StatusNotFound {
		t.Errorf("datasource without streams: %d", code)
	}
}

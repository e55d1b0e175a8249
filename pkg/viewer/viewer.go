// Package viewer serves the replay panel outside Grafana: a small HTTP
// server, on loopback by default, with one page that mounts the built panel
// bundle and the two Grafana endpoints the panel and the editors call —
// POST /api/ds/query and /api/datasources/uid/<uid>/resources/… (plus
// /api/datasources/uid/<uid>/health) — answered in-process by a datasource
// handler, normally pkg/plugin's Datasource against a live SQL Server (or
// the stand-in in tests). Bundles given in Config are uploaded through the
// datasource's own `POST traces` resource at start, so a viewer can open
// saved traces as well as run new ones.
//
// The browser tests (make test-browser), the performance check and the
// demo/view commands all use it:
//
//	v, err := viewer.New(viewer.Config{
//		Datasource: ds,                      // backend.QueryDataHandler + CallResourceHandler
//		Assets:     os.DirFS("tests/browser/dist"), // harness.js, harness.css (npm run build:harness)
//		Bundles:    []string{"trace.json.gz"}, // optional
//	})
//	err = v.Start(ctx, "127.0.0.1:0")
//	fmt.Println(v.URL())                   // open it; ?traceId=…&theme=light&width=…&height=…
//	defer v.Close()
//
// Every API call must come from the page itself: the Host must be the
// viewer's own address, the Origin (when sent) its own origin, and the
// request must carry the per-run token the page finds in its HTML
// (guard.go, docs/security.md).
//
// It is glue, like Grafana's own HTTP API: it converts requests into SDK
// calls and responses back into Grafana's JSON, nothing more. It must not
// build frames, open traces or talk to SQL Server itself — that is
// pkg/plugin's job — and it never listens beyond loopback unless told to.
package viewer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// Datasource is what the viewer needs of a datasource: queries and
// resources, as Grafana calls them. CheckHealth is used when implemented.
type Datasource interface {
	backend.QueryDataHandler
	backend.CallResourceHandler
}

// DefaultUID and DefaultType name the datasource on the page, as the
// provisioning files do (docs/design/contracts.md §2).
const (
	DefaultUID  = "queryreplay"
	DefaultType = "queryreplay-sqlserver-datasource"
)

// MaxRequestBytes bounds a request body (a bundle upload may be 256 MB, as
// pkg/plugin allows).
const MaxRequestBytes = 257 << 20

// Config says what to serve.
type Config struct {
	// Datasource answers queries and resources; required.
	Datasource Datasource
	// Settings are handed to the datasource in every PluginContext; UID
	// defaults to DefaultUID.
	Settings backend.DataSourceInstanceSettings
	// Assets holds the built page bundle: harness.js and harness.css (and
	// any files they load); required.
	Assets fs.FS
	// Bundles are trace bundle files (JSON or gzip JSON) uploaded at Start;
	// the page opens the first one unless the URL names another trace.
	Bundles []string
	// Query is the query the page runs when the URL names no trace or SQL
	// (a docs/frames.md query object, without refId and datasource).
	Query map[string]any
	// AllowRemote permits a listen address beyond loopback.
	AllowRemote bool
	// MaxRequestBytes bounds a request body and a bundle file uploaded at
	// Start (0: MaxRequestBytes); MaxRequestKnob names the flag that sets
	// it, for the error (limits.go).
	MaxRequestBytes int64
	MaxRequestKnob  string
	// Logger receives one line per failed request; nil discards.
	Logger *slog.Logger
}

// Server is a running viewer.
type Server struct {
	cfg      Config
	uid      string
	srv      *http.Server
	ln       net.Listener
	mu       sync.Mutex
	traceIDs []string
	done     chan error
	// token is this run's API token (guard.go); hosts the Host values
	// accepted, set once listening (none before: everything is refused).
	token string
	hosts hostSet
	// live are the open live streams (stream.go).
	live streams
}

// New checks the configuration; Start listens.
func New(cfg Config) (*Server, error) {
	if cfg.Datasource == nil {
		return nil, errors.New("viewer: Config.Datasource is required")
	}
	if cfg.Assets == nil {
		return nil, errors.New("viewer: Config.Assets is required (the built harness bundle)")
	}
	if _, err := fs.Stat(cfg.Assets, "harness.js"); err != nil {
		return nil, fmt.Errorf("viewer: assets have no harness.js (run npm run build:harness): %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	uid := cfg.Settings.UID
	if uid == "" {
		uid = DefaultUID
		cfg.Settings.UID = uid
	}
	if cfg.Settings.Type == "" {
		cfg.Settings.Type = DefaultType
	}
	token, err := newToken()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, uid: uid, token: token}
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	return s, nil
}

// Start uploads the configured bundles, then listens on addr (e.g.
// "127.0.0.1:0") and serves until Close or ctx ends.
func (s *Server) Start(ctx context.Context, addr string) error {
	if err := checkLoopback(addr, s.cfg.AllowRemote); err != nil {
		return err
	}
	for _, path := range s.cfg.Bundles {
		id, err := s.upload(ctx, path)
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.traceIDs = append(s.traceIDs, id)
		s.mu.Unlock()
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("viewer: listen on %s: %w", addr, err)
	}
	s.ln = ln
	s.mu.Lock()
	s.hosts = hostsFor(ln.Addr())
	s.mu.Unlock()
	s.done = make(chan error, 1)
	go func() { s.done <- s.srv.Serve(ln) }()
	go func() {
		select {
		case <-ctx.Done():
			_ = s.Close()
		case <-s.done:
		}
	}()
	return nil
}

func checkLoopback(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("viewer: listen address %q: %w", addr, err)
	}
	if allowRemote {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("viewer: listen address %q is not loopback; the viewer serves traces without authentication (set AllowRemote to listen there anyway)", addr)
	}
	return nil
}

// URL is the page's address once started.
func (s *Server) URL() string {
	if s.ln == nil {
		return ""
	}
	return "http://" + s.ln.Addr().String() + "/"
}

// Token is the per-run API token: every API call must carry it in
// TokenHeader. The page gets it embedded in its HTML; programs driving the
// viewer (tests, the browser harness) may take it from here.
func (s *Server) Token() string { return s.token }

// TraceIDs are the ids the uploaded bundles got, in Config.Bundles order.
func (s *Server) TraceIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.traceIDs...)
}

// Close stops serving.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.live.cancelAll() // a live stream never goes idle by itself
	return s.srv.Shutdown(ctx)
}

// routes are every pattern Handler serves, each with the checks of its
// kind (guard.go).
func (s *Server) routes() []route {
	return []route{
		{"GET /{$}", routePage, http.HandlerFunc(s.page)},
		{"GET /assets/", routeAsset, http.StripPrefix("/assets/", http.FileServerFS(s.cfg.Assets))},
		{"POST /api/ds/query", routeAPI, http.HandlerFunc(s.query)},
		{"/api/datasources/uid/{uid}/resources/{path...}", routeAPI, http.HandlerFunc(s.resource)},
		// the page's "open a bundle file": the file as it is, JSON or gzip
		// (the datasource tells them apart by their first bytes)
		{"POST /api/datasources/uid/{uid}/resources/traces", routeUpload, http.HandlerFunc(s.uploadBundle)},
		{"GET /api/datasources/uid/{uid}/health", routeAPI, http.HandlerFunc(s.health)},
		{"GET /api/live/stream", routeAPI, http.HandlerFunc(s.liveStream)},
		{"POST /api/live/cancel", routeAPI, http.HandlerFunc(s.liveCancel)},
	}
}

// Handler serves the page, the assets and the Grafana API subset, behind
// the host, origin and token checks of guard.go. It answers only once
// Start has bound an address (the Host check needs it).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range s.routes() {
		mux.Handle(rt.pattern, s.guard(rt.kind, rt.handler))
	}
	// Anything else (other paths, other methods, CORS preflights) is
	// checked as an API call too, so a probe from another origin gets the
	// same 403 and never a permissive answer.
	mux.Handle("/", s.guard(routeAPI, http.NotFoundHandler()))
	return mux
}

// pluginContext is every request's: the viewer serves one local operator
// on loopback, who configured the datasource, so it acts as an org Admin
// (pkg/plugin decides what a Grafana role may do, docs/security.md).
func (s *Server) pluginContext() backend.PluginContext {
	st := s.cfg.Settings
	return backend.PluginContext{PluginID: st.Type, DataSourceInstanceSettings: &st,
		User: &backend.User{Login: "local", Role: "Admin"}}
}

func (s *Server) upload(ctx context.Context, path string) (string, error) {
	body, err := s.readFile(path)
	if err != nil {
		return "", fmt.Errorf("viewer: read bundle: %w", err)
	}
	rec := &recorder{header: http.Header{}}
	err = s.cfg.Datasource.CallResource(ctx, &backend.CallResourceRequest{
		PluginContext: s.pluginContext(), Path: "traces", Method: http.MethodPost, URL: "traces", Body: body,
		Headers: map[string][]string{"Content-Type": {"application/octet-stream"}},
	}, rec)
	if err != nil {
		return "", fmt.Errorf("viewer: upload bundle %s: %w", path, err)
	}
	if rec.status != http.StatusOK && rec.status != http.StatusCreated {
		return "", fmt.Errorf("viewer: upload bundle %s: status %d: %s", path, rec.status, strings.TrimSpace(rec.body.String()))
	}
	var out struct {
		TraceID string `json:"traceId"`
	}
	if err := json.Unmarshal(rec.body.Bytes(), &out); err != nil || out.TraceID == "" {
		return "", fmt.Errorf("viewer: upload bundle %s: unexpected answer %q", path, rec.body.String())
	}
	return out.TraceID, nil
}

// recorder collects a CallResource answer.
type recorder struct {
	status int
	header http.Header
	body   bytes.Buffer
}

func (r *recorder) Send(resp *backend.CallResourceResponse) error {
	if resp.Status != 0 {
		r.status = resp.Status
	}
	for k, v := range resp.Headers {
		r.header[k] = append(r.header[k], v...)
	}
	r.body.Write(resp.Body)
	return nil
}

func (s *Server) resource(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("uid") != s.uid {
		writeError(w, http.StatusNotFound, fmt.Sprintf("datasource %q not found", r.PathValue("uid")))
		return
	}
	body, err := s.readBody(w, r)
	if err != nil {
		writeError(w, bodyStatus(err), err.Error())
		return
	}
	path := r.PathValue("path")
	u := path
	if r.URL.RawQuery != "" {
		u += "?" + r.URL.RawQuery
	}
	// the token is the viewer's, not the datasource's business
	headers := r.Header.Clone()
	headers.Del(TokenHeader)
	rec := &recorder{header: http.Header{}}
	if err := s.cfg.Datasource.CallResource(r.Context(), &backend.CallResourceRequest{
		PluginContext: s.pluginContext(), Path: path, Method: r.Method, URL: u, Headers: headers, Body: body,
	}, rec); err != nil {
		s.cfg.Logger.Warn("resource call failed", "path", path, "error", err)
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	w.WriteHeader(rec.status)
	_, _ = w.Write(rec.body.Bytes())
}

// uploadBundle is the resource call of the upload route, whose pattern
// names the path instead of capturing it.
func (s *Server) uploadBundle(w http.ResponseWriter, r *http.Request) {
	r.SetPathValue("path", "traces")
	s.resource(w, r)
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	h, ok := s.cfg.Datasource.(backend.CheckHealthHandler)
	if !ok || r.PathValue("uid") != s.uid {
		writeError(w, http.StatusNotFound, "no health check for this datasource")
		return
	}
	res, err := h.CheckHealth(r.Context(), &backend.CheckHealthRequest{PluginContext: s.pluginContext()})
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	// Grafana's shape: {status: "OK"|"ERROR", message, details}; 400 when not OK
	status := http.StatusOK
	if res.Status != backend.HealthStatusOk {
		status = http.StatusBadRequest
	}
	var details json.RawMessage
	if len(res.JSONDetails) > 0 {
		details = res.JSONDetails
	}
	writeJSON(w, status, map[string]any{"status": res.Status.String(), "message": res.Message, "details": details})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"message": msg})
}

// pageQuery is what the page runs first: from the URL (?query=<query
// JSON>, ?traceId=…, or ?sql=…&database=…), else the first uploaded bundle,
// else Config.Query.
func (s *Server) pageQuery(u *url.URL) map[string]any {
	q := u.Query()
	if raw := q.Get("query"); raw != "" {
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err == nil {
			return m
		}
	}
	if id := q.Get("traceId"); id != "" {
		return map[string]any{"queryType": "bundle", "traceId": id}
	}
	if sql := q.Get("sql"); sql != "" {
		return map[string]any{"queryType": "trace", "sql": sql, "database": q.Get("database")}
	}
	if ids := s.TraceIDs(); len(ids) > 0 {
		return map[string]any{"queryType": "bundle", "traceId": ids[0]}
	}
	return s.cfg.Query
}

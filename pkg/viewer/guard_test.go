package viewer

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// healthDS is fakeDS with a health check, so that every API route has a
// handler whose call the tests can see.
type healthDS struct {
	fakeDS
	healthCalls int
}

func (h *healthDS) CheckHealth(context.Context, *backend.CheckHealthRequest) (*backend.CheckHealthResult, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.healthCalls++
	return &backend.CheckHealthResult{Status: backend.HealthStatusOk, Message: "ok"}, nil
}

// calls counts what reached the datasource.
func (h *healthDS) calls() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.queries) + len(h.resources) + h.healthCalls
}

// syncBuffer is a log sink the server's goroutines write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// apiCall is one concrete request to a registered API route.
type apiCall struct{ method, path string }

// apiCalls turns every API route of the server into concrete requests:
// patterns without a method are tried with GET, POST and DELETE.
func apiCalls(t *testing.T, v *Server) []apiCall {
	t.Helper()
	var out []apiCall
	for _, rt := range v.routes() {
		if rt.kind != routeAPI && rt.kind != routeUpload {
			continue
		}
		methods := []string{http.MethodGet, http.MethodPost, http.MethodDelete}
		path := rt.pattern
		if m, p, ok := strings.Cut(rt.pattern, " "); ok {
			methods, path = []string{m}, p
		}
		path = strings.NewReplacer("{uid}", v.uid, "{path...}", "traces", "{$}", "").Replace(path)
		if strings.Contains(path, "{") {
			t.Fatalf("route %q has a wildcard this test does not fill in", rt.pattern)
		}
		for _, m := range methods {
			out = append(out, apiCall{m, path})
		}
	}
	// the rest of the API space goes to the catch-all, which is guarded too
	out = append(out, apiCall{http.MethodGet, "/api/datasources"}, apiCall{http.MethodPost, "/api/unknown"})
	if len(out) < 6 {
		t.Fatalf("only %d API calls from %d routes", len(out), len(v.routes()))
	}
	return out
}

// request builds a call as the page would make it (own Host, token, JSON);
// edit changes one thing.
func request(t *testing.T, v *Server, c apiCall, edit func(*http.Request)) *http.Request {
	t.Helper()
	var body io.Reader
	if c.method != http.MethodGet {
		body = strings.NewReader(`{"queries":[{"refId":"A","queryType":"trace","sql":"SELECT secret_column FROM t"}]}`)
	}
	req, err := http.NewRequest(c.method, v.URL()+strings.TrimPrefix(c.path, "/"), body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(TokenHeader, v.Token())
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if edit != nil {
		edit(req)
	}
	return req
}

func send(t *testing.T, req *http.Request) (int, http.Header, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func port(t *testing.T, v *Server) string {
	t.Helper()
	_, p, err := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(v.URL(), "http://"), "/"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// badRequests are requests a hostile page can make (CSRF from another
// origin, DNS rebinding, a stolen-nothing guess at the token), each with
// the reason the viewer must give.
func badRequests(t *testing.T, v *Server) map[string]struct {
	edit   func(*http.Request)
	reason string
	nonGET bool // only meaningful with a body
} {
	p := port(t, v)
	other, _ := strconv.Atoi(p)
	otherPort := strconv.Itoa(other%60000 + 1)
	host := func(h string) func(*http.Request) { return func(r *http.Request) { r.Host = h } }
	hdr := func(k, val string) func(*http.Request) { return func(r *http.Request) { r.Header.Set(k, val) } }
	wrong := make([]byte, 32)
	type bad = struct {
		edit   func(*http.Request)
		reason string
		nonGET bool
	}
	return map[string]bad{
		"rebinding host":               {host("evil.example:" + p), whyHost, false},
		"rebinding host, no port":      {host("evil.example"), whyHost, false},
		"host that starts like ours":   {host("localhost.evil.example:" + p), whyHost, false},
		"own IP, other port":           {host("127.0.0.1:" + otherPort), whyHost, false},
		"unspecified address":          {host("0.0.0.0:" + p), whyHost, false},
		"other loopback address":       {host("127.0.0.2:" + p), whyHost, false},
		"cross-site origin":            {hdr("Origin", "http://evil.example"), whyOrigin, false},
		"opaque origin":                {hdr("Origin", "null"), whyOrigin, false},
		"other port's origin":          {hdr("Origin", "http://127.0.0.1:"+otherPort), whyOrigin, false},
		"https origin":                 {hdr("Origin", "https://127.0.0.1:"+p), whyOrigin, false},
		"Sec-Fetch-Site cross-site":    {hdr("Sec-Fetch-Site", "cross-site"), whyOrigin, false},
		"Sec-Fetch-Site same-site":     {hdr("Sec-Fetch-Site", "same-site"), whyOrigin, false},
		"no token":                     {func(r *http.Request) { r.Header.Del(TokenHeader) }, whyToken, false},
		"wrong token of the same size": {hdr(TokenHeader, hex.EncodeToString(wrong)), whyToken, false},
		"token prefix":                 {hdr(TokenHeader, v.Token()[:32]), whyToken, false},
		"text/plain body":              {hdr("Content-Type", "text/plain"), whyContentType, true},
		"form body":                    {hdr("Content-Type", "application/x-www-form-urlencoded"), whyContentType, true},
		"multipart body":               {hdr("Content-Type", "multipart/form-data; boundary=x"), whyContentType, true},
		"no content type":              {func(r *http.Request) { r.Header.Del("Content-Type") }, whyContentType, true},
		// the CSRF a page can send without a preflight: nothing but the body
		"cross-site simple POST": {func(r *http.Request) {
			r.Header.Del(TokenHeader)
			r.Header.Set("Content-Type", "text/plain")
			r.Header.Set("Origin", "http://evil.example")
			r.Header.Set("Sec-Fetch-Site", "cross-site")
		}, whyOrigin, true},
	}
}

// Every API route refuses every hostile request with a 403 naming why,
// before its handler runs, and logs method, path and reason at warn
// without the token or query text.
func TestAPIRefusesHostileRequests(t *testing.T) {
	ds := &healthDS{}
	logs := &syncBuffer{}
	v := start(t, Config{Datasource: ds, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	for _, c := range apiCalls(t, v) {
		for name, bad := range badRequests(t, v) {
			if bad.nonGET && c.method == http.MethodGet {
				continue
			}
			code, _, body := send(t, request(t, v, c, bad.edit))
			var msg struct{ Message string }
			_ = json.Unmarshal([]byte(body), &msg)
			if code != http.StatusForbidden || msg.Message != bad.reason {
				t.Errorf("%s %s, %s: %d %s; want 403 %q", c.method, c.path, name, code, body, bad.reason)
			}
		}
	}
	if n := ds.calls(); n != 0 {
		t.Errorf("refused requests reached the datasource %d times", n)
	}
	log := logs.String()
	if !strings.Contains(log, "level=WARN") || !strings.Contains(log, "method=POST") ||
		!strings.Contains(log, "path=/api/ds/query") || !strings.Contains(log, `reason="host not allowed"`) {
		t.Errorf("refusals not logged with method, path and reason: %.600s", log)
	}
	if strings.Contains(log, v.Token()) || strings.Contains(log, "secret_column") {
		t.Errorf("the log holds the token or query text: %.600s", log)
	}
}

// The page's own calls pass: own Host (as bound or localhost), own Origin,
// the token, JSON.
func TestAPIAcceptsThePagesOwnCalls(t *testing.T) {
	ds := &healthDS{}
	v := start(t, Config{Datasource: ds})
	p := port(t, v)
	for _, h := range []string{"127.0.0.1:" + p, "localhost:" + p, "LocalHost:" + p} {
		for _, c := range apiCalls(t, v) {
			before := ds.calls()
			code, _, body := send(t, request(t, v, c, func(r *http.Request) {
				r.Host = h
				r.Header.Set("Origin", "http://"+h)
				r.Header.Set("Sec-Fetch-Site", "same-origin")
			}))
			if code == http.StatusForbidden {
				t.Errorf("%s %s via %s: refused: %s", c.method, c.path, h, body)
			}
			// the live routes answer from the viewer itself until a
			// stream exists (stream_test.go): passing the guard is the point
			if strings.HasPrefix(c.path, "/api/unknown") || c.path == "/api/datasources" || strings.HasPrefix(c.path, "/api/live/") {
				continue
			}
			if ds.calls() != before+1 {
				t.Errorf("%s %s via %s: %d, the handler did not run: %s", c.method, c.path, h, code, body)
			}
		}
	}
	// the token header stays in the viewer
	ds.mu.Lock()
	defer ds.mu.Unlock()
	for _, r := range ds.resources {
		if _, ok := r.Headers[TokenHeader]; ok {
			t.Fatalf("the token was forwarded to the datasource: %v", r.Headers)
		}
	}
}

// A CORS preflight gets a 403 and no Access-Control-Allow-* header, so the
// browser never sends the real request.
func TestPreflightGetsNoCORS(t *testing.T) {
	ds := &healthDS{}
	v := start(t, Config{Datasource: ds})
	for _, c := range apiCalls(t, v) {
		code, h, _ := send(t, request(t, v, apiCall{http.MethodOptions, c.path}, func(r *http.Request) {
			r.Header.Del(TokenHeader)
			r.Header.Set("Origin", "http://evil.example")
			r.Header.Set("Access-Control-Request-Method", c.method)
			r.Header.Set("Access-Control-Request-Headers", "content-type, "+strings.ToLower(TokenHeader))
		}))
		if code != http.StatusForbidden {
			t.Errorf("OPTIONS %s: %d, want 403", c.path, code)
		}
		for k := range h {
			if strings.HasPrefix(k, "Access-Control-") {
				t.Errorf("OPTIONS %s answers %s: %v", c.path, k, h[k])
			}
		}
	}
	if ds.calls() != 0 {
		t.Errorf("preflights reached the datasource")
	}
}

// The page carries the token: it is refused to a rebinding Host and to
// cross-site navigations and frames (which would also run a ?sql= trace
// on the user's behalf); the assets need no token but the right Host.
func TestPageAndAssetsGuards(t *testing.T) {
	v := start(t, Config{Datasource: &healthDS{}})
	p := port(t, v)
	page := apiCall{http.MethodGet, "/?sql=SELECT%201"}
	code, h, body := send(t, request(t, v, page, func(r *http.Request) { r.Header.Del(TokenHeader) }))
	if code != 200 || !strings.Contains(body, `"token":"`+v.Token()+`"`) {
		t.Fatalf("own page: %d, token missing: %.300s", code, body)
	}
	if h.Get("X-Frame-Options") != "DENY" || !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("the page may be framed: %v", h)
	}
	for name, edit := range map[string]func(*http.Request){
		"rebinding host":            func(r *http.Request) { r.Host = "evil.example:" + p },
		"cross-site navigation":     func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") },
		"same-site (another port)":  func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "same-site") },
		"cross-origin fetch/iframe": func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") },
	} {
		code, _, body := send(t, request(t, v, page, func(r *http.Request) { r.Header.Del(TokenHeader); edit(r) }))
		if code != http.StatusForbidden || strings.Contains(body, v.Token()) {
			t.Errorf("page, %s: %d %.200s", name, code, body)
		}
	}
	asset := apiCall{http.MethodGet, "/assets/harness.js"}
	if code, _, _ := send(t, request(t, v, asset, func(r *http.Request) { r.Header.Del(TokenHeader) })); code != 200 {
		t.Errorf("asset without token: %d", code)
	}
	if code, _, _ := send(t, request(t, v, asset, func(r *http.Request) { r.Host = "evil.example:" + p })); code != http.StatusForbidden {
		t.Errorf("asset via a rebinding host: %d", code)
	}
}

func TestTokenIsRandomPerRun(t *testing.T) {
	a, b := start(t, Config{Datasource: &fakeDS{}}), start(t, Config{Datasource: &fakeDS{}})
	if len(a.Token()) != 64 || a.Token() == b.Token() {
		t.Errorf("tokens %q %q: want 64 hex characters, different per run", a.Token(), b.Token())
	}
	if _, err := hex.DecodeString(a.Token()); err != nil {
		t.Errorf("token %q: %v", a.Token(), err)
	}
}

func TestHostsForBoundAddress(t *testing.T) {
	for _, tc := range []struct {
		addr     net.TCPAddr
		allow    []string
		disallow []string
	}{
		{net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 8080}, []string{"127.0.0.1:8080", "localhost:8080"},
			[]string{"[::1]:8080", "127.0.0.1", "127.0.0.1:80", "evil.example:8080", ""}},
		{net.TCPAddr{IP: net.ParseIP("::1"), Port: 9}, []string{"[::1]:9", "localhost:9"}, []string{"127.0.0.1:9", "::1:9"}},
		{net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 80}, []string{"127.0.0.1", "localhost", "127.0.0.1:80"}, []string{"evil.example"}},
		// AllowRemote on a wildcard: IP literals with the port (cannot be rebound), never a name but localhost
		{net.TCPAddr{IP: net.IPv4zero, Port: 7}, []string{"10.1.2.3:7", "[fe80::1]:7", "localhost:7"},
			[]string{"10.1.2.3:8", "evil.example:7", "[fe80::1%25eth0]:7"}},
	} {
		hs := hostsFor(&tc.addr)
		for _, h := range tc.allow {
			if !hs.allows(h) {
				t.Errorf("bound to %v: %q refused", &tc.addr, h)
			}
		}
		for _, h := range tc.disallow {
			if hs.allows(h) {
				t.Errorf("bound to %v: %q allowed", &tc.addr, h)
			}
		}
	}
}

// FuzzRefusal: whatever the headers, a request passes the API guard only
// with the exact token and an allowed Host.
func FuzzRefusal(f *testing.F) {
	s := &Server{token: strings.Repeat("ab", 32), hosts: hostsFor(&net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 5000})}
	f.Add("127.0.0.1:5000", "", "", strings.Repeat("ab", 32), "application/json", "POST")
	f.Add("evil.example:5000", "http://evil.example", "cross-site", "", "text/plain", "POST")
	f.Add("localhost:5000", "http://localhost:5000", "same-origin", strings.Repeat("ab", 32), "", "GET")
	f.Fuzz(func(t *testing.T, host, origin, site, token, ctype, method string) {
		r, err := http.NewRequest(http.MethodGet, "http://127.0.0.1:5000/api/ds/query", nil)
		if err != nil {
			t.Skip()
		}
		r.Method, r.Host = method, host
		for k, val := range map[string]string{"Origin": origin, "Sec-Fetch-Site": site, TokenHeader: token, "Content-Type": ctype} {
			if val != "" {
				r.Header.Set(k, val)
			}
		}
		if s.refusal(routeAPI, r) != "" {
			return
		}
		if token != s.token || !s.hosts.allows(host) || (site != "" && site != "same-origin" && site != "none") {
			t.Errorf("accepted host %q origin %q site %q token %q", host, origin, site, token)
		}
		if origin != "" && !strings.EqualFold(origin, "http://"+host) {
			t.Errorf("accepted origin %q for host %q", origin, host)
		}
	})
}

package viewer

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// Any web page the user has open can send requests to a loopback port: a
// "simple" cross-site POST (text/plain, no custom header) needs no CORS
// preflight, so it reaches the handler even though the page cannot read
// the answer (CSRF); and a page whose own host name is re-pointed to
// 127.0.0.1 (DNS rebinding) is same-origin with the viewer as far as the
// browser knows, and can read every answer. The guard below refuses both
// (docs/security.md, "The local viewer"):
//
//   - Host must be the address the viewer is bound to (or localhost with
//     its port): a rebinding page's requests carry its own host name.
//   - Origin, when sent, must be the viewer's own origin, and
//     Sec-Fetch-Site must not say cross-site or same-site.
//   - API calls carry a per-run random token in TokenHeader. The page gets
//     it inside the served HTML, which another origin cannot read, so no
//     other page can learn it; a cookie would be sent by the browser on a
//     forged request, a header is not.
//   - State-changing API calls must be application/json, which a page can
//     only send cross-origin after a preflight, which the guard refuses.
//     The bundle upload (POST …/resources/traces, the page's "open a
//     bundle file") may also be application/gzip: the file goes up as it
//     is, and gzip is not a CORS-safelisted type either, so it needs the
//     same refused preflight.

// TokenHeader is the request header that carries the viewer's per-run
// token on every API call.
const TokenHeader = "X-QueryReplay-Token"

// Why a request was refused: the 403 answer's message and the log line
// (named why… so that internal/releasecheck holds docs/troubleshooting.md
// to them).
const (
	whyHost        = "host not allowed"
	whyOrigin      = "origin not allowed"
	whyToken       = "missing or wrong token"
	whyContentType = "content type must be application/json (or application/gzip for a bundle upload)"
)

// routeKind says which checks a route gets.
type routeKind int

const (
	// routeAPI: host, origin, token and (unless GET/HEAD) content type —
	// the default, so a route added without thought is guarded fully.
	routeAPI routeKind = iota
	// routePage: host and origin; the page carries the token, so it must
	// never reach another origin or a cross-site frame or navigation.
	routePage
	// routeAsset: host only (the JS and CSS bundle, public anyway).
	routeAsset
	// routeUpload: as routeAPI, but the body may also be a gzip bundle.
	routeUpload
)

// route is one registered pattern of Handler.
type route struct {
	pattern string
	kind    routeKind
	handler http.Handler
}

// newToken returns 32 random bytes as hex.
func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("viewer: make the page token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// hostSet is the Host header values the viewer answers to, known once it
// listens.
type hostSet struct {
	port string
	// exact holds host:port forms; anyIP accepts any IP literal with the
	// port (a wildcard bind with AllowRemote: an IP literal cannot be
	// rebound, and the token still guards the API).
	exact map[string]bool
	anyIP bool
}

// hostsFor lists the Host values for a bound address: its own
// host:port, localhost:port when it is loopback, and the bare host when
// the port is 80 (browsers leave the default port out).
func hostsFor(addr net.Addr) hostSet {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return hostSet{exact: map[string]bool{strings.ToLower(addr.String()): true}}
	}
	port := strconv.Itoa(tcp.Port)
	hs := hostSet{port: port, exact: map[string]bool{}, anyIP: tcp.IP.IsUnspecified()}
	add := func(host string) {
		hs.exact[net.JoinHostPort(host, port)] = true
		if port == "80" {
			hs.exact[host] = true
		}
	}
	add(tcp.IP.String())
	if tcp.IP.IsLoopback() || tcp.IP.IsUnspecified() {
		add("localhost")
	}
	return hs
}

// allows says whether a Host header names this viewer.
func (hs hostSet) allows(host string) bool {
	host = strings.ToLower(host)
	if hs.exact[host] {
		return true
	}
	if !hs.anyIP {
		return false
	}
	h, p, err := net.SplitHostPort(host)
	return err == nil && p == hs.port && net.ParseIP(h) != nil && !strings.Contains(h, "%")
}

// guard wraps a route's handler with the checks its kind needs.
func (s *Server) guard(kind routeKind, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if reason := s.refusal(kind, r); reason != "" {
			// the path only: the query string may hold SQL (?sql=…)
			s.cfg.Logger.Warn("viewer refused a request", "method", r.Method, "path", r.URL.Path, "reason", reason)
			w.Header().Set("X-Content-Type-Options", "nosniff")
			writeError(w, http.StatusForbidden, reason)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refusal returns why a request is refused, or "".
func (s *Server) refusal(kind routeKind, r *http.Request) string {
	s.mu.Lock()
	hosts := s.hosts
	s.mu.Unlock()
	if !hosts.allows(r.Host) {
		return whyHost
	}
	if kind == routeAsset {
		return ""
	}
	if !sameOrigin(r) {
		return whyOrigin
	}
	if kind == routePage {
		return ""
	}
	got := r.Header.Get(TokenHeader)
	if subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) != 1 {
		return whyToken
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || !(mt == "application/json" || kind == routeUpload && mt == "application/gzip") {
			return whyContentType
		}
	}
	return ""
}

// sameOrigin checks Origin (sent on every cross-origin request and on
// same-origin POSTs) against the viewer's own origin for the Host the
// request used (already checked), and Sec-Fetch-Site, which browsers set
// on every request, including navigations and GETs without Origin.
func sameOrigin(r *http.Request) bool {
	if o, ok := r.Header["Origin"]; ok && (len(o) != 1 || !strings.EqualFold(o[0], "http://"+r.Host)) {
		return false
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none": // none: typed, bookmarked or opened from another program
		return true
	default: // cross-site, same-site (another port on 127.0.0.1), or anything unknown
		return false
	}
}

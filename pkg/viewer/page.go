package viewer

import (
	"encoding/json"
	"html/template"
	"net/http"
)

// The page: the harness bundle reads its configuration from
// window.__QUERYREPLAY_VIEWER__ (the datasource to query and the first
// query). The panel fills the window and follows it when it is resized;
// the URL may fix a size and pick the theme (?width=&height=&theme=).
var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>QueryReplay</title>
<link rel="stylesheet" href="/assets/harness.css">
<style>html, body { margin: 0; height: 100%; overflow: hidden; }</style>
</head>
<body>
<div id="root"></div>
<script>window.__QUERYREPLAY_VIEWER__ = {{.}};
// what @grafana/runtime's config falls back to outside Grafana, given so
// that it does not log an error on every load
window.grafanaBootData = {assets: {dark: "", light: ""}, settings: {}, user: {}, navTree: []};</script>
<script src="/assets/harness.js"></script>
</body>
</html>
`))

// PageConfig is what the page learns from the server.
type PageConfig struct {
	Datasource struct {
		UID  string `json:"uid"`
		Type string `json:"type"`
	} `json:"datasource"`
	Query    map[string]any `json:"query"`
	TraceIDs []string       `json:"traceIds"`
	// Settings are the datasource settings the page's query form reads
	// (pageSettings: what may be offered, never where the server is).
	Settings map[string]any `json:"settings"`
	// MaxUploadBytes is the request body bound: the page refuses a bundle
	// file larger than this before sending it (the server refuses it too).
	MaxUploadBytes int64 `json:"maxUploadBytes"`
	// Token goes in TokenHeader on every API call. It travels only in
	// this HTML, which no other origin can read (not an API answer, not a
	// cookie a forged request would carry).
	Token string `json:"token"`
}

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	var c PageConfig
	c.Datasource.UID = s.uid
	c.Datasource.Type = s.cfg.Settings.Type
	c.Query = s.pageQuery(r.URL)
	c.TraceIDs = s.TraceIDs()
	c.Token = s.token
	c.Settings = pageSettings(s.cfg.Settings.JSONData)
	c.MaxUploadBytes = s.bodyLimit("").Limit
	b, err := json.Marshal(c)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	// the page holds the token: no other site may frame it
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "frame-ancestors 'none'")
	w.Header().Set("Referrer-Policy", "no-referrer")
	// template.JS inserts the JSON as it is; json.Marshal escapes <, > and &
	// (\u003c …), so nothing in it can close the script element
	_ = pageTemplate.Execute(w, template.JS(b))
}

// pageKeys are the settings the page's query form reads: which trace
// options the datasource allows, its default database and the bundle
// bound. The host, user, store paths and the rest stay on the server.
var pageKeys = []string{"database", "allowBufferPoolClear", "allowModifications", "maxQueryMB"}

// pageSettings picks pageKeys (and traceStore.maxBundleMB) out of the
// datasource's JSON settings; unreadable settings give none.
func pageSettings(jsonData []byte) map[string]any {
	out := map[string]any{}
	var all map[string]any
	if len(jsonData) == 0 || json.Unmarshal(jsonData, &all) != nil {
		return out
	}
	for _, k := range pageKeys {
		if v, ok := all[k]; ok {
			out[k] = v
		}
	}
	if ts, ok := all["traceStore"].(map[string]any); ok {
		if mb, ok := ts["maxBundleMB"]; ok {
			out["traceStore"] = map[string]any{"maxBundleMB": mb}
		}
	}
	return out
}

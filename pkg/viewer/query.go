package viewer

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// dsQueryRequest is the body of Grafana's POST /api/ds/query.
type dsQueryRequest struct {
	Queries []json.RawMessage `json:"queries"`
	From    string            `json:"from"`
	To      string            `json:"to"`
}

// queryHead is the part of each query Grafana itself reads.
type queryHead struct {
	RefID         string  `json:"refId"`
	QueryType     string  `json:"queryType"`
	MaxDataPoints int64   `json:"maxDataPoints"`
	IntervalMs    float64 `json:"intervalMs"`
	Datasource    *struct {
		UID string `json:"uid"`
	} `json:"datasource"`
}

// parseTime reads from/to as epoch milliseconds (what the page and
// Grafana's frontend send once a range is resolved).
func parseTime(s string, def time.Time) (time.Time, error) {
	if s == "" {
		return def, nil
	}
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("time %q is not epoch milliseconds", s)
	}
	return time.UnixMilli(ms), nil
}

// toQueryData converts a /api/ds/query body into the SDK request, as
// Grafana's query service does.
func (s *Server) toQueryData(body []byte) (*backend.QueryDataRequest, error) {
	var req dsQueryRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("request body: %w", err)
	}
	if len(req.Queries) == 0 {
		return nil, fmt.Errorf("request has no queries")
	}
	now := time.Now()
	from, err := parseTime(req.From, now.Add(-time.Hour))
	if err != nil {
		return nil, err
	}
	to, err := parseTime(req.To, now)
	if err != nil {
		return nil, err
	}
	out := &backend.QueryDataRequest{PluginContext: s.pluginContext()}
	for i, raw := range req.Queries {
		var h queryHead
		if err := json.Unmarshal(raw, &h); err != nil {
			return nil, fmt.Errorf("query %d: %w", i, err)
		}
		if h.Datasource != nil && h.Datasource.UID != "" && h.Datasource.UID != s.uid {
			return nil, fmt.Errorf("query %s: datasource %q not found (this viewer serves %q)", h.RefID, h.Datasource.UID, s.uid)
		}
		if h.RefID == "" {
			h.RefID = fmt.Sprintf("Q%d", i)
		}
		out.Queries = append(out.Queries, backend.DataQuery{
			RefID: h.RefID, QueryType: h.QueryType, MaxDataPoints: h.MaxDataPoints,
			Interval:  time.Duration(h.IntervalMs * float64(time.Millisecond)),
			TimeRange: backend.TimeRange{From: from, To: to}, JSON: raw,
		})
	}
	return out, nil
}

// query answers POST /api/ds/query: 200 with every result, or — as Grafana
// does by default — 400 with the same body when any query failed.
func (s *Server) query(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		writeError(w, bodyStatus(err), err.Error())
		return
	}
	req, err := s.toQueryData(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	resp, err := s.cfg.Datasource.QueryData(r.Context(), req)
	if err != nil {
		s.cfg.Logger.Warn("query failed", "error", err)
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	status := http.StatusOK
	for _, dr := range resp.Responses {
		if dr.Error != nil {
			status = http.StatusBadRequest
		}
	}
	b, err := json.Marshal(resp)
	if err != nil {
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("encode response: %v", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

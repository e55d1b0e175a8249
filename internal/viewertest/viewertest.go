// Package viewertest wires pkg/viewer to the real datasource (pkg/plugin)
// against the stand-in SQL Server, for the viewer's own tests, the browser
// test harness (make test-browser) and the browser performance check
// (make perf-browser). It also writes large synthetic trace bundles through
// the real parsers (standin.GenerateTrace → pkg/xe → pkg/timeline).
//
// It is test and command support only: production code never imports it,
// because it imports the stand-in.
package viewertest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/plugin"
	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/timeline"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// Stack is a running stand-in and a datasource instance configured for it.
type Stack struct {
	Standin    *standin.Running
	Datasource *plugin.Datasource
	Settings   backend.DataSourceInstanceSettings
}

// StartStack starts the stand-in on loopback and a datasource whose trace
// store lives in storeDir. extra jsonData keys override the defaults.
func StartStack(ctx context.Context, storeDir string, extra map[string]any) (*Stack, error) {
	return StartStackWith(ctx, storeDir, extra, standin.Options{})
}

// StartStackWith is StartStack with the stand-in's options (persona,
// module builds for call stacks); the XEL encoder is always set.
func StartStackWith(ctx context.Context, storeDir string, extra map[string]any, opts standin.Options) (*Stack, error) {
	opts.XELEncoder = xe.EncodeXMLAsXEL
	run, err := standin.Start(ctx, "127.0.0.1:0", opts)
	if err != nil {
		return nil, fmt.Errorf("start stand-in: %w", err)
	}
	st, err := settingsFor(run, storeDir, extra)
	if err != nil {
		run.Close()
		return nil, err
	}
	inst, err := plugin.NewDatasource(ctx, st)
	if err != nil {
		run.Close()
		return nil, fmt.Errorf("datasource: %w", err)
	}
	return &Stack{Standin: run, Datasource: inst.(*plugin.Datasource), Settings: st}, nil
}

func settingsFor(run *standin.Running, storeDir string, extra map[string]any) (backend.DataSourceInstanceSettings, error) {
	u, err := url.Parse(run.DSN)
	if err != nil {
		return backend.DataSourceInstanceSettings{}, fmt.Errorf("stand-in DSN: %w", err)
	}
	host, port, err := net.SplitHostPort(run.Addr)
	if err != nil {
		return backend.DataSourceInstanceSettings{}, err
	}
	p, _ := strconv.Atoi(port)
	password, _ := u.User.Password()
	j := map[string]any{"host": host, "port": p, "user": u.User.Username(), "database": u.Query().Get("database"),
		"encrypt": "disable", "traceStore": map[string]any{"directory": storeDir}, "maxEvents": 2_000_000}
	for k, v := range extra {
		j[k] = v
	}
	b, err := json.Marshal(j)
	if err != nil {
		return backend.DataSourceInstanceSettings{}, err
	}
	return backend.DataSourceInstanceSettings{UID: "queryreplay", Type: plugin.PluginID, Name: "QueryReplay (stand-in)",
		JSONData: b, DecryptedSecureJSONData: map[string]string{"password": password}, Updated: time.Now()}, nil
}

// Close disposes the datasource and stops the stand-in.
func (s *Stack) Close() {
	s.Datasource.Dispose()
	_ = s.Standin.Close()
}

// GenerateBundle builds the trace of the stand-in's synthetic query over
// `pages` pages and `operators` operators (five events per page, so 200,000
// pages give 1,000,000 events) with the real event decoder and timeline
// builder, and writes it as a gzip bundle. It returns the event count.
func GenerateBundle(path string, pages, operators int) (int, error) {
	g, err := standin.GenerateTrace(pages, operators)
	if err != nil {
		return 0, err
	}
	plan, err := showplan.ParseBytes([]byte(g.PlanXML))
	if err != nil {
		return 0, fmt.Errorf("generated plan: %w", err)
	}
	b, err := timeline.NewBuilder(plan, nil, nil, &timeline.Options{Statement: -1, ExpectedEvents: len(g.Events)})
	if err != nil {
		return 0, err
	}
	var all strings.Builder
	for _, e := range g.Events {
		all.WriteString(e.XML)
		all.WriteByte('\n')
	}
	n := 0
	for ev, err := range xe.NewDecoder(strings.NewReader(all.String())).All() {
		if err != nil {
			return 0, fmt.Errorf("decode generated event %d: %w", n, err)
		}
		b.Add(&ev)
		n++
	}
	tr, err := b.Build()
	if err != nil {
		return 0, err
	}
	generated := &bundle.Bundle{Format: bundle.Format, Version: bundle.Version,
		SQL:    fmt.Sprintf("-- synthetic: %d pages through %d operators (standin.GenerateTrace)", pages, operators),
		Server: bundle.ServerInfo{ProductVersion: "16.0.4135.4", EngineEdition: 3, Database: "QueryReplayDemo"},
		Run:    bundle.RunInfo{StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Groups: bundle.AllEventGroups(), ReadBack: "generated"},
		Result: bundle.Result{Events: int64(n)}, Plan: g.PlanXML, Trace: tr}
	if err := bundle.Save(path, generated); err != nil {
		return 0, err
	}
	return n, nil
}

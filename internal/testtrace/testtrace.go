// Package testtrace builds real traces for tests and benchmarks without a
// server: the stand-in's synthetic events (standin.GenerateTrace) decoded
// by pkg/xe and rebuilt by pkg/timeline, wrapped in a tracer bundle.
//
// Test-only: production code must not import it (it imports the stand-in).
package testtrace

import (
	"fmt"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/timeline"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// Generated returns a bundle of a synthetic query over pages data pages
// (five events each) run by a plan of operators operators, with its plan
// XML, as if traced with every event group.
func Generated(pages, operators int) (*bundle.Bundle, error) {
	g, err := standin.GenerateTrace(pages, operators)
	if err != nil {
		return nil, err
	}
	plan, err := showplan.ParseBytes([]byte(g.PlanXML))
	if err != nil {
		return nil, fmt.Errorf("generated plan: %w", err)
	}
	b, err := timeline.NewBuilder(plan, nil, nil, &timeline.Options{Statement: -1, ExpectedEvents: len(g.Events)})
	if err != nil {
		return nil, err
	}
	var all strings.Builder
	for _, e := range g.Events {
		all.WriteString(e.XML)
		all.WriteByte('\n')
	}
	dec := xe.NewDecoder(strings.NewReader(all.String()))
	for ev, err := range dec.All() {
		if err != nil {
			return nil, fmt.Errorf("decode generated events: %w", err)
		}
		b.Add(&ev)
	}
	tr, err := b.Build()
	if err != nil {
		return nil, err
	}
	return &bundle.Bundle{Format: bundle.Format, Version: bundle.Version, SQL: "SELECT generated",
		Server: bundle.ServerInfo{ProductVersion: "14.0.3192.2", EngineEdition: 3, Database: "QueryReplayDemo"},
		Run:    bundle.RunInfo{StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Groups: bundle.AllEventGroups()},
		Result: bundle.Result{Events: int64(len(g.Events))}, Plan: g.PlanXML, Trace: tr}, nil
}

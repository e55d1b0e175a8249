package tracer

import (
	"context"
	"log/slog"
	"time"

	"github.com/queryreplay/queryreplay/pkg/bundle"
)

// ReadOnlyPolicy refuses every batch that modifies data and never clears
// the buffer pool: the exporter's probes run under it.
var ReadOnlyPolicy = Policy{Modifications: ModificationsRefuse}

// ExporterTracing is the tracer as the exporter's probes and start-up
// sweep use it (it implements pkg/exporter's Tracing without importing the
// exporter: the command wires the two). Every connection has network
// deadlines (NewDSNOpener); nothing is pooled.
type ExporterTracing struct{}

// TraceReadOnly traces sql once on dsn under ReadOnlyPolicy.
func (ExporterTracing) TraceReadOnly(ctx context.Context, log *slog.Logger, dsn, sql, database string, timeout time.Duration, events bundle.EventGroups) (*bundle.Bundle, error) {
	opener, err := NewDSNOpener(dsn)
	if err != nil {
		return nil, err
	}
	return New(opener, ReadOnlyPolicy, log).Trace(ctx, Options{SQL: sql, Database: database, Timeout: timeout, Events: events})
}

// SweepOrphans drops on dsn the trace sessions whose owner is gone, after
// DefaultGracePeriod (Tracer.SweepOrphans).
func (ExporterTracing) SweepOrphans(ctx context.Context, log *slog.Logger, dsn string) (int, error) {
	opener, err := NewDSNOpener(dsn)
	if err != nil {
		return 0, err
	}
	return New(opener, ReadOnlyPolicy, log).SweepOrphans(ctx, DefaultGracePeriod)
}

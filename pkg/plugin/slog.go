package plugin

import (
	"context"
	"log/slog"

	"github.com/grafana/grafana-plugin-sdk-go/backend/log"
)

// sdkHandler is a slog.Handler writing to the SDK's logger, so that the
// tracer's and the store's slog lines reach Grafana's plugin log.
type sdkHandler struct {
	l     log.Logger
	attrs []any
}

func newSlog(l log.Logger) *slog.Logger { return slog.New(&sdkHandler{l: l}) }

func (h *sdkHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *sdkHandler) Handle(_ context.Context, r slog.Record) error {
	args := append([]any(nil), h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		args = append(args, a.Key, a.Value.Any())
		return true
	})
	switch {
	case r.Level >= slog.LevelError:
		h.l.Error(r.Message, args...)
	case r.Level >= slog.LevelWarn:
		h.l.Warn(r.Message, args...)
	case r.Level >= slog.LevelInfo:
		h.l.Info(r.Message, args...)
	default:
		h.l.Debug(r.Message, args...)
	}
	return nil
}

func (h *sdkHandler) WithAttrs(as []slog.Attr) slog.Handler {
	n := &sdkHandler{l: h.l, attrs: append([]any(nil), h.attrs...)}
	for _, a := range as {
		n.attrs = append(n.attrs, a.Key, a.Value.Any())
	}
	return n
}

// WithGroup flattens groups: the SDK logger has none.
func (h *sdkHandler) WithGroup(string) slog.Handler { return h }

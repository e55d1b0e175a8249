package showplan

import (
	"fmt"
	"io"

	"github.com/queryreplay/queryreplay/pkg/sizelimit"
)

// DefaultMaxPlanBytes bounds a plan document read from a file or stream
// (docs/security.md "Input size limits"). Real plans are a few MB; it
// matches the bound of one event (pkg/xe DefaultMaxEventSize), which is
// what carries a plan out of a trace.
const DefaultMaxPlanBytes = 256 << 20

// Read parses a showplan document from r, of at most limit.Limit bytes
// (0: DefaultMaxPlanBytes); more is a *sizelimit.Error naming limit.Knob.
// It is the entry point for plans that come from outside (a .sqlplan
// file): ParseBytes takes bytes someone already holds.
func Read(r io.Reader, limit sizelimit.Error) (*Plan, error) {
	if limit.Limit <= 0 {
		limit.Limit = DefaultMaxPlanBytes
	}
	if limit.What == "" {
		limit.What = "the plan"
	}
	data, err := sizelimit.ReadAll(r, limit)
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	return ParseBytes(data)
}

package standin

import (
	"github.com/queryreplay/queryreplay/internal/standin/engine"
)

// sqlValues gives the event-session predicates (xevents) the engine's value
// semantics, so a predicate compares and matches as a WHERE clause would.
type sqlValues struct{}

// Compare orders two non-NULL values (compareValues); a failed conversion
// is an error, never a typed nil.
func (sqlValues) Compare(a, b any) (int, error) {
	c, err := engine.CompareValues(a, b)
	if err != nil {
		return 0, err
	}
	return c, nil
}

func (sqlValues) String(v any) string { return engine.ValueString(v) }

func (sqlValues) Like(s, pattern string) bool { return engine.LikeMatch(s, pattern) }

package standin

import "github.com/queryreplay/queryreplay/internal/standin/sqlfront"

// IdentifierStarts lexes a batch with the stand-in's own lexer and returns
// the byte offset and text of every identifier or keyword token; see
// sqlfront.IdentifierStarts. It stays here because the differential tests
// in pkg/tracer and pkg/tsql name the stand-in, not its front end.
func IdentifierStarts(sql string) ([]int, []string, error) {
	return sqlfront.IdentifierStarts(sql)
}

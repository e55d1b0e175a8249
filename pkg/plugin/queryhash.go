package plugin

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/queryreplay/queryreplay/pkg/sqlconn"
)

// lookupTimeout bounds the look-up of a query hash's statement (the plan
// cache, then Query Store database by database).
const lookupTimeout = 30 * time.Second

// resolveQueryHash fills a trace query given by query hash (JSON field
// queryHash, "0x" and 16 hex digits as the exporter's labels write it) with
// the statement it names: looked up on the datasource's server in the plan
// cache, else in the Query Store of the query's database (or the
// datasource's default database, or every database with Query Store on),
// through pkg/sqlconn. The statement is traced like any batch — the same
// classifier, policy and limits — and a parameterized one runs with its
// declared parameters and the values its cached plan was compiled for,
// passed as arguments (tracer.Options.Params), never spliced into the text.
func (d *Datasource) resolveQueryHash(ctx context.Context, m Query) (Query, *sqlconn.Params, error) {
	if m.QueryType != QueryTrace {
		return m, nil, pluginErr(backend.StatusBadRequest, "queryHash is for trace queries, not %s", m.QueryType)
	}
	if strings.TrimSpace(m.SQL) != "" {
		return m, nil, pluginErr(backend.StatusBadRequest, "give sql or queryHash, not both")
	}
	hash, err := sqlconn.ParseQueryHash(strings.TrimSpace(m.QueryHash))
	if err != nil {
		return m, nil, pluginErr(backend.StatusBadRequest, "queryHash: %v", err)
	}
	lctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	conn, err := d.opener.Open(lctx)
	if err != nil {
		return m, nil, downstreamErr(backend.StatusBadGateway, "look up query hash %s: connect: %v", sqlconn.FormatQueryHash(hash), err)
	}
	defer conn.Close()
	var dbs []string
	if db := firstNonEmpty(m.Database, d.settings.Database); db != "" {
		dbs = []string{db}
	}
	st, err := sqlconn.LookupStatement(lctx, conn, hash, dbs)
	if errors.Is(err, sqlconn.ErrNotFound) {
		return m, nil, downstreamErr(backend.StatusNotFound, "query hash %s was not found: %v", sqlconn.FormatQueryHash(hash), err)
	}
	if err != nil {
		return m, nil, downstreamErr(backend.StatusBadGateway, "look up query hash %s: %v", sqlconn.FormatQueryHash(hash), err)
	}
	m.SQL = st.Text
	if m.Database == "" {
		m.Database = st.Database
	}
	d.log.FromContext(ctx).Info("query hash looked up", "queryHash", sqlconn.FormatQueryHash(hash), "source", st.Source, "parameters", paramCount(st.Params))
	return m, st.Params, nil
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func paramCount(p *sqlconn.Params) int {
	if p == nil {
		return 0
	}
	return len(p.List)
}

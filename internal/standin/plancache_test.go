package standin

import (
	"encoding/binary"
	"hash/fnv"
	"testing"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// A statement executed twice is one plan cache entry with two
// executions, whose query hash is the one its events carry and whose text,
// cut at the statement offsets, is the statement; a restart empties it.
func TestPlanCacheShowsScenarioStatements(t *testing.T) {
	srv := New(Options{})
	c := session(t, srv, 60)
	var sortSpill Scenario
	for _, sc := range Scenarios() {
		if sc.Name == "sort_spill" {
			sortSpill = sc
		}
	}
	batch := "SET NOCOUNT ON; " + sortSpill.SQL
	mustRun(t, c, batch)
	mustRun(t, c, batch)
	r := mustRun(t, c, "SELECT qs.query_hash, qs.execution_count, qs.statement_start_offset, qs.statement_end_offset, st.text "+
		"FROM sys.dm_exec_query_stats AS qs CROSS APPLY sys.dm_exec_sql_text(qs.sql_handle) AS st")
	var rows [][]any
	for _, row := range r.sets[len(r.sets)-1].rows {
		if row[4] == batch {
			rows = append(rows, row)
		}
	}
	if len(rows) != 1 {
		t.Fatalf("%d plan cache rows for the batch, want 1: %v", len(rows), rows)
	}
	row := rows[0]
	h := fnv.New64a()
	h.Write([]byte(sqlfront.NormalizeSQL(sortSpill.SQL)))
	if got := binary.BigEndian.Uint64(row[0].([]byte)); got != h.Sum64() {
		t.Errorf("query_hash %x, want %x", got, h.Sum64())
	}
	if row[1] != int64(2) {
		t.Errorf("execution_count %v, want 2", row[1])
	}
	text := []rune(row[4].(string))
	start, end := row[2].(int64)/2, row[3].(int64)/2
	if got := string(text[start : end+1]); got != sortSpill.SQL {
		t.Errorf("statement by offsets %q, want %q", got, sortSpill.SQL)
	}
	srv.Restart()
	c = session(t, srv, 61)
	r = mustRun(t, c, "SELECT COUNT(*) FROM sys.dm_exec_query_stats AS qs CROSS APPLY sys.dm_exec_sql_text(qs.sql_handle) AS st WHERE st.text LIKE N'SET NOCOUNT ON;%'")
	if n := r.sets[len(r.sets)-1].rows[0][0]; n != int64(0) {
		t.Errorf("after a restart the plan cache has %v entries", n)
	}
}

func scenarioByName(name string) *Scenario {
	for _, s := range scenarios {
		if s.Name == name {
			return s
		}
	}
	return nil
}

package standin

import "time"

// DemoTable is one table of the demo database as the generator makes it:
// its column names and rows (values as the engine holds them: int64,
// float64, string, time.Time). Tests compute expected query results from
// these independently of the engine.
type DemoTable struct {
	Name    string
	Columns []string
	Rows    [][]any
}

// DemoData returns the demo database's tables (dbo.Customers, dbo.Products,
// dbo.Orders, dbo.OrderLines) as freshly generated, keyed by table name.
func DemoData() map[string]DemoTable {
	db := newDemoDatabase(time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC))
	out := map[string]DemoTable{}
	for _, t := range db.Tables {
		dt := DemoTable{Name: t.Name}
		for _, c := range t.Columns {
			dt.Columns = append(dt.Columns, c.Name)
		}
		for _, r := range t.Rows {
			dt.Rows = append(dt.Rows, append([]any{}, r...))
		}
		out[t.Name] = dt
	}
	return out
}

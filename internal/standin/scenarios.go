package standin

// Scenario is one demo query: the SQL text, and the plan SQL Server would
// choose for it on the demo database. When a batch statement matches a
// scenario's SQL (compared token by token, ignoring case, spacing and
// comments), the stand-in executes it for real (rows, modifications) and
// emits the events of that plan's execution.
type Scenario struct {
	Name        string `json:"name"`
	SQL         string `json:"sql"`
	Description string `json:"description"`
	norm        string
}

var scenarios = []*Scenario{
	{Name: "clustered_index_scan", SQL: "SELECT OrderID, CustomerID, OrderDate, Amount FROM dbo.Orders WHERE Amount > 2500",
		Description: "Clustered index scan of dbo.Orders with a residual predicate."},
	{Name: "seek_key_lookup", SQL: "SELECT o.OrderID, o.OrderDate, o.Amount FROM dbo.Orders AS o WHERE o.CustomerID = 42",
		Description: "Nonclustered index seek on IX_Orders_CustomerID with a key lookup into PK_Orders (nested loops)."},
	{Name: "hash_join", SQL: "SELECT c.Name, o.OrderID, o.Amount FROM dbo.Customers AS c JOIN dbo.Orders AS o ON o.CustomerID = c.CustomerID WHERE c.Region = N'West'",
		Description: "Hash match inner join: build on the filtered Customers scan, probe with the Orders scan."},
	{Name: "merge_join", SQL: "SELECT o.OrderID, o.OrderDate, l.LineNumber, l.Quantity FROM dbo.Orders AS o JOIN dbo.OrderLines AS l ON l.OrderID = o.OrderID WHERE o.OrderID <= 2000",
		Description: "Merge join of two clustered index range seeks ordered on OrderID."},
	{Name: "sort_spill", SQL: "SELECT l.OrderID, l.ProductID, l.Quantity, l.Price FROM dbo.OrderLines AS l WHERE l.Quantity * l.Price > 20 ORDER BY l.Price DESC, l.OrderID",
		Description: "Sort of the order lines an expression predicate keeps: the optimizer guesses 30% of the rows, nearly all pass, the memory grant is too small and the sort spills to tempdb (sort_warning)."},
	{Name: "hash_aggregate", SQL: "SELECT o.CustomerID, COUNT(*) AS OrderCount, SUM(o.Amount) AS Total FROM dbo.Orders AS o GROUP BY o.CustomerID",
		Description: "Hash match aggregate over a clustered index scan of dbo.Orders."},
	{Name: "parallel_aggregate", SQL: "SELECT l.ProductID, SUM(l.Quantity) AS Units FROM dbo.OrderLines AS l GROUP BY l.ProductID OPTION (MAXDOP 4)",
		Description: "Parallel plan (DOP 4): parallel scan, repartition streams, hash aggregate, gather streams."},
	{Name: "update_orders", SQL: "UPDATE dbo.Orders SET Status = N'Shipped' WHERE OrderID BETWEEN 100 AND 120",
		Description: "Clustered index update of 21 orders found by a clustered index range seek (X key locks, LOP_MODIFY_ROW)."},
	{Name: "insert_order", SQL: "INSERT INTO dbo.Orders (OrderID, CustomerID, OrderDate, Amount, Status) VALUES (100001, 42, '2026-01-15', 99.5, N'New')",
		Description: "Clustered index insert maintaining IX_Orders_CustomerID (LOP_INSERT_ROWS in both indexes)."},
	{Name: "delete_orderlines", SQL: "DELETE FROM dbo.OrderLines WHERE OrderID = 77",
		Description: "Clustered index delete of one order's lines found by a clustered index seek (LOP_DELETE_ROWS)."},
}

func init() {
	for _, s := range scenarios {
		s.norm = normalizeSQL(s.SQL)
	}
}

// Scenarios lists the demo queries.
func Scenarios() []Scenario {
	out := make([]Scenario, len(scenarios))
	for i, s := range scenarios {
		out[i] = Scenario{Name: s.Name, SQL: s.SQL, Description: s.Description}
	}
	return out
}

func (s *Server) scenarioFor(sql string) *Scenario {
	n := normalizeSQL(sql)
	for _, sc := range scenarios {
		if sc.norm == n {
			return sc
		}
	}
	return nil
}

// startScenario prepares what a scenario needs besides its statement.
func (x *execCtx) startScenario(sc *Scenario) {}

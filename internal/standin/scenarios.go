package standin

import "time"

// Scenario is one demo query: a statement that shows, when traced on the
// demo database, a lane or finding of the product (a spill, a lock wait, a
// parallel skew…). A scenario is data for its callers: the stand-in never
// looks at a statement's text to decide what it does, so a scenario's
// query runs as any other spelling of it would. What a single batch cannot
// bring itself — another session holding the locks it will wait for
// (Blocker), workspace memory held elsewhere (GrantHoldKB) — the caller
// sets up with PrepareScenario before tracing and releases after (hold.go).
// The trace options a scenario wants (cold cache, read-ahead off, call
// stacks) are fields the demo and the tracer's callers apply.
type Scenario struct {
	Name        string `json:"name"`
	SQL         string `json:"sql"`
	Description string `json:"description"`
	// Shows lists what a trace of it contains: event names, "wait:TYPE",
	// "plan:Text" (a showplan fragment), "skew" (one thread did most of the
	// rows), "grant>>used" (granted memory far above the use).
	Shows []string `json:"shows"`
	// Compare names the scenario to compare this one with (the same query
	// with one hint, index or option changed).
	Compare string `json:"compare,omitempty"`
	// ClearBufferPool, DisableReadAhead and CallStacks are the trace
	// options the scenario is meant for.
	ClearBufferPool  bool `json:"clearBufferPool,omitempty"`
	DisableReadAhead bool `json:"disableReadAhead,omitempty"`
	CallStacks       bool `json:"callStacks,omitempty"`
	// Blocker is T-SQL another session (SPID 999) runs inside a
	// transaction it leaves open (PrepareScenario, Server.HoldLocks).
	Blocker string `json:"blocker,omitempty"`
	// GrantHoldKB is workspace memory held while the statement runs
	// (PrepareScenario, Server.HoldWorkspaceMemory).
	GrantHoldKB int64 `json:"grantHoldKB,omitempty"`
	// Hold is how long the statement waits on what PrepareScenario holds:
	// each hold ends Hold after the statement first waits on it.
	Hold time.Duration `json:"holdNs,omitempty"`
}

var scenarios = []*Scenario{
	{Name: "clustered_index_scan", SQL: "SELECT OrderID, CustomerID, OrderDate, Amount FROM dbo.Orders WHERE Amount > 2500",
		Description: "Clustered index scan of dbo.Orders with a residual predicate: S page locks, one page after another.",
		Shows:       []string{"physical_page_read", "lock_acquired", "plan:Clustered Index Scan"}, ClearBufferPool: true},
	{Name: "seek_key_lookup", SQL: "SELECT o.OrderID, o.OrderDate, o.Amount FROM dbo.Orders AS o WHERE o.CustomerID = 42",
		Description: "Nonclustered index seek on IX_Orders_CustomerID with a key lookup into PK_Orders per row (nested loops).",
		Shows:       []string{"physical_page_read", "lock_acquired", "plan:Lookup=\"true\"", "plan:Index Seek"}, Compare: "forced_scan", ClearBufferPool: true},
	{Name: "forced_scan", SQL: "SELECT o.OrderID, o.OrderDate, o.Amount FROM dbo.Orders AS o WITH (INDEX(PK_Orders)) WHERE o.CustomerID = 42",
		Description: "The seek_key_lookup query with an index hint forcing the clustered index: a full scan reads every page for the same rows.",
		Shows:       []string{"physical_page_read", "plan:ForcedIndex=\"true\"", "plan:Clustered Index Scan"}, Compare: "seek_key_lookup", ClearBufferPool: true},
	{Name: "clustered_index_seek", SQL: "SELECT o.OrderID, o.Status, o.Amount FROM dbo.Orders AS o WHERE o.OrderID BETWEEN 4000 AND 4100",
		Description: "Clustered index range seek: the root page, then only the leaf pages of the range, S key locks per row.",
		Shows:       []string{"physical_page_read", "lock_acquired", "plan:Clustered Index Seek"}, ClearBufferPool: true},
	{Name: "hash_join", SQL: "SELECT c.Name, o.OrderID, o.Amount FROM dbo.Customers AS c JOIN dbo.Orders AS o ON o.CustomerID = c.CustomerID WHERE c.Region = N'West'",
		Description: "Hash match inner join: build on the filtered Customers scan, probe with the Orders scan.",
		Shows:       []string{"query_memory_grant_usage", "plan:Hash Match"}},
	{Name: "hash_join_hinted", SQL: "SELECT c.Name, o.OrderID, o.Amount FROM dbo.Customers AS c JOIN dbo.Orders AS o ON o.CustomerID = c.CustomerID WHERE c.Region = N'North' AND c.CustomerID <= 200 OPTION (HASH JOIN)",
		Description: "The loop_join query with OPTION (HASH JOIN): one scan of Orders hashed against the customers.",
		Shows:       []string{"query_memory_grant_usage", "plan:Hash Match"}, Compare: "loop_join"},
	{Name: "loop_join", SQL: "SELECT c.Name, o.OrderID, o.Amount FROM dbo.Customers AS c JOIN dbo.Orders AS o ON o.CustomerID = c.CustomerID WHERE c.Region = N'North' AND c.CustomerID <= 200 OPTION (LOOP JOIN)",
		Description: "The hash_join_hinted query with OPTION (LOOP JOIN): per customer an index seek on IX_Orders_CustomerID and key lookups (rebinds on the inner side).",
		Shows:       []string{"lock_acquired", "plan:Nested Loops", "plan:ActualRebinds"}, Compare: "hash_join_hinted"},
	{Name: "merge_join", SQL: "SELECT o.OrderID, o.OrderDate, l.LineNumber, l.Quantity FROM dbo.Orders AS o JOIN dbo.OrderLines AS l ON l.OrderID = o.OrderID WHERE o.OrderID <= 2000",
		Description: "Merge join of two clustered index range seeks ordered on OrderID (the range is implied on both sides).",
		Shows:       []string{"physical_page_read", "plan:Merge Join"}, ClearBufferPool: true},
	{Name: "sort_spill", SQL: "SELECT l.OrderID, l.ProductID, l.Quantity, l.Price FROM dbo.OrderLines AS l WHERE l.Quantity * l.Price > 20 ORDER BY l.Price DESC, l.OrderID",
		Description: "Sort of the order lines an expression predicate keeps: the optimizer guesses 30% of the rows, nearly all pass, the memory grant is too small and the sort spills to tempdb (sort_warning).",
		Shows:       []string{"sort_warning", "wait:IO_COMPLETION", "plan:SpillToTempDb"}, Compare: "sort_no_spill"},
	{Name: "sort_no_spill", SQL: "SELECT l.OrderID, l.ProductID, l.Quantity, l.Price FROM dbo.OrderLines AS l WHERE l.Quantity * l.Price > 20 ORDER BY l.Price DESC, l.OrderID OPTION (MIN_GRANT_PERCENT = 1)",
		Description: "The sort_spill query with OPTION (MIN_GRANT_PERCENT = 1): the grant covers the sort and nothing spills.",
		Shows:       []string{"query_memory_grant_usage", "plan:MemoryGrantInfo"}, Compare: "sort_spill"},
	{Name: "hash_spill", SQL: "SELECT o.OrderID, o.Status, l.ProductID FROM dbo.OrderLines AS l JOIN dbo.Orders AS o ON o.OrderID = l.OrderID WHERE l.Quantity * l.Price > 20 OPTION (HASH JOIN)",
		Description: "Hash join building on the underestimated order lines: the hash table outgrows its grant and spills (hash_warning, HashSpillDetails).",
		Shows:       []string{"hash_warning", "plan:HashSpillDetails"}},
	{Name: "hash_aggregate", SQL: "SELECT o.CustomerID, COUNT(*) AS OrderCount, SUM(o.Amount) AS Total FROM dbo.Orders AS o GROUP BY o.CustomerID",
		Description: "Hash match aggregate over a clustered index scan of dbo.Orders.",
		Shows:       []string{"query_memory_grant_usage", "plan:Hash Match"}},
	{Name: "stream_aggregate", SQL: "SELECT l.OrderID, SUM(l.Quantity) AS Units, MAX(l.Price) AS TopPrice FROM dbo.OrderLines AS l WHERE l.OrderID <= 500 GROUP BY l.OrderID",
		Description: "Stream aggregate over a clustered index seek that already returns the rows in OrderID order: no sort, no memory grant.",
		Shows:       []string{"lock_acquired", "plan:Stream Aggregate"}},
	{Name: "parallel_aggregate", SQL: "SELECT l.ProductID, SUM(l.Quantity) AS Units FROM dbo.OrderLines AS l GROUP BY l.ProductID OPTION (MAXDOP 4)",
		Description: "Parallel plan (DOP 4): parallel scan, repartition streams, hash aggregate, gather streams; CX waits per thread.",
		Shows:       []string{"wait:CXPACKET", "wait:CXCONSUMER", "plan:Repartition Streams"}},
	{Name: "parallel_skew", SQL: "SELECT l.OrderID, SUM(l.Quantity * l.Price) AS Total FROM dbo.OrderLines AS l WHERE l.OrderID <= 2500 GROUP BY l.OrderID OPTION (MAXDOP 4)",
		Description: "Parallel seek whose range lies in the first quarter of the pages: thread 1 reads all of it, the other threads idle (skew).",
		Shows:       []string{"skew", "wait:CXPACKET", "plan:Parallelism"}},
	{Name: "exchange_spill", SQL: "SELECT l.OrderID, l.LineNumber, l.Price FROM dbo.OrderLines AS l WHERE l.OrderID <= 3000 ORDER BY l.Price OPTION (MAXDOP 4)",
		Description: "Order-preserving Gather Streams over a skewed parallel sort: one producer's rows back up and the exchange spills to tempdb (exchange_spill).",
		Shows:       []string{"exchange_spill", "plan:ExchangeSpillDetails", "skew"}},
	{Name: "window_row_number", SQL: "SELECT o.CustomerID, o.OrderID, o.Amount, ROW_NUMBER() OVER (PARTITION BY o.CustomerID ORDER BY o.Amount DESC) AS rn FROM dbo.Orders AS o WHERE o.CustomerID <= 100",
		Description: "Ranking window function: Sort, Segment and Sequence Project over the index seek and lookups.",
		Shows:       []string{"plan:Sequence Project", "plan:Segment"}},
	{Name: "running_total", SQL: "SELECT o.OrderID, o.Amount, SUM(o.Amount) OVER (ORDER BY o.OrderID ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS Running FROM dbo.Orders AS o WHERE o.OrderID <= 1000",
		Description: "Framed window aggregate: Window Spool and Stream Aggregate over an ordered clustered index seek (no sort).",
		Shows:       []string{"plan:Window Spool"}},
	{Name: "recursive_cte", SQL: "WITH n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 20) SELECT n.i, o.OrderID, o.Amount FROM n JOIN dbo.Orders AS o ON o.OrderID = n.i * 100",
		Description: "Recursive CTE: the stack spool and its reader, then index nested loops into Orders.",
		Shows:       []string{"plan:Stack=\"true\"", "plan:Nested Loops"}},
	{Name: "cold_cache_read_ahead", SQL: "SELECT COUNT(*) AS Lines, SUM(l.Quantity) AS Units FROM dbo.OrderLines AS l",
		Description: "Scan of a cold table with read-ahead: one file_read of up to 64 pages at a time, and no PAGEIOLATCH waits.",
		Shows:       []string{"file_read", "physical_page_read"}, Compare: "cold_cache_no_read_ahead", ClearBufferPool: true},
	{Name: "cold_cache_no_read_ahead", SQL: "SELECT COUNT(*) AS Lines, SUM(l.Price) AS Value FROM dbo.OrderLines AS l",
		Description: "The same scan with read-ahead off (trace flag 652): a PAGEIOLATCH_SH wait and a single-page read for every page.",
		Shows:       []string{"wait:PAGEIOLATCH_SH", "physical_page_read"}, Compare: "cold_cache_read_ahead", ClearBufferPool: true, DisableReadAhead: true},
	{Name: "lock_blocking", SQL: "SELECT o.OrderID, o.Status, o.Amount FROM dbo.Orders AS o WHERE o.OrderID = 500",
		Description: "Another session (SPID 999) holds an X key lock on order 500 in an open transaction for 400 ms: the seek waits LCK_M_S, then gets its lock.",
		Shows:       []string{"wait:LCK_M_S", "lock_acquired"},
		Blocker:     "UPDATE dbo.Orders SET Status = N'Hold' WHERE OrderID = 500", Hold: 400 * time.Millisecond},
	{Name: "memory_grant_wait", SQL: "SELECT o.CustomerID, SUM(o.Amount) AS Total FROM dbo.Orders AS o GROUP BY o.CustomerID ORDER BY Total DESC",
		Description: "Running queries hold nearly all workspace memory for 300 ms: the query waits RESOURCE_SEMAPHORE for its grant (GrantWaitTime).",
		Shows:       []string{"wait:RESOURCE_SEMAPHORE", "query_memory_grant_usage"}, GrantHoldKB: workspaceKB - 256, Hold: 300 * time.Millisecond},
	{Name: "excessive_grant", SQL: "SELECT l.OrderID, l.Price FROM dbo.OrderLines AS l WHERE l.Quantity * l.Price > 8500 ORDER BY l.Price",
		Description: "The guessed 30% selectivity sizes the sort for 9,000 rows; a few hundred qualify, so the grant sits unused (granted far above used).",
		Shows:       []string{"query_memory_grant_usage", "grant>>used"}},
	{Name: "update_orders", SQL: "UPDATE dbo.Orders SET Status = N'Shipped' WHERE OrderID BETWEEN 100 AND 120",
		Description: "Clustered index update of 21 orders found by a clustered index range seek (X key locks, LOP_MODIFY_ROW); traced, it is rolled back with its compensation records.",
		Shows:       []string{"transaction_log", "lock_acquired", "plan:Clustered Index Update"}},
	{Name: "insert_order", SQL: "INSERT INTO dbo.Orders (OrderID, CustomerID, OrderDate, Amount, Status) VALUES (100001, 42, '2026-01-15', 99.5, N'New')",
		Description: "Clustered index insert maintaining IX_Orders_CustomerID (LOP_INSERT_ROWS in both indexes).",
		Shows:       []string{"transaction_log", "plan:Clustered Index Insert"}},
	{Name: "page_splits", SQL: "INSERT INTO dbo.OrderLines (OrderID, LineNumber, ProductID, Quantity, Price) SELECT l.OrderID, l.LineNumber + 10, l.ProductID, l.Quantity, l.Price FROM dbo.OrderLines AS l WHERE l.OrderID <= 400",
		Description: "Inserting lines in the middle of the clustered index fills its pages: page_split events as new pages are linked in.",
		Shows:       []string{"page_split", "transaction_log"}},
	{Name: "delete_orderlines", SQL: "DELETE FROM dbo.OrderLines WHERE OrderID = 77",
		Description: "Clustered index delete of one order's lines found by a clustered index seek (LOP_DELETE_ROWS).",
		Shows:       []string{"transaction_log", "plan:Clustered Index Delete"}},
	{Name: "call_stacks", SQL: "SELECT TOP (50) c.CustomerID, c.Name, c.Region FROM dbo.Customers AS c ORDER BY c.Name DESC",
		Description: "Page reads, locks and waits traced with the callstack action: every storage event carries its call stack.",
		Shows:       []string{"physical_page_read", "callstack"}, ClearBufferPool: true, CallStacks: true},
	{Name: "procedure_two_statements", SQL: "EXEC dbo.CustomerOrders @region = N'West', @minAmount = 2500",
		Description: "A stored procedure of two statements (procs.go's demo procedure dbo.CustomerOrders): each statement runs with its own actual plan, so the batch produces two plans.",
		Shows:       []string{"query_post_execution_showplan", "plan:Clustered Index Scan"}},
	{Name: "procedure_nested", SQL: "EXEC dbo.RegionReport @region = N'West'",
		Description: "A procedure that counts and then calls another (dbo.RegionReport EXECs dbo.CustomerOrders): sp_statement events and tsql_stack frames give every event its statement, three plans in a tree of six statements.",
		Shows:       []string{"query_post_execution_showplan", "physical_page_read", "plan:Hash Match"}, ClearBufferPool: true},
}

// Scenarios lists the demo queries.
func Scenarios() []Scenario {
	out := make([]Scenario, len(scenarios))
	for i, s := range scenarios {
		out[i] = *s
		out[i].Shows = append([]string{}, s.Shows...)
	}
	return out
}

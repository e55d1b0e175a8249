package standin

import "testing"

func TestScratch(t *testing.T) {
	srv := New(Options{})
	c := session(t, srv, 51)
	mustRun(t, c, `CREATE EVENT SESSION s ON SERVER ADD EVENT sqlserver.physical_page_read(ACTION(package0.event_sequence)), ADD EVENT sqlserver.lock_acquired, ADD EVENT sqlos.wait_info, ADD EVENT sqlserver.query_post_execution_showplan ADD TARGET package0.event_file(SET filename='s.xel')`)
	mustRun(t, c, "DBCC DROPCLEANBUFFERS")
	mustRun(t, c, "ALTER EVENT SESSION s ON SERVER STATE = START")
	r := mustRun(t, c, "SELECT OrderID, CustomerID, OrderDate, Amount FROM dbo.Orders WHERE Amount > 2500")
	t.Log(len(r.sets[0].rows))
}

package standin

import (
	"fmt"
	"math/rand"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/engine"
)

// The demo database. Its storage layout (pages, hobts, allocation units) is
// computed the way SQL Server lays out a B-tree: an IAM page per allocation
// unit, leaf pages in key order, and a root page above the leaf level once
// there is more than one leaf page. Page ids are what the XE events, the
// %%physloc%% and %%lockres%% lookups and the page DMVs all report, so every
// view of the layout agrees.

const (
	demoDBName = "QueryReplayDemo"
	demoDBID   = 5
)

// newDemoDatabase builds the demo data deterministically (fixed seed), so
// tests can rely on exact row counts and page ids.
func newDemoDatabase(created time.Time) *engine.Database {
	db := &engine.Database{ID: demoDBID, Name: demoDBName, NextPage: 288, NextHobt: 1000, PageOwner: map[int32]*engine.PageInfo{}}
	rng := rand.New(rand.NewSource(20261129))
	regions := []string{"North", "South", "East", "West"}
	statuses := []string{"New", "Paid", "Shipped", "Closed"}
	categories := []string{"Tools", "Garden", "Kitchen", "Toys", "Books"}

	customers := &engine.Table{DB: db, ObjectID: 581577110, Schema: "dbo", Name: "Customers", PKName: "PK_Customers", Created: created,
		Columns: []engine.TableColumn{
			{Column: engine.Column{Name: "CustomerID", Type: engine.TInt}, NotNull: true, AvgSize: 4},
			{Column: engine.Column{Name: "Name", Type: engine.TNVar(100)}, NotNull: true, AvgSize: 34},
			{Column: engine.Column{Name: "Region", Type: engine.TNVar(20)}, NotNull: true, AvgSize: 10},
			{Column: engine.Column{Name: "CreatedAt", Type: engine.TDT2}, NotNull: true, AvgSize: 8},
		}, PK: []int{0}}
	for i := 1; i <= 1000; i++ {
		customers.Rows = append(customers.Rows, []any{int64(i), fmt.Sprintf("Customer %04d", i), regions[rng.Intn(4)],
			created.AddDate(0, 0, -rng.Intn(1500))})
	}
	products := &engine.Table{DB: db, ObjectID: 613577224, Schema: "dbo", Name: "Products", PKName: "PK_Products", Created: created,
		Columns: []engine.TableColumn{
			{Column: engine.Column{Name: "ProductID", Type: engine.TInt}, NotNull: true, AvgSize: 4},
			{Column: engine.Column{Name: "Name", Type: engine.TNVar(100)}, NotNull: true, AvgSize: 30},
			{Column: engine.Column{Name: "Category", Type: engine.TNVar(30)}, NotNull: true, AvgSize: 12},
			{Column: engine.Column{Name: "ListPrice", Type: engine.TFloat}, NotNull: true, AvgSize: 8},
		}, PK: []int{0}}
	for i := 1; i <= 200; i++ {
		products.Rows = append(products.Rows, []any{int64(i), fmt.Sprintf("Product %03d", i), categories[rng.Intn(5)],
			float64(100+rng.Intn(99900)) / 100})
	}
	orders := &engine.Table{DB: db, ObjectID: 645577338, Schema: "dbo", Name: "Orders", PKName: "PK_Orders", Created: created,
		Columns: []engine.TableColumn{
			{Column: engine.Column{Name: "OrderID", Type: engine.TInt}, NotNull: true, AvgSize: 4},
			{Column: engine.Column{Name: "CustomerID", Type: engine.TInt}, NotNull: true, AvgSize: 4},
			{Column: engine.Column{Name: "OrderDate", Type: engine.TDT2}, NotNull: true, AvgSize: 8},
			{Column: engine.Column{Name: "Amount", Type: engine.TFloat}, NotNull: true, AvgSize: 8},
			{Column: engine.Column{Name: "Status", Type: engine.TNVar(20)}, NotNull: true, AvgSize: 12},
		}, PK: []int{0}}
	lines := &engine.Table{DB: db, ObjectID: 677577452, Schema: "dbo", Name: "OrderLines", PKName: "PK_OrderLines", Created: created,
		Columns: []engine.TableColumn{
			{Column: engine.Column{Name: "OrderID", Type: engine.TInt}, NotNull: true, AvgSize: 4},
			{Column: engine.Column{Name: "LineNumber", Type: engine.TInt}, NotNull: true, AvgSize: 4},
			{Column: engine.Column{Name: "ProductID", Type: engine.TInt}, NotNull: true, AvgSize: 4},
			{Column: engine.Column{Name: "Quantity", Type: engine.TInt}, NotNull: true, AvgSize: 4},
			{Column: engine.Column{Name: "Price", Type: engine.TFloat}, NotNull: true, AvgSize: 8},
		}, PK: []int{0, 1}}
	for i := 1; i <= 10000; i++ {
		amount := 0.0
		n := 1 + rng.Intn(5)
		for l := 1; l <= n; l++ {
			price := products.Rows[rng.Intn(200)][3].(float64)
			qty := int64(1 + rng.Intn(9))
			amount += price * float64(qty)
			lines.Rows = append(lines.Rows, []any{int64(i), int64(l), int64(1 + rng.Intn(200)), qty, price})
		}
		orders.Rows = append(orders.Rows, []any{int64(i), int64(1 + rng.Intn(1000)), created.AddDate(0, 0, -rng.Intn(700)),
			float64(int64(amount*100)) / 100, statuses[rng.Intn(4)]})
	}
	for _, t := range []*engine.Table{customers, products, orders, lines} {
		db.Tables = append(db.Tables, t)
		size := 11 // row header, null bitmap, variable-offset array
		for _, c := range t.Columns {
			size += c.AvgSize
		}
		t.RowBytes = size
		t.AddIndex(1, t.PKName, t.PK, true, true)
	}
	orders.AddIndex(2, "IX_Orders_CustomerID", []int{1}, false, false)
	for _, t := range db.Tables {
		for _, ix := range t.Indexes {
			ix.Layout()
		}
	}
	installDemoProcedures(db, created) // procs.go
	return db
}

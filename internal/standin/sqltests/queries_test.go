package sqltests

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// everydayQuery is one of the everyday T-SQL queries the stand-in must
// answer as SQL Server does on the demo data.
type everydayQuery struct {
	name string
	sql  string
	// trace is what the tracer traces, when it differs from sql (a batch
	// with its own transaction is traced without it: the tracer rolls
	// modifications back itself)
	trace   string
	ordered bool // the result's order is defined by ORDER BY
	want    func(d *demo) [][]any
	wantErr int32 // the query fails with this message number
}

var everydayQueries = []everydayQuery{
	{name: "top_filter_order", ordered: true,
		sql: "SELECT TOP (10) OrderID, CustomerID, Amount FROM dbo.Orders WHERE Status = N'Paid' ORDER BY Amount DESC, OrderID",
		want: func(d *demo) [][]any {
			os := filter(d.orders, func(o order) bool { return o.status == "Paid" })
			slices.SortStableFunc(os, func(a, b order) int { return cmp.Or(-cmp.Compare(a.amount, b.amount), cmp.Compare(a.id, b.id)) })
			var out [][]any
			for _, o := range os[:10] {
				out = append(out, row(o.id, o.cust, o.amount))
			}
			return out
		}},
	{name: "group_having", ordered: true,
		sql: "SELECT CustomerID, COUNT(*) AS Orders, SUM(Amount) AS Total FROM dbo.Orders GROUP BY CustomerID HAVING COUNT(*) >= 15 ORDER BY CustomerID",
		want: func(d *demo) [][]any {
			n := countBy(d.orders, func(o order) int64 { return o.cust })
			s := sumBy(d.orders, func(o order) int64 { return o.cust }, func(o order) float64 { return o.amount })
			var out [][]any
			for _, c := range keys(n) {
				if n[c] >= 15 {
					out = append(out, row(c, n[c], s[c]))
				}
			}
			return out
		}},
	{name: "join_group_by_region", ordered: true,
		sql: "SELECT c.Region, COUNT(*) AS Orders, AVG(o.Amount) AS AvgAmount FROM dbo.Orders o JOIN dbo.Customers c ON c.CustomerID = o.CustomerID GROUP BY c.Region ORDER BY c.Region",
		want: func(d *demo) [][]any {
			n := countBy(d.orders, func(o order) string { return d.custByID[o.cust].region })
			s := sumBy(d.orders, func(o order) string { return d.custByID[o.cust].region }, func(o order) float64 { return o.amount })
			var out [][]any
			for _, r := range keys(n) {
				out = append(out, row(r, n[r], s[r]/float64(n[r])))
			}
			return out
		}},
	{name: "cte_join", ordered: true,
		sql: "WITH big AS (SELECT CustomerID, SUM(Amount) AS Total FROM dbo.Orders GROUP BY CustomerID) SELECT TOP (5) b.CustomerID, c.Name, b.Total FROM big b JOIN dbo.Customers c ON c.CustomerID = b.CustomerID ORDER BY b.Total DESC",
		want: func(d *demo) [][]any {
			s := sumBy(d.orders, func(o order) int64 { return o.cust }, func(o order) float64 { return o.amount })
			ids := keys(s)
			slices.SortStableFunc(ids, func(a, b int64) int { return -cmp.Compare(s[a], s[b]) })
			var out [][]any
			for _, id := range ids[:5] {
				out = append(out, row(id, d.custByID[id].name, s[id]))
			}
			return out
		}},
	{name: "recursive_cte_numbers",
		sql:  "WITH n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 50) SELECT COUNT(*) AS cnt, SUM(i) AS total FROM n",
		want: func(d *demo) [][]any { return [][]any{row(50, 1275)} }},
	{name: "recursive_cte_calendar", ordered: true,
		sql: "WITH cal AS (SELECT CAST('2025-01-01' AS date) AS dt UNION ALL SELECT DATEADD(day, 1, dt) FROM cal WHERE dt < '2025-01-31') " +
			"SELECT cal.dt, COUNT(o.OrderID) AS Orders FROM cal LEFT JOIN dbo.Orders o ON CAST(o.OrderDate AS date) = cal.dt GROUP BY cal.dt ORDER BY cal.dt",
		want: func(d *demo) [][]any {
			n := countBy(d.orders, func(o order) time.Time { return dateOnly(o.date) })
			var out [][]any
			for day := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC); !day.After(time.Date(2025, 1, 31, 0, 0, 0, 0, time.UTC)); day = day.AddDate(0, 0, 1) {
				out = append(out, row(day, n[day]))
			}
			return out
		}},
	{name: "maxrecursion_exhausted", wantErr: 530,
		sql: "WITH n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n) SELECT i FROM n OPTION (MAXRECURSION 10)"},
	{name: "union_all_counts",
		sql: "SELECT N'customers' AS kind, COUNT(*) AS n FROM dbo.Customers UNION ALL SELECT N'products', COUNT(*) FROM dbo.Products UNION ALL SELECT N'orders', COUNT(*) FROM dbo.Orders",
		want: func(d *demo) [][]any {
			return [][]any{row("customers", len(d.customers)), row("products", len(d.products)), row("orders", len(d.orders))}
		}},
	{name: "union_distinct", ordered: true,
		sql: "SELECT Region AS label FROM dbo.Customers UNION SELECT Category FROM dbo.Products ORDER BY 1",
		want: func(d *demo) [][]any {
			set := map[string]bool{}
			for _, c := range d.customers {
				set[c.region] = true
			}
			for _, p := range d.products {
				set[p.category] = true
			}
			ks := keys(set)
			slices.SortFunc(ks, ciLess)
			var out [][]any
			for _, k := range ks {
				out = append(out, row(k))
			}
			return out
		}},
	{name: "intersect", ordered: true,
		sql: "SELECT CustomerID FROM dbo.Orders WHERE Status = N'New' AND Amount > 2000 INTERSECT SELECT CustomerID FROM dbo.Orders WHERE Status = N'Closed' AND Amount > 2000 ORDER BY CustomerID",
		want: func(d *demo) [][]any {
			a, b := map[int64]bool{}, map[int64]bool{}
			for _, o := range d.orders {
				if o.amount > 2000 && o.status == "New" {
					a[o.cust] = true
				}
				if o.amount > 2000 && o.status == "Closed" {
					b[o.cust] = true
				}
			}
			var out [][]any
			for _, c := range keys(a) {
				if b[c] {
					out = append(out, row(c))
				}
			}
			return out
		}},
	{name: "except", ordered: true,
		sql: "SELECT CustomerID FROM dbo.Customers EXCEPT SELECT CustomerID FROM dbo.Orders ORDER BY CustomerID",
		want: func(d *demo) [][]any {
			has := countBy(d.orders, func(o order) int64 { return o.cust })
			var out [][]any
			for _, c := range d.customers {
				if has[c.id] == 0 {
					out = append(out, row(c.id))
				}
			}
			return out
		}},
	{name: "row_number_partition", ordered: true,
		sql: "SELECT OrderID, CustomerID, Amount, ROW_NUMBER() OVER (PARTITION BY CustomerID ORDER BY Amount DESC, OrderID) AS rn FROM dbo.Orders WHERE CustomerID <= 20 ORDER BY CustomerID, rn",
		want: func(d *demo) [][]any {
			os := filter(d.orders, func(o order) bool { return o.cust <= 20 })
			slices.SortStableFunc(os, func(a, b order) int {
				return cmp.Or(cmp.Compare(a.cust, b.cust), -cmp.Compare(a.amount, b.amount), cmp.Compare(a.id, b.id))
			})
			var out [][]any
			rn := int64(0)
			for i, o := range os {
				if i == 0 || os[i-1].cust != o.cust {
					rn = 0
				}
				rn++
				out = append(out, row(o.id, o.cust, o.amount, rn))
			}
			return out
		}},
	{name: "rank_dense_rank", ordered: true,
		sql: "SELECT ProductID, Category, ListPrice, RANK() OVER (PARTITION BY Category ORDER BY ListPrice DESC) AS rnk, DENSE_RANK() OVER (ORDER BY Category) AS cat FROM dbo.Products ORDER BY Category, rnk, ProductID",
		want: func(d *demo) [][]any {
			ps := slices.Clone(d.products)
			cats := map[string]bool{}
			for _, p := range ps {
				cats[p.category] = true
			}
			catList := keys(cats)
			slices.SortFunc(catList, ciLess)
			catRank := map[string]int64{}
			for i, c := range catList {
				catRank[c] = int64(i + 1)
			}
			rank := map[int64]int64{}
			for _, p := range ps {
				r := int64(1)
				for _, q := range ps {
					if q.category == p.category && q.price > p.price {
						r++
					}
				}
				rank[p.id] = r
			}
			slices.SortFunc(ps, func(a, b product) int {
				return cmp.Or(ciLess(a.category, b.category), cmp.Compare(rank[a.id], rank[b.id]), cmp.Compare(a.id, b.id))
			})
			var out [][]any
			for _, p := range ps {
				out = append(out, row(p.id, p.category, p.price, rank[p.id], catRank[p.category]))
			}
			return out
		}},
	{name: "ntile", ordered: true,
		sql: "SELECT CustomerID, NTILE(4) OVER (ORDER BY CustomerID) AS quartile FROM dbo.Customers WHERE CustomerID <= 10 ORDER BY CustomerID",
		want: func(d *demo) [][]any {
			tiles := []int64{1, 1, 1, 2, 2, 2, 3, 3, 4, 4}
			var out [][]any
			for i, t := range tiles {
				out = append(out, row(i+1, t))
			}
			return out
		}},
	{name: "lag_lead", ordered: true,
		sql: "SELECT OrderID, Amount, LAG(Amount) OVER (ORDER BY OrderID) AS prev, LEAD(Amount, 2, 0) OVER (ORDER BY OrderID) AS next2 FROM dbo.Orders WHERE OrderID <= 30 ORDER BY OrderID",
		want: func(d *demo) [][]any {
			os := d.orders[:30]
			var out [][]any
			for i, o := range os {
				var prev any
				if i > 0 {
					prev = os[i-1].amount
				}
				next := 0.0
				if i+2 < len(os) {
					next = os[i+2].amount
				}
				out = append(out, row(o.id, o.amount, prev, next))
			}
			return out
		}},
	{name: "first_last_value_distinct", ordered: true,
		sql: "SELECT DISTINCT CustomerID, FIRST_VALUE(OrderID) OVER (PARTITION BY CustomerID ORDER BY OrderDate, OrderID) AS first_order, " +
			"LAST_VALUE(OrderID) OVER (PARTITION BY CustomerID ORDER BY OrderDate, OrderID ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS last_order " +
			"FROM dbo.Orders WHERE CustomerID <= 25 ORDER BY CustomerID",
		want: func(d *demo) [][]any {
			byCust := map[int64][]order{}
			for _, o := range d.orders {
				if o.cust <= 25 {
					byCust[o.cust] = append(byCust[o.cust], o)
				}
			}
			var out [][]any
			for _, c := range keys(byCust) {
				os := byCust[c]
				slices.SortFunc(os, func(a, b order) int { return cmp.Or(a.date.Compare(b.date), cmp.Compare(a.id, b.id)) })
				out = append(out, row(c, os[0].id, os[len(os)-1].id))
			}
			return out
		}},
	{name: "running_total_rows_frames", ordered: true,
		sql: "SELECT OrderID, Amount, SUM(Amount) OVER (ORDER BY OrderID ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running, " +
			"AVG(Amount) OVER (ORDER BY OrderID ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS avg3 FROM dbo.Orders WHERE OrderID <= 100 ORDER BY OrderID",
		want: func(d *demo) [][]any {
			var out [][]any
			run := 0.0
			for i, o := range d.orders[:100] {
				run += o.amount
				lo := max(0, i-2)
				s := 0.0
				for _, p := range d.orders[lo : i+1] {
					s += p.amount
				}
				out = append(out, row(o.id, o.amount, run, s/float64(i+1-lo)))
			}
			return out
		}},
	{name: "range_frame_peers", ordered: true,
		sql: "SELECT CustomerID, OrderDate, COUNT(*) OVER (PARTITION BY CustomerID ORDER BY OrderDate) AS so_far, SUM(Amount) OVER (PARTITION BY CustomerID) AS cust_total " +
			"FROM dbo.Orders WHERE CustomerID IN (7, 8, 9) ORDER BY CustomerID, OrderDate, so_far",
		want: func(d *demo) [][]any {
			os := filter(d.orders, func(o order) bool { return o.cust >= 7 && o.cust <= 9 })
			total := sumBy(os, func(o order) int64 { return o.cust }, func(o order) float64 { return o.amount })
			var out [][]any
			for _, o := range os {
				n := int64(0)
				for _, p := range os {
					if p.cust == o.cust && !p.date.After(o.date) {
						n++
					}
				}
				out = append(out, row(o.cust, o.date, n, total[o.cust]))
			}
			slices.SortFunc(out, func(a, b []any) int {
				return cmp.Or(cmp.Compare(a[0].(int64), b[0].(int64)), a[1].(time.Time).Compare(b[1].(time.Time)), cmp.Compare(a[2].(int64), b[2].(int64)))
			})
			return out
		}},
	{name: "offset_fetch", ordered: true,
		sql: "SELECT OrderID, Amount FROM dbo.Orders ORDER BY Amount DESC, OrderID OFFSET 20 ROWS FETCH NEXT 10 ROWS ONLY",
		want: func(d *demo) [][]any {
			os := slices.Clone(d.orders)
			slices.SortStableFunc(os, func(a, b order) int { return cmp.Or(-cmp.Compare(a.amount, b.amount), cmp.Compare(a.id, b.id)) })
			var out [][]any
			for _, o := range os[20:30] {
				out = append(out, row(o.id, o.amount))
			}
			return out
		}},
	{name: "top_with_ties",
		sql: "SELECT TOP (3) WITH TIES CustomerID, COUNT(*) AS n FROM dbo.Orders GROUP BY CustomerID ORDER BY COUNT(*) DESC",
		want: func(d *demo) [][]any {
			n := countBy(d.orders, func(o order) int64 { return o.cust })
			ids := keys(n)
			slices.SortStableFunc(ids, func(a, b int64) int { return -cmp.Compare(n[a], n[b]) })
			cut := n[ids[2]]
			var out [][]any
			for _, id := range ids {
				if n[id] >= cut {
					out = append(out, row(id, n[id]))
				}
			}
			return out
		}},
	{name: "rollup_with_grouping", ordered: true,
		sql: "SELECT c.Region, o.Status, COUNT(*) AS n, GROUPING(o.Status) AS gs FROM dbo.Orders o JOIN dbo.Customers c ON c.CustomerID = o.CustomerID " +
			"GROUP BY ROLLUP (c.Region, o.Status) ORDER BY GROUPING(c.Region), c.Region, GROUPING(o.Status), o.Status",
		want: func(d *demo) [][]any {
			type k struct{ r, s string }
			n := countBy(d.orders, func(o order) k { return k{d.custByID[o.cust].region, o.status} })
			nr := countBy(d.orders, func(o order) string { return d.custByID[o.cust].region })
			var out [][]any
			for _, r := range keys(nr) {
				var sts []string
				for key := range n {
					if key.r == r {
						sts = append(sts, key.s)
					}
				}
				slices.SortFunc(sts, ciLess)
				for _, s := range sts {
					out = append(out, row(r, s, n[k{r, s}], 0))
				}
				out = append(out, row(r, nil, nr[r], 1))
			}
			out = append(out, row(nil, nil, len(d.orders), 1))
			return out
		}},
	{name: "cube_on_expression",
		sql: "SELECT Category, CASE WHEN ListPrice >= 500 THEN N'high' ELSE N'low' END AS band, COUNT(*) AS n FROM dbo.Products " +
			"GROUP BY CUBE (Category, CASE WHEN ListPrice >= 500 THEN N'high' ELSE N'low' END)",
		want: func(d *demo) [][]any {
			band := func(p product) string {
				if p.price >= 500 {
					return "high"
				}
				return "low"
			}
			type k struct{ c, b any }
			counts := map[k]int64{}
			for _, p := range d.products {
				for _, key := range []k{{p.category, band(p)}, {p.category, nil}, {nil, band(p)}, {nil, nil}} {
					counts[key]++
				}
			}
			var out [][]any
			for key, n := range counts {
				out = append(out, row(key.c, key.b, n))
			}
			return out
		}},
	{name: "grouping_sets_grouping_id",
		sql: "SELECT Status, YEAR(OrderDate) AS yr, SUM(Amount) AS total, GROUPING_ID(Status, YEAR(OrderDate)) AS gid FROM dbo.Orders GROUP BY GROUPING SETS ((Status), (YEAR(OrderDate)), ())",
		want: func(d *demo) [][]any {
			bySt := sumBy(d.orders, func(o order) string { return o.status }, func(o order) float64 { return o.amount })
			byYr := sumBy(d.orders, func(o order) int64 { return int64(o.date.Year()) }, func(o order) float64 { return o.amount })
			var out [][]any
			all := 0.0
			for s, v := range bySt {
				out = append(out, row(s, nil, v, 1))
				all += v
			}
			for y, v := range byYr {
				out = append(out, row(nil, y, v, 2))
			}
			return append(out, row(nil, nil, all, 3))
		}},
	{name: "case_iif_coalesce_nullif", ordered: true,
		sql: "SELECT OrderID, CASE Status WHEN N'New' THEN 1 WHEN N'Paid' THEN 2 ELSE 3 END AS s, IIF(Amount > 1000, N'big', N'small') AS size, " +
			"COALESCE(NULLIF(Status, N'Closed'), N'(closed)') AS st FROM dbo.Orders WHERE OrderID <= 50 ORDER BY OrderID",
		want: func(d *demo) [][]any {
			var out [][]any
			for _, o := range d.orders[:50] {
				s := map[string]int64{"New": 1, "Paid": 2}[o.status]
				if s == 0 {
					s = 3
				}
				size := "small"
				if o.amount > 1000 {
					size = "big"
				}
				st := o.status
				if st == "Closed" {
					st = "(closed)"
				}
				out = append(out, row(o.id, s, size, st))
			}
			return out
		}},
	{name: "date_functions", ordered: true,
		sql: "SELECT OrderID, DATEADD(day, 30, OrderDate) AS due, DATEDIFF(day, OrderDate, '2026-01-05') AS age, EOMONTH(OrderDate) AS month_end, " +
			"DATEFROMPARTS(YEAR(OrderDate), MONTH(OrderDate), 1) AS month_start, DATEPART(weekday, OrderDate) AS wd, DATEADD(month, 1, OrderDate) AS next_month FROM dbo.Orders WHERE OrderID <= 20 ORDER BY OrderID",
		want: func(d *demo) [][]any {
			var out [][]any
			ref := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
			for _, o := range d.orders[:20] {
				day := dateOnly(o.date)
				eom := time.Date(o.date.Year(), o.date.Month()+1, 0, 0, 0, 0, 0, time.UTC)
				next := o.date.AddDate(0, 1, 0)
				if next.Day() != o.date.Day() {
					next = time.Date(o.date.Year(), o.date.Month()+2, 0, o.date.Hour(), o.date.Minute(), 0, 0, time.UTC)
				}
				out = append(out, row(o.id, o.date.AddDate(0, 0, 30), int64(ref.Sub(day).Hours()/24), eom,
					time.Date(o.date.Year(), o.date.Month(), 1, 0, 0, 0, 0, time.UTC), int64(o.date.Weekday())+1, next))
			}
			return out
		}},
	{name: "string_functions", ordered: true,
		sql: "SELECT TOP (10) CustomerID, CONCAT(Name, N' (', Region, N')') AS label, CONCAT_WS(N'-', Region, FORMAT(CreatedAt, 'yyyy-MM')) AS tag, " +
			"UPPER(LEFT(Name, 3)) + RIGHT(Name, 4) AS code, LEN(Name) AS len, REPLACE(Name, N'Customer', N'C') AS short FROM dbo.Customers ORDER BY CustomerID",
		want: func(d *demo) [][]any {
			var out [][]any
			for _, c := range d.customers[:10] {
				out = append(out, row(c.id, c.name+" ("+c.region+")", c.region+"-"+c.created.Format("2006-01"),
					strings.ToUpper(c.name[:3])+c.name[len(c.name)-4:], len(c.name), strings.ReplaceAll(c.name, "Customer", "C")))
			}
			return out
		}},
	{name: "string_agg_within_group", ordered: true,
		sql: "SELECT o.OrderID, STRING_AGG(CAST(l.ProductID AS nvarchar(10)), N',') WITHIN GROUP (ORDER BY l.LineNumber) AS products, COUNT(*) AS lines " +
			"FROM dbo.Orders o JOIN dbo.OrderLines l ON l.OrderID = o.OrderID WHERE o.OrderID BETWEEN 100 AND 120 GROUP BY o.OrderID ORDER BY o.OrderID",
		want: func(d *demo) [][]any {
			var out [][]any
			for id := int64(100); id <= 120; id++ {
				var ps []string
				for _, l := range d.lines {
					if l.order == id {
						ps = append(ps, strconv.FormatInt(l.product, 10))
					}
				}
				out = append(out, row(id, strings.Join(ps, ","), len(ps)))
			}
			return out
		}},
	{name: "conversions", ordered: true,
		sql: "SELECT TOP (5) OrderID, CAST(Amount AS decimal(10,1)) AS amt, CONVERT(nvarchar(10), OrderDate, 23) AS d, TRY_CONVERT(int, N'12x') AS bad, " +
			"TRY_CAST(N'42' AS int) AS good, CAST(OrderID AS nvarchar(10)) + N'#' AS tag FROM dbo.Orders ORDER BY OrderID",
		want: func(d *demo) [][]any {
			var out [][]any
			for _, o := range d.orders[:5] {
				out = append(out, row(o.id, math.Round(o.amount*10)/10, o.date.Format("2006-01-02"), nil, 42, strconv.FormatInt(o.id, 10)+"#"))
			}
			return out
		}},
	{name: "derived_table", ordered: true,
		sql: "SELECT t.Category, t.Products, t.AvgPrice FROM (SELECT Category, COUNT(*) AS Products, AVG(ListPrice) AS AvgPrice FROM dbo.Products GROUP BY Category) AS t WHERE t.Products > 30 ORDER BY t.AvgPrice DESC",
		want: func(d *demo) [][]any {
			n := countBy(d.products, func(p product) string { return p.category })
			s := sumBy(d.products, func(p product) string { return p.category }, func(p product) float64 { return p.price })
			var out [][]any
			for _, c := range keys(n) {
				if n[c] > 30 {
					out = append(out, row(c, n[c], s[c]/float64(n[c])))
				}
			}
			slices.SortFunc(out, func(a, b []any) int { return -cmp.Compare(a[2].(float64), b[2].(float64)) })
			return out
		}},
	{name: "cross_apply_top_n", ordered: true,
		sql: "SELECT c.CustomerID, x.OrderID, x.Amount FROM dbo.Customers c CROSS APPLY (SELECT TOP (2) o.OrderID, o.Amount FROM dbo.Orders o WHERE o.CustomerID = c.CustomerID ORDER BY o.Amount DESC, o.OrderID) x " +
			"WHERE c.CustomerID <= 15 ORDER BY c.CustomerID, x.Amount DESC",
		want: func(d *demo) [][]any {
			var out [][]any
			for id := int64(1); id <= 15; id++ {
				os := filter(d.orders, func(o order) bool { return o.cust == id })
				slices.SortStableFunc(os, func(a, b order) int { return cmp.Or(-cmp.Compare(a.amount, b.amount), cmp.Compare(a.id, b.id)) })
				for _, o := range os[:min(2, len(os))] {
					out = append(out, row(id, o.id, o.amount))
				}
			}
			return out
		}},
	{name: "outer_apply_aggregate", ordered: true,
		sql: "SELECT c.CustomerID, x.LastOrder FROM dbo.Customers c OUTER APPLY (SELECT MAX(o.OrderDate) AS LastOrder FROM dbo.Orders o WHERE o.CustomerID = c.CustomerID) x " +
			"WHERE c.CustomerID BETWEEN 1 AND 40 ORDER BY c.CustomerID",
		want: func(d *demo) [][]any {
			var out [][]any
			for id := int64(1); id <= 40; id++ {
				var last any
				for _, o := range d.orders {
					if o.cust == id && (last == nil || o.date.After(last.(time.Time))) {
						last = o.date
					}
				}
				out = append(out, row(id, last))
			}
			return out
		}},
	{name: "exists",
		sql: "SELECT COUNT(*) AS n FROM dbo.Customers c WHERE EXISTS (SELECT 1 FROM dbo.Orders o WHERE o.CustomerID = c.CustomerID AND o.Amount > 3000)",
		want: func(d *demo) [][]any {
			set := map[int64]bool{}
			for _, o := range d.orders {
				if o.amount > 3000 {
					set[o.cust] = true
				}
			}
			return [][]any{row(len(set))}
		}},
	{name: "not_exists", ordered: true,
		sql: "SELECT p.ProductID, p.Name FROM dbo.Products p WHERE NOT EXISTS (SELECT 1 FROM dbo.OrderLines l WHERE l.ProductID = p.ProductID AND l.Quantity >= 9 AND l.OrderID <= 3000) ORDER BY p.ProductID",
		want: func(d *demo) [][]any {
			has := map[int64]bool{}
			for _, l := range d.lines {
				if l.qty >= 9 && l.order <= 3000 {
					has[l.product] = true
				}
			}
			var out [][]any
			for _, p := range d.products {
				if !has[p.id] {
					out = append(out, row(p.id, p.name))
				}
			}
			return out
		}},
	{name: "in_subquery",
		sql: "SELECT COUNT(*) AS n, SUM(Amount) AS total FROM dbo.Orders WHERE CustomerID IN (SELECT CustomerID FROM dbo.Customers WHERE Region = N'North')",
		want: func(d *demo) [][]any {
			os := filter(d.orders, func(o order) bool { return d.custByID[o.cust].region == "North" })
			s := 0.0
			for _, o := range os {
				s += o.amount
			}
			return [][]any{row(len(os), s)}
		}},
	{name: "scalar_subqueries", ordered: true,
		sql: "SELECT TOP (10) o.OrderID, o.Amount, (SELECT COUNT(*) FROM dbo.OrderLines l WHERE l.OrderID = o.OrderID) AS lines, " +
			"o.Amount - (SELECT AVG(Amount) FROM dbo.Orders) AS vs_avg FROM dbo.Orders o ORDER BY o.OrderID",
		want: func(d *demo) [][]any {
			avg := 0.0
			for _, o := range d.orders {
				avg += o.amount
			}
			avg /= float64(len(d.orders))
			n := countBy(d.lines, func(l line) int64 { return l.order })
			var out [][]any
			for _, o := range d.orders[:10] {
				out = append(out, row(o.id, o.amount, n[o.id], o.amount-avg))
			}
			return out
		}},
	{name: "temp_table",
		sql: "CREATE TABLE #big (CustomerID int PRIMARY KEY, Total float NOT NULL); " +
			"INSERT INTO #big (CustomerID, Total) SELECT CustomerID, SUM(Amount) FROM dbo.Orders GROUP BY CustomerID HAVING SUM(Amount) > 30000; " +
			"SELECT COUNT(*) AS n, MAX(Total) AS top FROM #big; DROP TABLE #big",
		want: func(d *demo) [][]any {
			s := sumBy(d.orders, func(o order) int64 { return o.cust }, func(o order) float64 { return o.amount })
			n, top := 0, 0.0
			for _, v := range s {
				if v > 30000 {
					n++
					top = math.Max(top, v)
				}
			}
			return [][]any{row(n, top)}
		}},
	{name: "select_into_temp", ordered: true,
		sql: "SELECT CustomerID, COUNT(*) AS n INTO #counts FROM dbo.Orders GROUP BY CustomerID; " +
			"SELECT TOP (5) c.CustomerID, c.n, cu.Region FROM #counts c JOIN dbo.Customers cu ON cu.CustomerID = c.CustomerID ORDER BY c.n DESC, c.CustomerID; DROP TABLE #counts",
		want: func(d *demo) [][]any {
			n := countBy(d.orders, func(o order) int64 { return o.cust })
			ids := keys(n)
			slices.SortStableFunc(ids, func(a, b int64) int { return cmp.Or(-cmp.Compare(n[a], n[b]), cmp.Compare(a, b)) })
			var out [][]any
			for _, id := range ids[:5] {
				out = append(out, row(id, n[id], d.custByID[id].region))
			}
			return out
		}},
	{name: "table_variable", ordered: true,
		sql: "DECLARE @t TABLE (Region nvarchar(20) PRIMARY KEY, n int); INSERT INTO @t (Region, n) SELECT Region, COUNT(*) FROM dbo.Customers GROUP BY Region; SELECT Region, n FROM @t ORDER BY Region",
		want: func(d *demo) [][]any {
			n := countBy(d.customers, func(c customer) string { return c.region })
			var out [][]any
			for _, r := range keys(n) {
				out = append(out, row(r, n[r]))
			}
			return out
		}},
	{name: "update_from_join",
		sql: "BEGIN TRAN; UPDATE o SET o.Status = N'Priority' FROM dbo.Orders o JOIN dbo.Customers c ON c.CustomerID = o.CustomerID WHERE c.Region = N'West' AND o.Amount > 4000; " +
			"SELECT COUNT(*) AS n FROM dbo.Orders WHERE Status = N'Priority'; ROLLBACK",
		trace: "UPDATE o SET o.Status = N'Priority' FROM dbo.Orders o JOIN dbo.Customers c ON c.CustomerID = o.CustomerID WHERE c.Region = N'West' AND o.Amount > 4000",
		want: func(d *demo) [][]any {
			return [][]any{row(len(filter(d.orders, func(o order) bool { return o.amount > 4000 && d.custByID[o.cust].region == "West" })))}
		}},
	{name: "merge_upsert", ordered: true,
		sql: "BEGIN TRAN; MERGE dbo.Products AS t USING (VALUES (1, 9.5), (999, 1.25)) AS s(ProductID, ListPrice) ON t.ProductID = s.ProductID " +
			"WHEN MATCHED THEN UPDATE SET t.ListPrice = s.ListPrice WHEN NOT MATCHED THEN INSERT (ProductID, Name, Category, ListPrice) VALUES (s.ProductID, N'New product', N'Tools', s.ListPrice); " +
			"SELECT ProductID, ListPrice FROM dbo.Products WHERE ProductID IN (1, 999) ORDER BY ProductID; ROLLBACK",
		trace: "MERGE dbo.Products AS t USING (VALUES (1, 9.5), (999, 1.25)) AS s(ProductID, ListPrice) ON t.ProductID = s.ProductID " +
			"WHEN MATCHED THEN UPDATE SET t.ListPrice = s.ListPrice WHEN NOT MATCHED THEN INSERT (ProductID, Name, Category, ListPrice) VALUES (s.ProductID, N'New product', N'Tools', s.ListPrice);",
		want: func(d *demo) [][]any { return [][]any{row(1, 9.5), row(999, 1.25)} }},
	{name: "index_hint_range_with_lookup", ordered: true,
		sql: "SELECT o.OrderID, o.Amount FROM dbo.Orders o WITH (INDEX(IX_Orders_CustomerID)) WHERE o.CustomerID BETWEEN 10 AND 12 ORDER BY o.OrderID",
		want: func(d *demo) [][]any {
			var out [][]any
			for _, o := range d.orders {
				if o.cust >= 10 && o.cust <= 12 {
					out = append(out, row(o.id, o.amount))
				}
			}
			return out
		}},
	{name: "all_quantifier_and_like",
		sql: "SELECT COUNT(*) AS n FROM dbo.Products WHERE ListPrice > ALL (SELECT ListPrice FROM dbo.Products WHERE Category = N'Toys' AND Name LIKE N'Product 0%')",
		want: func(d *demo) [][]any {
			mx := math.Inf(-1)
			for _, p := range d.products {
				if p.category == "Toys" && strings.HasPrefix(p.name, "Product 0") {
					mx = math.Max(mx, p.price)
				}
			}
			return [][]any{row(len(filter(d.products, func(p product) bool { return p.price > mx })))}
		}},
	{name: "left_join_is_null", ordered: true,
		sql: "SELECT p.ProductID FROM dbo.Products p LEFT JOIN dbo.OrderLines l ON l.ProductID = p.ProductID AND l.OrderID <= 200 WHERE l.ProductID IS NULL ORDER BY p.ProductID",
		want: func(d *demo) [][]any {
			used := map[int64]bool{}
			for _, l := range d.lines {
				if l.order <= 200 {
					used[l.product] = true
				}
			}
			var out [][]any
			for _, p := range d.products {
				if !used[p.id] {
					out = append(out, row(p.id))
				}
			}
			return out
		}},
}

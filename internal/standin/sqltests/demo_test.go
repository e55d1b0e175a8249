package sqltests

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin"
)

// The demo data as the generator makes it, in Go structs, for computing
// expected query results independently of the stand-in's engine.

type customer struct {
	id           int64
	name, region string
	created      time.Time
}

type product struct {
	id             int64
	name, category string
	price          float64
}

type order struct {
	id, cust int64
	date     time.Time
	amount   float64
	status   string
}

type line struct {
	order, num, product, qty int64
	price                    float64
}

type demo struct {
	customers []customer
	products  []product
	orders    []order
	lines     []line
	custByID  map[int64]customer
}

func loadDemo() *demo {
	data := standin.DemoData()
	d := &demo{custByID: map[int64]customer{}}
	for _, r := range data["Customers"].Rows {
		c := customer{r[0].(int64), r[1].(string), r[2].(string), r[3].(time.Time)}
		d.customers = append(d.customers, c)
		d.custByID[c.id] = c
	}
	for _, r := range data["Products"].Rows {
		d.products = append(d.products, product{r[0].(int64), r[1].(string), r[2].(string), r[3].(float64)})
	}
	for _, r := range data["Orders"].Rows {
		d.orders = append(d.orders, order{r[0].(int64), r[1].(int64), r[2].(time.Time), r[3].(float64), r[4].(string)})
	}
	for _, r := range data["OrderLines"].Rows {
		d.lines = append(d.lines, line{r[0].(int64), r[1].(int64), r[2].(int64), r[3].(int64), r[4].(float64)})
	}
	return d
}

// row builds an expected row.
func row(vals ...any) []any { return vals }

// normalize turns a value as go-mssqldb returns it (or as a test computes
// it) into a comparable form: numbers as float64, dates as UTC times.
func normalize(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case int32:
		return float64(x)
	case int16:
		return float64(x)
	case uint8:
		return float64(x)
	case float32:
		return float64(x)
	case float64:
		return x
	case bool:
		if x {
			return float64(1)
		}
		return float64(0)
	case []byte:
		if f, err := strconv.ParseFloat(string(x), 64); err == nil {
			return f
		}
		return string(x)
	case time.Time:
		return x.UTC()
	case string:
		return x
	}
	return fmt.Sprint(v)
}

func sameValue(a, b any) bool {
	a, b = normalize(a), normalize(b)
	switch x := a.(type) {
	case nil:
		return b == nil
	case float64:
		y, ok := b.(float64)
		if !ok {
			return false
		}
		return math.Abs(x-y) <= 1e-6*math.Max(1, math.Max(math.Abs(x), math.Abs(y)))
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	}
	return a == b
}

func rowKey(r []any) string {
	var parts []string
	for _, v := range r {
		v = normalize(v)
		switch x := v.(type) {
		case float64:
			parts = append(parts, strconv.FormatFloat(x, 'f', 4, 64))
		case time.Time:
			parts = append(parts, x.Format(time.RFC3339Nano))
		default:
			parts = append(parts, fmt.Sprint(x))
		}
	}
	return strings.Join(parts, "|")
}

// sortRows orders rows by their comparable form (for unordered results).
func sortRows(rows [][]any) {
	slices.SortFunc(rows, func(a, b []any) int { return cmp.Compare(rowKey(a), rowKey(b)) })
}

// Small helpers for the expected-result functions.

func sumBy[T any, K comparable](xs []T, key func(T) K, val func(T) float64) map[K]float64 {
	m := map[K]float64{}
	for _, x := range xs {
		m[key(x)] += val(x)
	}
	return m
}

func countBy[T any, K comparable](xs []T, key func(T) K) map[K]int64 {
	m := map[K]int64{}
	for _, x := range xs {
		m[key(x)]++
	}
	return m
}

func filter[T any](xs []T, keep func(T) bool) []T {
	var out []T
	for _, x := range xs {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

func keys[K cmp.Ordered, V any](m map[K]V) []K {
	var out []K
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func dateOnly(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

func ciLess(a, b string) int { return cmp.Compare(strings.ToUpper(a), strings.ToUpper(b)) }

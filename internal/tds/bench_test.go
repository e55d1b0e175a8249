package tds

import (
	"context"
	"io"
	"testing"
)

// BenchmarkSelectRows measures a 2,000-row result (int, nvarchar, small
// varbinary(max)) read end to end by go-mssqldb over loopback.
func BenchmarkSelectRows(b *testing.B) {
	_, addr := startServer(b, newTestHandler())
	db := openDB(b, addr, "")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		rows, err := db.QueryContext(ctx, "select rows 2000")
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for rows.Next() {
			n++
		}
		if err := rows.Err(); err != nil || n != 2000 {
			b.Fatalf("%d rows, %v", n, err)
		}
		rows.Close()
	}
	b.ReportMetric(float64(2000*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkRowEncoding measures ResultWriter.Row for the all-types row,
// without the network.
func BenchmarkRowEncoding(b *testing.B) {
	c := &conn{srv: &Server{}, out: newMessageWriter(io.Discard, 51)}
	c.sess.TDSVersion = 0x74000004
	w := newResultWriter(c, nil)
	if err := w.Columns(typeColumns...); err != nil {
		b.Fatal(err)
	}
	small := append([]any(nil), typeValues...)
	small[9], small[11], small[19] = "short", "short", []byte{1}
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Row(small...); err != nil {
			b.Fatal(err)
		}
	}
}

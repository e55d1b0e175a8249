package tracer

import (
	"context"
	"strings"
	"testing"
)

// TestTraceSendsNoByteOrderMark: a batch given as text with a leading BOM
// (pasted from a file saved with one) is traced without it — the
// classifier skips the mark and the server never sees it.
func TestTraceSendsNoByteOrderMark(t *testing.T) {
	srv := startStandin(t)
	tr, log, _ := newTracer(t, srv.dsn, Policy{})
	if _, err := tr.Trace(context.Background(), Options{SQL: "\uFEFF" + selectSQL}); err != nil {
		t.Fatal(err)
	}
	sent := false
	for _, q := range log.texts() {
		if strings.Contains(q, "\uFEFF") {
			t.Errorf("a statement reached the server with the byte-order mark: %q", q)
		}
		sent = sent || strings.Contains(q, selectSQL)
	}
	if !sent {
		t.Error("the batch itself was never sent")
	}
}

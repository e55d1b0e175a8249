package findings

import (
	"testing"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// TestFromStatements: each planned statement gets its own input — its own
// timeline, never the bundle's first — and statements without a plan
// (the batch, an EXEC) get none.
func TestFromStatements(t *testing.T) {
	one, two := &timeline.Trace{Statement: "SELECT 1"}, &timeline.Trace{Statement: "SELECT 2"}
	b := &bundle.Bundle{SQL: "EXEC dbo.P", Trace: one, Statements: []timeline.Statement{
		{ID: 0, Parent: -1, Kind: "batch", Trace: &timeline.Trace{}},
		{ID: 1, Parent: 0, Text: "EXEC dbo.P", Trace: &timeline.Trace{}},
		{ID: 2, Parent: 1, Text: "SELECT 1", Plan: "not a plan", Trace: one},
		{ID: 3, Parent: 1, Text: "SELECT 2", Plan: "not a plan", Trace: two},
	}}
	got := FromStatements(b)
	if len(got) != 2 {
		t.Fatalf("%d inputs, want the two planned statements", len(got))
	}
	if got[0].ID != 2 || got[0].Input.Trace != one || got[1].ID != 3 || got[1].Input.Trace != two {
		t.Errorf("inputs: %d → %p, %d → %p; want 2 → %p, 3 → %p", got[0].ID, got[0].Input.Trace, got[1].ID, got[1].Input.Trace, one, two)
	}
	if got[1].Input.Run.BatchText != "SELECT 2" {
		t.Errorf("statement 3's text = %q", got[1].Input.Run.BatchText)
	}
	if b.Trace != one {
		t.Error("FromStatements changed the bundle")
	}
	if FromStatements(&bundle.Bundle{Trace: one}) != nil {
		t.Error("a bundle without a tree gave inputs")
	}
}

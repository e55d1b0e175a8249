package tracer

import (
	"fmt"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/bundle"
)

// A ring_buffer document the server truncated (the newest events left
// out) is reported with how many were lost and that the plan was among
// them; the lost count is in Result.Lost.
func TestRingBufferTruncationReported(t *testing.T) {
	var doc strings.Builder
	doc.WriteString(`<RingBufferTarget truncated="1" processingTime="0" totalEventsProcessed="9" eventCount="9" droppedCount="0" memoryUsed="1">`)
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(&doc, `<event name="sql_batch_starting" package="sqlserver" timestamp="2024-01-01T00:00:00.00%dZ"><data name="batch_text"><value>x</value></data>`+
			`<action name="event_sequence" package="package0"><value>%d</value></action><action name="session_id" package="sqlserver"><value>51</value></action></event>`, i, i)
	}
	doc.WriteString("</RingBufferTarget>")
	b := &bundle.Bundle{}
	col := &collector{ids: newIdentities()}
	if _, err := readRingBuffer(b, col, doc.String()); err != nil {
		t.Fatal(err)
	}
	noteLostEvents(b, col, 0)
	if !b.Result.Truncated || b.Result.Lost != 6 {
		t.Errorf("truncated %v, lost %d; want true and 6", b.Result.Truncated, b.Result.Lost)
	}
	w := strings.Join(b.Result.Warnings, "\n")
	if !strings.Contains(w, "newest 6 events") || !strings.Contains(w, "plan was among them") {
		t.Errorf("warnings: %s", w)
	}
}

// The ring_buffer is sized as Microsoft recommends, so its target_data
// stays under the cap and the oldest events, not the plan, are dropped.
func TestRingBufferMaxMemory(t *testing.T) {
	ddl := SessionSpec{Name: "queryreplay_x", SPID: 51, Scope: ScopeDatabase, MaxEvents: 1000}.CreateDDL()
	if !strings.Contains(ddl, "max_memory = (2048)") {
		t.Errorf("ring_buffer DDL: %s", ddl)
	}
}

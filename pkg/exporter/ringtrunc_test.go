package exporter

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func ringDoc(truncated bool, eventCount int, seqs ...int) string {
	var b strings.Builder
	t := 0
	if truncated {
		t = 1
	}
	fmt.Fprintf(&b, `<RingBufferTarget truncated="%d" processingTime="0" totalEventsProcessed="%d" eventCount="%d" droppedCount="0" memoryUsed="1">`, t, eventCount, eventCount)
	for _, s := range seqs {
		fmt.Fprintf(&b, `<event name="page_split" package="sqlserver" timestamp="2024-01-01T00:00:00.000Z"><data name="page_id"><value>1</value></data>`+
			`<action name="event_sequence" package="package0"><value>%d</value></action><action name="database_id" package="sqlserver"><value>5</value></action></event>`, s)
	}
	b.WriteString("</RingBufferTarget>")
	return b.String()
}

// A truncated ring_buffer document left out its newest events: they are
// counted lost once, and not again (nor twice) when a later poll sees them.
func TestRingTruncationCountsLost(t *testing.T) {
	tg := &target{dec: newEventDecoder()}
	tg.ringSeq.startFresh()
	st := sessionState{created: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
	var rs readStats
	st.targetData = ringDoc(true, 10, 1, 2, 3, 4)
	if err := tg.readRing(st, newBatch(), &rs); err != nil {
		t.Fatal(err)
	}
	if rs.events != 4 || rs.lost != 6 {
		t.Fatalf("first poll: %d events, %d lost; want 4 and 6", rs.events, rs.lost)
	}
	// the ring drained a little: 5..10 now fit, 11 and 12 are new
	rs = readStats{}
	st.targetData = ringDoc(false, 8, 5, 6, 7, 8, 9, 10, 11, 12)
	if err := tg.readRing(st, newBatch(), &rs); err != nil {
		t.Fatal(err)
	}
	if rs.events != 2 || rs.lost != 0 {
		t.Fatalf("second poll: %d events, %d lost; want 2 (11, 12) and 0", rs.events, rs.lost)
	}
	// not truncated: nothing counted beyond the sequence gaps
	rs = readStats{}
	st.targetData = ringDoc(false, 3, 13, 14, 16)
	if err := tg.readRing(st, newBatch(), &rs); err != nil {
		t.Fatal(err)
	}
	if rs.events != 3 || rs.lost != 1 {
		t.Fatalf("third poll: %d events, %d lost; want 3 and 1", rs.events, rs.lost)
	}
}

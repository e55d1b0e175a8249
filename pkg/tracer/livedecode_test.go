package tracer

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/xe"
)

// waitEventsXML is n wait_info events whose wait types carry their index
// in their <text>, as the ring buffer's and the event file's XML has them.
func waitEventsXML(n int) []string {
	rows := make([]string, n)
	for i := range rows {
		rows[i] = fmt.Sprintf(`<event name="wait_info" package="sqlos" timestamp="2024-05-30T20:37:36.%03dZ">`+
			`<data name="wait_type"><value>%d</value><text>WAIT_%06d</text></data><data name="opcode"><value>1</value><text>End</text></data>`+
			`<data name="duration"><value>3</value></data>`+
			`<action name="event_sequence" package="package0"><value>%d</value></action></event>`, i%1000, i, i, i+1)
	}
	return rows
}

// A live event read from the ring buffer (decoded in place, ReuseEvents)
// keeps its own text: the wait types of a document larger than the
// decoder's buffer are still right after the whole document is decoded.
func TestLiveEventOwnsItsText(t *testing.T) {
	rows := waitEventsXML(5000) // about a megabyte, many buffer refills
	var got []LiveEvent
	if _, err := decodeAll(strings.NewReader(strings.Join(rows, "\n")), func(ev *xe.Event) {
		e, ok := liveEvent(ev, nil)
		if ok {
			got = append(got, e)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) {
		t.Fatalf("%d live events of %d", len(got), len(rows))
	}
	for i, e := range got {
		if want := fmt.Sprintf("WAIT_%06d", i); e.Detail != want {
			t.Fatalf("event %d: wait %q, want %q (its bytes were overwritten)", i, e.Detail, want)
		}
	}
}

// decodeRows gives the events of its rows in order whether it decodes them
// on one goroutine or two, counting rows that do not decode.
func TestDecodeRowsInOrder(t *testing.T) {
	rows := waitEventsXML(3001)
	rows[1500] = `<event name="wait_info" timestamp="not a time"></event>` // a bad row, at the halves' seam
	rows[7] = `<event name="wait_info" timestamp="also bad"></event>`
	var read liveRows
	for _, r := range rows {
		read.text = append(append(read.text, r...), '\n')
		read.rows = append(read.rows, liveRow{end: len(read.text)})
	}
	text := read.textOf(read.rows)
	defer func(was int) { decodeRowsParallel = was }(decodeRowsParallel)
	var results [][]string
	for _, from := range []int{1 << 30, 2} { // one goroutine, then two
		decodeRowsParallel = from
		var waits []string
		bad, err := decodeRows(text, read.rows, func(ev *xe.Event) {
			w, _ := xe.AsWait(ev, nil)
			waits = append(waits, strings.Clone(w.WaitType.Text))
		})
		if err != nil {
			t.Fatal(err)
		}
		if bad != 2 || len(waits) != len(rows)-2 {
			t.Fatalf("from %d rows: %d events and %d bad rows, want %d and 2", from, len(waits), bad, len(rows)-2)
		}
		results = append(results, waits)
	}
	for i := range results[0] {
		if !strings.HasPrefix(results[0][i], "WAIT_") || i > 0 && results[0][i] <= results[0][i-1] {
			t.Fatalf("event %d: %q out of order or overwritten", i, results[0][i])
		}
	}
	if !reflect.DeepEqual(results[0], results[1]) {
		t.Fatal("one goroutine and two decode different events")
	}
}

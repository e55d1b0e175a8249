package xevents

import (
	"fmt"
	"strings"
	"testing"
)

func ringEvent(seq, size int) RenderedEvent {
	body := fmt.Sprintf(`<event name="physical_page_read"><action name="event_sequence"><value>%d</value></action>`, seq)
	return RenderedEvent{Name: "physical_page_read", Ring: body + strings.Repeat(" ", max(0, size-len(body)-8)) + "</event>"}
}

// target_data is capped near 4 MB: the oldest events are written, the
// newest left out, truncated="1", and eventCount still says how many the
// ring holds.
func TestRingXMLCapLeavesOutNewest(t *testing.T) {
	tg := &Target{Name: "ring_buffer"}
	const size, n = 10000, 600 // 6 MB of event XML
	for i := 1; i <= n; i++ {
		tg.Ring = append(tg.Ring, ringEvent(i, size))
	}
	tg.RingTotal = n
	x := tg.RingXML()
	if len(x) > RingXMLCap+1024 {
		t.Errorf("target_data is %d bytes, over the cap", len(x))
	}
	if !strings.Contains(x, `truncated="1"`) || !strings.Contains(x, fmt.Sprintf(`eventCount="%d"`, n)) {
		t.Errorf("header: %.200s", x)
	}
	kept := strings.Count(x, "<event ")
	if kept != RingXMLCap/size {
		t.Errorf("%d events kept, want %d", kept, RingXMLCap/size)
	}
	if !strings.Contains(x, "<value>1</value>") || strings.Contains(x, fmt.Sprintf("<value>%d</value>", n)) {
		t.Error("the oldest event must be kept and the newest left out")
	}
	small := &Target{Name: "ring_buffer", Ring: tg.Ring[:10]}
	if x := small.RingXML(); !strings.Contains(x, `truncated="0"`) || strings.Count(x, "<event ") != 10 {
		t.Errorf("a small ring: %.200s", x)
	}
}

// A ring over its max_memory drops its oldest events and counts them.
func TestRingEvictsOldestByMemory(t *testing.T) {
	tg := &Target{Name: "ring_buffer", ringMaxKB: 100}
	for i := 1; i <= 50; i++ {
		tg.Ring = append(tg.Ring, ringEvent(i, 10000)) // 5,000 bytes charged each
	}
	tg.evictByMemory()
	if len(tg.Ring) != 20 || tg.RingDropped != 30 {
		t.Fatalf("%d kept, %d dropped; want 20 and 30", len(tg.Ring), tg.RingDropped)
	}
	if !strings.Contains(tg.Ring[0].Ring, "<value>31</value>") {
		t.Errorf("oldest kept: %.120s", tg.Ring[0].Ring)
	}
}

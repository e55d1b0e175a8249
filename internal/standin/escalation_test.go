package standin

import (
	"regexp"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/internal/standin/engine"
)

// lock_escalation fires where SQL Server's documented threshold says: one
// statement with 5,000 locks on one index (escalation.go), once. The
// statement's locks are fed to noteLock as acquire does (a 5,000-row
// update through SQL takes minutes on a shared machine).
func TestLockEscalationThreshold(t *testing.T) {
	srv := New(Options{})
	c := session(t, srv, 51)
	mustRun(t, c, "CREATE EVENT SESSION g ON SERVER ADD EVENT sqlserver.lock_escalation ADD TARGET package0.ring_buffer")
	mustRun(t, c, "ALTER EVENT SESSION g ON SERVER STATE = START")
	ring := func() string { // the target's events and those not yet dispatched to it
		var all strings.Builder
		sess := srv.sessions[0]
		for _, e := range append(sess.Targets[0].Ring, sess.Pending...) {
			all.WriteString(e.Ring)
		}
		return all.String()
	}
	x := &execCtx{srv: srv, conn: c, ec: c.eventCtx()}
	orders := srv.demo.Table("dbo", "Orders")
	lines := srv.demo.Table("dbo", "OrderLines")
	lock := func(ix *engine.Index, i int) heldLock {
		return heldLock{resType: "KEY", mode: "X", hobt: ix.PartitionID, desc: itoa(int64(i))}
	}
	// Look-alike: 4,999 key locks on each of two indexes: no index reaches
	// 5,000, and intent locks on the table are not counted.
	for i := range 4999 {
		x.noteLock(lock(orders.Indexes[0], i), 7)
		x.noteLock(lock(lines.Indexes[0], i), 7)
		x.noteLock(objectLock(orders, "IX"), 7)
	}
	if got := ring(); strings.Contains(got, "lock_escalation") {
		t.Fatalf("escalated below the threshold: %.1000s", got)
	}
	for i := 4999; i < 6000; i++ {
		x.noteLock(lock(orders.Indexes[0], i), 7)
	}
	got := ring()
	if n := strings.Count(got, `name="lock_escalation"`); n != 1 {
		t.Fatalf("%d lock_escalation events, want 1:\n%.2000s", n, got)
	}
	count := regexp.MustCompile(`name="escalated_lock_count">.*?<value>(\d+)</value>`).FindStringSubmatch(got)
	if count == nil || count[1] != "5000" || !strings.Contains(got, "LOCK_THRESHOLD") || !strings.Contains(got, "<![CDATA[X]]>") ||
		!strings.Contains(got, "<![CDATA[OBJECT]]>") {
		t.Errorf("event fields: %.2000s", got)
	}
	// A new statement counts from zero.
	x.stmtLocks = nil
	for i := range 4999 {
		x.noteLock(lock(orders.Indexes[0], i), 7)
	}
	if n := strings.Count(ring(), `name="lock_escalation"`); n != 1 {
		t.Errorf("the next statement's 4,999 locks escalated: %d events", n)
	}
}

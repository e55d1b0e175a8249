package standin

import (
	"sync"
	"sync/atomic"
	"time"
)

// The server latch. Every statement of every session runs under it, one
// at a time; a running statement gives it up every few hundred rows
// (yield) and around network writes (unlocked). A sync.Mutex is not fair
// enough for that: the statement that just gave it up takes it straight
// back more often than not, and a statement that holds it for 256 rows
// whose every row emits events keeps another session waiting for many
// milliseconds each time. Another session's statement that needs many
// turns — a monitor reading the event file while a traced query runs,
// which gives the latch up every 64 rows it sends — then advances by one
// turn per 256 rows of the running query, and a small query that yields
// even once waits a whole long turn for each yield.
//
// So the latch is handed over in arrival order (a waiter is given the
// latch by Unlock: whoever unlocks cannot take it back before the waiters
// queued ahead of it had their turn), and a statement gives it up sooner
// when someone waits: after sliceTicks rows or sliceTime of its own turn,
// whichever comes first (yieldDue). Nobody waiting, the latch costs one
// uncontended mutex per Lock and the statement keeps it for YieldEvery
// rows, as before.

// Scheduling of a contended latch.
const (
	// sliceTicks is how many rows a statement handles in one turn while
	// another session waits for the latch.
	sliceTicks = 64
	// sliceTime bounds a turn in wall time while another session waits:
	// rows that emit many events each cost far more than ordinary ones.
	sliceTime = time.Millisecond
)

// latch is a FIFO hand-off lock (a sync.Locker, so sync.Cond works on it).
type latch struct {
	mu      sync.Mutex
	held    bool
	queue   []chan struct{} // waiters, oldest first
	waiters atomic.Int32    // len(queue), read by the holder without mu

	// The holder's turn; only the holder touches these.
	since     time.Time // when the turn began
	contended int       // rows handled in the turn while someone waited

	// stats, under mu (tests read them through latchStats)
	stats latchStats
}

// latchStats count how the latch was shared.
type latchStats struct {
	handoffs     int64 // turns given to a waiter by Unlock
	maxContended int   // the most rows one turn handled while someone waited
}

// Lock waits for the latch: at once when it is free and nobody queues,
// else in arrival order.
func (l *latch) Lock() {
	l.mu.Lock()
	if !l.held && len(l.queue) == 0 {
		l.held = true
		l.mu.Unlock()
		l.beginTurn()
		return
	}
	ch := make(chan struct{})
	l.queue = append(l.queue, ch)
	l.waiters.Store(int32(len(l.queue)))
	l.mu.Unlock()
	<-ch // Unlock handed the latch over: held stays true
	l.beginTurn()
}

// Unlock ends the turn and hands the latch to the oldest waiter, if any.
func (l *latch) Unlock() {
	l.mu.Lock()
	if !l.held {
		l.mu.Unlock()
		panic("standin: unlock of an unlocked latch")
	}
	l.stats.maxContended = max(l.stats.maxContended, l.contended)
	if len(l.queue) == 0 {
		l.held = false
		l.mu.Unlock()
		return
	}
	next := l.queue[0]
	l.queue[0] = nil
	l.queue = l.queue[1:]
	l.waiters.Store(int32(len(l.queue)))
	l.stats.handoffs++
	l.mu.Unlock()
	close(next)
}

func (l *latch) beginTurn() {
	l.since = time.Time{} // read lazily: only a contended turn needs it
	l.contended = 0
}

// tick counts one row of the holder's turn and tells whether it should
// give the latch up now because another session waits and the turn is
// over: sliceTicks rows or sliceTime since the holder first saw someone
// waiting, so a waiter waits about one slice whatever the turn did before.
func (l *latch) tick() bool {
	if l.waiters.Load() == 0 {
		return false
	}
	l.contended++
	if l.contended >= sliceTicks {
		return true
	}
	now := time.Now()
	if l.since.IsZero() {
		l.since = now
		return false
	}
	return now.Sub(l.since) >= sliceTime
}

// snapshot returns the latch's counters.
func (l *latch) snapshot() latchStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}

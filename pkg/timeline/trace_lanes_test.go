package timeline

import "testing"

// EachMatch visits every event lane's entries, and only those.
func TestLanesEachMatch(t *testing.T) {
	l := Lanes{
		Plan:   make([]PlanEntry, 5),
		Read:   make([]PageEvent, 1),
		Write:  make([]PageEvent, 2),
		Lock:   make([]LockInterval, 3),
		Wait:   make([]WaitInterval, 4),
		Memory: make([]MemoryEvent, 5),
		Split:  make([]SplitEvent, 6),
		Log:    make([]LogEvent, 7),
		IO:     make([]IOInterval, 8),
	}
	n := 0
	l.EachMatch(func(m *Match) { n++; m.Candidates = 1 })
	if n != 36 {
		t.Errorf("visited %d entries, want 36 (1+…+8)", n)
	}
	if l.IO[7].Candidates != 1 || l.Read[0].Candidates != 1 {
		t.Error("EachMatch did not hand out the entries' own matches")
	}
}

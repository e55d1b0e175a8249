package standin

// Recorded event counts: how many events of each name every event session
// has recorded (the events that passed its predicate, each given an
// event_sequence number), summed over every session that has had the name,
// across DROP and CREATE, STOP and START and service restarts. It is the
// oracle the exporter's tests compare their counts with: a consumer that
// reads a session without losing or doubling anything counts exactly these.
// Events a target then loses (an event file deleted by rollover, a ring
// buffer that overwrote them) are still in these counts.

// noteRecorded counts one recorded event. The caller holds the server lock.
func (s *Server) noteRecorded(session, event string) {
	if s.recorded == nil {
		s.recorded = map[string]map[string]int64{}
	}
	m := s.recorded[session]
	if m == nil {
		m = map[string]int64{}
		s.recorded[session] = m
	}
	m[event]++
}

// RecordedEvents returns, by event name, how many events the sessions named
// session (case-sensitive) have recorded since the server was built.
func (s *Server) RecordedEvents(session string) map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int64{}
	for ev, n := range s.recorded[session] {
		out[ev] = n
	}
	return out
}

// FlushEventSessions dispatches every running session's pending events to
// its targets now, as MAX_DISPATCH_LATENCY eventually does, so a test can
// read them without waiting.
func (s *Server) FlushEventSessions() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sess := range s.sessions {
		if sess.Running {
			sess.Flush(s.files)
		}
	}
}

// EventFiles lists the event files on the emulated disk whose path starts
// with prefix, with their sizes in bytes.
func (s *Server) EventFiles(prefix string) map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int64{}
	for p, f := range s.files {
		if len(p) >= len(prefix) && p[:len(prefix)] == prefix {
			out[p] = f.Size
		}
	}
	return out
}

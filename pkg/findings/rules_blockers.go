package findings

import (
	"fmt"
	"sort"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// blockerSlackUs is how far a sampled blocker may lie outside a lock wait
// and still be matched to it: the tracer dates its samples by its own
// clock from the moment it sent the batch, which runs late against the
// server's event times by up to the network's one-way latency. (A
// matching tolerance, not a threshold: not in Config.)
const blockerSlackUs = 250_000

// sampledHolders returns the blockers whose samples overlap the group's
// lock waits, by first sighting, each session once.
func (a *analysis) sampledHolders(g *blockGroup) []bundle.BlockingSample {
	l := &a.in.Trace.Lanes
	var lk *timeline.LockInterval
	if g.lock >= 0 {
		lk = &l.Lock[g.lock]
	}
	seen := map[int]bool{}
	var out []bundle.BlockingSample
	for _, b := range a.in.Run.Blockers {
		if seen[b.SessionID] || !blockerMatchesLock(b, lk) {
			continue
		}
		for _, wi := range g.waits {
			if w := l.Wait[wi]; blockerMatchesWait(b, w) {
				seen[b.SessionID] = true
				out = append(out, b)
				break
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].FirstSeenUs < out[j].FirstSeenUs })
	return out
}

// blockerMatchesWait: the samples saw the same wait type while w lasted.
func blockerMatchesWait(b bundle.BlockingSample, w timeline.WaitInterval) bool {
	if b.WaitType != "" && !strings.EqualFold(b.WaitType, w.WaitType) {
		return false
	}
	from, to := min(b.WaitStartUs, b.FirstSeenUs), b.LastSeenUs
	return from <= w.End+blockerSlackUs && to >= w.T-blockerSlackUs
}

// blockerMatchesLock: a key wait's resource ("KEY: 5:72057594043236352
// (8194443284a0)") names the same key hash as the lock acquired after the
// wait, when both have one; other resources are not compared.
func blockerMatchesLock(b bundle.BlockingSample, lk *timeline.LockInterval) bool {
	if lk == nil || !strings.EqualFold(lk.ResourceType, "KEY") || !strings.HasPrefix(strings.ToUpper(b.WaitResource), "KEY:") {
		return true
	}
	want, ok := keyHash(b.WaitResource)
	got, ok2 := keyHash(lk.Resource)
	return !ok || !ok2 || strings.EqualFold(want, got)
}

// keyHash is the "(hash)" part of a key lock's resource.
func keyHash(s string) (string, bool) {
	i, j := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if i < 0 || j <= i+1 {
		return "", false
	}
	return s[i+1 : j], true
}

// holdersText is the sentence naming the holders: "Held by session 57
// (login app_user, host web01, program OrdersApp; sleeping: idle in an
// open transaction), seen in 4 samples of sys.dm_exec_requests."
func holdersText(hs []bundle.BlockingSample) string {
	if len(hs) == 0 {
		return ""
	}
	parts := make([]string, len(hs))
	samples := 0
	for i, h := range hs {
		parts[i] = holderDescription(h)
		samples += h.Samples
	}
	s := "Held by " + strings.Join(parts, ", then by ")
	plural := "s"
	if samples == 1 {
		plural = ""
	}
	return s + fmt.Sprintf(", seen in %d sample%s of sys.dm_exec_requests.", samples, plural)
}

func holderDescription(h bundle.BlockingSample) string {
	s := fmt.Sprintf("session %d", h.SessionID)
	switch h.SessionID {
	case -2:
		return "an orphaned distributed transaction (blocking_session_id -2)"
	case -3:
		return "a deferred recovery transaction (blocking_session_id -3)"
	case -4:
		return "a latch owner the server could not name (blocking_session_id -4)"
	}
	var who []string
	for _, kv := range [][2]string{{"login", h.Login}, {"host", h.Host}, {"program", h.Program}} {
		if kv[1] != "" {
			who = append(who, kv[0]+" "+clip(kv[1], 60))
		}
	}
	detail := strings.Join(who, ", ")
	if strings.EqualFold(h.Status, "sleeping") {
		if detail != "" {
			detail += "; "
		}
		detail += "sleeping: idle in an open transaction"
	}
	if detail != "" {
		s += " (" + detail + ")"
	}
	if h.Statement != "" {
		s += ", its last batch: " + clip(h.Statement, 120)
	}
	return s
}

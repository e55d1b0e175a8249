package findings

import (
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/bundle"
)

// The blocking rule names the session the tracer sampled while the lock
// wait lasted, and only one that matches it by time, wait type and key.
func TestBlockingNamesSampledHolder(t *testing.T) {
	tr := blockTrace(t, 1_200_000) // LCK_M_X from 1,000 to 1,201,000 µs on key (8194443284a0)
	holder := bundle.BlockingSample{SessionID: 57, WaitType: "LCK_M_X", WaitResource: "KEY: 5:72057594043170816 (8194443284a0)",
		WaitStartUs: 1_000, FirstSeenUs: 100_000, LastSeenUs: 1_100_000, Samples: 11,
		Login: "app_user", Host: "web01", Program: "OrdersApp", Status: "sleeping"}
	f := one(t, analyze(t, Input{Trace: tr, Run: Run{Blockers: []bundle.BlockingSample{holder}}}), "blocking")
	want := "Held by session 57 (login app_user, host web01, program OrdersApp; sleeping: idle in an open transaction), seen in 11 samples of sys.dm_exec_requests."
	if !strings.Contains(f.Detail, want) || strings.Contains(f.Detail, "not in this trace") {
		t.Errorf("detail %q", f.Detail)
	}
	if len(f.Holders) != 1 || f.Holders[0] != holder {
		t.Errorf("holders %+v", f.Holders)
	}

	cases := []struct {
		name  string
		edit  func(*bundle.BlockingSample)
		named bool
	}{
		{"another wait type", func(b *bundle.BlockingSample) { b.WaitType = "LCK_M_S" }, false},
		{"another key", func(b *bundle.BlockingSample) { b.WaitResource = "KEY: 5:72057594043170816 (0000aaaa0000)" }, false},
		{"long after the wait", func(b *bundle.BlockingSample) {
			b.WaitStartUs, b.FirstSeenUs, b.LastSeenUs = 1_500_000, 1_500_000, 1_600_000
		}, false},
		{"within the slack after it", func(b *bundle.BlockingSample) {
			b.WaitStartUs, b.FirstSeenUs, b.LastSeenUs = 1_400_000, 1_400_000, 1_420_000
		}, true},
		{"a page resource is not compared", func(b *bundle.BlockingSample) { b.WaitResource = "PAGE: 5:1:400" }, true},
		{"no wait type sampled", func(b *bundle.BlockingSample) { b.WaitType = "" }, true},
	}
	for _, c := range cases {
		b := holder
		c.edit(&b)
		f := one(t, analyze(t, Input{Trace: tr, Run: Run{Blockers: []bundle.BlockingSample{b}}}), "blocking")
		if named := strings.Contains(f.Detail, "Held by session 57"); named != c.named {
			t.Errorf("%s: named %v, detail %q", c.name, named, f.Detail)
		}
		if c.named != (len(f.Holders) == 1) {
			t.Errorf("%s: holders %+v", c.name, f.Holders)
		}
	}

	// Two sessions in turn, with the statement when the trace read it;
	// the same session twice is named once.
	second := bundle.BlockingSample{SessionID: 61, WaitType: "LCK_M_X", WaitStartUs: 600_000, FirstSeenUs: 700_000, LastSeenUs: 1_150_000, Samples: 2,
		Login: "batch", Status: "running", Statement: "UPDATE dbo.Users SET Age = Age + 1"}
	again := holder
	again.FirstSeenUs, again.Samples = 1_160_000, 1
	f = one(t, analyze(t, Input{Trace: tr, Run: Run{Blockers: []bundle.BlockingSample{second, holder, again}}}), "blocking")
	if !strings.Contains(f.Detail, "Held by session 57 (login app_user, host web01, program OrdersApp; sleeping: idle in an open transaction), then by session 61 (login batch), its last batch: UPDATE dbo.Users SET Age = Age + 1, seen in 13 samples") {
		t.Errorf("two holders: %q", f.Detail)
	}
	// a caller-supplied holder wins over the samples
	lk := tr.Lanes.Lock[len(tr.Lanes.Lock)-1]
	f = one(t, analyze(t, Input{Trace: tr, Run: Run{Holders: []LockHolder{{Resource: lk.Resource, SessionID: 70}}, Blockers: []bundle.BlockingSample{holder}}}), "blocking")
	if !strings.Contains(f.Detail, "Held by session 70.") || len(f.Holders) != 0 {
		t.Errorf("given holder: %q %+v", f.Detail, f.Holders)
	}
	// a blocker without a lock wait fires nothing
	none(t, analyze(t, Input{Trace: blockTrace(t, 0), Run: Run{Blockers: []bundle.BlockingSample{holder}}}), "blocking")
}

func TestHolderDescriptionSpecialSessions(t *testing.T) {
	for id, want := range map[int]string{-2: "orphaned distributed transaction", -3: "deferred recovery", -4: "latch owner"} {
		if got := holdersText([]bundle.BlockingSample{{SessionID: id, Samples: 1}}); !strings.Contains(got, want) || !strings.HasSuffix(got, "seen in 1 sample of sys.dm_exec_requests.") {
			t.Errorf("%d: %q", id, got)
		}
	}
}

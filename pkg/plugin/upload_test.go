package plugin

import (
	"strings"
	"testing"
)

// TestUploadLimitIsTheTransportsAtMost: an upload's body as sent is bounded
// by traceStore.maxBundleMB but never past what one gRPC message to the
// plugin may carry; past that the error says to send the gzip file, and no
// setting is named that would not help.
func TestUploadLimitIsTheTransportsAtMost(t *testing.T) {
	for _, c := range []struct {
		mb        int
		want      int64
		knob, why string
	}{
		{0, 256 << 20, "traceStore.maxBundleMB", ""},
		{20, 20 << 20, "traceStore.maxBundleMB", ""},
		{256, 256 << 20, "traceStore.maxBundleMB", ""},
		{1024, MaxUploadBytes, "", "gzip"},
	} {
		l := uploadLimit(TraceStoreSettings{MaxBundleMB: c.mb}.bundleLimit())
		if l.Limit != c.want || !strings.Contains(l.Knob, c.knob) || (c.knob == "" && l.Knob != "") {
			t.Errorf("maxBundleMB %d: limit %d knob %q; want %d, knob naming %q", c.mb, l.Limit, l.Knob, c.want, c.knob)
		}
		if !strings.Contains(l.Error(), c.why) {
			t.Errorf("maxBundleMB %d: %q does not say %q", c.mb, l.Error(), c.why)
		}
	}
	if got := GRPCSettings().MaxReceiveMsgSize; got <= MaxUploadBytes {
		t.Errorf("gRPC receive limit %d leaves no room for the envelope of a %d-byte upload", got, MaxUploadBytes)
	}
}

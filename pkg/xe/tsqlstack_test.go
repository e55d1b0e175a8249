package xe

import (
	"strings"
	"testing"
)

func TestParseTSQLStack(t *testing.T) {
	// event_file XML prints the frames as child elements with " quotes;
	// older output escapes them as text with ' quotes
	raw := `<frames><frame level="2" handle="0x02000000AB" line="3" offsetStart="70" offsetEnd="-1" />` +
		`<frame level='1' handle='0x03000500CD' line='4' offsetStart='120' offsetEnd='250'/></frames>`
	fs, ok := ParseTSQLStack(raw)
	if !ok || len(fs) != 2 {
		t.Fatalf("ParseTSQLStack = %+v, %v; want two frames", fs, ok)
	}
	if fs[0].Level != 1 || fs[0].Handle != "0x03000500CD" || fs[0].Line != 4 || fs[0].OffsetStart != 120 || fs[0].OffsetEnd != 250 {
		t.Errorf("innermost frame = %+v", fs[0])
	}
	if fs[1].Level != 2 || fs[1].Handle != "0x02000000AB" || fs[1].OffsetStart != 70 || fs[1].OffsetEnd != -1 {
		t.Errorf("outer frame = %+v", fs[1])
	}
	for _, bad := range []string{"", "<frames/>", `<frame level="1"/>`, "<frame handle='0x01'"} {
		if fs, ok := ParseTSQLStack(bad); ok {
			t.Errorf("ParseTSQLStack(%q) = %+v, want not ok", bad, fs)
		}
	}
	deep := strings.Repeat(`<frame level="1" handle="0x01"/>`, MaxTSQLFrames+1)
	if _, ok := ParseTSQLStack(deep); ok {
		t.Errorf("a stack of %d frames was accepted", MaxTSQLFrames+1)
	}
	// an attribute whose name ends another's (xhandle) is not handle
	if fs, ok := ParseTSQLStack(`<frame xhandle="0x09" handle="0x01" level="1"/>`); !ok || fs[0].Handle != "0x01" {
		t.Errorf("handle read as %+v", fs)
	}
}

func FuzzParseTSQLStack(f *testing.F) {
	f.Add(`<frames><frame level="1" handle="0x02" line="1" offsetStart="0" offsetEnd="-1"/></frames>`)
	f.Add(`<frame level='2' handle='0x03' offsetStart='4'/><frame level='1' handle='0x04'/>`)
	f.Add(`<frame handle=`)
	f.Fuzz(func(t *testing.T, raw string) {
		fs, ok := ParseTSQLStack(raw)
		if ok && (len(fs) == 0 || len(fs) > MaxTSQLFrames) {
			t.Fatalf("ok with %d frames", len(fs))
		}
		for i := range fs {
			if fs[i].Handle == "" {
				t.Fatalf("frame %d has no handle", i)
			}
			if i > 0 && fs[i].Level < fs[i-1].Level {
				t.Fatalf("frames out of level order: %+v", fs)
			}
		}
	})
}

package callstack

import (
	"slices"
	"strings"
	"testing"
)

// TestRingBufferOneStackPerEvent: the real ring_buffer document holds six
// error_reported events, each with a 24-frame callstack action (counted in
// the file). Frames come only from the callstack action, never from data
// fields such as destination's <value>0x0000009c</value>.
func TestRingBufferOneStackPerEvent(t *testing.T) {
	stacks, err := Parse(readTestdata(t, "ringbuffer_error_reported_callstack_sql2017_error701.xml"), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := frameCounts(stacks); !slices.Equal(got, []int{24, 24, 24, 24, 24, 24}) {
		t.Fatalf("frame counts %v, want six stacks of 24", got)
	}
	for i, s := range stacks {
		if s.Count != 1 {
			t.Errorf("stack %d count %d", i, s.Count)
		}
		if !strings.HasPrefix(s.Label, "error_reported") {
			t.Errorf("stack %d label %q, want the event name", i, s.Label)
		}
		for _, f := range s.Frames {
			if f.Module == "" || !f.HasRVA {
				t.Errorf("stack %d: frame %s is not module+offset", i, f)
			}
		}
		if f := s.Frames[0]; f.ModuleName() != "sqllang" || f.RVA != 0x3877FC {
			t.Errorf("stack %d frame 0 = %s", i, f)
		}
		if f := s.Frames[9]; f.ModuleName() != "xtp_p_5_597577167_185186125354548_1" || f.RVA != 0xE9FC {
			t.Errorf("stack %d frame 9 = %s", i, f)
		}
	}
}

// TestBareAddressOnlyInFramePosition: 0x… values in register dumps, base
// address lines and other fields are not frames; in an address list they are.
func TestBareAddressOnlyInFramePosition(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
	}{
		{"a = 0x0000000000000000      a1 = 0x0000000000000000\nb = 0x0000000000000000", []int{}},
		{"rax=0000000000000000 rbx=0x00007ffeabd0d919 rcx=0x1", []int{}},
		{"C:\\System32\\KERNELBASE.dll\t0x00007FFEC0700000 0x7FFEC0700000", []int{}},
		{"sqldk.dll 0x0000000100400000", []int{}},
		{"<<System32\\KERNELBASE.dll>>\t0x00007FFEC0700000", []int{}},
		{"error 0x80004005 while reading sqldk+0x40609", []int{}},
		{"0x00007FFEABD0D919 0x00007FFEABC4D45D\n0x00007FFEAC0F7EE0", []int{3}},
		{"callstack\t  0x00007FFEABD0D919  0x00007FFEABC4D45D", []int{2}},
		{"00 sqldk+0x40609\n01 sqlmin+0x1234", []int{2}},
		{"sqlmin!SqlAutoReadOnlyXact::`scalar deleting destructor'+0x10\nsqldk!A<int, long>::F", []int{2}},
	} {
		stacks, err := Parse(tc.in, ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := frameCounts(stacks); !slices.Equal(got, tc.want) {
			t.Errorf("Parse(%q) frame counts %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestEscapedLineBreakGluedToModule: inputs pasted from C# strings keep a
// literal \r\n next to the module name.
func TestEscapedLineBreakGluedToModule(t *testing.T) {
	stacks, err := Parse(`\r\n    sqldk+0x40609 sqldk+40609\r\nsqldk+0x40609 sqldk+40609`, ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(stacks) != 1 || len(stacks[0].Frames) != 4 {
		t.Fatalf("frame counts %v, want [4]", frameCounts(stacks))
	}
	for _, f := range stacks[0].Frames {
		if f.Module != "sqldk" || f.RVA != 0x40609 {
			t.Errorf("frame %+v, want module sqldk rva 0x40609", f)
		}
	}
}

func TestDecodeTextUTF16WithoutBOM(t *testing.T) {
	text := "sqldk+0x40609\r\nsqlmin!CQScanNLJoinNew::GetRow+0x1f\r\n"
	le, be := []byte{}, []byte{}
	for _, r := range text {
		le = append(le, byte(r), 0)
		be = append(be, 0, byte(r))
	}
	for name, b := range map[string][]byte{"LE": le, "BE": be} {
		if got := DecodeText(b); got != text {
			t.Errorf("%s: %q", name, got)
		}
	}
	if got := DecodeText([]byte("ab\x00")); got != "ab\x00" {
		t.Errorf("UTF-8 with a NUL mangled: %q", got)
	}
}

package main

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

const realXEL = "../../pkg/xe/testdata/xel/xe_wait_completed_0_132353446563350000.xel"

// TestXEDecodeXEL decodes the real .xel file through the CLI: the same JSON
// lines as the XML path, checked against the reader's golden events.
func TestXEDecodeXEL(t *testing.T) {
	code, out, errOut := runCLI(t, "xe", "decode", realXEL)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 553 {
		t.Fatalf("%d events, want 553", len(lines))
	}
	f, err := os.Open("../../pkg/xe/testdata/xel/golden_events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	sc.Scan()
	if lines[0] != sc.Text() {
		t.Fatalf("first event differs from the golden one:\n got %s\nwant %s", lines[0], sc.Text())
	}
	if !strings.Contains(lines[0], `"timestamp":"2020-05-30T20:37:36.3626428Z"`) {
		t.Fatalf("timestamp digits lost: %s", lines[0])
	}
}

func TestXEDecodeTruncatedXEL(t *testing.T) {
	data, err := os.ReadFile(realXEL)
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/cut.xel"
	if err := os.WriteFile(path, data[:len(data)/2+123], 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, "xe", "decode", path)
	if code != 1 || !strings.Contains(errOut, "offset") {
		t.Fatalf("exit %d, stderr %q: want a failure naming the offset", code, errOut)
	}
}

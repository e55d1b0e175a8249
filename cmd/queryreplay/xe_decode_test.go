package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
)

// TestXEDecodeResultSetDump: a fn_xe_file_target_read_file result set
// printed as a table (the Microsoft docs' own example) decodes to its two
// events; the other columns between them are skipped. --strict reports them.
func TestXEDecodeResultSetDump(t *testing.T) {
	file := xeTestdata + "realdata/xe_event_xml/msdocs/event_file_lock_acquired_released_fn_xe_file_target_read_file_rows.txt"
	code, out, errOut := runXE(t, "", file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d events, want 2 (the rows of the dump):\n%s", len(lines), out)
	}
	for i, name := range []string{"lock_acquired", "lock_released"} {
		var ev struct {
			Name    string         `json:"name"`
			Actions map[string]any `json:"actions"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &ev); err != nil || ev.Name != name || ev.Actions["transaction_id"] != float64(39194) {
			t.Errorf("event %d: %s (%v)", i, lines[i], err)
		}
	}
	if code, _, errOut := runXE(t, "", "--strict", file); code != 1 || !strings.Contains(errOut, "outside an <event>") {
		t.Errorf("--strict: exit %d, %s", code, errOut)
	}
}

// TestXEDecodeHistogram: a histogram target document gives one JSON line
// per slot, with its count and value. Expected values counted in the file.
func TestXEDecodeHistogram(t *testing.T) {
	file := xeTestdata + "realdata/callstack/histogram_spinlock_backoff_LOCK_HASH_callstack.xml"
	code, out, errOut := runXE(t, "", file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	wantCounts := []float64{1132435, 1046453, 1334, 1276}
	if len(lines) != len(wantCounts) {
		t.Fatalf("%d lines, want %d slots:\n%s", len(lines), len(wantCounts), out)
	}
	for i, l := range lines {
		var s struct {
			Slot  int     `json:"slot"`
			Count float64 `json:"count"`
			Value string  `json:"value"`
		}
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatalf("line %d: %v: %s", i, err, l)
		}
		if s.Slot != i || s.Count != wantCounts[i] || !strings.HasPrefix(s.Value, "sqldk.dll+0x") || strings.Count(s.Value, "\n") != 23 {
			t.Errorf("slot %d: %+v", i, s)
		}
	}
	if !strings.Contains(errOut, "histogram target") || !strings.Contains(errOut, "buckets=256") {
		t.Errorf("no histogram summary on stderr: %s", errOut)
	}
}

// TestXEDecodeUTF16File: an event file saved as UTF-16 without a BOM.
func TestXEDecodeUTF16File(t *testing.T) {
	text := `<event name="a" package="p" timestamp="2024-01-01T00:00:00Z"><data name="x"><value>Grüße</value></data></event>`
	var b []byte
	for _, u := range utf16.Encode([]rune(text)) {
		b = append(b, byte(u), byte(u>>8))
	}
	path := filepath.Join(t.TempDir(), "utf16.xml")
	os.WriteFile(path, b, 0o644)
	code, out, errOut := runXE(t, "", path)
	if code != 0 || !strings.Contains(out, `"x":"Grüße"`) {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
}

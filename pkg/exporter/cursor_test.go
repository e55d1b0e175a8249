package exporter

import (
	"errors"
	"fmt"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/xe"
)

func TestSeqTracker(t *testing.T) {
	type step struct {
		scope     string
		seq       uint64
		dup       bool
		lost      uint64
		afterLast uint64
	}
	cases := []struct {
		name  string
		fresh bool
		steps []step
	}{
		{"fresh numbering from 1", true, []step{{"f1", 1, false, 0, 1}, {"f1", 2, false, 0, 2}, {"f1", 5, false, 2, 5}}},
		{"fresh session whose head was lost", true, []step{{"f1", 4, false, 3, 4}}},
		{"duplicates in the same file", true, []step{{"f1", 1, false, 0, 1}, {"f1", 2, false, 0, 2}, {"f1", 2, true, 0, 2}, {"f1", 1, true, 0, 2}, {"f1", 3, false, 0, 3}}},
		{"rollover file continues the numbering", true, []step{{"f1", 1, false, 0, 1}, {"f2", 2, false, 0, 2}, {"f3", 7, false, 4, 7}}},
		{"a new start renumbers from 1", true, []step{{"f1", 10, false, 9, 10}, {"f2", 1, false, 0, 1}, {"f2", 2, false, 0, 2}}},
		{"a new start whose head was lost", true, []step{{"f1", 10, false, 9, 10}, {"f2", 3, false, 2, 3}}},
		{"unknown baseline loses nothing", false, []step{{"f9", 500, false, 0, 500}, {"f9", 501, false, 0, 501}, {"f9", 501, true, 0, 501}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s seqTracker
			if c.fresh {
				s.startFresh()
			} else {
				s.startUnknown()
			}
			for i, st := range c.steps {
				dup, lost := s.observe(st.scope, st.seq)
				if dup != st.dup || lost != st.lost || s.last != st.afterLast {
					t.Fatalf("step %d (%s #%d): dup %v lost %d last %d, want %v %d %d", i, st.scope, st.seq, dup, lost, s.last, st.dup, st.lost, st.afterLast)
				}
			}
		})
	}
}

// fakeRows serves fn_xe_file_target_read_file rows and can fail after a
// number of them, as a dropped connection does half-way through a result.
type fakeRows struct {
	rows   []fileRow
	i      int
	failAt int // -1: never
}

func (f *fakeRows) Next() bool {
	if f.failAt >= 0 && f.i >= f.failAt {
		return false
	}
	f.i++
	return f.i <= len(f.rows)
}
func (f *fakeRows) Row() (fileRow, error) { return f.rows[f.i-1], nil }
func (f *fakeRows) Err() error {
	if f.failAt >= 0 && f.i >= f.failAt {
		return errors.New("read: connection reset")
	}
	return nil
}
func (f *fakeRows) Close() error { return nil }

// eventRow is one spill event with its sequence, as a row of file at offset.
func eventRow(file string, offset int64, seq uint64) fileRow {
	x := fmt.Sprintf(`<event name="sort_warning" package="sqlserver" timestamp="2026-01-01T00:00:00.000Z">`+
		`<data name="sort_warning_type"><value>1</value><text><![CDATA[Single pass]]></text></data>`+
		`<action name="event_sequence" package="package0"><value>%d</value></action>`+
		`<action name="database_id" package="sqlserver"><value>5</value></action></event>`, seq)
	return fileRow{data: []byte(x), file: file, offset: offset}
}

// server is a toy event file server: it answers the cursor's bookmark as
// fn_xe_file_target_read_file does, resuming after the bookmarked buffer.
func serve(all []fileRow, c *fileCursor, failAt int) *fakeRows {
	out := all
	if c.hasBook {
		for i, r := range all {
			if r.file == c.bookFile && r.offset == c.bookOffset {
				for i < len(all) && all[i].file == c.bookFile && all[i].offset == c.bookOffset {
					i++
				}
				out = all[i:]
				break
			}
		}
	}
	return &fakeRows{rows: out, failAt: failAt}
}

// freshRead is the state of a first read of a session just created.
func freshRead() (*fileCursor, *xe.Decoder, *batch, *readStats) {
	c := &fileCursor{}
	c.seq.startFresh()
	return c, newEventDecoder(), newBatch(), &readStats{}
}

// A read that fails half-way through a buffer keeps what it counted; the
// next read starts again at that buffer, and event_sequence drops exactly
// the events counted twice. Every event is counted once, whatever the
// failure point.
func TestHalfReadBufferIsNeverCountedTwice(t *testing.T) {
	var all []fileRow
	seq := uint64(0)
	for _, f := range []string{"/log/x_0_100.xel", "/log/x_0_200.xel"} {
		for off := int64(4608); off < 4608+3*512; off += 512 {
			for k := 0; k < 4; k++ {
				seq++
				all = append(all, eventRow(f, off, seq))
			}
		}
	}
	for failAt := 0; failAt <= len(all); failAt++ {
		c, dec, b, st := freshRead()
		if err := c.consume(serve(all, c, failAt), dec, b, st); err == nil && failAt < len(all) {
			t.Fatalf("failAt %d: no error", failAt)
		}
		for attempt := 0; attempt < 3; attempt++ {
			if err := c.consume(serve(all, c, -1), dec, b, st); err != nil {
				t.Fatal(err)
			}
		}
		if got := b.decodedOf("sort_warning"); got != uint64(len(all)) || st.lost != 0 {
			t.Fatalf("failAt %d: counted %d of %d, lost %d", failAt, got, len(all), st.lost)
		}
		// the part of the buffer read before the failure is read again; a
		// failure just after a buffer's last row cannot tell that the
		// buffer was complete, so that whole buffer is read again
		want := uint64(failAt % 4)
		if want == 0 && failAt > 0 {
			want = 4
		}
		if st.duplicates != want {
			t.Errorf("failAt %d: %d duplicates, want %d", failAt, st.duplicates, want)
		}
		if !c.hasBook || c.bookFile != "/log/x_0_200.xel" || c.bookOffset != 4608+2*512 {
			t.Errorf("failAt %d: bookmark %s@%d", failAt, c.bookFile, c.bookOffset)
		}
	}
}

// After the server refused the bookmark (its file rolled over), rows up to
// it are skipped client-side and the rest counted; the file that vanished
// shows as lost events.
func TestFallBackSkipsUpToTheBookmark(t *testing.T) {
	c := &fileCursor{}
	c.seq.startFresh()
	c.setBookmark("/log/x_0_100.xel", 5120)
	c.seq.observe("/log/x_0_100.xel", 8)
	c.fallBack()
	if c.hasBook || !c.skipping {
		t.Fatal("fallBack kept the bookmark")
	}
	rows := []fileRow{eventRow("/log/x_0_100.xel", 5120, 8), eventRow("/log/x_0_300.xel", 4608, 20), eventRow("/log/x_0_300.xel", 4608, 21)}
	dec := xe.NewDecoder(nil)
	b := newBatch()
	var st readStats
	if err := c.consume(&fakeRows{rows: rows, failAt: -1}, dec, b, &st); err != nil {
		t.Fatal(err)
	}
	if b.decodedOf("sort_warning") != 2 || st.lost != 11 || st.duplicates != 0 {
		t.Fatalf("decoded %d, lost %d, duplicates %d; want 2, 11 (9..19), 0", b.decodedOf("sort_warning"), st.lost, st.duplicates)
	}
}

func TestAfterOrdersByFileTime(t *testing.T) {
	for _, c := range []struct {
		f    string
		off  int64
		rf   string
		roff int64
		want bool
	}{
		{"/l/x_0_200.xel", 0, "/l/x_0_100.xel", 9999, true},
		{"/l/x_0_100.xel", 9999, "/l/x_0_200.xel", 0, false},
		{"/l/x_0_100.xel", 5120, "/l/X_0_100.XEL", 4608, true},
		{"/l/x_0_100.xel", 4608, "/l/x_0_100.xel", 4608, false},
		{"/l/x_0_99.xel", 0, "/l/x_0_100.xel", 0, false}, // numbers, not text
	} {
		if got := after(c.f, c.off, c.rf, c.roff); got != c.want {
			t.Errorf("after(%s@%d, %s@%d) = %v", c.f, c.off, c.rf, c.roff, got)
		}
	}
}

func TestReadPattern(t *testing.T) {
	for in, want := range map[string]string{
		"/var/opt/mssql/log/queryreplay_exporter_a_0_133900000000000000.xel":      "/var/opt/mssql/log/queryreplay_exporter_a_0_*.xel",
		`C:\MSSQL\Log\queryreplay_exporter_a_0_1339.xel`:                          `C:\MSSQL\Log\queryreplay_exporter_a_0_*.xel`,
		"https://acct.blob.core.windows.net/xe/queryreplay_exporter_a_0_1339.xel": "https://acct.blob.core.windows.net/xe/queryreplay_exporter_a_0_",
		"/var/opt/mssql/log/queryreplay_exporter_a_0_b_0_133900000000000000.xel":  "/var/opt/mssql/log/queryreplay_exporter_a_0_b_0_*.xel",
	} {
		if got, ok := readPattern(in); !ok || got != want {
			t.Errorf("readPattern(%s) = %s, want %s", in, got, want)
		}
	}
	if _, ok := readPattern("/x/y.xel"); ok {
		t.Error("a file without _0_ has no pattern")
	}
}

func TestReadQueryQuotes(t *testing.T) {
	c := &fileCursor{pattern: "/l/o'brien_0_*.xel"}
	if q := c.readQuery(); q != "SELECT object_name, event_data, file_name, file_offset FROM sys.fn_xe_file_target_read_file(N'/l/o''brien_0_*.xel', NULL, NULL, NULL)" {
		t.Errorf("first read: %s", q)
	}
	c.setBookmark("/l/o'brien_0_1.xel", 5120)
	if q := c.readQuery(); q != "SELECT object_name, event_data, file_name, file_offset FROM sys.fn_xe_file_target_read_file(N'/l/o''brien_0_*.xel', NULL, N'/l/o''brien_0_1.xel', 5120)" {
		t.Errorf("resumed read: %s", q)
	}
}

// A malformed row is counted as malformed and skipped in the same read:
// the events around it are counted once, the bookmark moves past its
// buffer, and its sequence number shows as one lost event.
func TestMalformedRowIsCountedAndSkipped(t *testing.T) {
	var all []fileRow
	for i := uint64(1); i <= 12; i++ {
		all = append(all, eventRow("/log/x_0_100.xel", 4608+int64((i-1)/4)*512, i))
	}
	all[6].data = []byte(`<event name="sort_warning" package="sqlserver" timestamp="2026-01-01T00:00:00.000Z"><data name="x"><value>1</val`)
	c, dec, b, st := freshRead()
	if err := c.consume(serve(all, c, -1), dec, b, st); err != nil {
		t.Fatal(err)
	}
	if b.decodedOf("sort_warning") != 11 || b.malformed != 1 || st.lost != 1 || st.duplicates != 0 {
		t.Errorf("decoded %d, malformed %d, lost %d, duplicates %d; want 11, 1, 1 (the malformed row's sequence), 0",
			b.decodedOf("sort_warning"), b.malformed, st.lost, st.duplicates)
	}
	if !c.hasBook || c.bookOffset != 4608+2*512 {
		t.Errorf("bookmark %v@%d, want the last buffer", c.hasBook, c.bookOffset)
	}
	// read again from the bookmark: nothing new, nothing counted twice
	if err := c.consume(serve(all, c, -1), dec, b, st); err != nil {
		t.Fatal(err)
	}
	if b.decodedOf("sort_warning") != 11 || b.malformed != 1 {
		t.Errorf("second read: decoded %d, malformed %d", b.decodedOf("sort_warning"), b.malformed)
	}
}

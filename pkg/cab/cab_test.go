package cab

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/internal/testenv"
)

// gcabFiles makes a cabinet with gcab (Debian package gcab, an
// independent implementation of the format) from the given files.
func gcabFiles(t testing.TB, compress bool, files map[string][]byte) []byte {
	t.Helper()
	gcab := testenv.RequireTool(t, "gcab", "gcab")
	dir := t.TempDir()
	args := []string{"-c", "-n"}
	if compress {
		args = append(args, "-z")
	}
	args = append(args, filepath.Join(dir, "out.cab"))
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	if out, err := exec.Command(gcab, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcab %v: %v\n%s", args, err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "out.cab"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testFiles: a PDB-like mix of repeated structure and noise, several MSZIP
// blocks long (the window must carry across blocks), a small text file and
// an empty one.
func testFiles() map[string][]byte {
	r := rand.New(rand.NewPCG(7, 8))
	var big bytes.Buffer
	for big.Len() < 300_000 {
		big.WriteString("?ErsqExecuteQuery@CStmtQuery@sql@@QEAAHH@Z\x00")
		for range r.IntN(40) {
			big.WriteByte(byte(r.IntN(256)))
		}
	}
	return map[string][]byte{"sqlmin.pdb": big.Bytes(), "readme.txt": []byte("symbols\r\n"), "empty.bin": nil}
}

func readAll(t *testing.T, c *Reader, name string) []byte {
	t.Helper()
	f, ok := c.Find(name)
	if !ok {
		t.Fatalf("%s not in the cabinet: %v", name, c.Files)
	}
	r, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}

func TestGcabCabinets(t *testing.T) {
	files := testFiles()
	for _, compress := range []bool{true, false} {
		b := gcabFiles(t, compress, files)
		c, err := NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatalf("compress=%v: %v", compress, err)
		}
		if len(c.Files) != len(files) {
			t.Errorf("compress=%v: %d files, want %d", compress, len(c.Files), len(files))
		}
		for name, want := range files {
			if got := readAll(t, c, name); !bytes.Equal(got, want) {
				t.Errorf("compress=%v: %s: %d bytes differ from the %d packed", compress, name, len(got), len(want))
			}
			f, _ := c.Find(strings.ToUpper(name))
			if f == nil || f.Size != uint32(len(want)) {
				t.Errorf("Find is case-sensitive or size wrong: %+v", f)
			}
		}
		wantMethod := MethodNone
		if compress {
			wantMethod = MethodMSZIP
			if n := c.folders[0].blocks; n < 9 {
				t.Errorf("only %d MSZIP blocks; the test needs several", n)
			}
		}
		if m := c.Files[0].Method(); m != wantMethod {
			t.Errorf("method %d, want %d", m, wantMethod)
		}
	}
}

func TestCorruptionIsDetected(t *testing.T) {
	b := gcabFiles(t, true, testFiles())
	c, err := NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	// Flip a byte inside the third data block: the checksum catches it.
	fo := c.folders[0]
	at := fo.firstData
	for range 2 {
		at += dataSize + int64(binary.LittleEndian.Uint16(b[at+4:]))
	}
	bad := bytes.Clone(b)
	bad[at+dataSize+100] ^= 0x55
	c2, _ := NewReader(bytes.NewReader(bad), int64(len(bad)))
	f, _ := c2.Find("sqlmin.pdb")
	r, _ := f.Open()
	if _, err := io.ReadAll(r); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("corrupt block: %v", err)
	}
	// Without checksums, a corrupt DEFLATE stream or a wrong size still fails.
	binary.LittleEndian.PutUint32(bad[at:], 0)
	c3, _ := NewReader(bytes.NewReader(bad), int64(len(bad)))
	f, _ = c3.Find("sqlmin.pdb")
	r, _ = f.Open()
	if got, err := io.ReadAll(r); err == nil && bytes.Equal(got, testFiles()["sqlmin.pdb"]) {
		t.Error("corrupt data decoded to the original")
	}
	// Truncated cabinets.
	for _, n := range []int{0, 10, headerSize + 3, len(b) / 2, len(b) - 1} {
		tr := b[:n]
		c, err := NewReader(bytes.NewReader(tr), int64(len(tr)))
		if err == nil {
			f, _ := c.Find("sqlmin.pdb")
			if r, err2 := f.Open(); err2 == nil {
				_, err = io.ReadAll(r)
			} else {
				err = err2
			}
		}
		if !errors.Is(err, ErrFormat) {
			t.Errorf("truncated to %d bytes: %v", n, err)
		}
	}
}

// handBuilt writes a one-file cabinet by the MS-CAB layout: CFHEADER,
// one CFFOLDER of the given method, one CFFILE, one CFDATA (checksum 0).
func handBuilt(method uint16, name string, data []byte, uncomp int) []byte {
	le := binary.LittleEndian
	var b bytes.Buffer
	filesAt := headerSize + folderSize
	dataAt := filesAt + fileSize + len(name) + 1
	total := dataAt + dataSize + len(data)
	h := make([]byte, headerSize)
	copy(h, "MSCF")
	le.PutUint32(h[8:], uint32(total))
	le.PutUint32(h[16:], uint32(filesAt))
	h[24], h[25] = 3, 1
	le.PutUint16(h[26:], 1)
	le.PutUint16(h[28:], 1)
	b.Write(h)
	fo := make([]byte, folderSize)
	le.PutUint32(fo, uint32(dataAt))
	le.PutUint16(fo[4:], 1)
	le.PutUint16(fo[6:], method)
	b.Write(fo)
	fi := make([]byte, fileSize)
	le.PutUint32(fi, uint32(uncomp))
	le.PutUint16(fi[10:], 0x5A21) // 2025-01-01
	b.Write(fi)
	b.WriteString(name + "\x00")
	d := make([]byte, dataSize)
	le.PutUint16(d[4:], uint16(len(data)))
	le.PutUint16(d[6:], uint16(uncomp))
	b.Write(d)
	b.Write(data)
	return b.Bytes()
}

func TestHandBuiltCabinets(t *testing.T) {
	// A stored folder reads back as is.
	b := handBuilt(MethodNone, `dir\x.pdb`, []byte("abc"), 3)
	c, err := NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, c, "dir/x.pdb"); string(got) != "abc" {
		t.Errorf("stored: %q", got)
	}
	if c.Files[0].Modified.Year() != 2025 {
		t.Errorf("date %v", c.Files[0].Modified)
	}
	// LZX and Quantum folders are refused by name, not mis-decoded.
	for method, want := range map[uint16]string{MethodLZX | 0x1500: "LZX", MethodQuantum: "Quantum"} {
		b := handBuilt(method, "x.pdb", []byte{1, 2, 3}, 3)
		c, err := NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Files[0].Open()
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), want) {
			t.Errorf("method %#x: %v", method, err)
		}
	}
	// A stored block whose sizes disagree, a bad signature, a cabinet set.
	if _, err := io.ReadAll(mustOpen(t, handBuilt(MethodNone, "x", []byte("abcd"), 3))); !errors.Is(err, ErrFormat) {
		t.Errorf("size mismatch: %v", err)
	}
	bad := handBuilt(MethodNone, "x", []byte("abc"), 3)
	copy(bad, "MSCX")
	if _, err := NewReader(bytes.NewReader(bad), int64(len(bad))); !errors.Is(err, ErrFormat) {
		t.Errorf("signature: %v", err)
	}
	set := handBuilt(MethodNone, "x", []byte("abc"), 3)
	set[30] = flagNext
	if _, err := NewReader(bytes.NewReader(set), int64(len(set))); !errors.Is(err, ErrUnsupported) {
		t.Errorf("cabinet set: %v", err)
	}
}

func mustOpen(t *testing.T, b []byte) io.Reader {
	t.Helper()
	c, err := NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Files[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestChecksumOfGcabBlocks(t *testing.T) {
	// gcab writes checksums; every block of its cabinet must verify (this
	// checks the trailing-bytes rule against an independent writer).
	b := gcabFiles(t, true, map[string][]byte{"odd.bin": bytes.Repeat([]byte("xyz"), 33_337)})
	c, err := NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	at := c.folders[0].firstData
	for i := range c.folders[0].blocks {
		sum := binary.LittleEndian.Uint32(b[at:])
		n := int64(binary.LittleEndian.Uint16(b[at+4:]))
		if sum == 0 {
			t.Fatalf("block %d has no checksum", i)
		}
		if got := checksum(b[at+4:at+8], checksum(b[at+dataSize:at+dataSize+n], 0)); got != sum {
			t.Errorf("block %d (%d bytes): checksum %#x, gcab wrote %#x", i, n, got, sum)
		}
		at += dataSize + n
	}
}

func FuzzReader(f *testing.F) {
	f.Add(handBuilt(MethodNone, "x.pdb", []byte("abc"), 3))
	f.Add(handBuilt(MethodMSZIP, "x.pdb", []byte("CK\x03\x00"), 0))
	if b, err := os.ReadFile("testdata/small.cab"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		for _, file := range c.Files {
			r, err := file.Open()
			if err != nil {
				continue
			}
			n, _ := io.Copy(io.Discard, io.LimitReader(r, 1<<24))
			if n > int64(file.Size) {
				t.Fatalf("%s: read %d bytes, size %d", file.Name, n, file.Size)
			}
		}
	})
}

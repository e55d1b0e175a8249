package symstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/internal/testenv"
)

// TestLZXCabinetIsKeptWithTheCommandThatExpandsIt: a server with only an
// LZX sqldk.pd_ (what symstore.exe /compress writes) fails with
// ErrCompressed, keeps the downloaded cabinet in the cache directory where
// the .pdb belongs, and names a cabextract command; running that command
// puts the .pdb where the next Fetch finds it.
func TestLZXCabinetIsKeptWithTheCommandThatExpandsIt(t *testing.T) {
	a, _ := fixtures(t)
	gcab := testenv.RequireTool(t, "gcab", "gcab")
	cabextract := testenv.RequireTool(t, "cabextract", "cabextract")
	dir := t.TempDir()
	src := filepath.Join(dir, "sqldk.pdb")
	if err := os.WriteFile(src, a.data, 0o644); err != nil {
		t.Fatal(err)
	}
	pd := filepath.Join(dir, "sqldk.pd_")
	if out, err := exec.Command(gcab, "-c", "-z", "-n", pd, src).CombinedOutput(); err != nil {
		t.Fatalf("gcab: %v %s", err, out)
	}
	mszip, err := os.ReadFile(pd)
	if err != nil {
		t.Fatal(err)
	}
	// the first CFFOLDER's typeCompress (header 36 bytes, then 4+2 bytes):
	// LZX with a 2 MiB window; gcab writes no LZX, so the method is patched
	const typeCompress = 36 + 6
	if m := binary.LittleEndian.Uint16(mszip[typeCompress:]); m != 1 {
		t.Fatalf("gcab -z wrote compression method %#x, want MSZIP (1)", m)
	}
	lzx := bytes.Clone(mszip)
	binary.LittleEndian.PutUint16(lzx[typeCompress:], 0x1503)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/sqldk.pd_") {
			w.Write(lzx)
			return
		}
		http.NotFound(w, r)
	})
	s := newStore(t, srv.URL)
	_, err = s.Fetch(context.Background(), "sqldk.pdb", a.guid, a.age)
	if !errors.Is(err, ErrCompressed) {
		t.Fatalf("err = %v, want ErrCompressed", err)
	}
	cacheDir := filepath.Join(s.CacheDir(), "sqldk.pdb", key(a))
	kept := filepath.Join(cacheDir, "sqldk.pd_")
	for _, want := range []string{"LZX", "cabextract -d " + cacheDir + " " + kept, "uncompressed .pdb"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
	if got, rerr := os.ReadFile(kept); rerr != nil || !bytes.Equal(got, lzx) {
		t.Fatalf("the downloaded cabinet is not kept as %s: %v", kept, rerr)
	}

	// Follow the instruction. cabextract expands real LZX itself; this
	// cabinet's data is MSZIP under an LZX label, so put the label back
	// first — what is tested is the command and the place it writes to.
	if err := os.WriteFile(kept, mszip, 0o644); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`cabextract ([^`]+)`").FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("no cabextract command in %v", err)
	}
	if out, xerr := exec.Command(cabextract, strings.Fields(m[1])...).CombinedOutput(); xerr != nil {
		t.Fatalf("cabextract %s: %v\n%s", m[1], xerr, out)
	}
	offline, err := New(Config{CacheDir: s.CacheDir(), Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	p, err := offline.Fetch(context.Background(), "sqldk.pdb", a.guid, a.age)
	if err != nil {
		t.Fatalf("after the cabextract command the cache has no PDB: %v", err)
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, a.data) {
		t.Fatal("the PDB found after cabextract differs")
	}
}

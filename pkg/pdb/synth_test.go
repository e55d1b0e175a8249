package pdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// writeMSF lays streams out in a minimal MSF 7.00 container (block size
// 512): superblock, two free-page-map blocks, stream data, directory, block
// map. A nil stream is written as absent (size 0xFFFFFFFF).
func writeMSF(streams [][]byte) []byte {
	const bs = 512
	blocks := [][]byte{nil, make([]byte, bs), make([]byte, bs)}
	alloc := func(data []byte) []uint32 {
		var list []uint32
		for o := 0; o < len(data); o += bs {
			blk := make([]byte, bs)
			copy(blk, data[o:])
			list = append(list, uint32(len(blocks)))
			blocks = append(blocks, blk)
		}
		return list
	}
	var dir bytes.Buffer
	w := func(v uint32) { binary.Write(&dir, binary.LittleEndian, v) }
	w(uint32(len(streams)))
	lists := make([][]uint32, len(streams))
	for i, s := range streams {
		if s == nil {
			w(nilStreamSize)
			continue
		}
		w(uint32(len(s)))
		lists[i] = alloc(s)
	}
	for _, l := range lists {
		for _, b := range l {
			w(b)
		}
	}
	dirBlocks := alloc(dir.Bytes())
	var bm bytes.Buffer
	for _, b := range dirBlocks {
		binary.Write(&bm, binary.LittleEndian, b)
	}
	mapBlock := alloc(bm.Bytes())[0]
	sb := make([]byte, bs)
	copy(sb, msfMagic)
	le.PutUint32(sb[32:], bs)
	le.PutUint32(sb[36:], 1)
	le.PutUint32(sb[40:], uint32(len(blocks)))
	le.PutUint32(sb[44:], uint32(dir.Len()))
	le.PutUint32(sb[52:], mapBlock)
	blocks[0] = sb
	return bytes.Join(blocks, nil)
}

func sectionHeader(name string, va, size, chars uint32) []byte {
	b := make([]byte, 40)
	copy(b, name)
	le.PutUint32(b[8:], size)
	le.PutUint32(b[12:], va)
	le.PutUint32(b[16:], size)
	le.PutUint32(b[36:], chars)
	return b
}

func pub32(name string, flags uint32, seg uint16, off uint32) []byte {
	n := 14 + len(name) + 1
	pad := (4 - n%4) % 4
	b := make([]byte, n+pad)
	le.PutUint16(b, uint16(len(b)-2))
	le.PutUint16(b[2:], sPub32)
	le.PutUint32(b[4:], flags)
	le.PutUint32(b[8:], off)
	le.PutUint16(b[12:], seg)
	copy(b[14:], name)
	return b
}

// synthPDB builds a PDB with an OMAP-from-source table, as BBT-optimised
// Windows DLLs have (lld cannot make one). Original layout: one .text at
// 0x1000 with functions at +0x0, +0x100, +0x200. The optimiser moved the
// first block to 0x5000, the second to 0x3000 and dropped the third.
func synthPDB() []byte {
	guid := GUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	info := make([]byte, 28+4)
	le.PutUint32(info, pdbInfoVersionVC70)
	le.PutUint32(info[4:], 0x5eed)
	le.PutUint32(info[8:], 3) // info age
	copy(info[12:], guid[:])

	final := append(sectionHeader(".text", 0x3000, 0x3000, scnCntCode|scnMemExecute), sectionHeader(".data", 0x6000, 0x100, 0x40)...)
	orig := sectionHeader(".text", 0x1000, 0x300, scnCntCode|scnMemExecute)
	omap := []byte{}
	for _, e := range []omapEntry{{0x1000, 0x5000}, {0x1100, 0x3000}, {0x1200, 0}} {
		omap = le.AppendUint32(omap, e.From)
		omap = le.AppendUint32(omap, e.To)
	}
	var syms []byte
	syms = append(syms, pub32("?First@Moved@@QEAAXXZ", pubFlagFunc, 1, 0x0)...)
	syms = append(syms, pub32("?Second@Moved@@QEAAXXZ", pubFlagFunc, 1, 0x100)...)
	syms = append(syms, pub32("Dropped", pubFlagFunc, 1, 0x200)...)

	// Streams: 0 old dir, 1 info, 2 TPI, 3 DBI, 4 IPI, 5 symrec, 6 OMAP from src, 7 section headers, 8 original headers.
	opt := make([]byte, 2*11)
	for i := range 11 {
		le.PutUint16(opt[2*i:], 0xFFFF)
	}
	le.PutUint16(opt[2*dbgOMAPFromSrc:], 6)
	le.PutUint16(opt[2*dbgSectionHeaders:], 7)
	le.PutUint16(opt[2*dbgOrigSectionHeader:], 8)
	dbi := make([]byte, dbiHeaderSize)
	le.PutUint32(dbi, dbiVersionSigNew)
	le.PutUint32(dbi[4:], 19990903)
	le.PutUint32(dbi[dbiOffAge:], 2)
	le.PutUint16(dbi[dbiOffGlobalStream:], 0xFFFF)
	le.PutUint16(dbi[dbiOffPublicStream:], 0xFFFF)
	le.PutUint16(dbi[dbiOffSymRecStream:], 5)
	le.PutUint32(dbi[dbiOffOptDbgSize:], uint32(len(opt)))
	le.PutUint16(dbi[dbiOffMachine:], 0x8664)
	dbi = append(dbi, opt...)
	return writeMSF([][]byte{{}, info, {}, dbi, {}, syms, omap, final, orig})
}

func TestOMAPTranslation(t *testing.T) {
	f, err := NewFile(bytes.NewReader(synthPDB()))
	if err != nil {
		t.Fatal(err)
	}
	if f.Age != 2 || f.InfoAge != 3 {
		t.Errorf("ages DBI %d info %d, want 2 and 3", f.Age, f.InfoAge)
	}
	if f.SymbolServerKey() != "0403020106050807090A0B0C0D0E0F102" {
		t.Errorf("key %s uses the wrong age or GUID order", f.SymbolServerKey())
	}
	table, err := f.Table()
	if err != nil {
		t.Fatal(err)
	}
	if table.Len() != 2 {
		t.Errorf("table has %d symbols, want 2 (the dropped one has no address)", table.Len())
	}
	for _, tc := range []struct {
		rva  uint32
		name string
		disp uint32
	}{
		{0x5000, "Moved::First", 0}, {0x5010, "Moved::First", 0x10},
		{0x3000, "Moved::Second", 0}, {0x30ff, "Moved::Second", 0xff},
	} {
		m, ok := table.Lookup(tc.rva)
		if !ok || m.Name != tc.name || m.Displacement != tc.disp {
			t.Errorf("Lookup(%#x) = %q+%#x (%v), want %q+%#x", tc.rva, m.Name, m.Displacement, ok, tc.name, tc.disp)
		}
	}
	if m, ok := table.Lookup(0x2fff); ok {
		t.Errorf("Lookup below the first symbol found %q", m.Name)
	}
	if m, ok := table.Lookup(0x6000); ok {
		t.Errorf("Lookup in .data found %q", m.Name)
	}
	if _, ok := translateOMAP(f.omapFromSrc, 0x0fff); ok {
		t.Error("address before the first OMAP entry translated")
	}
}

func TestMalformedInputsGiveFormatErrors(t *testing.T) {
	good := synthPDB()
	mutate := func(fn func(b []byte) []byte) []byte { return fn(bytes.Clone(good)) }
	cases := []struct {
		name        string
		data        []byte
		want        string // substring of the error
		unsupported bool
	}{
		{"empty", nil, "file too short", false},
		{"not a pdb", []byte(strings.Repeat("MZ", 40)), "not a PDB file", false},
		{"truncated superblock", good[:40], "superblock truncated", false},
		{"msfz", append([]byte("Microsoft MSFZ Container\r\n\x1aALD\x00\x00"), make([]byte, 64)...), "MSFZ", true},
		{"msf 2.00", append([]byte("Microsoft C/C++ program database 2.00\r\n\x1aJG\x00\x00"), make([]byte, 64)...), "MSF 2.00", true},
		{"bad block size", mutate(func(b []byte) []byte { le.PutUint32(b[32:], 1000); return b }), "invalid block size 1000", false},
		{"block map outside", mutate(func(b []byte) []byte { le.PutUint32(b[52:], 9999); return b }), "block map address 9999", false},
		{"truncated file", good[:len(good)-600], "truncated?", false},
		{"huge directory", mutate(func(b []byte) []byte { le.PutUint32(b[44:], 1<<30); return b }), "invalid stream directory size", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewFile(bytes.NewReader(tc.data))
			if err == nil {
				t.Fatal("no error")
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FormatError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			if errors.Is(err, ErrUnsupported) != tc.unsupported {
				t.Errorf("errors.Is(ErrUnsupported) = %v for %v", !tc.unsupported, err)
			}
		})
	}
}

func TestBadSymbolRecordNamesItsOffset(t *testing.T) {
	// A symbol record whose length runs past the stream end.
	data := synthPDB()
	f, err := NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	blk := f.msf.blocks[5][0]
	off := int(blk) * int(f.msf.blockSize)
	le.PutUint16(data[off:], 0x7000)
	f, err = NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Publics()
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Stream != 5 || fe.Offset != 0 {
		t.Fatalf("err = %v, want FormatError in stream 5 at offset 0", err)
	}
}

// FuzzNewFile feeds arbitrary bytes to the reader: it must return an error
// or a usable File, never panic or hang.
func FuzzNewFile(f *testing.F) {
	f.Add(synthPDB())
	f.Add(synthPDB()[:2048])
	f.Fuzz(func(t *testing.T, data []byte) {
		pf, err := NewFile(bytes.NewReader(data))
		if err != nil {
			return
		}
		table, err := pf.Table()
		if err != nil {
			return
		}
		for _, s := range table.Symbols() {
			table.Lookup(s.RVA + 1)
		}
		pf.GlobalCounts()
	})
}

func FuzzUndecorate(f *testing.F) {
	for _, s := range undecorateCases {
		f.Add(s)
	}
	f.Add("??$Fib@$0A@@@YAHXZ")
	f.Fuzz(func(t *testing.T, s string) {
		out := Undecorate(s)
		if out == "" && s != "" {
			t.Errorf("Undecorate(%q) returned an empty name", s)
		}
	})
}

// Package cab reads Microsoft Cabinet (.cab) files, the container of the
// compressed symbol-store files (sqlmin.pd_) that symstore /compress and
// on-premises symbol servers keep. It decodes uncompressed and MSZIP
// folders; Quantum and LZX folders are refused with an error naming the
// method (expand such files with cabextract).
//
// Why our own: no Go CAB reader is obtainable from the module proxy
// (google/go-cabfile, abemedia/go-cabinet and go-filesystems/cab are all
// refused), the standard library has none, and the subset needed is small:
// the MS-CAB headers plus MSZIP, which is raw DEFLATE per 32 KB block with
// the previous block as the dictionary — compress/flate does the
// decompression. Why MSZIP only: it is makecab's default and what gcab
// writes, and compress/flate decodes it; LZX would be a decoder of its own.
// That leaves real .pd_ files unread: Microsoft's symstore.exe /compress
// writes LZX, not MSZIP (dotnet/symstore issue 50, "MSCF + LZX",
// https://github.com/dotnet/symstore/issues/50), and symbol servers serve
// LZX cabinets (hughsie/python-cabarchive issue 9,
// https://github.com/hughsie/python-cabarchive/issues/9; mstange/symsrv
// issue 1, an LZXD-compressed .pd_ on a public server,
// https://github.com/mstange/symsrv/issues/1). Such folders fail with
// ErrUnsupported naming LZX; pkg/symstore keeps the cabinet in its cache
// and names the cabextract command that expands it.
//
// Format reference: [MS-CAB] "Cabinet File Format" and [MS-MCI] "Microsoft
// ZIP (MSZIP) Compression and Decompression Data Structure"
// (https://learn.microsoft.com/openspecs/windows_protocols/ms-cab/,
// https://learn.microsoft.com/openspecs/exchange_server_protocols/ms-mci/).
//
// What it must not do: write files (the caller decides where extracted data
// goes), follow cabinet sets across files, or trust any size it reads:
// every offset is checked against the file, and every block must decompress
// to exactly the size its header states.
package cab

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Compression methods (CFFOLDER.typeCompress, low four bits).
const (
	MethodNone    = 0
	MethodMSZIP   = 1
	MethodQuantum = 2
	MethodLZX     = 3
)

// ErrUnsupported is returned (wrapped) for cabinets this reader does not
// decode: Quantum or LZX folders, cabinet sets spanning several files.
var ErrUnsupported = errors.New("unsupported cabinet")

// ErrFormat is returned (wrapped) for malformed cabinets.
var ErrFormat = errors.New("malformed cabinet")

const (
	headerSize   = 36
	folderSize   = 8
	fileSize     = 16
	dataSize     = 8
	maxBlockData = 32768 + 6144 // MS-CAB: cbData ≤ 32768 + 6144 (LZX worst case)
	maxBlock     = 32768        // cbUncomp ≤ 32768
	flagPrev     = 0x1
	flagNext     = 0x2
	flagReserve  = 0x4
	attrNameUTF  = 0x80
)

// Reader is an opened cabinet.
type Reader struct {
	Files   []*File
	r       io.ReaderAt
	size    int64
	folders []folder
	dataRes int // per-CFDATA reserved bytes
}

type folder struct {
	firstData int64
	blocks    int
	method    int
}

// File is one file of the cabinet.
type File struct {
	Name     string
	Size     uint32
	Modified time.Time // local time of the packing machine, as stored
	folder   int
	offset   uint32 // in the folder's uncompressed data
	cab      *Reader
}

// Method is the compression method of the file's folder.
func (f *File) Method() int { return f.cab.folders[f.folder].method }

func formatErr(off int64, format string, args ...any) error {
	return fmt.Errorf("%w: at byte %d: %s", ErrFormat, off, fmt.Sprintf(format, args...))
}

// NewReader reads the cabinet's headers (CFHEADER, CFFOLDER, CFFILE).
func NewReader(r io.ReaderAt, size int64) (*Reader, error) {
	c := &Reader{r: r, size: size}
	var h [headerSize]byte
	if err := c.readAt(h[:], 0); err != nil {
		return nil, err
	}
	if string(h[:4]) != "MSCF" {
		return nil, formatErr(0, "signature %q, want MSCF", h[:4])
	}
	le := binary.LittleEndian
	if cb := int64(le.Uint32(h[8:])); cb > size {
		return nil, formatErr(8, "header says %d bytes, file has %d", cb, size)
	}
	if h[25] != 1 {
		return nil, formatErr(25, "format version %d.%d, want 1.x", h[25], h[24])
	}
	coffFiles := int64(le.Uint32(h[16:]))
	nFolders, nFiles := int(le.Uint16(h[26:])), int(le.Uint16(h[28:]))
	flags := le.Uint16(h[30:])
	if flags&(flagPrev|flagNext) != 0 {
		return nil, fmt.Errorf("%w: part of a cabinet set spanning several files", ErrUnsupported)
	}
	off := int64(headerSize)
	folderRes := 0
	if flags&flagReserve != 0 {
		var rs [4]byte
		if err := c.readAt(rs[:], off); err != nil {
			return nil, err
		}
		off += 4 + int64(le.Uint16(rs[:]))
		folderRes, c.dataRes = int(rs[2]), int(rs[3])
	}
	for i := range nFolders {
		var fb [folderSize]byte
		if err := c.readAt(fb[:], off); err != nil {
			return nil, fmt.Errorf("folder %d: %w", i, err)
		}
		c.folders = append(c.folders, folder{firstData: int64(le.Uint32(fb[:])), blocks: int(le.Uint16(fb[4:])), method: int(le.Uint16(fb[6:]) & 0xF)})
		off += folderSize + int64(folderRes)
	}
	off = coffFiles
	for i := range nFiles {
		f, next, err := c.readFile(off)
		if err != nil {
			return nil, fmt.Errorf("file %d: %w", i, err)
		}
		c.Files = append(c.Files, f)
		off = next
	}
	return c, nil
}

func (c *Reader) readAt(b []byte, off int64) error {
	if off < 0 || off+int64(len(b)) > c.size {
		return formatErr(off, "%d bytes needed, the file ends at %d", len(b), c.size)
	}
	if _, err := c.r.ReadAt(b, off); err != nil && !(errors.Is(err, io.EOF) && off+int64(len(b)) <= c.size) {
		return fmt.Errorf("read cabinet at %d: %w", off, err)
	}
	return nil
}

// readFile reads one CFFILE entry at off and returns the offset after it.
func (c *Reader) readFile(off int64) (*File, int64, error) {
	var b [fileSize]byte
	if err := c.readAt(b[:], off); err != nil {
		return nil, 0, err
	}
	le := binary.LittleEndian
	f := &File{Size: le.Uint32(b[:]), offset: le.Uint32(b[4:]), folder: int(le.Uint16(b[8:])), cab: c}
	if f.folder >= 0xFFFD {
		return nil, 0, fmt.Errorf("%w: file continued from or into another cabinet", ErrUnsupported)
	}
	if f.folder >= len(c.folders) {
		return nil, 0, formatErr(off+8, "folder %d of %d", f.folder, len(c.folders))
	}
	date, tm, attrs := le.Uint16(b[10:]), le.Uint16(b[12:]), le.Uint16(b[14:])
	f.Modified = time.Date(int(date>>9)+1980, time.Month(date>>5&0xF), int(date&0x1F), int(tm>>11), int(tm>>5&0x3F), int(tm&0x1F)*2, 0, time.Local)
	name, err := c.cstring(off + fileSize)
	if err != nil {
		return nil, 0, err
	}
	if attrs&attrNameUTF == 0 && !isASCII(name) {
		name = latin1(name) // names without the UTF flag are in the packing machine's code page; Latin-1 keeps them readable
	}
	f.Name = strings.ReplaceAll(name, `\`, "/")
	return f, off + fileSize + int64(len(name)) + 1, nil
}

// cstring reads a NUL-terminated name of at most 256 bytes (CB_MAX_FILENAME).
func (c *Reader) cstring(off int64) (string, error) {
	n := min(int64(257), c.size-off)
	if n <= 0 {
		return "", formatErr(off, "file name past the end of the cabinet")
	}
	b := make([]byte, n)
	if err := c.readAt(b, off); err != nil {
		return "", err
	}
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return "", formatErr(off, "file name without a terminating NUL within 256 bytes")
	}
	return string(b[:i]), nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func latin1(s string) string {
	r := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		r[i] = rune(s[i])
	}
	return string(r)
}

// Open returns a reader of the file's contents. It decompresses the
// folder from its start (CAB folders are one compressed stream) and checks
// every block's checksum and size.
func (f *File) Open() (io.Reader, error) {
	fo := f.cab.folders[f.folder]
	switch fo.method {
	case MethodNone, MethodMSZIP:
	case MethodQuantum:
		return nil, fmt.Errorf("%s: %w: Quantum compression (expand it with cabextract)", f.Name, ErrUnsupported)
	case MethodLZX:
		return nil, fmt.Errorf("%s: %w: LZX compression, which this reader does not decode (cabextract does: extract the file with it)", f.Name, ErrUnsupported)
	default:
		return nil, fmt.Errorf("%s: %w: compression method %d", f.Name, ErrUnsupported, fo.method)
	}
	fr := &folderReader{cab: f.cab, folder: fo, next: fo.firstData}
	if _, err := io.CopyN(io.Discard, fr, int64(f.offset)); err != nil {
		return nil, fmt.Errorf("%s: seek to offset %d in folder %d: %w", f.Name, f.offset, f.folder, noEOF(err))
	}
	return &exactReader{r: fr, left: int64(f.Size), name: f.Name}, nil
}

func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: folder data ends early", ErrFormat)
	}
	return err
}

// exactReader yields exactly left bytes, failing if the folder ends first.
type exactReader struct {
	r    io.Reader
	left int64
	name string
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if err == io.EOF && e.left > 0 {
		return n, fmt.Errorf("%s: %w: folder data ends %d bytes early", e.name, ErrFormat, e.left)
	}
	if err == io.EOF {
		err = nil
	}
	return n, err
}

// folderReader decodes a folder's CFDATA blocks in order.
type folderReader struct {
	cab    *Reader
	folder folder
	block  int
	next   int64  // offset of the next CFDATA
	out    []byte // decoded bytes of the current block not yet read
	window []byte // the previous block's output: MSZIP's dictionary
	buf    []byte
}

func (r *folderReader) Read(p []byte) (int, error) {
	for len(r.out) == 0 {
		if r.block >= r.folder.blocks {
			return 0, io.EOF
		}
		if err := r.decodeBlock(); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.out)
	r.out = r.out[n:]
	return n, nil
}

func (r *folderReader) decodeBlock() error {
	at := r.next
	var h [dataSize]byte
	if err := r.cab.readAt(h[:], at); err != nil {
		return fmt.Errorf("block %d: %w", r.block, err)
	}
	le := binary.LittleEndian
	sum, cbData, cbUncomp := le.Uint32(h[:]), int(le.Uint16(h[4:])), int(le.Uint16(h[6:]))
	if cbData > maxBlockData || cbUncomp > maxBlock {
		return formatErr(at, "block %d of %d compressed / %d bytes exceeds the format's limits", r.block, cbData, cbUncomp)
	}
	data := make([]byte, cbData)
	if err := r.cab.readAt(data, at+dataSize+int64(r.cab.dataRes)); err != nil {
		return fmt.Errorf("block %d: %w", r.block, err)
	}
	if sum != 0 {
		if got := checksum(h[4:8], checksum(data, 0)); got != sum {
			return formatErr(at, "block %d checksum %#08x, header says %#08x", r.block, got, sum)
		}
	}
	var out []byte
	switch r.folder.method {
	case MethodNone:
		if cbData != cbUncomp {
			return formatErr(at, "stored block %d of %d bytes claims %d uncompressed", r.block, cbData, cbUncomp)
		}
		out = data
	case MethodMSZIP:
		var err error
		if out, err = r.inflate(data, cbUncomp); err != nil {
			return formatErr(at, "MSZIP block %d: %v", r.block, err)
		}
	}
	r.window = append(r.window[:0], out...)
	r.out = out
	r.block++
	r.next = at + dataSize + int64(r.cab.dataRes) + int64(cbData)
	return nil
}

// inflate decodes one MSZIP block: "CK", then DEFLATE data whose history is
// the previous block's output.
func (r *folderReader) inflate(data []byte, want int) ([]byte, error) {
	if len(data) < 2 || data[0] != 'C' || data[1] != 'K' {
		return nil, errors.New("no CK signature")
	}
	fr := flate.NewReaderDict(bytes.NewReader(data[2:]), r.window)
	defer fr.Close()
	if cap(r.buf) < want+1 {
		r.buf = make([]byte, want+1)
	}
	buf := r.buf[:want+1]
	n, err := io.ReadFull(fr, buf)
	// A block may end at a sync point rather than a final DEFLATE block; the
	// size in the header decides.
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		if n != want {
			return nil, err
		}
	}
	if n != want {
		return nil, fmt.Errorf("decompressed to %d bytes, header says %d", n, want)
	}
	out := make([]byte, n)
	copy(out, buf[:n])
	return out, nil
}

// checksum is MS-CAB's CFDATA checksum: the XOR of the little-endian
// 32-bit words, with the 1–3 trailing bytes folded in high byte first.
func checksum(b []byte, seed uint32) uint32 {
	sum := seed
	n := len(b) / 4
	for i := range n {
		sum ^= binary.LittleEndian.Uint32(b[4*i:])
	}
	var ul uint32
	rest := b[4*n:]
	switch len(rest) {
	case 3:
		ul = uint32(rest[0])<<16 | uint32(rest[1])<<8 | uint32(rest[2])
	case 2:
		ul = uint32(rest[0])<<8 | uint32(rest[1])
	case 1:
		ul = uint32(rest[0])
	}
	return sum ^ ul
}

// Find returns the file with the given name (case-insensitive, / or \).
func (c *Reader) Find(name string) (*File, bool) {
	name = strings.ReplaceAll(name, `\`, "/")
	for _, f := range c.Files {
		if strings.EqualFold(f.Name, name) {
			return f, true
		}
	}
	return nil, false
}

package pdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
)

var le = binary.LittleEndian

// msfMagic starts every MSF 7.00 ("big MSF") container. [verified] docs/design/symbols-and-xel.md §2
const msfMagic = "Microsoft C/C++ MSF 7.00\r\n\x1aDS\x00\x00\x00"

// Older or newer containers we recognise only to reject them with a clear error.
const (
	msf2Magic = "Microsoft C/C++ program database 2.00\r\n" // small MSF of VC++ 2.0–6.0
	msfzMagic = "Microsoft MSFZ Container"                  // compressed container of recent MSVC linkers
)

const nilStreamSize = 0xFFFFFFFF

// ErrUnsupported is wrapped by errors about containers this reader does not
// read (MSF 2.00, MSFZ).
var ErrUnsupported = errors.New("unsupported PDB container")

// FormatError reports malformed PDB data. Stream is the MSF stream the
// problem is in (-1 for the container itself) and Offset the byte offset
// inside that stream (or the file, for Stream -1).
type FormatError struct {
	Stream int
	Offset int64
	Msg    string
	Err    error
}

func (e *FormatError) Error() string {
	where := fmt.Sprintf("file offset %#x", e.Offset)
	if e.Stream >= 0 {
		where = fmt.Sprintf("stream %d offset %#x", e.Stream, e.Offset)
	}
	s := "pdb: " + where + ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *FormatError) Unwrap() error { return e.Err }

func formatErr(stream int, off int64, format string, args ...any) error {
	return &FormatError{Stream: stream, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// msf is the multi-stream container: a file of fixed-size blocks holding
// numbered streams, each a list of blocks.
type msf struct {
	r         io.ReaderAt
	blockSize uint32
	numBlocks uint32
	sizes     []uint32   // stream byte sizes; nilStreamSize for absent streams
	blocks    [][]uint32 // block numbers of each stream
}

func openMSF(r io.ReaderAt) (*msf, error) {
	var sb [56]byte
	n, err := r.ReadAt(sb[:], 0)
	if n < len(sb) {
		head := string(sb[:n])
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if len(head) >= 8 && (strings.HasPrefix(msfMagic, head) || strings.HasPrefix(head, msfMagic)) {
			return nil, &FormatError{Stream: -1, Offset: int64(n), Msg: "superblock truncated", Err: err}
		}
		return nil, &FormatError{Stream: -1, Offset: 0, Msg: "file too short for an MSF superblock", Err: err}
	}
	switch magic := string(sb[:32]); {
	case magic == msfMagic:
	case magic[:len(msf2Magic)-8] == msf2Magic[:len(msf2Magic)-8]:
		return nil, &FormatError{Stream: -1, Msg: "MSF 2.00 (VC++ 6.0 era) PDB", Err: ErrUnsupported}
	case magic[:len(msfzMagic)] == msfzMagic:
		return nil, &FormatError{Stream: -1, Msg: "MSFZ compressed PDB; convert it with 'pdbcopy' or fetch an uncompressed copy", Err: ErrUnsupported}
	default:
		return nil, formatErr(-1, 0, "not a PDB file (MSF 7.00 magic missing)")
	}
	m := &msf{r: r, blockSize: le.Uint32(sb[32:]), numBlocks: le.Uint32(sb[40:])}
	switch m.blockSize {
	case 512, 1024, 2048, 4096, 8192, 16384, 32768:
	default:
		return nil, formatErr(-1, 32, "invalid block size %d", m.blockSize)
	}
	if m.numBlocks == 0 || uint64(m.numBlocks)*uint64(m.blockSize) > 1<<40 {
		return nil, formatErr(-1, 40, "invalid block count %d", m.numBlocks)
	}
	if size, ok := readerSize(r); ok && uint64(m.numBlocks-1)*uint64(m.blockSize) >= uint64(size) {
		return nil, formatErr(-1, 40, "superblock claims %d blocks of %d bytes but the file has %d bytes (truncated?)", m.numBlocks, m.blockSize, size)
	}
	dirBytes := le.Uint32(sb[44:])
	blockMapAddr := le.Uint32(sb[52:])
	if dirBytes < 4 || uint64(dirBytes) > uint64(m.numBlocks)*uint64(m.blockSize) {
		return nil, formatErr(-1, 44, "invalid stream directory size %d", dirBytes)
	}
	if blockMapAddr == 0 || blockMapAddr >= m.numBlocks {
		return nil, formatErr(-1, 52, "block map address %d outside the file's %d blocks", blockMapAddr, m.numBlocks)
	}
	// The block map lists the directory's blocks; it may itself span
	// consecutive blocks when the directory is very large.
	nDirBlocks := (dirBytes + m.blockSize - 1) / m.blockSize
	mapBytes := make([]byte, 4*nDirBlocks)
	if err := m.readBlocksAt(mapBytes, blockMapAddr); err != nil {
		return nil, &FormatError{Stream: -1, Offset: int64(blockMapAddr) * int64(m.blockSize), Msg: "read directory block map", Err: err}
	}
	dirBlocks := make([]uint32, nDirBlocks)
	for i := range dirBlocks {
		dirBlocks[i] = le.Uint32(mapBytes[4*i:])
	}
	dir, err := m.gather(dirBlocks, dirBytes)
	if err != nil {
		return nil, &FormatError{Stream: -1, Offset: int64(blockMapAddr) * int64(m.blockSize), Msg: "read stream directory", Err: err}
	}
	if err := m.parseDirectory(dir); err != nil {
		return nil, err
	}
	return m, nil
}

// readerSize finds the size of r when it can tell (bytes.Reader,
// io.SectionReader, os.File), so that corrupt headers cannot ask for more
// memory than the file holds.
func readerSize(r io.ReaderAt) (int64, bool) {
	switch v := r.(type) {
	case interface{ Size() int64 }:
		return v.Size(), true
	case interface{ Stat() (fs.FileInfo, error) }:
		if st, err := v.Stat(); err == nil && st.Mode().IsRegular() {
			return st.Size(), true
		}
	}
	return 0, false
}

// readBlocksAt reads len(p) bytes starting at block b, continuing into the
// following blocks.
func (m *msf) readBlocksAt(p []byte, b uint32) error {
	end := uint64(b)*uint64(m.blockSize) + uint64(len(p))
	if end > uint64(m.numBlocks)*uint64(m.blockSize) {
		return fmt.Errorf("block %d + %d bytes beyond the %d-block file", b, len(p), m.numBlocks)
	}
	n, err := m.r.ReadAt(p, int64(b)*int64(m.blockSize))
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

func (m *msf) parseDirectory(dir []byte) error {
	numStreams := le.Uint32(dir)
	if uint64(numStreams)*4+4 > uint64(len(dir)) {
		return formatErr(-1, 0, "stream directory claims %d streams but has %d bytes", numStreams, len(dir))
	}
	m.sizes = make([]uint32, numStreams)
	m.blocks = make([][]uint32, numStreams)
	off := 4 + 4*int(numStreams)
	// Each block belongs to at most one stream, so all streams together
	// cannot list more blocks than the file has; corrupt directories that
	// repeat blocks would otherwise make small files expand into huge reads.
	totalBlocks := uint64(0)
	for i := range m.sizes {
		m.sizes[i] = le.Uint32(dir[4+4*i:])
	}
	for i, size := range m.sizes {
		if size == nilStreamSize {
			continue
		}
		nb := int((uint64(size) + uint64(m.blockSize) - 1) / uint64(m.blockSize))
		totalBlocks += uint64(nb)
		if totalBlocks > uint64(m.numBlocks) {
			return formatErr(-1, int64(off), "streams list %d blocks, more than the file's %d", totalBlocks, m.numBlocks)
		}
		if off+4*nb > len(dir) || nb < 0 {
			return formatErr(-1, int64(off), "stream %d (%d bytes) needs %d block numbers, directory ends first", i, size, nb)
		}
		list := make([]uint32, nb)
		for j := range list {
			b := le.Uint32(dir[off:])
			if b >= m.numBlocks {
				return formatErr(-1, int64(off), "stream %d block %d is %d, beyond the file's %d blocks", i, j, b, m.numBlocks)
			}
			list[j] = b
			off += 4
		}
		m.blocks[i] = list
	}
	return nil
}

// gather reads size bytes from the given blocks.
func (m *msf) gather(blocks []uint32, size uint32) ([]byte, error) {
	if uint64(len(blocks))*uint64(m.blockSize) < uint64(size) {
		return nil, fmt.Errorf("%d blocks cannot hold %d bytes", len(blocks), size)
	}
	out := make([]byte, size)
	bs := int(m.blockSize)
	// Runs of consecutive blocks (the usual layout) are read with one call.
	for i := 0; i < len(blocks) && i*bs < len(out); {
		j := i + 1
		for j < len(blocks) && blocks[j] == blocks[j-1]+1 {
			j++
		}
		b := blocks[i]
		if b >= m.numBlocks || blocks[j-1] >= m.numBlocks {
			return nil, fmt.Errorf("block %d beyond the file's %d blocks", max(b, blocks[j-1]), m.numBlocks)
		}
		start := i * bs
		end := min(j*bs, len(out))
		n, err := m.r.ReadAt(out[start:end], int64(b)*int64(bs))
		if n < end-start {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("block %d: %w", b+uint32(n/bs), err)
		}
		i = j
	}
	return out, nil
}

// streamExists reports whether stream i is present (not nil, in range).
func (m *msf) streamExists(i int) bool {
	return i >= 0 && i < len(m.sizes) && m.sizes[i] != nilStreamSize
}

// stream reads a whole stream.
func (m *msf) stream(i int) ([]byte, error) {
	if !m.streamExists(i) {
		return nil, formatErr(-1, 0, "stream %d is absent (the directory has %d streams)", i, len(m.sizes))
	}
	b, err := m.gather(m.blocks[i], m.sizes[i])
	if err != nil {
		return nil, &FormatError{Stream: i, Msg: "read stream", Err: err}
	}
	return b, nil
}

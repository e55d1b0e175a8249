package tds

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Packet layer (MS-TDS 2.2.3.1): every message travels as one or more packets,
// each with an 8-byte header: type u8 | status u8 | length u16 BE (header
// included) | SPID u16 BE | packet id u8 | window u8.

type packetType uint8

const (
	packetSQLBatch  packetType = 1
	packetRPC       packetType = 3
	packetReply     packetType = 4
	packetAttention packetType = 6
	packetBulkLoad  packetType = 7
	packetTransMgr  packetType = 14
	packetLogin7    packetType = 16
	packetSSPI      packetType = 17
	packetPrelogin  packetType = 18
)

func (t packetType) String() string {
	switch t {
	case packetSQLBatch:
		return "SQLBatch"
	case packetRPC:
		return "RPC"
	case packetReply:
		return "Reply"
	case packetAttention:
		return "Attention"
	case packetBulkLoad:
		return "BulkLoad"
	case packetTransMgr:
		return "TransMgrReq"
	case packetLogin7:
		return "LOGIN7"
	case packetSSPI:
		return "SSPI"
	case packetPrelogin:
		return "PRELOGIN"
	}
	return fmt.Sprintf("packet type %d", uint8(t))
}

const (
	packetHeaderSize = 8
	// Packet status bits. go-mssqldb treats any non-zero status from the
	// server as end of message [verified, docs/design/standin-protocol.md §3], so replies use
	// exactly 0x00 (more follows) and 0x01 (last).
	statusEOM             = 0x01
	statusIgnore          = 0x02 // client: discard this message
	statusResetConnection = 0x08
	statusResetConnSkipTx = 0x10

	// Packet sizes a client may negotiate; SQL Server's "network packet size"
	// range is 512-32767 bytes
	// (https://learn.microsoft.com/en-us/sql/database-engine/configure-windows/configure-the-network-packet-size-server-configuration-option).
	minPacketSize     = 512
	maxPacketSize     = 32767
	defaultPacketSize = 4096
)

// message is one reassembled client message.
type message struct {
	typ packetType
	// status of the first packet; carries the reset-connection bits.
	status  uint8
	payload []byte
}

func (m message) resetConnection() bool {
	return m.status&(statusResetConnection|statusResetConnSkipTx) != 0
}

// readMessage reads packets until one has the EOM bit and returns their
// payloads joined. Messages the client marked IGNORE are skipped. A message
// larger than maxSize bytes, a packet shorter than its header or a packet whose
// type differs from the first one's is an error: the caller must close the
// connection, because the stream can no longer be trusted.
func readMessage(r io.Reader, maxSize int) (message, error) {
	var hdr [packetHeaderSize]byte
	for {
		var m message
		first := true
		for {
			if _, err := io.ReadFull(r, hdr[:]); err != nil {
				if !first && err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return message{}, err
			}
			typ, status := packetType(hdr[0]), hdr[1]
			length := int(binary.BigEndian.Uint16(hdr[2:4]))
			if length < packetHeaderSize {
				return message{}, fmt.Errorf("packet length %d is shorter than the %d-byte header", length, packetHeaderSize)
			}
			if first {
				m.typ, m.status = typ, status
				first = false
			} else if typ != m.typ {
				return message{}, fmt.Errorf("packet of type %s inside a %s message", typ, m.typ)
			}
			body := length - packetHeaderSize
			if len(m.payload)+body > maxSize {
				return message{}, fmt.Errorf("%s message exceeds the %d-byte limit", m.typ, maxSize)
			}
			start := len(m.payload)
			m.payload = append(m.payload, make([]byte, body)...)
			if _, err := io.ReadFull(r, m.payload[start:]); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return message{}, fmt.Errorf("read %s packet body: %w", m.typ, err)
			}
			if status&statusEOM != 0 {
				break
			}
		}
		// The client sets IGNORE together with EOM on the last packet of a
		// message it abandons (MS-TDS 2.2.3.1.2).
		if hdr[1]&statusIgnore != 0 {
			continue
		}
		return m, nil
	}
}

// messageWriter sends one reply message at a time, split into packets of at
// most packetSize bytes. Bytes are held back until a full packet is
// available, so the last packet (the one with EOM) is never empty.
type messageWriter struct {
	w          io.Writer
	packetSize int
	spid       uint16
	typ        packetType
	packetID   uint8
	pending    []byte
	scratch    []byte
	err        error // sticky: once a write failed the connection is unusable
}

func newMessageWriter(w io.Writer, spid uint16) *messageWriter {
	return &messageWriter{w: w, packetSize: defaultPacketSize, spid: spid, typ: packetReply, packetID: 1}
}

// write queues payload bytes, sending every full packet except the newest.
func (m *messageWriter) write(p []byte) error {
	if m.err != nil {
		return m.err
	}
	m.pending = append(m.pending, p...)
	max := m.packetSize - packetHeaderSize
	sent := 0
	for len(m.pending)-sent > max {
		if err := m.sendPacket(m.pending[sent:sent+max], false); err != nil {
			return err
		}
		sent += max
	}
	m.pending = append(m.pending[:0], m.pending[sent:]...)
	return nil
}

// flush sends every queued byte now, in packets without EOM.
func (m *messageWriter) flush() error {
	if m.err != nil {
		return m.err
	}
	max := m.packetSize - packetHeaderSize
	for sent := 0; sent < len(m.pending); sent += max {
		if err := m.sendPacket(m.pending[sent:min(sent+max, len(m.pending))], false); err != nil {
			return err
		}
	}
	m.pending = m.pending[:0]
	return nil
}

// end sends the queued bytes with EOM on the last packet, completing the
// message, and prepares for the next one.
func (m *messageWriter) end() error {
	if m.err != nil {
		return m.err
	}
	max := m.packetSize - packetHeaderSize
	for sent := 0; ; sent += max {
		end := min(sent+max, len(m.pending))
		last := end == len(m.pending)
		if err := m.sendPacket(m.pending[sent:end], last); err != nil {
			return err
		}
		if last {
			break
		}
	}
	m.pending = m.pending[:0]
	m.packetID = 1
	return nil
}

func (m *messageWriter) sendPacket(data []byte, last bool) error {
	n := packetHeaderSize + len(data)
	m.scratch = append(m.scratch[:0], make([]byte, n)...)
	m.scratch[0] = byte(m.typ)
	if last {
		m.scratch[1] = statusEOM
	}
	binary.BigEndian.PutUint16(m.scratch[2:], uint16(n))
	binary.BigEndian.PutUint16(m.scratch[4:], m.spid)
	m.scratch[6] = m.packetID
	m.packetID++ // wraps at 255 as MS-TDS 2.2.3.1.5 allows
	copy(m.scratch[packetHeaderSize:], data)
	if _, err := m.w.Write(m.scratch); err != nil {
		m.err = fmt.Errorf("write packet: %w", err)
		return m.err
	}
	return nil
}

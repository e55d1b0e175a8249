package tds

import (
	"encoding/binary"
	"fmt"
	"slices"
	"unicode/utf16"
	"unicode/utf8"
)

// Token stream writers (MS-TDS 2.2.7). All integers are little-endian except
// the TDS version inside LOGINACK. Lengths of B_VARCHAR / US_VARCHAR strings
// count UTF-16 code units, not bytes.

const (
	tokenReturnStatus = 0x79
	tokenColMetadata  = 0x81
	tokenError        = 0xAA
	tokenInfo         = 0xAB
	tokenReturnValue  = 0xAC
	tokenLoginAck     = 0xAD
	tokenRow          = 0xD1
	tokenNBCRow       = 0xD2
	tokenEnvChange    = 0xE3
	tokenDone         = 0xFD
	tokenDoneProc     = 0xFE
	tokenDoneInProc   = 0xFF
)

// DONE status bits (MS-TDS 2.2.7.6).
const (
	doneMore     = 0x0001
	doneError    = 0x0002
	doneInXact   = 0x0004
	doneCount    = 0x0010
	doneAttn     = 0x0020
	doneSrvError = 0x0100
)

// ENVCHANGE types (MS-TDS 2.2.7.9).
const (
	envDatabase        = 1
	envLanguage        = 2
	envPacketSize      = 4
	envCollation       = 7
	envBeginTran       = 8
	envCommitTran      = 9
	envRollbackTran    = 10
	envResetConnection = 18
)

// defaultCollation is Latin1_General_CI_AS-like: LCID 0x0409, flags 0xD0,
// sort id 0x34 [verified, docs/design/standin-protocol.md §6]. Its code page is 1252.
var defaultCollation = [5]byte{0x09, 0x04, 0xD0, 0x00, 0x34}

func appendU16(b []byte, v uint16) []byte { return binary.LittleEndian.AppendUint16(b, v) }
func appendU32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
func appendU64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

// utf16Len is the number of UTF-16 code units s encodes to (SQL Server's
// nvarchar lengths count these), without encoding it. Ranging over a string
// yields valid runes only (invalid UTF-8 reads as U+FFFD), so a rune is one
// unit or, above the BMP, a surrogate pair.
func utf16Len(s string) int {
	i := asciiPrefix(s)
	n := i
	for _, r := range s[i:] {
		n += utf16.RuneLen(r)
	}
	return n
}

// asciiPrefix is the length of s's leading ASCII bytes: event XML is
// nearly all ASCII, one byte to one UTF-16 unit, so the rune loops below
// start where it ends.
func asciiPrefix(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return i
		}
	}
	return len(s)
}

// appendUTF16 appends s as UTF-16LE straight into b: no []rune or []uint16
// copy, which was an eighth of the stand-in's CPU when a live trace read
// event_data rows (issue 29).
func appendUTF16(b []byte, s string) []byte {
	b = slices.Grow(b, 2*len(s))
	i := asciiPrefix(s)
	for j := 0; j < i; j++ {
		b = append(b, s[j], 0)
	}
	for _, r := range s[i:] {
		if utf16.RuneLen(r) == 2 {
			r1, r2 := utf16.EncodeRune(r)
			b = binary.LittleEndian.AppendUint16(b, uint16(r1))
			r = r2
		}
		b = binary.LittleEndian.AppendUint16(b, uint16(r))
	}
	return b
}

// appendBVarChar appends a B_VARCHAR (u8 length in code units).
func appendBVarChar(b []byte, s string) ([]byte, error) {
	n := utf16Len(s)
	if n > 255 {
		return b, fmt.Errorf("string of %d UTF-16 code units is too long for a B_VARCHAR (max 255)", n)
	}
	b = append(b, byte(n))
	return appendUTF16(b, s), nil
}

// appendUSVarChar appends a US_VARCHAR (u16 length in code units).
func appendUSVarChar(b []byte, s string) ([]byte, error) {
	n := utf16Len(s)
	if n > 65535 {
		return b, fmt.Errorf("string of %d UTF-16 code units is too long for a US_VARCHAR (max 65535)", n)
	}
	b = appendU16(b, uint16(n))
	return appendUTF16(b, s), nil
}

// appendLengthPrefixed appends token, then a u16 length, then body.
func appendLengthPrefixed(b []byte, token byte, body []byte) ([]byte, error) {
	if len(body) > 65535 {
		return b, fmt.Errorf("token 0x%02X body of %d bytes exceeds 65535", token, len(body))
	}
	b = append(b, token)
	b = appendU16(b, uint16(len(body)))
	return append(b, body...), nil
}

func appendEnvChangeString(b []byte, typ byte, newValue, oldValue string) ([]byte, error) {
	body := []byte{typ}
	var err error
	if body, err = appendBVarChar(body, newValue); err != nil {
		return b, fmt.Errorf("envchange %d new value: %w", typ, err)
	}
	if body, err = appendBVarChar(body, oldValue); err != nil {
		return b, fmt.Errorf("envchange %d old value: %w", typ, err)
	}
	return appendLengthPrefixed(b, tokenEnvChange, body)
}

func appendEnvChangeBytes(b []byte, typ byte, newValue, oldValue []byte) []byte {
	body := []byte{typ, byte(len(newValue))}
	body = append(body, newValue...)
	body = append(body, byte(len(oldValue)))
	body = append(body, oldValue...)
	out, _ := appendLengthPrefixed(b, tokenEnvChange, body) // at most 1+1+255+1+255 bytes
	return out
}

// appendMessage appends an ERROR or INFO token (MS-TDS 2.2.7.10 / 2.2.7.13).
func appendMessage(b []byte, token byte, e *Error, defaultServer string) ([]byte, error) {
	body := appendU32(nil, uint32(e.Number))
	body = append(body, e.State, e.Severity)
	var err error
	if body, err = appendUSVarChar(body, e.Message); err != nil {
		return b, fmt.Errorf("message %d text: %w", e.Number, err)
	}
	server := e.Server
	if server == "" {
		server = defaultServer
	}
	if body, err = appendBVarChar(body, server); err != nil {
		return b, fmt.Errorf("message %d server name: %w", e.Number, err)
	}
	if body, err = appendBVarChar(body, e.Proc); err != nil {
		return b, fmt.Errorf("message %d procedure name: %w", e.Number, err)
	}
	body = appendU32(body, uint32(e.Line))
	return appendLengthPrefixed(b, token, body)
}

// appendLoginAck appends LOGINACK (MS-TDS 2.2.7.14). The TDS version is
// big-endian here, unlike in LOGIN7 [verified, docs/design/standin-protocol.md §6].
func appendLoginAck(b []byte, tdsVersion uint32, progName string, v Version) []byte {
	body := []byte{1} // interface: SQL_TSQL
	body = binary.BigEndian.AppendUint32(body, tdsVersion)
	body, _ = appendBVarChar(body, progName) // constant, short
	body = append(body, v.Major, v.Minor, byte(v.Build>>8), byte(v.Build))
	out, _ := appendLengthPrefixed(b, tokenLoginAck, body)
	return out
}

func appendDone(b []byte, token byte, status uint16, cmd Command, rows uint64) []byte {
	b = append(b, token)
	b = appendU16(b, status)
	b = appendU16(b, uint16(cmd))
	return appendU64(b, rows)
}

func appendReturnStatus(b []byte, status int32) []byte {
	return appendU32(append(b, tokenReturnStatus), uint32(status))
}

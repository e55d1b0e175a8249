package tds

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"time"
	"unicode/utf16"
)

// Decoders for client messages. They never panic: every read is bounds
// checked, and a short or inconsistent message yields an error naming what
// was wrong.

// errUnsupported marks input that is well-formed TDS but uses a feature this
// server does not implement (the connection can continue with an ERROR
// reply), as opposed to malformed input (the connection is closed).
var errUnsupported = errors.New("unsupported")

type unsupportedError struct{ msg string }

func (e *unsupportedError) Error() string { return e.msg }
func (e *unsupportedError) Unwrap() error { return errUnsupported }

func unsupported(format string, args ...any) error {
	return &unsupportedError{msg: fmt.Sprintf(format, args...)}
}

// reader is a bounds-checked little-endian cursor with a sticky error.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) fail(what string, n int) {
	if r.err == nil {
		r.err = fmt.Errorf("truncated at byte %d: %s needs %d bytes, %d left", r.off, what, n, len(r.b)-r.off)
	}
}

func (r *reader) take(what string, n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b)-r.off {
		r.fail(what, n)
		return nil
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p
}

func (r *reader) u8(what string) uint8 {
	p := r.take(what, 1)
	if p == nil {
		return 0
	}
	return p[0]
}

func (r *reader) u16(what string) uint16 {
	p := r.take(what, 2)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint16(p)
}

func (r *reader) u32(what string) uint32 {
	p := r.take(what, 4)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(p)
}

func (r *reader) u64(what string) uint64 {
	p := r.take(what, 8)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(p)
}

func (r *reader) remaining() int { return len(r.b) - r.off }

// bVarChar reads a B_VARCHAR (u8 count of UTF-16 code units).
func (r *reader) bVarChar(what string) string {
	n := int(r.u8(what + " length"))
	return decodeUTF16(r.take(what, 2*n))
}

// usVarChar reads a US_VARCHAR (u16 count of UTF-16 code units).
func (r *reader) usVarChar(what string) string {
	n := int(r.u16(what + " length"))
	return decodeUTF16(r.take(what, 2*n))
}

// tmName reads a transaction or savepoint name of a TM request: a
// B_VARBYTE, i.e. a count of BYTES followed by UTF-16LE text (MS-TDS
// 2.2.6.9). tedious and Microsoft's own Rust TDS client send len*2 here;
// go-mssqldb only ever sends an empty name, where counts agree. Reading the
// count as characters (as B_VARCHAR) killed tedious' named transactions.
func (r *reader) tmName(what string) string {
	n := int(r.u8(what + " length"))
	if n%2 != 0 && r.err == nil {
		r.err = fmt.Errorf("%s has an odd byte length %d (want UTF-16)", what, n)
		return ""
	}
	return decodeUTF16(r.take(what, n))
}

func decodeUTF16(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}

// ---- PRELOGIN (MS-TDS 2.2.6.5) ----

const (
	preloginVersion    = 0
	preloginEncryption = 1
	preloginInstOpt    = 2
	preloginThreadID   = 3
	preloginMARS       = 4
	preloginTerminator = 0xFF

	encryptOff    = 0
	encryptOn     = 1
	encryptNotSup = 2
	encryptReq    = 3
)

// preloginOptions decodes the option table: token u8, offset u16 BE, length
// u16 BE, ... 0xFF, then the data the offsets point at.
func preloginOptions(p []byte) (map[uint8][]byte, error) {
	opts := map[uint8][]byte{}
	for i := 0; ; i += 5 {
		if i >= len(p) {
			return nil, errors.New("PRELOGIN option table has no terminator")
		}
		token := p[i]
		if token == preloginTerminator {
			return opts, nil
		}
		if i+5 > len(p) {
			return nil, fmt.Errorf("PRELOGIN option %d entry is truncated", token)
		}
		off := int(binary.BigEndian.Uint16(p[i+1:]))
		n := int(binary.BigEndian.Uint16(p[i+3:]))
		if off+n > len(p) {
			return nil, fmt.Errorf("PRELOGIN option %d points past the message (offset %d, length %d, message %d bytes)", token, off, n, len(p))
		}
		opts[token] = p[off : off+n]
	}
}

// ---- LOGIN7 (MS-TDS 2.2.6.4) ----

const login7FixedSize = 94

// decodeLogin7 decodes a LOGIN7 payload. The password is de-obfuscated:
// per byte, XOR 0xA5 then swap the nibbles (inverse of the client's
// mangling [verified, docs/design/standin-protocol.md §5]).
func decodeLogin7(p []byte) (*LoginRequest, error) {
	if len(p) < login7FixedSize {
		return nil, fmt.Errorf("LOGIN7 is %d bytes, shorter than its %d-byte fixed part", len(p), login7FixedSize)
	}
	le := binary.LittleEndian
	if declared := le.Uint32(p[0:]); int64(declared) > int64(len(p)) {
		return nil, fmt.Errorf("LOGIN7 declares %d bytes but the message has %d", declared, len(p))
	}
	req := &LoginRequest{
		TDSVersion:     le.Uint32(p[4:]),
		PacketSize:     le.Uint32(p[8:]),
		ClientProgVer:  le.Uint32(p[12:]),
		ClientPID:      le.Uint32(p[16:]),
		ConnectionID:   le.Uint32(p[20:]),
		OptionFlags1:   p[24],
		OptionFlags2:   p[25],
		TypeFlags:      p[26],
		OptionFlags3:   p[27],
		ClientTimeZone: int32(le.Uint32(p[28:])),
		ClientLCID:     le.Uint32(p[32:]),
	}
	req.ReadOnlyIntent = req.TypeFlags&0x20 != 0
	field := func(name string, at int) ([]byte, error) {
		off, chars := int(le.Uint16(p[at:])), int(le.Uint16(p[at+2:]))
		if chars == 0 {
			return nil, nil
		}
		if off < login7FixedSize || off+2*chars > len(p) {
			return nil, fmt.Errorf("LOGIN7 %s (offset %d, %d characters) lies outside the %d-byte message", name, off, chars, len(p))
		}
		return p[off : off+2*chars], nil
	}
	strs := []struct {
		name string
		at   int
		dst  *string
	}{
		{"HostName", 36, &req.HostName}, {"UserName", 40, &req.User}, {"AppName", 48, &req.AppName},
		{"ServerName", 52, &req.ServerName}, {"CltIntName", 60, &req.ClientInterface},
		{"Language", 64, &req.Language}, {"Database", 68, &req.Database},
	}
	for _, s := range strs {
		b, err := field(s.name, s.at)
		if err != nil {
			return nil, err
		}
		*s.dst = decodeUTF16(b)
	}
	pw, err := field("Password", 44)
	if err != nil {
		return nil, err
	}
	plain := make([]byte, len(pw))
	for i, b := range pw {
		b ^= 0xA5
		plain[i] = b<<4 | b>>4
	}
	req.Password = decodeUTF16(plain)
	return req, nil
}

// ---- ALL_HEADERS (MS-TDS 2.2.5.3) ----

type requestHeaders struct {
	transaction uint64
}

// decodeAllHeaders reads ALL_HEADERS and returns the transaction descriptor.
func decodeAllHeaders(r *reader) requestHeaders {
	var h requestHeaders
	start := r.off
	total := int(r.u32("ALL_HEADERS total length"))
	if r.err != nil {
		return h
	}
	if total < 4 || total > len(r.b)-start {
		r.err = fmt.Errorf("ALL_HEADERS length %d is outside the %d-byte message", total, len(r.b)-start)
		return h
	}
	end := start + total
	for r.off < end && r.err == nil {
		hstart := r.off
		length := int(r.u32("header length"))
		typ := r.u16("header type")
		if r.err != nil {
			return h
		}
		if length < 6 || hstart+length > end {
			r.err = fmt.Errorf("ALL_HEADERS entry of type %d has length %d outside its %d-byte block", typ, length, total)
			return h
		}
		if typ == 2 { // transaction descriptor: descriptor u64 + outstanding requests u32
			if length < 6+8 {
				r.err = fmt.Errorf("transaction descriptor header is %d bytes, want at least 14", length)
				return h
			}
			h.transaction = binary.LittleEndian.Uint64(r.b[r.off:])
		}
		r.off = hstart + length
	}
	return h
}

// decodeBatch decodes an SQLBatch payload.
func decodeBatch(p []byte) (*Batch, error) {
	r := &reader{b: p}
	h := decodeAllHeaders(r)
	if r.err != nil {
		return nil, fmt.Errorf("SQL batch: %w", r.err)
	}
	rest := r.take("batch text", r.remaining())
	if len(rest)%2 != 0 {
		return nil, fmt.Errorf("SQL batch text has an odd byte length %d (want UTF-16)", len(rest))
	}
	return &Batch{SQL: decodeUTF16(rest), Transaction: h.transaction}, nil
}

// ---- transaction manager request (MS-TDS 2.2.6.9) ----

func decodeTransMgr(p []byte) (*TransactionRequest, error) {
	r := &reader{b: p}
	h := decodeAllHeaders(r)
	req := &TransactionRequest{Transaction: h.transaction}
	req.Kind = TransactionKind(r.u16("request type"))
	switch req.Kind {
	case TxBegin:
		req.Isolation = IsolationLevel(r.u8("isolation level"))
		req.Name = r.tmName("transaction name")
	case TxCommit, TxRollback:
		req.Name = r.tmName("transaction name")
		flags := r.u8("flags")
		if flags&1 != 0 { // fBeginXact
			req.BeginNew = true
			req.Isolation = IsolationLevel(r.u8("new isolation level"))
			req.NewName = r.tmName("new transaction name")
		}
	case TxSave:
		req.Name = r.tmName("savepoint name")
	default:
		if r.err == nil {
			return nil, unsupported("transaction manager request type %d is not supported (only begin 5, commit 7, rollback 8, save 9)", uint16(req.Kind))
		}
	}
	if r.err != nil {
		return nil, fmt.Errorf("transaction manager request: %w", r.err)
	}
	return req, nil
}

// ---- RPC (MS-TDS 2.2.6.6) ----

var wellKnownProcs = map[uint16]string{
	ProcIDCursor: "sp_cursor", ProcIDCursorOpen: "sp_cursoropen", ProcIDCursorPrepare: "sp_cursorprepare",
	ProcIDCursorExecute: "sp_cursorexecute", ProcIDCursorPrepExec: "sp_cursorprepexec",
	ProcIDCursorUnprepare: "sp_cursorunprepare", ProcIDCursorFetch: "sp_cursorfetch",
	ProcIDCursorOption: "sp_cursoroption", ProcIDCursorClose: "sp_cursorclose", ProcIDExecuteSQL: "sp_executesql",
	ProcIDPrepare: "sp_prepare", ProcIDExecute: "sp_execute", ProcIDPrepExec: "sp_prepexec",
	ProcIDPrepExecRPC: "sp_prepexecrpc", ProcIDUnprepare: "sp_unprepare",
}

// decodeRPC decodes one RPC request. Several RPCs batched into one message
// (separated by 0xFF) are reported as unsupported.
func decodeRPC(p []byte) (*RPCCall, error) {
	r := &reader{b: p}
	h := decodeAllHeaders(r)
	call := &RPCCall{Transaction: h.transaction}
	nameLen := r.u16("procedure name length")
	if nameLen == 0xFFFF {
		call.ProcID = r.u16("procedure id")
		name, ok := wellKnownProcs[call.ProcID]
		if !ok && r.err == nil {
			return nil, fmt.Errorf("RPC procedure id %d is not a known procedure", call.ProcID)
		}
		call.ProcName = name
	} else {
		call.ProcName = decodeUTF16(r.take("procedure name", 2*int(nameLen)))
	}
	call.OptionFlags = r.u16("option flags")
	if r.err != nil {
		return nil, fmt.Errorf("RPC: %w", r.err)
	}
	for r.remaining() > 0 {
		if b := r.b[r.off]; b == 0xFF || b == 0x80 || b == 0xFE {
			return nil, unsupported("RPC batches (several calls in one request) are not supported")
		}
		prm, err := decodeParam(r, len(call.Params)+1)
		if err != nil {
			return nil, fmt.Errorf("RPC %s: %w", call.ProcName, err)
		}
		call.Params = append(call.Params, prm)
	}
	return call, nil
}

// decodeParam decodes one parameter: name, status flags, TYPE_INFO, value.
func decodeParam(r *reader, ordinal int) (Param, error) {
	var prm Param
	prm.Name = r.bVarChar("parameter name")
	status := r.u8("parameter status")
	prm.Output = status&0x01 != 0
	prm.Default = status&0x02 != 0
	if r.err != nil {
		return prm, fmt.Errorf("parameter %d: %w", ordinal, r.err)
	}
	if status&0x08 != 0 {
		return prm, unsupported("parameter %d (%s) is encrypted (Always Encrypted is not supported)", ordinal, prm.Name)
	}
	ti, err := decodeTypeInfo(r)
	if err != nil {
		return prm, fmt.Errorf("parameter %d (%s): %w", ordinal, prm.Name, err)
	}
	prm.Type = ti.TypeInfo
	prm.Value, err = ti.decodeValue(r)
	if err != nil {
		return prm, fmt.Errorf("parameter %d (%s) %s value: %w", ordinal, prm.Name, ti.TypeInfo, err)
	}
	return prm, nil
}

// wireType is a decoded TYPE_INFO.
type wireType struct {
	TypeInfo
	id       byte
	size     int // fixed size, or max length of a variable type
	plp      bool
	varchar  bool // single-byte characters in code page 1252
	timezone bool
}

func decodeTypeInfo(r *reader) (wireType, error) {
	var w wireType
	w.id = r.u8("type id")
	if r.err != nil {
		return w, r.err
	}
	fixed := map[byte]struct {
		t    DataType
		size int
	}{
		tdsInt1: {TypeTinyInt, 1}, tdsBit: {TypeBit, 1}, tdsInt2: {TypeSmallInt, 2}, tdsInt4: {TypeInt, 4},
		tdsInt8: {TypeBigInt, 8}, tdsFlt4: {TypeReal, 4}, tdsFlt8: {TypeFloat, 8}, tdsDateTime: {TypeDateTime, 8},
	}
	if f, ok := fixed[w.id]; ok {
		w.Type, w.size = f.t, f.size
		return w, nil
	}
	switch w.id {
	case tdsNull:
		return w, nil
	case tdsIntN:
		w.size = int(r.u8("intn size"))
		switch w.size {
		case 1:
			w.Type = TypeTinyInt
		case 2:
			w.Type = TypeSmallInt
		case 4:
			w.Type = TypeInt
		case 8:
			w.Type = TypeBigInt
		default:
			if r.err == nil {
				return w, fmt.Errorf("intn size %d is not 1, 2, 4 or 8", w.size)
			}
		}
	case tdsBitN:
		w.Type, w.size = TypeBit, int(r.u8("bitn size"))
		if r.err == nil && w.size != 1 {
			return w, fmt.Errorf("bitn size %d is not 1", w.size)
		}
	case tdsFltN:
		w.size = int(r.u8("fltn size"))
		switch w.size {
		case 4:
			w.Type = TypeReal
		case 8:
			w.Type = TypeFloat
		default:
			if r.err == nil {
				return w, fmt.Errorf("fltn size %d is not 4 or 8", w.size)
			}
		}
	case tdsDateTimeN:
		w.Type, w.size = TypeDateTime, int(r.u8("datetimen size"))
		if r.err == nil && w.size != 8 {
			return w, unsupported("smalldatetime parameters are not supported")
		}
	case tdsGUID:
		w.Type, w.size = TypeUniqueIdentifier, int(r.u8("guid size"))
		if r.err == nil && w.size != 16 {
			return w, fmt.Errorf("uniqueidentifier size %d is not 16", w.size)
		}
	case tdsDecimalN, tdsNumericN:
		w.Type = TypeDecimal
		w.size = int(r.u8("decimal size"))
		w.Precision = r.u8("decimal precision")
		w.Scale = r.u8("decimal scale")
		if r.err == nil && (w.Precision < 1 || w.Precision > 38 || w.Scale > w.Precision || w.size < 2 || w.size > 17) {
			return w, fmt.Errorf("decimal type info (size %d, precision %d, scale %d) is invalid", w.size, w.Precision, w.Scale)
		}
	case tdsDateN:
		w.Type = TypeDate
	case tdsTimeN, tdsDateTime2N, tdsDateTimeOffsetN:
		w.Type = map[byte]DataType{tdsTimeN: TypeTime, tdsDateTime2N: TypeDateTime2, tdsDateTimeOffsetN: TypeDateTimeOffset}[w.id]
		w.Scale = r.u8("fractional-second scale")
		if r.err == nil && w.Scale > 7 {
			return w, fmt.Errorf("%s scale %d is above 7", w.Type, w.Scale)
		}
		w.timezone = w.id == tdsDateTimeOffsetN
	case tdsNVarChar, tdsNChar, tdsBigVarChar, tdsBigChar, tdsBigVarBinary, tdsBigBinary:
		w.Type = map[byte]DataType{tdsNVarChar: TypeNVarChar, tdsNChar: TypeNChar, tdsBigVarChar: TypeVarChar,
			tdsBigChar: TypeChar, tdsBigVarBinary: TypeVarBinary, tdsBigBinary: TypeBinary}[w.id]
		w.size = int(r.u16("max length"))
		if w.id != tdsBigVarBinary && w.id != tdsBigBinary {
			r.take("collation", 5)
		}
		w.varchar = w.id == tdsBigVarChar || w.id == tdsBigChar
		switch {
		case w.size == plpMaxLength && (w.id == tdsNVarChar || w.id == tdsBigVarChar || w.id == tdsBigVarBinary):
			w.plp, w.Length = true, Max
		case w.size == plpMaxLength:
			return w, fmt.Errorf("%s cannot have max length", w.Type)
		case w.id == tdsNVarChar || w.id == tdsNChar:
			w.Length = w.size / 2
		default:
			w.Length = w.size
		}
	case tdsXML:
		w.Type, w.plp = TypeXML, true
		if r.u8("xml schema present") == 1 {
			r.bVarChar("xml schema database")
			r.bVarChar("xml schema owner")
			r.usVarChar("xml schema collection")
		}
	case tdsMoney, tdsMoney4, tdsMoneyN, tdsDateTim4:
		return w, unsupported("money, smallmoney and smalldatetime parameters are not supported")
	case tdsText, tdsNText, tdsImage, tdsVariant, tdsUDT, tdsTVP, tdsDecimal, tdsNumeric:
		return w, unsupported("data type 0x%02X (text/ntext/image/sql_variant/UDT/table-valued/legacy decimal) is not supported", w.id)
	default:
		return w, fmt.Errorf("data type 0x%02X is unknown", w.id)
	}
	return w, r.err
}

// decodeValue reads one value of the type; nil is NULL.
func (w wireType) decodeValue(r *reader) (any, error) {
	if w.id == tdsNull {
		return nil, nil
	}
	var data []byte
	switch {
	case w.plp:
		b, isNull, err := readPLP(r)
		if err != nil || isNull {
			return nil, err
		}
		data = b
	case w.id == tdsNVarChar || w.id == tdsNChar || w.id == tdsBigVarChar || w.id == tdsBigChar || w.id == tdsBigVarBinary || w.id == tdsBigBinary:
		n := r.u16("value length")
		if r.err != nil {
			return nil, r.err
		}
		if n == 0xFFFF {
			return nil, nil
		}
		if int(n) > w.size {
			return nil, fmt.Errorf("value of %d bytes exceeds the declared maximum %d", n, w.size)
		}
		data = r.take("value", int(n))
	case w.size > 0 && isFixedID(w.id):
		data = r.take("value", w.size)
	default: // byte-length types: intn, bitn, fltn, guid, decimal, datetimen, date/time
		n := int(r.u8("value length"))
		if r.err != nil {
			return nil, r.err
		}
		if n == 0 {
			return nil, nil
		}
		switch w.id {
		case tdsIntN, tdsBitN, tdsFltN, tdsGUID, tdsDateTimeN:
			if n != w.size {
				return nil, fmt.Errorf("value length %d differs from the declared size %d", n, w.size)
			}
		case tdsDecimalN, tdsNumericN:
			if n > w.size {
				return nil, fmt.Errorf("value length %d exceeds the declared size %d", n, w.size)
			}
		}
		data = r.take("value", n)
	}
	if r.err != nil {
		return nil, r.err
	}
	return w.convert(data)
}

func isFixedID(id byte) bool {
	switch id {
	case tdsInt1, tdsBit, tdsInt2, tdsInt4, tdsInt8, tdsFlt4, tdsFlt8, tdsDateTime:
		return true
	}
	return false
}

// readPLP reads a PLP value: total length u64 (all ones = NULL), then chunks
// of u32 length + data, ending with a zero-length chunk.
func readPLP(r *reader) ([]byte, bool, error) {
	total := r.u64("PLP total length")
	if r.err != nil {
		return nil, false, r.err
	}
	if total == plpNull {
		return nil, true, nil
	}
	const unknownLength = 0xFFFFFFFFFFFFFFFE
	if total != unknownLength && total > uint64(r.remaining()) {
		return nil, false, fmt.Errorf("PLP value claims %d bytes but only %d remain", total, r.remaining())
	}
	var out []byte
	for {
		n := r.u32("PLP chunk length")
		if r.err != nil {
			return nil, false, r.err
		}
		if n == 0 {
			break
		}
		out = append(out, r.take("PLP chunk", int(n))...)
		if r.err != nil {
			return nil, false, r.err
		}
	}
	if total != unknownLength && uint64(len(out)) != total {
		return nil, false, fmt.Errorf("PLP chunks hold %d bytes but the total says %d", len(out), total)
	}
	if out == nil {
		out = []byte{}
	}
	return out, false, nil
}

func (w wireType) convert(data []byte) (any, error) {
	le := binary.LittleEndian
	switch w.Type {
	case TypeTinyInt, TypeSmallInt, TypeInt, TypeBigInt:
		switch len(data) {
		case 1:
			return int64(data[0]), nil
		case 2:
			return int64(int16(le.Uint16(data))), nil
		case 4:
			return int64(int32(le.Uint32(data))), nil
		case 8:
			return int64(le.Uint64(data)), nil
		}
	case TypeBit:
		if len(data) == 1 {
			return data[0] != 0, nil
		}
	case TypeFloat, TypeReal:
		switch len(data) {
		case 4:
			return float64(math.Float32frombits(le.Uint32(data))), nil
		case 8:
			return math.Float64frombits(le.Uint64(data)), nil
		}
	case TypeDecimal:
		if len(data) >= 2 {
			mag := make([]byte, len(data)-1)
			for i := range mag { // little-endian to big-endian
				mag[i] = data[len(data)-1-i]
			}
			v := new(big.Int).SetBytes(mag)
			if data[0] == 0 {
				v.Neg(v)
			}
			return Decimal{Unscaled: v, Scale: w.Scale}, nil
		}
	case TypeNVarChar, TypeNChar, TypeXML:
		if len(data)%2 != 0 {
			return nil, fmt.Errorf("UTF-16 value has an odd length %d", len(data))
		}
		return decodeUTF16(data), nil
	case TypeVarChar, TypeChar:
		return decodeCP1252(data), nil
	case TypeVarBinary, TypeBinary:
		return append([]byte{}, data...), nil
	case TypeUniqueIdentifier:
		if len(data) == 16 {
			return UUID(wireUUID([16]byte(data))), nil
		}
	case TypeDateTime:
		if len(data) == 8 {
			days := int64(int32(le.Uint32(data)))
			ticks := int64(le.Uint32(data[4:]))
			if ticks >= 300*86400 {
				return nil, fmt.Errorf("datetime ticks %d exceed one day", ticks)
			}
			base := time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
			// 1/300 s ticks rounded to whole milliseconds, as SQL Server
			// displays them (tick 299 of a second is .997)
			nanos := (ticks*10 + 1) / 3 * int64(time.Millisecond)
			return base.AddDate(0, 0, int(days)).Add(time.Duration(nanos)), nil
		}
	case TypeDate, TypeTime, TypeDateTime2, TypeDateTimeOffset:
		return decodeTemporal(w.Type, w.Scale, data)
	}
	return nil, fmt.Errorf("%d value bytes do not fit %s", len(data), w.TypeInfo)
}

func decodeTemporal(typ DataType, scale uint8, data []byte) (any, error) {
	tlen := 0
	if typ != TypeDate {
		tlen = timeLength(scale)
	}
	dlen := 0
	if typ != TypeTime {
		dlen = 3
	}
	olen := 0
	if typ == TypeDateTimeOffset {
		olen = 2
	}
	if len(data) != tlen+dlen+olen {
		return nil, fmt.Errorf("%s(%d) value is %d bytes, want %d", typ, scale, len(data), tlen+dlen+olen)
	}
	var units uint64
	for i := tlen - 1; i >= 0; i-- {
		units = units<<8 | uint64(data[i])
	}
	nanos := units * pow10[9-scale]
	if nanos >= 86400*1e9 {
		return nil, fmt.Errorf("%s time of day %d exceeds 24 hours", typ, units)
	}
	var days int64
	if dlen > 0 {
		d := data[tlen:]
		days = int64(d[0]) | int64(d[1])<<8 | int64(d[2])<<16
	}
	// A time value decodes onto 0001-01-01, the base date of the date part.
	t := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(days)).Add(time.Duration(nanos))
	if olen > 0 {
		offset := int16(binary.LittleEndian.Uint16(data[tlen+dlen:]))
		if offset < -14*60 || offset > 14*60 {
			return nil, fmt.Errorf("datetimeoffset offset %d minutes is outside ±14:00", offset)
		}
		t = t.In(time.FixedZone(offsetName(offset), int(offset)*60))
	}
	return t, nil
}

func offsetName(minutes int16) string {
	sign := '+'
	if minutes < 0 {
		sign, minutes = '-', -minutes
	}
	return fmt.Sprintf("%c%02d:%02d", sign, minutes/60, minutes%60)
}

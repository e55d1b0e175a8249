package tds

import (
	"database/sql/driver"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"time"
)

// TDS type ids (MS-TDS 2.2.5.4).
const (
	tdsNull                   = 0x1F
	tdsInt1                   = 0x30
	tdsBit                    = 0x32
	tdsInt2                   = 0x34
	tdsInt4                   = 0x38
	tdsDateTim4               = 0x3A
	tdsFlt4                   = 0x3B
	tdsMoney                  = 0x3C
	tdsDateTime               = 0x3D
	tdsFlt8                   = 0x3E
	tdsMoney4                 = 0x7A
	tdsInt8                   = 0x7F
	tdsGUID                   = 0x24
	tdsIntN                   = 0x26
	tdsDecimal                = 0x37
	tdsNumeric                = 0x3F
	tdsBitN                   = 0x68
	tdsDecimalN               = 0x6A
	tdsNumericN               = 0x6C
	tdsFltN                   = 0x6D
	tdsMoneyN                 = 0x6E
	tdsDateTimeN              = 0x6F
	tdsDateN                  = 0x28
	tdsTimeN                  = 0x29
	tdsDateTime2N             = 0x2A
	tdsDateTimeOffsetN        = 0x2B
	tdsBigVarBinary           = 0xA5
	tdsBigVarChar             = 0xA7
	tdsBigBinary              = 0xAD
	tdsBigChar                = 0xAF
	tdsNVarChar               = 0xE7
	tdsNChar                  = 0xEF
	tdsXML                    = 0xF1
	tdsText                   = 0x23
	tdsImage                  = 0x22
	tdsNText                  = 0x63
	tdsVariant                = 0x62
	tdsUDT                    = 0xF0
	tdsTVP                    = 0xF3
	plpMaxLength              = 0xFFFF
	plpNull            uint64 = 0xFFFFFFFFFFFFFFFF
)

// columnCodec encodes the values of one column (or output parameter).
type columnCodec struct {
	TypeInfo
	notNull  bool
	typeInfo []byte // TYPE_INFO bytes, type id first
	// encode appends a non-NULL value including its length prefix.
	encode func(dst []byte, v any) ([]byte, error)
	// null is the encoding of NULL in a ROW token (nil for NOT NULL columns).
	null []byte
}

var (
	nullByteLen  = []byte{0}
	nullShortLen = []byte{0xFF, 0xFF}
	nullPLP      = appendU64(nil, plpNull)
)

// newColumnCodec builds the TYPE_INFO and value encoder of a column of
// type t; each family of types has its own setup method.
func newColumnCodec(t TypeInfo, notNull bool) (*columnCodec, error) {
	c := &columnCodec{TypeInfo: t, notNull: notNull}
	var err error
	switch t.Type {
	case TypeTinyInt, TypeSmallInt, TypeInt, TypeBigInt, TypeBit, TypeFloat, TypeReal, TypeDecimal:
		err = c.numericCodec()
	case TypeNVarChar, TypeNChar, TypeVarChar, TypeChar, TypeXML:
		err = c.textCodec()
	case TypeVarBinary, TypeBinary, TypeUniqueIdentifier:
		err = c.binaryCodec()
	case TypeDateTime2, TypeDateTimeOffset, TypeTime, TypeDate, TypeDateTime:
		err = c.temporalCodec()
	default:
		return nil, fmt.Errorf("unsupported column type %s", t.Type)
	}
	if err != nil {
		return nil, err
	}
	if notNull {
		c.null = nil
	}
	return c, nil
}

// fixedOrN sets the TYPE_INFO of a fixed-size type: the type itself when
// NOT NULL, else its nullable *N form with a one-byte length.
func (c *columnCodec) fixedOrN(fixedID byte, size int) {
	if c.notNull {
		c.typeInfo = []byte{fixedID}
	} else {
		c.typeInfo = []byte{nullableID(fixedID), byte(size)}
		c.null = nullByteLen
	}
}

// prefix wraps a fixed-size encoder with the length byte the nullable *N
// form needs.
func (c *columnCodec) prefix(size int, body func(dst []byte, v any) ([]byte, error)) func(dst []byte, v any) ([]byte, error) {
	if c.notNull {
		return body
	}
	return func(dst []byte, v any) ([]byte, error) {
		return body(append(dst, byte(size)), v)
	}
}

// numericCodec sets up the integer, bit, floating-point and decimal types:
// fixed-size when NOT NULL, their nullable *N type otherwise.
func (c *columnCodec) numericCodec() error {
	t := c.TypeInfo
	switch t.Type {
	case TypeTinyInt, TypeSmallInt, TypeInt, TypeBigInt:
		size, lo, hi, id := intLimits(t.Type)
		c.fixedOrN(id, size)
		c.encode = c.prefix(size, func(dst []byte, v any) ([]byte, error) {
			n, err := toInt64(v)
			if err != nil {
				return dst, err
			}
			if n < lo || n > hi {
				return dst, fmt.Errorf("value %d out of range for %s", n, t.Type)
			}
			for i := 0; i < size; i++ {
				dst = append(dst, byte(uint64(n)>>(8*i)))
			}
			return dst, nil
		})
	case TypeBit:
		c.fixedOrN(tdsBit, 1)
		c.encode = c.prefix(1, func(dst []byte, v any) ([]byte, error) {
			b, ok := v.(bool)
			if !ok {
				return dst, fmt.Errorf("bit column wants a bool, got %T", v)
			}
			if b {
				return append(dst, 1), nil
			}
			return append(dst, 0), nil
		})
	case TypeFloat, TypeReal:
		size, id := 8, byte(tdsFlt8)
		if t.Type == TypeReal {
			size, id = 4, tdsFlt4
		}
		c.fixedOrN(id, size)
		c.encode = c.prefix(size, func(dst []byte, v any) ([]byte, error) {
			f, err := toFloat64(v)
			if err != nil {
				return dst, err
			}
			if size == 4 {
				return appendU32(dst, math.Float32bits(float32(f))), nil
			}
			return appendU64(dst, math.Float64bits(f)), nil
		})
	case TypeDecimal:
		if t.Precision < 1 || t.Precision > 38 || t.Scale > t.Precision {
			return fmt.Errorf("decimal(%d,%d): precision must be 1-38 and scale 0-precision", t.Precision, t.Scale)
		}
		size := decimalSize(t.Precision)
		c.typeInfo = []byte{tdsDecimalN, byte(size), t.Precision, t.Scale}
		c.null = nullByteLen
		c.encode = func(dst []byte, v any) ([]byte, error) {
			d, err := toDecimal(v, t.Scale)
			if err != nil {
				return dst, err
			}
			return appendDecimal(dst, d, t.Precision, size)
		}
	}
	return nil
}

// textCodec sets up the Unicode and code-page character types and xml.
func (c *columnCodec) textCodec() error {
	t := c.TypeInfo
	switch t.Type {
	case TypeNVarChar, TypeNChar:
		id := byte(tdsNVarChar)
		if t.Type == TypeNChar {
			id = tdsNChar
		}
		if err := checkLength(t, 4000); err != nil {
			return err
		}
		c.typeInfo = append(appendU16([]byte{id}, maxLenField(t.Length, 2)), defaultCollation[:]...)
		c.null = nullShortLen
		if t.Length == Max {
			c.null = nullPLP
		}
		c.encode = func(dst []byte, v any) ([]byte, error) {
			s, err := toString(v)
			if err != nil {
				return dst, err
			}
			n := utf16Len(s)
			if t.Length != Max && n > t.Length {
				return dst, fmt.Errorf("string of %d characters is too long for %s", n, t)
			}
			u := appendUTF16(make([]byte, 0, 2*max(n, t.Length)), s)
			for t.Type == TypeNChar && len(u) < 2*t.Length {
				u = append(u, ' ', 0)
			}
			return appendVarBytes(dst, t.Length == Max, u), nil
		}
	case TypeVarChar, TypeChar:
		id := byte(tdsBigVarChar)
		if t.Type == TypeChar {
			id = tdsBigChar
		}
		if err := checkLength(t, 8000); err != nil {
			return err
		}
		c.typeInfo = append(appendU16([]byte{id}, maxLenField(t.Length, 1)), defaultCollation[:]...)
		c.null = nullShortLen
		if t.Length == Max {
			c.null = nullPLP
		}
		c.encode = func(dst []byte, v any) ([]byte, error) {
			s, err := toString(v)
			if err != nil {
				return dst, err
			}
			b := encodeCP1252(s)
			if t.Length != Max && len(b) > t.Length {
				return dst, fmt.Errorf("string of %d characters is too long for %s", len(b), t)
			}
			for t.Type == TypeChar && len(b) < t.Length {
				b = append(b, ' ')
			}
			return appendVarBytes(dst, t.Length == Max, b), nil
		}
	case TypeXML:
		c.typeInfo = []byte{tdsXML, 0} // no schema collection
		c.null = nullPLP
		c.encode = func(dst []byte, v any) ([]byte, error) {
			s, err := toString(v)
			if err != nil {
				return dst, err
			}
			return appendPLP(dst, appendUTF16(nil, s)), nil
		}
	}
	return nil
}

// binaryCodec sets up the binary types and uniqueidentifier.
func (c *columnCodec) binaryCodec() error {
	t := c.TypeInfo
	switch t.Type {
	case TypeVarBinary, TypeBinary:
		id := byte(tdsBigVarBinary)
		if t.Type == TypeBinary {
			id = tdsBigBinary
		}
		if err := checkLength(t, 8000); err != nil {
			return err
		}
		c.typeInfo = appendU16([]byte{id}, maxLenField(t.Length, 1))
		c.null = nullShortLen
		if t.Length == Max {
			c.null = nullPLP
		}
		c.encode = func(dst []byte, v any) ([]byte, error) {
			b, ok := v.([]byte)
			if !ok {
				return dst, fmt.Errorf("%s column wants []byte, got %T", t.Type, v)
			}
			if t.Length != Max && len(b) > t.Length {
				return dst, fmt.Errorf("%d bytes are too long for %s", len(b), t)
			}
			if t.Type == TypeBinary && len(b) < t.Length {
				b = append(append([]byte(nil), b...), make([]byte, t.Length-len(b))...)
			}
			return appendVarBytes(dst, t.Length == Max, b), nil
		}
	case TypeUniqueIdentifier:
		c.typeInfo = []byte{tdsGUID, 16}
		c.null = nullByteLen
		c.encode = func(dst []byte, v any) ([]byte, error) {
			u, err := toUUID(v)
			if err != nil {
				return dst, err
			}
			w := wireUUID(u)
			return append(append(dst, 16), w[:]...), nil
		}
	}
	return nil
}

// temporalCodec sets up the date and time types.
func (c *columnCodec) temporalCodec() error {
	t := c.TypeInfo
	switch t.Type {
	case TypeDateTime2, TypeDateTimeOffset, TypeTime:
		if t.Scale > 7 {
			return fmt.Errorf("%s: fractional-second scale %d is above 7", t.Type, t.Scale)
		}
		id := map[DataType]byte{TypeDateTime2: tdsDateTime2N, TypeDateTimeOffset: tdsDateTimeOffsetN, TypeTime: tdsTimeN}[t.Type]
		c.typeInfo = []byte{id, t.Scale}
		c.null = nullByteLen
		c.encode = func(dst []byte, v any) ([]byte, error) {
			tm, ok := v.(time.Time)
			if !ok {
				return dst, fmt.Errorf("%s column wants time.Time, got %T", t.Type, v)
			}
			return appendTemporal(dst, t.Type, t.Scale, tm)
		}
	case TypeDate:
		c.typeInfo = []byte{tdsDateN}
		c.null = nullByteLen
		c.encode = func(dst []byte, v any) ([]byte, error) {
			tm, ok := v.(time.Time)
			if !ok {
				return dst, fmt.Errorf("date column wants time.Time, got %T", v)
			}
			return appendTemporal(dst, TypeDate, 0, tm)
		}
	case TypeDateTime:
		c.fixedOrN(tdsDateTime, 8)
		c.encode = c.prefix(8, func(dst []byte, v any) ([]byte, error) {
			tm, ok := v.(time.Time)
			if !ok {
				return dst, fmt.Errorf("datetime column wants time.Time, got %T", v)
			}
			return appendDateTime(dst, tm)
		})
	}
	return nil
}

func nullableID(fixedID byte) byte {
	switch fixedID {
	case tdsInt1, tdsInt2, tdsInt4, tdsInt8:
		return tdsIntN
	case tdsBit:
		return tdsBitN
	case tdsFlt4, tdsFlt8:
		return tdsFltN
	case tdsDateTime:
		return tdsDateTimeN
	}
	return fixedID
}

func intLimits(t DataType) (size int, lo, hi int64, fixedID byte) {
	switch t {
	case TypeTinyInt:
		return 1, 0, math.MaxUint8, tdsInt1
	case TypeSmallInt:
		return 2, math.MinInt16, math.MaxInt16, tdsInt2
	case TypeInt:
		return 4, math.MinInt32, math.MaxInt32, tdsInt4
	}
	return 8, math.MinInt64, math.MaxInt64, tdsInt8
}

func checkLength(t TypeInfo, limit int) error {
	if t.Length == Max && t.Type != TypeNChar && t.Type != TypeChar && t.Type != TypeBinary {
		return nil
	}
	if t.Length < 1 || t.Length > limit {
		return fmt.Errorf("%s: length %d must be 1-%d", t.Type, t.Length, limit)
	}
	return nil
}

// maxLenField is the TYPE_INFO max length in bytes (0xFFFF for max).
func maxLenField(length, bytesPerChar int) uint16 {
	if length == Max {
		return plpMaxLength
	}
	return uint16(length * bytesPerChar)
}

// appendVarBytes appends a USHORTLEN value or, for (max) types, a PLP value.
func appendVarBytes(dst []byte, plp bool, b []byte) []byte {
	if plp {
		return appendPLP(dst, b)
	}
	return append(appendU16(dst, uint16(len(b))), b...)
}

// appendPLP appends a partially length-prefixed value (MS-TDS 2.2.5.2.3):
// total length, one chunk, terminator.
func appendPLP(dst []byte, b []byte) []byte {
	dst = appendU64(dst, uint64(len(b)))
	if len(b) > 0 {
		dst = appendU32(dst, uint32(len(b)))
		dst = append(dst, b...)
	}
	return appendU32(dst, 0)
}

func decimalSize(precision uint8) int {
	switch {
	case precision <= 9:
		return 5
	case precision <= 19:
		return 9
	case precision <= 28:
		return 13
	}
	return 17
}

var tenPow38 = new(big.Int).Exp(big.NewInt(10), big.NewInt(38), nil)

// appendDecimal appends len, sign (1 = positive) and the magnitude
// little-endian in size-1 bytes.
func appendDecimal(dst []byte, d Decimal, precision uint8, size int) ([]byte, error) {
	v := d.Unscaled
	if v == nil {
		v = new(big.Int)
	}
	mag := new(big.Int).Abs(v)
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(precision)), nil)
	if mag.Cmp(limit) >= 0 {
		return dst, fmt.Errorf("value %s does not fit decimal(%d,%d)", d, precision, d.Scale)
	}
	dst = append(dst, byte(size))
	if v.Sign() < 0 {
		dst = append(dst, 0)
	} else {
		dst = append(dst, 1)
	}
	be := mag.Bytes()
	for i := 0; i < size-1; i++ {
		if i < len(be) {
			dst = append(dst, be[len(be)-1-i])
		} else {
			dst = append(dst, 0)
		}
	}
	return dst, nil
}

// daysSinceYear1 counts days from 0001-01-01 to the date of t's clock
// reading. It avoids time.Sub, whose Duration overflows after ±292 years
// [verified, docs/design/standin-protocol.md §8].
func daysSinceYear1(t time.Time) int64 {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix()/86400 + 719162
}

// appendTemporal appends a date, time, datetime2 or datetimeoffset value
// including its length byte. Fractions beyond the scale are truncated.
func appendTemporal(dst []byte, typ DataType, scale uint8, t time.Time) ([]byte, error) {
	if typ == TypeDateTimeOffset {
		_, offset := t.Zone()
		if offset%60 != 0 || offset < -14*3600 || offset > 14*3600 {
			return dst, fmt.Errorf("datetimeoffset: zone offset %ds is not a whole number of minutes within ±14:00", offset)
		}
		// datetimeoffset stores the UTC clock reading plus the offset.
		return appendDateTimeOffset(dst, scale, t.UTC(), int16(offset/60))
	}
	var timeBytes []byte
	if typ != TypeDate {
		timeBytes = timeOfDay(t, scale)
	}
	var dateBytes []byte
	if typ != TypeTime {
		var err error
		if dateBytes, err = dateValue(t); err != nil {
			return dst, err
		}
	}
	dst = append(dst, byte(len(timeBytes)+len(dateBytes)))
	return append(append(dst, timeBytes...), dateBytes...), nil
}

func appendDateTimeOffset(dst []byte, scale uint8, utc time.Time, offsetMinutes int16) ([]byte, error) {
	timeBytes := timeOfDay(utc, scale)
	dateBytes, err := dateValue(utc)
	if err != nil {
		return dst, err
	}
	dst = append(dst, byte(len(timeBytes)+len(dateBytes)+2))
	dst = append(append(dst, timeBytes...), dateBytes...)
	return appendU16(dst, uint16(offsetMinutes)), nil
}

// timeLength is the byte length of a time value at a scale (MS-TDS 2.2.5.4.2).
func timeLength(scale uint8) int {
	switch {
	case scale <= 2:
		return 3
	case scale <= 4:
		return 4
	}
	return 5
}

var pow10 = [...]uint64{1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000}

func timeOfDay(t time.Time, scale uint8) []byte {
	secs := uint64(t.Hour()*3600 + t.Minute()*60 + t.Second())
	units := secs*pow10[scale] + uint64(t.Nanosecond())/pow10[9-scale]
	n := timeLength(scale)
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(units >> (8 * i))
	}
	return b
}

func dateValue(t time.Time) ([]byte, error) {
	days := daysSinceYear1(t)
	if days < 0 || days > 3652058 { // 9999-12-31
		return nil, fmt.Errorf("date %s is outside 0001-01-01..9999-12-31", t.Format("2006-01-02"))
	}
	return []byte{byte(days), byte(days >> 8), byte(days >> 16)}, nil
}

// appendDateTime appends a legacy datetime: days since 1900-01-01 (i32) and
// 1/300-second ticks since midnight (u32), rounded to the nearest tick.
func appendDateTime(dst []byte, t time.Time) ([]byte, error) {
	days := daysSinceYear1(t) - 693595 // 1900-01-01
	nanos := uint64(t.Hour()*3600+t.Minute()*60+t.Second())*1e9 + uint64(t.Nanosecond())
	ticks := (nanos*3 + 5e6) / 1e7
	if ticks >= 300*86400 {
		ticks -= 300 * 86400
		days++
	}
	if days < -53690 || days > 2958463 { // 1753-01-01 .. 9999-12-31
		return dst, fmt.Errorf("datetime %s is outside 1753-01-01..9999-12-31", t.Format(time.RFC3339))
	}
	dst = appendU32(dst, uint32(int32(days)))
	return appendU32(dst, uint32(ticks)), nil
}

// normalizeValue turns pointers, driver.Valuers and named types into the
// plain Go values the encoders accept; nil means NULL.
func normalizeValue(v any) (any, error) {
	for depth := 0; depth < 8; depth++ {
		switch x := v.(type) {
		case nil:
			return nil, nil
		case Decimal, UUID, time.Time, []byte, string, bool:
			return v, nil
		case driver.Valuer:
			rv := reflect.ValueOf(v)
			if rv.Kind() == reflect.Pointer && rv.IsNil() {
				return nil, nil
			}
			nv, err := x.Value()
			if err != nil {
				return nil, fmt.Errorf("value of %T: %w", v, err)
			}
			v = nv
			continue
		}
		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.Pointer:
			if rv.IsNil() {
				return nil, nil
			}
			v = rv.Elem().Interface()
			continue
		case reflect.String:
			return rv.String(), nil
		case reflect.Bool:
			return rv.Bool(), nil
		case reflect.Slice:
			if rv.Type().Elem().Kind() == reflect.Uint8 {
				return rv.Bytes(), nil
			}
		}
		return v, nil
	}
	return nil, fmt.Errorf("value of %T: too many levels of indirection", v)
}

func toInt64(v any) (int64, error) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		if u > math.MaxInt64 {
			return 0, fmt.Errorf("value %d out of range for bigint", u)
		}
		return int64(u), nil
	}
	return 0, fmt.Errorf("integer column wants a Go integer, got %T", v)
}

func toFloat64(v any) (float64, error) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Float32, reflect.Float64:
		return rv.Float(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(rv.Uint()), nil
	}
	return 0, fmt.Errorf("float column wants a float64, got %T", v)
}

func toString(v any) (string, error) {
	switch s := v.(type) {
	case string:
		return s, nil
	case fmt.Stringer:
		return s.String(), nil
	}
	return "", fmt.Errorf("string column wants a string, got %T", v)
}

func toDecimal(v any, scale uint8) (Decimal, error) {
	switch x := v.(type) {
	case Decimal:
		return x.Rescale(scale), nil
	case string:
		d, err := ParseDecimal(x)
		if err != nil {
			return Decimal{}, err
		}
		return d.Rescale(scale), nil
	case float32, float64:
		f, _ := toFloat64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return Decimal{}, fmt.Errorf("%v is not a decimal number", f)
		}
		d, err := ParseDecimal(strconv.FormatFloat(f, 'f', int(scale), 64))
		if err != nil {
			return Decimal{}, err
		}
		return d.Rescale(scale), nil
	}
	n, err := toInt64(v)
	if err != nil {
		return Decimal{}, fmt.Errorf("decimal column wants Decimal, string, integer or float, got %T", v)
	}
	return Decimal{Unscaled: big.NewInt(n)}.Rescale(scale), nil
}

func toUUID(v any) (UUID, error) {
	switch x := v.(type) {
	case UUID:
		return x, nil
	case [16]byte:
		return UUID(x), nil
	case string:
		return ParseUUID(x)
	case []byte:
		if len(x) == 16 {
			return UUID(x), nil
		}
	}
	return UUID{}, fmt.Errorf("uniqueidentifier column wants UUID, [16]byte or a string, got %T", v)
}

// cp1252High maps bytes 0x80-0x9F of code page 1252 to Unicode; 0 marks the
// five unused positions. Every other byte equals its Latin-1 code point.
// Written by hand because x/text is not a dependency and these 32 entries are
// the whole difference from Latin-1.
var cp1252High = [32]rune{
	0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
	0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
}

// encodeCP1252 converts s to code page 1252; characters it cannot hold
// become '?', as SQL Server's conversion to varchar does.
func encodeCP1252(s string) []byte {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		switch {
		case r < 0x80 || (r >= 0xA0 && r <= 0xFF):
			b = append(b, byte(r))
		default:
			c := byte('?')
			for i, h := range cp1252High {
				if h == r && h != 0 {
					c = byte(0x80 + i)
					break
				}
			}
			b = append(b, c)
		}
	}
	return b
}

func decodeCP1252(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		switch {
		case c >= 0x80 && c <= 0x9F && cp1252High[c-0x80] != 0:
			r[i] = cp1252High[c-0x80]
		default:
			r[i] = rune(c)
		}
	}
	return string(r)
}

// appendValue is used by Row and ReturnValue: it normalizes v and
// appends its encoding (or NULL).
func (c *columnCodec) appendValue(dst []byte, v any) ([]byte, error) {
	nv, err := normalizeValue(v)
	if err != nil {
		return dst, err
	}
	if nv == nil {
		if c.null == nil {
			return dst, fmt.Errorf("NULL in a NOT NULL %s column", c.Type)
		}
		return append(dst, c.null...), nil
	}
	return c.encode(dst, nv)
}

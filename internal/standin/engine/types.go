package engine

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// dateLocation marks a time.Time that is a date value (CAST(x AS date)), so
// that it renders as yyyy-mm-dd; it is UTC in every other respect.
var DateLocation = time.FixedZone("date", 0)

var (
	TInt      = sqlfront.SQLType{Kind: sqlfront.TypeInt}
	TBigInt   = sqlfront.SQLType{Kind: sqlfront.TypeBigInt}
	TSmallInt = sqlfront.SQLType{Kind: sqlfront.TypeSmallInt}
	TTinyInt  = sqlfront.SQLType{Kind: sqlfront.TypeTinyInt}
	TBit      = sqlfront.SQLType{Kind: sqlfront.TypeBit}
	TFloat    = sqlfront.SQLType{Kind: sqlfront.TypeFloat}
	TDT2      = sqlfront.SQLType{Kind: sqlfront.TypeDateTime2}
	TGUID     = sqlfront.SQLType{Kind: sqlfront.TypeUniqueIdentifier}
	TXML      = sqlfront.SQLType{Kind: sqlfront.TypeXML}
	TNMax     = sqlfront.SQLType{Kind: sqlfront.TypeNVarChar}
	TDate     = sqlfront.SQLType{Kind: sqlfront.TypeDate}
	TSysname  = sqlfront.SQLType{Kind: sqlfront.TypeNVarChar, Size: 128}
)

func TNVar(n int) sqlfront.SQLType   { return sqlfront.SQLType{Kind: sqlfront.TypeNVarChar, Size: n} }
func TVarBin(n int) sqlfront.SQLType { return sqlfront.SQLType{Kind: sqlfront.TypeVarBinary, Size: n} }

// Column describes one result column.
type Column struct {
	Name string
	Type sqlfront.SQLType
}

// TypeOfValue infers a result type for an expression value.
func TypeOfValue(v any) sqlfront.SQLType {
	switch x := v.(type) {
	case int64:
		if x >= math.MinInt32 && x <= math.MaxInt32 {
			return TInt
		}
		return TBigInt
	case float64:
		return TFloat
	case bool:
		return TBit
	case []byte:
		return TVarBin(0)
	case time.Time:
		if x.Location() == DateLocation {
			return TDate
		}
		return TDT2
	case string:
		if len(x) > 4000 {
			return TNMax
		}
		return TNVar(4000)
	}
	return TNVar(4000)
}

// ValueString renders a value the way CAST(x AS nvarchar) would.
func ValueString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		if x {
			return "1"
		}
		return "0"
	case []byte:
		return "0x" + strings.ToUpper(hex.EncodeToString(x))
	case time.Time:
		if x.Location() == DateLocation {
			return x.Format("2006-01-02")
		}
		return x.Format("2006-01-02 15:04:05.0000000")
	}
	return fmt.Sprint(v)
}

// CompareValues orders two non-NULL values with SQL Server's implicit
// conversion rules reduced to what the stand-in needs: numbers compare as
// numbers (a string operand is converted, failing with Msg 245), strings
// compare case-insensitively (the default collation is CI_AS).
func CompareValues(a, b any) (int, *sqlfront.SQLError) {
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return cmp.Compare(x, y), nil
		case float64:
			return cmpFloat(float64(x), y), nil
		case bool:
			return cmp.Compare(x, BoolInt(y)), nil
		case string:
			n, err := ToNumber(y, "int")
			if err != nil {
				return 0, err
			}
			return cmpFloat(float64(x), n), nil
		}
	case float64:
		switch y := b.(type) {
		case int64:
			return cmpFloat(x, float64(y)), nil
		case float64:
			return cmpFloat(x, y), nil
		case string:
			n, err := ToNumber(y, "float")
			if err != nil {
				return 0, err
			}
			return cmpFloat(x, n), nil
		}
	case bool:
		return CompareValues(BoolInt(x), b)
	case string:
		switch y := b.(type) {
		case string:
			return strings.Compare(strings.ToUpper(strings.TrimRight(x, " ")), strings.ToUpper(strings.TrimRight(y, " "))), nil
		case int64, float64, bool:
			c, err := CompareValues(b, a)
			return -c, err
		case time.Time:
			t, err := ParseDateTime(x)
			if err != nil {
				return 0, err
			}
			return cmpTime(t, y), nil
		}
	case time.Time:
		switch y := b.(type) {
		case time.Time:
			return cmpTime(x, y), nil
		case string:
			t, err := ParseDateTime(y)
			if err != nil {
				return 0, err
			}
			return cmpTime(x, t), nil
		}
	case []byte:
		if y, ok := b.([]byte); ok {
			return bytes.Compare(x, y), nil
		}
	}
	return 0, sqlfront.NewError(402, 16, "The data types %s and %s are incompatible in the equal to operator.", TypeOfValue(a), TypeOfValue(b))
}

func BoolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpTime(a, b time.Time) int {
	switch {
	case a.Before(b):
		return -1
	case a.After(b):
		return 1
	}
	return 0
}

func ToNumber(s, typ string) (float64, *sqlfront.SQLError) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, ErrConversion("nvarchar", s, typ)
	}
	return f, nil
}

func ParseDateTime(s string) (time.Time, *sqlfront.SQLError) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"2006-01-02T15:04:05.9999999", "2006-01-02 15:04:05.9999999", "2006-01-02", "20060102", "2006-01-02T15:04:05Z07:00",
		"2006-01-02 15:04", "2006-01-02T15:04", "20060102 15:04:05", "2006/01/02", "01/02/2006", "2006-01-02 15:04:05.9999999 -07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, sqlfront.NewError(241, 16, "Conversion failed when converting date and/or time from character string.")
}

// ConvertValue implements CAST/CONVERT and implicit conversion on assignment.
func ConvertValue(v any, to sqlfront.SQLType) (any, *sqlfront.SQLError) {
	if v == nil {
		return nil, nil
	}
	switch to.Kind {
	case sqlfront.TypeInt, sqlfront.TypeBigInt, sqlfront.TypeSmallInt, sqlfront.TypeTinyInt:
		switch x := v.(type) {
		case int64:
			return x, nil
		case float64:
			return int64(x), nil // truncation, as CAST does
		case bool:
			return BoolInt(x), nil
		case string:
			n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
			if err != nil {
				return nil, ErrConversion("nvarchar", x, to.String())
			}
			return n, nil
		case []byte:
			var n int64
			for _, b := range x {
				n = n<<8 | int64(b)
			}
			return n, nil
		}
	case sqlfront.TypeBit:
		switch x := v.(type) {
		case int64:
			return x != 0, nil
		case bool:
			return x, nil
		case string:
			switch strings.ToUpper(strings.TrimSpace(x)) {
			case "1", "TRUE":
				return true, nil
			case "0", "FALSE":
				return false, nil
			}
			return nil, ErrConversion("nvarchar", x, "bit")
		}
	case sqlfront.TypeFloat:
		switch x := v.(type) {
		case int64:
			return float64(x), nil
		case float64:
			return x, nil
		case bool:
			return float64(BoolInt(x)), nil
		case string:
			return ToNumber(x, "float")
		}
	case sqlfront.TypeDecimal:
		var f float64
		switch x := v.(type) {
		case int64:
			f = float64(x)
		case float64:
			f = x
		case bool:
			f = float64(BoolInt(x))
		case string:
			n, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if err != nil {
				return nil, sqlfront.NewError(8114, 16, "Error converting data type nvarchar to numeric.")
			}
			f = n
		default:
			return nil, sqlfront.NewError(529, 16, "Explicit conversion from data type %s to %s is not allowed.", TypeOfValue(v), to)
		}
		r := RoundHalfAway(f, to.Scale)
		if math.Abs(r) >= math.Pow(10, float64(to.Size-to.Scale)) {
			return nil, sqlfront.NewError(8115, 16, "Arithmetic overflow error converting %s to data type numeric.", TypeOfValue(v))
		}
		return r, nil
	case sqlfront.TypeDate:
		var t time.Time
		switch x := v.(type) {
		case time.Time:
			t = x
		case string:
			p, err := ParseDateTime(x)
			if err != nil {
				return nil, err
			}
			t = p
		default:
			return nil, sqlfront.NewError(529, 16, "Explicit conversion from data type %s to %s is not allowed.", TypeOfValue(v), to)
		}
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, DateLocation), nil
	case sqlfront.TypeNVarChar:
		s := ValueString(v)
		if b, ok := v.([]byte); ok {
			s = string(b) // CAST(varbinary AS varchar) reinterprets the bytes
		}
		if to.Size > 0 && len([]rune(s)) > to.Size {
			s = string([]rune(s)[:to.Size])
		}
		return s, nil
	case sqlfront.TypeVarBinary:
		switch x := v.(type) {
		case []byte:
			return x, nil
		case string:
			return []byte(x), nil
		case int64:
			return []byte{byte(x >> 24), byte(x >> 16), byte(x >> 8), byte(x)}, nil
		}
	case sqlfront.TypeDateTime2:
		switch x := v.(type) {
		case time.Time:
			return x.In(time.UTC), nil
		case string:
			t, err := ParseDateTime(x)
			if err != nil {
				return nil, err
			}
			return t, nil
		}
	case sqlfront.TypeXML, sqlfront.TypeUniqueIdentifier:
		return ValueString(v), nil
	}
	return nil, sqlfront.NewError(529, 16, "Explicit conversion from data type %s to %s is not allowed.", TypeOfValue(v), to)
}

func MathFloat64bits(f float64) uint64 { return math.Float64bits(f) }

// RoundHalfAway rounds to scale decimal places, halves away from zero, as
// SQL Server rounds decimals.
func RoundHalfAway(f float64, scale int) float64 {
	p := math.Pow(10, float64(scale))
	r := math.Round(f*p) / p
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return f
	}
	return r
}

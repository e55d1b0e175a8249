package standin

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// TypeKind is a SQL Server data type as the stand-in returns it. The TDS
// layer maps each kind to its TYPE_INFO; values travel as Go values:
// nil (NULL), int64, float64, string, []byte, bool, time.Time.
type TypeKind int

const (
	TypeInt TypeKind = iota + 1
	TypeBigInt
	TypeSmallInt
	TypeTinyInt
	TypeBit
	TypeFloat
	TypeNVarChar // Size = max characters; 0 means nvarchar(max)
	TypeVarBinary
	TypeDateTime2
	TypeUniqueIdentifier
	TypeXML
	TypeDecimal // Size = precision, Scale = scale; values travel as float64
	TypeDate    // values are time.Time at midnight in dateLocation
)

// dateLocation marks a time.Time that is a date value (CAST(x AS date)), so
// that it renders as yyyy-mm-dd; it is UTC in every other respect.
var dateLocation = time.FixedZone("date", 0)

// SQLType is a column's declared type.
type SQLType struct {
	Kind  TypeKind
	Size  int // characters for nvarchar, bytes for varbinary (0 = max); precision for decimal
	Scale int // decimal scale
}

// decimalType is decimal(p, s) with SQL Server's defaults: decimal = (18, 0),
// money = (19, 4), smallmoney = (10, 4).
func decimalType(name string, p, s int) SQLType {
	switch strings.ToLower(name) {
	case "money":
		return SQLType{Kind: TypeDecimal, Size: 19, Scale: 4}
	case "smallmoney":
		return SQLType{Kind: TypeDecimal, Size: 10, Scale: 4}
	}
	if p <= 0 {
		p = 18
	}
	if s < 0 {
		s = 0
	}
	return SQLType{Kind: TypeDecimal, Size: p, Scale: s}
}

func (t SQLType) String() string {
	switch t.Kind {
	case TypeInt:
		return "int"
	case TypeBigInt:
		return "bigint"
	case TypeSmallInt:
		return "smallint"
	case TypeTinyInt:
		return "tinyint"
	case TypeBit:
		return "bit"
	case TypeFloat:
		return "float"
	case TypeNVarChar:
		if t.Size == 0 {
			return "nvarchar(max)"
		}
		return fmt.Sprintf("nvarchar(%d)", t.Size)
	case TypeVarBinary:
		if t.Size == 0 {
			return "varbinary(max)"
		}
		return fmt.Sprintf("varbinary(%d)", t.Size)
	case TypeDateTime2:
		return "datetime2"
	case TypeUniqueIdentifier:
		return "uniqueidentifier"
	case TypeXML:
		return "xml"
	case TypeDecimal:
		return fmt.Sprintf("decimal(%d,%d)", t.Size, t.Scale)
	case TypeDate:
		return "date"
	}
	return "sql_variant"
}

var (
	tInt      = SQLType{Kind: TypeInt}
	tBigInt   = SQLType{Kind: TypeBigInt}
	tSmallInt = SQLType{Kind: TypeSmallInt}
	tTinyInt  = SQLType{Kind: TypeTinyInt}
	tBit      = SQLType{Kind: TypeBit}
	tFloat    = SQLType{Kind: TypeFloat}
	tDT2      = SQLType{Kind: TypeDateTime2}
	tGUID     = SQLType{Kind: TypeUniqueIdentifier}
	tXML      = SQLType{Kind: TypeXML}
	tNMax     = SQLType{Kind: TypeNVarChar}
	tDate     = SQLType{Kind: TypeDate}
	tSysname  = SQLType{Kind: TypeNVarChar, Size: 128}
)

func tNVar(n int) SQLType   { return SQLType{Kind: TypeNVarChar, Size: n} }
func tVarBin(n int) SQLType { return SQLType{Kind: TypeVarBinary, Size: n} }

// Column describes one result column.
type Column struct {
	Name string
	Type SQLType
}

// typeOfValue infers a result type for an expression value.
func typeOfValue(v any) SQLType {
	switch x := v.(type) {
	case int64:
		if x >= math.MinInt32 && x <= math.MaxInt32 {
			return tInt
		}
		return tBigInt
	case float64:
		return tFloat
	case bool:
		return tBit
	case []byte:
		return tVarBin(0)
	case time.Time:
		if x.Location() == dateLocation {
			return tDate
		}
		return tDT2
	case string:
		if len(x) > 4000 {
			return tNMax
		}
		return tNVar(4000)
	}
	return tNVar(4000)
}

// valueString renders a value the way CAST(x AS nvarchar) would.
func valueString(v any) string {
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
		if x.Location() == dateLocation {
			return x.Format("2006-01-02")
		}
		return x.Format("2006-01-02 15:04:05.0000000")
	}
	return fmt.Sprint(v)
}

// compareValues orders two non-NULL values with SQL Server's implicit
// conversion rules reduced to what the stand-in needs: numbers compare as
// numbers (a string operand is converted, failing with Msg 245), strings
// compare case-insensitively (the default collation is CI_AS).
func compareValues(a, b any) (int, *SQLError) {
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return cmp.Compare(x, y), nil
		case float64:
			return cmpFloat(float64(x), y), nil
		case bool:
			return cmp.Compare(x, boolInt(y)), nil
		case string:
			n, err := toNumber(y, "int")
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
			n, err := toNumber(y, "float")
			if err != nil {
				return 0, err
			}
			return cmpFloat(x, n), nil
		}
	case bool:
		return compareValues(boolInt(x), b)
	case string:
		switch y := b.(type) {
		case string:
			return strings.Compare(strings.ToUpper(strings.TrimRight(x, " ")), strings.ToUpper(strings.TrimRight(y, " "))), nil
		case int64, float64, bool:
			c, err := compareValues(b, a)
			return -c, err
		case time.Time:
			t, err := parseDateTime(x)
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
			t, err := parseDateTime(y)
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
	return 0, sqlErr(402, 16, "The data types %s and %s are incompatible in the equal to operator.", typeOfValue(a), typeOfValue(b))
}

func boolInt(b bool) int64 {
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

func toNumber(s, typ string) (float64, *SQLError) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, errConversion("nvarchar", s, typ)
	}
	return f, nil
}

func parseDateTime(s string) (time.Time, *SQLError) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"2006-01-02T15:04:05.9999999", "2006-01-02 15:04:05.9999999", "2006-01-02", "20060102", "2006-01-02T15:04:05Z07:00",
		"2006-01-02 15:04", "2006-01-02T15:04", "20060102 15:04:05", "2006/01/02", "01/02/2006", "2006-01-02 15:04:05.9999999 -07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, sqlErr(241, 16, "Conversion failed when converting date and/or time from character string.")
}

// convertValue implements CAST/CONVERT and implicit conversion on assignment.
func convertValue(v any, to SQLType) (any, *SQLError) {
	if v == nil {
		return nil, nil
	}
	switch to.Kind {
	case TypeInt, TypeBigInt, TypeSmallInt, TypeTinyInt:
		switch x := v.(type) {
		case int64:
			return x, nil
		case float64:
			return int64(x), nil // truncation, as CAST does
		case bool:
			return boolInt(x), nil
		case string:
			n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
			if err != nil {
				return nil, errConversion("nvarchar", x, to.String())
			}
			return n, nil
		case []byte:
			var n int64
			for _, b := range x {
				n = n<<8 | int64(b)
			}
			return n, nil
		}
	case TypeBit:
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
			return nil, errConversion("nvarchar", x, "bit")
		}
	case TypeFloat:
		switch x := v.(type) {
		case int64:
			return float64(x), nil
		case float64:
			return x, nil
		case bool:
			return float64(boolInt(x)), nil
		case string:
			return toNumber(x, "float")
		}
	case TypeDecimal:
		var f float64
		switch x := v.(type) {
		case int64:
			f = float64(x)
		case float64:
			f = x
		case bool:
			f = float64(boolInt(x))
		case string:
			n, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if err != nil {
				return nil, sqlErr(8114, 16, "Error converting data type nvarchar to numeric.")
			}
			f = n
		default:
			return nil, sqlErr(529, 16, "Explicit conversion from data type %s to %s is not allowed.", typeOfValue(v), to)
		}
		r := roundHalfAway(f, to.Scale)
		if math.Abs(r) >= math.Pow(10, float64(to.Size-to.Scale)) {
			return nil, sqlErr(8115, 16, "Arithmetic overflow error converting %s to data type numeric.", typeOfValue(v))
		}
		return r, nil
	case TypeDate:
		var t time.Time
		switch x := v.(type) {
		case time.Time:
			t = x
		case string:
			p, err := parseDateTime(x)
			if err != nil {
				return nil, err
			}
			t = p
		default:
			return nil, sqlErr(529, 16, "Explicit conversion from data type %s to %s is not allowed.", typeOfValue(v), to)
		}
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, dateLocation), nil
	case TypeNVarChar:
		s := valueString(v)
		if b, ok := v.([]byte); ok {
			s = string(b) // CAST(varbinary AS varchar) reinterprets the bytes
		}
		if to.Size > 0 && len([]rune(s)) > to.Size {
			s = string([]rune(s)[:to.Size])
		}
		return s, nil
	case TypeVarBinary:
		switch x := v.(type) {
		case []byte:
			return x, nil
		case string:
			return []byte(x), nil
		case int64:
			return []byte{byte(x >> 24), byte(x >> 16), byte(x >> 8), byte(x)}, nil
		}
	case TypeDateTime2:
		switch x := v.(type) {
		case time.Time:
			return x.In(time.UTC), nil
		case string:
			t, err := parseDateTime(x)
			if err != nil {
				return nil, err
			}
			return t, nil
		}
	case TypeXML, TypeUniqueIdentifier:
		return valueString(v), nil
	}
	return nil, sqlErr(529, 16, "Explicit conversion from data type %s to %s is not allowed.", typeOfValue(v), to)
}

// parseTypeName maps a T-SQL type name (and its size argument) to SQLType.
func parseTypeName(name string, size int, max bool) (SQLType, bool) {
	switch strings.ToLower(name) {
	case "int":
		return tInt, true
	case "bigint":
		return tBigInt, true
	case "smallint":
		return tSmallInt, true
	case "tinyint":
		return tTinyInt, true
	case "bit":
		return tBit, true
	case "float", "real":
		return tFloat, true
	case "decimal", "numeric", "money", "smallmoney":
		return decimalType(name, size, -1), true
	case "date":
		return tDate, true
	case "nvarchar", "varchar", "nchar", "char", "sysname", "text", "ntext":
		if max {
			return tNMax, true
		}
		if name == "sysname" {
			return tSysname, true
		}
		if size == 0 {
			size = 30 // CAST(x AS varchar) without a length means 30
		}
		return tNVar(size), true
	case "varbinary", "binary":
		if max {
			return tVarBin(0), true
		}
		if size == 0 {
			size = 30
		}
		return tVarBin(size), true
	case "datetime2", "datetime", "smalldatetime", "datetimeoffset":
		return tDT2, true
	case "uniqueidentifier":
		return tGUID, true
	case "xml":
		return tXML, true
	}
	return SQLType{}, false
}

func mathFloat64bits(f float64) uint64 { return math.Float64bits(f) }

// roundHalfAway rounds to scale decimal places, halves away from zero, as
// SQL Server rounds decimals.
func roundHalfAway(f float64, scale int) float64 {
	p := math.Pow(10, float64(scale))
	r := math.Round(f*p) / p
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return f
	}
	return r
}

package tds

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Decimal is an exact decimal number: Unscaled × 10^-Scale. The zero value is 0.
type Decimal struct {
	// Unscaled is the coefficient; nil means 0.
	Unscaled *big.Int
	Scale    uint8
}

// ParseDecimal parses decimal text such as "-12.50", "3" or ".5". Exponents
// ("1e3") are refused: SQL Server's decimal literals have none.
func ParseDecimal(s string) (Decimal, error) {
	text := strings.TrimSpace(s)
	neg := false
	switch {
	case strings.HasPrefix(text, "-"):
		neg, text = true, text[1:]
	case strings.HasPrefix(text, "+"):
		text = text[1:]
	}
	intPart, frac, _ := strings.Cut(text, ".")
	digits := intPart + frac
	if digits == "" || len(frac) > 38 {
		return Decimal{}, fmt.Errorf("parse decimal %q: not a decimal number", s)
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return Decimal{}, fmt.Errorf("parse decimal %q: unexpected character %q", s, c)
		}
	}
	v, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return Decimal{}, fmt.Errorf("parse decimal %q: not a decimal number", s)
	}
	if neg {
		v.Neg(v)
	}
	return Decimal{Unscaled: v, Scale: uint8(len(frac))}, nil
}

// String formats the number with exactly Scale fractional digits.
func (d Decimal) String() string {
	v := d.Unscaled
	if v == nil {
		v = new(big.Int)
	}
	digits := new(big.Int).Abs(v).String()
	if d.Scale > 0 {
		if len(digits) <= int(d.Scale) {
			digits = strings.Repeat("0", int(d.Scale)-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-int(d.Scale)] + "." + digits[len(digits)-int(d.Scale):]
	}
	if v.Sign() < 0 {
		return "-" + digits
	}
	return digits
}

// Rescale returns d with the given scale, rounding half away from zero when
// digits are dropped (as SQL Server does when converting to a smaller scale).
func (d Decimal) Rescale(scale uint8) Decimal {
	v := d.Unscaled
	if v == nil {
		v = new(big.Int)
	}
	switch {
	case scale == d.Scale:
		return Decimal{Unscaled: new(big.Int).Set(v), Scale: scale}
	case scale > d.Scale:
		f := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale-d.Scale)), nil)
		return Decimal{Unscaled: new(big.Int).Mul(v, f), Scale: scale}
	}
	f := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale-scale)), nil)
	q, r := new(big.Int).QuoRem(new(big.Int).Abs(v), f, new(big.Int))
	if new(big.Int).Mul(r, big.NewInt(2)).Cmp(f) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if v.Sign() < 0 {
		q.Neg(q)
	}
	return Decimal{Unscaled: q, Scale: scale}
}

// UUID is a uniqueidentifier in its textual byte order: UUID{0x6F, 0x96, ...}
// prints as "6F9619FF-...". SQL Server stores the first three groups
// little-endian; the encoder and decoder handle that.
type UUID [16]byte

// ParseUUID parses "6F9619FF-8B86-D011-B42D-00C04FC964FF", with or without
// braces.
func ParseUUID(s string) (UUID, error) {
	var u UUID
	t := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(s), "{"), "}")
	if len(t) != 36 || t[8] != '-' || t[13] != '-' || t[18] != '-' || t[23] != '-' {
		return u, fmt.Errorf("parse uniqueidentifier %q: want the form XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX", s)
	}
	b, err := hex.DecodeString(t[0:8] + t[9:13] + t[14:18] + t[19:23] + t[24:])
	if err != nil {
		return u, fmt.Errorf("parse uniqueidentifier %q: %w", s, err)
	}
	copy(u[:], b)
	return u, nil
}

func (u UUID) String() string {
	h := strings.ToUpper(hex.EncodeToString(u[:]))
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// wireUUID converts between textual and wire (mixed-endian) byte order; the
// conversion is its own inverse.
func wireUUID(u [16]byte) [16]byte {
	w := u
	w[0], w[1], w[2], w[3] = u[3], u[2], u[1], u[0]
	w[4], w[5] = u[5], u[4]
	w[6], w[7] = u[7], u[6]
	return w
}

// String formats the type as T-SQL, e.g. "nvarchar(50)", "decimal(10,2)",
// "varbinary(max)", "datetime2(7)".
func (t TypeInfo) String() string {
	length := func() string {
		if t.Length == Max {
			return "max"
		}
		return strconv.Itoa(t.Length)
	}
	switch t.Type {
	case TypeNVarChar, TypeVarChar, TypeNChar, TypeChar, TypeVarBinary, TypeBinary:
		return t.Type.String() + "(" + length() + ")"
	case TypeDecimal:
		return fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale)
	case TypeDateTime2, TypeDateTimeOffset, TypeTime:
		return fmt.Sprintf("%s(%d)", t.Type, t.Scale)
	}
	return t.Type.String()
}

var typeNames = map[DataType]string{
	TypeInt: "int", TypeBigInt: "bigint", TypeSmallInt: "smallint", TypeTinyInt: "tinyint", TypeBit: "bit",
	TypeFloat: "float", TypeReal: "real", TypeDecimal: "decimal", TypeNVarChar: "nvarchar", TypeVarChar: "varchar",
	TypeNChar: "nchar", TypeChar: "char", TypeXML: "xml", TypeDateTime2: "datetime2",
	TypeDateTimeOffset: "datetimeoffset", TypeDate: "date", TypeTime: "time", TypeDateTime: "datetime",
	TypeUniqueIdentifier: "uniqueidentifier", TypeVarBinary: "varbinary", TypeBinary: "binary",
}

func (t DataType) String() string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("DataType(%d)", uint8(t))
}

// ParseType parses a T-SQL type name as written in declarations and
// sp_executesql parameter lists: "int", "nvarchar(50)", "nvarchar(max)",
// "decimal(10,2)", "numeric", "datetime2(3)", "float(24)", "sysname"...
// Defaults follow T-SQL declarations: (n)varchar/(n)char/varbinary/binary
// without a length are 1 long, decimal is (18,0), datetime2/datetimeoffset/
// time are scale 7.
// https://learn.microsoft.com/en-us/sql/t-sql/data-types/data-types-transact-sql
func ParseType(s string) (TypeInfo, error) {
	text := strings.ToLower(strings.TrimSpace(s))
	name, args := text, ""
	if i := strings.IndexByte(text, '('); i >= 0 {
		if !strings.HasSuffix(text, ")") {
			return TypeInfo{}, fmt.Errorf("parse type %q: missing ')'", s)
		}
		name, args = strings.TrimSpace(text[:i]), text[i+1:len(text)-1]
	}
	name = strings.Trim(name, "[]")
	var nums []int
	isMax := false
	if args != "" {
		for _, a := range strings.Split(args, ",") {
			a = strings.TrimSpace(a)
			if a == "max" {
				isMax = true
				continue
			}
			n, err := strconv.Atoi(a)
			if err != nil || n < 0 {
				return TypeInfo{}, fmt.Errorf("parse type %q: bad argument %q", s, a)
			}
			nums = append(nums, n)
		}
	}
	simple := map[string]DataType{
		"int": TypeInt, "bigint": TypeBigInt, "smallint": TypeSmallInt, "tinyint": TypeTinyInt, "bit": TypeBit,
		"real": TypeReal, "xml": TypeXML, "date": TypeDate, "datetime": TypeDateTime,
		"uniqueidentifier": TypeUniqueIdentifier,
	}
	if t, ok := simple[name]; ok {
		if args != "" {
			return TypeInfo{}, fmt.Errorf("parse type %q: %s takes no arguments", s, name)
		}
		return TypeInfo{Type: t}, nil
	}
	switch name {
	case "sysname":
		return TypeInfo{Type: TypeNVarChar, Length: 128}, nil
	case "float":
		if len(nums) == 1 && nums[0] >= 1 && nums[0] <= 24 {
			return TypeInfo{Type: TypeReal}, nil
		}
		if len(nums) > 1 || isMax || (len(nums) == 1 && nums[0] > 53) {
			return TypeInfo{}, fmt.Errorf("parse type %q: float precision must be 1-53", s)
		}
		return TypeInfo{Type: TypeFloat}, nil
	case "decimal", "numeric":
		t := TypeInfo{Type: TypeDecimal, Precision: 18}
		if isMax || len(nums) > 2 {
			return TypeInfo{}, fmt.Errorf("parse type %q: want decimal(p[,s])", s)
		}
		if len(nums) >= 1 {
			t.Precision = uint8(min(nums[0], 255))
		}
		if len(nums) == 2 {
			t.Scale = uint8(min(nums[1], 255))
		}
		if t.Precision < 1 || t.Precision > 38 || t.Scale > t.Precision {
			return TypeInfo{}, fmt.Errorf("parse type %q: precision must be 1-38 and scale 0-precision", s)
		}
		return t, nil
	case "datetime2", "datetimeoffset", "time":
		t := TypeInfo{Type: map[string]DataType{"datetime2": TypeDateTime2, "datetimeoffset": TypeDateTimeOffset, "time": TypeTime}[name], Scale: 7}
		if isMax || len(nums) > 1 || (len(nums) == 1 && nums[0] > 7) {
			return TypeInfo{}, fmt.Errorf("parse type %q: fractional-second precision must be 0-7", s)
		}
		if len(nums) == 1 {
			t.Scale = uint8(nums[0])
		}
		return t, nil
	case "nvarchar", "varchar", "nchar", "char", "varbinary", "binary":
		limits := map[string]struct {
			t        DataType
			limit    int
			allowMax bool
		}{
			"nvarchar": {TypeNVarChar, 4000, true}, "varchar": {TypeVarChar, 8000, true},
			"nchar": {TypeNChar, 4000, false}, "char": {TypeChar, 8000, false},
			"varbinary": {TypeVarBinary, 8000, true}, "binary": {TypeBinary, 8000, false},
		}
		l := limits[name]
		t := TypeInfo{Type: l.t, Length: 1}
		switch {
		case isMax && l.allowMax && len(nums) == 0:
			t.Length = Max
		case !isMax && len(nums) == 1 && nums[0] >= 1 && nums[0] <= l.limit:
			t.Length = nums[0]
		case !isMax && len(nums) == 0 && args == "":
		default:
			return TypeInfo{}, fmt.Errorf("parse type %q: length must be 1-%d%s", s, l.limit, map[bool]string{true: " or max", false: ""}[l.allowMax])
		}
		return t, nil
	}
	return TypeInfo{}, fmt.Errorf("parse type %q: unknown or unsupported type %q", s, name)
}

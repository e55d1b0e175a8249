package sqlfront

import (
	"fmt"
	"strings"
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
	TypeDate    // values are time.Time at midnight (the engine marks them with a "date" zone)
)

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

// parseTypeName maps a T-SQL type name (and its size argument) to SQLType.
func parseTypeName(name string, size int, max bool) (SQLType, bool) {
	switch strings.ToLower(name) {
	case "int":
		return SQLType{Kind: TypeInt}, true
	case "bigint":
		return SQLType{Kind: TypeBigInt}, true
	case "smallint":
		return SQLType{Kind: TypeSmallInt}, true
	case "tinyint":
		return SQLType{Kind: TypeTinyInt}, true
	case "bit":
		return SQLType{Kind: TypeBit}, true
	case "float", "real":
		return SQLType{Kind: TypeFloat}, true
	case "decimal", "numeric", "money", "smallmoney":
		return decimalType(name, size, -1), true
	case "date":
		return SQLType{Kind: TypeDate}, true
	case "nvarchar", "varchar", "nchar", "char", "sysname", "text", "ntext":
		if max {
			return SQLType{Kind: TypeNVarChar}, true
		}
		if name == "sysname" {
			return SQLType{Kind: TypeNVarChar, Size: 128}, true
		}
		if size == 0 {
			size = 30 // CAST(x AS varchar) without a length means 30
		}
		return SQLType{Kind: TypeNVarChar, Size: size}, true
	case "varbinary", "binary":
		if max {
			return SQLType{Kind: TypeVarBinary, Size: 0}, true
		}
		if size == 0 {
			size = 30
		}
		return SQLType{Kind: TypeVarBinary, Size: size}, true
	case "datetime2", "datetime", "smalldatetime", "datetimeoffset":
		return SQLType{Kind: TypeDateTime2}, true
	case "uniqueidentifier":
		return SQLType{Kind: TypeUniqueIdentifier}, true
	case "xml":
		return SQLType{Kind: TypeXML}, true
	}
	return SQLType{}, false
}

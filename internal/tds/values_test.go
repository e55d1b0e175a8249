package tds

import (
	"math/big"
	"testing"
)

func TestParseType(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want TypeInfo
		str  string
	}{
		{"int", TypeInfo{Type: TypeInt}, "int"},
		{" BIGINT ", TypeInfo{Type: TypeBigInt}, "bigint"},
		{"nvarchar(50)", TypeInfo{Type: TypeNVarChar, Length: 50}, "nvarchar(50)"},
		{"nvarchar(max)", TypeInfo{Type: TypeNVarChar, Length: Max}, "nvarchar(max)"},
		{"nvarchar", TypeInfo{Type: TypeNVarChar, Length: 1}, "nvarchar(1)"},
		{"varbinary(MAX)", TypeInfo{Type: TypeVarBinary, Length: Max}, "varbinary(max)"},
		{"decimal", TypeInfo{Type: TypeDecimal, Precision: 18}, "decimal(18,0)"},
		{"numeric(10, 2)", TypeInfo{Type: TypeDecimal, Precision: 10, Scale: 2}, "decimal(10,2)"},
		{"datetime2", TypeInfo{Type: TypeDateTime2, Scale: 7}, "datetime2(7)"},
		{"datetimeoffset(3)", TypeInfo{Type: TypeDateTimeOffset, Scale: 3}, "datetimeoffset(3)"},
		{"float", TypeInfo{Type: TypeFloat}, "float"},
		{"float(24)", TypeInfo{Type: TypeReal}, "real"},
		{"sysname", TypeInfo{Type: TypeNVarChar, Length: 128}, "nvarchar(128)"},
		{"[uniqueidentifier]", TypeInfo{Type: TypeUniqueIdentifier}, "uniqueidentifier"},
		{"xml", TypeInfo{Type: TypeXML}, "xml"},
		{"char(10)", TypeInfo{Type: TypeChar, Length: 10}, "char(10)"},
	} {
		got, err := ParseType(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseType(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			continue
		}
		if got.String() != tc.str {
			t.Errorf("%v.String() = %q, want %q", got, got.String(), tc.str)
		}
	}
	for _, bad := range []string{"", "money", "int(4)", "nvarchar(4001)", "nvarchar(0)", "nchar(max)", "decimal(39)", "decimal(5,6)",
		"datetime2(8)", "nvarchar(10", "varchar(x)", "float(54)"} {
		if got, err := ParseType(bad); err == nil {
			t.Errorf("ParseType(%q) = %v, want an error", bad, got)
		}
	}
}

func TestDecimal(t *testing.T) {
	for _, tc := range []struct {
		in    string
		str   string
		scale uint8
		res   string
	}{
		{"-12.50", "-12.50", 1, "-12.5"},
		{"3", "3", 2, "3.00"},
		{".5", "0.5", 0, "1"},
		{"-0.05", "-0.05", 1, "-0.1"},
		{"+7.004", "7.004", 2, "7.00"},
		{"12345678901234567890123456789012345678", "12345678901234567890123456789012345678", 0, "12345678901234567890123456789012345678"},
	} {
		d, err := ParseDecimal(tc.in)
		if err != nil {
			t.Fatalf("ParseDecimal(%q): %v", tc.in, err)
		}
		if d.String() != tc.str {
			t.Errorf("ParseDecimal(%q) = %s, want %s", tc.in, d, tc.str)
		}
		if got := d.Rescale(tc.scale).String(); got != tc.res {
			t.Errorf("%s rescaled to %d = %s, want %s", d, tc.scale, got, tc.res)
		}
	}
	for _, bad := range []string{"", "-", "1e3", "1.2.3", "abc", "1,5"} {
		if _, err := ParseDecimal(bad); err == nil {
			t.Errorf("ParseDecimal(%q) accepted", bad)
		}
	}
	if (Decimal{}).String() != "0" || (Decimal{Unscaled: big.NewInt(5), Scale: 3}).String() != "0.005" {
		t.Error("zero / small decimal formatting")
	}
}

func TestUUID(t *testing.T) {
	const s = "6F9619FF-8B86-D011-B42D-00C04FC964FF"
	u, err := ParseUUID(s)
	if err != nil || u != testUUID || u.String() != s {
		t.Fatalf("ParseUUID = %v, %v", u, err)
	}
	// SQL Server's wire order swaps the first three groups [MS-TDS 2.2.5.5.1.9? mixed-endian GUID].
	w := wireUUID(u)
	if w[0] != 0xFF || w[3] != 0x6F || w[4] != 0x86 || w[6] != 0x11 || w[8] != 0xB4 || wireUUID(w) != u {
		t.Errorf("wire order % x", w)
	}
	for _, bad := range []string{"", "6F9619FF8B86D011B42D00C04FC964FF", "6F9619FF-8B86-D011-B42D-00C04FC964FG"} {
		if _, err := ParseUUID(bad); err == nil {
			t.Errorf("ParseUUID(%q) accepted", bad)
		}
	}
}

func TestExecuteSQLSplitsArguments(t *testing.T) {
	call := &RPCCall{ProcID: ProcIDExecuteSQL, ProcName: "sp_executesql", Params: []Param{
		{Value: "select @a"}, {Value: "@a int"}, {Name: "@a", Value: int64(1)},
	}}
	x, ok := call.ExecuteSQL()
	if !ok || x.Statement != "select @a" || x.ParamDecl != "@a int" || len(x.Args) != 1 || x.Args[0].Name != "@a" {
		t.Errorf("ExecuteSQL = %+v, %v", x, ok)
	}
	// tedious names the leading parameters and calls by name
	call = &RPCCall{ProcName: "SP_EXECUTESQL", Params: []Param{{Name: "@statement", Value: "select 1"}}}
	if x, ok := call.ExecuteSQL(); !ok || x.Statement != "select 1" || x.ParamDecl != "" || len(x.Args) != 0 {
		t.Errorf("by name: %+v, %v", x, ok)
	}
	if _, ok := (&RPCCall{ProcName: "dbo.proc"}).ExecuteSQL(); ok {
		t.Error("dbo.proc taken for sp_executesql")
	}
}

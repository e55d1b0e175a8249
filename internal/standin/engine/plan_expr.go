package engine

import (
	"strings"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// Expression analysis for the planner: conjuncts, the columns an
// expression uses, subqueries inside it, and its static result type.

// typeOf is the static type of e over rel (and the outer scopes): the
// result metadata must be known before the first row exists.
func (p *Planner) typeOf(e sqlfront.Expr, rel *Relation) sqlfront.SQLType {
	if rel != nil && rel.Subst != nil {
		if i, ok := rel.Subst[e]; ok {
			return rel.Cols[i].Typ
		}
	}
	switch x := e.(type) {
	case *sqlfront.Literal:
		switch v := x.V.(type) {
		case nil:
			return TInt
		case string:
			n := len([]rune(v))
			if n == 0 {
				n = 1
			}
			if n > 4000 {
				return TNMax
			}
			return TNVar(n)
		case float64:
			return TFloat
		}
		return TypeOfValue(x.V)
	case *sqlfront.ColRef:
		for s := p.scopeFor(rel); s != nil; s = s.Parent {
			if s.Rel == nil {
				continue
			}
			if i, err := s.Rel.LookupRef(x); err == nil && i >= 0 {
				return s.Rel.Cols[i].Typ
			}
		}
		return TInt
	case *sqlfront.VarRef:
		if t, ok := p.x.VarType(x.Name); ok {
			return t
		}
		if t, ok := StaticType(x, nil); ok {
			return t
		}
		v, err := p.x.Variable(x.Name)
		if err == nil && v != nil {
			return TypeOfValue(v)
		}
		return TInt
	case *sqlfront.CastExpr:
		if x.T.Kind == sqlfront.TypeNVarChar && x.T.Size == 30 {
			// CAST(x AS varchar) without a length: 30 characters
			return x.T
		}
		return x.T
	case *sqlfront.PseudoCol:
		return map[bool]sqlfront.SQLType{true: TVarBin(8), false: TNVar(14)}[x.Name == "%%physloc%%"]
	case *sqlfront.UnaryExpr:
		if x.Op == "NOT" {
			return TBit
		}
		return p.typeOf(x.E, rel)
	case *sqlfront.BinaryExpr:
		switch x.Op {
		case "AND", "OR", "=", "<>", "<", ">", "<=", ">=":
			return TBit
		}
		return ArithType(x.Op, p.typeOf(x.L, rel), p.typeOf(x.R, rel))
	case *sqlfront.IsNullExpr, *sqlfront.LikeExpr, *sqlfront.BetweenExpr, *sqlfront.InExpr, *sqlfront.ExistsExpr, *sqlfront.QuantifiedExpr:
		return TBit
	case *sqlfront.CaseExpr:
		var t sqlfront.SQLType
		for _, w := range x.Whens {
			t = WiderType(t, p.typeOf(w.Result, rel), w.Result)
		}
		if x.Else != nil {
			t = WiderType(t, p.typeOf(x.Else, rel), x.Else)
		}
		if t.Kind == 0 {
			return TInt
		}
		return t
	case *sqlfront.SubqueryExpr:
		if sub := p.subTypes[x.Sel]; sub != nil && len(sub.Cols) > 0 {
			return sub.Cols[0].Typ
		}
		return TInt
	case *sqlfront.WindowExpr:
		return p.windowType(x, rel)
	case *sqlfront.FuncCall:
		return p.funcType(x, rel)
	}
	return TNVar(4000)
}

func (p *Planner) windowType(w *sqlfront.WindowExpr, rel *Relation) sqlfront.SQLType {
	switch w.F.Name {
	case "ROW_NUMBER", "RANK", "DENSE_RANK", "NTILE", "COUNT_BIG":
		return TBigInt
	case "COUNT":
		return TInt
	case "PERCENT_RANK", "CUME_DIST":
		return TFloat
	case "LAG", "LEAD", "FIRST_VALUE", "LAST_VALUE", "MIN", "MAX":
		if len(w.F.Args) > 0 {
			return p.typeOf(w.F.Args[0], rel)
		}
	}
	return p.funcType(w.F, rel)
}

// funcType gives the result type of a built-in function.
func (p *Planner) funcType(f *sqlfront.FuncCall, rel *Relation) sqlfront.SQLType {
	arg := func(i int) sqlfront.SQLType {
		if i < len(f.Args) {
			return p.typeOf(f.Args[i], rel)
		}
		return TInt
	}
	switch strings.TrimPrefix(f.Name, "SYS.") {
	case "SERVERPROPERTY", "CONNECTIONPROPERTY", "SESSIONPROPERTY", "DATABASEPROPERTYEX":
		// sql_variant: typed as the value the constant argument gives
		if v, ok := p.constValue(f); ok {
			return TypeOfValue(v)
		}
		return TNVar(128)
	case "COUNT":
		return TInt
	case "COUNT_BIG":
		return TBigInt
	case "SUM":
		t := arg(0)
		switch t.Kind {
		case sqlfront.TypeTinyInt, sqlfront.TypeSmallInt, sqlfront.TypeInt, sqlfront.TypeBit:
			return TInt
		case sqlfront.TypeDecimal:
			return sqlfront.SQLType{Kind: sqlfront.TypeDecimal, Size: 38, Scale: t.Scale}
		}
		return t
	case "AVG":
		t := arg(0)
		switch t.Kind {
		case sqlfront.TypeTinyInt, sqlfront.TypeSmallInt, sqlfront.TypeInt, sqlfront.TypeBit:
			return TInt
		case sqlfront.TypeDecimal:
			return sqlfront.SQLType{Kind: sqlfront.TypeDecimal, Size: 38, Scale: max(t.Scale, 6)}
		}
		return t
	case "MIN", "MAX", "ISNULL", "ABS", "FIRST_VALUE", "LAST_VALUE", "LAG", "LEAD":
		return arg(0)
	case "CEILING", "FLOOR", "ROUND", "SIGN":
		t := arg(0)
		if t.Kind == sqlfront.TypeDecimal && f.Name != "ROUND" {
			return sqlfront.SQLType{Kind: sqlfront.TypeDecimal, Size: t.Size, Scale: 0}
		}
		return t
	case "DATETRUNC":
		return arg(1)
	case "COALESCE", "GREATEST", "LEAST":
		var t sqlfront.SQLType
		for _, a := range f.Args {
			t = WiderType(t, p.typeOf(a, rel), a)
		}
		if t.Kind == 0 {
			return TInt
		}
		return t
	case "NULLIF":
		return arg(0)
	case "CHOOSE":
		var t sqlfront.SQLType
		for _, a := range f.Args[min(1, len(f.Args)):] {
			t = WiderType(t, p.typeOf(a, rel), a)
		}
		return t
	case "STDEV", "STDEVP", "VAR", "VARP", "POWER", "SQRT", "LOG", "LOG10", "EXP", "PI", "RAND", "SQUARE", "SIN", "COS", "TAN", "ATAN", "DEGREES", "RADIANS":
		if f.Name == "POWER" {
			return arg(0)
		}
		return TFloat
	case "LEN", "CHARINDEX", "PATINDEX", "DATEDIFF", "DATEPART", "YEAR", "MONTH", "DAY", "DB_ID", "OBJECT_ID", "SCHEMA_ID",
		"HAS_PERMS_BY_NAME", "IS_SRVROLEMEMBER", "IS_MEMBER", "GROUPING_ID", "ISNUMERIC", "DATALENGTH", "ASCII", "UNICODE", "ISDATE", "CHECKSUM", "BINARY_CHECKSUM", "@@SPID":
		return TInt
	case "GROUPING":
		return TTinyInt
	case "DATEDIFF_BIG", "CURRENT_TRANSACTION_ID":
		return TBigInt
	case "GETDATE", "SYSDATETIME", "CURRENT_TIMESTAMP", "GETUTCDATE", "SYSUTCDATETIME", "DATETIMEFROMPARTS", "SMALLDATETIMEFROMPARTS", "DATETIME2FROMPARTS", "TODATETIMEOFFSET", "SWITCHOFFSET", "SYSDATETIMEOFFSET":
		return TDT2
	case "DATEADD":
		t := arg(2)
		if t.Kind == sqlfront.TypeNVarChar {
			return TDT2
		}
		return t
	case "EOMONTH", "DATEFROMPARTS":
		return TDate
	case "OBJECT_DEFINITION":
		return TNVar(0)
	case "DB_NAME", "OBJECT_NAME", "OBJECT_SCHEMA_NAME", "SCHEMA_NAME", "SUSER_NAME", "SUSER_SNAME", "USER_NAME", "QUOTENAME", "ORIGINAL_LOGIN", "SYSTEM_USER", "CURRENT_USER", "HOST_NAME", "APP_NAME":
		return TNVar(128)
	case "DATENAME":
		return TNVar(30)
	case "NEWID":
		return TGUID
	case "LEFT", "RIGHT", "SUBSTRING", "UPPER", "LOWER", "LTRIM", "RTRIM", "TRIM", "REVERSE", "REPLACE", "STUFF", "TRANSLATE":
		t := arg(0)
		if t.Kind != sqlfront.TypeNVarChar {
			return TNVar(4000)
		}
		return t
	case "REPLICATE", "SPACE", "CONCAT", "CONCAT_WS", "STRING_AGG", "FORMAT", "STR", "CHAR", "NCHAR", "FN_PHYSLOCFORMATTER", "FN_VARBINTOHEXSTR", "STRING_ESCAPE":
		if f.Name == "STRING_AGG" || f.Name == "REPLICATE" {
			t := arg(0)
			if t.Size == 0 || t.Kind != sqlfront.TypeNVarChar {
				return TNMax
			}
			return TNVar(4000)
		}
		return TNVar(4000)
	case "IIF":
		return WiderType(arg(1), arg(2), nil)
	}
	// a function this table does not type: with constant arguments, the
	// type of the value it gives
	if v, ok := p.constValue(f); ok {
		return TypeOfValue(v)
	}
	return TNVar(4000)
}

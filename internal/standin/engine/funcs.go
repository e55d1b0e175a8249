package engine

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"strings"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// scalarFunc evaluates a built-in scalar function. Unknown names are
// Msg 195, as in SQL Server.
func scalarFunc(h Host, name string, a []any) (any, *sqlfront.SQLError) {
	if v, ok, err := moreFunc(h, name, a); ok {
		return v, err
	}
	f := FuncArgs{name, a}
	families := []func(FuncArgs) (any, bool, *sqlfront.SQLError){
		h.ServerFunc, stringSliceFunc, stringSearchFunc, stringEditFunc, nullFunc, roundingFunc,
		func(f FuncArgs) (any, bool, *sqlfront.SQLError) { return systemFunc(h, f) },
	}
	for _, family := range families {
		if v, ok, err := family(f); ok {
			return v, err
		}
	}
	return nil, ErrNotBuiltin(strings.ToLower(name))
}

// Builtin is the function's name without the sys schema it may be
// written with (sys.fn_varbintohexstr).
func (f FuncArgs) Builtin() string { return strings.TrimPrefix(f.Name, "SYS.") }

// Str is argument i as a string.
func (f FuncArgs) Str(i int) string { return ValueString(f.A[i]) }

// stringSliceFunc evaluates the string functions that measure a string
// or cut out part of it.
func stringSliceFunc(f FuncArgs) (any, bool, *sqlfront.SQLError) {
	name, a, argc, str, anyNull := f.Name, f.A, f.Argc, f.Str, f.null
	switch f.Builtin() {
	case "LEFT", "RIGHT":
		if err := argc(2, 2); err != nil {
			return nil, true, err
		}
		if anyNull() {
			return nil, true, nil
		}
		s := []rune(str(0))
		n, _ := ConvertValue(a[1], TBigInt)
		k := int(n.(int64))
		if k < 0 {
			return nil, true, sqlfront.NewError(536, 16, "Invalid length parameter passed to the %s function.", strings.ToLower(name))
		}
		if k > len(s) {
			k = len(s)
		}
		if name == "LEFT" {
			return string(s[:k]), true, nil
		}
		return string(s[len(s)-k:]), true, nil
	case "LEN":
		if a[0] == nil {
			return nil, true, nil
		}
		return int64(len([]rune(strings.TrimRight(str(0), " ")))), true, nil
	case "DATALENGTH":
		switch v := a[0].(type) {
		case nil:
			return nil, true, nil
		case string:
			return int64(2 * len([]rune(v))), true, nil
		case []byte:
			return int64(len(v)), true, nil
		case int64:
			return int64(4), true, nil
		}
		return int64(8), true, nil
	case "SUBSTRING":
		if err := argc(3, 3); err != nil {
			return nil, true, err
		}
		if anyNull() {
			return nil, true, nil
		}
		r := []rune(str(0))
		st, _ := ConvertValue(a[1], TBigInt)
		ln, _ := ConvertValue(a[2], TBigInt)
		from := int(st.(int64)) - 1
		to := from + int(ln.(int64))
		if from < 0 {
			from = 0
		}
		if to > len(r) {
			to = len(r)
		}
		if from >= to {
			return "", true, nil
		}
		return string(r[from:to]), true, nil
	}
	return nil, false, nil
}

// stringSearchFunc evaluates the string functions that find a substring
// or pattern.
func stringSearchFunc(f FuncArgs) (any, bool, *sqlfront.SQLError) {
	a, argc, str, anyNull := f.A, f.Argc, f.Str, f.null
	switch f.Builtin() {
	case "CHARINDEX":
		if err := argc(2, 3); err != nil {
			return nil, true, err
		}
		if anyNull() {
			return nil, true, nil
		}
		hay := strings.ToUpper(str(1))
		start := 0
		if len(a) == 3 {
			n, _ := ConvertValue(a[2], TBigInt)
			start = int(n.(int64)) - 1
			if start < 0 {
				start = 0
			}
		}
		r := []rune(hay)
		if start > len(r) {
			return int64(0), true, nil
		}
		i := strings.Index(string(r[start:]), strings.ToUpper(str(0)))
		if i < 0 {
			return int64(0), true, nil
		}
		return int64(len([]rune(string(r[start:])[:i])) + start + 1), true, nil
	case "PATINDEX":
		if err := argc(2, 2); err != nil {
			return nil, true, err
		}
		if anyNull() {
			return nil, true, nil
		}
		pat := str(0)
		s := []rune(str(1))
		inner := strings.TrimSuffix(strings.TrimPrefix(pat, "%"), "%")
		for i := range s {
			for j := i + 1; j <= len(s); j++ {
				if LikeMatch(string(s[i:j]), inner) {
					return int64(i + 1), true, nil
				}
			}
		}
		return int64(0), true, nil
	}
	return nil, false, nil
}

// stringEditFunc evaluates the string functions that rewrite, trim,
// quote or join strings.
func stringEditFunc(f FuncArgs) (any, bool, *sqlfront.SQLError) {
	a, argc, str, anyNull := f.A, f.Argc, f.Str, f.null
	switch f.Builtin() {
	case "REVERSE":
		if a[0] == nil {
			return nil, true, nil
		}
		r := []rune(str(0))
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return string(r), true, nil
	case "REPLACE":
		if err := argc(3, 3); err != nil {
			return nil, true, err
		}
		if anyNull() {
			return nil, true, nil
		}
		return replaceCI(str(0), str(1), str(2)), true, nil
	case "UPPER":
		if a[0] == nil {
			return nil, true, nil
		}
		return strings.ToUpper(str(0)), true, nil
	case "LOWER":
		if a[0] == nil {
			return nil, true, nil
		}
		return strings.ToLower(str(0)), true, nil
	case "LTRIM":
		if a[0] == nil {
			return nil, true, nil
		}
		return strings.TrimLeft(str(0), " "), true, nil
	case "RTRIM":
		if a[0] == nil {
			return nil, true, nil
		}
		return strings.TrimRight(str(0), " "), true, nil
	case "TRIM":
		if a[0] == nil {
			return nil, true, nil
		}
		return strings.Trim(str(0), " "), true, nil
	case "QUOTENAME":
		if a[0] == nil {
			return nil, true, nil
		}
		q := "["
		if len(a) > 1 {
			q = str(1)
		}
		switch q {
		case "[", "]":
			return "[" + strings.ReplaceAll(str(0), "]", "]]") + "]", true, nil
		case "'":
			return "'" + strings.ReplaceAll(str(0), "'", "''") + "'", true, nil
		case `"`:
			return `"` + strings.ReplaceAll(str(0), `"`, `""`) + `"`, true, nil
		}
		return nil, true, nil
	case "CONCAT":
		var b strings.Builder
		for _, v := range a {
			b.WriteString(ValueString(v))
		}
		return b.String(), true, nil
	}
	return nil, false, nil
}

// nullFunc evaluates the NULL-handling functions.
func nullFunc(f FuncArgs) (any, bool, *sqlfront.SQLError) {
	a, argc := f.A, f.Argc
	switch f.Builtin() {
	case "ISNULL":
		if err := argc(2, 2); err != nil {
			return nil, true, err
		}
		if a[0] == nil {
			return a[1], true, nil
		}
		return a[0], true, nil
	case "COALESCE":
		for _, v := range a {
			if v != nil {
				return v, true, nil
			}
		}
		return nil, true, nil
	case "NULLIF":
		if err := argc(2, 2); err != nil {
			return nil, true, err
		}
		if a[0] != nil && a[1] != nil {
			if cmp, err := CompareValues(a[0], a[1]); err == nil && cmp == 0 {
				return nil, true, nil
			}
		}
		return a[0], true, nil
	}
	return nil, false, nil
}

// roundingFunc evaluates ABS and the rounding functions.
func roundingFunc(f FuncArgs) (any, bool, *sqlfront.SQLError) {
	name, a := f.Name, f.A
	switch f.Builtin() {
	case "ABS":
		switch v := a[0].(type) {
		case int64:
			if v < 0 {
				return -v, true, nil
			}
			return v, true, nil
		case float64:
			return math.Abs(v), true, nil
		}
		return nil, true, nil
	case "FLOOR", "CEILING", "ROUND":
		if name == "ROUND" && len(a) < 2 {
			return nil, true, sqlfront.NewError(174, 15, "The round function requires 2 to 3 arguments.")
		}
		if a[0] == nil {
			return nil, true, nil
		}
		digits := int64(0)
		if len(a) > 1 {
			if n, ok := a[1].(int64); ok {
				digits = n
			}
		}
		truncate := len(a) > 2 && a[2] != nil && toFloat(a[2]) != 0
		switch v := a[0].(type) {
		case int64:
			if name != "ROUND" || digits >= 0 {
				return v, true, nil
			}
			p := int64(math.Pow(10, float64(-digits)))
			if truncate {
				return v / p * p, true, nil
			}
			return int64(math.Round(float64(v)/float64(p))) * p, true, nil
		case float64:
			switch name {
			case "FLOOR":
				return math.Floor(v), true, nil
			case "CEILING":
				return math.Ceil(v), true, nil
			}
			p := math.Pow(10, float64(digits))
			if truncate {
				return math.Trunc(v*p) / p, true, nil
			}
			return math.Round(v*p) / p, true, nil
		}
		return a[0], true, nil
	}
	return nil, false, nil
}

// systemFunc evaluates the clock, NEWID and the undocumented page-locator
// and hex helpers.
func systemFunc(h Host, f FuncArgs) (any, bool, *sqlfront.SQLError) {
	a := f.A
	switch f.Builtin() {
	case "GETDATE", "SYSDATETIME", "CURRENT_TIMESTAMP", "GETUTCDATE", "SYSUTCDATETIME":
		return h.Now(), true, nil
	case "NEWID":
		var b [16]byte
		rand.Read(b[:])
		h := strings.ToUpper(hex.EncodeToString(b[:]))
		return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], true, nil
	case "FN_PHYSLOCFORMATTER":
		b, ok := a[0].([]byte)
		if !ok || len(b) != 8 {
			return nil, true, nil
		}
		page := int32(b[0]) | int32(b[1])<<8 | int32(b[2])<<16 | int32(b[3])<<24
		return fmt.Sprintf("(%d:%d:%d)", int(b[4])|int(b[5])<<8, page, int(b[6])|int(b[7])<<8), true, nil
	case "FN_VARBINTOHEXSTR":
		b, ok := a[0].([]byte)
		if !ok {
			return nil, true, nil
		}
		return "0x" + hex.EncodeToString(b), true, nil
	}
	return nil, false, nil
}

func replaceCI(s, old, repl string) string {
	if old == "" {
		return s
	}
	var b strings.Builder
	us, uo := strings.ToUpper(s), strings.ToUpper(old)
	for {
		i := strings.Index(us, uo)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteString(repl)
		s, us = s[i+len(old):], us[i+len(old):]
	}
}

package engine

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/standin/xevents"
)

// Date and time, string, math and conversion functions of everyday
// queries, as documented under
// https://learn.microsoft.com/en-us/sql/t-sql/functions/functions.
// SQL Server 2017's set: functions added later (GREATEST, LEAST,
// DATETRUNC, STRING_SPLIT's ordinal…) are Msg 195 here, as on 2017.

// lazyFunc evaluates the functions whose later arguments must not be
// evaluated when an earlier one decides (COALESCE, ISNULL, CHOOSE).
func (env *EvalEnv) lazyFunc(f *sqlfront.FuncCall) (func() (any, *sqlfront.SQLError), bool) {
	switch f.Name {
	case "COALESCE":
		return func() (any, *sqlfront.SQLError) {
			if len(f.Args) < 2 {
				return nil, sqlfront.NewError(189, 15, "The coalesce function requires 2 to 254 arguments.")
			}
			for _, a := range f.Args {
				v, err := env.Eval(a)
				if err != nil {
					return nil, err
				}
				if v != nil {
					return v, nil
				}
			}
			return nil, nil
		}, true
	case "CHOOSE":
		return func() (any, *sqlfront.SQLError) {
			if len(f.Args) < 2 {
				return nil, sqlfront.NewError(174, 15, "The choose function requires 2 argument(s).")
			}
			iv, err := env.Eval(f.Args[0])
			if err != nil || iv == nil {
				return nil, err
			}
			n, err := ConvertValue(iv, TBigInt)
			if err != nil {
				return nil, err
			}
			i := int(n.(int64))
			if i < 1 || i >= len(f.Args) {
				return nil, nil
			}
			return env.Eval(f.Args[i])
		}, true
	}
	return nil, false
}

// quantified evaluates x op ANY|ALL (subquery) outside a plan.
func (env *EvalEnv) quantified(q *sqlfront.QuantifiedExpr) (any, *sqlfront.SQLError) {
	v, err := env.Eval(q.E)
	if err != nil {
		return nil, err
	}
	rows, err := env.X.SubqueryRows(q.Sel, env, 0)
	if err != nil {
		return nil, err
	}
	sawNull := false
	for _, r := range rows {
		if v == nil || r[0] == nil {
			sawNull = true
			continue
		}
		c, err := CompareValues(v, r[0])
		if err != nil {
			return nil, err
		}
		hit := xevents.CmpOp(q.Op, c)
		if q.All && !hit {
			return false, nil
		}
		if !q.All && hit {
			return true, nil
		}
	}
	if sawNull {
		return nil, nil
	}
	return q.All, nil
}

// escapeLike rewrites a LIKE pattern with an ESCAPE character into one
// where the escaped characters are bracketed.
func escapeLike(pat, esc string) string {
	if esc == "" {
		return pat
	}
	e, _ := utf8.DecodeRuneInString(esc)
	var b strings.Builder
	rs := []rune(pat)
	for i := 0; i < len(rs); i++ {
		if rs[i] == e && i+1 < len(rs) {
			i++
			b.WriteString("[" + string(rs[i]) + "]")
			continue
		}
		b.WriteRune(rs[i])
	}
	return b.String()
}

// convertStyled is CAST/CONVERT with CONVERT's date style
// (https://learn.microsoft.com/en-us/sql/t-sql/functions/cast-and-convert-transact-sql).
func convertStyled(v any, to sqlfront.SQLType, style int64) (any, *sqlfront.SQLError) {
	if t, ok := v.(time.Time); ok && to.Kind == sqlfront.TypeNVarChar && style >= 0 {
		var s string
		switch style {
		case 1:
			s = t.Format("01/02/06")
		case 101:
			s = t.Format("01/02/2006")
		case 3:
			s = t.Format("02/01/06")
		case 103:
			s = t.Format("02/01/2006")
		case 104:
			s = t.Format("02.01.2006")
		case 112:
			s = t.Format("20060102")
		case 23:
			s = t.Format("2006-01-02")
		case 108, 8:
			s = t.Format("15:04:05")
		case 120, 20:
			s = t.Format("2006-01-02 15:04:05")
		case 121, 21:
			s = t.Format("2006-01-02 15:04:05.000")
		case 126, 127:
			s = t.Format("2006-01-02T15:04:05.000")
		default:
			s = ValueString(v)
		}
		return ConvertValue(s, to)
	}
	if style >= 0 && (to.Kind == sqlfront.TypeDateTime2 || to.Kind == sqlfront.TypeDate) {
		if str, ok := v.(string); ok {
			layouts := map[int64]string{101: "01/02/2006", 103: "02/01/2006", 112: "20060102", 23: "2006-01-02", 120: "2006-01-02 15:04:05", 104: "02.01.2006"}
			if l, ok := layouts[style]; ok {
				t, err := time.Parse(l, strings.TrimSpace(str))
				if err != nil {
					return nil, sqlfront.NewError(241, 16, "Conversion failed when converting date and/or time from character string.")
				}
				return ConvertValue(t, to)
			}
		}
	}
	return ConvertValue(v, to)
}

// datePart normalises a date part name and its abbreviations.
func datePart(s string) (string, bool) {
	switch strings.ToUpper(s) {
	case "YEAR", "YY", "YYYY":
		return "year", true
	case "QUARTER", "QQ", "Q":
		return "quarter", true
	case "MONTH", "MM", "M":
		return "month", true
	case "DAYOFYEAR", "DY", "Y":
		return "dayofyear", true
	case "DAY", "DD", "D":
		return "day", true
	case "WEEK", "WK", "WW":
		return "week", true
	case "WEEKDAY", "DW", "W":
		return "weekday", true
	case "HOUR", "HH":
		return "hour", true
	case "MINUTE", "MI", "N":
		return "minute", true
	case "SECOND", "SS", "S":
		return "second", true
	case "MILLISECOND", "MS":
		return "millisecond", true
	case "MICROSECOND", "MCS":
		return "microsecond", true
	case "NANOSECOND", "NS":
		return "nanosecond", true
	}
	return "", false
}

func toTime(v any) (time.Time, bool, *sqlfront.SQLError) {
	if v == nil {
		return time.Time{}, false, nil
	}
	t, err := ConvertValue(v, TDT2)
	if err != nil {
		return time.Time{}, false, err
	}
	return t.(time.Time), true, nil
}

func toInt(v any) (int64, bool, *sqlfront.SQLError) {
	if v == nil {
		return 0, false, nil
	}
	n, err := ConvertValue(v, TBigInt)
	if err != nil {
		return 0, false, err
	}
	return n.(int64), true, nil
}

func errDatePart(fn, part string) *sqlfront.SQLError { // Msg 155
	return sqlfront.NewError(155, 15, "'%s' is not a recognized %s option.", strings.ToLower(part), fn)
}

// dateAdd is DATEADD(part, n, date).
func dateAdd(part string, n int64, t time.Time) (time.Time, *sqlfront.SQLError) {
	var out time.Time
	switch part {
	case "year":
		out = t.AddDate(int(n), 0, 0)
	case "quarter":
		out = addMonths(t, 3*int(n))
	case "month":
		out = addMonths(t, int(n))
	case "dayofyear", "day", "weekday":
		out = t.AddDate(0, 0, int(n))
	case "week":
		out = t.AddDate(0, 0, 7*int(n))
	case "hour":
		out = t.Add(time.Duration(n) * time.Hour)
	case "minute":
		out = t.Add(time.Duration(n) * time.Minute)
	case "second":
		out = t.Add(time.Duration(n) * time.Second)
	case "millisecond":
		out = t.Add(time.Duration(n) * time.Millisecond)
	case "microsecond":
		out = t.Add(time.Duration(n) * time.Microsecond)
	case "nanosecond":
		out = t.Add(time.Duration(n))
	}
	if out.Year() < 1 || out.Year() > 9999 {
		return out, sqlfront.NewError(517, 16, "Adding a value to a 'datetime2' column caused an overflow.")
	}
	return out, nil
}

// addMonths adds months the way DATEADD does: the day is clamped to the
// end of the target month.
func addMonths(t time.Time, n int) time.Time {
	y, m, d := t.Date()
	first := time.Date(y, m, 1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location())
	target := first.AddDate(0, n, 0)
	last := target.AddDate(0, 1, -1).Day()
	if d > last {
		d = last
	}
	return time.Date(target.Year(), target.Month(), d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location())
}

// dateDiff is DATEDIFF(part, a, b): the number of part boundaries crossed.
func dateDiff(part string, a, b time.Time) int64 {
	switch part {
	case "year":
		return int64(b.Year() - a.Year())
	case "quarter":
		return int64((b.Year()*4 + (int(b.Month())-1)/3) - (a.Year()*4 + (int(a.Month())-1)/3))
	case "month":
		return int64((b.Year()*12 + int(b.Month())) - (a.Year()*12 + int(a.Month())))
	case "dayofyear", "day", "weekday":
		return daysSince(b) - daysSince(a)
	case "week":
		// weeks start on Sunday (SET DATEFIRST 7, us_english)
		return (daysSince(b)+int64(dayOffsetSunday)-mod7(daysSince(b)+int64(dayOffsetSunday)))/7 - (daysSince(a)+int64(dayOffsetSunday)-mod7(daysSince(a)+int64(dayOffsetSunday)))/7
	case "hour":
		return floorDiv(b.Unix(), 3600) - floorDiv(a.Unix(), 3600)
	case "minute":
		return floorDiv(b.Unix(), 60) - floorDiv(a.Unix(), 60)
	case "second":
		return b.Unix() - a.Unix()
	case "millisecond":
		return b.UnixMilli() - a.UnixMilli()
	case "microsecond":
		return b.UnixMicro() - a.UnixMicro()
	}
	return b.UnixNano() - a.UnixNano()
}

// 0001-01-01 was a Monday; adding 1 makes day 0 a Sunday-aligned count.
const dayOffsetSunday = 1

func mod7(n int64) int64 { return ((n % 7) + 7) % 7 }

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func daysSince(t time.Time) int64 {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
}

// datePartValue is DATEPART(part, t) (us_english: weeks start on Sunday).
func datePartValue(part string, t time.Time) int64 {
	switch part {
	case "year":
		return int64(t.Year())
	case "quarter":
		return int64((int(t.Month())-1)/3 + 1)
	case "month":
		return int64(t.Month())
	case "dayofyear":
		return int64(t.YearDay())
	case "day":
		return int64(t.Day())
	case "week":
		jan1 := time.Date(t.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
		return int64((t.YearDay()+int(jan1.Weekday())-1)/7 + 1)
	case "weekday":
		return int64(t.Weekday()) + 1
	case "hour":
		return int64(t.Hour())
	case "minute":
		return int64(t.Minute())
	case "second":
		return int64(t.Second())
	case "millisecond":
		return int64(t.Nanosecond() / 1e6)
	case "microsecond":
		return int64(t.Nanosecond() / 1e3)
	}
	return int64(t.Nanosecond())
}

// FuncArgs gives a function family the argument checks it shares.
type FuncArgs struct {
	Name string
	A    []any
}

func (f FuncArgs) Argc(lo, hi int) *sqlfront.SQLError {
	if len(f.A) < lo || len(f.A) > hi {
		return sqlfront.NewError(174, 15, "The %s function requires %d argument(s).", strings.ToLower(f.Name), lo)
	}
	return nil
}

func (f FuncArgs) null() bool {
	for _, v := range f.A {
		if v == nil {
			return true
		}
	}
	return false
}

// moreFunc evaluates the functions of this file; ok is false for a name
// it does not know.
func moreFunc(h Host, name string, a []any) (any, bool, *sqlfront.SQLError) {
	f := FuncArgs{name, a}
	if v, ok, err := dateFunc(h, f); ok {
		return v, true, err
	}
	if v, ok, err := stringFunc(f); ok {
		return v, true, err
	}
	return mathFunc(h, f)
}

// dateFunc evaluates the date and time functions.
func dateFunc(h Host, f FuncArgs) (any, bool, *sqlfront.SQLError) {
	name, a, argc, null := f.Name, f.A, f.Argc, f.null
	switch name {
	case "DATEADD":
		if err := argc(3, 3); err != nil {
			return nil, true, err
		}
		part, ok := datePart(ValueString(a[0]))
		if !ok {
			return nil, true, errDatePart("dateadd", ValueString(a[0]))
		}
		n, okN, err := toInt(a[1])
		if err != nil {
			return nil, true, err
		}
		t, okT, err := toTime(a[2])
		if err != nil || !okN || !okT {
			return nil, true, err
		}
		out, err := dateAdd(part, n, t)
		if d, isDate := a[2].(time.Time); isDate && d.Location() == DateLocation {
			out = time.Date(out.Year(), out.Month(), out.Day(), 0, 0, 0, 0, DateLocation)
		}
		return out, true, err
	case "DATEDIFF", "DATEDIFF_BIG":
		if err := argc(3, 3); err != nil {
			return nil, true, err
		}
		part, ok := datePart(ValueString(a[0]))
		if !ok {
			return nil, true, errDatePart(strings.ToLower(name), ValueString(a[0]))
		}
		t1, ok1, err := toTime(a[1])
		if err != nil {
			return nil, true, err
		}
		t2, ok2, err := toTime(a[2])
		if err != nil || !ok1 || !ok2 {
			return nil, true, err
		}
		d := dateDiff(part, t1, t2)
		if name == "DATEDIFF" && (d > math.MaxInt32 || d < math.MinInt32) {
			return nil, true, sqlfront.NewError(535, 16, "The datediff function resulted in an overflow. The number of dateparts separating two date/time instances is too large. Try to use datediff with a less precise datepart.")
		}
		return d, true, nil
	case "DATEPART", "DATENAME":
		if err := argc(2, 2); err != nil {
			return nil, true, err
		}
		part, ok := datePart(ValueString(a[0]))
		if !ok {
			return nil, true, errDatePart(strings.ToLower(name), ValueString(a[0]))
		}
		t, okT, err := toTime(a[1])
		if err != nil || !okT {
			return nil, true, err
		}
		if name == "DATENAME" {
			switch part {
			case "month":
				return t.Month().String(), true, nil
			case "weekday":
				return t.Weekday().String(), true, nil
			}
			return ValueString(datePartValue(part, t)), true, nil
		}
		return datePartValue(part, t), true, nil
	case "YEAR", "MONTH", "DAY":
		if err := argc(1, 1); err != nil {
			return nil, true, err
		}
		t, ok, err := toTime(a[0])
		if err != nil || !ok {
			return nil, true, err
		}
		return datePartValue(strings.ToLower(name), t), true, nil
	case "EOMONTH":
		if err := argc(1, 2); err != nil {
			return nil, true, err
		}
		t, ok, err := toTime(a[0])
		if err != nil || !ok {
			return nil, true, err
		}
		if len(a) == 2 {
			n, ok, err := toInt(a[1])
			if err != nil || !ok {
				return nil, true, err
			}
			t = addMonths(time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC), int(n))
		}
		end := time.Date(t.Year(), t.Month()+1, 0, 0, 0, 0, 0, DateLocation)
		return end, true, nil
	case "DATEFROMPARTS":
		if err := argc(3, 3); err != nil {
			return nil, true, err
		}
		if null() {
			return nil, true, nil
		}
		y, _, _ := toInt(a[0])
		m, _, _ := toInt(a[1])
		d, _, _ := toInt(a[2])
		t := time.Date(int(y), time.Month(m), int(d), 0, 0, 0, 0, DateLocation)
		if t.Year() != int(y) || int64(t.Month()) != m || int64(t.Day()) != d || y < 1 || y > 9999 {
			return nil, true, sqlfront.NewError(289, 16, "Cannot construct data type date, some of the arguments have values which are not valid.")
		}
		return t, true, nil
	case "DATETIMEFROMPARTS", "DATETIME2FROMPARTS":
		if len(a) < 7 {
			return nil, true, sqlfront.NewError(174, 15, "The %s function requires 7 argument(s).", strings.ToLower(name))
		}
		if null() {
			return nil, true, nil
		}
		var p [7]int64
		for i := range p {
			p[i], _, _ = toInt(a[i])
		}
		return time.Date(int(p[0]), time.Month(p[1]), int(p[2]), int(p[3]), int(p[4]), int(p[5]), int(p[6])*1e6, time.UTC), true, nil
	case "SYSDATETIMEOFFSET":
		return h.Now(), true, nil
	case "ISDATE":
		if err := argc(1, 1); err != nil {
			return nil, true, err
		}
		_, err := ParseDateTime(ValueString(a[0]))
		return BoolInt(err == nil && a[0] != nil), true, nil
	case "DATETRUNC":
		if !h.SQL2022Functions() {
			return nil, true, ErrNotBuiltin("datetrunc")
		}
		if err := argc(2, 2); err != nil {
			return nil, true, err
		}
		part, ok := datePart(ValueString(a[0]))
		if !ok {
			return nil, true, errDatePart("datetrunc", ValueString(a[0]))
		}
		t, okT, err := toTime(a[1])
		if err != nil || !okT {
			return nil, true, err
		}
		return dateTrunc(part, t), true, nil
	}
	return nil, false, nil
}

// stringFunc evaluates the string functions.
func stringFunc(f FuncArgs) (any, bool, *sqlfront.SQLError) {
	name, a, argc, null := f.Name, f.A, f.Argc, f.null
	switch name {
	case "ISNUMERIC":
		if err := argc(1, 1); err != nil {
			return nil, true, err
		}
		if a[0] == nil {
			return int64(0), true, nil
		}
		_, err := strconv.ParseFloat(strings.TrimSpace(ValueString(a[0])), 64)
		return BoolInt(err == nil), true, nil
	case "CONCAT_WS":
		if len(a) < 3 {
			return nil, true, sqlfront.NewError(189, 15, "The concat_ws function requires 3 to 254 arguments.")
		}
		var parts []string
		for _, v := range a[1:] {
			if v != nil {
				parts = append(parts, ValueString(v))
			}
		}
		return strings.Join(parts, ValueString(a[0])), true, nil
	case "REPLICATE":
		if err := argc(2, 2); err != nil {
			return nil, true, err
		}
		if null() {
			return nil, true, nil
		}
		n, _, _ := toInt(a[1])
		if n < 0 {
			return nil, true, nil
		}
		return strings.Repeat(ValueString(a[0]), int(min(n, 8000))), true, nil
	case "SPACE":
		n, ok, err := toInt(a[0])
		if err != nil || !ok || n < 0 {
			return nil, true, err
		}
		return strings.Repeat(" ", int(min(n, 8000))), true, nil
	case "STUFF":
		if err := argc(4, 4); err != nil {
			return nil, true, err
		}
		if a[0] == nil || a[1] == nil || a[2] == nil {
			return nil, true, nil
		}
		r := []rune(ValueString(a[0]))
		st, _, _ := toInt(a[1])
		ln, _, _ := toInt(a[2])
		if st < 1 || int(st) > len(r) || ln < 0 {
			return nil, true, nil
		}
		end := min(int(st-1+ln), len(r))
		return string(r[:st-1]) + ValueString(a[3]) + string(r[end:]), true, nil
	case "TRANSLATE":
		if err := argc(3, 3); err != nil {
			return nil, true, err
		}
		if null() {
			return nil, true, nil
		}
		from, to := []rune(ValueString(a[1])), []rune(ValueString(a[2]))
		if len(from) != len(to) {
			return nil, true, sqlfront.NewError(9828, 16, "The second and third arguments of the TRANSLATE built-in function must contain an equal number of characters.")
		}
		out := []rune(ValueString(a[0]))
		for i, c := range out {
			for j, f := range from {
				if c == f {
					out[i] = to[j]
				}
			}
		}
		return string(out), true, nil
	case "ASCII", "UNICODE":
		if a[0] == nil || ValueString(a[0]) == "" {
			return nil, true, nil
		}
		r, _ := utf8.DecodeRuneInString(ValueString(a[0]))
		return int64(r), true, nil
	case "CHAR", "NCHAR":
		n, ok, err := toInt(a[0])
		if err != nil || !ok {
			return nil, true, err
		}
		return string(rune(n)), true, nil
	case "STR":
		if a[0] == nil {
			return nil, true, nil
		}
		f := toFloat(a[0])
		length, dec := int64(10), int64(0)
		if len(a) > 1 {
			length, _, _ = toInt(a[1])
		}
		if len(a) > 2 {
			dec, _, _ = toInt(a[2])
		}
		s := strconv.FormatFloat(f, 'f', int(dec), 64)
		if int64(len(s)) > length {
			return strings.Repeat("*", int(length)), true, nil
		}
		return strings.Repeat(" ", int(length)-len(s)) + s, true, nil
	case "FORMAT":
		if err := argc(2, 3); err != nil {
			return nil, true, err
		}
		if a[0] == nil || a[1] == nil {
			return nil, true, nil
		}
		return formatValue(a[0], ValueString(a[1])), true, nil
	}
	return nil, false, nil
}

// mathFunc evaluates the math functions and the ones later versions added.
func mathFunc(h Host, f FuncArgs) (any, bool, *sqlfront.SQLError) {
	name, a, argc, null := f.Name, f.A, f.Argc, f.null
	switch name {
	case "POWER":
		if err := argc(2, 2); err != nil {
			return nil, true, err
		}
		if null() {
			return nil, true, nil
		}
		r := math.Pow(toFloat(a[0]), toFloat(a[1]))
		if _, isInt := a[0].(int64); isInt {
			return int64(r), true, nil
		}
		return r, true, nil
	case "SQRT", "LOG", "LOG10", "EXP", "SQUARE", "SIN", "COS", "TAN", "ATAN", "DEGREES", "RADIANS":
		if a[0] == nil {
			return nil, true, nil
		}
		f := toFloat(a[0])
		fn := map[string]func(float64) float64{"SQRT": math.Sqrt, "LOG": math.Log, "LOG10": math.Log10, "EXP": math.Exp,
			"SQUARE": func(v float64) float64 { return v * v }, "SIN": math.Sin, "COS": math.Cos, "TAN": math.Tan, "ATAN": math.Atan,
			"DEGREES": func(v float64) float64 { return v * 180 / math.Pi }, "RADIANS": func(v float64) float64 { return v * math.Pi / 180 }}[name]
		if (name == "SQRT" && f < 0) || (name == "LOG" || name == "LOG10") && f <= 0 {
			return nil, true, sqlfront.NewError(3623, 16, "An invalid floating point operation occurred.")
		}
		return fn(f), true, nil
	case "PI":
		return math.Pi, true, nil
	case "SIGN":
		switch v := a[0].(type) {
		case int64:
			return int64(sign(float64(v))), true, nil
		case float64:
			return sign(v), true, nil
		}
		return nil, true, nil
	case "GREATEST", "LEAST":
		if !h.SQL2022Functions() {
			return nil, true, ErrNotBuiltin(strings.ToLower(name))
		}
		// https://learn.microsoft.com/en-us/sql/t-sql/functions/logical-functions-greatest-transact-sql
		var best any
		for _, v := range a {
			if v == nil {
				continue
			}
			if best == nil {
				best = v
				continue
			}
			c, err := CompareValues(v, best)
			if err != nil {
				return nil, true, err
			}
			if name == "GREATEST" && c > 0 || name == "LEAST" && c < 0 {
				best = v
			}
		}
		return best, true, nil
	case "DATE_BUCKET", "GENERATE_SERIES", "APPROX_COUNT_DISTINCT":
		return nil, true, ErrNotBuiltin(strings.ToLower(name))
	}
	return nil, false, nil
}

func sign(f float64) float64 {
	switch {
	case f > 0:
		return 1
	case f < 0:
		return -1
	}
	return 0
}

// formatValue implements the common .NET format strings FORMAT takes:
// date patterns (yyyy, MM, MMM, MMMM, dd, ddd, dddd, HH, mm, ss) and
// numeric ones (N0…N9, C, P, #,##0.00, 0.00, D5, X).
func formatValue(v any, f string) string {
	if t, ok := v.(time.Time); ok {
		switch f {
		case "d":
			return t.Format("1/2/2006")
		case "D":
			return t.Format("Monday, January 2, 2006")
		}
		repl := []struct{ from, to string }{
			{"yyyy", "2006"}, {"yy", "06"}, {"MMMM", "January"}, {"MMM", "Jan"}, {"MM", "01"},
			{"dddd", "Monday"}, {"ddd", "Mon"}, {"dd", "02"}, {"HH", "15"}, {"hh", "03"}, {"mm", "04"}, {"ss", "05"}, {"tt", "PM"},
		}
		var b strings.Builder
		for i := 0; i < len(f); {
			matched := false
			for _, r := range repl {
				if strings.HasPrefix(f[i:], r.from) {
					b.WriteString(t.Format(r.to))
					i += len(r.from)
					matched = true
					break
				}
			}
			if !matched {
				switch f[i] {
				case 'M':
					b.WriteString(strconv.Itoa(int(t.Month())))
				case 'd':
					b.WriteString(strconv.Itoa(t.Day()))
				default:
					b.WriteByte(f[i])
				}
				i++
			}
		}
		return b.String()
	}
	n := toFloat(v)
	upper := strings.ToUpper(f)
	switch {
	case len(upper) >= 1 && (upper[0] == 'N' || upper[0] == 'C' || upper[0] == 'P' || upper[0] == 'F'):
		dec := 2
		if len(f) > 1 {
			dec, _ = strconv.Atoi(f[1:])
		}
		if upper[0] == 'P' {
			n *= 100
		}
		s := strconv.FormatFloat(n, 'f', dec, 64)
		if upper[0] != 'F' {
			s = groupThousands(s)
		}
		switch upper[0] {
		case 'C':
			return "$" + s
		case 'P':
			return s + " %"
		}
		return s
	case len(upper) >= 1 && upper[0] == 'D':
		w, _ := strconv.Atoi(f[1:])
		return fmt.Sprintf("%0*d", w, int64(n))
	case upper == "X":
		return fmt.Sprintf("%X", int64(n))
	}
	dec := 0
	if i := strings.IndexByte(f, '.'); i >= 0 {
		dec = len(f) - i - 1
	}
	s := strconv.FormatFloat(n, 'f', dec, 64)
	if strings.Contains(f, ",") {
		s = groupThousands(s)
	}
	return s
}

func groupThousands(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac := s, ""
	if i := strings.IndexByte(s, '.'); i >= 0 {
		intPart, frac = s[:i], s[i:]
	}
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	out := b.String() + frac
	if neg {
		return "-" + out
	}
	return out
}

// dateTrunc is DATETRUNC(part, t).
func dateTrunc(part string, t time.Time) time.Time {
	y, m, d := t.Date()
	switch part {
	case "year":
		return time.Date(y, 1, 1, 0, 0, 0, 0, t.Location())
	case "quarter":
		return time.Date(y, time.Month((int(m)-1)/3*3+1), 1, 0, 0, 0, 0, t.Location())
	case "month":
		return time.Date(y, m, 1, 0, 0, 0, 0, t.Location())
	case "week":
		day := time.Date(y, m, d, 0, 0, 0, 0, t.Location())
		return day.AddDate(0, 0, -int(day.Weekday()))
	case "day", "dayofyear", "weekday":
		return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
	case "hour":
		return t.Truncate(time.Hour)
	case "minute":
		return t.Truncate(time.Minute)
	case "second":
		return t.Truncate(time.Second)
	case "millisecond":
		return t.Truncate(time.Millisecond)
	}
	return t.Truncate(time.Microsecond)
}

package sqlconn

import (
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// MaxParams bounds the parameters of one statement (SQL Server allows
// 2,100 per procedure or batch:
// https://learn.microsoft.com/en-us/sql/sql-server/maximum-capacity-specifications-for-sql-server).
const MaxParams = 2100

// Params are a parameterized statement's declarations and the values its
// cached plan was compiled for. A replay passes them to sp_executesql as
// data — Decl as its @params argument, Values positionally — so neither is
// ever spliced into SQL text.
type Params struct {
	// Decl is the declaration list as sp_executesql's @params takes it:
	// "@P1 int, @P2 nvarchar(4000)".
	Decl string
	List []Param
}

// Param is one declared parameter.
type Param struct {
	Name string // @P1
	Type string // int, nvarchar(4000), decimal(10, 2)
	// Compiled is ParameterCompiledValue as the plan writes it: (42),
	// N'abc', NULL, 0x0A.
	Compiled string
	// Value is Compiled as a driver value: nil for NULL, []byte for a
	// binary literal, else the literal's text as a string, which SQL
	// Server converts to Type when sp_executesql binds it.
	Value any
}

// Values returns the parameters' values in declaration order.
func (p *Params) Values() []any {
	out := make([]any, len(p.List))
	for i, x := range p.List {
		out[i] = x.Value
	}
	return out
}

var (
	paramName = regexp.MustCompile(`^@[\p{L}_#@$][\p{L}\p{N}_#@$]{0,127}$`)
	// paramType: a type name, optionally schema-qualified, with an optional
	// (n), (max) or (p, s); the words VARYING/OUTPUT/READONLY may follow.
	paramType = regexp.MustCompile(`(?i)^(?:\[?[a-z_][a-z0-9_]*\]?\.)?\[?[a-z_][a-z0-9_ ]*?\]?(?:\s*\(\s*(?:max|[0-9]{1,10})(?:\s*,\s*[0-9]{1,10})?\s*\))?(?:\s+(?:output|out|readonly))?$`)
)

// SplitDeclarations splits a parameterized batch as the plan cache and
// Query Store hold it — "(@P1 int,@P2 nvarchar(4000))SELECT …" — into its
// declaration list and the statement. A text that does not start with a
// well-formed declaration list is all statement (decl "").
func SplitDeclarations(text string) (decl, body string) {
	t := strings.TrimLeft(text, " \t\r\n")
	if !strings.HasPrefix(t, "(@") {
		return "", text
	}
	depth := 0
	for i, r := range t {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				d := t[1:i]
				if _, err := ParseDeclarations(d); err != nil {
					return "", text
				}
				return d, t[i+1:]
			}
		case '\'', '"', '[':
			if depth > 1 {
				continue
			}
			if r != '[' {
				return "", text // declarations hold no strings
			}
		}
	}
	return "", text
}

// ParseDeclarations reads a declaration list: parameters separated by
// commas outside parentheses, each a name and a type.
func ParseDeclarations(decl string) ([]Param, error) {
	var out []Param
	depth, from := 0, 0
	flush := func(part string) error {
		part = strings.TrimSpace(part)
		name, typ, ok := strings.Cut(part, " ")
		if !ok {
			name, typ, ok = strings.Cut(part, "\t")
		}
		typ = strings.TrimSpace(typ)
		if !ok || !paramName.MatchString(name) || !paramType.MatchString(typ) {
			return fmt.Errorf("parameter declaration %q is not a name and a type", part)
		}
		if len(out) >= MaxParams {
			return fmt.Errorf("more than %d parameters", MaxParams)
		}
		out = append(out, Param{Name: name, Type: typ})
		return nil
	}
	for i, r := range decl {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return nil, errors.New("unbalanced parentheses in the parameter declarations")
			}
		case ',':
			if depth == 0 {
				if err := flush(decl[from:i]); err != nil {
					return nil, err
				}
				from = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, errors.New("unbalanced parentheses in the parameter declarations")
	}
	if err := flush(decl[from:]); err != nil {
		return nil, err
	}
	return out, nil
}

// paramsOf pairs the declarations with the compiled values of the plan.
func paramsOf(decl, planXML string) (*Params, error) {
	list, err := ParseDeclarations(decl)
	if err != nil {
		return nil, err
	}
	compiled, err := CompiledValues(strings.NewReader(planXML))
	if err != nil {
		return nil, err
	}
	for i := range list {
		v, ok := compiled[strings.ToLower(list[i].Name)]
		if !ok {
			return nil, fmt.Errorf("the cached plan has no compiled value for parameter %s", list[i].Name)
		}
		list[i].Compiled = v
		if list[i].Value, err = LiteralValue(v); err != nil {
			return nil, fmt.Errorf("parameter %s: %w", list[i].Name, err)
		}
	}
	return &Params{Decl: decl, List: list}, nil
}

// CompiledValues reads a showplan's ParameterList: each ColumnReference's
// Column (the parameter name, lower-cased: T-SQL names are matched without
// case under the usual collations) and its ParameterCompiledValue, the
// value the plan was compiled (sniffed) for
// (https://learn.microsoft.com/en-us/sql/relational-databases/performance/display-an-actual-execution-plan,
// the showplan schema: http://schemas.microsoft.com/sqlserver/2004/07/showplan/).
// It reads at most MaxPlanBytes.
func CompiledValues(plan io.Reader) (map[string]string, error) {
	lr := &io.LimitedReader{R: plan, N: MaxPlanBytes + 1}
	d := xml.NewDecoder(lr)
	out := map[string]string{}
	inList := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if lr.N <= 0 {
				return nil, fmt.Errorf("the plan is larger than %d bytes", MaxPlanBytes)
			}
			return nil, fmt.Errorf("read the plan's parameters: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local == "ParameterList" {
				inList++
			} else if t.Name.Local == "ColumnReference" && inList > 0 {
				var col, val string
				has := false
				for _, a := range t.Attr {
					switch a.Name.Local {
					case "Column":
						col = a.Value
					case "ParameterCompiledValue":
						val, has = a.Value, true
					}
				}
				if has && len(out) < MaxParams {
					out[strings.ToLower(col)] = val
				}
			}
		case xml.EndElement:
			if t.Name.Local == "ParameterList" && inList > 0 {
				inList--
			}
		}
	}
	if lr.N <= 0 {
		return nil, fmt.Errorf("the plan is larger than %d bytes", MaxPlanBytes)
	}
	return out, nil
}

// LiteralValue turns a literal as a plan writes it into a driver value:
// NULL → nil; 'text' or N'text' (” is one ') → string; 0x… → []byte;
// a number, in the parentheses the plan puts around it → its text.
func LiteralValue(lit string) (any, error) {
	s := strings.TrimSpace(lit)
	for len(s) >= 2 && s[0] == '(' && s[len(s)-1] == ')' {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	switch {
	case strings.EqualFold(s, "NULL"):
		return nil, nil
	case strings.HasPrefix(s, "N'") || strings.HasPrefix(s, "n'"):
		return quoted(s[1:])
	case strings.HasPrefix(s, "'"):
		return quoted(s)
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		h := s[2:]
		if len(h)%2 == 1 {
			h = "0" + h
		}
		b, err := hex.DecodeString(h)
		if err != nil {
			return nil, fmt.Errorf("binary literal %q: %w", lit, err)
		}
		return b, nil
	case numeric.MatchString(s):
		return s, nil
	}
	return nil, fmt.Errorf("compiled value %q is not a literal", lit)
}

var numeric = regexp.MustCompile(`^[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$`)

// quoted reads '…' with ” for '.
func quoted(s string) (string, error) {
	if len(s) < 2 || s[0] != '\'' || s[len(s)-1] != '\'' {
		return "", fmt.Errorf("string literal %q is not closed", s)
	}
	inner := s[1 : len(s)-1]
	if strings.Count(inner, "'")%2 != 0 || strings.Contains(strings.ReplaceAll(inner, "''", ""), "'") {
		return "", fmt.Errorf("string literal %q has a lone quote", s)
	}
	return strings.ReplaceAll(inner, "''", "'"), nil
}

package sqlfront

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Parsing of CREATE/ALTER/DROP EVENT SESSION, following the grammar in
// https://learn.microsoft.com/en-us/sql/t-sql/statements/create-event-session-transact-sql
// https://learn.microsoft.com/en-us/sql/t-sql/statements/alter-event-session-transact-sql
// https://learn.microsoft.com/en-us/sql/t-sql/statements/drop-event-session-transact-sql

// sessionHeader reads "<VERB> EVENT SESSION name ON SERVER|DATABASE".
func (p *parser) sessionHeader() (string, bool, *SQLError) {
	p.i++ // CREATE / ALTER / DROP
	if err := p.expect("EVENT"); err != nil {
		return "", false, err
	}
	if err := p.expect("SESSION"); err != nil {
		return "", false, err
	}
	name, err := p.ident()
	if err != nil {
		return "", false, err
	}
	if err := p.expect("ON"); err != nil {
		return "", false, err
	}
	switch {
	case p.accept("SERVER"):
		return name, false, nil
	case p.accept("DATABASE"):
		return name, true, nil
	}
	return "", false, p.fail()
}

// xeObjectName reads [module_guid.]package.object.
func (p *parser) xeObjectName() (XEName, *SQLError) {
	parts, err := p.multiName()
	if err != nil {
		return XEName{}, err
	}
	switch len(parts) {
	case 2:
		return XEName{Package: parts[0], Name: parts[1]}, nil
	case 3:
		return XEName{Package: parts[1], Name: parts[2]}, nil
	}
	// A bare event name is legal T-SQL (the engine searches every package);
	// keep the package empty and let the catalogue resolve it.
	if len(parts) == 1 {
		return XEName{Name: parts[0]}, nil
	}
	return XEName{}, p.fail()
}

// xeValue reads number | 'string' | (number) | (N'string').
func (p *parser) xeValue() (any, *SQLError) {
	if p.acceptOp("(") {
		v, err := p.xeValue()
		if err != nil {
			return nil, err
		}
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
		return v, nil
	}
	neg := p.acceptOp("-")
	t := p.next()
	switch t.kind {
	case tokNumber:
		n, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return nil, ErrSyntaxNear(t.text)
		}
		if neg {
			n = -n
		}
		return n, nil
	case tokString:
		if neg {
			break
		}
		return t.text, nil
	case tokIdent:
		// true/false/ON/OFF are accepted by the engine for boolean attributes
		switch t.kw() {
		case "TRUE", "ON":
			return int64(1), nil
		case "FALSE", "OFF":
			return int64(0), nil
		}
	}
	p.i--
	return nil, p.fail()
}

func (p *parser) xeSettings() ([]XESetting, *SQLError) {
	var out []XESetting
	for {
		name, err := p.ident()
		if err != nil {
			return nil, err
		}
		if err := p.expectOp("="); err != nil {
			return nil, err
		}
		v, err := p.xeValue()
		if err != nil {
			return nil, err
		}
		out = append(out, XESetting{Name: strings.ToLower(name), Value: v})
		// settings may be separated by commas; a following SET is also legal
		if p.acceptOp(",") {
			if p.accept("SET") {
				continue
			}
			if p.peek().kind == tokIdent && p.peekAt(1).isOp("=") || p.peek().kind == tokQuoted {
				continue
			}
			p.i-- // the comma belongs to the caller
			return out, nil
		}
		if p.accept("SET") {
			continue
		}
		return out, nil
	}
}

func (p *parser) addEvent() (XEEventSpec, *SQLError) {
	name, err := p.xeObjectName()
	if err != nil {
		return XEEventSpec{}, err
	}
	ev := XEEventSpec{Package: name.Package, Name: name.Name}
	if !p.acceptOp("(") {
		return ev, nil
	}
	for !p.peek().isOp(")") {
		switch {
		case p.accept("SET"):
			s, err := p.xeSettings()
			if err != nil {
				return ev, err
			}
			ev.Settings = append(ev.Settings, s...)
		case p.accept("ACTION"):
			if err := p.expectOp("("); err != nil {
				return ev, err
			}
			for {
				a, err := p.xeObjectName()
				if err != nil {
					return ev, err
				}
				ev.Actions = append(ev.Actions, a)
				if !p.acceptOp(",") {
					break
				}
			}
			if err := p.expectOp(")"); err != nil {
				return ev, err
			}
		case p.accept("WHERE"):
			start := p.peek().pos
			pred, err := p.xePredicate()
			if err != nil {
				return ev, err
			}
			ev.Predicate = pred
			ev.PredicateText = p.sourceBetween(start, p.peek().pos)
			ev.PredicateChars = p.charsBetween(start, p.peek().pos)
		default:
			return ev, p.fail()
		}
		p.acceptOp(",")
	}
	p.i++
	return ev, nil
}

// sourceBetween rebuilds the source text of a token range for the catalog's
// predicate column.
func (p *parser) sourceBetween(start, end int) string {
	var parts []string
	for _, t := range p.toks {
		if t.pos >= start && t.pos < end && t.kind != tokEOF {
			parts = append(parts, t.raw)
		}
	}
	return strings.Join(parts, " ")
}

// charsBetween is the length in characters of the source from the token at
// start to the end of the last token before end, as written (whitespace
// between tokens counted byte for byte).
func (p *parser) charsBetween(start, end int) int {
	n, prevEnd := 0, -1
	for _, t := range p.toks {
		if t.pos < start || t.pos >= end || t.kind == tokEOF {
			continue
		}
		if prevEnd >= 0 {
			n += t.pos - prevEnd
		}
		n += utf8.RuneCountInString(t.raw)
		prevEnd = t.pos + len(t.raw)
	}
	return n
}

func (p *parser) addTarget() (XETargetSpec, *SQLError) {
	name, err := p.xeObjectName()
	if err != nil {
		return XETargetSpec{}, err
	}
	t := XETargetSpec{Package: name.Package, Name: name.Name}
	if p.acceptOp("(") {
		if err := p.expect("SET"); err != nil {
			return t, err
		}
		s, err := p.xeSettings()
		if err != nil {
			return t, err
		}
		t.Settings = s
		if err := p.expectOp(")"); err != nil {
			return t, err
		}
	}
	return t, nil
}

// xePredicate parses the WHERE of an ADD EVENT: AND/OR/NOT over leaves.
func (p *parser) xePredicate() (XEPred, *SQLError) {
	l, err := p.xePredAnd()
	if err != nil {
		return nil, err
	}
	for p.accept("OR") {
		r, err := p.xePredAnd()
		if err != nil {
			return nil, err
		}
		l = &XEPredOr{L: l, R: r}
	}
	return l, nil
}

func (p *parser) xePredAnd() (XEPred, *SQLError) {
	l, err := p.xePredFactor()
	if err != nil {
		return nil, err
	}
	for p.accept("AND") {
		r, err := p.xePredFactor()
		if err != nil {
			return nil, err
		}
		l = &XEPredAnd{L: l, R: r}
	}
	return l, nil
}

func (p *parser) xePredFactor() (XEPred, *SQLError) {
	if p.accept("NOT") {
		f, err := p.xePredFactor()
		if err != nil {
			return nil, err
		}
		return &XEPredNot{P: f}, nil
	}
	if p.acceptOp("(") {
		e, err := p.xePredicate()
		if err != nil {
			return nil, err
		}
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
		return e, nil
	}
	name, err := p.multiName()
	if err != nil {
		return nil, err
	}
	// package.compare_name(source, value)
	if p.acceptOp("(") {
		cmp := strings.ToLower(strings.Join(name, "."))
		src, err := p.multiName()
		if err != nil {
			return nil, err
		}
		if err := p.expectOp(","); err != nil {
			return nil, err
		}
		v, err := p.xeValue()
		if err != nil {
			return nil, err
		}
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
		op, ok := comparatorOp(cmp)
		if !ok {
			return nil, ErrXEObjectInvalid("predicate comparator", cmp)
		}
		return &XEPredLeaf{Source: predSource(src), Op: op, Value: v, Comparator: cmp}, nil
	}
	leaf := &XEPredLeaf{Source: predSource(name)}
	t := p.peek()
	switch {
	case t.kind == tokOp && (t.text == "=" || t.text == "<>" || t.text == "!=" || t.text == "<" || t.text == ">" || t.text == "<=" || t.text == ">="):
		p.i++
		leaf.Op = t.text
		if leaf.Op == "!=" {
			leaf.Op = "<>"
		}
	case t.is("LIKE"):
		p.i++
		leaf.Op = "LIKE"
	case t.is("NOT") && p.peekAt(1).is("LIKE"):
		// Accepted on purpose: the CREATE EVENT SESSION page documents
		// only the comparator functions, but real servers compile infix
		// NOT LIKE (microsoft/SqlScriptDOM issue 153,
		// https://github.com/microsoft/SqlScriptDOM/issues/153). Pinned by
		// TestXENotLikePredicateAccepted; docs/standin.md §4.
		p.i += 2
		leaf.Op = "NOT LIKE"
	default:
		if t.kind == tokOp {
			return nil, errXEPredicateOperator()
		}
		return nil, p.fail()
	}
	v, err := p.xeValue()
	if err != nil {
		return nil, err
	}
	leaf.Value = v
	return leaf, nil
}

// comparatorOps maps package0 predicate comparators to operators.
var comparatorOps = map[string]string{
	"equal_uint64": "=", "not_equal_uint64": "<>", "greater_than_uint64": ">", "less_than_uint64": "<",
	"greater_than_equal_uint64": ">=", "less_than_equal_uint64": "<=",
	"equal_int64": "=", "not_equal_int64": "<>", "greater_than_int64": ">", "less_than_int64": "<",
	"greater_than_equal_int64": ">=", "less_than_equal_int64": "<=",
	"equal_unicode_string": "=", "not_equal_unicode_string": "<>",
	"like_i_sql_unicode_string": "LIKE", "equal_i_sql_unicode_string": "=",
	"not_equal_i_sql_unicode_string": "<>",
}

func predSource(parts []string) XEName {
	switch len(parts) {
	case 1:
		return XEName{Name: strings.ToLower(parts[0])}
	case 2:
		return XEName{Package: strings.ToLower(parts[0]), Name: strings.ToLower(parts[1])}
	}
	return XEName{Package: strings.ToLower(parts[len(parts)-2]), Name: strings.ToLower(parts[len(parts)-1])}
}

// sessionOptions parses WITH ( option = value [, …] ).
func (p *parser) sessionOptions() ([]XEOption, *SQLError) {
	if err := p.expectOp("("); err != nil {
		return nil, err
	}
	var out []XEOption
	for {
		t := p.next()
		if t.kind != tokIdent {
			p.i--
			return nil, p.fail()
		}
		name := t.kw()
		if err := p.expectOp("="); err != nil {
			return nil, err
		}
		opt := XEOption{Name: name}
		v := p.next()
		switch v.kind {
		case tokNumber:
			n, err := strconv.ParseInt(v.text, 10, 64)
			if err != nil {
				return nil, ErrXEOptionInvalid(name)
			}
			opt.Num = n
			if u := p.peek(); u.kind == tokIdent && !u.isOp(",") && !asciiEqualFold(u.text, "") {
				switch u.kw() {
				case "KB", "MB", "SECONDS":
					p.i++
					opt.Value = u.kw()
				}
			}
		case tokIdent:
			opt.Value = v.kw()
		default:
			p.i--
			return nil, p.fail()
		}
		out = append(out, opt)
		if !p.acceptOp(",") {
			break
		}
	}
	if err := p.expectOp(")"); err != nil {
		return nil, err
	}
	return out, nil
}

func (p *parser) createEventSession() (Stmt, *SQLError) {
	name, db, err := p.sessionHeader()
	if err != nil {
		return nil, err
	}
	s := &CreateEventSessionStmt{Name: name, Database: db}
	for {
		if p.accept("ADD") {
			switch {
			case p.accept("EVENT"):
				ev, err := p.addEvent()
				if err != nil {
					return nil, err
				}
				s.Events = append(s.Events, ev)
			case p.accept("TARGET"):
				t, err := p.addTarget()
				if err != nil {
					return nil, err
				}
				s.Targets = append(s.Targets, t)
			default:
				return nil, p.fail()
			}
			if p.acceptOp(",") {
				if !p.peek().is("ADD") {
					return nil, p.fail()
				}
				continue
			}
			if p.peek().is("ADD") {
				continue
			}
		}
		break
	}
	if p.accept("WITH") {
		opts, err := p.sessionOptions()
		if err != nil {
			return nil, err
		}
		s.Options = opts
	}
	if len(s.Events) == 0 && len(s.Targets) == 0 && len(s.Options) == 0 {
		return nil, p.fail()
	}
	return s, nil
}

func (p *parser) alterEventSession() (Stmt, *SQLError) {
	name, db, err := p.sessionHeader()
	if err != nil {
		return nil, err
	}
	s := &AlterEventSessionStmt{Name: name, Database: db}
	if p.accept("STATE") {
		if err := p.expectOp("="); err != nil {
			return nil, err
		}
		switch {
		case p.accept("START"):
			s.State = "START"
		case p.accept("STOP"):
			s.State = "STOP"
		default:
			return nil, p.fail()
		}
		return s, nil
	}
	any := false
	for {
		switch {
		case p.accept("ADD"):
			switch {
			case p.accept("EVENT"):
				ev, err := p.addEvent()
				if err != nil {
					return nil, err
				}
				s.AddEvents = append(s.AddEvents, ev)
			case p.accept("TARGET"):
				t, err := p.addTarget()
				if err != nil {
					return nil, err
				}
				s.AddTargets = append(s.AddTargets, t)
			default:
				return nil, p.fail()
			}
		case p.accept("DROP"):
			switch {
			case p.accept("EVENT"):
				n, err := p.xeObjectName()
				if err != nil {
					return nil, err
				}
				s.DropEvents = append(s.DropEvents, n)
			case p.accept("TARGET"):
				n, err := p.xeObjectName()
				if err != nil {
					return nil, err
				}
				s.DropTargets = append(s.DropTargets, n)
			default:
				return nil, p.fail()
			}
		default:
			if p.accept("WITH") {
				opts, err := p.sessionOptions()
				if err != nil {
					return nil, err
				}
				s.Options = opts
				return s, nil
			}
			if !any {
				return nil, p.fail()
			}
			return s, nil
		}
		any = true
		p.acceptOp(",")
	}
}

func (p *parser) dropEventSession() (Stmt, *SQLError) {
	name, db, err := p.sessionHeader()
	if err != nil {
		return nil, err
	}
	return &DropEventSessionStmt{Name: name, Database: db}, nil
}

// comparatorOp resolves a predicate comparator named with its package
// (pred_compare objects of sys.dm_xe_objects): the *_i_sql_* comparators are
// in package sqlserver, e.g. sqlserver.like_i_sql_unicode_string, the form
// CREATE EVENT SESSION documents
// (https://learn.microsoft.com/en-us/sql/t-sql/statements/create-event-session-transact-sql);
// the others in package0. An unqualified name resolves too.
func comparatorOp(name string) (string, bool) {
	pkg, short, qualified := strings.Cut(name, ".")
	if !qualified {
		short, pkg = pkg, ""
	}
	op, ok := comparatorOps[short]
	if !ok {
		return "", false
	}
	want := "package0"
	if strings.Contains(short, "_i_sql_") {
		want = "sqlserver"
	}
	return op, pkg == "" || pkg == want
}

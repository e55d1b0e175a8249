package sqlfront

// Table DDL the stand-in executes: CREATE TABLE (temporary #tables and
// permanent tables), DECLARE @t TABLE, DROP TABLE [IF EXISTS] and MERGE
// (https://learn.microsoft.com/en-us/sql/t-sql/statements/create-table-transact-sql,
// https://learn.microsoft.com/en-us/sql/t-sql/statements/merge-transact-sql).

// createTable parses the rest of CREATE TABLE name (…).
func (p *parser) createTable() (Stmt, *SQLError) {
	name, err := p.multiName()
	if err != nil {
		return nil, err
	}
	return p.columnDefs(name)
}

// columnDefs parses "(col type [NULL|NOT NULL] [PRIMARY KEY] …, [CONSTRAINT
// n] PRIMARY KEY [CLUSTERED] (cols))".
func (p *parser) columnDefs(name []string) (*CreateTableStmt, *SQLError) {
	s := &CreateTableStmt{Name: name}
	if err := p.expectOp("("); err != nil {
		return nil, err
	}
	for {
		if p.accept("CONSTRAINT") {
			if _, err := p.ident(); err != nil {
				return nil, err
			}
		}
		if p.peek().is("PRIMARY") {
			p.i++
			if err := p.expect("KEY"); err != nil {
				return nil, err
			}
			if !p.accept("CLUSTERED") {
				p.accept("NONCLUSTERED")
			}
			if err := p.expectOp("("); err != nil {
				return nil, err
			}
			for {
				c, err := p.ident()
				if err != nil {
					return nil, err
				}
				if !p.accept("ASC") {
					p.accept("DESC")
				}
				s.PK = append(s.PK, c)
				if !p.acceptOp(",") {
					break
				}
			}
			if err := p.expectOp(")"); err != nil {
				return nil, err
			}
		} else {
			c, err := p.columnDef()
			if err != nil {
				return nil, err
			}
			s.Columns = append(s.Columns, c)
		}
		if !p.acceptOp(",") {
			break
		}
	}
	if err := p.expectOp(")"); err != nil {
		return nil, err
	}
	if len(s.Columns) == 0 {
		return nil, p.fail()
	}
	return s, nil
}

func (p *parser) columnDef() (ColumnDef, *SQLError) {
	name, err := p.ident()
	if err != nil {
		return ColumnDef{}, err
	}
	typ, err := p.typeName()
	if err != nil {
		return ColumnDef{}, err
	}
	c := ColumnDef{Name: name, Type: typ}
	for {
		switch {
		case p.peek().is("NOT") && p.peekAt(1).is("NULL"):
			p.i += 2
			c.NotNull = true
		case p.accept("NULL"):
		case p.peek().is("PRIMARY"):
			p.i++
			if err := p.expect("KEY"); err != nil {
				return c, err
			}
			if !p.accept("CLUSTERED") {
				p.accept("NONCLUSTERED")
			}
			c.PrimaryKey, c.NotNull = true, true
		case p.accept("IDENTITY"):
			c.Identity, c.NotNull = true, true
			if p.acceptOp("(") {
				for !p.acceptOp(")") {
					if p.next().kind == tokEOF {
						return c, p.fail()
					}
				}
			}
		case p.accept("DEFAULT"):
			if c.Default, err = p.primary(); err != nil {
				return c, err
			}
		case p.accept("CONSTRAINT"):
			if _, err := p.ident(); err != nil {
				return c, err
			}
		default:
			return c, nil
		}
	}
}

// dropTable parses the rest of DROP TABLE [IF EXISTS] name [, name].
func (p *parser) dropTable() (Stmt, *SQLError) {
	s := &DropTableStmt{}
	if p.peek().is("IF") && p.peekAt(1).is("EXISTS") {
		p.i += 2
		s.IfExists = true
	}
	for {
		name, err := p.multiName()
		if err != nil {
			return nil, err
		}
		s.Names = append(s.Names, name)
		if !p.acceptOp(",") {
			return s, nil
		}
	}
}

// mergeStatement parses MERGE [INTO] target [AS a] USING source ON cond
// WHEN [NOT] MATCHED [BY TARGET|SOURCE] [AND cond] THEN action … ;
func (p *parser) mergeStatement() (Stmt, *SQLError) {
	p.i++
	p.accept("INTO")
	name, err := p.tableObjectName()
	if err != nil {
		return nil, err
	}
	s := &MergeStmt{Target: name}
	if s.Alias, err = p.alias(); err != nil {
		return nil, err
	}
	if err := p.expect("USING"); err != nil {
		return nil, err
	}
	if s.Source, err = p.tableSource(); err != nil {
		return nil, err
	}
	if err := p.expect("ON"); err != nil {
		return nil, err
	}
	if s.On, err = p.expression(); err != nil {
		return nil, err
	}
	for p.accept("WHEN") {
		c, err := p.mergeClause()
		if err != nil {
			return nil, err
		}
		s.Clauses = append(s.Clauses, c)
	}
	if len(s.Clauses) == 0 {
		return nil, p.fail()
	}
	if !p.peek().isOp(";") {
		// MERGE must be terminated by a semicolon (Msg 10713)
		return nil, NewError(10713, 15, "A MERGE statement must be terminated by a semi-colon (;).")
	}
	return s, nil
}

func (p *parser) mergeClause() (MergeClause, *SQLError) {
	var c MergeClause
	var err *SQLError
	if p.accept("MATCHED") {
		c.Matched = true
	} else {
		if err := p.expect("NOT"); err != nil {
			return c, err
		}
		if err := p.expect("MATCHED"); err != nil {
			return c, err
		}
		if p.accept("BY") {
			switch {
			case p.accept("SOURCE"):
				c.BySource = true
			case p.accept("TARGET"):
			default:
				return c, p.fail()
			}
		}
	}
	if p.accept("AND") {
		if c.Cond, err = p.expression(); err != nil {
			return c, err
		}
	}
	if err := p.expect("THEN"); err != nil {
		return c, err
	}
	switch {
	case p.accept("UPDATE"):
		c.Action = "UPDATE"
		if err := p.expect("SET"); err != nil {
			return c, err
		}
		for {
			col, err := p.multiName()
			if err != nil {
				return c, err
			}
			if err := p.expectOp("="); err != nil {
				return c, err
			}
			e, err := p.expression()
			if err != nil {
				return c, err
			}
			c.Sets = append(c.Sets, setClause{Column: col[len(col)-1], Expr: e})
			if !p.acceptOp(",") {
				break
			}
		}
	case p.accept("DELETE"):
		c.Action = "DELETE"
	case p.accept("INSERT"):
		c.Action = "INSERT"
		if p.acceptOp("(") {
			if c.Columns, err = p.identList(); err != nil {
				return c, err
			}
		}
		if err := p.expect("VALUES"); err != nil {
			return c, err
		}
		if err := p.expectOp("("); err != nil {
			return c, err
		}
		for {
			e, err := p.expression()
			if err != nil {
				return c, err
			}
			c.Values = append(c.Values, e)
			if !p.acceptOp(",") {
				break
			}
		}
		if err := p.expectOp(")"); err != nil {
			return c, err
		}
	default:
		return c, p.fail()
	}
	if c.Matched && c.Action == "INSERT" || !c.Matched && !c.BySource && c.Action != "INSERT" {
		return c, NewError(10711, 15, "An action of type '%s' is not allowed in the 'WHEN %s' clause of a MERGE statement.", c.Action, map[bool]string{true: "MATCHED", false: "NOT MATCHED"}[c.Matched])
	}
	return c, nil
}

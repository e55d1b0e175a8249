package sqlfront

// IdentifierStarts lexes a batch with the stand-in's own lexer and returns
// the byte offset and text of every identifier or keyword token (quoted
// names, strings, numbers and variables are not included). It exists for
// differential tests: pkg/tracer's tokenizer is written independently, and
// its fuzz target fails when the two disagree on where a keyword can start.
// A batch the stand-in cannot lex returns its SQL Server error.
func IdentifierStarts(sql string) ([]int, []string, error) {
	toks, err := lex(sql)
	if err != nil {
		return nil, nil, err
	}
	var pos []int
	var words []string
	for _, t := range toks {
		if t.kind == tokIdent {
			pos = append(pos, t.pos)
			words = append(words, t.raw)
		}
	}
	return pos, words, nil
}

// NameParts lexes a multi-part object name ("db.schema.table", brackets
// and quotes allowed) and returns the text of its identifier parts.
func NameParts(s string) ([]string, *SQLError) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	var parts []string
	for _, t := range toks {
		if t.kind == tokIdent || t.kind == tokQuoted {
			parts = append(parts, t.text)
		}
	}
	return parts, nil
}

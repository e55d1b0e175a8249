package tsql

import (
	"fmt"
	"slices"
	"testing"

	"github.com/queryreplay/queryreplay/internal/standin"
)

// FuzzTokenizerAgreesWithStandin is the differential fuzz target of issue
// 12: the tracer's tokenizer and the stand-in's lexer were written
// independently, and on every batch both accept they must agree on where
// each keyword or identifier token starts. (A batch the tracer cannot read
// is refused before anything runs; one the stand-in cannot lex is a syntax
// error on which SQL Server runs nothing.) The seeds are the safety corpus.
func FuzzTokenizerAgreesWithStandin(f *testing.F) {
	addCorpusSeeds(f)
	f.Fuzz(func(t *testing.T, src string) {
		toks, err := Tokenize(src)
		if err != nil {
			return
		}
		spos, swords, serr := standin.IdentifierStarts(src)
		if serr != nil {
			return
		}
		var tpos []int
		var twords []string
		for _, tk := range toks {
			if tk.Kind == TokWord {
				tpos = append(tpos, tk.Pos)
				twords = append(twords, tk.Text)
			}
		}
		if !slices.Equal(tpos, spos) {
			t.Fatalf("keyword/identifier starts differ on %q:\ntracer   %s\nstand-in %s", src, starts(tpos, twords), starts(spos, swords))
		}
		// and so a traced batch holds no refused keyword as the stand-in
		// reads it
		if _, err := Classify(src); err == nil {
			for _, w := range swords {
				if rule, ok := reservedKeywords[upperASCII(w)]; ok && !rule.allowed && !rule.contextual {
					t.Fatalf("Classify accepted %q, in which the stand-in reads the keyword %s", src, w)
				}
			}
		}
	})
}

func starts(pos []int, words []string) string {
	s := ""
	for i := range pos {
		s += fmt.Sprintf("%d:%s ", pos[i], words[i])
	}
	return s
}

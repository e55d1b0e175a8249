package tsql

import (
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/queryreplay/queryreplay/internal/tsqlcorpus"
)

// Issue 23, "Safety round 3": each family below is a class of input
// generated from the rules (every denied keyword, every SET option, every
// lock hint in every table-source position …), not a list of examples.

// deniedKeywords are the reserved keywords refused wherever they stand.
func deniedKeywords() []string {
	var out []string
	for _, w := range slices.Sorted(maps.Keys(reservedKeywords)) {
		if r := reservedKeywords[w]; !r.allowed && !r.contextual {
			out = append(out, w)
		}
	}
	return out
}

// continuations are the line-continuation forms SQL Server documents.
var continuations = []string{"\\\n", "\\\r\n"}

// continuationFamily hides each denied keyword behind each continuation:
// in a binary constant (where the keyword's first letter is not a hex digit,
// after an extra hex digit) and after a character string.
func continuationFamily() []corpusCase {
	var out []corpusCase
	for _, kw := range deniedKeywords() {
		why := reservedKeywords[kw].why
		for _, cont := range continuations {
			out = append(out,
				corpusCase{"SELECT 'a" + cont + "'" + kw, why[:20], false},
				corpusCase{"SELECT N'a" + cont + "b'; " + kw, why[:20], false},
			)
			if !isHexDigit(kw[0]) { // G-Z: the keyword follows the constant
				out = append(out,
					corpusCase{"SELECT 0x1" + cont + "A" + kw, why[:20], false},
					corpusCase{"SELECT 0x" + cont + kw, why[:20], false},
					corpusCase{"SELECT 0x1" + cont + cont + "F" + kw, why[:20], false})
			}
		}
		// a backslash before a line break outside a constant is not documented
		for _, form := range []string{"SELECT 1\\\n", "SELECT 0x1\\ \n", "SELECT x\\\n", "SELECT 0x1\\\r"} {
			out = append(out, corpusCase{form + kw, tsqlcorpus.WhyRead, false})
		}
	}
	return out
}

// confusables maps ASCII letters to non-ASCII letters that strings.ToUpper
// or Unicode case folding would take for them.
var confusables = map[rune][]rune{
	's': {'ſ'}, 'k': {'\u212A'}, 'i': {'ı', 'İ'}, 'a': {'ａ'}, 'e': {'ｅ'}, 'o': {'ｏ'}, 't': {'ｔ'},
}

// variants spells w with one confusable letter, and fully in fullwidth
// letters.
func variants(w string) []string {
	var out []string
	lower := strings.ToLower(w)
	for i, r := range lower {
		for _, c := range confusables[r] {
			out = append(out, lower[:i]+string(c)+lower[i+1:])
		}
	}
	full := strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r - 'A' + 'Ａ'
		}
		return r
	}, w)
	return append(out, full)
}

// confusableFamily: a look-alike of a keyword is a name, both ways.
func confusableFamily() []corpusCase {
	var out []corpusCase
	for _, kw := range deniedKeywords() {
		for _, v := range variants(kw) {
			if !unicode.IsLetter([]rune(v)[0]) {
				continue
			}
			out = append(out, corpusCase{"SELECT 1 AS " + v, "", false}, corpusCase{"SELECT x " + v + " FROM t", "", false})
		}
	}
	for _, v := range variants("SELECT") {
		out = append(out, corpusCase{v + " 1", tsqlcorpus.WhyProc, false})
	}
	return out
}

// setFamily: every option refused ON is refused after every other option
// in a list, and before it.
func setFamily() []corpusCase {
	var out []corpusCase
	firsts := []string{"STATISTICS IO", "STATISTICS TIME", "STATISTICS XML", "STATISTICS PROFILE", "NOCOUNT", "ANSI_NULLS", "ARITHABORT", "QUOTED_IDENTIFIER"}
	for _, name := range slices.Sorted(maps.Keys(harmlessSetOptions)) {
		opt := harmlessSetOptions[name]
		if opt.refuseOn == "" {
			continue
		}
		for _, first := range firsts {
			out = append(out,
				corpusCase{fmt.Sprintf("SET %s, %s ON; DELETE FROM t", first, name), opt.refuseOn, false},
				corpusCase{fmt.Sprintf("SET %s, %s ON", name, first), opt.refuseOn, false},
				corpusCase{fmt.Sprintf("SET %s, %s OFF", first, name), "", false},
			)
		}
		out = append(out, corpusCase{fmt.Sprintf("SET NOCOUNT ON, %s ON", name), "one value", false})
	}
	return out
}

// lockHintPositions are every place a table hint stands.
var lockHintPositions = []string{
	"SELECT * FROM t WITH (%s)",
	"SELECT * FROM t (%s)",
	"SELECT * FROM dbo.t AS x WITH (NOLOCK, %s)",
	"SELECT * FROM t WITH (HOLDLOCK %s); WAITFOR DELAY '00:10:00'",
	"SELECT * FROM a JOIN b WITH (%s) ON a.x = b.x",
	"SELECT * FROM a LEFT JOIN b (%s) ON a.x = b.x",
	"SELECT * FROM a WHERE EXISTS (SELECT 1 FROM b WITH (%s))",
	"WITH c AS (SELECT * FROM t WITH (%s)) SELECT * FROM c",
	"SELECT * FROM t OPTION (TABLE HINT (t, %s))",
	"SELECT * FROM (SELECT a FROM t WITH (%s)) d",
	"UPDATE t WITH (%s) SET a = 1",
}

func lockHintFamily() []corpusCase {
	var out []corpusCase
	for _, pos := range lockHintPositions {
		for _, h := range slices.Sorted(maps.Keys(exclusiveLockHints)) {
			out = append(out, corpusCase{fmt.Sprintf(pos, h), "table hint " + h, false}, corpusCase{fmt.Sprintf(pos, strings.ToLower(h)), "table hint " + h, false})
		}
		for _, h := range []string{"HOLDLOCK", "SERIALIZABLE", "REPEATABLEREAD", "PAGLOCK", "TABLOCK", "NOLOCK"} {
			out = append(out, corpusCase{fmt.Sprintf(pos, h), "", strings.HasPrefix(pos, "UPDATE")})
		}
	}
	return out
}

// selectIntoFamily: SELECT … INTO in every form is a modification.
func selectIntoFamily() []corpusCase {
	var out []corpusCase
	for _, target := range []string{"dbo.T", "#t", "[dbo].[T]", "T"} {
		for _, form := range []string{
			"SELECT output = OrderID INTO %s FROM dbo.Orders",
			"SELECT OrderID AS output INTO %s FROM dbo.Orders",
			"SELECT OrderID output INTO %s FROM dbo.Orders",
			"SELECT a = 1, b = 2 INTO %s",
			"SELECT 1 AS a UNION ALL SELECT 2 INTO %s",
			"SELECT (SELECT 1) AS x INTO %s",
			"WITH c AS (SELECT 1 AS a) SELECT a INTO %s FROM c",
			"SELECT TOP (1) * INTO %s FROM dbo.Orders ORDER BY 1",
		} {
			out = append(out, corpusCase{fmt.Sprintf(form, target), "", true})
		}
	}
	return out
}

// brokerNameFamily: the Service Broker words as plain names are traced;
// the statements stay refused.
func brokerNameFamily() []corpusCase {
	var out []corpusCase
	for _, w := range []string{"Conversation", "Dialog", "Send", "Receive"} {
		for _, form := range []string{
			"SELECT 1 AS %s", "SELECT x %s FROM t", "SELECT %s FROM t", "SELECT t.%s FROM t", "SELECT a, %s, b FROM t",
			"SELECT * FROM t %s JOIN u ON 1 = 1", "SELECT CASE WHEN 1 = 1 THEN 1 END %s", "SELECT %s = 1",
			"SELECT * FROM t WHERE %s > 1", "SELECT * FROM t ORDER BY %s DESC", "SELECT COUNT(*) FROM dbo.%s",
		} {
			out = append(out, corpusCase{fmt.Sprintf(form, w), "", false})
		}
	}
	for _, s := range []string{
		"RECEIVE TOP(1) * FROM dbo.q", "SELECT 1; RECEIVE * FROM dbo.q", "SELECT 1 RECEIVE message_body FROM dbo.q",
		"SEND ON CONVERSATION @h (N'a')", "END CONVERSATION @h", "MOVE CONVERSATION @h TO @g",
		"GET CONVERSATION GROUP @g FROM dbo.q", "BEGIN CONVERSATION TIMER (@h) TIMEOUT = 1", "BEGIN DIALOG @h FROM SERVICE a TO SERVICE 'b'",
		"SELECT CASE WHEN 1 = 1 THEN 1 END END CONVERSATION @h",
	} {
		out = append(out, corpusCase{s, tsqlcorpus.WhyBroker, false})
	}
	return out
}

// round3Families are all the generated families.
func round3Families() []corpusCase {
	var out []corpusCase
	for _, f := range []func() []corpusCase{continuationFamily, confusableFamily, setFamily, lockHintFamily, selectIntoFamily, brokerNameFamily} {
		out = append(out, f()...)
	}
	return out
}

// round3Literal are the inputs seen in issue 23.
var round3Literal = []corpusCase{
	{"SELECT 0x1\\\nAROLLBACK", tsqlcorpus.WhyRollback, false},
	{"SELECT 0x1\\\r\nAROLLBACK", tsqlcorpus.WhyRollback, false},
	{"SELECT 'abc\\\ndef' ROLLBACK", tsqlcorpus.WhyRollback, false},
	{"ſelect 1", tsqlcorpus.WhyProc, false},
	{"SELECT 1 AS ROLLBAC\u212A", "", false},
	{"SELECT 1 AS commıt", "", false},
	{"SELECT 1 AS ＣＯＭＭＩＴ", "", false},
	{"SET STATISTICS IO, XACT_ABORT ON; DELETE FROM t", "XACT_ABORT ON", false},
	{"SET STATISTICS IO, NOEXEC ON; DELETE FROM t", "NOEXEC ON", false},
	{"SET STATISTICS IO, TIME ON; SELECT 1", "", false},
	{"SELECT * FROM t WITH (TABLOCKX, HOLDLOCK); WAITFOR DELAY '00:05:00'", "table hint TABLOCKX", false},
	{"SELECT output = OrderID INTO dbo.T FROM dbo.Orders", "", true},
	{"\uFEFFSELECT 1", "", false},
	{"SELECT Conversation, Dialog, Send, Receive FROM t", "", false},
	{"SET FIPS_FLAGGER OFF", "", false},
	{"SELECT [XLOCK], t.UPDLOCK FROM t", "", false},
}

func TestClassifyRound3(t *testing.T) {
	cases := append(slices.Clone(round3Literal), round3Families()...)
	for _, c := range cases {
		checkCorpusCase(t, c)
	}
	t.Logf("%d inputs", len(cases))
}

func checkCorpusCase(t *testing.T, c corpusCase) {
	t.Helper()
	got, err := Classify(c.sql)
	var re *RefusedError
	switch {
	case c.refuse == "" && err != nil:
		t.Errorf("Classify(%q) refused: %v", c.sql, err)
	case c.refuse == "":
		if got.Modification != c.mod {
			t.Errorf("Classify(%q).Modification = %v, want %v (%v)", c.sql, got.Modification, c.mod, got.Verbs)
		}
	case !errors.As(err, &re) || !strings.Contains(re.Reason, c.refuse):
		t.Errorf("Classify(%q) = %+v, %v; want a refusal naming %q", c.sql, got, err, c.refuse)
	}
}

func TestTokenizeLineContinuation(t *testing.T) {
	toks, err := Tokenize("SELECT 0xabc\\\ndef, 'ab\\\r\ncd', N'x\\\ny' AS n")
	if err != nil {
		t.Fatal(err)
	}
	if toks[1].Text != "0xabc\\\ndef" || toks[3].Value != "abcd" || toks[5].Value != "xy" {
		t.Errorf("tokens %q / %q / %q", toks[1].Text, toks[3].Value, toks[5].Value)
	}
	if toks[len(toks)-1].Line != 4 {
		t.Errorf("last token on line %d, want 4", toks[len(toks)-1].Line)
	}
}

func TestClassifyBatchSizeLimit(t *testing.T) {
	_, err := Classify("SELECT 1" + strings.Repeat(" ", MaxBatchBytes))
	var re *RefusedError
	if !errors.As(err, &re) || !strings.Contains(re.Reason, fmt.Sprint(MaxBatchBytes)) || !strings.Contains(re.Reason, "MaxBatchBytes") {
		t.Errorf("an oversized batch: %v", err)
	}
}

// nestedRaiserror is the quadratic input: RAISERROR( nested n
// times, just under the batch limit for n = MaxBatchBytes/10.
func nestedRaiserror(n int) string {
	return "SELECT " + strings.Repeat("RAISERROR(", n) + strings.Repeat(")", n)
}

// TestClassifyAllocationsBounded: classifying nested input allocates a
// bounded number of bytes per input byte, and a bounded number of
// allocations, whatever its size (measured, not timed).
func TestClassifyAllocationsBounded(t *testing.T) {
	for _, src := range []string{nestedRaiserror((MaxBatchBytes - 100) / 11), "SELECT " + strings.Repeat("(", MaxBatchBytes/2) + "1" + strings.Repeat(")", MaxBatchBytes/2-100)} {
		allocs := testing.AllocsPerRun(2, func() { _, _ = Classify(src) })
		if allocs > 200 {
			t.Errorf("%d bytes: %.0f allocations per run, want a bounded number", len(src), allocs)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _ = Classify(src)
		runtime.ReadMemStats(&after)
		if perByte := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(src)); perByte > 160 {
			t.Errorf("%d bytes: %.0f bytes allocated per input byte, want at most 160", len(src), perByte)
		}
	}
}

func BenchmarkClassifyNested(b *testing.B) {
	for _, size := range []int{100 << 10, 1 << 20} {
		src := nestedRaiserror((size - 100) / 11)
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			for b.Loop() {
				_, _ = Classify(src)
			}
			runtime.ReadMemStats(&m1)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(src)), "ns/byte")
			b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/float64(b.N)/float64(len(src)), "B/byte")
		})
	}
}

// corpusCase is a generated case: the batch, a substring of the refusal's
// reason ("" when it is traced), and whether it modifies data.
type corpusCase struct {
	sql    string
	refuse string
	mod    bool
}

// addCorpusSeeds seeds a fuzz target with the safety corpus and every
// generated family.
func addCorpusSeeds(f *testing.F) {
	for _, c := range tsqlcorpus.Cases {
		f.Add(c.SQL)
	}
	for _, c := range append(round3Literal, round3Families()...) {
		f.Add(c.sql)
	}
}

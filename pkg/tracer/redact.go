package tracer

import (
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/microsoft/go-mssqldb/msdsn"
)

// RedactDSN returns dsn with every secret replaced by ***, for messages and
// logs. It covers the three forms go-mssqldb accepts (msdsn.Parse):
//
//   - URL: sqlserver://user:password@host/instance?key=value&…
//   - ADO: key=value;… with "…" quoting ("" escapes ")
//   - ODBC: odbc:key=value;… with {…} quoting (}} escapes })
//
// A secret is the value of password, pwd, change password or one of the
// Azure AD secrets (client secret, assertions, tokens, certificate
// password). Because a user may quote a value in a style the form does not
// have — password={a;b} in ADO form, where go-mssqldb reads the password
// "{a" — every plausible reading is redacted: go-mssqldb's own, one that
// honours {…}, "…" and '…' quoting in any form, and a plain split on the
// separator, with the parts without = that follow a secret taken as part of
// it. Finally every occurrence of the password go-mssqldb parses is
// replaced wherever else it appears.
func RedactDSN(dsn string) string {
	out := cutRanges(dsn, secretRanges(dsn))
	for _, s := range parsedSecrets(dsn) {
		if len([]rune(s)) >= 4 {
			out = strings.ReplaceAll(out, s, "***")
			if e := url.QueryEscape(s); e != s {
				out = strings.ReplaceAll(out, e, "***")
			}
		}
	}
	return out
}

// secretRanges returns the byte ranges of dsn that hold secrets, by its form.
func secretRanges(dsn string) [][2]int {
	switch {
	case strings.HasPrefix(dsn, "sqlserver://"):
		return urlSecretRanges(dsn)
	case strings.HasPrefix(dsn, "odbc:"):
		return pairSecretRanges(dsn, len("odbc:"), ';')
	default:
		return pairSecretRanges(dsn, 0, ';')
	}
}

// RedactDSNError returns err with every secret of dsn (as go-mssqldb
// parses it) replaced by ***: for errors a driver or connector built from
// dsn returned, before they are logged or shown.
func RedactDSNError(err error, dsn string) error { return redactErr(err, dsn) }

// redactErr returns err, or when its text holds a secret of dsn, an error
// whose text has the secret redacted and which still unwraps to err, so
// errors.Is and errors.As keep working (its Unwrap leads to the unredacted
// text: print the returned error, never what it wraps).
//
// The whole DSN is replaced by its redacted form; then each secret — every
// reading RedactDSN cuts, and the password go-mssqldb parses, plain and
// URL-escaped — is replaced where it stands on its own: not inside a longer
// word, because replacing the letters of a short password inside other words
// ("unable to o***en tc*** connection") garbles the message and tells the
// reader the password.
func redactErr(err error, dsn string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := msg
	if dsn != "" {
		clean = strings.ReplaceAll(clean, dsn, RedactDSN(dsn))
	}
	for _, s := range dsnSecrets(dsn) {
		clean = replaceStandalone(clean, s)
	}
	if clean == msg {
		return err
	}
	return &redactedError{text: clean, cause: err}
}

// redactedError is an error whose text had secrets removed.
type redactedError struct {
	text  string
	cause error
}

func (e *redactedError) Error() string { return e.text }
func (e *redactedError) Unwrap() error { return e.cause }

// dsnSecrets returns the secret strings of dsn, longest first (so a secret
// that contains another is replaced whole).
func dsnSecrets(dsn string) []string {
	var out []string
	add := func(s string) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, r := range secretRanges(dsn) {
		add(dsn[r[0]:r[1]])
	}
	for _, s := range parsedSecrets(dsn) {
		add(s)
		add(url.QueryEscape(s))
		add(url.PathEscape(s))
	}
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// replaceStandalone replaces with *** each occurrence of secret in text that
// is not part of a longer word: a word character (letter, digit, _) at the
// secret's edge must not continue into the text around it.
func replaceStandalone(text, secret string) string {
	first, _ := utf8.DecodeRuneInString(secret)
	last, _ := utf8.DecodeLastRuneInString(secret)
	var b strings.Builder
	pos := 0
	for from := 0; ; {
		i := strings.Index(text[from:], secret)
		if i < 0 {
			break
		}
		start, end := from+i, from+i+len(secret)
		before, _ := utf8.DecodeLastRuneInString(text[:start])
		after, _ := utf8.DecodeRuneInString(text[end:])
		joinsBefore := start > 0 && isWordRune(first) && isWordRune(before)
		joinsAfter := end < len(text) && isWordRune(last) && isWordRune(after)
		if joinsBefore || joinsAfter {
			from = start + 1
			continue
		}
		b.WriteString(text[pos:start])
		b.WriteString("***")
		pos, from = end, end
	}
	if pos == 0 {
		return text
	}
	b.WriteString(text[pos:])
	return b.String()
}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// secretKeys are the connection-string keys whose values are secrets
// (msdsn and azuread of go-mssqldb v1.11.2, ADO and ODBC synonyms).
var secretKeys = map[string]bool{
	"password": true, "pwd": true, "change password": true, "clientsecret": true, "client secret": true,
	"clientassertion": true, "userassertion": true, "systemtoken": true, "accesstoken": true, "access token": true,
	"clientcertpassword": true, "client certificate password": true,
}

func isSecretKey(k string) bool {
	return secretKeys[strings.ToLower(strings.TrimSpace(k))]
}

// parsedSecrets returns the secrets as go-mssqldb itself parses dsn.
func parsedSecrets(dsn string) []string {
	cfg, err := msdsn.Parse(dsn)
	if err != nil {
		return nil
	}
	var out []string
	if cfg.Password != "" {
		out = append(out, cfg.Password)
	}
	for k, v := range cfg.Parameters {
		if isSecretKey(k) && v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// cutRanges replaces the merged byte ranges of s with ***.
func cutRanges(s string, ranges [][2]int) string {
	if len(ranges) == 0 {
		return s
	}
	slices.SortFunc(ranges, func(a, b [2]int) int { return a[0] - b[0] })
	var b strings.Builder
	pos := 0
	for i := 0; i < len(ranges); {
		start, end := ranges[i][0], ranges[i][1]
		for i++; i < len(ranges) && ranges[i][0] <= end; i++ {
			end = max(end, ranges[i][1])
		}
		if start < pos {
			start = pos
		}
		if end <= start {
			continue
		}
		b.WriteString(s[pos:start])
		b.WriteString("***")
		pos = end
	}
	b.WriteString(s[pos:])
	return b.String()
}

// pairSecretRanges finds the secret values of key=value pairs separated by
// sep in s[from:], by each reading: quoting honoured ({…}, "…", '…' at a
// value's start), go-mssqldb's ADO reading (" toggles quoting anywhere in a
// part), and a plain split.
func pairSecretRanges(s string, from int, sep byte) [][2]int {
	var out [][2]int
	for _, split := range []func(string, int, byte) [][2]int{quotedParts, adoParts, plainParts} {
		parts := split(s, from, sep)
		for i := 0; i < len(parts); i++ {
			p := parts[i]
			eq := strings.IndexByte(s[p[0]:p[1]], '=')
			if eq < 0 || !isSecretKey(s[p[0]:p[0]+eq]) {
				continue
			}
			start, end := p[0]+eq+1, p[1]
			// parts without = right after a secret are part of it
			for i+1 < len(parts) && !strings.Contains(s[parts[i+1][0]:parts[i+1][1]], "=") {
				i++
				end = parts[i][1]
			}
			for start < end && s[start] == ' ' {
				start++
			}
			if start < end {
				out = append(out, [2]int{start, end})
			}
		}
	}
	return out
}

// plainParts splits s[from:] at every sep.
func plainParts(s string, from int, sep byte) [][2]int {
	var out [][2]int
	start := from
	for i := from; i <= len(s); i++ {
		if i == len(s) || s[i] == sep {
			out = append(out, [2]int{start, i})
			start = i + 1
		}
	}
	return out
}

// adoParts splits as go-mssqldb's ADO parser does: a " toggles quoting
// anywhere, "" inside quotes is an escaped quote.
func adoParts(s string, from int, sep byte) [][2]int {
	var out [][2]int
	start, in := from, false
	for i := from; i < len(s); i++ {
		switch {
		case s[i] == '"' && in && i+1 < len(s) && s[i+1] == '"':
			i++
		case s[i] == '"':
			in = !in
		case s[i] == sep && !in:
			out = append(out, [2]int{start, i})
			start = i + 1
		}
	}
	return append(out, [2]int{start, len(s)})
}

// quotedParts splits at sep outside a value quoted at its start with {…}
// (}} escapes), "…" or '…' (doubled to escape); an unterminated quote runs
// to the end.
func quotedParts(s string, from int, sep byte) [][2]int {
	var out [][2]int
	start := from
	i := from
	for i < len(s) {
		eq := strings.IndexAny(s[i:], "=;")
		if eq < 0 {
			break
		}
		i += eq
		if s[i] == sep {
			out = append(out, [2]int{start, i})
			i++
			start = i
			continue
		}
		i++ // past =
		for i < len(s) && unicode.IsSpace(rune(s[i])) {
			i++
		}
		if i < len(s) {
			if closeq, ok := map[byte]byte{'{': '}', '"': '"', '\'': '\''}[s[i]]; ok {
				i = quotedEnd(s, i+1, closeq)
			}
		}
		for i < len(s) && s[i] != sep {
			i++
		}
		out = append(out, [2]int{start, i})
		i++
		start = i
	}
	if start < len(s) {
		out = append(out, [2]int{start, len(s)})
	}
	return out
}

// quotedEnd returns the index after the closing character of a quoted run
// that starts at s[i], or len(s) when it never closes.
func quotedEnd(s string, i int, closeq byte) int {
	for i < len(s) {
		if s[i] == closeq {
			if i+1 < len(s) && s[i+1] == closeq {
				i += 2
				continue
			}
			return i + 1
		}
		i++
	}
	return len(s)
}

// urlSecretRanges finds the password of the user info and the secret query
// parameters of a sqlserver:// URL, also when a password holds characters
// it should have escaped (@ / ? # & ;): the user info ends at the last @
// that is not inside a query value.
func urlSecretRanges(dsn string) [][2]int {
	base := len("sqlserver://")
	a := dsn[base:]
	var out [][2]int
	at := strings.LastIndexByte(a, '@')
	if q := strings.IndexByte(a, '?'); q >= 0 && at > q && strings.Contains(a[q:at], "=") {
		at = strings.LastIndexByte(a[:q], '@') // that @ is in a query value
	}
	queryFrom := 0
	if at >= 0 {
		if c := strings.IndexByte(a[:at], ':'); c >= 0 && at > c+1 {
			out = append(out, [2]int{base + c + 1, base + at})
		}
		queryFrom = at + 1
	} else if auth := a[:indexAny(a, "/?#")]; strings.Contains(auth, ":") {
		// user:password with no @ at all: redact unless it is host:port
		c := strings.IndexByte(auth, ':')
		if port := auth[c+1:]; strings.Trim(port, "0123456789") != "" {
			out = append(out, [2]int{base + c + 1, len(dsn)})
			return out
		}
	}
	rest := a[queryFrom:]
	if h := strings.IndexByte(rest, '#'); h >= 0 {
		out = append(out, [2]int{base + queryFrom + h, len(dsn)}) // a fragment is never part of a DSN
		rest = rest[:h]
	}
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		off := base + queryFrom + q + 1
		query := rest[q+1:]
		for _, r := range pairSecretRanges(query, 0, '&') {
			out = append(out, [2]int{off + r[0], off + r[1]})
		}
		// a key may be escaped (pass%77ord): decode keys too
		for _, p := range plainParts(query, 0, '&') {
			kv := query[p[0]:p[1]]
			if eq := strings.IndexByte(kv, '='); eq >= 0 {
				if k, err := url.QueryUnescape(kv[:eq]); err == nil && isSecretKey(k) && p[0]+eq+1 < p[1] {
					out = append(out, [2]int{off + p[0] + eq + 1, off + p[1]})
				}
			}
		}
	}
	return out
}

func indexAny(s, chars string) int {
	if i := strings.IndexAny(s, chars); i >= 0 {
		return i
	}
	return len(s)
}

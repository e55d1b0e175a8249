package tracer

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// trickyPasswords each have distinctive segments (Zq7, Wx9, …) that must
// never survive redaction, around the characters that break naive
// redaction: @ ; } { % " ' & / ? # = space and unicode.
var trickyPasswords = []string{
	"Zq7@Wx9", "Zq7@Wx9@Ko3", "Zq7;Wx9", "Zq7;Sup3rSecret}", "Zq7}{Wx9", "{Zq7}", "Zq7%Wx9", "Zq7%41%zzWx9",
	"Zq7ünïcødé密码Wx9", `"Zq7"`, "'Zq7'", "Zq7&Wx9=Ko3", "Zq7/Wx9?Ko3#Lp5", "Zq7 Wx9", "=Zq7=", "Zq7;;Wx9",
	`Zq7""Wx9`, "Zq7}}Wx9", "Zq7=Wx9;Ko3=Lp5", "Zq7:Wx9", "Zq7\\Wx9",
}

var segment = regexp.MustCompile(`[\p{L}\p{N}]{3,}`)

// dsnForms writes a DSN with password p in every form go-mssqldb accepts,
// escaped as the form wants and raw as a user might type it. Raw forms are
// left out where p holds the form's separator followed by a key=: such a
// DSN means something else (go-mssqldb reads another password and a
// parameter), and no redaction could tell.
func dsnForms(p string) map[string]string {
	esc := url.URL{Scheme: "sqlserver", User: url.UserPassword("sa", p), Host: "db.example.com:1433", RawQuery: "database=Shop"}
	forms := map[string]string{
		"url escaped":       esc.String(),
		"url raw":           "sqlserver://sa:" + p + "@db.example.com:1433?database=Shop",
		"url query escaped": "sqlserver://db.example.com?user+id=sa&password=" + url.QueryEscape(p) + "&database=Shop",
		"ado quoted":        `server=db.example.com;user id=sa;password="` + strings.ReplaceAll(p, `"`, `""`) + `";database=Shop`,
		"ado braces":        "server=db.example.com;user id=sa;password={" + strings.ReplaceAll(p, "}", "}}") + "};database=Shop",
		"odbc braces":       "odbc:server=db.example.com;uid=sa;pwd={" + strings.ReplaceAll(p, "}", "}}") + "};database=Shop",
	}
	if !regexp.MustCompile(`&[^=]*=`).MatchString(p) {
		forms["url query raw"] = "sqlserver://db.example.com?user+id=sa&password=" + p + "&database=Shop"
	}
	if !regexp.MustCompile(`;[^=]*=`).MatchString(p) {
		forms["ado raw"] = "server=db.example.com;user id=sa;password=" + p + ";database=Shop"
		forms["ado pwd raw"] = "Server = db.example.com; UID = sa; Pwd = " + p
		forms["odbc raw"] = "odbc:server=db.example.com;uid=sa;password=" + p + ";database=Shop"
	}
	return forms
}

func TestRedactDSNTrickyPasswords(t *testing.T) {
	for _, p := range trickyPasswords {
		for form, dsn := range dsnForms(p) {
			got := RedactDSN(dsn)
			for _, seg := range append(segment.FindAllString(p, -1), p) {
				if strings.Contains(got, seg) {
					t.Errorf("%s with password %q:\n  %s\nredacted to\n  %s\nwhich still holds %q", form, p, dsn, got, seg)
				}
			}
			if !strings.Contains(got, "db.example.com") || !strings.Contains(got, "***") {
				t.Errorf("%s: %q redacted to %q: the host should stay and the secret show as ***", form, dsn, got)
			}
		}
	}
}

func TestRedactDSNExact(t *testing.T) {
	for in, want := range map[string]string{
		"sqlserver://sa:S3cret!@host:1433?database=x":       "sqlserver://sa:***@host:1433?database=x",
		"sqlserver://sa:p@ss@host?database=x":               "sqlserver://sa:***@host?database=x",
		"sqlserver://host:1433?user id=me@corp&password=xY": "sqlserver://host:1433?user id=me@corp&password=***",
		"sqlserver://host:1433?database=x":                  "sqlserver://host:1433?database=x",
		"server=h;user id=sa;password=S3cret;app=x":         "server=h;user id=sa;password=***;app=x",
		"server=h;PWD = S3cret":                             "server=h;PWD = ***",
		"server=h;password={a;Sup3rSecret};app=x":           "server=h;password=***;app=x",
		"odbc:server=h;pwd={a;b}}c};app=x":                  "odbc:server=h;pwd=***;app=x",
		"server=h;app name={x;password=S3cretS3cret":        "server=h;app name={x;password=***",
	} {
		if got := RedactDSN(in); got != want {
			t.Errorf("RedactDSN(%q) = %q, want %q", in, got, want)
		}
	}
}

// redactErr must not reveal a password by replacing its letters inside other
// words ("unable to o***en tc*** connection" tells anyone the password is "p"),
// and must keep the driver's error reachable for errors.Is / errors.As. A
// password that is a whole word of the message is replaced there: whether the
// driver echoed it cannot be told, and over-redacting is the safe side.
func TestRedactErrShortAndCommonPasswords(t *testing.T) {
	driverErr := fmt.Errorf("unable to open tcp connection with host '127.0.0.1:1433': %w", context.DeadlineExceeded)
	insideWord := regexp.MustCompile(`\w\*\*\*|\*\*\*\w`)
	for _, c := range []struct{ pw, want string }{
		{"p", driverErr.Error()},
		{"pen", driverErr.Error()},
		{"host1", driverErr.Error()},
		{"en tc", driverErr.Error()},
		{"open", "unable to *** tcp connection with host '127.0.0.1:1433': context deadline exceeded"},
		{"connection", "unable to open tcp *** with host '127.0.0.1:1433': context deadline exceeded"},
	} {
		dsn := "sqlserver://sa:" + url.QueryEscape(c.pw) + "@127.0.0.1:1433?database=master"
		got := redactErr(driverErr, dsn)
		if got.Error() != c.want || insideWord.MatchString(got.Error()) {
			t.Errorf("password %q: %q became %q, want %q", c.pw, driverErr.Error(), got.Error(), c.want)
		}
		if !errors.Is(got, context.DeadlineExceeded) {
			t.Errorf("password %q: errors.Is(DeadlineExceeded) lost", c.pw)
		}
	}
}

func TestRedactErrRemovesSecrets(t *testing.T) {
	cases := []struct{ dsn, msg, leak string }{
		// the driver echoing the whole connection string
		{"server=h;user id=sa;password=Zq7Wx9", "bad dsn server=h;user id=sa;password=Zq7Wx9: oops", "Zq7Wx9"},
		// the password standing alone, quoted, or as a value
		{"sqlserver://sa:Zq7Wx9@h", "login 'Zq7Wx9' refused", "Zq7Wx9"},
		{"sqlserver://sa:Zq7Wx9@h", "password=Zq7Wx9 refused", "Zq7Wx9"},
		{"sqlserver://sa:p@h", "pwd=p;server=h refused", "pwd=p"},
		{"sqlserver://sa:p@h", "secret is p.", "is p."},
		{"server=h;password={a;Sup3rSecret}", "parse password={a;Sup3rSecret}", "Sup3rSecret"},
	}
	for _, c := range cases {
		base := errors.New(c.msg)
		got := redactErr(base, c.dsn)
		if strings.Contains(got.Error(), c.leak) {
			t.Errorf("%q with %q: %q still holds %q", c.msg, c.dsn, got.Error(), c.leak)
		}
		if !errors.Is(got, base) {
			t.Errorf("%q: the driver's error is no longer reachable", c.msg)
		}
	}
}

// FuzzRedactErr: a password standing on its own in an error's text never
// survives, whatever its characters, and the cause stays reachable.
func FuzzRedactErr(f *testing.F) {
	for _, pw := range append([]string{"p", "open", "a b", "x"}, trickyPasswords...) {
		f.Add(pw)
	}
	f.Fuzz(func(t *testing.T, pw string) {
		if pw == "" || !utf8.ValidString(pw) || strings.Contains(pw, "*") {
			return
		}
		dsn := (&url.URL{Scheme: "sqlserver", User: url.UserPassword("sa", pw), Host: "127.0.0.1:1433"}).String()
		cause := errors.New("login failed: " + pw + " was refused")
		got := redactErr(cause, dsn)
		if !errors.Is(got, cause) {
			t.Fatalf("cause lost for %q", pw)
		}
		if strings.Contains(strings.ReplaceAll(got.Error(), "***", ""), " "+pw+" ") {
			t.Fatalf("password %q survives in %q", pw, got.Error())
		}
	})
}

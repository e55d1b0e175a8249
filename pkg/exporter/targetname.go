package exporter

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/microsoft/go-mssqldb/msdsn"
)

// DefaultTargetName names a target after its server: the DSN's host and
// port (or instance name), every character outside letters, digits and _
// turned into _ (db1.example.com:1433 -> db1_example_com_1433). It is the
// same at every start and differs between servers, so a fleet of one
// exporter per server needs no names in its configuration. A name longer
// than 64 characters keeps its start and ends with a hash of the whole, so
// that it stays distinct. The DSN is parsed by go-mssqldb's own parser;
// an error names what is wrong, never a password.
func DefaultTargetName(dsn string) (string, error) {
	p, err := msdsn.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("does not parse: %s", redact(err.Error(), p.Password))
	}
	host := strings.TrimSpace(p.Host)
	if host == "" {
		return "", fmt.Errorf("does not parse: no server (host) given")
	}
	suffix := strconv.FormatUint(p.Port, 10)
	switch {
	case p.Port != 0:
	case p.Instance != "":
		suffix = p.Instance
	default:
		suffix = "1433" // https://learn.microsoft.com/en-us/sql/sql-server/install/configure-the-windows-firewall-to-allow-sql-server-access
	}
	name := sanitizeName(host + "_" + suffix)
	if len(name) > maxTargetName {
		sum := sha256.Sum256([]byte(name))
		name = name[:maxTargetName-9] + "_" + hex.EncodeToString(sum[:4])
	}
	return name, nil
}

var outsideNameCharset = regexp.MustCompile(`[^A-Za-z0-9_]`)

func sanitizeName(s string) string { return outsideNameCharset.ReplaceAllString(s, "_") }

// redact removes a password from a parser's message (its messages quote
// the value they reject).
func redact(msg, password string) string {
	if password == "" {
		return msg
	}
	return strings.ReplaceAll(msg, password, "***")
}

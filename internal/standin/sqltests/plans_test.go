package sqltests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestEverydayPlansValidate checks every actual plan of the everyday
// queries against Microsoft's showplan schema with xmllint (Debian package
// libxml2-utils), and that each names real operators.
func TestEverydayPlansValidate(t *testing.T) {
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("QUERYREPLAY_ALLOW_SKIP") == "1" {
			t.Skip("xmllint not installed (apt-get install -y libxml2-utils)")
		}
		t.Fatal("xmllint not installed: apt-get install -y libxml2-utils (or set QUERYREPLAY_ALLOW_SKIP=1)")
	}
	_, db := startStandin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conn := statisticsXMLConn(ctx, t, db)
	dir := t.TempDir()
	var files []string
	for _, q := range everydayQueries {
		if q.wantErr != 0 {
			continue
		}
		rows, err := conn.QueryContext(ctx, q.sql)
		if err != nil {
			t.Fatalf("%s: %v", q.name, err)
		}
		n := 0
		for {
			cols, _ := rows.Columns()
			for rows.Next() {
				vals, err := scanRow(rows, len(cols))
				if err != nil {
					t.Fatal(err)
				}
				if len(cols) == 1 && cols[0] == "Microsoft SQL Server 2005 XML Showplan" {
					plan := vals[0].(string)
					if !strings.Contains(plan, "<RelOp ") || !strings.Contains(plan, "RunTimeCountersPerThread") {
						t.Fatalf("%s: plan without operators or runtime counters", q.name)
					}
					f := filepath.Join(dir, q.name+"_"+strconv.Itoa(n)+".sqlplan")
					if err := os.WriteFile(f, []byte(plan), 0o644); err != nil {
						t.Fatal(err)
					}
					files = append(files, f)
					n++
				}
			}
			if !rows.NextResultSet() {
				break
			}
		}
		rows.Close()
		if n == 0 {
			t.Fatalf("%s: no actual plan returned", q.name)
		}
	}
	if len(files) < 40 {
		t.Fatalf("%d plans, want one per query at least", len(files))
	}
	args := append([]string{"--noout", "--schema", "../testdata/showplanxml_1.550.xsd"}, files...)
	out, err := exec.Command(xmllint, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("plans do not validate: %v\n%s", err, out)
	}
}

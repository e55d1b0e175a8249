package standin

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestPlansValidateAgainstShowplanXSD checks every scenario's actual plan
// against Microsoft's showplan schema 1.550 with xmllint (Debian package
// libxml2-utils).
func TestPlansValidateAgainstShowplanXSD(t *testing.T) {
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		if allowSkip() {
			t.Skip("xmllint not installed (apt-get install -y libxml2-utils)")
		}
		t.Fatal("xmllint not installed: apt-get install -y libxml2-utils (or set QUERYREPLAY_ALLOW_SKIP=1)")
	}
	dir := t.TempDir()
	var files []string
	for _, sc := range Scenarios() {
		srv := New(Options{})
		c := session(t, srv, 51)
		mustRun(t, c, "DBCC DROPCLEANBUFFERS; SET STATISTICS XML ON")
		r := mustRun(t, c, sc.SQL)
		plan := r.sets[len(r.sets)-1].rows[0][0].(string)
		f := filepath.Join(dir, sc.Name+".sqlplan")
		if err := os.WriteFile(f, []byte(plan), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	tr, err := GenerateTrace(50, 6)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, "generated.sqlplan")
	os.WriteFile(f, []byte(tr.PlanXML), 0o644)
	files = append(files, f)
	args := append([]string{"--noout", "--schema", "testdata/showplanxml_1.550.xsd"}, files...)
	out, err := exec.Command(xmllint, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("plans do not validate: %v\n%s", err, out)
	}
}

package standin

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/testenv"
)

// TestTediousSuite runs clienttest/tedious_suite.js with Node against the
// stand-in (tedious is pinned in package.json; make setup runs npm ci), or
// against the server in QUERYREPLAY_TEST_DSN when it is set.
func TestTediousSuite(t *testing.T) {
	runTediousSuite(t, startSuiteTarget(t))
}

// runTediousSuite runs the suite against target and returns its output.
// The connection settings reach Node as environment variables of the
// child process only.
func runTediousSuite(t *testing.T, target *suiteTarget) string {
	t.Helper()
	node := testenv.RequireTool(t, "node", "nodejs")
	_, self, _, _ := runtime.Caller(0)
	dir := filepath.Dir(self)
	root := filepath.Join(dir, "..", "..")
	if _, err := os.Stat(filepath.Join(root, "node_modules", "tedious", "package.json")); err != nil {
		testenv.Missing(t, "the tedious npm package (run `make setup` or `npm ci`)", "nodejs npm", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "clienttest", "tedious_suite.js"))
	cmd.Dir = root
	cmd.Env = childEnv(tediousEnv(target)...)
	out, err := cmd.CombinedOutput()
	t.Logf("tedious suite:\n%s", out)
	if err != nil {
		t.Fatalf("tedious suite failed (%v):\n%s", err, out)
	}
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "ok ") {
			n++
		}
	}
	if min := map[bool]int{false: 15, true: 9}[target.Real]; n < min {
		t.Fatalf("only %d tedious cases passed, want at least %d:\n%s", n, min, out)
	}
	return string(out)
}

// tediousEnv is what tedious_suite.js reads (see its header).
func tediousEnv(target *suiteTarget) []string {
	flag := map[bool]string{false: "0", true: "1"}
	return []string{"QR_REAL=" + flag[target.Real], "QR_HOST=" + target.Host, "QR_PORT=" + target.Port,
		"QR_USER=" + target.User, "QR_PASSWORD=" + target.Password, "QR_DATABASE=" + target.Database,
		"QR_ENCRYPT=" + target.Encrypt, "QR_TRUST_SERVER_CERT=" + flag[target.TrustServerCertificate],
		"QR_CA_FILE=" + target.CAFile, "QR_HOSTNAME=" + target.HostInCertificate}
}

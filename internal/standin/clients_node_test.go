package standin

import (
	"context"
	"net"
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
// stand-in (tedious is pinned in package.json; make setup runs npm ci).
// QUERYREPLAY_TEST_HOST/PORT/USER/PASSWORD/DATABASE (and optionally
// QUERYREPLAY_TEST_CA_FILE) run it against a real server instead.
func TestTediousSuite(t *testing.T) {
	node := testenv.RequireTool(t, "node", "nodejs")
	_, self, _, _ := runtime.Caller(0)
	dir := filepath.Dir(self)
	root := filepath.Join(dir, "..", "..")
	if _, err := os.Stat(filepath.Join(root, "node_modules", "tedious", "package.json")); err != nil {
		testenv.Missing(t, "the tedious npm package (run `make setup` or `npm ci`)", "nodejs npm", err)
	}
	env := append(os.Environ(), "QR_REAL=0")
	if host := os.Getenv("QUERYREPLAY_TEST_HOST"); host != "" {
		t.Log("running against the real server in QUERYREPLAY_TEST_HOST")
		env = append(env, "QR_REAL=1", "QR_HOST="+host, "QR_PORT="+os.Getenv("QUERYREPLAY_TEST_PORT"),
			"QR_USER="+os.Getenv("QUERYREPLAY_TEST_USER"), "QR_PASSWORD="+os.Getenv("QUERYREPLAY_TEST_PASSWORD"),
			"QR_DATABASE="+os.Getenv("QUERYREPLAY_TEST_DATABASE"), "QR_CA_FILE="+os.Getenv("QUERYREPLAY_TEST_CA_FILE"))
	} else {
		r, _ := startStandin(t, Options{})
		host, port, _ := net.SplitHostPort(r.Addr)
		env = append(env, "QR_HOST="+host, "QR_PORT="+port, "QR_USER="+r.Server.opts.User, "QR_PASSWORD="+r.Server.opts.Password,
			"QR_DATABASE="+demoDBName, "QR_CA_FILE="+r.CAFile)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "clienttest", "tedious_suite.js"))
	cmd.Dir = root
	cmd.Env = env
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
	if n < 10 {
		t.Fatalf("only %d tedious cases passed:\n%s", n, out)
	}
}

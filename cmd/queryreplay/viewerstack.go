package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	sdklog "github.com/grafana/grafana-plugin-sdk-go/backend/log"

	"github.com/queryreplay/queryreplay/internal/viewerassets"
	"github.com/queryreplay/queryreplay/pkg/plugin"
	"github.com/queryreplay/queryreplay/pkg/viewer"
)

// What demo and view share: finding the viewer's page bundle, configuring
// the real datasource (pkg/plugin) for a server, and serving the viewer
// (pkg/viewer) on loopback.

// viewerAssetsEnv names a directory holding the built viewer page.
const viewerAssetsEnv = "QUERYREPLAY_VIEWER_ASSETS"

// errNoViewerAssets says the page bundle was not found.
var errNoViewerAssets = errors.New("the viewer's page (harness.js) is not built")

// embeddedViewer is the page built into the binary (make build-cli);
// tests replace it.
var embeddedViewer = viewerassets.FS

// viewerAssetDirs lists, in order, the directories that may hold the
// viewer page on disk: viewer/ beside the executable (an older layout)
// and tests/browser/dist of a checkout the command runs from or was
// built in.
func viewerAssetDirs() []string {
	var dirs []string
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		dir := filepath.Dir(exe)
		dirs = append(dirs, filepath.Join(dir, "viewer"), filepath.Join(dir, "..", "tests", "browser", "dist"))
	}
	return append(dirs, filepath.Join("tests", "browser", "dist"))
}

// findViewerAssets returns the viewer page: the --assets directory, else
// $QUERYREPLAY_VIEWER_ASSETS (both overrides, for working on the page),
// else the page embedded in the binary, else the first directory of
// viewerAssetDirs holding harness.js (a binary built without npm).
func findViewerAssets(flag string) (fs.FS, error) {
	var dirs []string
	switch {
	case flag != "":
		dirs = []string{flag}
	case os.Getenv(viewerAssetsEnv) != "":
		dirs = []string{os.Getenv(viewerAssetsEnv)}
	default:
		if page, ok := embeddedViewer(); ok {
			return page, nil
		}
		dirs = viewerAssetDirs()
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, viewerassets.Entry)); err == nil {
			return os.DirFS(d), nil
		}
	}
	return nil, fmt.Errorf("%w: not embedded in this binary, and looked in %s; build with make build-cli (make demo does) or pass --assets DIR",
		errNoViewerAssets, strings.Join(dirs, ", "))
}

// serverSettings is where the viewer's datasource connects.
type serverSettings struct {
	Host, User, Password, Database, Encrypt string
	Port                                    int
	// Lab permits clearing the buffer pool and tracing modifications (in
	// rollback mode): the stand-in, never a server the user named.
	Lab bool
	// ViewOnly: no server behind it (view without --dsn); the datasource's
	// failed start-up sweep is expected and not worth a warning.
	ViewOnly bool
	// MaxBundleMB bounds bundles in the datasource (traceStore.maxBundleMB)
	// and, with room for the rest of a request, the viewer's request
	// bodies (view --max-bundle-mb); 0: their defaults.
	MaxBundleMB int
}

// settingsFromDSN reads a sqlserver:// URL DSN.
func settingsFromDSN(dsn string) (serverSettings, error) {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme != "sqlserver" || u.Host == "" {
		return serverSettings{}, errors.New("--dsn (or $QUERYREPLAY_DSN) must be a sqlserver://user:password@host:port?database=db URL")
	}
	s := serverSettings{Host: u.Hostname(), Port: 1433, User: u.User.Username(), Database: u.Query().Get("database"), Encrypt: u.Query().Get("encrypt")}
	s.Password, _ = u.User.Password()
	if p := u.Port(); p != "" {
		if s.Port, err = strconv.Atoi(p); err != nil {
			return serverSettings{}, fmt.Errorf("--dsn port %q: %w", p, err)
		}
	}
	return s, nil
}

// instanceSettings builds the datasource settings Grafana would hand the
// plugin, with the trace store in storeDir.
func (s serverSettings) instanceSettings(storeDir string) (backend.DataSourceInstanceSettings, error) {
	j := map[string]any{
		"host": s.Host, "port": s.Port, "user": s.User, "database": s.Database, "encrypt": s.Encrypt,
		"traceStore": map[string]any{"directory": storeDir}, "connectTimeoutSeconds": 5,
	}
	if s.MaxBundleMB > 0 {
		j["traceStore"] = map[string]any{"directory": storeDir, "maxBundleMB": s.MaxBundleMB}
	}
	if s.Lab {
		j["allowBufferPoolClear"] = true
		j["allowModifications"] = true
	}
	b, err := json.Marshal(j)
	if err != nil {
		return backend.DataSourceInstanceSettings{}, err
	}
	return backend.DataSourceInstanceSettings{
		UID: viewer.DefaultUID, Type: plugin.PluginID, Name: "QueryReplay", JSONData: b,
		DecryptedSecureJSONData: map[string]string{"password": s.Password}, Updated: time.Now(),
	}, nil
}

// runningViewer is the viewer with the datasource behind it.
type runningViewer struct {
	srv  *viewer.Server
	ds   *plugin.Datasource
	once sync.Once
	err  error
}

// startViewer opens the datasource and serves the viewer on listen with
// the given bundles uploaded. The trace store lives in storeDir.
func startViewer(ctx context.Context, e *env, s serverSettings, storeDir string, assets fs.FS, listen string, bundles []string) (*runningViewer, error) {
	quietSDKLog(e, s.ViewOnly)
	st, err := s.instanceSettings(storeDir)
	if err != nil {
		return nil, err
	}
	inst, err := plugin.NewDatasource(ctx, st)
	if err != nil {
		return nil, fmt.Errorf("datasource: %w", err)
	}
	ds := inst.(*plugin.Datasource)
	vc := viewer.Config{Datasource: ds, Settings: st, Assets: assets, Bundles: bundles, Logger: e.log}
	if s.MaxBundleMB > 0 {
		vc.MaxRequestBytes, vc.MaxRequestKnob = int64(s.MaxBundleMB+1)<<20, "--max-bundle-mb"
	}
	srv, err := viewer.New(vc)
	if err != nil {
		ds.Dispose()
		return nil, err
	}
	if err := srv.Start(ctx, listen); err != nil {
		ds.Dispose()
		return nil, err
	}
	return &runningViewer{srv: srv, ds: ds}, nil
}

// traceURL is the viewer page opening one uploaded trace.
func (v *runningViewer) traceURL(id, title string) string {
	q := url.Values{"traceId": {id}}
	if title != "" {
		q.Set("title", title)
	}
	return v.srv.URL() + "?" + q.Encode()
}

// close stops serving and releases the datasource; later calls return
// the first call's result.
func (v *runningViewer) close() error {
	v.once.Do(func() {
		v.err = v.srv.Close()
		v.ds.Dispose()
	})
	return v.err
}

// quietSDKLog keeps the Grafana SDK's logger (which pkg/plugin logs
// through) to warnings (errors when there is no server), or debug with
// --verbose, as the rest of the CLI.
func quietSDKLog(e *env, viewOnly bool) {
	switch {
	case e.log != nil && e.log.Enabled(context.Background(), slog.LevelDebug):
		sdklog.DefaultLogger = sdklog.NewWithLevel(sdklog.Debug)
	case viewOnly:
		sdklog.DefaultLogger = sdklog.NewWithLevel(sdklog.Error)
	default:
		sdklog.DefaultLogger = sdklog.NewWithLevel(sdklog.Warn)
	}
}

// checkLoopbackListen refuses a listen address beyond loopback: the viewer
// and the demo's exporter serve without authentication.
func checkLoopbackListen(flag, addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s %q: %w", flag, addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s %q is not a loopback address; the demo serves traces and metrics without authentication", flag, addr)
	}
	return nil
}

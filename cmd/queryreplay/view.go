package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/bundle"
)

type viewArgs struct {
	bundles []string
	listen  string
	assets  string
	dsn     string
	quiet   bool
	// maxBundle bounds each bundle here and in the viewer's datasource.
	maxBundle int
}

func init() {
	commands = append(commands, func(c *cli) {
		cmd := c.app.Command("view", "Open saved trace bundles in the local viewer (the replay panel in a browser; no Grafana, no SQL Server).\n\n"+
			"Exit status: 0 stopped with Ctrl-C, 1 failed, 2 usage or a bundle that cannot be read.")
		a := &viewArgs{}
		cmd.Arg("bundle", "Trace bundle files (queryreplay trace -o, the demo, or the panel's download).").Required().ExistingFilesVar(&a.bundles)
		cmd.Flag("listen", "Loopback address of the viewer.").Default("127.0.0.1:0").StringVar(&a.listen)
		cmd.Flag("assets", "Directory of a built viewer page (harness.js) to serve instead of the one embedded in the binary (for working on the page).").StringVar(&a.assets)
		cmd.Flag("dsn", "Also let the viewer run new traces on this server (sqlserver:// URL). Default: $QUERYREPLAY_DSN (prefer it: a command line is visible to other users), else bundles only.").Envar("QUERYREPLAY_DSN").StringVar(&a.dsn)
		cmd.Flag("quiet", "Print only the URLs.").Short('q').BoolVar(&a.quiet)
		bundleLimitFlag(cmd, &a.maxBundle)
		c.register(cmd, func(ctx context.Context, e *env) error { return runView(ctx, e, a) })
	})
}

func runView(ctx context.Context, e *env, a *viewArgs) error {
	if err := checkLoopbackListen("--listen", a.listen); err != nil {
		return withStatus(2, err)
	}
	// No server: the datasource needs one configured, and port 1 on
	// loopback refuses at once; traces come from the uploaded bundles.
	server := serverSettings{Host: "127.0.0.1", Port: 1, User: "none", Password: "none", Encrypt: "disable", ViewOnly: true}
	if a.dsn != "" {
		var err error
		if server, err = settingsFromDSN(a.dsn); err != nil {
			return withStatus(2, err)
		}
	}
	// Read every bundle first, so a bad file is named before anything
	// starts (the upload would only say "bad request").
	o, err := bundleLimit(a.maxBundle)
	if err != nil {
		return err
	}
	loaded := make([]*bundle.Bundle, len(a.bundles))
	for i, path := range a.bundles {
		b, err := bundle.LoadLimit(path, o)
		if err != nil {
			return withStatus(2, fmt.Errorf("bundle %s: %w", path, err))
		}
		loaded[i] = b
	}
	assets, err := findViewerAssets(a.assets)
	if err != nil {
		return withStatus(2, err)
	}
	server.MaxBundleMB = a.maxBundle
	store, err := os.MkdirTemp("", "queryreplay-view-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(store)
	v, err := startViewer(ctx, e, server, store, assets, a.listen, a.bundles)
	if err != nil {
		return err
	}
	defer v.close()
	ids := v.srv.TraceIDs()
	for i, path := range a.bundles {
		title := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".gz"), ".json")
		if a.quiet {
			fmt.Fprintln(e.stdout, v.traceURL(ids[i], title))
			continue
		}
		fmt.Fprintf(e.stdout, "%s\n  %s\n  %s\n", path, oneLine(loaded[i].SQL, 100), v.traceURL(ids[i], title))
	}
	if !a.quiet {
		if a.dsn == "" {
			fmt.Fprintln(e.stdout, "Saved traces and bundle files only: set QUERYREPLAY_DSN (or give --dsn) to run new traces from the page's Run a query.")
		}
		fmt.Fprintln(e.stdout, "Serving on loopback; Ctrl-C stops.")
	}
	<-ctx.Done()
	if err := v.close(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("stop the viewer: %w", err)
	}
	return nil
}

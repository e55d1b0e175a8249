// Command harness-server runs the browser tests' backend: the stand-in, the
// real datasource (pkg/plugin) and pkg/viewer serving the harness bundle.
// It prints one JSON line {"url":…, "traceIds":[…], "events":…, "token":…} when ready and serves
// until its standard input closes or it is signalled. With -generate N it
// first writes a synthetic bundle of N pages (5 events each) and uploads it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/internal/symfixture"
	"github.com/queryreplay/queryreplay/internal/viewertest"
	"github.com/queryreplay/queryreplay/pkg/viewer"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "harness-server:", err)
		os.Exit(1)
	}
}

func run() error {
	assets := flag.String("assets", "tests/browser/dist", "directory with harness.js and harness.css")
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	generate := flag.Int("generate", 0, "write and upload a synthetic bundle of this many pages (5 events each)")
	operators := flag.Int("operators", 7, "operators of the synthetic plan")
	persona := flag.String("persona", "sql2022", "the stand-in's persona (SQL Server 2022: callstack_rva frames and sys.dm_db_page_info)")
	symbols := flag.Bool("symbols", true, "build the stand-in's PDBs (clang, lld) and serve them from a loopback symbol server the datasource resolves call stacks through")
	pace := flag.Bool("pace", false, "pace the stand-in to the wall clock (queries take the time their events say: live traces)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tmp, err := os.MkdirTemp("", "queryreplay-harness-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	// cold-cache traces (the stand-in's buffer pool is its own) show reads, waits and I/O
	settings := map[string]any{"allowBufferPoolClear": true}
	opts := standin.Options{Persona: *persona, PaceToWallClock: *pace}
	if *symbols {
		fx, err := symfixture.Shared()
		if err != nil {
			return fmt.Errorf("symbol fixture: %w", err)
		}
		srv, err := fx.Serve()
		if err != nil {
			return err
		}
		defer srv.Close()
		opts.ModuleBuilds = fx.Builds
		settings["symbolServers"] = []string{srv.URL}
		settings["symbolCacheDir"] = filepath.Join(tmp, "symbols")
	}
	stack, err := viewertest.StartStackWith(ctx, filepath.Join(tmp, "store"), settings, opts)
	if err != nil {
		return err
	}
	defer stack.Close()
	var bundles []string
	events := 0
	if *generate > 0 {
		path := filepath.Join(tmp, "generated.json.gz")
		if events, err = viewertest.GenerateBundle(path, *generate, *operators); err != nil {
			return fmt.Errorf("generate bundle: %w", err)
		}
		bundles = append(bundles, path)
	}
	v, err := viewer.New(viewer.Config{Datasource: stack.Datasource, Settings: stack.Settings, Assets: os.DirFS(*assets),
		Bundles: bundles, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		return err
	}
	if err := v.Start(ctx, *addr); err != nil {
		return err
	}
	defer v.Close()
	// the token lets a test call the API directly, as the page does (pkg/viewer's TokenHeader)
	line, _ := json.Marshal(map[string]any{"url": v.URL(), "traceIds": v.TraceIDs(), "events": events, "token": v.Token()})
	fmt.Println(string(line))
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	<-ctx.Done()
	return nil
}

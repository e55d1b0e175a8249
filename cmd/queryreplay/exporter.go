package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/common/promslog"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"

	"github.com/queryreplay/queryreplay/pkg/exporter"
)

// defaultExporterAddress: 9617, the port first planned, is the Pi-hole
// exporter's (ekofr/pihole-exporter), and the 9100–9999 range of the
// Prometheus wiki's default port allocations is fully allocated; see
// docs/operations.md.
const defaultExporterAddress = ":10617"

type exporterArgs struct {
	configFile  string
	dsn         string
	dsnFlag     bool // --dsn given on the command line (not only $QUERYREPLAY_DSN)
	targetName  string
	check       bool
	logLevel    *promslog.Level
	logFormat   *promslog.Format
	web         *web.FlagConfig
	shutdownMax time.Duration
}

func init() {
	commands = append(commands, func(c *cli) {
		cmd := c.app.Command("exporter", "Run the Prometheus exporter: a light, long-running XE session published as metrics.\n\n"+
			"Give --config.file (many targets) or --dsn (one). Exit status: 0 clean shutdown, 1 failed, 2 usage or configuration.")
		a := &exporterArgs{logLevel: promslog.NewLevel(), logFormat: promslog.NewFormat()}
		cmd.Flag("config.file", "Exporter configuration file (YAML; see docs/operations.md).").StringVar(&a.configFile)
		cmd.Flag("dsn", "One target's go-mssqldb connection string, instead of --config.file. Default: $QUERYREPLAY_DSN.").Envar("QUERYREPLAY_DSN").IsSetByUser(&a.dsnFlag).StringVar(&a.dsn)
		cmd.Flag("target.name", "The target label of --dsn's server (letters, digits, _). Default: its host and port, such as db1_example_com_1433.").StringVar(&a.targetName)
		cmd.Flag("config.check", "Validate the configuration and exit.").BoolVar(&a.check)
		cmd.Flag("log.level", "Only log messages with the given severity or above: debug, info, warn, error.").Default("info").SetValue(a.logLevel)
		cmd.Flag("log.format", "Output format of log messages: logfmt or json.").Default("logfmt").SetValue(a.logFormat)
		cmd.Flag("shutdown.timeout", "How long a clean shutdown may take (dropping the sessions).").Default("15s").DurationVar(&a.shutdownMax)
		a.web = kingpinflag.AddFlags(cmd, defaultExporterAddress)
		c.register(cmd, func(ctx context.Context, e *env) error { return runExporter(ctx, e, a) })
	})
}

func (a *exporterArgs) config() (*exporter.Config, error) {
	switch {
	case a.configFile != "" && a.dsnFlag:
		return nil, errors.New("give --config.file or --dsn, not both")
	case a.configFile != "":
		return exporter.LoadConfig(a.configFile)
	case a.dsn != "":
		return exporter.ConfigFromDSN(a.dsn, a.targetName)
	}
	return nil, errors.New("give --config.file or --dsn (or set QUERYREPLAY_DSN)")
}

func runExporter(ctx context.Context, e *env, a *exporterArgs) error {
	cfg, err := a.config()
	if err != nil {
		return withStatus(2, err)
	}
	if a.check {
		fmt.Fprintf(e.stdout, "configuration OK: %d target(s), %d probe(s)\n", len(cfg.Targets), len(cfg.Probes))
		return nil
	}
	log := promslog.New(&promslog.Config{Level: a.logLevel, Format: a.logFormat, Writer: e.stderr})
	ex, err := exporter.New(cfg, log)
	if err != nil {
		return withStatus(2, err)
	}
	handler, err := ex.Handler(version)
	if err != nil {
		return err
	}
	if *a.web.WebConfigFile != "" {
		if err := web.Validate(*a.web.WebConfigFile); err != nil {
			return withStatus(2, fmt.Errorf("--web.config.file: %w", err))
		}
	}
	listeners := make([]net.Listener, 0, len(*a.web.WebListenAddresses))
	for _, addr := range *a.web.WebListenAddresses {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			for _, o := range listeners {
				o.Close()
			}
			return fmt.Errorf("listen on %s: %w", addr, err)
		}
		listeners = append(listeners, l)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	ex.Start(ctx)
	served := make(chan error, 1)
	go func() { served <- web.ServeMultiple(listeners, srv, a.web, log) }()
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), a.shutdownMax)
	defer cancel()
	_ = srv.Shutdown(sctx)
	if derr := ex.Shutdown(sctx); derr != nil {
		log.Error("shutdown", "err", derr)
		if err == nil {
			err = derr
		}
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	if err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}

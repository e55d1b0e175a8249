package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/common/promslog"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"

	"github.com/queryreplay/queryreplay/pkg/exporter"
	"github.com/queryreplay/queryreplay/pkg/tracer"
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
	metricsPath string
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
		cmd.Flag("web.telemetry-path", "Path under which to expose metrics.").Default(exporter.MetricsPath).StringVar(&a.metricsPath)
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
		// the same checks as a start: the configuration (LoadConfig runs the
		// probes' safety classifier) and the exporter built from it
		if _, err := exporter.New(cfg, nil, exporter.WithTracing(tracer.ExporterTracing{})); err != nil {
			return withStatus(2, err)
		}
		if *a.web.WebConfigFile != "" {
			if err := web.Validate(*a.web.WebConfigFile); err != nil {
				return withStatus(2, fmt.Errorf("--web.config.file: %w", err))
			}
		}
		fmt.Fprintf(e.stdout, "configuration OK: %d target(s), %d probe(s)\n", len(cfg.Targets), len(cfg.Probes))
		return nil
	}
	log := promslog.New(&promslog.Config{Level: a.logLevel, Format: a.logFormat, Writer: e.stderr})
	ex, err := exporter.New(cfg, log, exporter.WithTracing(tracer.ExporterTracing{}))
	if err != nil {
		return withStatus(2, err)
	}
	reload := func() error {
		next, err := a.config()
		if err != nil {
			log.Error("reload: the configuration is refused; the running one stays", "err", err)
			return err
		}
		rctx, cancel := context.WithTimeout(ctx, a.shutdownMax)
		defer cancel()
		if err := ex.Reload(rctx, next); err != nil {
			log.Error("reload", "err", err)
			return err
		}
		return nil
	}
	handler, err := ex.HandlerWith(exporter.HandlerOptions{Version: version, MetricsPath: a.metricsPath, Reload: reload})
	if err != nil {
		return withStatus(2, err)
	}
	if *a.web.WebConfigFile != "" {
		if err := web.Validate(*a.web.WebConfigFile); err != nil {
			return withStatus(2, fmt.Errorf("--web.config.file: %w", err))
		}
	}
	// SIGHUP reloads, as Prometheus and its exporters do; without this the
	// signal's default action would kill the process and leave its session
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	ex.Start(ctx)
	served := make(chan error, 1)
	// exporter-toolkit's own listeners: TCP, vsock://, systemd socket
	// activation (--web.systemd-socket), TLS and basic auth
	go func() { served <- web.ListenAndServe(srv, a.web, log) }()
	err = waitForStop(ctx, hup, served, reload, log)
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

// waitForStop reloads on each SIGHUP until ctx ends (SIGINT, SIGTERM) or
// the server stops.
func waitForStop(ctx context.Context, hup <-chan os.Signal, served <-chan error, reload func() error, log *slog.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-served:
			return err
		case <-hup:
			log.Info("SIGHUP: reloading the configuration")
			_ = reload() // logged; the running configuration stays
		}
	}
}

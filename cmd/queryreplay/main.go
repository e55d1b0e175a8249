// Command queryreplay is QueryReplay's command-line tool: it runs traces, the
// Prometheus exporter, the demo and the TDS stand-in, and offers inspection
// tools for event files, plans, timelines and symbols.
//
// Each subcommand lives in its own file and registers itself through
// register; this file only parses flags and maps errors to exit codes. It must
// not hold any tracing, parsing or protocol logic of its own.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/alecthomas/kingpin/v2"
)

// exitError carries a process exit status with its message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// errNotImplemented marks a subcommand whose issue has not landed yet.
var errNotImplemented = errors.New("not implemented yet")

// withStatus wraps err so that the process exits with code.
func withStatus(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

// env is what every subcommand receives: its streams and a logger.
type env struct {
	stdout io.Writer
	stderr io.Writer
	stdin  io.Reader
	log    *slog.Logger
}

// action runs a parsed subcommand.
type action func(ctx context.Context, e *env) error

// cli holds the application and the action of each registered command.
type cli struct {
	app     *kingpin.Application
	actions map[string]action
	verbose *bool
}

func (c *cli) register(cmd *kingpin.CmdClause, run action) {
	c.actions[cmd.FullCommand()] = run
}

func newCLI() *cli {
	app := kingpin.New("queryreplay", "See what SQL Server's storage engine does while a query runs.")
	app.HelpFlag.Short('h')
	app.Version(version)
	c := &cli{app: app, actions: map[string]action{}}
	c.verbose = app.Flag("verbose", "Log debug detail to stderr.").Short('v').Bool()
	for _, add := range commands {
		add(c)
	}
	return c
}

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// commands lists the registration functions of every subcommand; each file
// appends its own in an init function.
var commands []func(*cli)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], &env{stdout: os.Stdout, stderr: os.Stderr, stdin: os.Stdin})
	stop()
	os.Exit(code)
}

// run parses args, runs the chosen command and returns the exit status.
func run(ctx context.Context, args []string, e *env) int {
	c := newCLI()
	c.app.UsageWriter(e.stdout)
	c.app.ErrorWriter(e.stderr)
	chosen, terminated, err := parse(c.app, args)
	if terminated != nil {
		return *terminated
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "queryreplay: %v\n", err)
		return 2
	}
	level := slog.LevelInfo
	if *c.verbose {
		level = slog.LevelDebug
	}
	e.log = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
	act, ok := c.actions[chosen]
	if !ok {
		fmt.Fprintf(e.stderr, "queryreplay %s: no action registered\n", chosen)
		return 2
	}
	if err := act(ctx, e); err != nil {
		fmt.Fprintf(e.stderr, "queryreplay %s: %v\n", chosen, err)
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		if errors.Is(err, errNotImplemented) {
			return 2
		}
		return 1
	}
	return 0
}

// terminate is what kingpin's exit request becomes inside parse.
type terminate struct{ code int }

// parse runs kingpin, turning its exit request after --help or --version
// into a returned status, so that run stays testable and parsing stops there.
func parse(app *kingpin.Application, args []string) (chosen string, terminated *int, err error) {
	app.Terminate(func(code int) { panic(terminate{code}) })
	defer func() {
		if r := recover(); r != nil {
			t, ok := r.(terminate)
			if !ok {
				panic(r)
			}
			terminated = &t.code
		}
	}()
	chosen, err = app.Parse(args)
	return chosen, nil, err
}

// notImplemented is the action of a subcommand whose issue has not landed.
func notImplemented(ctx context.Context, e *env) error { return errNotImplemented }

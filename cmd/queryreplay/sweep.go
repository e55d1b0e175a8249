package main

import (
	"context"
	"fmt"
	"time"

	"github.com/queryreplay/queryreplay/pkg/tracer"
)

type sweepArgs struct {
	dsn   string
	grace time.Duration
}

func init() {
	commands = append(commands, func(c *cli) {
		cmd := c.app.Command("sweep", "Drop the trace sessions left behind by tracers that are gone.\n\n"+
			"A trace session's name records the connection that owns it: the sweep drops it as soon as that "+
			"connection is gone, and never while it lives. Sessions that name no owner (older versions) are dropped "+
			"once older than --grace, as are all when the login cannot see other sessions (it lacks VIEW SERVER STATE). "+
			"The exporter's queryreplay_exporter_* sessions and other tools' sessions are never touched.\n\n"+
			"Exit status: 0 swept, 1 failed.")
		a := &sweepArgs{}
		cmd.Flag("dsn", "go-mssqldb connection string. Default: $QUERYREPLAY_DSN.").Envar("QUERYREPLAY_DSN").Required().StringVar(&a.dsn)
		cmd.Flag("grace", "Age after which a session that names no owner is dropped.").Default(tracer.DefaultGracePeriod.String()).DurationVar(&a.grace)
		c.register(cmd, func(ctx context.Context, e *env) error { return runSweep(ctx, e, a) })
	})
}

func runSweep(ctx context.Context, e *env, a *sweepArgs) error {
	opener, err := tracer.NewDSNOpener(a.dsn)
	if err != nil {
		return withStatus(2, err)
	}
	rep, err := tracer.New(opener, tracer.Policy{}, e.log).Sweep(ctx, a.grace)
	for _, name := range rep.Dropped {
		fmt.Fprintf(e.stdout, "dropped %s\n", name)
	}
	if err != nil && len(rep.Dropped)+len(rep.Kept) == 0 {
		return err // nothing was looked at
	}
	fmt.Fprintf(e.stdout, "%d session(s) dropped, %d kept\n", len(rep.Dropped), len(rep.Kept))
	if rep.ByAgeOnly {
		fmt.Fprintf(e.stderr, "warning: the login cannot see other sessions (grant VIEW SERVER STATE): owners could not be checked; only sessions older than %s were dropped\n", a.grace)
	}
	return err
}

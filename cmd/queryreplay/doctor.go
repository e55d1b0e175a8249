package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/queryreplay/queryreplay/pkg/tracer"
)

type doctorArgs struct {
	dsn     string
	jsonOut bool
	strict  bool
}

func init() {
	commands = append(commands, func(c *cli) {
		cmd := c.app.Command("doctor", "Read what a server offers a trace, without changing anything, and say which features will work.\n\n"+
			"It reads the server's version and edition, the login's permissions, the events and actions the server has, "+
			"where event files would go, and what each feature needs; it creates no session and sends none of your SQL. "+
			"Run it first on a new server; its output is what to paste into a bug report.\n\n"+
			"Exit status: 0 every feature works (or some degraded, without --strict), 1 a trace cannot run here "+
			"(or, with --strict, some feature is degraded), 2 usage or connection error.")
		a := &doctorArgs{}
		cmd.Flag("dsn", "go-mssqldb connection string. Default: $QUERYREPLAY_DSN.").Envar("QUERYREPLAY_DSN").Required().StringVar(&a.dsn)
		cmd.Flag("json", "Print the report as JSON.").BoolVar(&a.jsonOut)
		cmd.Flag("strict", "Exit 1 when any feature is degraded too.").BoolVar(&a.strict)
		c.register(cmd, func(ctx context.Context, e *env) error { return runDoctor(ctx, e, a) })
	})
}

func runDoctor(ctx context.Context, e *env, a *doctorArgs) error {
	opener, err := tracer.NewDSNOpener(a.dsn)
	if err != nil {
		return withStatus(2, err)
	}
	d, err := tracer.Diagnose(ctx, opener)
	if err != nil {
		return withStatus(2, err)
	}
	if a.jsonOut {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(d); err != nil {
			return err
		}
	} else {
		printDiagnosis(e, d)
	}
	switch worst := d.Worst(); {
	case worst == tracer.CheckUnavailable:
		return withStatus(1, fmt.Errorf("a trace cannot use every feature on this server (see the unavailable lines above)"))
	case worst == tracer.CheckDegraded && a.strict:
		return withStatus(1, fmt.Errorf("some features are degraded on this server (--strict)"))
	}
	return nil
}

func printDiagnosis(e *env, d *tracer.Diagnosis) {
	fmt.Fprintf(e.stdout, "SQL Server %s (%s, EngineEdition %d), database %s", d.Version, d.Edition, d.EngineEdition, d.Database)
	if d.CompatibilityLevel > 0 {
		fmt.Fprintf(e.stdout, ", compatibility level %d", d.CompatibilityLevel)
	}
	fmt.Fprintf(e.stdout, ", sysadmin: %v\n\n", d.Sysadmin)
	w := tabwriter.NewWriter(e.stdout, 0, 2, 2, ' ', 0)
	for _, c := range d.Checks {
		fmt.Fprintf(w, "%s\t%s\t%s\n", c.Status, c.Feature, c.Detail)
	}
	w.Flush()
}

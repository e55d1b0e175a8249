package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/findings"
	"github.com/queryreplay/queryreplay/pkg/showplan"
)

type findingsArgs struct {
	bundle     string
	json       bool
	config     string
	set        []string
	thresholds bool
	maxBundle  int
}

func init() {
	commands = append(commands, func(c *cli) {
		cmd := c.app.Command("findings", "Say what a trace means: the findings of a trace bundle, with their evidence and hints.\n\n"+
			"Exit status: 0 analysed (whatever was found), 1 failed, 2 usage.")
		a := &findingsArgs{}
		cmd.Arg("bundle", "Trace bundle (queryreplay trace --output; JSON, gzip when it ends in .gz).").StringVar(&a.bundle)
		cmd.Flag("json", "Write the findings as JSON.").BoolVar(&a.json)
		cmd.Flag("config", "JSON file of thresholds over the defaults, e.g. {\"readShare\": 0.7} (see --thresholds).").StringVar(&a.config)
		cmd.Flag("set", "Change one threshold, name=value (repeatable; applied after --config).").StringsVar(&a.set)
		cmd.Flag("thresholds", "List the rules and every threshold with its value, then exit.").BoolVar(&a.thresholds)
		bundleLimitFlag(cmd, &a.maxBundle)
		c.register(cmd, func(ctx context.Context, e *env) error { return runFindings(e, a) })
	})
}

func runFindings(e *env, a *findingsArgs) error {
	cfg, err := findingsConfig(a.config, a.set)
	if err != nil {
		return withStatus(2, err)
	}
	out := bufio.NewWriter(e.stdout)
	if a.thresholds {
		writeThresholds(out, cfg)
		return flush(out)
	}
	if a.bundle == "" {
		return withStatus(2, errors.New("give the trace bundle to analyze (or --thresholds)"))
	}
	o, err := bundleLimit(a.maxBundle)
	if err != nil {
		return err
	}
	b, err := bundle.LoadLimit(a.bundle, o)
	if err != nil {
		return err
	}
	in, warn := findingsInput(b)
	if in.Trace == nil {
		return fmt.Errorf("%s: %s", a.bundle, warn)
	}
	rep, err := findings.Analyze(in, cfg)
	if err != nil {
		return err
	}
	if warn != "" {
		rep.Notes = append(rep.Notes, warn)
	}
	return writeResult(out, a.json, rep, rep.Text())
}

// writeResult writes v as indented JSON, or text, and flushes.
func writeResult(out *bufio.Writer, asJSON bool, v any, text string) error {
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return err
		}
	} else {
		io.WriteString(out, text)
	}
	return flush(out)
}

func flush(w *bufio.Writer) error {
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// findingsConfig reads the thresholds: the defaults, a JSON file over
// them, then name=value settings.
func findingsConfig(file string, set []string) (findings.Config, error) {
	cfg := findings.DefaultConfig()
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return cfg, fmt.Errorf("thresholds: %w", err)
		}
		if cfg, err = findings.ParseConfig(data); err != nil {
			return cfg, fmt.Errorf("%s: %w", file, err)
		}
	}
	for _, s := range set {
		name, value, ok := strings.Cut(s, "=")
		if !ok {
			return cfg, fmt.Errorf("--set %q: want name=value", s)
		}
		if err := cfg.Set(strings.TrimSpace(name), strings.TrimSpace(value)); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

func writeThresholds(w io.Writer, cfg findings.Config) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "rule\tlooks for\tthresholds")
	for _, r := range findings.Rules() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.ID, r.Summary, strings.Join(r.Thresholds, ", "))
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "threshold\tvalue\tmeaning")
	for _, f := range cfg.Fields() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Name, f.Value, f.Doc)
	}
	tw.Flush()
}

// findingsInput turns a bundle into the rules' input (findings.FromBundle
// over its parsed plan). warn says what is missing; Trace is nil when the
// bundle has no usable timeline.
func findingsInput(b *bundle.Bundle) (findings.Input, string) {
	if b.Trace == nil {
		return findings.Input{}, "the bundle's trace part does not decode as a timeline"
	}
	var plan *showplan.Plan
	var warn string
	if b.Plan != "" {
		p, err := showplan.ParseBytes([]byte(b.Plan))
		if err != nil {
			warn = fmt.Sprintf("the bundle's plan does not parse (%v): figures come from the events alone", err)
		}
		plan = p
	}
	return findings.FromBundle(b, plan), warn
}

// writeTraceFindings prints a fresh trace's findings under its summary
// (queryreplay trace calls it after writeTraceSummary; the demo after each
// scenario's summary). A bundle without a timeline has none to print.
func writeTraceFindings(w io.Writer, b *bundle.Bundle) {
	if sts := findings.FromStatements(b); len(sts) > 1 {
		// several statements: each one's findings over its own timeline
		// and plan (issue 30)
		for _, st := range sts {
			rep, err := findings.Analyze(st.Input, findings.DefaultConfig())
			if err != nil {
				return
			}
			fmt.Fprintf(w, "\nStatement %d: %s\n", st.ID, oneLine(st.Text, 100))
			io.WriteString(w, rep.Text())
		}
		return
	}
	in, warn := findingsInput(b)
	if in.Trace == nil {
		return
	}
	rep, err := findings.Analyze(in, findings.DefaultConfig())
	if err != nil {
		return // only an invalid Config errs, and the defaults are valid
	}
	if warn != "" {
		rep.Notes = append(rep.Notes, warn)
	}
	io.WriteString(w, "\n"+rep.Text())
}

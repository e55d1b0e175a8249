package main

import (
	"bufio"
	"context"
	"fmt"
	"path/filepath"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/compare"
)

type compareArgs struct {
	a, b      string
	json      bool
	maxBundle int
}

func init() {
	commands = append(commands, func(c *cli) {
		cmd := c.app.Command("compare", "Show what a change did: compare two trace bundles of a query operator by operator.\n\n"+
			"Operators are matched by plan shape (kind, object, place in the tree), not node id.\n"+
			"Exit status: 0 compared, 1 failed, 2 usage.")
		a := &compareArgs{}
		cmd.Arg("a", "The first trace bundle (before).").Required().StringVar(&a.a)
		cmd.Arg("b", "The second trace bundle (after).").Required().StringVar(&a.b)
		cmd.Flag("json", "Write the comparison as JSON.").BoolVar(&a.json)
		bundleLimitFlag(cmd, &a.maxBundle)
		c.register(cmd, func(ctx context.Context, e *env) error { return runCompare(e, a) })
	})
}

func runCompare(e *env, a *compareArgs) error {
	o, err := bundleLimit(a.maxBundle)
	if err != nil {
		return err
	}
	sa, err := compareSide(a.a, o)
	if err != nil {
		return err
	}
	sb, err := compareSide(a.b, o)
	if err != nil {
		return err
	}
	r, err := compare.Compare(sa, sb)
	if err != nil {
		return err
	}
	return writeResult(bufio.NewWriter(e.stdout), a.json, r, r.Text())
}

// compareSide loads one bundle as a side of the comparison.
func compareSide(path string, o bundle.ReadOptions) (compare.Side, error) {
	b, err := bundle.LoadLimit(path, o)
	if err != nil {
		return compare.Side{}, err
	}
	in, warn := findingsInput(b)
	if in.Trace == nil {
		return compare.Side{}, fmt.Errorf("%s: %s", path, warn)
	}
	return compare.Side{Label: filepath.Base(path), Trace: in.Trace, Plan: in.Plan, Statements: compare.StatementsOf(b)}, nil
}

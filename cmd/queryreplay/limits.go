package main

import (
	"fmt"
	"os"

	"github.com/alecthomas/kingpin/v2"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/sizelimit"
)

// Size bounds of the files the commands read (docs/security.md "Input size
// limits"): in MB, at least 1, at most maxLimitMB.
const maxLimitMB = 4096

// bundleLimitFlag adds --max-bundle-mb to a command that reads bundles.
func bundleLimitFlag(cmd *kingpin.CmdClause, mb *int) {
	cmd.Flag("max-bundle-mb", "Refuse a bundle whose JSON, once decompressed, is larger than this many MB.").
		Default(fmt.Sprint(bundle.DefaultMaxBytes >> 20)).IntVar(mb)
}

// planLimitFlag adds --max-plan-mb to a command that reads plan files.
func planLimitFlag(cmd *kingpin.CmdClause, mb *int) {
	cmd.Flag("max-plan-mb", "Refuse a plan file larger than this many MB.").
		Default(fmt.Sprint(showplan.DefaultMaxPlanBytes >> 20)).IntVar(mb)
}

func checkLimitMB(flag string, mb int) error {
	if mb < 1 || mb > maxLimitMB {
		return withStatus(2, fmt.Errorf("%s %d is outside 1-%d", flag, mb, maxLimitMB))
	}
	return nil
}

// bundleLimit is --max-bundle-mb as the reader's options.
func bundleLimit(mb int) (bundle.ReadOptions, error) {
	if err := checkLimitMB("--max-bundle-mb", mb); err != nil {
		return bundle.ReadOptions{}, err
	}
	return bundle.ReadOptions{MaxBytes: int64(mb) << 20, Knob: "--max-bundle-mb"}, nil
}

// readPlanFile parses a plan file of at most mb MB (--max-plan-mb).
func readPlanFile(path string, mb int) (*showplan.Plan, error) {
	if err := checkLimitMB("--max-plan-mb", mb); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	defer f.Close()
	p, err := showplan.Read(f, sizelimit.Error{What: "plan file " + path, Limit: int64(mb) << 20, Knob: "--max-plan-mb"})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

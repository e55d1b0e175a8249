package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/queryreplay/queryreplay/pkg/showplan"
)

func init() {
	commands = append(commands, func(c *cli) {
		plan := c.app.Command("plan", "Showplan tools.")
		inspect := plan.Command("inspect", "Print a plan's operator tree and semantics.")
		asJSON := inspect.Flag("json", "Write every operator of every statement as JSON instead of a tree.").Bool()
		rules := inspect.Flag("rules", "Write every operator's streaming/blocking rule with its reason, caveat and source instead of a tree.").Bool()
		file := inspect.Arg("FILE", "Showplan XML file (.sqlplan or a saved query_post_execution_showplan plan).").Required().String()
		var maxPlan int
		planLimitFlag(inspect, &maxPlan)
		c.register(inspect, func(ctx context.Context, e *env) error {
			return planInspect(ctx, e, *file, *asJSON, *rules, maxPlan)
		})
	})
}

// planInspect parses one plan file and prints it as JSON or as a tree.
func planInspect(ctx context.Context, e *env, file string, asJSON, rules bool, maxPlanMB int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	plan, err := readPlanFile(file, maxPlanMB)
	if err != nil {
		return err
	}
	switch {
	case asJSON && rules:
		return withStatus(2, fmt.Errorf("--json and --rules are two outputs; choose one"))
	case rules:
		return showplan.WriteRules(e.stdout, plan)
	case !asJSON:
		return showplan.WriteTree(e.stdout, plan)
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(showplan.NewDocument(plan)); err != nil {
		return fmt.Errorf("write plan JSON: %w", err)
	}
	return nil
}

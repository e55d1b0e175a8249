package main

func init() {
	commands = append(commands, func(c *cli) {
		plan := c.app.Command("plan", "Showplan tools.")
		c.register(plan.Command("inspect", "Print a plan's operator tree and semantics."), notImplemented)
	})
}

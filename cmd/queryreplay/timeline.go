package main

func init() {
	commands = append(commands, func(c *cli) {
		c.register(c.app.Command("timeline", "Build a timeline from an actual plan and decoded events."), notImplemented)
	})
}

package main

func init() {
	commands = append(commands, func(c *cli) {
		c.register(c.app.Command("demo", "Run the demo: the stand-in, traced scenarios and their timelines."), notImplemented)
	})
}

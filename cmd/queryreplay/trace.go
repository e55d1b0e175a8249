package main

func init() {
	commands = append(commands, func(c *cli) {
		c.register(c.app.Command("trace", "Run a query inside a private Extended Events session and rebuild its timeline."), notImplemented)
	})
}

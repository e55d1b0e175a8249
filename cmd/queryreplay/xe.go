package main

func init() {
	commands = append(commands, func(c *cli) {
		xe := c.app.Command("xe", "Extended Events tools.")
		c.register(xe.Command("decode", "Decode event XML (result-set dumps, <event> streams, ring_buffer documents) to JSON lines."), notImplemented)
	})
}

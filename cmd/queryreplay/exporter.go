package main

func init() {
	commands = append(commands, func(c *cli) {
		c.register(c.app.Command("exporter", "Run the Prometheus exporter: a light, long-running XE session published as metrics."), notImplemented)
	})
}

package main

func init() {
	commands = append(commands, func(c *cli) {
		c.register(c.app.Command("standin", "Run the SQL Server stand-in (a TDS server) alone."), notImplemented)
	})
}

package main

func init() {
	commands = append(commands, func(c *cli) {
		sym := c.app.Command("symbols", "Call-stack symbol tools.")
		c.register(sym.Command("resolve", "Resolve RVAs or call-stack frames to module!Class::Method."), notImplemented)
		c.register(sym.Command("pdb-info", "Print a PDB's GUID, age, sections and symbol counts."), notImplemented)
	})
}

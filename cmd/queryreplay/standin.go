package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// The standin command runs the SQL Server stand-in (internal/standin behind
// internal/tds) alone, for the demo and for manual testing with any TDS
// client, or lists its demo scenarios.
func init() {
	commands = append(commands, func(c *cli) {
		cmd := c.app.Command("standin", "Run the SQL Server stand-in (a TDS server) alone.")
		listen := cmd.Flag("listen", "TCP address to listen on.").Default("127.0.0.1:14330").String()
		user := cmd.Flag("user", "Login name of the stand-in's sysadmin login.").Default("sa").String()
		password := cmd.Flag("password", "Password of that login.").Default("QueryReplay-Standin1").String()
		list := cmd.Flag("list-scenarios", "Print the demo scenarios, one JSON object per line, and exit.").Bool()
		c.register(cmd, func(ctx context.Context, e *env) error {
			if *list {
				return listScenarios(e)
			}
			if *user == "" || *password == "" {
				return withStatus(2, errors.New("--user and --password must not be empty"))
			}
			// The stand-in must not import pkg/xe (it is the independent side
			// of the tests); the CLI gives it the .xel encoder so that
			// OPENROWSET(BULK …) serves event files as SQL Server would.
			opts := standin.Options{User: *user, Password: *password, Logger: e.log, XELEncoder: xe.EncodeXMLAsXEL}
			run, err := standin.Start(ctx, *listen, opts)
			if err != nil {
				return err
			}
			defer run.Close()
			fmt.Fprintln(e.stdout, run.DSN)
			e.log.Info("stand-in listening", "addr", run.Addr)
			<-ctx.Done()
			return nil
		})
	})
}

func listScenarios(e *env) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false)
	for _, s := range standin.Scenarios() {
		if err := enc.Encode(struct {
			Name        string `json:"name"`
			SQL         string `json:"sql"`
			Description string `json:"description"`
		}{s.Name, s.SQL, s.Description}); err != nil {
			return fmt.Errorf("write scenario %s: %w", s.Name, err)
		}
	}
	return nil
}

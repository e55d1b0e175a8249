package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/internal/tds"
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
		persona := cmd.Flag("persona", "SQL Server product to emulate: "+personaNames()+".").Default(standin.DefaultPersona).String()
		encryption := cmd.Flag("encryption", "TLS policy: optional (clients choose, SQL Server's default), required (Force Encryption), strict (TDS 8.0 only) or off (no TLS).").Default("optional").Enum("optional", "required", "strict", "off")
		certFile := cmd.Flag("tls-cert", "PEM server certificate (chain); default: a CA and certificate generated at start.").String()
		keyFile := cmd.Flag("tls-key", "PEM private key of --tls-cert.").String()
		caOut := cmd.Flag("tls-ca-out", "Write the generated CA certificate (PEM) here, for clients to pin.").String()
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
			opts := standin.Options{User: *user, Password: *password, Logger: e.log, XELEncoder: xe.EncodeXMLAsXEL, Persona: *persona}
			if err := tlsOptions(&opts, *encryption, *certFile, *keyFile, *caOut); err != nil {
				return withStatus(2, err)
			}
			run, err := standin.Start(ctx, *listen, opts)
			if err != nil {
				return err
			}
			defer run.Close()
			if *caOut != "" {
				if err := os.WriteFile(*caOut, run.CAPEM, 0o644); err != nil {
					return fmt.Errorf("write --tls-ca-out: %w", err)
				}
			}
			fmt.Fprintln(e.stdout, run.DSN)
			if run.TLSDSN != "" {
				fmt.Fprintln(e.stdout, run.TLSDSN)
			}
			e.log.Info("stand-in listening", "addr", run.Addr)
			<-ctx.Done()
			return nil
		})
	})
}

func personaNames() string {
	var names []string
	for _, p := range standin.Personas() {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// tlsOptions turns the TLS flags into stand-in options.
func tlsOptions(o *standin.Options, encryption, certFile, keyFile, caOut string) error {
	if encryption == "off" {
		if certFile != "" || caOut != "" {
			return errors.New("--encryption off takes no --tls-cert or --tls-ca-out")
		}
		o.NoTLS = true
		return nil
	}
	policy, err := tds.ParseEncryption(encryption)
	if err != nil {
		return err
	}
	o.Encryption = policy
	if (certFile == "") != (keyFile == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	if certFile != "" {
		if caOut != "" {
			return errors.New("--tls-ca-out writes the generated CA; with --tls-cert there is none")
		}
		if o.Certificate, err = standin.LoadCertificate(certFile, keyFile); err != nil {
			return err
		}
	}
	return nil
}

func listScenarios(e *env) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false)
	for _, s := range standin.Scenarios() {
		// the whole scenario: what it shows, its compare partner and the
		// trace options it is meant for
		if err := enc.Encode(s); err != nil {
			return fmt.Errorf("write scenario %s: %w", s.Name, err)
		}
	}
	return nil
}

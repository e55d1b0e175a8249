//go:build mage

// Magefile builds the datasource backend with the Grafana SDK's build
// targets (go tool mage -v build:linux). The main package lives in
// ./cmd/gpx_queryreplay rather than the SDK's default ./pkg.
package main

import (
	// mage:import
	build "github.com/grafana/grafana-plugin-sdk-go/build"
)

func init() {
	_ = build.SetBeforeBuildCallback(func(cfg build.Config) (build.Config, error) {
		cfg.RootPackagePath = "./cmd/gpx_queryreplay"
		return cfg, nil
	})
}

// Default builds the backend for every platform Grafana runs on.
var Default = build.BuildAll

// Command gpx_queryreplay is the backend of the QueryReplay datasource,
// started by Grafana over go-plugin gRPC. It only wires pkg/plugin into the
// SDK's process management and must hold no logic of its own.
package main

import (
	"os"

	"github.com/grafana/grafana-plugin-sdk-go/backend/datasource"
	"github.com/grafana/grafana-plugin-sdk-go/backend/log"

	"github.com/queryreplay/queryreplay/pkg/plugin"
)

func main() {
	if err := datasource.Manage(plugin.PluginID, plugin.NewDatasource, datasource.ManageOpts{GRPCSettings: plugin.GRPCSettings()}); err != nil {
		log.DefaultLogger.Error("datasource stopped", "error", err)
		os.Exit(1)
	}
}

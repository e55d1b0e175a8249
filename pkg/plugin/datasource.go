// Package plugin is QueryReplay's Grafana backend datasource: it turns
// Grafana's QueryData and CheckHealth calls into traces and frames.
//
// It is an adapter: it owns the Grafana SDK glue (instance settings, per-query
// errors with their error source, health) and must not parse events or plans,
// build timelines or talk TDS itself; those belong to the lower layers.
package plugin

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/instancemgmt"
	"github.com/grafana/grafana-plugin-sdk-go/backend/log"

	// Registers the "sqlserver" driver used by CheckHealth.
	_ "github.com/microsoft/go-mssqldb"
)

// PluginID is the nested datasource's id in src/datasource/plugin.json.
const PluginID = "queryreplay-sqlserver-datasource"

var (
	_ backend.QueryDataHandler      = (*Datasource)(nil)
	_ backend.CheckHealthHandler    = (*Datasource)(nil)
	_ instancemgmt.InstanceDisposer = (*Datasource)(nil)
)

// Datasource is one configured datasource instance. Settings problems are
// kept rather than failing instance creation, so that CheckHealth can report
// them to the admin instead of Grafana showing a generic plugin error.
type Datasource struct {
	settings    Settings
	settingsErr error
}

// NewDatasource is the instance factory given to datasource.Manage.
func NewDatasource(_ context.Context, s backend.DataSourceInstanceSettings) (instancemgmt.Instance, error) {
	cfg, err := LoadSettings(s)
	return &Datasource{settings: cfg, settingsErr: err}, nil
}

// Dispose releases the instance's resources when Grafana replaces it.
func (d *Datasource) Dispose() {}

// QueryData answers every query with a per-query error until tracing from
// Grafana lands; one query's failure never hides another's result.
func (d *Datasource) QueryData(ctx context.Context, req *backend.QueryDataRequest) (*backend.QueryDataResponse, error) {
	resp := backend.NewQueryDataResponse()
	for _, q := range req.Queries {
		if d.settingsErr != nil {
			resp.Responses[q.RefID] = backend.ErrDataResponseWithSource(backend.StatusBadRequest, backend.ErrorSourceDownstream,
				fmt.Sprintf("query %s: %v", q.RefID, d.settingsErr))
			continue
		}
		resp.Responses[q.RefID] = backend.ErrDataResponseWithSource(backend.StatusNotImplemented, backend.ErrorSourcePlugin,
			fmt.Sprintf("query %s: tracing queries from Grafana is not implemented yet in this version of QueryReplay", q.RefID))
	}
	return resp, nil
}

// CheckHealth validates the settings and, when they are valid, logs in to
// SQL Server and runs SELECT 1 within the connect timeout.
func (d *Datasource) CheckHealth(ctx context.Context, _ *backend.CheckHealthRequest) (*backend.CheckHealthResult, error) {
	if d.settingsErr != nil {
		return &backend.CheckHealthResult{Status: backend.HealthStatusError, Message: d.settingsErr.Error()}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, d.settings.ConnectTimeout())
	defer cancel()
	if err := ping(ctx, d.settings.DSN()); err != nil {
		log.DefaultLogger.FromContext(ctx).Warn("health check failed", "target", d.settings.Redacted(), "error", err)
		return &backend.CheckHealthResult{
			Status:  backend.HealthStatusError,
			Message: fmt.Sprintf("cannot connect to SQL Server at %s: %v", d.settings.Redacted(), err),
		}, nil
	}
	return &backend.CheckHealthResult{
		Status:  backend.HealthStatusOk,
		Message: fmt.Sprintf("connected to SQL Server at %s", d.settings.Redacted()),
	}, nil
}

func ping(ctx context.Context, dsn string) error {
	db, err := sql.Open("sqlserver", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	var one int
	if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return err
	}
	if one != 1 {
		return fmt.Errorf("SELECT 1 returned %d", one)
	}
	return nil
}

// Package dashgen builds QueryReplay's shipped Grafana dashboards — the
// exporter's health, spills, waits and storage dashboards and the replay
// dashboard — with grafana-foundation-sdk, so that they are typed Go rather
// than hand-edited JSON. TestDashboardsAreCurrent writes them to
// dashboards/*.json (-update) and fails when the files differ from what
// this package builds; the files are what Grafana's provisioning loads.
//
// Contracts it follows (docs/design/contracts.md §2, §3): the Prometheus datasource uid is
// "prometheus", the QueryReplay datasource uid "queryreplay"; the replay
// dashboard has uid "queryreplay-replay", text variables sql, query_hash
// and database and the datasource variable replay_ds, and every link to it
// is /d/queryreplay-replay?var-query_hash=…&var-database=…&var-replay_ds=…&queryreplayRun=1
// (the query's hash, never its text; the datasource of its server; and
// the link's ask to run, since a trace runs only when asked,
// docs/frames.md §1).
//
// What it must not do: invent metric names (every expression names series
// pkg/exporter publishes, which the tests check against a live exposition
// and a real Prometheus), or carry any secret.
package dashgen

import (
	"encoding/json"
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// Datasource and dashboard identities (docs/design/contracts.md §2, §3).
const (
	PrometheusUID   = "prometheus"
	DatasourceVar   = "datasource" // the exporter dashboards' Prometheus datasource variable
	QueryReplayUID  = "queryreplay"
	QueryReplayType = "queryreplay-sqlserver-datasource"
	ReplayPanelType = "queryreplay-replay-panel"
	ReplayUID       = "queryreplay-replay"
	OverviewUID     = "queryreplay-exporter-overview"
	SpillsUID       = "queryreplay-exporter-spills"
	WaitsUID        = "queryreplay-exporter-waits"
	StorageUID      = "queryreplay-exporter-storage"
	dashboardTag    = "queryreplay"
	// ReplayDatasourceVar is the replay dashboard's QueryReplay datasource
	// variable: links set it to the datasource of the target the query ran
	// on (the exporter's targets[].grafana_datasource).
	ReplayDatasourceVar = "replay_ds"
	// RunLinkParam is the URL parameter by which a link asks the replay
	// dashboard's trace to run (src/datasource/datasource.ts RUN_LINK_PARAM).
	RunLinkParam       = "queryreplayRun"
	replayLinkTemplate = "/d/" + ReplayUID + "?var-query_hash=${__data.fields.query_hash}&var-database=${__data.fields.database:percentencode}" +
		"&var-" + ReplayDatasourceVar + "=${__data.fields.grafana_datasource:percentencode}&" + RunLinkParam + "=1"
)

// File is one dashboard and the name of its JSON file in dashboards/.
type File struct {
	Name      string
	Dashboard dashboard.Dashboard
}

// All builds every shipped dashboard.
func All() ([]File, error) {
	builders := []struct {
		name string
		b    *dashboard.DashboardBuilder
	}{
		{"exporter-overview.json", overview()},
		{"exporter-spills.json", spills()},
		{"exporter-waits.json", waits()},
		{"exporter-storage.json", storage()},
		{"replay.json", replay()},
	}
	out := make([]File, 0, len(builders))
	for _, d := range builders {
		dash, err := d.b.Build()
		if err != nil {
			return nil, fmt.Errorf("dashboard %s: %w", d.name, err)
		}
		numberPanels(&dash)
		out = append(out, File{Name: d.name, Dashboard: dash})
	}
	return out, nil
}

// numberPanels gives every panel and row a stable id, 1, 2, … in order
// (Grafana would number them itself, but alert rules link to a panel by
// id).
func numberPanels(d *dashboard.Dashboard) {
	var id uint32
	next := func() *uint32 { id++; v := id; return &v }
	for _, p := range d.Panels {
		switch {
		case p.Panel != nil:
			p.Panel.Id = next()
		case p.RowPanel != nil:
			p.RowPanel.Id = *next()
			for i := range p.RowPanel.Panels {
				p.RowPanel.Panels[i].Id = next()
			}
		}
	}
}

// JSON renders a dashboard as Grafana's provisioning reads it.
func JSON(d dashboard.Dashboard) ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// promDS refers to the Prometheus the datasource variable chooses: an
// installation's own Prometheus has its own uid, so a hard-coded one would
// read "datasource not found" wherever the dashboard is imported.
func promDS() common.DataSourceRef {
	return common.DataSourceRef{Type: ref("prometheus"), Uid: ref("${" + DatasourceVar + "}")}
}

// datasourceVariable lists the Prometheus datasources; it starts on the
// provisioned one (uid "prometheus") when that exists.
func datasourceVariable() *dashboard.DatasourceVariableBuilder {
	return dashboard.NewDatasourceVariableBuilder(DatasourceVar).Label("Prometheus").Type("prometheus").
		Current(dashboard.VariableOption{Text: dashboard.StringOrArrayOfString{String: ref("Prometheus")},
			Value: dashboard.StringOrArrayOfString{String: ref(PrometheusUID)}})
}

func ref[T any](v T) *T { return &v }

// base is a dashboard with the exporter's variables and the links between
// the QueryReplay dashboards.
func base(uid, title, description string, database bool) *dashboard.DashboardBuilder {
	b := dashboard.NewDashboardBuilder(title).Uid(uid).Description(description).Tags([]string{dashboardTag, "sqlserver", "prometheus"}).
		Refresh("30s").Time("now-1h", "now").Timezone("browser").Tooltip(dashboard.DashboardCursorSyncCrosshair).
		Link(dashboard.NewDashboardLinkBuilder("QueryReplay").Type(dashboard.DashboardLinkTypeDashboards).Tags([]string{dashboardTag}).
			AsDropdown(true).IncludeVars(true).KeepTime(true)).
		WithVariable(datasourceVariable()).
		WithVariable(dashboard.NewQueryVariableBuilder("target").Label("Target").Datasource(promDS()).
			Query(dashboard.StringOrMap{String: ref("label_values(queryreplay_up, target)")}).
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged).Multi(true).IncludeAll(true).AllValue(".*").Sort(dashboard.VariableSortAlphabeticalAsc))
	if database {
		b = b.WithVariable(dashboard.NewQueryVariableBuilder("database").Label("Database").Datasource(promDS()).
			Query(dashboard.StringOrMap{String: ref(`label_values(queryreplay_spills_total{target=~"$target"}, database)`)}).
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged).Multi(true).IncludeAll(true).AllValue(".*").Sort(dashboard.VariableSortAlphabeticalAsc))
	}
	return b
}

func query(expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().Datasource(promDS()).Expr(expr).LegendFormat(legend).Range()
}

func series(title, unit, description string, h, w uint32, targets ...cog.Builder[variants.Dataquery]) *timeseries.PanelBuilder {
	p := timeseries.NewPanelBuilder().Title(title).Description(description).Datasource(promDS()).Unit(unit).Height(h).Span(w).
		FillOpacity(10).LineWidth(1)
	for _, t := range targets {
		p = p.WithTarget(t)
	}
	return p
}

func statPanel(title, unit, description, expr string, w uint32) *stat.PanelBuilder {
	return stat.NewPanelBuilder().Title(title).Description(description).Datasource(promDS()).Unit(unit).Height(4).Span(w).
		WithTarget(prometheus.NewDataqueryBuilder().Datasource(promDS()).Expr(expr).Instant())
}

// redAtOne colours a stat green at 0 and red from 1: a count of trouble
// (targets down, events lost).
func redAtOne(p *stat.PanelBuilder) *stat.PanelBuilder {
	return p.Thresholds(dashboard.NewThresholdsConfigBuilder().Mode(dashboard.ThresholdsModeAbsolute).Steps([]dashboard.Threshold{
		{Value: nil, Color: "green"}, {Value: ref(1.0), Color: "red"},
	}))
}

// organize hides the technical columns of an instant table and renames the
// value column.
func organize(value string, hide ...string) dashboard.DataTransformerConfig {
	exclude := map[string]bool{"Time": true, "__name__": true}
	for _, h := range hide {
		exclude[h] = true
	}
	return dashboard.DataTransformerConfig{Id: "organize", Options: map[string]any{
		"excludeByName": exclude,
		"renameByName":  map[string]string{"Value": value},
	}}
}

// Selectors of the variables.
const (
	sel   = `target=~"$target"`
	selDB = `target=~"$target",database=~"$database"`
)

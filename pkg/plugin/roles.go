package plugin

import (
	"context"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// Who may do what (docs/security.md). Grafana authorises /api/ds/query and
// the resource calls with the datasources:query permission, which every
// Viewer holds
// (https://grafana.com/docs/grafana/latest/administration/roles-and-permissions/access-control/rbac-fixed-basic-role-definitions/),
// so the plugin itself decides from the request's user
// (backend.PluginContext.User: login and org role) whether it may run SQL
// through the datasource's login, and whose stored traces it may see.

// Grafana's basic org roles, as backend.User.Role carries them.
const (
	RoleViewer = "Viewer"
	RoleEditor = "Editor"
	RoleAdmin  = "Admin"
	// DefaultMinTraceRole is minTraceRole when the setting is empty.
	DefaultMinTraceRole = RoleEditor
)

// roleRanks orders the roles; any other role ("None", "", a custom one)
// ranks below Viewer.
var roleRanks = map[string]int{RoleViewer: 1, RoleEditor: 2, RoleAdmin: 3}

// alertingLogin is the service identity Grafana's alert scheduler
// evaluates rules as: a service account with login "grafana_scheduler" and
// org role Admin (Grafana pkg/services/ngalert/schedule/schedule.go,
// SchedulerUserFor). It reaches the plugin as PluginContext.User.
const alertingLogin = "grafana_scheduler"

// caller is the Grafana user behind one request.
type caller struct {
	login string
	role  string
}

// callerOf reads the request's user; a request without one (no Grafana in
// front) has no role and may only read what needs no role.
func callerOf(u *backend.User) caller {
	if u == nil {
		return caller{}
	}
	return caller{login: u.Login, role: u.Role}
}

// callerFromContext is the user of a resource call: the SDK puts the
// request's plugin context (and its user) into the handler's context.
func callerFromContext(ctx context.Context) caller {
	if u := backend.PluginConfigFromContext(ctx).User; u != nil {
		return callerOf(u)
	}
	return callerOf(backend.UserFromContext(ctx))
}

func (c caller) rank() int { return roleRanks[c.role] }

// alerting tells whether the caller is alerting's scheduler identity.
func (c caller) alerting() bool { return c.login == alertingLogin && c.role == RoleAdmin }

// minTraceRole is the setting with its default.
func (s Settings) minTraceRole() string { return cmpOr(s.MinTraceRole, DefaultMinTraceRole) }

// mayTrace: run traces, upload, list everyone's traces.
func (s Settings) mayTrace(c caller) bool { return c.rank() >= roleRanks[s.minTraceRole()] }

// mayProbe: probes are what alert rules evaluate, so alerting's identity
// may run them whatever minTraceRole says.
func (s Settings) mayProbe(c caller) bool { return s.mayTrace(c) || c.alerting() }

// mayTouch: download or delete a stored trace owned by owner — one's own
// (a trace without an owner belongs to nobody), or any as an Admin.
func (c caller) mayTouch(owner string) bool {
	return c.rank() >= roleRanks[RoleAdmin] || (c.login != "" && c.login == owner)
}

// roleRefusal says why the caller may not run what, and what they may do.
func (s Settings) roleRefusal(c caller, what string) error {
	role := c.role
	if role == "" {
		role = "no role"
	}
	return pluginErr(backend.StatusForbidden,
		"%s refused: your Grafana role (%s) may not run SQL on this datasource; the datasource setting minTraceRole is %s. Saved traces (bundle, view, compare) stay open to you",
		what, role, s.minTraceRole())
}

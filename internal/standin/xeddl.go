package standin

import (
	"strings"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/standin/xevents"
	"github.com/queryreplay/queryreplay/internal/tds"
)

// Event session DDL: the behaviour of CREATE/ALTER/DROP EVENT SESSION
// (learn.microsoft.com/en-us/sql/t-sql/statements/{create,alter,drop}-event-session-transact-sql).
// Permissions: permissions.go (mayManageSession).

func (x *execCtx) findSession(name string, db bool) *xevents.Session {
	for _, s := range x.srv.sessions {
		if strings.EqualFold(s.Name, name) && s.Database == db {
			return s
		}
	}
	return nil
}

func (x *execCtx) createSession(st *sqlfront.CreateEventSessionStmt) error {
	if err := x.srv.checkSessionScope(st.Database); err != nil {
		return err
	}
	if !x.mayManageSession(st.Database, xeCreate) {
		return errCreateSessionDenied()
	}
	if err := x.srv.checkSessionDatabase(x.conn.db.Name); err != nil {
		return err
	}
	if x.findSession(st.Name, st.Database) != nil {
		return errXESessionExists(st.Name)
	}
	sess, err := xevents.SessionFromDDL(st, x.srv.persona)
	if err != nil {
		return err
	}
	x.srv.nextSessionID++
	sess.ID = x.srv.nextSessionID
	x.srv.sessions = append(x.srv.sessions, sess)
	return x.done(tds.CmdNone, tds.NoCount)
}

func (x *execCtx) alterSession(st *sqlfront.AlterEventSessionStmt) error {
	if err := x.srv.checkSessionScope(st.Database); err != nil {
		return err
	}
	sess := x.findSession(st.Name, st.Database)
	if sess == nil || !x.mayManageSession(st.Database, alterOps(st)...) {
		return errXESessionMissing("alter", st.Name)
	}
	switch st.State {
	case "START":
		if sess.Running {
			return errXEAlreadyStarted()
		}
		for _, t := range sess.Targets {
			if t.Name != "event_file" || strings.HasPrefix(strings.ToLower(t.Filename), "https://") {
				continue // blob storage (Azure) always "exists"
			}
			base, _ := xevents.ResolveXELPath(t.Filename, t.LogDir)
			dir := base[:strings.LastIndexAny(base, `/\`)+1]
			if !x.srv.directoryExists(dir) {
				// what SQL Server reports when the event file cannot be created
				return sqlfront.NewError(25602, 17, "The target, \"5B2DA06D-898A-43C8-9309-39BBBE93EBBD.package0.event_file\", encountered a configuration error during initialization.  Object cannot be added to the event session. (null)")
			}
		}
		sess.Start(x.srv.now(), x.srv.files)
		return x.done(tds.CmdNone, tds.NoCount)
	case "STOP":
		if !sess.Running {
			return errXEAlreadyStopped()
		}
		sess.Stop(x.srv.files)
		return x.done(tds.CmdNone, tds.NoCount)
	}
	// validate everything on a copy first: a failing ALTER changes nothing
	trial := *sess
	trial.Events = append([]*xevents.SessionEvent(nil), sess.Events...)
	trial.Targets = append([]*xevents.Target(nil), sess.Targets...)
	for _, d := range st.DropEvents {
		found := -1
		for i, e := range trial.Events {
			if e.Name == strings.ToLower(d.Name) {
				found = i
			}
		}
		if found < 0 {
			return errXENotInSession("event", xevents.Qualify(d.Package, d.Name))
		}
		trial.Events = append(trial.Events[:found], trial.Events[found+1:]...)
	}
	for _, d := range st.DropTargets {
		found := -1
		for i, t := range trial.Targets {
			if t.Name == strings.ToLower(d.Name) {
				found = i
			}
		}
		if found < 0 {
			return errXENotInSession("target", xevents.Qualify(d.Package, d.Name))
		}
		trial.Targets = append(trial.Targets[:found], trial.Targets[found+1:]...)
	}
	if err := trial.AddEvents(st.AddEvents); err != nil {
		return err
	}
	if len(st.AddTargets) > 0 && sess.Running {
		for _, t := range st.AddTargets {
			if err := trial.AddTargets([]sqlfront.XETargetSpec{t}); err != nil {
				return err
			}
		}
		for _, t := range trial.Targets[len(trial.Targets)-len(st.AddTargets):] {
			if t.Name == "event_file" {
				t.Rollover(x.srv.now(), x.srv.files)
			}
		}
	} else if err := trial.AddTargets(st.AddTargets); err != nil {
		return err
	}
	if err := trial.ApplyOptions(st.Options); err != nil {
		return err
	}
	*sess = trial
	return x.done(tds.CmdNone, tds.NoCount)
}

func (x *execCtx) dropSession(st *sqlfront.DropEventSessionStmt) error {
	if err := x.srv.checkSessionScope(st.Database); err != nil {
		return err
	}
	sess := x.findSession(st.Name, st.Database)
	if sess == nil || !x.mayManageSession(st.Database, xeDrop) {
		return errXESessionMissing("drop", st.Name)
	}
	if sess.Running {
		sess.Stop(x.srv.files)
	}
	for i, s := range x.srv.sessions {
		if s == sess {
			x.srv.sessions = append(x.srv.sessions[:i], x.srv.sessions[i+1:]...)
			break
		}
	}
	return x.done(tds.CmdNone, tds.NoCount)
}

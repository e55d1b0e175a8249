package standin

import (
	"strings"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/tds"
)

// Event session DDL: the behaviour of CREATE/ALTER/DROP EVENT SESSION
// (learn.microsoft.com/en-us/sql/t-sql/statements/{create,alter,drop}-event-session-transact-sql).
// Permission: ALTER ANY EVENT SESSION (sysadmin here).

func (x *execCtx) findSession(name string, db bool) *xeSession {
	for _, s := range x.srv.sessions {
		if strings.EqualFold(s.name, name) && s.database == db {
			return s
		}
	}
	return nil
}

func (x *execCtx) createSession(st *sqlfront.CreateEventSessionStmt) error {
	if !x.conn.sysadmin {
		return sqlfront.NewError(15151, 16, "Cannot create the event session '%s', because it does not exist or you do not have permission.", st.Name)
	}
	if err := x.srv.checkSessionScope(st.Database); err != nil {
		return err
	}
	if x.findSession(st.Name, st.Database) != nil {
		return errXESessionExists(st.Name)
	}
	sess, err := sessionFromDDL(st, x.srv.persona)
	if err != nil {
		return err
	}
	x.srv.nextSessionID++
	sess.id = x.srv.nextSessionID
	x.srv.sessions = append(x.srv.sessions, sess)
	return x.done(tds.CmdNone, tds.NoCount)
}

func (x *execCtx) alterSession(st *sqlfront.AlterEventSessionStmt) error {
	if err := x.srv.checkSessionScope(st.Database); err != nil {
		return err
	}
	sess := x.findSession(st.Name, st.Database)
	if sess == nil || !x.conn.sysadmin {
		return errXESessionMissing("alter", st.Name)
	}
	switch st.State {
	case "START":
		if sess.running {
			return errXEAlreadyStarted()
		}
		for _, t := range sess.targets {
			if t.name != "event_file" || strings.HasPrefix(strings.ToLower(t.filename), "https://") {
				continue // blob storage (Azure) always "exists"
			}
			base, _ := resolveXELPath(t.filename, t.logDir)
			dir := base[:strings.LastIndexAny(base, `/\`)+1]
			if !x.srv.directoryExists(dir) {
				// what SQL Server reports when the event file cannot be created
				return sqlfront.NewError(25602, 17, "The target, \"5B2DA06D-898A-43C8-9309-39BBBE93EBBD.package0.event_file\", encountered a configuration error during initialization.  Object cannot be added to the event session. (null)")
			}
		}
		sess.start(x.srv.now(), x.srv.files)
		return x.done(tds.CmdNone, tds.NoCount)
	case "STOP":
		if !sess.running {
			return errXEAlreadyStopped()
		}
		sess.stop(x.srv.files)
		return x.done(tds.CmdNone, tds.NoCount)
	}
	// validate everything on a copy first: a failing ALTER changes nothing
	trial := *sess
	trial.events = append([]*xeSessionEvent(nil), sess.events...)
	trial.targets = append([]*xeTarget(nil), sess.targets...)
	for _, d := range st.DropEvents {
		found := -1
		for i, e := range trial.events {
			if e.name == strings.ToLower(d.Name) {
				found = i
			}
		}
		if found < 0 {
			return errXENotInSession("event", qualify(d.Package, d.Name))
		}
		trial.events = append(trial.events[:found], trial.events[found+1:]...)
	}
	for _, d := range st.DropTargets {
		found := -1
		for i, t := range trial.targets {
			if t.name == strings.ToLower(d.Name) {
				found = i
			}
		}
		if found < 0 {
			return errXENotInSession("target", qualify(d.Package, d.Name))
		}
		trial.targets = append(trial.targets[:found], trial.targets[found+1:]...)
	}
	if err := trial.addEvents(st.AddEvents); err != nil {
		return err
	}
	if len(st.AddTargets) > 0 && sess.running {
		for _, t := range st.AddTargets {
			if err := trial.addTargets([]sqlfront.XETargetSpec{t}); err != nil {
				return err
			}
		}
		for _, t := range trial.targets[len(trial.targets)-len(st.AddTargets):] {
			if t.name == "event_file" {
				t.rollover(x.srv.now(), x.srv.files)
			}
		}
	} else if err := trial.addTargets(st.AddTargets); err != nil {
		return err
	}
	if err := trial.applyOptions(st.Options); err != nil {
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
	if sess == nil || !x.conn.sysadmin {
		return errXESessionMissing("drop", st.Name)
	}
	if sess.running {
		sess.stop(x.srv.files)
	}
	for i, s := range x.srv.sessions {
		if s == sess {
			x.srv.sessions = append(x.srv.sessions[:i], x.srv.sessions[i+1:]...)
			break
		}
	}
	return x.done(tds.CmdNone, tds.NoCount)
}

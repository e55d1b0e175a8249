package standin

import (
	"context"
	"os"
	"testing"

	"github.com/queryreplay/queryreplay/internal/tds"
)

// recorder is a tds.ResultWriter that keeps what a handler writes.
type recorder struct {
	sets  []*resultSet
	infos []*tds.Error
	errs  []*tds.Error
	dones []tds.Done
	tran  []string
	dbs   []string
}

type resultSet struct {
	cols []tds.Column
	rows [][]any
}

func (r *recorder) Columns(cols ...tds.Column) error {
	r.sets = append(r.sets, &resultSet{cols: cols})
	return nil
}
func (r *recorder) Row(values ...any) error {
	s := r.sets[len(r.sets)-1]
	s.rows = append(s.rows, values)
	return nil
}
func (r *recorder) Done(d tds.Done) error         { r.dones = append(r.dones, d); return nil }
func (r *recorder) Error(e *tds.Error) error      { r.errs = append(r.errs, e); return nil }
func (r *recorder) Info(m *tds.Error) error       { r.infos = append(r.infos, m); return nil }
func (r *recorder) SetDatabase(name string) error { r.dbs = append(r.dbs, name); return nil }
func (r *recorder) BeginTransaction() (uint64, error) {
	r.tran = append(r.tran, "begin")
	return 1, nil
}
func (r *recorder) CommitTransaction() error    { r.tran = append(r.tran, "commit"); return nil }
func (r *recorder) RollbackTransaction() error  { r.tran = append(r.tran, "rollback"); return nil }
func (r *recorder) ReturnStatus(int32) error    { return nil }
func (r *recorder) ReturnValue(tds.Param) error { return nil }
func (r *recorder) Flush() error                { return nil }

// session logs a connection into srv directly (no network).
func session(t testing.TB, srv *Server, spid uint16) *connState {
	t.Helper()
	res, err := srv.Login(context.Background(), &tds.Session{SPID: spid, User: "sa"}, &tds.LoginRequest{User: srv.opts.User, Password: srv.opts.Password, AppName: "unit-test"})
	if err != nil {
		t.Fatal(err)
	}
	return res.Session.(*connState)
}

// run executes a batch and returns the recorder and the first error: the
// one that ended the batch, or else the first statement-level error sent.
func run(c *connState, sql string) (*recorder, *tds.Error) {
	r := &recorder{}
	err := c.Batch(context.Background(), &tds.Batch{SQL: sql}, r)
	if err == nil {
		if len(r.errs) > 0 {
			return r, r.errs[0]
		}
		return r, nil
	}
	if e, ok := err.(*tds.Error); ok {
		return r, e
	}
	panic(err)
}

func mustRun(t testing.TB, c *connState, sql string) *recorder {
	t.Helper()
	r, err := run(c, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return r
}

// allowSkip reports whether tests may skip when an external tool is missing.
func allowSkip() bool { return os.Getenv("QUERYREPLAY_ALLOW_SKIP") == "1" }

func tdsSession(spid uint16) *tds.Session { return &tds.Session{SPID: spid} }

func loginReq(user, pw string) *tds.LoginRequest {
	return &tds.LoginRequest{User: user, Password: pw, AppName: "unit-test"}
}

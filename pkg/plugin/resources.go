package plugin

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/sizelimit"
	"github.com/queryreplay/queryreplay/pkg/tracestore"
)

// CallResource serves docs/frames.md §5.
func (d *Datasource) CallResource(ctx context.Context, req *backend.CallResourceRequest, sender backend.CallResourceResponseSender) error {
	return d.res.CallResource(ctx, req, sender)
}

func (d *Datasource) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /databases", d.ready(d.databases))
	mux.HandleFunc("GET /traces", d.ready(d.listTraces))
	mux.HandleFunc("POST /traces", d.ready(d.tracersOnly(d.uploadTrace)))
	mux.HandleFunc("DELETE /traces/{id}", d.ready(d.owner(d.deleteTrace)))
	mux.HandleFunc("GET /traces/{id}/bundle", d.ready(d.owner(d.downloadTrace)))
	mux.HandleFunc("POST /live/{id}/cancel", d.ready(d.cancelLive))
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, d.health(r.Context())) })
	return mux
}

type apiError struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, status int, format string, args ...any) {
	writeJSON(w, status, apiError{Error: fmt.Sprintf(format, args...)})
}

// ready refuses resources while the settings are invalid.
func (d *Datasource) ready(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if d.settingsErr != nil {
			writeErr(w, http.StatusBadRequest, "%v", d.settingsErr)
			return
		}
		h(w, r)
	}
}

func storeStatus(err error) int {
	if errors.Is(err, tracestore.ErrNotFound) {
		return http.StatusNotFound
	}
	return http.StatusInternalServerError
}

// Database is one entry of GET databases.
type Database struct {
	Name       string `json:"name"`
	DatabaseID int64  `json:"databaseId"`
	State      string `json:"state"`
}

// sqlDatabases lists databases for the editor's picker. sys.databases shows
// the login the databases it may see (VIEW ANY DATABASE, granted to public
// by default):
// https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-databases-transact-sql
const sqlDatabases = "SELECT name, database_id, state_desc FROM sys.databases ORDER BY name"

func (d *Datasource) databases(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), d.settings.ConnectTimeout())
	defer cancel()
	rows, err := d.db.QueryContext(ctx, sqlDatabases)
	if err != nil {
		writeErr(w, http.StatusBadGateway, "list databases on %s: %s", d.settings.Redacted(), describe(err))
		return
	}
	defer rows.Close()
	out := []Database{}
	for rows.Next() {
		var db Database
		var state sql.NullString
		if err := rows.Scan(&db.Name, &db.DatabaseID, &state); err != nil {
			writeErr(w, http.StatusBadGateway, "list databases: %s", describe(err))
			return
		}
		db.State = state.String
		if db.State == "ONLINE" {
			out = append(out, db)
		}
	}
	if err := rows.Err(); err != nil {
		writeErr(w, http.StatusBadGateway, "list databases: %s", describe(err))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// listTraces lists the stored traces: all of them for a role that may
// trace, else only the caller's own (a statement is the caller's data).
func (d *Datasource) listTraces(w http.ResponseWriter, r *http.Request) {
	list, err := d.store.List(r.Context())
	if err != nil {
		writeErr(w, http.StatusInternalServerError, "list traces: %v", err)
		return
	}
	who := callerFromContext(r.Context())
	out := []tracestore.Info{}
	for _, i := range list {
		if d.settings.mayTrace(who) || who.login != "" && i.Owner == who.login {
			out = append(out, i)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// tracersOnly admits callers whose role may trace (minTraceRole); an upload
// adds to the shared store, whose retention may then remove others' traces.
// The caller's login travels in the context as the owner of what is stored.
func (d *Datasource) tracersOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		who := callerFromContext(r.Context())
		if !d.settings.mayTrace(who) {
			writeErr(w, http.StatusForbidden, "%v", d.settings.roleRefusal(who, "upload"))
			return
		}
		h(w, r.WithContext(tracestore.WithOwner(r.Context(), who.login)))
	}
}

// owner admits the owner of trace {id} or an Admin.
func (d *Datasource) owner(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		info, err := d.store.Stat(r.Context(), r.PathValue("id"))
		if err != nil {
			writeErr(w, storeStatus(err), "trace: %v", err)
			return
		}
		if who := callerFromContext(r.Context()); !who.mayTouch(info.Owner) {
			writeErr(w, http.StatusForbidden,
				"trace %s belongs to another user: only its owner or an org Admin may download or delete it", info.ID)
			return
		}
		h(w, r)
	}
}

func (d *Datasource) deleteTrace(w http.ResponseWriter, r *http.Request) {
	if err := d.store.Delete(r.Context(), r.PathValue("id")); err != nil {
		writeErr(w, storeStatus(err), "delete trace: %v", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (d *Datasource) downloadTrace(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	b, err := d.store.Bundle(r.Context(), id)
	if err != nil {
		writeErr(w, storeStatus(err), "download trace: %v", err)
		return
	}
	w.Header().Set("Content-Type", "application/gzip")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", id+".json.gz"))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// MaxUploadBytes bounds one upload's body as sent, whatever
// traceStore.maxBundleMB says: the body arrives in one gRPC message, and the
// plugin's receive limit (GRPCSettings) is fixed when the process starts. It
// is the largest a setting lets any request be (maxQueryMB and the default
// maxBundleMB: 256); a bundle bigger than that uploads as the gzip file
// `queryreplay trace -o x.json.gz` writes, and is bounded decompressed by
// traceStore.maxBundleMB alone (docs/frames.md §5).
const MaxUploadBytes = 256 << 20

// grpcEnvelope is room for the rest of a message (plugin context, headers,
// the query model around its batch) besides the body or query it carries.
const grpcEnvelope = 1 << 20

// GRPCSettings raises the plugin's gRPC receive limit from the SDK's 16 MiB
// to MaxUploadBytes plus its envelope: without it Grafana's upload of a
// bundle over 16 MiB fails in the transport ("grpc: received message larger
// than max") before the plugin sees it. gRPC allocates for the message
// received, not for the limit.
func GRPCSettings() backend.GRPCSettings {
	return backend.GRPCSettings{MaxReceiveMsgSize: MaxUploadBytes + grpcEnvelope}
}

// uploadLimit bounds an upload's body as sent: traceStore.maxBundleMB, and
// never more than MaxUploadBytes.
func uploadLimit(o bundle.ReadOptions) sizelimit.Error {
	if o.MaxBytes > MaxUploadBytes {
		// no setting raises it: the gzip file is the way past it
		return sizelimit.Error{Limit: MaxUploadBytes,
			What: "the uploaded bundle as sent (upload it gzip-compressed, as `queryreplay trace -o x.json.gz` writes it)"}
	}
	return sizelimit.Error{What: "the uploaded bundle", Limit: o.MaxBytes, Knob: o.Knob}
}

// uploadTrace stores a bundle (JSON, or gzip JSON as the CLI writes it)
// under a new id. The body as sent is bounded by uploadLimit and the JSON
// once decompressed by traceStore.maxBundleMB.
func (d *Datasource) uploadTrace(w http.ResponseWriter, r *http.Request) {
	o := d.settings.TraceStore.bundleLimit()
	body, err := readBody(w, r, uploadLimit(o))
	if err != nil {
		writeErr(w, bodyStatus(err), "read upload: %v", err)
		return
	}
	b, err := bundle.ReadLimit(bytes.NewReader(body), o)
	if err != nil {
		writeErr(w, bodyStatus(err), "%v", err)
		return
	}
	if b.Trace == nil {
		writeErr(w, http.StatusBadRequest, "the bundle's trace is not a timeline this version can read")
		return
	}
	e, err := d.store.Put(r.Context(), b)
	if err != nil {
		writeErr(w, http.StatusInternalServerError, "store the bundle: %v", err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]string{"traceId": e.ID})
}

// readBody reads a request body of at most limit bytes (http.MaxBytesReader
// also tells the server to close the connection rather than drain the
// rest); more is a *sizelimit.Error.
func readBody(w http.ResponseWriter, r *http.Request, limit sizelimit.Error) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit.Limit))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, &limit
	}
	return body, err
}

// bodyStatus is 413 for an input over its size limit, else 400.
func bodyStatus(err error) int {
	if errors.Is(err, sizelimit.ErrTooLarge) {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}

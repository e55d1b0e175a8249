package standin

import (
	"sort"

	"github.com/queryreplay/queryreplay/internal/standin/engine"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/tds"
)

// dmExecConnections implements sys.dm_exec_connections
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-connections-transact-sql):
// one row per connection, with how it is protected (encrypt_option TRUE
// for TLS over the whole connection, FALSE for none or a login-only
// handshake), the protocol version and packet size. VIEW SERVER STATE is
// needed to see other sessions' rows; without it a login sees its own.
func dmExecConnections(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("session_id", engine.TInt, "net_transport", engine.TNVar(40), "protocol_type", engine.TNVar(40), "protocol_version", engine.TInt,
		"encrypt_option", engine.TNVar(40), "auth_scheme", engine.TNVar(40), "net_packet_size", engine.TInt, "client_net_address", engine.TNVar(48))}
	var ids []int
	all := x.checkViewState() == nil
	for id := range x.srv.conns {
		if id == x.conn.spid || all {
			ids = append(ids, id)
		}
	}
	sort.Ints(ids)
	for _, id := range ids {
		s := x.srv.conns[id].tsess
		encrypt := "FALSE"
		if s.Encryption == tds.ConnEncrypted || s.Encryption == tds.ConnStrict {
			encrypt = "TRUE"
		}
		addr := ""
		if s.RemoteAddr != nil {
			addr = s.RemoteAddr.String()
		}
		r.Rows = append(r.Rows, []any{int64(id), "TCP", "TSQL", int64(int32(s.TDSVersion)), encrypt, "SQL", int64(s.PacketSize), addr})
	}
	return r, nil
}

// Package tds is a TDS 7.4 server: the wire protocol of SQL Server, served on
// loopback so that the real go-mssqldb driver and FreeTDS clients can talk to
// QueryReplay's SQL Server stand-in. It is split like net/http: Server owns
// listeners, connections, packets and tokens; a Handler (internal/standin, or
// a test double) decides what every login, batch, RPC and transaction request
// does, writing results through a ResultWriter. See handler.go for the
// contract.
//
// What the server does by itself:
//   - PRELOGIN with the ENCRYPTION negotiation of MS-TDS 2.2.6.5 and TLS
//     (tls.go): with Server.TLSConfig set, the TDS 7.x handshake inside
//     PRELOGIN packets, login-only encryption when both sides say
//     ENCRYPT_OFF, whole-connection encryption otherwise, TDS 8.0 strict
//     mode (TLS on the bare socket, ALPN tds/8.0), and the Force Encryption
//     / Force Strict Encryption policies (Server.Encryption);
//     GenerateCertificate makes a CA and server certificate at start.
//     Without TLSConfig: ENCRYPT_NOT_SUP, no TLS;
//   - LOGIN7 decoding (password de-obfuscated), the login reply (ENVCHANGE
//     database / collation / language / packet size, INFO 5701/5703,
//     LOGINACK) and error 18456 for refused logins;
//   - SPIDs from 51 up, one per connection, in every packet header;
//   - packets split at the negotiated size (512-32767) on the way out and
//     reassembled on the way in;
//   - ALL_HEADERS, SQL batch, RPC (by name or ProcID, parameters decoded
//     from TYPE_INFO) and transaction-manager decoding;
//   - DONE / DONEINPROC / DONEPROC bookkeeping (MORE, COUNT, ERROR, INXACT,
//     ATTN), RETURNSTATUS, the transaction descriptor ENVCHANGEs 8/9/10;
//   - ATTENTION: cancels the running handler's context, ends the response it
//     was producing and acknowledges with DONE_ATTN in a message of its own;
//   - Shutdown and Close like http.Server; malformed input closes only that
//     connection, with the reason logged through slog.
//
// What it must NOT do: interpret SQL, keep catalogs or data, or decide
// behaviour (that is internal/standin's job); do MARS, SSPI/Kerberos,
// federated authentication, bulk load, cursors or table-valued parameters.
// It logs no passwords, SQL text or result values.
//
// Why hand-written: no usable Go TDS server library exists (go-mssqldb's own
// fakes are unexported test code; the few Go servers found are unlicensed
// hobby projects or AGPL proxies; see docs/design/standin-protocol.md
// §1). The protocol follows [MS-TDS]
// (https://learn.microsoft.com/en-us/openspecs/windows_protocols/ms-tds/) and
// the facts verified against go-mssqldb v1.11.2 and FreeTDS 1.3 recorded in
// docs/design/standin-protocol.md; comments marked [verified] come from there.
package tds

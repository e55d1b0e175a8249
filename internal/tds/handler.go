package tds

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
)

// This file is the contract between the protocol server (this package) and the
// behaviour behind it (internal/standin). It changes only by addition.
//
// Life of a connection:
//
//  1. The client connects; the server answers PRELOGIN (encryption NOT_SUP) and
//     reads LOGIN7. It allocates a SPID (>= 51) and fills in a *Session.
//  2. Handler.Login decides. On success it returns a LoginResult whose
//     SessionHandler serves every later request of that connection; the server
//     then sends ENVCHANGE database/collation/language, INFO 5701, LOGINACK,
//     ENVCHANGE packet size and DONE.
//  3. Each SQL batch, RPC or transaction-manager request calls one method of the
//     SessionHandler with a ResultWriter. Calls on one connection never overlap.
//     The context is cancelled when the client sends ATTENTION (cause
//     ErrAttention), when the connection breaks, or when the server is closed.
//  4. When the connection ends, SessionHandler.Close is called exactly once.

// Handler authenticates logins and creates per-connection session handlers.
// One Handler serves all connections of a Server, so it must be safe for
// concurrent use.
type Handler interface {
	// Login decides whether req may log in. s describes the new connection and
	// stays valid (and is updated by the server) for the connection's life;
	// the handler may keep it.
	//
	// Errors:
	//   - *LoginError: the server sends error 18456 "Login failed for user
	//     '<user>'." (severity 14) and closes the connection.
	//   - *Error: sent as is (e.g. 4060 "Cannot open database ..."), followed
	//     by 18456; the connection is closed.
	//   - ErrDropConnection: the socket is closed without a reply.
	//   - any other error: logged, and the client gets 18456.
	Login(ctx context.Context, s *Session, req *LoginRequest) (*LoginResult, error)
}

// LoginResult is the outcome of a successful login.
type LoginResult struct {
	// Session serves the connection's requests. Required.
	Session SessionHandler
	// Database is the database the session starts in. Empty means
	// LoginRequest.Database, or "master" when that is empty too.
	Database string
}

// SessionHandler serves the requests of one logged-in connection. Its methods
// are called one at a time from the connection's goroutine(s), never
// concurrently, so it needs no locking for its own per-session state.
//
// Every request method may write any number of results through w and then
// return:
//   - nil: the server ends the response (closing DONE / DONEPROC).
//   - *Error: the server sends it as an ERROR token and ends the response with
//     the DONE_ERROR bit. Severity >= 20 also closes the connection afterwards,
//     as SQL Server does for fatal errors.
//   - ErrDropConnection (or an error wrapping it): the server closes the socket
//     at once, discarding whatever was not yet flushed (fault injection).
//   - after an ATTENTION (ctx cancelled with cause ErrAttention), whatever
//     is returned (normally ctx.Err()): the server ends the response with
//     DONE_ATTN; the client discards the results. The connection stays
//     usable.
//   - any other error: logged and reported to the client as error 50000,
//     severity 16, with err.Error() as the message.
type SessionHandler interface {
	// Batch runs a SQL batch (TDS packet type 1).
	Batch(ctx context.Context, b *Batch, w ResultWriter) error
	// RPC runs a remote procedure call (TDS packet type 3): sp_executesql for
	// parameterised queries, or a procedure by name (go-mssqldb sends a bare
	// identifier such as "dbo.Proc" or "types" as an RPC by name, not a batch).
	// Inside an RPC, ResultWriter.Done sends DONEINPROC; the server closes
	// with RETURNSTATUS (0 unless ResultWriter.ReturnStatus was called) and
	// DONEPROC.
	RPC(ctx context.Context, call *RPCCall, w ResultWriter) error
	// Transaction handles a transaction-manager request (TDS packet type 14),
	// which is how go-mssqldb implements BeginTx, Commit and Rollback. Return
	// nil to accept; the server then sends the transaction ENVCHANGE (8 begin,
	// 9 commit, 10 rollback, none for save/rollback-to-savepoint) and DONE
	// itself. The handler must not call Begin/Commit/RollbackTransaction on w
	// for TM requests (those are for T-SQL BEGIN TRAN/COMMIT/ROLLBACK inside
	// batches).
	//
	// The server answers COMMIT, ROLLBACK and SAVE without an open transaction
	// itself (errors 3902, 3903, 628) without calling Transaction. A BEGIN
	// while a transaction is open keeps the existing descriptor. A ROLLBACK
	// whose Name differs from the BEGIN's name is a rollback to a savepoint:
	// the transaction stays open.
	Transaction(ctx context.Context, req *TransactionRequest, w ResultWriter) error
	// Close is called once when the connection ends, for any reason.
	Close()
}

// ResultWriter sends a response's tokens. Output is buffered and sent in
// packets no larger than the negotiated packet size; full packets may go out
// before the handler returns. Methods return an error when the connection is
// gone, the client cancelled (Columns and Row fail with an error wrapping
// ErrAttention after ATTENTION), or the call is invalid (e.g. Row before
// Columns, a value that does not fit its column); handlers should stop and
// return that error. A ResultWriter must not be used after its handler
// method returned.
type ResultWriter interface {
	// Columns starts a result set (COLMETADATA). A result set still open when
	// the next Columns call comes or the handler returns is ended
	// automatically with a DONE counting its rows (CurCmd SELECT); call Done
	// yourself to choose the count (e.g. NoCount for SET NOCOUNT ON).
	Columns(cols ...Column) error
	// Row sends one row (ROW, or NBCROW when a value is NULL). values must
	// match the columns in number; see DataType for the Go types accepted.
	// nil (or a nil pointer/typed nil) means NULL.
	Row(values ...any) error
	// Done ends one statement: DONE in a batch, DONEINPROC inside an RPC. If
	// a result set is open, this is its DONE. The server sets the MORE bit
	// when more output follows, DONE_ERROR when an ERROR token was sent since
	// the previous Done, and DONE_INXACT inside a transaction. A statement
	// that produced nothing (SET, DECLARE) needs no Done at all.
	Done(d Done) error
	// Error sends an ERROR token (a statement error that does not end the
	// request; return the *Error instead to end it).
	Error(e *Error) error
	// Info sends an INFO token (PRINT, RAISERROR with severity <= 10, 5701...).
	// Severity above 10 is sent as given but clients expect <= 10.
	Info(m *Error) error
	// SetDatabase switches the session's current database as USE does:
	// ENVCHANGE type 1 (old = Session.Database()) plus INFO 5701 "Changed
	// database context to '<name>'.".
	SetDatabase(name string) error
	// BeginTransaction starts a transaction from T-SQL (outermost BEGIN TRAN):
	// ENVCHANGE type 8 with a new descriptor, which it returns.
	BeginTransaction() (descriptor uint64, err error)
	// CommitTransaction ends the session's transaction (outermost COMMIT):
	// ENVCHANGE type 9.
	CommitTransaction() error
	// RollbackTransaction ends the session's transaction (ROLLBACK, or
	// XACT_ABORT): ENVCHANGE type 10.
	RollbackTransaction() error
	// ReturnStatus sets the RETURNSTATUS sent before the closing DONEPROC of
	// an RPC (default 0); it returns an error in a batch.
	ReturnStatus(status int32) error
	// ReturnValue sends an output parameter (RETURNVALUE). Only in an RPC.
	ReturnValue(p Param) error
	// Flush sends everything written so far as packets now (without ending
	// the message). Useful before a long wait or before ErrDropConnection to
	// simulate a connection lost mid-result.
	Flush() error
}

// Done describes the end of a statement.
type Done struct {
	// Command is the CurCmd field, e.g. CmdSelect; 0 when irrelevant.
	Command Command
	// RowCount is the number of rows selected or affected. Negative means "no
	// count" (SET NOCOUNT ON, DDL): the DONE_COUNT bit is not set. go-mssqldb
	// sums the counts of all counted DONE/DONEINPROC tokens into RowsAffected.
	RowCount int64
}

// NoCount is the Done.RowCount for statements that report no row count.
const NoCount int64 = -1

// Command is the CurCmd value of a DONE token: the token stream command that
// produced the result. Values as observed from SQL Server.
type Command uint16

const (
	CmdNone   Command = 0
	CmdSelect Command = 0xC1 // SELECT
	CmdInsert Command = 0xC3 // INSERT
	CmdDelete Command = 0xC4 // DELETE
	CmdUpdate Command = 0xC5 // UPDATE
	CmdExec   Command = 0xE0 // EXECUTE (closing DONEPROC)
	// CmdOther is used for statements such as SET, DECLARE and BEGIN TRAN.
	CmdOther Command = 0x00
)

// Error is a SQL Server message as sent in ERROR and INFO tokens. As a Go
// error returned from a handler it becomes an ERROR token; go-mssqldb turns it
// into mssql.Error{Number, State, Class, Message, ServerName, ProcName,
// LineNo}.
type Error struct {
	Number   int32
	Severity uint8 // "class": 0-10 informational, 11-16 user errors, >= 20 fatal
	State    uint8
	Line     int32  // line within the batch or procedure, 1-based
	Message  string // the text, already formatted
	Proc     string // procedure name, "" for ad-hoc batches
	Server   string // server name; "" means Server.Name
}

func (e *Error) Error() string {
	if e.Proc != "" {
		return fmt.Sprintf("Msg %d, Level %d, State %d, Procedure %s, Line %d: %s", e.Number, e.Severity, e.State, e.Proc, e.Line, e.Message)
	}
	return fmt.Sprintf("Msg %d, Level %d, State %d, Line %d: %s", e.Number, e.Severity, e.State, e.Line, e.Message)
}

// LoginError rejects a login. The client always gets error 18456 severity 14
// "Login failed for user '<user>'." with state 1, as SQL Server does; the
// detailed State and Reason only go to the server log, as SQL Server writes
// them to its error log
// (https://learn.microsoft.com/en-us/sql/relational-databases/errors-events/mssqlserver-18456-database-engine-error;
// "the State will always be shown to be 1":
// https://techcommunity.microsoft.com/t5/sql-server-blog/understanding-quot-login-failed-quot-error-18456-error-messages/ba-p/383045).
type LoginError struct {
	// State as in SQL Server's error log: 5 invalid user ID, 8 password
	// mismatch, 38/40 cannot open database, ...
	State  uint8
	Reason string // e.g. "Password did not match that for the login provided."
}

func (e *LoginError) Error() string {
	return fmt.Sprintf("login failed (state %d): %s", e.State, e.Reason)
}

// ErrDropConnection, returned (possibly wrapped) from a handler method, makes
// the server close the connection abruptly without finishing the response.
// Tests use it to simulate a lost connection.
var ErrDropConnection = errors.New("tds: drop connection")

// ErrAttention is the cause (context.Cause) of a request context cancelled
// because the client sent ATTENTION.
var ErrAttention = errors.New("tds: attention (client cancelled the request)")

// Session describes one logged-in connection. Fields are set by the server
// before Login and do not change afterwards; the methods reflect state the
// server tracks (current database, transaction) and are safe to call from
// any goroutine (e.g. a DMV listing every session). Do not copy a Session.
type Session struct {
	SPID       uint16   // server process id, >= 51; also in every packet header
	RemoteAddr net.Addr // client address
	User       string   // login name
	AppName    string
	HostName   string
	ClientPID  uint32
	Language   string // requested language ("" = default)
	// TDSVersion is the version acknowledged in LOGINACK (e.g. 0x74000004).
	TDSVersion uint32
	// PacketSize is the negotiated packet size in bytes.
	PacketSize int
	// Encryption is how the connection is protected (sys.dm_exec_connections
	// encrypt_option is TRUE for ConnEncrypted and ConnStrict).
	Encryption ConnEncryption

	mu          sync.Mutex
	database    string
	transaction uint64
	loginDB     string
}

// Database is the session's current database.
func (s *Session) Database() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.database
}

// Transaction is the descriptor of the session's open transaction, 0 if none.
func (s *Session) Transaction() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.transaction
}

func (s *Session) setDatabase(db string) {
	s.mu.Lock()
	s.database = db
	s.mu.Unlock()
}

func (s *Session) setTransaction(id uint64) {
	s.mu.Lock()
	s.transaction = id
	s.mu.Unlock()
}

func (s *Session) loginDatabase() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loginDB
}

// LoginRequest is the decoded LOGIN7 message (MS-TDS 2.2.6.4).
type LoginRequest struct {
	TDSVersion      uint32 // as requested by the client, e.g. 0x74000004
	PacketSize      uint32 // requested packet size
	ClientProgVer   uint32
	ClientPID       uint32
	ConnectionID    uint32
	OptionFlags1    uint8
	OptionFlags2    uint8
	TypeFlags       uint8
	OptionFlags3    uint8
	ClientTimeZone  int32 // minutes
	ClientLCID      uint32
	HostName        string
	User            string
	Password        string // de-obfuscated; never log it
	AppName         string
	ServerName      string
	ClientInterface string // client library name, e.g. "go-mssqldb"
	Language        string
	Database        string // initial catalog requested ("" = login's default)
	ReadOnlyIntent  bool   // TypeFlags fReadOnlyIntent (ApplicationIntent=ReadOnly)
}

// Batch is a SQL batch request (MS-TDS 2.2.6.7).
type Batch struct {
	SQL string
	// Transaction is the descriptor from the ALL_HEADERS transaction header
	// (0 outside a transaction).
	Transaction uint64
	// ResetConnection is set when the client asked to reset the session
	// before this request (packet status 0x08, sent by database/sql pools on
	// reuse). The server has already rolled back its transaction record and
	// restored the login database; the handler must reset its own session
	// state (temp tables, SET options, open transaction) as sp_reset_connection
	// does.
	ResetConnection bool
}

// RPCCall is an RPC request (MS-TDS 2.2.6.6).
type RPCCall struct {
	// ProcName is the procedure name as sent, or for a well-known ProcID the
	// procedure's canonical name (ProcID 10 -> "sp_executesql").
	ProcName string
	// ProcID is the well-known procedure id (10 = sp_executesql), 0 when the
	// call was by name.
	ProcID      uint16
	OptionFlags uint16 // 0x01 WithRecomp, 0x02 NoMetaData
	Params      []Param
	// Transaction and ResetConnection: as in Batch.
	Transaction     uint64
	ResetConnection bool
}

// Well-known RPC procedure ids (MS-TDS 2.2.6.6).
const (
	ProcIDCursor          uint16 = 1
	ProcIDCursorOpen      uint16 = 2
	ProcIDCursorPrepare   uint16 = 3
	ProcIDCursorExecute   uint16 = 4
	ProcIDCursorPrepExec  uint16 = 5
	ProcIDCursorUnprepare uint16 = 6
	ProcIDCursorFetch     uint16 = 7
	ProcIDCursorOption    uint16 = 8
	ProcIDCursorClose     uint16 = 9
	ProcIDExecuteSQL      uint16 = 10
	ProcIDPrepare         uint16 = 11
	ProcIDExecute         uint16 = 12
	ProcIDPrepExec        uint16 = 13
	ProcIDPrepExecRPC     uint16 = 14
	ProcIDUnprepare       uint16 = 15
)

// ExecuteSQL is an sp_executesql call taken apart.
type ExecuteSQL struct {
	Statement string  // the SQL text (first parameter)
	ParamDecl string  // the declaration list, e.g. "@p1 bigint,@p2 nvarchar(4)"; "" if absent
	Args      []Param // the remaining parameters, in order
}

// ExecuteSQL returns the call's parts if it is sp_executesql (by ProcID 10 or
// by name, as tedious and others may send it); ok is false otherwise or when
// the statement parameter is missing or not a string.
func (c *RPCCall) ExecuteSQL() (x ExecuteSQL, ok bool) {
	if c.ProcID != ProcIDExecuteSQL && !equalFoldASCII(c.ProcName, "sp_executesql") && !equalFoldASCII(c.ProcName, "sys.sp_executesql") {
		return x, false
	}
	if len(c.Params) == 0 {
		return x, false
	}
	stmt, isString := c.Params[0].Value.(string)
	if !isString {
		return x, false
	}
	x.Statement = stmt
	rest := c.Params[1:]
	if len(rest) > 0 {
		if decl, isDecl := rest[0].Value.(string); isDecl && (rest[0].Name == "" || equalFoldASCII(rest[0].Name, "@params")) {
			x.ParamDecl = decl
			rest = rest[1:]
		}
	}
	x.Args = rest
	return x, true
}

// Param is an RPC parameter or an output value (RETURNVALUE).
type Param struct {
	// Name including the leading "@"; "" for positional parameters (the
	// first two parameters of go-mssqldb's sp_executesql are unnamed).
	Name string
	// Type is the parameter's declared type from its TYPE_INFO. It is the
	// zero TypeInfo (Type 0) for a typeless NULL: go-mssqldb sends a nil
	// argument as TDS type NULL (0x1F).
	Type TypeInfo
	// Value is the decoded value: nil for NULL, else the Go type listed for
	// Type.Type in DataType's documentation.
	Value any
	// Output is set for OUTPUT parameters (status flag fByRefValue).
	Output bool
	// Default is set when the client asked for the parameter's default value.
	Default bool
}

// TransactionRequest is a transaction-manager request (MS-TDS 2.2.6.9).
type TransactionRequest struct {
	Kind TransactionKind
	// Name of the transaction or savepoint ("" if none). For Rollback, a
	// non-empty Name means "roll back to this savepoint": the transaction
	// stays open.
	Name string
	// Isolation requested for Begin (and for the new transaction when
	// BeginNew is set).
	Isolation IsolationLevel
	// BeginNew (Commit/Rollback with fBeginXact): start a new transaction
	// right after ending the current one, named NewName.
	BeginNew bool
	NewName  string
	// Transaction is the current descriptor from ALL_HEADERS.
	Transaction     uint64
	ResetConnection bool
}

// TransactionKind is the TM request type.
type TransactionKind uint16

const (
	TxBegin    TransactionKind = 5 // TM_BEGIN_XACT
	TxCommit   TransactionKind = 7 // TM_COMMIT_XACT
	TxRollback TransactionKind = 8 // TM_ROLLBACK_XACT
	TxSave     TransactionKind = 9 // TM_SAVE_XACT (savepoint)
)

func (k TransactionKind) String() string {
	switch k {
	case TxBegin:
		return "begin"
	case TxCommit:
		return "commit"
	case TxRollback:
		return "rollback"
	case TxSave:
		return "save"
	}
	return fmt.Sprintf("tm-request(%d)", uint16(k))
}

// IsolationLevel is the TM request's isolation byte (MS-TDS 2.2.6.9).
type IsolationLevel uint8

const (
	IsolationNoChange        IsolationLevel = 0
	IsolationReadUncommitted IsolationLevel = 1
	IsolationReadCommitted   IsolationLevel = 2
	IsolationRepeatableRead  IsolationLevel = 3
	IsolationSerializable    IsolationLevel = 4
	IsolationSnapshot        IsolationLevel = 5
)

// Column describes one result-set column.
type Column struct {
	Name string
	TypeInfo
	// NotNull marks the column NOT NULL. Such int/bigint/smallint/tinyint/
	// bit/float/real columns are sent with the fixed-length TDS types (as SQL
	// Server does for e.g. "select 1"); writing nil to them is an error.
	NotNull bool
}

// TypeInfo is a SQL type with its length, precision and scale.
type TypeInfo struct {
	Type DataType
	// Length: characters for NVarChar/VarChar/NChar/Char, bytes for
	// VarBinary/Binary; Max (-1) for the (max) types. Ignored otherwise.
	Length int
	// Precision (1-38) and Scale (0-Precision) for Decimal. Scale is also the
	// fractional-second digits (0-7) of DateTime2, DateTimeOffset and Time.
	Precision uint8
	Scale     uint8
}

// Max is the Length of nvarchar(max), varchar(max) and varbinary(max).
const Max = -1

// DataType is a SQL Server data type. The Go values accepted by
// ResultWriter.Row and produced for decoded RPC parameters:
//
//	TypeInt, TypeBigInt, TypeSmallInt, TypeTinyInt: any Go integer type in
//	    range (decoded: int64; a 1-byte intN is unsigned, as tinyint is)
//	TypeBit: bool (decoded: bool)
//	TypeFloat, TypeReal: float64, float32 or an integer (decoded: float64)
//	TypeDecimal: Decimal, a decimal string like "-12.50", an integer, or
//	    float64 (rounded to the scale) (decoded: Decimal)
//	TypeNVarChar, TypeVarChar, TypeNChar, TypeChar, TypeXML: string or a
//	    fmt.Stringer (decoded: string). VarChar/Char use code page 1252
//	    (unmappable characters become '?'); NChar/Char are space-padded and
//	    Binary zero-padded to Length. A value longer than Length is an error.
//	TypeVarBinary, TypeBinary: []byte (decoded: []byte)
//	TypeDateTime2, TypeDateTime, TypeDate, TypeTime: time.Time; its clock
//	    reading is sent, the zone ignored; digits beyond Scale are truncated,
//	    datetime rounds to 1/300 s (decoded: time.Time in UTC; a time value
//	    on 0001-01-01; datetime rounded to the millisecond)
//	TypeDateTimeOffset: time.Time, sent with its zone offset (decoded:
//	    time.Time in a fixed zone with the sent offset)
//	TypeUniqueIdentifier: UUID, [16]byte (both in the textual byte order),
//	    or a string like "6F9619FF-8B86-D011-B42D-00C04FC964FF"
//	    (decoded: UUID). The wire order (mixed-endian) is handled here.
//
// Pointers to these types are dereferenced and driver.Valuer values (e.g.
// sql.NullString) are resolved; nil, a nil pointer or an invalid Null* is
// NULL. Types need TDS 7.3+ clients for date/time/datetime2/datetimeoffset.
//
// go-mssqldb sends: Go ints as int family by size (int as bigint), bool as
// bit, float64/float32 as float/real, string as nvarchar(len) or
// nvarchar(max) beyond 4000 characters, []byte as varbinary, time.Time as
// datetimeoffset(7), nil as typeless NULL, and decimal values as nvarchar
// text (never TypeDecimal).
type DataType uint8

const (
	TypeInt DataType = iota + 1
	TypeBigInt
	TypeSmallInt
	TypeTinyInt
	TypeBit
	TypeFloat // float(53)
	TypeReal  // float(24)
	TypeDecimal
	TypeNVarChar
	TypeVarChar
	TypeNChar
	TypeChar
	TypeXML
	TypeDateTime2
	TypeDateTimeOffset
	TypeDate
	TypeTime
	TypeDateTime
	TypeUniqueIdentifier
	TypeVarBinary
	TypeBinary
)

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// Package tsqlcorpus is the safety classifier's hand-written attack and
// look-alike corpus: every class of input the classifier must refuse, and
// harmless look-alikes it must still trace. It is the table of pkg/tsql's
// TestClassifyCorpus, the seed corpus of its fuzz targets, and the batches
// pkg/tracer's TestCorpusAgainstStandin traces against the stand-in.
//
// Test-only: production code must not import it.
package tsqlcorpus

// Case is one input and what the classifier must say of it.
type Case struct {
	SQL string
	// Refuse is a substring of the refusal's reason; "" means the batch
	// is traced.
	Refuse string
	// Mod: a traced batch is classified as a modification.
	Mod bool
}

// The refusals the cases expect, as substrings of the reason.
const (
	WhyCommit   = "COMMIT would end"
	WhyRollback = "ROLLBACK would end"
	WhyProc     = "runs as a call of that procedure"
	WhyExec     = "EXEC runs a procedure"
	WhyBroker   = "Service Broker"
	WhyFourPart = "four-part name"
	WhyDDL      = "DDL is refused"
	WhyRead     = "cannot be read safely"
	WhyTran     = "transaction statements are refused"
	WhyDynamic  = "sp_executesql runs dynamic SQL"
)

// Cases is the corpus.
var Cases = []Case{
	// numbers, money, hex and floats end where SQL Server ends them
	{"UPDATE dbo.Orders SET Amount = 0 WHERE OrderID = 1COMMIT", WhyCommit, false},
	{"UPDATE dbo.Orders SET Amount = 0 WHERE OrderID = .5COMMIT", WhyCommit, false},
	{"UPDATE dbo.Orders SET Amount = 0 WHERE OrderID = 1e1COMMIT", WhyCommit, false},
	{"UPDATE dbo.Orders SET Amount = 0 WHERE OrderID = 1ROLLBACK", WhyRollback, false},
	{"SELECT 1SHUTDOWN", "SHUTDOWN stops", false},
	{"SELECT 0x1ROLLBACK", WhyRollback, false},
	{"SELECT $1COMMIT", WhyCommit, false},
	{`SELECT \1COMMIT`, WhyCommit, false},
	{"SELECT 1.5COMMIT", WhyCommit, false},
	{"SELECT 1.COMMIT", WhyCommit, false},
	{"SELECT 1e+1COMMIT", WhyCommit, false},
	{"SELECT 1E-2ROLLBACK", WhyRollback, false},
	{"SELECT 12345678901234567890COMMIT", WhyCommit, false},
	{"SELECT 1.2.3COMMIT", WhyRead, false},
	{"SELECT 1.2.e5COMMIT", WhyRead, false},
	{"SELECT $.5COMMIT", WhyCommit, false},
	{"UPDATE dbo.Orders SET Amount = 0 WHERE OrderID = 1;COMMIT", WhyCommit, false},
	{"UPDATE dbo.Orders SET Amount=0 WHERE OrderID=1/**/COMMIT", WhyCommit, false},
	{"UPDATE dbo.Orders SET Amount = 0 WHERE OrderID = 1--x\nCOMMIT", WhyCommit, false},
	{"SELECT 1\tCOMMIT", WhyCommit, false},
	{"SELECT 1\r\nCOMMIT", WhyCommit, false},
	{"SELECT 'a'COMMIT", WhyCommit, false},
	{"SELECT [x]COMMIT", WhyCommit, false},
	{"SELECT 1 /* ' */ COMMIT --'", WhyCommit, false},
	{"SELECT '/*' COMMIT '*/'", WhyCommit, false},
	{"SELECT 1 /* */ */ COMMIT", WhyCommit, false},
	{"SELECT 1AS COMMIT", WhyCommit, false},
	// what SQL Server's reading of is not documented: refused, not guessed
	{"SELECT 1eCOMMIT", WhyRead, false},
	{"SELECT 1e", WhyRead, false},
	{"SELECT .5e+", WhyRead, false},
	{"SELECT 1 -- a\rCOMMIT", WhyRead, false},
	{"SELECT 1 -- a\u2028COMMIT", WhyRead, false},
	{"SELECT 1 -- a\u0085COMMIT", WhyRead, false},
	{"SELECT 1\u00a0COMMIT", WhyRead, false},
	{"SELECT 1\u3000COMMIT", WhyRead, false},
	{"SELECT \u20ac1COMMIT", WhyRead, false},
	{"SELECT 1\vCOMMIT", WhyRead, false},
	{"SELECT 1\fCOMMIT", WhyRead, false},
	{"SELECT 1\x00COMMIT", WhyRead, false},
	{"SELECT 1\x01COMMIT", WhyRead, false},
	{"{call sp_who}", WhyRead, false},
	{"SELECT {fn NOW()}", WhyRead, false},
	{"SELECT '\xff'", WhyRead, false},
	{"SELECT %%COMMIT%% FROM dbo.Orders", WhyRead, false},
	{"SELECT 'unterminated", WhyRead, false},
	{"SELECT [unterminated", WhyRead, false},
	{"SELECT 1 /* /* */", WhyRead, false},
	// harmless look-alikes that must still trace
	{"SELECT 0xCOMMIT", "", false},
	{"SELECT 1 COMMITTED", "", false},
	{"SELECT 1e1", "", false},
	{"SELECT N'COMMIT'", "", false},
	{"SELECT 'COMMIT'", "", false},
	{"SELECT '1COMMIT'", "", false},
	{"SELECT 1 AS [COMMIT]", "", false},
	{`SELECT 1 AS "COMMIT"`, "", false},
	{"/* COMMIT */ SELECT 1", "", false},
	{"SELECT 1 -- COMMIT", "", false},
	{"SELECT 1 /* /* nested */ COMMIT */", "", false},
	{"SELECT 1 /* /* */ COMMIT */", "", false},
	{"SELECT 'it''s COMMIT'", "", false},
	{"SELECT 1 AS [we]]COMMIT]", "", false},
	{`SELECT 1 AS "a""COMMIT"`, "", false},
	{"SELECT 1 AS a@COMMIT", "", false},
	{"SELECT @COMMIT", "", false},
	{"SELECT 1 AS _COMMIT", "", false},
	{"SELECT N'O''Brien;COMMIT' AS x", "", false},
	{"SELECT %%physloc%%, %%lockres%% FROM dbo.Orders", "", false},
	{"SELECT 1 -- trailing comment\r\n", "", false},
	{"SELECT 1\r\nFROM dbo.Orders", "", false},
	{`SELECT $12.50, \5, 0x, 0xABCDEF, 1.5E10, .5, 1e-3`, "", false},
	{"SELECT \u00e9t\u00e9 = 1", "", false},
	{"SELECT N'nbsp\u00a0inside' AS x", "", false},
	{"-- comment with \u20ac\nSELECT 1", "", false},
	{"SELECT 'COMMIT' AS x, 1 AS [rollback] FROM dbo.Orders WHERE OrderID = 1 -- ROLLBACK\n/* BEGIN TRAN */", "", false},
	// procedure calls without EXEC, as a batch's first statement
	// sp_executesql with a literal statement is classified like the batch it runs
	{"[sp_executesql] N'UPDATE dbo.Orders SET Amount = 0'", "", true},
	{"sys.[sp_executesql] N'SELECT 1'", "", false},
	{"master..xp_cmdshell 'dir'", WhyProc, false},
	{"[xp_cmdshell] 'whoami'", WhyProc, false},
	{"sys.sp_configure 'show advanced options', 1", WhyProc, false},
	{"dbo.usp_Anything", WhyProc, false},
	{"usp_Anything 1", WhyProc, false},
	{`"sp_executesql" N'x'`, WhyProc, false},
	{"[master].[sys].[xp_cmdshell] 'dir'", WhyProc, false},
	{";sp_executesql N'x'", WhyProc, false},
	{" \n -- comment\n sp_configure", WhyProc, false},
	{"xp_cmdshell 'dir'", WhyProc, false},
	{"dbo.sp_help 'x'", WhyProc, false},
	{"sp_help (SELECT 1)", "only constants and variables", false},
	{"sp_help 'x' AT srv", "is followed by AT", false},
	{"lbl: SELECT 1", WhyProc, false},
	// the read-only catalog procedures may be called
	{"sp_who", "", false},
	{"sp_help N'dbo.Orders'", "", false},
	{"sys.sp_helpindex 'dbo.Orders'", "", false},
	{"sp_help @objname = N'dbo.Orders'", "", false},
	{"EXEC sp_help", "", false},
	{"EXEC @rc = sp_help N'dbo.Orders'", "", false},
	{"EXEC sys.sp_who", "", false},
	{"EXECUTE sp_helptext N'dbo.x'", "", false},
	{"EXEC sp_help 'x' WITH RECOMPILE", "", false},
	{"INSERT INTO #who EXEC sp_who", "", true},
	// EXEC in every other form
	{"EXEC dbo.DoThings", WhyExec, false},
	{"EXECUTE sp_executesql N'SELECT 1'", "", false},
	{"EXEC ('UPDATE dbo.Orders SET Amount = 0')", "dynamic SQL", false},
	{"EXEC (@sql)", "dynamic SQL", false},
	{"EXECUTE AS LOGIN = 'sa'; SELECT 1", "security statements", false},
	{"INSERT INTO dbo.Orders EXEC dbo.usp_x", WhyExec, false},
	{"EXEC master.sys.sp_who", WhyExec, false},
	{"EXEC sp_who2", WhyExec, false},
	{"EXEC [sp_executesql] N'x'", WhyProc, false},
	{"SELECT 1 EXEC sp_configure", WhyExec, false},
	{"EXEC xp_cmdshell 'dir'", WhyExec, false},
	{"DECLARE @p sysname = N'sp_help'; EXEC @p", WhyExec, false},
	{"sp_help 'x'; COMMIT", WhyCommit, false},
	// transactions
	{"UPDATE t SET a = 1; COMMIT", WhyCommit, false},
	{"update t set a = 1\nrollback tran", WhyRollback, false},
	{"SAVE TRANSACTION s; DELETE FROM t", "SAVE TRANSACTION", false},
	{"BEGIN TRAN; UPDATE t SET a = 1", "BEGIN TRANSACTION", false},
	{"begin transaction x", "BEGIN TRANSACTION", false},
	{"BEGIN DISTRIBUTED TRANSACTION", "DISTRIBUTED", false},
	{"COMMIT WORK", WhyCommit, false},
	{"ROLLBACK WORK", WhyRollback, false},
	{"COMMIT TRAN", WhyCommit, false},
	{"SELECT 1 ROLLBACK TRANSACTION", WhyRollback, false},
	{"IF @@TRANCOUNT > 0 COMMIT", WhyCommit, false},
	{"BEGIN TRY UPDATE t SET a = 1 END TRY BEGIN CATCH ROLLBACK END CATCH", WhyRollback, false},
	{"WHILE 1 = 1 BEGIN COMMIT END", WhyCommit, false},
	{"SET IMPLICIT_TRANSACTIONS ON; UPDATE t SET a = 1", "IMPLICIT_TRANSACTIONS", false},
	{"SET XACT_ABORT ON; UPDATE t SET a = 1", "XACT_ABORT", false},
	{"SET ANSI_DEFAULTS ON", "ANSI_DEFAULTS", false},
	{"SET TRANSACTION", WhyTran, false},
	{"SET IMPLICIT_TRANSACTIONS OFF; SELECT 1", "", false},
	{"SET XACT_ABORT OFF; SELECT 1", "", false},
	{"SET TRANSACTION ISOLATION LEVEL READ COMMITTED; SELECT 1", "", false},
	{"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE; SELECT COUNT(*) FROM dbo.Orders", "", false},
	// Service Broker changes queues for good
	{"RECEIVE TOP(1) * FROM dbo.TargetQueue", WhyBroker, false},
	{"WAITFOR (RECEIVE TOP(1) * FROM dbo.TargetQueue), TIMEOUT 1000", "WAITFOR", false},
	{"SEND ON CONVERSATION @h MESSAGE TYPE [x] (N'a')", WhyBroker, false},
	{"END CONVERSATION @h", WhyBroker, false},
	{"END CONVERSATION @h WITH CLEANUP", WhyBroker, false},
	{"BEGIN DIALOG CONVERSATION @h FROM SERVICE [a] TO SERVICE 'b'", WhyBroker, false},
	{"MOVE CONVERSATION @h TO @g", WhyBroker, false},
	{"GET CONVERSATION GROUP @g FROM dbo.q", WhyBroker, false},
	{"WAITFOR (GET CONVERSATION GROUP @g FROM dbo.q)", "WAITFOR", false},
	{"BEGIN CONVERSATION TIMER (@h) TIMEOUT = 60", WhyBroker, false},
	{"SELECT 1; receive * from dbo.q", WhyBroker, false},
	{"SELECT 1 AS [Send], 2 AS [Receive]", "", false},
	{"WAITFOR DELAY '00:00:00.010'", "", false},
	// four-part names, empty parts too
	{"SELECT * FROM Srv.Db..Orders", WhyFourPart, false},
	{"SELECT * FROM [Srv].[Db]..[Orders]", WhyFourPart, false},
	{"SELECT * FROM srv.db.dbo.t", WhyFourPart, false},
	{"SELECT * FROM [srv].[db].[dbo].[t]", WhyFourPart, false},
	{"UPDATE Srv.Db.dbo.Orders SET Amount = 0", WhyFourPart, false},
	{"SELECT * FROM Srv...Orders", WhyFourPart, false},
	{"SELECT * FROM Srv . Db . dbo . Orders", WhyFourPart, false},
	{"INSERT INTO Srv.Db.dbo.T VALUES (1)", WhyFourPart, false},
	{"SELECT * FROM QueryReplayDemo..Orders", "", false},
	{"SELECT a.b.c FROM t", "", false},
	{"SELECT t.* FROM dbo.Orders AS t", "", false},
	{"SELECT QueryReplayDemo.dbo.Orders.* FROM QueryReplayDemo.dbo.Orders", "", false},
	// DDL: every name checked; only #temp tables
	{"DROP TABLE #t, dbo.Customers", "dbo is not a #temp table", false},
	{"DROP TABLE dbo.Customers, #t", WhyDDL, false},
	{"DROP TABLE IF EXISTS #t, #u", "", true},
	{"CREATE TABLE t (a int)", WhyDDL, false},
	{"CREATE TABLE #t (a int); INSERT INTO #t VALUES (1); SELECT a FROM #t; DROP TABLE IF EXISTS #t", "", true},
	{"CREATE TABLE [#t] (a int)", "", true},
	{"CREATE TABLE dbo.[#t2]x (a int)", WhyDDL, false},
	{"CREATE TABLE tempdb..#t (a int)", WhyDDL, false},
	{"CREATE TABLE #t (a int); CREATE UNIQUE CLUSTERED INDEX ix ON #t (a)", "", true},
	{"CREATE INDEX ix ON dbo.Orders (Amount)", WhyDDL, false},
	{"ALTER TABLE #t ADD b int", WhyDDL, false},
	{"ALTER DATABASE x SET RECOVERY FULL", WhyDDL, false},
	{"DROP TABLE t", WhyDDL, false},
	{"CREATE PROCEDURE p AS SELECT 1", WhyDDL, false},
	{"CREATE EVENT SESSION x ON SERVER ADD EVENT sqlserver.sql_batch_starting", WhyDDL, false},
	{"DROP EVENT SESSION x ON SERVER", WhyDDL, false},
	{"DISABLE TRIGGER ALL ON dbo.Orders", WhyDDL, false},
	{"ENABLE TRIGGER t ON dbo.Orders", WhyDDL, false},
	{"TRUNCATE TABLE dbo.Orders", "", true},
	{"SELECT * INTO #x FROM dbo.Orders", "", true},
	{"SELECT * INTO dbo.NewOrders FROM dbo.Orders", "", true},
	// SET options
	{"SET NOEXEC ON", "NOEXEC ON", false},
	{"SET FMTONLY ON; SELECT * FROM dbo.Orders", "FMTONLY ON", false},
	{"SET PARSEONLY ON", "PARSEONLY ON", false},
	{"SET SHOWPLAN_XML ON", "SHOWPLAN_XML ON", false},
	{"SET NOEXEC 1", "NOEXEC ON", false},
	{"SET OFFSETS SELECT ON", "OFFSETS", false},
	{"SET REMOTE_PROC_TRANSACTIONS ON", "REMOTE_PROC_TRANSACTIONS", false},
	{"SET FIPS_FLAGGER 'FULL'", "only SET FIPS_FLAGGER OFF", false},
	{"SET FIPS_FLAGGER OFF SELECT 1", "", false},
	{"SET NOEXEC ON; COMMIT", "NOEXEC", false},
	{"SET [NOEXEC] ON", "followed by a variable or an option", false},
	{"SET NOEXEC OFF; SET FMTONLY OFF; SET PARSEONLY OFF; SELECT 1", "", false},
	{"SET ROWCOUNT 1; SELECT * FROM dbo.Orders", "", false},
	{"SET TEXTSIZE 16; SELECT N'abcdefghijklmnopqrstuvwxyz'", "", false},
	{"SET NOCOUNT ON; SELECT 1", "", false},
	{"SET ANSI_NULLS, QUOTED_IDENTIFIER ON; SELECT 1", "", false},
	{"SET STATISTICS XML ON; SELECT 1", "", false},
	{"SET STATISTICS IO, TIME ON", "", false},
	{"SET DEADLOCK_PRIORITY LOW; SET LOCK_TIMEOUT 1000; SELECT 1", "", false},
	{"SET CONTEXT_INFO 0x01", "", false},
	{"UPDATE dbo.Orders SET NOEXEC = 1 WHERE OrderID = 1", "", true},
	{"DECLARE @x int; SET @x = 1; SET @x += 1; SELECT @x", "", false},
	// everything else outside the allowlist
	{"DBCC CHECKDB", "DBCC", false},
	{"BACKUP DATABASE x TO DISK = 'y'", "backup", false},
	{"SELECT * FROM OPENQUERY(srv, 'select 1')", "OPENQUERY", false},
	{"SELECT * FROM OPENROWSET(BULK 'c:\\x', SINGLE_BLOB) AS b", "OPENQUERY", false},
	{"SELECT * FROM OPENDATASOURCE('MSOLEDBSQL', 'Data Source=x').db.dbo.t", "OPENQUERY", false},
	{"UPDATE STATISTICS t", "UPDATE STATISTICS", false},
	{"BULK INSERT t FROM 'f'", "BULK INSERT", false},
	{"USE master; SELECT 1", "USE would change", false},
	{"KILL 53", "KILL ends", false},
	{"SHUTDOWN WITH NOWAIT", "SHUTDOWN stops", false},
	{"RECONFIGURE", "RECONFIGURE", false},
	{"CHECKPOINT", "CHECKPOINT is run", false},
	{"GRANT SELECT ON t TO u", "security statements", false},
	{"DECLARE c CURSOR FOR SELECT 1", "cursors", false},
	{"SELECT 1\nGO\nSELECT 2", "GO separates", false},
	{"SELECT 1\n  go 5 -- twice\nSELECT 2", "GO separates", false},
	{"RAISERROR('x', 10, 1) WITH LOG", "WITH LOG", false},
	{"WRITETEXT t.c @p 'x'", "text-pointer", false},
	{"GOTO l", "GOTO", false},
	{"COPY INTO dbo.t FROM 'x'", "COPY INTO", false},
	{"REVERT", "security statements", false},
	{"SETUSER 'x'", "security statements", false},
	{"FROM dbo.Orders", "must begin with a statement", false},
	{"1", "must begin with a statement", false},
	// queries, DML and control of flow that trace
	{"SELECT o.OrderID, o.Amount FROM dbo.Orders AS o WHERE o.CustomerID = 42", "", false},
	{"select 1; select 2", "", false},
	{"UPDATE dbo.Orders SET Status = N'x' WHERE OrderID = 1", "", true},
	{"INSERT INTO dbo.Orders (OrderID, CustomerID, OrderDate, Amount, Status) VALUES (100002, 42, '2026-01-15', 1, N'New')", "", true},
	{"DELETE FROM dbo.OrderLines WHERE OrderID = 3", "", true},
	{"MERGE dbo.Orders AS t USING (VALUES (1)) AS s(id) ON t.OrderID = s.id WHEN MATCHED THEN UPDATE SET Amount = 1;", "", true},
	{"WITH c AS (SELECT OrderID FROM dbo.Orders WHERE OrderID = 5) DELETE FROM c", "", true},
	{"IF UPDATE(a) SELECT 1", "", false},
	{"BEGIN TRY SELECT 1 END TRY BEGIN CATCH SELECT 2 END CATCH", "", false},
	{"SELECT go FROM t", "", false},
	{"SELECT 1 AS go\nFROM t", "", false},
	{"IF EXISTS (SELECT 1 FROM dbo.Orders) SELECT 1 ELSE SELECT 2", "", false},
	{"BEGIN SELECT 1; SELECT 2 END", "", false},
	{"DECLARE @t TABLE (a int); INSERT INTO @t VALUES (1); SELECT * FROM @t", "", true},
	{"SELECT CASE WHEN 1 = 1 THEN 'a' ELSE 'b' END", "", false},
	{"SELECT OrderID FROM dbo.Orders ORDER BY OrderID OFFSET 0 ROWS FETCH NEXT 5 ROWS ONLY", "", false},
	{"SELECT NEXT VALUE FOR dbo.Seq", "", false},
	{"THROW 50000, 'x', 1", "", false},
	{"PRINT 'hello'", "", false},
	{"RAISERROR('x', 10, 1) WITH NOWAIT", "", false},
	{"SELECT * FROM dbo.Orders WITH (NOLOCK) WHERE OrderID = 1", "", false},
	{"SELECT OrderID FROM dbo.Orders WHERE OrderID < 3 FOR XML PATH('o')", "", false},
	{";WITH c AS (SELECT 1 AS a) SELECT * FROM c", "", false},
	{"(SELECT 1) UNION ALL (SELECT 2)", "", false},
	{"SELECT x.query('/a') FROM t", "", false},
	{"RETURN", "", false},
	{"SELECT * FROM dbo.Orders FOR SYSTEM_TIME FROM '2020-01-01' TO '2021-01-01'", "", false},
	{"SELECT session_id FROM sys.dm_exec_sessions", "", false},
	{"SELECT COUNT(*) FROM dbo.Orders OPTION (USE HINT('ENABLE_PARALLEL_PLAN_PREFERENCE'))", "", false},
	{"SET NOCOUNT ON\nSELECT TOP (3) c.CustomerID FROM dbo.Customers AS c\nJOIN dbo.Orders AS o ON o.CustomerID = c.CustomerID", "", false},
	{"   ", "", false},
	// sp_executesql as applications send it: the literal is the batch
	{"EXEC sp_executesql N'SELECT OrderID FROM dbo.Orders WHERE CustomerID = @c', N'@c int', @c = 42", "", false},
	{"EXEC sys.sp_executesql N'UPDATE dbo.Orders SET Amount = @a WHERE OrderID = 1', N'@a money', 5", "", true},
	{"EXEC sp_executesql N'SELECT 1; COMMIT'", WhyCommit, false},
	{"EXEC sp_executesql N'EXEC sp_executesql N''DELETE FROM dbo.Orders'''", "", true},
	{"EXEC sp_executesql N'EXEC sp_executesql N''ROLLBACK'''", WhyRollback, false},
	{"DECLARE @s nvarchar(100) = N'SELECT 1'; EXEC sp_executesql @s", WhyDynamic, false},
	{"EXEC sp_executesql @stmt = @s", WhyDynamic, false},
	{"EXEC sp_executesql N'SELECT 1' + N'; COMMIT'", "is followed by +", false},
	{"EXEC sp_executesql (N'SELECT 1')", WhyDynamic, false},
	{"EXEC sp_executesql N'EXEC xp_cmdshell ''dir'''", WhyExec, false},
	{"SELECT 1; EXEC sp_executesql N'SELECT @c', N'@c int', @c = 1", "", false},
	{"EXEC sp_executesql N'SELECT ''COMMIT'' AS [rollback]'", "", false},
	{"EXEC sp_executesql N'SELECT 1', N'@c int', @c = 42", "", false},
	{"EXEC sp_executesql N'SELECT @c', N'@c decimal(10, 2) OUTPUT, @d nvarchar(max), @e [dbo].[MyType] READONLY', 1", "", false},
	{"EXEC sp_executesql N'SELECT @c', @d, @c = 1", "parameter declarations must be a string literal", false},
	{"EXEC sp_executesql N'SELECT @c', N'@c int; COMMIT', 1", "hold more than declarations", false},
	{"EXEC sp_executesql N'SELECT @c', N'@c int = (SELECT 1)', 1", "hold more than declarations", false},
	{"EXEC sp_executesql N'SELECT @c', @params = N'@c int) DELETE FROM dbo.Orders --', 1", "hold more than declarations", false},
}

// Module is a procedure's or trigger's definition, as OBJECT_DEFINITION
// returns it, and what classifying its statements must say.
type Module struct {
	Def    string
	Refuse string // a substring of the refusal's reason; "" means allowed
	Mod    bool   // an allowed module modifies data
	Calls  int    // user procedures it calls
}

// The refusals of module definitions.
const (
	WhyExecuteAs = "runs as another principal"
	WhyExtended  = "extended procedure"
)

// Modules are hostile procedure and trigger bodies, and look-alikes that
// are fine.
var Modules = []Module{
	{"CREATE PROCEDURE dbo.TopCustomers @region nvarchar(20) = N'West'\nAS\nSET NOCOUNT ON;\nSELECT TOP (5) CustomerID FROM dbo.Customers WHERE Region = @region;", "", false, 0},
	{"CREATE PROC dbo.P @a AS int = 5, @b int OUTPUT AS BEGIN SELECT @b = @a; RETURN 0 END", "", false, 0},
	{"CREATE OR ALTER PROCEDURE [dbo].[Look] AS SELECT 'COMMIT' AS [rollback], 1 AS [execute] -- COMMIT\n/* EXEC (@s) */", "", false, 0},
	{"CREATE PROCEDURE dbo.Outer AS EXEC dbo.Inner @x = 1; EXEC dbo.Other", "", false, 2},
	{"CREATE PROCEDURE dbo.Up @id int AS UPDATE dbo.Orders SET Amount = Amount + 1 WHERE OrderID = @id", "", true, 0},
	{"CREATE PROCEDURE dbo.P WITH RECOMPILE AS SELECT 1", "", false, 0},
	{"CREATE PROCEDURE dbo.P AS EXEC sp_executesql N'SELECT @c', N'@c int', @c = 42", "", false, 0},
	{"CREATE PROCEDURE dbo.C AS UPDATE dbo.Orders SET Amount = 0; COMMIT", WhyCommit, false, 0},
	{"CREATE PROCEDURE dbo.C AS BEGIN TRAN; UPDATE dbo.Orders SET Amount = 0; COMMIT TRAN", "BEGIN TRANSACTION", false, 0},
	{"CREATE PROCEDURE dbo.R AS\nSELECT 1\nROLLBACK", WhyRollback, false, 0},
	{"CREATE PROCEDURE dbo.D @s nvarchar(max) AS EXEC (@s)", "dynamic SQL", false, 0},
	{"CREATE PROCEDURE dbo.D @s nvarchar(max) AS EXEC sp_executesql @s", WhyDynamic, false, 0},
	{"CREATE PROCEDURE dbo.D AS EXEC sp_executesql N'COMMIT'", WhyCommit, false, 0},
	{"CREATE PROCEDURE dbo.E WITH EXECUTE AS OWNER AS SELECT 1", WhyExecuteAs, false, 0},
	{"CREATE PROCEDURE dbo.E @a int WITH RECOMPILE, EXECUTE AS 'sa' AS SELECT 1", WhyExecuteAs, false, 0},
	{"CREATE PROCEDURE dbo.E AS EXECUTE AS LOGIN = 'sa'; SELECT 1; REVERT", "security statements", false, 0},
	{"CREATE PROCEDURE dbo.X AS EXEC xp_cmdshell 'dir'", WhyExtended, false, 0},
	{"CREATE PROCEDURE dbo.X AS EXEC master..xp_cmdshell 'dir'", WhyExtended, false, 0},
	{"CREATE PROCEDURE dbo.X AS EXEC sp_configure 'xp_cmdshell', 1; RECONFIGURE", "system procedure", false, 0},
	{"CREATE PROCEDURE dbo.L AS SELECT * FROM srv.db.dbo.t", "four-part name", false, 0},
	{"CREATE PROCEDURE dbo.T AS CREATE TABLE dbo.Perm (a int)", "DDL is refused", false, 0},
	{"CREATE PROCEDURE dbo.G AS SELECT 1\nGO\nDROP TABLE dbo.Orders", "GO separates", false, 0},
	{"CREATE VIEW dbo.V AS SELECT 1", "cannot be read safely", false, 0},
	{"CREATE PROCEDURE dbo.N", "cannot be read safely", false, 0},
	{"CREATE TRIGGER dbo.trg ON dbo.Orders AFTER UPDATE AS INSERT INTO dbo.Audit (OrderID) SELECT OrderID FROM inserted", "", true, 0},
	{"CREATE TRIGGER dbo.trg ON dbo.Orders AFTER UPDATE AS BEGIN IF UPDATE(Amount) SELECT 1 END", "", false, 0},
	{"CREATE TRIGGER dbo.trg ON dbo.Orders WITH EXECUTE AS SELF FOR INSERT AS SELECT 1", WhyExecuteAs, false, 0},
	{"CREATE TRIGGER dbo.trg ON dbo.Orders AFTER DELETE AS COMMIT", WhyCommit, false, 0},
	{"CREATE PROCEDURE dbo.Num AS EXEC dbo.Other;2", "numbered procedure", false, 0},
}

// Program is a batch and the procedures and triggers it reaches, by name.
type Program struct {
	Batch    string
	Procs    map[string]string // dbo.Name → definition; a missing value is an unreadable (NULL) definition
	Triggers map[string]string // table → trigger definition
	Refuse   string
	Mod      bool
}

// Programs are procedure chains: refused when any module they reach is.
var Programs = []Program{
	{"EXEC dbo.TopCustomers @region = N'West'", map[string]string{"dbo.TopCustomers": Modules[0].Def}, nil, "", false},
	{"EXEC dbo.Outer", map[string]string{
		"dbo.Outer": "CREATE PROCEDURE dbo.Outer AS SELECT 1; EXEC dbo.Inner",
		"dbo.Inner": "CREATE PROCEDURE dbo.Inner AS UPDATE dbo.Orders SET Amount = 1; COMMIT",
	}, nil, WhyCommit, false},
	{"EXEC dbo.Outer", map[string]string{
		"dbo.Outer": "CREATE PROCEDURE dbo.Outer AS EXEC dbo.Inner",
		"dbo.Inner": "CREATE PROCEDURE dbo.Inner AS EXEC sp_executesql N'EXEC dbo.Deep'",
		"dbo.Deep":  "CREATE PROCEDURE dbo.Deep AS EXEC xp_cmdshell 'dir'",
	}, nil, WhyExtended, false},
	{"EXEC dbo.Enc", map[string]string{"dbo.Enc": ""}, nil, "definition is NULL", false},
	{"EXEC dbo.Missing", nil, nil, "not a procedure QueryReplay can find", false},
	{"EXEC dbo.Self", map[string]string{"dbo.Self": "CREATE PROCEDURE dbo.Self AS EXEC dbo.Self"}, nil, "", false},
	{"EXEC dbo.Up @id = 1", map[string]string{"dbo.Up": Modules[4].Def},
		map[string]string{"dbo.Orders": "CREATE TRIGGER dbo.trg ON dbo.Orders AFTER UPDATE AS EXEC (N'x')"}, "dynamic SQL", true},
	{"UPDATE dbo.Orders SET Amount = 0", nil,
		map[string]string{"dbo.Orders": "CREATE TRIGGER dbo.trg ON dbo.Orders AFTER UPDATE AS COMMIT"}, WhyCommit, true},
	{"UPDATE dbo.Orders SET Amount = 0", nil,
		map[string]string{"dbo.Orders": Modules[24].Def}, "", true},
	{"EXEC dbo.Outer", map[string]string{"dbo.Outer": "CREATE PROCEDURE dbo.Outer WITH EXECUTE AS OWNER AS SELECT 1"}, nil, WhyExecuteAs, false},
}

-- LOG_READ_QueryReplay_x
SELECT [Current LSN], [Log Record] FROM fn_dblog(NULL, NULL) WHERE [Current LSN] > '0000002b:000001a0:0003';
SELECT object_name AS event_name, event_data FROM sys.fn_xe_file_target_read_file(N'/var/opt/mssql/log/QueryReplay_x*.xel', NULL, NULL, NULL);
SELECT %%physloc%% AS RowIdentifier, %%lockres%% AS [LockHash] FROM [dbo].[Orders] WITH (INDEX([IX_Orders_CustomerID])) WHERE %%lockres%% IN (N'(8194443284a0)', N'(0123456789ab)');
/* nested /* comment */ still comment */ SELECT N'it''s', 0xDEADbeef, 1.5e3, "quoted id" FROM sys.dm_xe_map_values WHERE name = 'lock_mode';
IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION iv_QueryReplay_1558c1fe10524e4;

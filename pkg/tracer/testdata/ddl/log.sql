CREATE EVENT SESSION [queryreplay_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b] ON SERVER
ADD EVENT sqlserver.sql_batch_starting (ACTION (package0.event_sequence, sqlserver.session_id, sqlserver.database_id, sqlserver.plan_handle, sqlserver.transaction_id, sqlos.task_address) WHERE (sqlserver.session_id = (53) AND NOT sqlserver.like_i_sql_unicode_string(sqlserver.sql_text, N'%queryreplay_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b%'))),
ADD EVENT sqlserver.sql_batch_completed (ACTION (package0.event_sequence, sqlserver.session_id, sqlserver.database_id, sqlserver.plan_handle, sqlserver.transaction_id, sqlos.task_address) WHERE (sqlserver.session_id = (53) AND NOT sqlserver.like_i_sql_unicode_string(sqlserver.sql_text, N'%queryreplay_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b%'))),
ADD EVENT sqlserver.query_post_execution_showplan (ACTION (package0.event_sequence, sqlserver.session_id, sqlserver.database_id, sqlserver.plan_handle, sqlserver.transaction_id, sqlos.task_address) WHERE (sqlserver.session_id = (53) AND NOT sqlserver.like_i_sql_unicode_string(sqlserver.sql_text, N'%queryreplay_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b%'))),
ADD EVENT sqlserver.query_thread_profile (ACTION (package0.event_sequence, sqlserver.session_id, sqlserver.database_id, sqlserver.plan_handle, sqlserver.transaction_id, sqlos.task_address) WHERE (sqlserver.session_id = (53) AND NOT sqlserver.like_i_sql_unicode_string(sqlserver.sql_text, N'%queryreplay_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b%'))),
ADD EVENT sqlserver.physical_page_read (ACTION (package0.event_sequence, sqlserver.session_id, sqlserver.database_id, sqlserver.plan_handle, sqlserver.transaction_id, sqlos.task_address) WHERE (sqlserver.session_id = (53) AND NOT sqlserver.like_i_sql_unicode_string(sqlserver.sql_text, N'%queryreplay_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b%'))),
ADD EVENT sqlserver.physical_page_write (ACTION (package0.event_sequence, sqlserver.session_id, sqlserver.database_id, sqlserver.plan_handle, sqlserver.transaction_id, sqlos.task_address) WHERE (sqlserver.session_id = (53) AND NOT sqlserver.like_i_sql_unicode_string(sqlserver.sql_text, N'%queryreplay_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b%'))),
ADD EVENT sqlserver.log_flush_complete (ACTION (package0.event_sequence, sqlserver.session_id, sqlserver.database_id, sqlserver.plan_handle, sqlserver.transaction_id, sqlos.task_address) WHERE (sqlserver.session_id = (53) AND NOT sqlserver.like_i_sql_unicode_string(sqlserver.sql_text, N'%queryreplay_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b%')))
ADD TARGET package0.event_file (SET filename = N'/var/opt/mssql/log/queryreplay_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b.xel', max_file_size = (128), max_rollover_files = (2))
WITH (MAX_MEMORY = 16 MB, MAX_EVENT_SIZE = 16 MB, EVENT_RETENTION_MODE = NO_EVENT_LOSS, MAX_DISPATCH_LATENCY = 1 SECONDS, MEMORY_PARTITION_MODE = NONE, TRACK_CAUSALITY = OFF, STARTUP_STATE = OFF)
-- start
/* queryreplay_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b */ ALTER EVENT SESSION [queryreplay_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b] ON SERVER STATE = START
-- stop
/* queryreplay_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b */ ALTER EVENT SESSION [queryreplay_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b] ON SERVER STATE = STOP
-- drop
IF EXISTS (SELECT 1 FROM sys.server_event_sessions WHERE name = N'queryreplay_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b') DROP EVENT SESSION [queryreplay_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b] ON SERVER
-- read
/var/opt/mssql/log/queryreplay_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b*.xel

SELECT @@SPID;
CREATE EVENT SESSION [QueryReplay_1558c1fe10524e4f9a1b2c3d4e5f6a7b] ON SERVER
ADD EVENT sqlserver.sql_batch_starting
(
    ACTION (sqlserver.session_id, sqlserver.request_id, sqlserver.database_id, sqlserver.plan_handle, sqlserver.transaction_id, package0.event_sequence, sqlos.task_address, sqlos.worker_address)
    WHERE (sqlserver.session_id = 53 AND sqlserver.sql_text NOT LIKE '%QueryReplay_1558c1fe10524e4f9a1b2c3d4e5f6a7b%')
),
ADD EVENT sqlos.wait_info
(
    ACTION (sqlserver.session_id, package0.event_sequence)
    WHERE (sqlserver.session_id = 53 AND sqlserver.sql_text NOT LIKE '%QueryReplay_1558c1fe10524e4f9a1b2c3d4e5f6a7b%' AND opcode = 1 AND (wait_type = 'CXPACKET' OR wait_type = 'CXCONSUMER'))
)
ADD TARGET package0.event_file
(
    SET FILENAME = '/var/opt/mssql/log/QueryReplay_1558c1fe10524e4f9a1b2c3d4e5f6a7b.xel'
       ,MAX_FILE_SIZE = (150)
       ,MAX_ROLLOVER_FILES = (1)
)
WITH (EVENT_RETENTION_MODE = NO_EVENT_LOSS, MAX_DISPATCH_LATENCY = 1 SECONDS, MAX_MEMORY = 16 MB);
CHECKPOINT;
DBCC DROPCLEANBUFFERS WITH NO_INFOMSGS;
dbcc traceon(652);

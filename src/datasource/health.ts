import { ReplayDataSourceOptions } from './types';

/** What GET resources/health answers (pkg/plugin Health). */
export interface HealthReport {
  ok: boolean;
  message: string;
  target?: string;
  version?: string;
  edition?: string;
  /** frames.Persona: box, azure-sql-database, managed-instance or unknown; absent when the server was not reached. */
  persona?: string;
  sysadmin?: boolean;
  permissions?: Array<{ permission: string; why: string; granted: boolean; required: boolean }>;
  missing?: string[];
  warnings?: string[];
  traceStore?: string;
}

/** Whether the query editor offers a trace option, and if not, why (for its tooltip). */
export interface OptionGate {
  allowed: boolean;
  reason: string;
}

const ALLOWED: OptionGate = { allowed: true, reason: '' };

const refused = (reason: string): OptionGate => ({ allowed: false, reason });

/** The DBCC commands behind both options need the sysadmin role. */
function sysadminGate(h: HealthReport, what: string): OptionGate {
  return h.sysadmin === true
    ? ALLOWED
    : refused(`${what} needs the sysadmin role, which this data source's login lacks`);
}

/** The health check reached the server and says who the login is (persona and sysadmin are known). */
function reached(h: HealthReport | null): h is HealthReport & { persona: string } {
  return !!h && typeof h.persona === 'string' && h.persona !== '';
}

/**
 * "No read-ahead" (options.disableReadAhead: DBCC TRACEON(652) for the
 * traced session) is refused by the tracer on Azure SQL Database and
 * Managed Instance (pkg/tracer edition.go) and needs the sysadmin role
 * everywhere else (pkg/tracer permissions.go;
 * https://learn.microsoft.com/en-us/sql/t-sql/database-console-commands/dbcc-traceon-transact-sql#permissions).
 * Until the health check has reached the server the option stays offered:
 * the trace itself then says what is wrong.
 */
export function readAheadGate(h: HealthReport | null): OptionGate {
  if (!reached(h)) {
    return ALLOWED;
  }
  if (h.persona === 'azure-sql-database') {
    return refused(
      'Azure SQL Database does not support trace flags (DBCC TRACEON), so read-ahead cannot be turned off'
    );
  }
  if (h.persona === 'managed-instance') {
    return refused(
      'Azure SQL Managed Instance does not support session trace flag 652, so read-ahead cannot be turned off'
    );
  }
  return sysadminGate(h, 'turning read-ahead off (DBCC TRACEON(652))');
}

/**
 * "Cold cache" (options.clearBufferPool: CHECKPOINT + DBCC DROPCLEANBUFFERS)
 * needs allowBufferPoolClear in the settings, is refused on Azure SQL
 * Database (pkg/tracer edition.go;
 * https://learn.microsoft.com/en-us/sql/t-sql/database-console-commands/dbcc-dropcleanbuffers-transact-sql)
 * and needs the sysadmin role (pkg/plugin health.go requirements).
 */
export function coldCacheGate(settings: ReplayDataSourceOptions, h: HealthReport | null): OptionGate {
  if (!settings.allowBufferPoolClear) {
    return refused('allowBufferPoolClear is off in the data source settings');
  }
  if (!reached(h)) {
    return ALLOWED;
  }
  if (h.persona === 'azure-sql-database') {
    return refused('Azure SQL Database has no DBCC DROPCLEANBUFFERS, so the buffer pool cannot be cleared');
  }
  return sysadminGate(h, 'clearing the buffer pool (DBCC DROPCLEANBUFFERS)');
}

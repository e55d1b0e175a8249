import { DataQuery, DataSourceJsonData } from '@grafana/schema';

// The query model and settings of queryreplay-sqlserver-datasource. The
// names are a contract shared with the Go backend (pkg/plugin), provisioning
// and saved dashboards: docs/frames.md §1 and §2.

export type QueryType = 'trace' | 'bundle' | 'view' | 'compare' | 'probe';

export const QUERY_TYPES: QueryType[] = ['trace', 'bundle', 'view', 'compare', 'probe'];

/** Optional event groups; page I/O, batch events, thread profile and the plan are always traced. */
export type EventGroup = 'locks' | 'waits' | 'memory' | 'splits' | 'log' | 'fileIO';

export const EVENT_GROUPS: EventGroup[] = ['locks', 'waits', 'memory', 'splits', 'log', 'fileIO'];

/** Frame groups a query may ask for (docs/frames.md §3). */
export type FrameGroup = 'trace' | 'operators' | 'plan' | 'lanes' | 'pages' | 'log' | 'callstacks';

export interface TraceOptions {
  /** Absent: all groups. [] traces none of the optional groups. */
  events?: EventGroup[];
  callStacks?: boolean;
  /** CHECKPOINT + DBCC DROPCLEANBUFFERS first; refused unless the setting allowBufferPoolClear is on. */
  clearBufferPool?: boolean;
  /** Trace flag 652 for the run, always turned off after. */
  disableReadAhead?: boolean;
  /** Bounds the traced query; never above the setting traceTimeout. */
  timeoutSeconds?: number;
  /** Event cap; never above the setting maxEvents. */
  maxEvents?: number;
}

/** A window on the trace clock, µs from time zero. */
export interface TraceWindow {
  fromUs: number;
  toUs: number;
}

export interface ReplayQuery extends DataQuery {
  /** Empty means trace. */
  queryType?: QueryType;
  /** The T-SQL batch (trace, probe). */
  sql?: string;
  /** Database to run in; empty means the data source's default. */
  database?: string;
  options?: TraceOptions;
  /** A stored trace (bundle, view): 32 lower-case hex digits. */
  traceId?: string;
  /** compare: the two stored traces, A then B. */
  traceIds?: string[];
  /** view: the window; absent means the time range clipped to the trace, else the whole trace. */
  window?: TraceWindow;
  /** Which frame groups to return; default all (trace, bundle) or trace + lanes (view). */
  frames?: FrameGroup[];
  /** What one of Grafana's built-in panels reads, instead of the frame groups (docs/frames.md §3.12). */
  output?: QueryOutput;
  /**
   * trace: a one-shot run request (runRequest()), set by Execute. Without a
   * fresh one the backend runs nothing and serves the stored trace (runonce.go).
   */
  run?: string;
  /** A query fingerprint (query_hash, 0x + 16 hex digits) to look up; may hold `${var}`. */
  queryHash?: string;
  /**
   * trace: run live (docs/frames.md §3.14): the answer is the live frame with
   * its Grafana Live channel, and the panel watches the trace while it runs.
   */
  live?: boolean;
}

/** The outputs for Grafana's built-in panels (pkg/frames Outputs). */
export type QueryOutput = 'nodeGraph' | 'flameGraph' | 'stateTimeline' | 'table';

export const DEFAULT_QUERY: Partial<ReplayQuery> = {
  queryType: 'trace',
  options: { clearBufferPool: false, disableReadAhead: false },
};

const TRACE_ID = /^[0-9a-f]{32}$/;

/** Whether a query has what its type needs, so empty queries are not sent. */
export function isRunnable(q: ReplayQuery): boolean {
  switch (q.queryType ?? 'trace') {
    case 'trace':
    case 'probe':
      return !!q.sql?.trim();
    case 'bundle':
    case 'view':
      return TRACE_ID.test(q.traceId ?? '');
    case 'compare':
      return (q.traceIds ?? []).length === 2 && q.traceIds!.every((id) => TRACE_ID.test(id));
  }
  return false;
}

/** A new run request: now in unix milliseconds, a dash, 32 random hex digits. */
export function runRequest(now: number = Date.now()): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return `${now}-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

export type AuthType = 'sql' | 'windows' | 'azuread';

/** Grafana org roles, lowest first: minTraceRole is the lowest that may run traces (docs/security.md). */
export type TraceRole = 'Viewer' | 'Editor' | 'Admin';

export const TRACE_ROLES: TraceRole[] = ['Viewer', 'Editor', 'Admin'];

export interface TraceStoreSettings {
  directory?: string;
  bucketURL?: string;
  maxTraces?: number;
  maxMemoryMB?: number;
  maxAgeHours?: number;
  maxDiskMB?: number;
  /** Bound of a bundle uploaded or loaded, once decompressed; default 256, at most 4096. */
  maxBundleMB?: number;
}

/** Non-secret settings; the Go side decodes the same names (pkg/plugin/settings.go). */
export interface ReplayDataSourceOptions extends DataSourceJsonData {
  host?: string;
  port?: number;
  database?: string;
  user?: string;
  authType?: AuthType;
  azureCredential?: 'servicePrincipal' | 'managedIdentity';
  tenantId?: string;
  kerberosRealm?: string;
  kerberosConfigFile?: string;
  kerberosKeytabFile?: string;
  kerberosCredentialCache?: string;
  encrypt?: 'disable' | 'true' | 'strict';
  trustServerCertificate?: boolean;
  /** PEM text, or the path of a PEM file on the Grafana host. */
  tlsCA?: string;
  connectTimeoutSeconds?: number;
  maxConcurrentTraces?: number;
  /** Seconds, or a duration string such as "30s". */
  traceQueueTimeout?: number | string;
  /** Seconds, or a duration string such as "5m". */
  traceTimeout?: number | string;
  maxEvents?: number;
  /** Bound of one query's JSON (the batch text is the big part); default 4, at most 256. */
  maxQueryMB?: number;
  allowBufferPoolClear?: boolean;
  allowModifications?: boolean;
  symbolServers?: string[];
  symbolCacheDir?: string;
  /** Lowest org role that may run traces and probes and see every user's traces; default Editor. */
  minTraceRole?: TraceRole;
  traceStore?: TraceStoreSettings;
}

/** Secret settings, write-only from the browser. */
export interface ReplaySecureJsonData {
  password?: string;
  clientSecret?: string;
  /** Static S3 credentials of an s3:// traceStore.bucketURL (else the AWS default chain). */
  traceStoreAccessKey?: string;
  traceStoreSecretKey?: string;
}

/**
 * Problems the editor can see before a save; the backend re-checks
 * everything. passwordSet and clientSecretSet say which secrets are configured.
 */
export function settingsProblems(o: ReplayDataSourceOptions, passwordSet: boolean, clientSecretSet = false): string[] {
  const problems: string[] = [];
  if (!o.host?.trim()) {
    problems.push('host is missing');
  } else if (/[\/?#@ ;]/.test(o.host)) {
    problems.push('host must be a host name or address, without scheme, path or credentials');
  }
  if (o.port !== undefined && (o.port < 1 || o.port > 65535 || !Number.isInteger(o.port))) {
    problems.push('port must be a whole number from 1 to 65535');
  }
  switch (o.authType ?? 'sql') {
    case 'sql':
      if (!o.user?.trim()) {
        problems.push('user is missing');
      }
      if (!passwordSet) {
        problems.push('password is missing');
      }
      break;
    case 'windows':
      if (!o.user?.trim() && !o.kerberosCredentialCache) {
        problems.push('authType windows needs user (the Kerberos principal) or kerberosCredentialCache');
      }
      break;
    case 'azuread':
      if ((o.azureCredential ?? 'servicePrincipal') === 'servicePrincipal') {
        if (!o.user?.trim()) {
          problems.push('user (the application client id) is missing');
        }
        if (!o.tenantId?.trim()) {
          problems.push('tenantId is missing');
        }
        if (!clientSecretSet) {
          problems.push('clientSecret is missing');
        }
      }
      break;
    default:
      problems.push(`authType ${o.authType} must be sql, windows or azuread`);
  }
  if (o.maxConcurrentTraces !== undefined && (o.maxConcurrentTraces < 1 || o.maxConcurrentTraces > 32)) {
    problems.push('maxConcurrentTraces must be from 1 to 32');
  }
  return problems;
}

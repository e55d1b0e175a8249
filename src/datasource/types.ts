import { DataQuery, DataSourceJsonData } from '@grafana/schema';

/** A trace request: one batch to run inside a private Extended Events session. */
export interface ReplayQuery extends DataQuery {
  /** The T-SQL batch to trace. */
  sql?: string;
  /** Database to run in; empty means the data source's default. */
  database?: string;
  /** Clear the buffer pool first (CHECKPOINT + DBCC DROPCLEANBUFFERS); needs the server policy to allow it. */
  coldCache?: boolean;
  /** Turn read-ahead off for the run (trace flag 652). */
  noReadAhead?: boolean;
}

export const DEFAULT_QUERY: Partial<ReplayQuery> = {
  coldCache: false,
  noReadAhead: false,
};

/** Non-secret settings; the Go side decodes the same names (pkg/plugin/settings.go). */
export interface ReplayDataSourceOptions extends DataSourceJsonData {
  host?: string;
  port?: number;
  database?: string;
  user?: string;
  encrypt?: 'true' | 'false' | 'strict' | 'disable';
  trustServerCertificate?: boolean;
  connectTimeoutSeconds?: number;
}

/** Secret settings, write-only from the browser. */
export interface ReplaySecureJsonData {
  password?: string;
}

/** Problems the editor can see before a save; the backend re-checks everything. */
export function settingsProblems(o: ReplayDataSourceOptions, passwordSet: boolean): string[] {
  const problems: string[] = [];
  if (!o.host?.trim()) {
    problems.push('host is missing');
  } else if (/[\/?#@ ]/.test(o.host)) {
    problems.push('host must be a host name or address, without scheme, path or credentials');
  }
  if (o.port !== undefined && (o.port < 1 || o.port > 65535 || !Number.isInteger(o.port))) {
    problems.push('port must be a whole number from 1 to 65535');
  }
  if (!o.user?.trim()) {
    problems.push('user is missing');
  }
  if (!passwordSet) {
    problems.push('password is missing');
  }
  return problems;
}

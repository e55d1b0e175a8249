import { ScopedVars } from '@grafana/data';
import { ReplayQuery } from './types';

// Dashboard variables in the query model (docs/frames.md §1, "Variables").
//
// Grafana leaves `${var}` alone unless the data source replaces it:
// DataSourceWithBackend.applyTemplateVariables returns the query unchanged
// by default (@grafana/runtime, src/utils/DataSourceWithBackend.ts), and the
// replacement itself is TemplateSrv.replace(text, scopedVars, format)
// (grafana.com/docs/grafana/latest/dashboards/variables/variable-syntax/).

/** TemplateSrv.replace as this module uses it, so the logic runs without Grafana's singleton. */
export type Replace = (text: string, scopedVars: ScopedVars | undefined, format: string) => string;

/**
 * The format every string of the query is interpolated with: `raw`, the value
 * exactly as the variable holds it. The values land in JSON fields, never
 * spliced into SQL by us: `sql` is the batch itself (a `singlequote` or
 * `sqlstring` format would turn `SELECT 1` into `'SELECT 1'`), `database` is
 * quoted by the backend, and trace ids are matched against 32 hex digits.
 * Grafana's default (no format, i.e. glob) would give `{a,b}` for a multi-value variable.
 * A format written in the text, `${sql:singlequote}`, still wins over this one.
 */
export const VARIABLE_FORMAT = 'raw';

/** A copy of q with every user-written string interpolated: sql, database, traceId, traceIds, queryHash. */
export function interpolateQuery(q: ReplayQuery, scopedVars: ScopedVars | undefined, replace: Replace): ReplayQuery {
  const r = (s: string) => replace(s, scopedVars, VARIABLE_FORMAT);
  const out: ReplayQuery = { ...q };
  if (q.sql !== undefined) {
    out.sql = r(q.sql);
  }
  if (q.database !== undefined) {
    out.database = r(q.database);
  }
  if (q.traceId !== undefined) {
    out.traceId = r(q.traceId);
  }
  if (q.traceIds !== undefined) {
    out.traceIds = q.traceIds.map(r);
  }
  if (q.queryHash !== undefined) {
    out.queryHash = r(q.queryHash);
  }
  return out;
}

/** Longest statement text shown in query history and the inspector before it is cut. */
export const DISPLAY_SQL_CHARS = 120;

/** One line that names what a query does, for Explore's query history. */
export function queryDisplayText(q: ReplayQuery): string {
  const type = q.queryType ?? 'trace';
  switch (type) {
    case 'trace':
    case 'probe': {
      const sql = (q.sql ?? '').replace(/\s+/g, ' ').trim();
      const cut = sql.length > DISPLAY_SQL_CHARS ? sql.slice(0, DISPLAY_SQL_CHARS - 1) + '…' : sql;
      return `${type}${q.database ? ` in ${q.database}` : ''}: ${cut}`;
    }
    case 'bundle':
    case 'view':
      return `${type} ${q.traceId ?? ''}`.trim();
    case 'compare':
      return `compare ${(q.traceIds ?? []).join(' vs ')}`.trim();
  }
  return String(type);
}

/** What a query variable on this data source may list (Grafana's query variable, legacy text query). */
export type VariableQuery = 'databases' | 'traces';

export const VARIABLE_QUERIES: VariableQuery[] = ['databases', 'traces'];

/** The query variable's text, or why it is not one this data source answers. */
export function parseVariableQuery(text: unknown): VariableQuery {
  const t = typeof text === 'string' ? text.trim().toLowerCase() : '';
  const q = VARIABLE_QUERIES.find((v) => v === t);
  if (!q) {
    throw new Error(
      `variable query must be one of ${VARIABLE_QUERIES.join(', ')} (got ${JSON.stringify(String(text ?? '')).slice(0, 40)})`
    );
  }
  return q;
}

/** An entry of GET resources/databases. */
export interface DatabaseEntry {
  name: string;
}

/** An entry of GET resources/traces. */
export interface TraceEntry {
  traceId: string;
  statement: string;
  startedAt: string;
}

/** Longest statement text in a trace variable's option label. */
export const VARIABLE_LABEL_CHARS = 60;

/** Options of a databases variable: the name is both label and value. */
export function databaseOptions(list: DatabaseEntry[]): Array<{ text: string; value: string }> {
  return list.map((d) => ({ text: d.name, value: d.name }));
}

/** Options of a traces variable: labelled by statement and start, valued by trace id. */
export function traceOptions(list: TraceEntry[]): Array<{ text: string; value: string }> {
  return list.map((t) => {
    const sql = t.statement.replace(/\s+/g, ' ').trim();
    const cut = sql.length > VARIABLE_LABEL_CHARS ? sql.slice(0, VARIABLE_LABEL_CHARS - 1) + '…' : sql;
    return { text: `${cut} (${t.startedAt})`, value: t.traceId };
  });
}

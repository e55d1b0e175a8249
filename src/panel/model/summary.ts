import { DataFrame, Field } from '@grafana/data';

/**
 * What the panel shows above and beside the replay, read from the frames
 * of docs/frames.md: the query in view (the trace frame's facts and
 * options) and Plan Explorer's summaries (table_io, wait_stats). Pure, so
 * the header and the tables are tested without a browser.
 */

export interface TraceOptions {
  clearBufferPool: boolean;
  disableReadAhead: boolean;
  callStacks: boolean;
  modification: boolean;
  events: string[];
}

export interface QueryFacts {
  statement: string;
  database: string;
  serverVersion: string;
  persona: string;
  elapsedUs: number;
  rows: number;
  rowsAffected: number;
  /** Plan counters: null when the plan has none. */
  logicalReads: number | null;
  physicalReads: number | null;
  readAheads: number | null;
  cpuMs: number | null;
  pageReads: number;
  waitUs: number;
  events: number;
  options: TraceOptions;
  warnings: string[];
}

export interface TableIORow {
  object: string;
  table: string;
  index: string;
  logicalReads: number | null;
  physicalReads: number | null;
  readAheads: number | null;
  scans: number | null;
  pageReads: number;
  locks: number;
  nodeIds: number[];
}

export interface WaitStat {
  waitType: string;
  /** The class in pkg/timeline/waitclasses.tsv ("Buffer IO", "Lock", …, "Other"). */
  waitClass: string;
  waits: number;
  waitUs: number;
  untimed: number;
  firstUs: number;
}

export interface WaitClassTotal {
  waitClass: string;
  waits: number;
  waitUs: number;
  types: string[];
}

export interface Summaries {
  facts: QueryFacts | null;
  tableIO: TableIORow[] | null;
  waits: WaitStat[] | null;
}

function byName(series: DataFrame[], name: string): DataFrame | undefined {
  return series.find((f) => (f.name ?? f.refId) === name);
}

function fieldOf(frame: DataFrame, name: string): Field | undefined {
  return frame.fields.find((f) => f.name === name);
}

function value(frame: DataFrame, name: string, row: number): unknown {
  return fieldOf(frame, name)?.values[row];
}

function n(v: unknown): number {
  return v === null || v === undefined || v === '' ? 0 : Number(v);
}

function nOrNull(v: unknown): number | null {
  return v === null || v === undefined ? null : Number(v);
}

function s(v: unknown): string {
  return v === null || v === undefined ? '' : String(v);
}

export function optionsOf(raw: unknown): TraceOptions {
  const o = (raw ?? {}) as Record<string, unknown>;
  return {
    clearBufferPool: o.clearBufferPool === true,
    disableReadAhead: o.disableReadAhead === true,
    callStacks: o.callStacks === true,
    modification: o.modification === true,
    events: Array.isArray(o.events) ? o.events.map(String) : [],
  };
}

function factsOf(trace: DataFrame | undefined): QueryFacts | null {
  if (!trace || trace.length === 0) {
    return null;
  }
  const meta = (trace.meta?.custom ?? {}) as Record<string, unknown>;
  const v = (name: string) => value(trace, name, 0);
  return {
    statement: s(v('statement') ?? meta.statement),
    database: s(v('database') ?? meta.database),
    serverVersion: s(v('serverVersion')),
    persona: s(v('persona')),
    elapsedUs: n(v('durationUs')),
    rows: n(v('rows')),
    rowsAffected: n(v('rowsAffected')),
    logicalReads: nOrNull(v('logicalReads')),
    physicalReads: nOrNull(v('physicalReads')),
    readAheads: nOrNull(v('readAheads')),
    cpuMs: nOrNull(v('cpuMs')),
    pageReads: n(v('pageReads')),
    waitUs: n(v('waitUs')),
    events: n(v('events')),
    options: optionsOf(meta.options),
    warnings: Array.isArray(meta.warnings) ? meta.warnings.map(String) : [],
  };
}

function tableIOOf(f: DataFrame | undefined): TableIORow[] | null {
  if (!f) {
    return null;
  }
  const rows: TableIORow[] = [];
  for (let r = 0; r < f.length; r++) {
    rows.push({
      object: s(value(f, 'object', r)),
      table: s(value(f, 'table', r)),
      index: s(value(f, 'index', r)),
      logicalReads: nOrNull(value(f, 'logicalReads', r)),
      physicalReads: nOrNull(value(f, 'physicalReads', r)),
      readAheads: nOrNull(value(f, 'readAheads', r)),
      scans: nOrNull(value(f, 'scans', r)),
      pageReads: n(value(f, 'pageReads', r)),
      locks: n(value(f, 'locks', r)),
      nodeIds: s(value(f, 'nodeIds', r))
        .split(',')
        .filter((x) => x !== '')
        .map(Number),
    });
  }
  return rows;
}

function waitsOf(f: DataFrame | undefined): WaitStat[] | null {
  if (!f) {
    return null;
  }
  const out: WaitStat[] = [];
  for (let r = 0; r < f.length; r++) {
    out.push({
      waitType: s(value(f, 'waitType', r)),
      waitClass: s(value(f, 'class', r)) || 'Other',
      waits: n(value(f, 'waits', r)),
      waitUs: n(value(f, 'waitUs', r)),
      untimed: n(value(f, 'untimed', r)),
      firstUs: n(value(f, 'firstUs', r)),
    });
  }
  return out;
}

/** The header's facts and the two summaries; null parts when the response lacks their frame (a zoom's `view`). */
export function summariesFromFrames(series: DataFrame[]): Summaries {
  return {
    facts: factsOf(byName(series, 'trace')),
    tableIO: tableIOOf(byName(series, 'table_io')),
    waits: waitsOf(byName(series, 'wait_stats')),
  };
}

/** Wait time by class, most time first; every class the trace waited in, "Other" included. */
export function waitsByClass(waits: WaitStat[]): WaitClassTotal[] {
  const m = new Map<string, WaitClassTotal>();
  for (const w of waits) {
    const t = m.get(w.waitClass) ?? { waitClass: w.waitClass, waits: 0, waitUs: 0, types: [] };
    t.waits += w.waits;
    t.waitUs += w.waitUs;
    t.types.push(w.waitType);
    m.set(w.waitClass, t);
  }
  return Array.from(m.values()).sort(
    (a, b) => b.waitUs - a.waitUs || b.waits - a.waits || a.waitClass.localeCompare(b.waitClass)
  );
}

/** "12,345". */
export function count(v: number): string {
  return v.toLocaleString('en-US');
}

/** The options in the terminal's words: "cold cache, read-ahead off", "warm cache", … */
export function optionsText(o: TraceOptions): string[] {
  const out: string[] = [];
  if (o.clearBufferPool && o.disableReadAhead) {
    out.push('cold cache, read-ahead off');
  } else if (o.clearBufferPool) {
    out.push('cold cache');
  } else {
    out.push('warm cache');
    if (o.disableReadAhead) {
      out.push('read-ahead off');
    }
  }
  if (o.callStacks) {
    out.push('call stacks');
  }
  if (o.modification) {
    out.push('modification rolled back');
  }
  return out;
}

/** The rows in the terminal's words: "12 rows", "0 rows returned, 5 affected". */
export function rowsText(f: Pick<QueryFacts, 'rows' | 'rowsAffected'>): string {
  const rows = `${count(f.rows)} ${f.rows === 1 ? 'row' : 'rows'}`;
  return f.rowsAffected > 0 ? `${rows} returned, ${count(f.rowsAffected)} affected` : rows;
}

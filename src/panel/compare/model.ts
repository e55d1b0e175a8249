import { DataFrame, Field } from '@grafana/data';
import { ReplayTrace, traceFromFrames } from '../model/trace';
import { formatDuration } from '../replay/scale';

/**
 * A `compare` response (docs/frames.md §3.11) read for the compare mode:
 * the statement's verdict, one row per operator pair with its metrics on
 * both sides, and each side's own frames (suffixed `_a`/`_b`) read as a
 * replay trace. Both sides' µs fields are relative to their own time zero,
 * and the backend put both time zeros on A's clock, so the two traces are
 * aligned at their starts on one µs axis as they are.
 */

export type Side = 'a' | 'b';
export type PairStatus = 'same' | 'changed' | 'replaced' | 'added' | 'removed';
export const STATUSES: PairStatus[] = ['replaced', 'changed', 'added', 'removed', 'same'];

/** The metric columns of compare_operators, each as <m>A, <m>B and <m>Changed. */
export const METRICS = [
  'reads',
  'pageReads',
  'rows',
  'executions',
  'durationUs',
  'spills',
  'tempdbWrites',
  'locks',
  'splits',
  'logRecords',
  'waitIoUs',
  'waitCpuUs',
  'waitConcurrencyUs',
  'waitParallelismUs',
  'waitOtherUs',
  'phaseConsumeUs',
  'phaseBuildUs',
  'phaseProbeUs',
  'phaseEmitUs',
  'phaseReexecutedUs',
] as const;
export type Metric = (typeof METRICS)[number];

export interface MetricPair {
  a: number | null;
  b: number | null;
  /** The difference is significant (pkg/compare's thresholds). */
  changed: boolean;
}

export interface Span {
  startUs: number;
  endUs: number;
}

export interface PairRow {
  status: PairStatus;
  /** The matching step (identical, same-object, replaced, container, root, children); empty for added/removed. */
  how: string;
  verdict: string;
  nodeA: number | null;
  nodeB: number | null;
  nameA: string;
  nameB: string;
  objectA: string;
  objectB: string;
  spanA: Span | null;
  spanB: Span | null;
  metrics: Record<Metric, MetricPair>;
  /** The statement pair the row belongs to (statement tree node ids; null on the side without it, or without trees). */
  statementA: number | null;
  statementB: number | null;
  /** The statement's text; empty when the traces have no statement trees. */
  statement: string;
}

/** One statement pair of a multi-statement compare (meta.custom.statements), with its own verdict. */
export interface StatementPair {
  /** Node ids of each side's statement tree; null on the side that did not run it. */
  a: number | null;
  b: number | null;
  text: string;
  /** "text", "position", or empty for a statement only one side ran. */
  how: string;
  status: PairStatus;
  verdict: string;
}

export interface StatementMetric {
  name: string;
  unit: string;
  a: number | null;
  b: number | null;
  changed: boolean;
}

export interface Comparison {
  traceIdA: string;
  traceIdB: string;
  verdict: string;
  /** logical (runtime counters of both plans) or physical (page read events). */
  readsSource: string;
  counts: Record<PairStatus, number>;
  durationUsA: number;
  durationUsB: number;
  statement: StatementMetric[];
  /** The statement pairs, when both traces had statement trees (the verdict is then the whole batch's). */
  statements: StatementPair[];
  rows: PairRow[];
  a: ReplayTrace;
  b: ReplayTrace;
}

export type CompareRead = { comparison: Comparison; error?: undefined } | { comparison?: undefined; error: string };

/** Whether the frames are a compare response. */
export function isCompareResponse(frames: DataFrame[]): boolean {
  return frames.some((f) => f.name === 'compare' || f.name === 'compare_operators');
}

function sideOf(f: DataFrame): Side | null {
  const s = (f.meta?.custom as { side?: unknown } | undefined)?.side;
  if (s === 'a' || s === 'b') {
    return s;
  }
  const m = /_(a|b)$/.exec(f.name ?? '');
  return m && (f.name ?? '').length > 2 ? (m[1] as Side) : null;
}

/** One side's frames with their suffix removed, so the replay's reader takes them as a trace response. */
export function sideFrames(frames: DataFrame[], side: Side): DataFrame[] {
  return frames
    .filter((f) => f.name !== 'compare' && f.name !== 'compare_operators' && sideOf(f) === side)
    .map((f) => ({ ...f, name: (f.name ?? '').replace(/_(a|b)$/, '') }));
}

function reader(frame: DataFrame) {
  const col = (name: string): Field | undefined => frame.fields.find((f) => f.name === name);
  const at = (name: string, r: number): unknown => col(name)?.values[r];
  return {
    str: (name: string, r: number) => {
      const v = at(name, r);
      return v === null || v === undefined ? '' : String(v);
    },
    num: (name: string, r: number): number | null => {
      const v = at(name, r);
      return v === null || v === undefined || Number.isNaN(Number(v)) ? null : Number(v);
    },
    bool: (name: string, r: number) => at(name, r) === true,
  };
}

function span(start: number | null, end: number | null): Span | null {
  return start === null ? null : { startUs: start, endUs: Math.max(start, end ?? start) };
}

function readRows(ops: DataFrame | undefined): PairRow[] {
  if (!ops) {
    return [];
  }
  const { str, num, bool } = reader(ops);
  const rows: PairRow[] = [];
  for (let r = 0; r < ops.length; r++) {
    const metrics = {} as Record<Metric, MetricPair>;
    for (const m of METRICS) {
      metrics[m] = { a: num(`${m}A`, r), b: num(`${m}B`, r), changed: bool(`${m}Changed`, r) };
    }
    const status = str('status', r) as PairStatus;
    rows.push({
      status: STATUSES.includes(status) ? status : 'same',
      how: str('how', r),
      verdict: str('verdict', r),
      nodeA: num('nodeIdA', r),
      nodeB: num('nodeIdB', r),
      nameA: str('nameA', r),
      nameB: str('nameB', r),
      objectA: str('objectA', r),
      objectB: str('objectB', r),
      spanA: span(num('startUsA', r), num('endUsA', r)),
      spanB: span(num('startUsB', r), num('endUsB', r)),
      metrics,
      statementA: num('statementIdA', r),
      statementB: num('statementIdB', r),
      statement: str('statement', r),
    });
  }
  return rows;
}

function readStatement(v: unknown): StatementMetric[] {
  if (!Array.isArray(v)) {
    return [];
  }
  return v
    .filter((m) => m && typeof m === 'object')
    .map((m: Record<string, unknown>) => ({
      name: String(m.name ?? ''),
      unit: String(m.unit ?? ''),
      a: m.a === null || m.a === undefined ? null : Number(m.a),
      b: m.b === null || m.b === undefined ? null : Number(m.b),
      changed: m.changed === true,
    }));
}

function readStatements(v: unknown): StatementPair[] {
  if (!Array.isArray(v)) {
    return [];
  }
  const id = (x: unknown) => (typeof x === 'number' && x >= 0 ? x : null);
  return v
    .filter((m) => m && typeof m === 'object')
    .map((m: Record<string, unknown>) => {
      const status = String(m.status ?? '') as PairStatus;
      return {
        a: id(m.a),
        b: id(m.b),
        text: String(m.text ?? ''),
        how: String(m.how ?? ''),
        status: STATUSES.includes(status) ? status : 'same',
        verdict: String(m.verdict ?? ''),
      };
    });
}

/** The statement pair a row belongs to, or -1 (no statement trees). */
export function statementOfRow(c: Comparison, row: PairRow): number {
  if (row.statementA === null && row.statementB === null) {
    return -1;
  }
  return c.statements.findIndex((s) => s.a === row.statementA && s.b === row.statementB);
}

/** Reads a compare response; says what is missing when it cannot. */
export function compareFromFrames(frames: DataFrame[]): CompareRead {
  const summary = frames.find((f) => f.name === 'compare');
  if (!summary || summary.length === 0) {
    return { error: 'The compare response has no compare frame.' };
  }
  const sides = (['a', 'b'] as Side[]).map((s) => traceFromFrames(sideFrames(frames, s)));
  const [a, b] = sides;
  if (!a.trace || !b.trace) {
    return {
      error: `The compare response lacks the frames of trace ${!a.trace ? 'A' : 'B'} (frames ending in _${!a.trace ? 'a' : 'b'}).`,
    };
  }
  const { str, num } = reader(summary);
  const counts = {} as Record<PairStatus, number>;
  for (const s of STATUSES) {
    counts[s] = num(s, 0) ?? 0;
  }
  const custom = (summary.meta?.custom ?? {}) as { statement?: unknown; statements?: unknown };
  return {
    comparison: {
      traceIdA: str('traceIdA', 0),
      traceIdB: str('traceIdB', 0),
      verdict: str('verdict', 0),
      readsSource: str('readsSource', 0),
      counts,
      durationUsA: num('durationUsA', 0) ?? a.trace.durationUs,
      durationUsB: num('durationUsB', 0) ?? b.trace.durationUs,
      statement: readStatement(custom.statement),
      statements: readStatements(custom.statements),
      rows: readRows(frames.find((f) => f.name === 'compare_operators')),
      a: a.trace,
      b: b.trace,
    },
  };
}

/**
 * What a side's header says about its statement: "7.7 ms elapsed · operators
 * 1.2 ms · 61 logical reads · 1 spill" — the batch's elapsed time, its
 * operators' own time, the reads the comparison counts (by their name), and
 * spills when either side spilled.
 */
export function sideFacts(c: Comparison, side: Side): string {
  const v = (name: string) => {
    const m = c.statement.find((x) => x.name === name);
    return m ? (side === 'a' ? m.a : m.b) : null;
  };
  const facts = [`${formatDuration(side === 'a' ? c.durationUsA : c.durationUsB)} elapsed`];
  const ops = v('operatorUs');
  if (ops !== null) {
    facts.push(`operators ${formatDuration(ops)}`);
  }
  const reads = v('reads');
  if (reads !== null) {
    facts.push(
      `${reads.toLocaleString('en-US')} ${c.readsSource === 'logical' ? 'logical reads' : 'page reads in the trace'}`
    );
  }
  const spills = c.statement.find((x) => x.name === 'spills');
  if (spills && ((spills.a ?? 0) > 0 || (spills.b ?? 0) > 0)) {
    const n = v('spills') ?? 0;
    facts.push(`${n} spill${n === 1 ? '' : 's'}`);
  }
  return facts.join(' · ');
}

/** The row of an operator of one side, or -1. */
export function rowOf(rows: PairRow[], side: Side, node: number | null): number {
  if (node === null) {
    return -1;
  }
  return rows.findIndex((r) => (side === 'a' ? r.nodeA : r.nodeB) === node);
}

/** The operator of the other side matched with `node` of `side` (null when it was added or removed). */
export function counterpart(rows: PairRow[], side: Side, node: number | null): number | null {
  const i = rowOf(rows, side, node);
  if (i < 0) {
    return null;
  }
  return side === 'a' ? rows[i].nodeB : rows[i].nodeA;
}

/**
 * The colour id of B's operators: a matched operator takes its A partner's
 * id, so a pair has one colour in both timelines; operators only in B get
 * ids after A's, so they never share a colour with an A operator by accident.
 */
export function colourIdsOfB(rows: PairRow[], a: ReplayTrace): (nodeB: number) => number {
  const map = new Map<number, number>();
  let next = Math.max(-1, ...a.operators.map((o) => o.nodeId)) + 1;
  for (const r of rows) {
    if (r.nodeB !== null) {
      map.set(r.nodeB, r.nodeA ?? next++);
    }
  }
  return (nodeB: number) => (nodeB < 0 ? nodeB : (map.get(nodeB) ?? nodeB + next));
}

import { DataFrame } from '@grafana/data';
import { Operator } from '../model/trace';

/**
 * A live trace as the panel reads it (docs/frames.md §3.14): the one `live`
 * frame, a complete snapshot each time — operators' progress so far (one
 * row each), the status and every event so far at a bounded level of detail
 * in meta.custom. Grafana Live (or the viewer's event stream) replaces the
 * frame several times a second (after each read of the events).
 */

export const LIVE_FRAME = 'live';

export interface LiveStatus {
  seq: number;
  elapsedMs: number;
  running: boolean;
  done: boolean;
  eventsSoFar: number;
  eventsDropped: number;
  traceId?: string;
  error?: string;
  planOmitted?: boolean;
}

export interface LiveOperator {
  nodeId: number;
  name: string;
  object: string;
  /** waiting (not opened), running, done (closed). */
  state: string;
  rows: number;
  estimatedRows: number;
  logicalReads: number;
  physicalReads: number;
  elapsedMs: number;
  cpuMs: number;
}

/** One row of the events: a raw event (count 1) or a lane's time bucket. */
export interface LiveEventRow {
  tUs: number;
  durationUs: number;
  lane: string;
  name: string;
  count: number;
}

export interface LiveSnapshot {
  liveId: string;
  channel: string;
  status: LiveStatus;
  operators: LiveOperator[];
  mode: 'raw' | 'binned';
  bucketUs: number;
  events: LiveEventRow[];
  planXml: string;
}

/** The lanes in the order the replay draws them (docs/frames.md §3.5), then anything else. */
export const LIVE_LANES = ['read', 'write', 'lock', 'wait', 'memory', 'split', 'log', 'io', 'other'];

type Custom = Record<string, unknown>;

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

function column<T>(f: DataFrame, name: string, conv: (v: unknown) => T): (i: number) => T {
  const field = f.fields.find((x) => x.name === name);
  return (i) => conv(field ? field.values[i] : undefined);
}

function isStatus(v: unknown): boolean {
  return typeof v === 'object' && v !== null && 'seq' in v && 'running' in v;
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');

/**
 * The live snapshot of a response, or null when it holds no live frame. The
 * frame is known by its meta.custom.live, not only its name: Grafana's
 * StreamingDataFrame does not keep a streamed frame's name.
 */
export function liveFromFrames(series: DataFrame[] | undefined): LiveSnapshot | null {
  const f = series?.find(
    (s) => (s.name === LIVE_FRAME || !s.name) && isStatus((s.meta?.custom as Custom | undefined)?.live)
  );
  if (!f) {
    return null;
  }
  const c = f.meta!.custom as Custom;
  const st = c.live as Partial<LiveStatus>;
  const status: LiveStatus = {
    seq: num(st.seq),
    elapsedMs: num(st.elapsedMs),
    running: !!st.running,
    done: !!st.done,
    eventsSoFar: num(st.eventsSoFar),
    eventsDropped: num(st.eventsDropped),
    traceId: str(st.traceId) || undefined,
    error: str(st.error) || undefined,
    planOmitted: !!st.planOmitted,
  };
  const get = {
    nodeId: column(f, 'nodeId', num),
    name: column(f, 'name', str),
    object: column(f, 'object', str),
    state: column(f, 'state', str),
    rows: column(f, 'actualRows', num),
    est: column(f, 'estimatedRows', num),
    lr: column(f, 'logicalReads', num),
    pr: column(f, 'physicalReads', num),
    el: column(f, 'actualElapsedMs', num),
    cpu: column(f, 'actualCpuMs', num),
  };
  const operators: LiveOperator[] = [];
  for (let i = 0; i < f.length; i++) {
    operators.push({
      nodeId: get.nodeId(i),
      name: get.name(i),
      object: get.object(i),
      state: get.state(i),
      rows: get.rows(i),
      estimatedRows: get.est(i),
      logicalReads: get.lr(i),
      physicalReads: get.pr(i),
      elapsedMs: get.el(i),
      cpuMs: get.cpu(i),
    });
  }
  const ev = (c.events ?? {}) as Record<string, unknown>;
  const cols = (k: string) => (Array.isArray(ev[k]) ? (ev[k] as unknown[]) : []);
  const t = cols('tUs');
  const events: LiveEventRow[] = t.map((v, i) => ({
    tUs: num(v),
    durationUs: num(cols('durationUs')[i]),
    lane: str(cols('lane')[i]) || 'other',
    name: str(cols('name')[i]),
    count: num(cols('count')[i]) || 1,
  }));
  return {
    liveId: str(c.liveId),
    channel: f.meta?.channel ?? '',
    status,
    operators,
    mode: ev.mode === 'binned' ? 'binned' : 'raw',
    bucketUs: num(ev.bucketUs),
    events,
    planXml: str(c.planXml),
  };
}

/**
 * The plan's tree from showplan XML: each RelOp's NodeId and the NodeId of
 * the RelOp it is nested in (null for a statement's top operator). Empty
 * when there is no plan or it does not parse.
 */
export function planParents(planXml: string): Map<number, number | null> {
  const out = new Map<number, number | null>();
  if (!planXml || typeof DOMParser === 'undefined') {
    return out;
  }
  const doc = new DOMParser().parseFromString(planXml, 'application/xml');
  if (doc.getElementsByTagName('parsererror').length > 0) {
    return out;
  }
  const ops = doc.getElementsByTagNameNS('*', 'RelOp');
  for (let i = 0; i < ops.length; i++) {
    const id = Number(ops[i].getAttribute('NodeId'));
    if (!Number.isInteger(id) || out.has(id)) {
      continue;
    }
    let p = ops[i].parentElement;
    while (p && p.localName !== 'RelOp') {
      p = p.parentElement;
    }
    const pid = p ? Number(p.getAttribute('NodeId')) : NaN;
    out.set(id, Number.isInteger(pid) ? pid : null);
  }
  return out;
}

/**
 * The live operators as the plan diagram's operators: the tree from the
 * plan (when known, else a flat list under the first), rows so far as the
 * actual rows, and the counters so far.
 */
export function diagramOperators(snap: LiveSnapshot, parents: Map<number, number | null>): Operator[] {
  const ids = new Set(snap.operators.map((o) => o.nodeId));
  const first = snap.operators[0]?.nodeId ?? 0;
  const ops = snap.operators.map((o, order): Operator => {
    const known = parents.has(o.nodeId);
    const p = known ? parents.get(o.nodeId)! : o.nodeId === first ? null : first;
    return {
      ...EMPTY_OPERATOR,
      nodeId: o.nodeId,
      parentId: p !== null && ids.has(p) ? p : null,
      physicalOp: o.name,
      name: o.name,
      object: o.object,
      actualRows: o.rows,
      estimatedRows: o.estimatedRows,
      logicalReads: o.logicalReads,
      physicalReads: o.physicalReads,
      actualElapsedMs: o.elapsedMs,
      actualCpuMs: o.cpuMs,
      executed: o.state !== 'waiting',
      order,
      children: [],
      phases: [],
      threads: [],
    };
  });
  const byId = new Map(ops.map((o) => [o.nodeId, o]));
  for (const o of ops) {
    if (o.parentId !== null) {
      byId.get(o.parentId)?.children.push(o.nodeId);
    }
  }
  return ops;
}

const EMPTY_OPERATOR: Operator = {
  nodeId: 0,
  parentId: null,
  physicalOp: '',
  name: '',
  logicalOp: '',
  behavior: '',
  object: '',
  timeSource: 'live',
  startUs: 0,
  firstEmitUs: 0,
  endUs: 0,
  durationUs: 0,
  reads: 0,
  writes: 0,
  locks: 0,
  waits: 0,
  spills: 0,
  splits: 0,
  logRecords: 0,
  waitUs: 0,
  matched: 0,
  matchExact: 0,
  matchStrong: 0,
  matchWeak: 0,
  matchLow: 0,
  actualRows: null,
  actualExecutions: null,
  actualElapsedMs: null,
  actualCpuMs: null,
  logicalReads: null,
  physicalReads: null,
  estimatedRows: null,
  executed: false,
  notExecutedReason: '',
  executions: 0,
  phases: [],
  threads: [],
  depth: 0,
  order: 0,
  children: [],
};

/** The operator's progress as a DBA reads it: "1,234 of 5,000 rows (25%)". */
export function rowsText(o: LiveOperator): string {
  const n = (v: number) => v.toLocaleString('en-US');
  if (o.estimatedRows > 0) {
    const pct = Math.round((100 * o.rows) / o.estimatedRows);
    return `${n(o.rows)} of ${n(Math.round(o.estimatedRows))} est. rows (${pct}%)`;
  }
  return `${n(o.rows)} rows`;
}

/** Events per lane, in drawing order (lanes with no events left out). */
export function eventsByLane(snap: LiveSnapshot): Array<{ lane: string; rows: LiveEventRow[]; count: number }> {
  const by = new Map<string, LiveEventRow[]>();
  for (const e of snap.events) {
    const lane = LIVE_LANES.includes(e.lane) ? e.lane : 'other';
    (by.get(lane) ?? by.set(lane, []).get(lane)!).push(e);
  }
  return LIVE_LANES.filter((l) => by.has(l)).map((lane) => ({
    lane,
    rows: by.get(lane)!,
    count: by.get(lane)!.reduce((n, e) => n + e.count, 0),
  }));
}

/**
 * The playhead: it follows "now" (the trace's elapsed time) until the user
 * grabs it; grabbed, it stays where the user put it, within the trace so far.
 */
export function playheadUs(elapsedUs: number, grabbedUs: number | null): number {
  return grabbedUs === null ? elapsedUs : Math.max(0, Math.min(grabbedUs, elapsedUs));
}

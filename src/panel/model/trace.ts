import { DataFrame, Field } from '@grafana/data';
import { EVENT_LANES, EventLaneName } from './lanes';
import { Escalation, readEscalations } from './escalations';

/**
 * The replay's model of one trace, read from the frames of docs/frames.md.
 * Lanes are columnar (typed arrays sorted by start) so that a million
 * entries cost a few typed arrays, not a million objects; the original frame
 * is kept for the tooltip's fields.
 */

export interface WindowUs {
  fromUs: number;
  toUs: number;
}

export interface LaneData {
  name: EventLaneName;
  /** The lane's event group was traced (false: empty because it was off). */
  traced: boolean;
  /** Rows are bins (one per bin and operator), not events. */
  binned: boolean;
  /** Entries in the whole lane, and in this frame's window. */
  total: number;
  inWindow: number;
  window: WindowUs;
  resolutionUs: number;
  binWidthUs: number;
  n: number;
  /** Drawing extent in µs: the event's true extent, or the bin. */
  start: Float64Array;
  end: Float64Array;
  /** Earliest start of the entries in a row (= start for raw rows). */
  first: Float64Array;
  /** Operator NodeId, -1 when unmatched. */
  node: Int32Array;
  /** Events a row stands for: 1 for raw rows, the bin's count when binned. */
  weight: Float64Array;
  /** maxEnd[i] = max(end[0..i]): finds intervals that began before a window. */
  maxEnd: Float64Array;
  /** Frame row of entry i (rows are re-sorted by start if they arrive unsorted). */
  row: Int32Array;
  /** 1 where more than one operator could have caused the entry (docs/frames.md §3.5 `ambiguous`). */
  ambiguous: Uint8Array | null;
  /** 1 where the interval's end was not captured (`open`: lock release, wait end or I/O completion missing). */
  open: Uint8Array | null;
  frame: DataFrame;
}

export type PhaseKind = 'consume' | 'build' | 'probe' | 'emit' | string;

export interface Phase {
  kind: PhaseKind;
  startUs: number;
  endUs: number;
  /** Worker thread of a per-thread phase; null for the operator as a whole. */
  thread: number | null;
  /** The execution it belongs to (from 1) when executions show one by one; 0 otherwise. */
  execution: number;
  /** How many times the operator ran inside a `reexecuted` phase. */
  executions: number;
}

/** One worker thread's bar of a parallel operator (the `threads` frame). */
export interface ThreadBar {
  thread: number;
  startUs: number;
  endUs: number;
  rows: number | null;
  executions: number;
  source: string;
}

export interface Operator {
  nodeId: number;
  parentId: number | null;
  physicalOp: string;
  /** The name SSMS shows (Key Lookup for a Clustered Index Seek with Lookup="1"); physicalOp when the frame has none. */
  name: string;
  logicalOp: string;
  behavior: string;
  object: string;
  timeSource: string;
  startUs: number;
  firstEmitUs: number;
  endUs: number;
  durationUs: number;
  reads: number;
  writes: number;
  locks: number;
  waits: number;
  spills: number;
  splits: number;
  logRecords: number;
  waitUs: number;
  matched: number;
  matchExact: number;
  matchStrong: number;
  matchWeak: number;
  matchLow: number;
  actualRows: number | null;
  actualExecutions: number | null;
  actualElapsedMs: number | null;
  actualCpuMs: number | null;
  logicalReads: number | null;
  physicalReads: number | null;
  estimatedRows: number | null;
  /** False when the operator never ran (`notExecuted`, or 0 actual executions). */
  executed: boolean;
  notExecutedReason: string;
  /** The most executions one thread made. */
  executions: number;
  phases: Phase[];
  /** Per-thread bars of a parallel operator, in thread order. */
  threads: ThreadBar[];
  /** Tree position: depth from the root, pre-order index, child node ids. */
  depth: number;
  order: number;
  children: number[];
}

export interface Pages {
  n: number;
  database: Float64Array;
  file: Float64Array;
  page: Float64Array;
  pageId: string[];
  object: string[];
  reads: Float64Array;
  writes: Float64Array;
  firstUs: Float64Array;
  lastUs: Float64Array;
  node: Int32Array;
  pageType: Array<string | null>;
  indexLevel: Array<number | null>;
  /** Neighbours at the page's level (`file:page`), null at either end or without a header. */
  prevPage: Array<string | null>;
  nextPage: Array<string | null>;
  /** The trace carries page-header facts (page type, index level, neighbours). */
  pageInfo: boolean;
}

/** One frame of one event's own call stack (the `stack_frames` frame), innermost first. */
export interface EventStackFrame {
  frame: number;
  label: string;
  module: string;
  symbol: string;
  badge: string;
  category: string;
  moduleBadge: string;
  operatorBadge: string;
  infrastructure: boolean;
  unresolved: string;
}

export interface StackFrameRow {
  label: string;
  level: number;
  value: number;
  self: number;
  badge: string;
  moduleBadge: string;
}

export interface ReplayTrace {
  traceId: string;
  statement: string;
  database: string;
  startUs: number;
  endUs: number;
  /** Epoch ms of time zero, for absolute times. */
  zeroMs: number;
  /** The batch's one elapsed time (from its own events), as every surface shows it. */
  durationUs: number;
  /** Time before the first operator started, and the operators' own time (first start to last end). */
  leadInUs: number;
  operatorUs: number;
  /** The trace's figures in the shared vocabulary (docs/frames.md): elapsed, reads by kind, waits as time. */
  facts: { time: string; reads: string; waits: string } | null;
  events: number;
  lost: number;
  truncated: boolean;
  unmatched: number;
  persona: string;
  serverVersion: string;
  warnings: string[];
  operators: Operator[];
  /** Operators by NodeId. */
  byNode: Map<number, Operator>;
  lanes: Partial<Record<EventLaneName, LaneData>>;
  pages: Pages | null;
  callstacks: StackFrameRow[] | null;
  /** Each distinct stack of the trace by stackId (lane rows name theirs); null without call stacks. */
  stacks: Map<number, EventStackFrame[]> | null;
  /** Lock escalations by time (marks on the Lock lane); [] when the trace had none. */
  escalations: Escalation[];
  /** Frames the panel found but does not draw (named, so the panel can say so). */
  ignored: string[];
}

type Row = number;

function field(frame: DataFrame, name: string): Field | undefined {
  return frame.fields.find((f) => f.name === name);
}

function num(f: Field | undefined, r: Row, fallback = 0): number {
  const v = f?.values[r];
  return v === null || v === undefined ? fallback : Number(v);
}

function numOrNull(f: Field | undefined, r: Row): number | null {
  const v = f?.values[r];
  return v === null || v === undefined ? null : Number(v);
}

function strOrNull(f: Field | undefined, r: Row): string | null {
  const v = f?.values[r];
  return v === null || v === undefined ? null : String(v);
}

function str(f: Field | undefined, r: Row): string {
  const v = f?.values[r];
  return v === null || v === undefined ? '' : String(v);
}

function custom(frame: DataFrame | undefined): Record<string, unknown> {
  return (frame?.meta?.custom as Record<string, unknown> | undefined) ?? {};
}

function windowOf(v: unknown, fallback: WindowUs): WindowUs {
  const w = v as Partial<WindowUs> | undefined;
  if (w && typeof w.fromUs === 'number' && typeof w.toUs === 'number') {
    return { fromUs: w.fromUs, toUs: w.toUs };
  }
  return fallback;
}

/** The name a frame goes by: its name, else its refId. */
function frameName(f: DataFrame): string {
  return f.name ?? f.refId ?? '';
}

/** Reads one lane frame (raw or binned) into sorted columns. */
export function laneFromFrame(name: EventLaneName, frame: DataFrame, fallbackWindow: WindowUs): LaneData {
  const meta = custom(frame);
  const n = frame.length;
  const startF = field(frame, 'startUs');
  const endF = field(frame, 'endUs');
  const nodeF = field(frame, 'nodeId');
  const countF = field(frame, 'count');
  const firstF = field(frame, 'firstUs');
  const binned = meta.binned === true || countF !== undefined;
  const start = new Float64Array(n);
  const end = new Float64Array(n);
  const first = new Float64Array(n);
  const node = new Int32Array(n);
  const weight = new Float64Array(n);
  let sorted = true;
  for (let r = 0; r < n; r++) {
    const s = num(startF, r);
    start[r] = s;
    end[r] = Math.max(s, num(endF, r, s));
    first[r] = firstF ? num(firstF, r, s) : s;
    node[r] = numOrNull(nodeF, r) ?? -1;
    weight[r] = countF ? num(countF, r, 1) : 1;
    if (r > 0 && s < start[r - 1]) {
      sorted = false;
    }
  }
  const row = new Int32Array(n);
  for (let r = 0; r < n; r++) {
    row[r] = r;
  }
  const lane: LaneData = {
    name,
    traced: meta.traced !== false,
    binned,
    total: typeof meta.total === 'number' ? meta.total : n,
    inWindow: typeof meta.inWindow === 'number' ? meta.inWindow : n,
    window: windowOf(meta.window, fallbackWindow),
    resolutionUs: typeof meta.resolutionUs === 'number' ? meta.resolutionUs : 1,
    binWidthUs: typeof meta.binWidthUs === 'number' ? meta.binWidthUs : 0,
    n,
    start,
    end,
    first,
    node,
    weight,
    maxEnd: new Float64Array(n),
    row,
    ambiguous: flags(frame, 'ambiguous', n),
    open: flags(frame, 'open', n),
    frame,
  };
  if (!sorted) {
    sortLane(lane);
  }
  let m = -Infinity;
  for (let i = 0; i < n; i++) {
    m = Math.max(m, lane.end[i]);
    lane.maxEnd[i] = m;
  }
  return lane;
}

/** A bool field as 0/1 per row, or null when the frame has no such field or no row sets it. */
function flags(frame: DataFrame, name: string, n: number): Uint8Array | null {
  const f = field(frame, name);
  if (!f) {
    return null;
  }
  const out = new Uint8Array(n);
  let any = false;
  for (let r = 0; r < n; r++) {
    if (f.values[r] === true) {
      out[r] = 1;
      any = true;
    }
  }
  return any ? out : null;
}

/** Sorts a lane's columns by start (stable), keeping `row` pointing at frame rows. */
function sortLane(lane: LaneData): void {
  const idx = Array.from(lane.row).sort((a, b) => lane.start[a] - lane.start[b] || a - b);
  const cols = [lane.start, lane.end, lane.first, lane.weight] as Float64Array[];
  for (const c of cols) {
    const copy = c.slice();
    idx.forEach((from, to) => (c[to] = copy[from]));
  }
  const nodeCopy = lane.node.slice();
  idx.forEach((from, to) => {
    lane.node[to] = nodeCopy[from];
    lane.row[to] = from;
  });
  for (const flag of [lane.ambiguous, lane.open]) {
    if (flag) {
      const copy = flag.slice();
      idx.forEach((from, to) => (flag[to] = copy[from]));
    }
  }
}

function readOperators(
  ops: DataFrame | undefined,
  phases: DataFrame | undefined,
  threads: DataFrame | undefined
): Operator[] {
  if (!ops) {
    return [];
  }
  const f = (n: string) => field(ops, n);
  const F = {
    nodeId: f('nodeId'),
    parentId: f('parentId'),
    physicalOp: f('physicalOp'),
    name: f('name'),
    logicalOp: f('logicalOp'),
    behavior: f('behavior'),
    object: f('object'),
    timeSource: f('timeSource'),
    startUs: f('startUs'),
    firstEmitUs: f('firstEmitUs'),
    endUs: f('endUs'),
    durationUs: f('durationUs'),
    executed: f('executed'),
    notExecuted: f('notExecuted'),
    notExecutedReason: f('notExecutedReason'),
    executions: f('executions'),
  };
  const counters = [
    'reads',
    'writes',
    'locks',
    'waits',
    'spills',
    'splits',
    'logRecords',
    'waitUs',
    'matched',
  ] as const;
  const matches = ['matchExact', 'matchStrong', 'matchWeak', 'matchLow'] as const;
  const runtime = [
    'actualRows',
    'actualExecutions',
    'actualElapsedMs',
    'actualCpuMs',
    'logicalReads',
    'physicalReads',
    'estimatedRows',
  ] as const;
  const out: Operator[] = [];
  for (let r = 0; r < ops.length; r++) {
    const startUs = num(F.startUs, r);
    const endUs = num(F.endUs, r, startUs);
    const op = {
      nodeId: num(F.nodeId, r),
      parentId: numOrNull(F.parentId, r),
      physicalOp: str(F.physicalOp, r),
      name: str(F.name, r) || str(F.physicalOp, r),
      logicalOp: str(F.logicalOp, r),
      behavior: str(F.behavior, r),
      object: str(F.object, r),
      timeSource: str(F.timeSource, r),
      startUs,
      firstEmitUs: num(F.firstEmitUs, r, startUs),
      endUs,
      durationUs: num(F.durationUs, r, endUs - startUs),
      phases: [],
      threads: [],
      notExecutedReason: str(F.notExecutedReason, r),
      executions: num(F.executions, r),
      depth: 0,
      order: 0,
      children: [],
    } as unknown as Operator;
    for (const c of [...counters, ...matches]) {
      op[c] = num(f(c), r);
    }
    for (const c of runtime) {
      op[c] = numOrNull(f(c), r);
    }
    const explicit = F.executed?.values[r];
    op.executed = F.notExecuted?.values[r] === true || explicit === false ? false : op.actualExecutions !== 0;
    out.push(op);
  }
  attachPhases(out, phases);
  attachThreads(out, threads);
  orderTree(out);
  return out;
}

function attachPhases(ops: Operator[], phases: DataFrame | undefined): void {
  if (!phases) {
    return;
  }
  const byNode = new Map(ops.map((o) => [o.nodeId, o]));
  const nodeF = field(phases, 'nodeId');
  const kindF = field(phases, 'phase');
  const startF = field(phases, 'startUs');
  const endF = field(phases, 'endUs');
  const threadF = field(phases, 'thread') ?? field(phases, 'threadId');
  const execF = field(phases, 'execution');
  const execsF = field(phases, 'executions');
  for (let r = 0; r < phases.length; r++) {
    const op = byNode.get(num(nodeF, r));
    if (!op) {
      continue;
    }
    const s = num(startF, r);
    op.phases.push({
      kind: str(kindF, r),
      startUs: s,
      endUs: Math.max(s, num(endF, r, s)),
      thread: numOrNull(threadF, r),
      execution: num(execF, r),
      executions: num(execsF, r),
    });
  }
  for (const op of ops) {
    op.phases.sort((a, b) => a.startUs - b.startUs);
  }
}

function attachThreads(ops: Operator[], threads: DataFrame | undefined): void {
  if (!threads) {
    return;
  }
  const byNode = new Map(ops.map((o) => [o.nodeId, o]));
  const F = ['nodeId', 'thread', 'startUs', 'endUs', 'rows', 'executions', 'source'].map((n) => field(threads, n));
  for (let r = 0; r < threads.length; r++) {
    const op = byNode.get(num(F[0], r));
    if (!op) {
      continue;
    }
    const s = num(F[2], r);
    op.threads.push({
      thread: num(F[1], r),
      startUs: s,
      endUs: Math.max(s, num(F[3], r, s)),
      rows: numOrNull(F[4], r),
      executions: num(F[5], r),
      source: str(F[6], r),
    });
  }
  for (const op of ops) {
    op.threads.sort((a, b) => a.thread - b.thread);
  }
}

/** Depth, children and pre-order position of each operator (children in NodeId order). */
function orderTree(ops: Operator[]): void {
  const byNode = new Map(ops.map((o) => [o.nodeId, o]));
  const roots: Operator[] = [];
  for (const o of ops) {
    const parent = o.parentId === null ? undefined : byNode.get(o.parentId);
    if (parent) {
      parent.children.push(o.nodeId);
    } else {
      roots.push(o);
    }
  }
  let order = 0;
  const walk = (o: Operator, depth: number) => {
    o.depth = depth;
    o.order = order++;
    o.children.sort((a, b) => a - b);
    for (const c of o.children) {
      walk(byNode.get(c)!, depth + 1);
    }
  };
  roots.sort((a, b) => a.nodeId - b.nodeId).forEach((r) => walk(r, 0));
  ops.sort((a, b) => a.order - b.order);
}

function readPages(frame: DataFrame | undefined): Pages | null {
  if (!frame) {
    return null;
  }
  const n = frame.length;
  const col = (name: string) => {
    const f = field(frame, name);
    const a = new Float64Array(n);
    for (let r = 0; r < n; r++) {
      a[r] = num(f, r);
    }
    return a;
  };
  const nodeF = field(frame, 'nodeId');
  const node = new Int32Array(n);
  const pageId: string[] = new Array(n);
  const object: string[] = new Array(n);
  const pageType: Array<string | null> = new Array(n);
  const indexLevel: Array<number | null> = new Array(n);
  const pidF = field(frame, 'pageId');
  const objF = field(frame, 'object');
  const typeF = field(frame, 'pageType');
  const levelF = field(frame, 'indexLevel');
  const prevF = field(frame, 'prevPage');
  const nextF = field(frame, 'nextPage');
  const prevPage: Array<string | null> = new Array(n);
  const nextPage: Array<string | null> = new Array(n);
  for (let r = 0; r < n; r++) {
    node[r] = numOrNull(nodeF, r) ?? -1;
    pageId[r] = str(pidF, r);
    object[r] = str(objF, r);
    const t = typeF?.values[r];
    pageType[r] = t === null || t === undefined ? null : String(t);
    indexLevel[r] = numOrNull(levelF, r);
    prevPage[r] = strOrNull(prevF, r);
    nextPage[r] = strOrNull(nextF, r);
  }
  return {
    n,
    database: col('database'),
    file: col('file'),
    page: col('page'),
    pageId,
    object,
    reads: col('reads'),
    writes: col('writes'),
    firstUs: col('firstUs'),
    lastUs: col('lastUs'),
    node,
    pageType,
    indexLevel,
    prevPage,
    nextPage,
    pageInfo: custom(frame).pageInfo === true,
  };
}

function readStacks(frame: DataFrame | undefined): StackFrameRow[] | null {
  if (!frame) {
    return null;
  }
  const F = ['label', 'level', 'value', 'self', 'badge', 'moduleBadge'].map((n) => field(frame, n));
  const out: StackFrameRow[] = [];
  for (let r = 0; r < frame.length; r++) {
    out.push({
      label: str(F[0], r),
      level: num(F[1], r),
      value: num(F[2], r),
      self: num(F[3], r),
      badge: str(F[4], r),
      moduleBadge: str(F[5], r),
    });
  }
  return out;
}

function readEventStacks(frame: DataFrame | undefined): Map<number, EventStackFrame[]> | null {
  if (!frame) {
    return null;
  }
  const names = ['stackId', 'frame', 'label', 'module', 'symbol', 'badge', 'category', 'moduleBadge', 'operatorBadge'];
  const [id, pos, label, module, symbol, badge, category, moduleBadge, op] = names.map((n) => field(frame, n));
  const infra = field(frame, 'infrastructure');
  const why = field(frame, 'unresolved');
  const out = new Map<number, EventStackFrame[]>();
  for (let r = 0; r < frame.length; r++) {
    const key = num(id, r);
    let frames = out.get(key);
    if (!frames) {
      frames = [];
      out.set(key, frames);
    }
    frames.push({
      frame: num(pos, r),
      label: str(label, r),
      module: str(module, r),
      symbol: str(symbol, r),
      badge: str(badge, r),
      category: str(category, r),
      moduleBadge: str(moduleBadge, r),
      operatorBadge: str(op, r),
      infrastructure: infra?.values[r] === true,
      unresolved: str(why, r),
    });
  }
  for (const frames of out.values()) {
    frames.sort((a, b) => a.frame - b.frame);
  }
  return out;
}

/** The stackId of lane entry i (docs/frames.md §3.5), or null when it has none (or the lane is binned). */
export function stackIdOf(lane: LaneData, i: number): number | null {
  if (lane.binned || i < 0 || i >= lane.n) {
    return null;
  }
  return numOrNull(field(lane.frame, 'stackId'), lane.row[i]);
}

/** Finds the frames of a trace by name; unnamed lane frames are recognised by meta.custom.lane. */
export function indexFrames(frames: DataFrame[]): Map<string, DataFrame> {
  const byName = new Map<string, DataFrame>();
  for (const f of frames) {
    const lane = custom(f).lane;
    const name = typeof lane === 'string' && !frameName(f).startsWith('lane_') ? `lane_${lane}` : frameName(f);
    if (!byName.has(name)) {
      byName.set(name, f);
    }
  }
  return byName;
}

const KNOWN = new Set([
  'trace',
  'findings',
  'operators',
  'phases',
  'threads',
  'nodes',
  'edges',
  'pages',
  'log_records',
  'callstacks',
  'stack_frames',
  'probe',
  'escalations',
  ...EVENT_LANES.map((l) => `lane_${l}`),
]);

/** The result of reading frames: a trace, or why there is none. */
export type ReadResult = { trace: ReplayTrace; error?: undefined } | { trace?: undefined; error: string };

/** Reads the frames of a `trace`, `bundle` or `view` response into a ReplayTrace. */
export function traceFromFrames(frames: DataFrame[]): ReadResult {
  const byName = indexFrames(frames);
  const meta = byName.get('trace');
  const lanesPresent = EVENT_LANES.filter((l) => byName.has(`lane_${l}`));
  if (!meta && lanesPresent.length === 0 && !byName.has('operators')) {
    // a trace query that ran nothing says why in a notice (press Execute)
    const notices = frames.flatMap((f) => f.meta?.notices ?? []).map((n) => n.text);
    if (notices.length > 0) {
      return { error: notices.join(' ') };
    }
    const names = frames.map(frameName).filter(Boolean);
    return {
      error:
        frames.length === 0
          ? 'The query returned no frames.'
          : `None of the ${frames.length} frames is a QueryReplay trace (found: ${names.join(', ') || 'unnamed frames'}).`,
    };
  }
  const mc = custom(meta);
  const f = (n: string) => (meta ? field(meta, n) : undefined);
  const timeRange = (mc.timeRange ?? {}) as { zeroTime?: string; from?: number; startUs?: number };
  const ops = readOperators(byName.get('operators'), byName.get('phases'), byName.get('threads'));
  let startUs = meta ? num(f('startUs'), 0) : Infinity;
  let endUs = meta ? num(f('endUs'), 0) : -Infinity;
  if (!meta) {
    for (const o of ops) {
      startUs = Math.min(startUs, o.startUs);
      endUs = Math.max(endUs, o.endUs);
    }
  }
  const lanes: Partial<Record<EventLaneName, LaneData>> = {};
  const whole = { fromUs: Number.isFinite(startUs) ? startUs : 0, toUs: Number.isFinite(endUs) ? endUs : 0 };
  for (const l of lanesPresent) {
    const lane = laneFromFrame(l, byName.get(`lane_${l}`)!, whole);
    lanes[l] = lane;
    if (!meta && lane.n > 0) {
      startUs = Math.min(startUs, lane.start[0]);
      endUs = Math.max(endUs, lane.maxEnd[lane.n - 1]);
    }
  }
  if (!Number.isFinite(startUs) || !Number.isFinite(endUs)) {
    startUs = 0;
    endUs = 0;
  }
  const zeroMs = zeroOf(timeRange);
  const trace: ReplayTrace = {
    traceId: str(f('traceId'), 0) || String(mc.traceId ?? custom(frames[0]).traceId ?? ''),
    statement: str(f('statement'), 0),
    database: str(f('database'), 0),
    startUs,
    endUs: Math.max(endUs, startUs),
    zeroMs,
    durationUs: num(f('durationUs'), 0, endUs - startUs),
    leadInUs: num(f('leadInUs'), 0),
    operatorUs: num(f('operatorUs'), 0),
    facts: readFacts(mc.facts),
    events: num(f('events'), 0),
    lost: num(f('lost'), 0),
    truncated: f('truncated')?.values[0] === true,
    unmatched: num(f('unmatched'), 0),
    persona: str(f('persona'), 0),
    serverVersion: str(f('serverVersion'), 0),
    warnings: Array.isArray(mc.warnings) ? (mc.warnings as unknown[]).map(String) : [],
    operators: ops,
    byNode: new Map(ops.map((o) => [o.nodeId, o])),
    lanes,
    pages: readPages(byName.get('pages')),
    callstacks: readStacks(byName.get('callstacks')),
    stacks: readEventStacks(byName.get('stack_frames')),
    escalations: readEscalations(byName.get('escalations')),
    ignored: [...byName.keys()].filter((k) => !KNOWN.has(k)),
  };
  return { trace };
}

function readFacts(v: unknown): ReplayTrace['facts'] {
  if (!v || typeof v !== 'object') {
    return null;
  }
  const o = v as Record<string, unknown>;
  return { time: String(o.time ?? ''), reads: String(o.reads ?? ''), waits: String(o.waits ?? '') };
}

function zeroOf(tr: { zeroTime?: string; from?: number; startUs?: number }): number {
  if (tr.zeroTime) {
    const ms = Date.parse(tr.zeroTime);
    if (!Number.isNaN(ms)) {
      return ms;
    }
  }
  if (typeof tr.from === 'number') {
    return tr.from - (tr.startUs ?? 0) / 1000;
  }
  return 0;
}

/** Lanes of a `view` response: the detail for one window. */
export function lanesFromViewFrames(frames: DataFrame[], window: WindowUs): Partial<Record<EventLaneName, LaneData>> {
  const byName = indexFrames(frames);
  const out: Partial<Record<EventLaneName, LaneData>> = {};
  for (const l of EVENT_LANES) {
    const f = byName.get(`lane_${l}`);
    if (f) {
      out[l] = laneFromFrame(l, f, window);
    }
  }
  return out;
}

import { EventLaneName, LANE_DEFS } from '../model/lanes';
import { Escalation } from '../model/escalations';
import { LaneData, Operator, ReplayTrace } from '../model/trace';
import { TimeUnit, formatDuration, formatUs } from './scale';

/** Text for tooltips and the selected-event view: an entry's fields, operator, match rule and confidence. */

export interface Description {
  title: string;
  rows: Array<[string, string]>;
}

const SHOWN_APART = new Set([
  'start',
  'end',
  'state',
  'nodeId',
  'startUs',
  'endUs',
  'rule',
  'confidence',
  'count',
  'firstUs',
  'lastUs',
  'ambiguous',
  'candidates',
  'open',
  'index',
]);

export function operatorName(trace: ReplayTrace, nodeId: number | null): string {
  if (nodeId === null || nodeId < 0) {
    return 'unmatched';
  }
  const op = trace.byNode.get(nodeId);
  return op ? `${op.nodeId} ${op.name}` : `node ${nodeId}`;
}

function fmtValue(v: unknown, unit: string | undefined, timeUnit: TimeUnit): string {
  if (v === null || v === undefined || v === '') {
    return '—';
  }
  if (typeof v === 'number') {
    if (unit === 'µs') {
      return formatDuration(v);
    }
    if (unit === 'bytes') {
      return v >= 1024 ? `${(v / 1024).toLocaleString('en-US', { maximumFractionDigits: 1 })} KiB` : `${v} B`;
    }
    if (unit === 'kbytes') {
      return `${v.toLocaleString('en-US')} KB`;
    }
    return v.toLocaleString('en-US');
  }
  if (typeof v === 'boolean') {
    return v ? 'yes' : 'no';
  }
  void timeUnit;
  return String(v);
}

export function describeEntry(trace: ReplayTrace, lane: LaneData, i: number, unit: TimeUnit): Description {
  const r = lane.row[i];
  const f = (name: string) => lane.frame.fields.find((x) => x.name === name);
  const state = f('state')?.values[r];
  const nodeId = lane.node[i] < 0 ? null : lane.node[i];
  const rows: Array<[string, string]> = [];
  const label = LANE_DEFS[lane.name as EventLaneName].label;
  if (lane.binned) {
    rows.push(['events', lane.weight[i].toLocaleString('en-US')]);
    const first = f('firstUs')?.values[r];
    const last = f('lastUs')?.values[r];
    rows.push(['first', formatUs(Number(first ?? lane.start[i]), unit)]);
    rows.push(['last', formatUs(Number(last ?? lane.end[i]), unit)]);
    rows.push(['operator', operatorName(trace, nodeId)]);
    rows.push(['bin', `${formatUs(lane.start[i], unit)} – ${formatUs(lane.end[i], unit)}`]);
    return { title: `${label}: ${lane.weight[i].toLocaleString('en-US')} events (binned)`, rows };
  }
  rows.push(['at', formatUs(lane.start[i], unit)]);
  if (lane.end[i] > lane.start[i] || LANE_DEFS[lane.name].intervals) {
    rows.push(['duration', formatDuration(lane.end[i] - lane.start[i])]);
  }
  rows.push(['operator', operatorName(trace, nodeId)]);
  const rule = f('rule')?.values[r];
  const confidence = f('confidence')?.values[r];
  if (rule !== undefined) {
    const candidates = f('candidates')?.values[r];
    const ambiguous = f('ambiguous')?.values[r] === true;
    const among =
      ambiguous && candidates
        ? ` — ambiguous among operators ${String(candidates).split(',').join(', ')}`
        : ambiguous
          ? ' — ambiguous'
          : '';
    rows.push(['match', `${rule ?? '—'} (${confidence ?? 'unknown'} confidence)${among}`]);
  }
  if (f('open')?.values[r] === true) {
    rows.push(['end', 'not captured (open interval: drawn to the end of the statement)']);
  }
  for (const field of lane.frame.fields) {
    if (SHOWN_APART.has(field.name)) {
      continue;
    }
    rows.push([field.name, fmtValue(field.values[r], field.config?.unit, unit)]);
  }
  return { title: `${label}: ${state ?? ''}`, rows };
}

export function describeOperator(op: Operator, unit: TimeUnit): Description {
  const rows: Array<[string, string]> = [];
  if (op.name !== op.physicalOp) {
    rows.push(['physical operator', op.physicalOp]);
  }
  if (op.logicalOp && op.logicalOp !== op.physicalOp && op.logicalOp !== op.name) {
    rows.push(['logical', op.logicalOp]);
  }
  if (op.object) {
    rows.push(['object', op.object]);
  }
  rows.push(['behavior', op.behavior || '—']);
  if (!op.executed) {
    rows.push([
      'executed',
      op.notExecutedReason ? `no: ${op.notExecutedReason}` : 'no (0 executions in the actual plan)',
    ]);
    return { title: `${op.nodeId} ${op.name}`, rows };
  }
  rows.push([
    'span',
    `${formatUs(op.startUs, unit)} – ${formatUs(op.endUs, unit)} (${formatDuration(op.endUs - op.startUs)})`,
  ]);
  rows.push(['first row out', formatUs(op.firstEmitUs, unit)]);
  for (const ph of op.phases) {
    const name =
      ph.kind === 'reexecuted'
        ? `re-executed ×${ph.executions}`
        : ph.execution > 0
          ? `${ph.kind} (execution ${ph.execution})`
          : ph.kind;
    rows.push([
      ph.thread === null ? name : `${name} (thread ${ph.thread})`,
      `${formatUs(ph.startUs, unit)} – ${formatUs(ph.endUs, unit)}`,
    ]);
  }
  if (op.executions > 1) {
    rows.push(['executions', op.executions.toLocaleString('en-US')]);
  }
  for (const t of op.threads) {
    rows.push([
      `thread ${t.thread}`,
      `${formatDuration(t.endUs - t.startUs)}${t.rows !== null ? `, ${t.rows.toLocaleString('en-US')} rows` : ''}`,
    ]);
  }
  if (op.actualRows !== null) {
    rows.push([
      'rows',
      `${op.actualRows.toLocaleString('en-US')}${op.estimatedRows !== null ? ` (est. ${op.estimatedRows.toLocaleString('en-US')})` : ''}`,
    ]);
  }
  // Each kind of read under its own name (docs/frames.md, "Reads"):
  // logical and physical reads from the plan's runtime counters, page
  // reads from the trace's physical_page_read events.
  if (op.logicalReads !== null) {
    rows.push(['logical reads (plan)', op.logicalReads.toLocaleString('en-US')]);
  }
  if (op.physicalReads !== null) {
    rows.push(['physical reads (plan)', op.physicalReads.toLocaleString('en-US')]);
  }
  rows.push(['page reads (trace)', op.reads.toLocaleString('en-US')]);
  if (op.actualElapsedMs !== null) {
    rows.push(['elapsed (plan)', `${op.actualElapsedMs.toLocaleString('en-US')} ms`]);
  }
  if (op.actualCpuMs !== null) {
    rows.push(['CPU (plan)', `${op.actualCpuMs.toLocaleString('en-US')} ms`]);
  }
  if (op.waits) {
    rows.push(['waits', `${formatDuration(op.waitUs)} waited (${op.waits.toLocaleString('en-US')} waits)`]);
  }
  if (op.locks) {
    rows.push(['locks', op.locks.toLocaleString('en-US')]);
  }
  if (op.spills) {
    rows.push(['spills', op.spills.toLocaleString('en-US')]);
  }
  rows.push(['timing from', op.timeSource || '—']);
  rows.push(['matches', `${op.matchExact} exact, ${op.matchStrong} strong, ${op.matchWeak} weak, ${op.matchLow} low`]);
  return { title: `${op.nodeId} ${op.name}`, rows };
}

/** An escalation's tooltip: the lock it became, on what, and how many locks it replaced. */
export function describeEscalation(e: Escalation, unit: TimeUnit): Description {
  const rows: Array<[string, string]> = [
    ['at', formatUs(e.tUs, unit)],
    ['mode', e.mode ? `${e.mode} on ${e.resourceType || 'OBJECT'}` : '—'],
    ['object', e.object || '—'],
    ['locks before', e.escalatedLockCount.toLocaleString('en-US')],
  ];
  if (e.hobtLockCount > 0) {
    rows.push(['HoBT locks', e.hobtLockCount.toLocaleString('en-US')]);
  }
  if (e.cause) {
    rows.push(['cause', e.cause]);
  }
  return { title: 'Lock escalation', rows };
}

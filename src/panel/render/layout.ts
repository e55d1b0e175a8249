import { EventLaneName, LaneName } from '../model/lanes';
import { Operator } from '../model/trace';
import { labelColumnWidth } from './labels';

/** Where each lane and plan row sits on the timeline canvas (CSS pixels). */

export interface Box {
  y: number;
  h: number;
}

export interface PlanRow extends Box {
  nodeId: number;
  /** Per-thread sub-rows, when the operator has per-thread phases. */
  threads: Array<Box & { thread: number }>;
}

export interface TimelineLayout {
  width: number;
  height: number;
  labelW: number;
  plotX: number;
  plotW: number;
  axisH: number;
  plan: (Box & { rows: PlanRow[] }) | null;
  lanes: Array<Box & { name: EventLaneName }>;
}

export const AXIS_H = 18;

export function labelWidth(width: number): number {
  return labelColumnWidth(width);
}

export function layoutTimeline(width: number, height: number, shown: LaneName[], ops: Operator[]): TimelineLayout {
  const labelW = labelWidth(width);
  const plotX = labelW;
  const plotW = Math.max(10, width - labelW - 4);
  const eventLanes = shown.filter((l): l is EventLaneName => l !== 'plan');
  const showPlan = shown.includes('plan') && ops.length > 0;
  const avail = Math.max(0, height - AXIS_H);
  const k = eventLanes.length;
  // the plan takes up to 45 % (rows of at most 28 px), the lanes share the rest (at most 44 px each)
  const rowH = showPlan ? Math.max(2, Math.min(28, (avail * (k > 0 ? 0.45 : 1)) / ops.length)) : 0;
  const planH = rowH * (showPlan ? ops.length : 0);
  const laneH = k === 0 ? 0 : Math.max(8, Math.min(44, Math.floor((avail - planH) / k)));
  let y = AXIS_H;
  let plan: TimelineLayout['plan'] = null;
  if (showPlan) {
    const rows: PlanRow[] = ops.map((op, i) => {
      const box = { y: y + i * rowH, h: rowH };
      // per-thread bars under the phases: the top third keeps the phases
      const threads = op.threads.map((t) => t.thread);
      const subH = threads.length > 1 ? (rowH * 0.62 - 1) / threads.length : 0;
      const top = box.y + rowH * 0.38;
      return {
        nodeId: op.nodeId,
        ...box,
        threads: subH >= 1.5 ? threads.map((t, j) => ({ thread: t, y: top + j * subH, h: subH })) : [],
      };
    });
    plan = { y, h: rowH * ops.length, rows };
    y += plan.h;
  }
  const lanes = eventLanes.map((name) => {
    const box = { name, y, h: laneH };
    y += laneH;
    return box;
  });
  return { width, height, labelW, plotX, plotW, axisH: AXIS_H, plan, lanes };
}

/** The lane or plan row at canvas y. */
export function rowAt(
  l: TimelineLayout,
  y: number
): { kind: 'plan'; nodeId: number } | { kind: 'lane'; name: EventLaneName } | null {
  if (l.plan && y >= l.plan.y && y < l.plan.y + l.plan.h) {
    const r = l.plan.rows.find((row) => y >= row.y && y < row.y + row.h);
    return r ? { kind: 'plan', nodeId: r.nodeId } : null;
  }
  const lane = l.lanes.find((b) => y >= b.y && y < b.y + b.h);
  return lane ? { kind: 'lane', name: lane.name } : null;
}

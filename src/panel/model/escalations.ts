import { DataFrame, Field } from '@grafana/data';
import { WindowUs } from './trace';

/**
 * The trace's lock escalations (the `escalations` frame, docs/frames.md):
 * a handful per statement, tied to no operator, so they are not a lane of
 * their own but marks on the Lock lane at the moment the row and page locks
 * became one table (or partition) lock.
 */
export interface Escalation {
  tUs: number;
  /** The lock it became (X, S, IX, …) and on what (OBJECT or HOBT). */
  mode: string;
  resourceType: string;
  object: string;
  /** Row and page locks held before, which the one lock replaced. */
  escalatedLockCount: number;
  hobtLockCount: number;
  cause: string;
}

function field(frame: DataFrame, name: string): Field | undefined {
  return frame.fields.find((f) => f.name === name);
}

function num(f: Field | undefined, r: number): number {
  const v = Number(f?.values[r]);
  return Number.isFinite(v) ? v : 0;
}

function str(f: Field | undefined, r: number): string {
  const v = f?.values[r];
  return v === null || v === undefined ? '' : String(v);
}

/** The escalations of a frame, sorted by time; [] without the frame (the trace had none). */
export function readEscalations(frame: DataFrame | undefined): Escalation[] {
  if (!frame) {
    return [];
  }
  const [t, mode, rtype, obj, esc, hobt, cause] = [
    'tUs',
    'mode',
    'resourceType',
    'object',
    'escalatedLockCount',
    'hobtLockCount',
    'cause',
  ].map((n) => field(frame, n));
  const out: Escalation[] = [];
  for (let r = 0; r < frame.length; r++) {
    out.push({
      tUs: num(t, r),
      mode: str(mode, r),
      resourceType: str(rtype, r),
      object: str(obj, r),
      escalatedLockCount: num(esc, r),
      hobtLockCount: num(hobt, r),
      cause: str(cause, r),
    });
  }
  return out.sort((a, b) => a.tUs - b.tUs);
}

/** The escalation nearest pointer x (px in a plot of width px showing w) within tolPx, or -1. */
export function escalationAt(list: Escalation[], w: WindowUs, width: number, x: number, tolPx: number): number {
  const pxUs = (w.toUs - w.fromUs) / Math.max(width, 1);
  let best = -1;
  let bestPx = tolPx;
  list.forEach((e, i) => {
    const d = Math.abs((e.tUs - w.fromUs) / pxUs - x);
    if (d <= bestPx) {
      best = i;
      bestPx = d;
    }
  });
  return best;
}

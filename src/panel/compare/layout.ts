import { LaneName, isEventLane } from '../model/lanes';
import { ReplayTrace } from '../model/trace';
import { AXIS_H } from '../render/layout';

/** How the compare mode shares its height between the two timelines. */

/** The height a timeline needs at most: its axis, plan rows and lanes at their largest (render/layout.ts). */
export function naturalHeight(shown: LaneName[], trace: ReplayTrace): number {
  const plan = shown.includes('plan') ? trace.operators.length * 28 : 0;
  return AXIS_H + plan + shown.filter(isEventLane).length * 44 + 2;
}

/** Splits the room between A and B: each half, and what one side does not need goes to the other. */
export function sideHeights(room: number, needA: number, needB: number): [number, number] {
  const half = room / 2;
  const a = Math.max(40, Math.floor(Math.min(needA, Math.max(half, room - needB))));
  const b = Math.max(40, Math.floor(Math.min(needB, room - a)));
  return [a, b];
}

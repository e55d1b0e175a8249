import { ReplayTrace, WindowUs } from '../model/trace';

/**
 * The window a replay opens on: from a little before the first operator
 * starts or first event happens to the end, so time spent compiling before
 * the plan runs does not take most of the screen (the scrubber still shows
 * the whole trace, and double-click or the ⟷ button shows all of it).
 */
export function activityWindow(trace: ReplayTrace, bounds: WindowUs): WindowUs {
  let first = Infinity;
  for (const op of trace.operators) {
    if (op.executed) {
      first = Math.min(first, op.startUs);
    }
  }
  for (const lane of Object.values(trace.lanes)) {
    if (lane && lane.n > 0) {
      first = Math.min(first, lane.start[0]);
    }
  }
  if (!Number.isFinite(first) || first <= bounds.fromUs) {
    return { ...bounds };
  }
  const pad = (bounds.toUs - first) * 0.02;
  return { fromUs: Math.max(bounds.fromUs, first - pad), toUs: bounds.toUs };
}

import { escalationAt, readEscalations } from './escalations';
import { traceFromFrames } from './trace';
import { escalationsFrame, goldenFrames } from '../testing/fixtures';

describe('lock escalations', () => {
  it('reads the escalations frame into the trace, sorted by time, and does not list it as ignored', () => {
    const frames = [
      ...goldenFrames('trace_response'),
      escalationsFrame([
        { t: 90, mode: 'S', object: '[dbo].[Customers]', locks: 6250 },
        { t: 40, mode: 'X', object: '[dbo].[Orders]', locks: 5000 },
      ]),
    ];
    const trace = traceFromFrames(frames).trace!;
    expect(trace.escalations.map((e) => [e.tUs, e.mode, e.object, e.escalatedLockCount, e.cause])).toEqual([
      [40, 'X', '[dbo].[Orders]', 5000, 'Lock threshold'],
      [90, 'S', '[dbo].[Customers]', 6250, 'Lock threshold'],
    ]);
    expect(trace.ignored).not.toContain('escalations');
  });

  it('has none when the trace has no escalations frame', () => {
    expect(traceFromFrames(goldenFrames('trace_response')).trace!.escalations).toEqual([]);
    expect(readEscalations(undefined)).toEqual([]);
  });

  it('finds the escalation nearest the pointer within the tolerance, and none beyond it', () => {
    const list = readEscalations(escalationsFrame([{ t: 100 }, { t: 300 }]));
    const w = { fromUs: 0, toUs: 1000 };
    // 1000 px for 1000 µs: the marks are at x=100 and x=300
    expect(escalationAt(list, w, 1000, 103, 5)).toBe(0);
    expect(escalationAt(list, w, 1000, 296, 5)).toBe(1);
    expect(escalationAt(list, w, 1000, 200, 5)).toBe(-1);
    expect(escalationAt([], w, 1000, 100, 5)).toBe(-1);
  });
});

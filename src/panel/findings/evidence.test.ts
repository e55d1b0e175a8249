import { lane } from '../testing/fixtures';
import { entryOfEvidence, evidenceWindow, stepEvidence } from './evidence';
import { EvidenceRef } from './model';

const ev = (l: EvidenceRef['lane'], index: number, t: number, nodeId: number | null = 1, end = t): EvidenceRef => ({
  id: `${l}/${index}`,
  lane: l,
  index,
  t,
  end,
  nodeId,
});

describe('entryOfEvidence', () => {
  // a window of the read lane: whole-lane entries 40..43 (rows arrive out of order)
  const reads = lane('read', [
    { s: 300, index: 42 },
    { s: 100, index: 40 },
    { s: 200, index: 41, node: 2 },
    { s: 200, index: 43 },
  ]);

  it('resolves an id through the index field whatever the window', () => {
    expect(reads.start[entryOfEvidence(reads, ev('read', 40, 100))]).toBe(100);
    const i = entryOfEvidence(reads, ev('read', 43, 200));
    expect([reads.start[i], reads.node[i]]).toEqual([200, 1]);
    expect(entryOfEvidence(reads, ev('read', 42, 300))).toBe(3);
  });

  it('does not resolve evidence outside the window or of another lane', () => {
    expect(entryOfEvidence(reads, ev('read', 7, 100))).toBe(-1);
    expect(entryOfEvidence(reads, ev('lock', 40, 100))).toBe(-1);
    expect(entryOfEvidence(undefined, ev('read', 40, 100))).toBe(-1);
  });

  it('matches by time and operator when the frames have no index field', () => {
    const old = lane('read', [{ s: 100 }, { s: 200, node: 2 }, { s: 200, node: 1 }]);
    expect(entryOfEvidence(old, ev('read', 9, 200, 1))).toBe(2);
    expect(entryOfEvidence(old, ev('read', 9, 200, 2))).toBe(1);
    expect(entryOfEvidence(old, ev('read', 9, 150, 1))).toBe(-1);
  });

  it('resolves to the bin of its operator that holds it in a binned lane', () => {
    const bins = lane(
      'read',
      [
        { s: 0, e: 100, count: 5, node: 1 },
        { s: 0, e: 100, count: 2, node: 2 },
        { s: 100, e: 200, count: 9, node: 1 },
      ],
      { binWidthUs: 100 }
    );
    expect(entryOfEvidence(bins, ev('read', 0, 50, 2))).toBe(1);
    expect(entryOfEvidence(bins, ev('read', 0, 100, 1))).toBe(2);
    expect(entryOfEvidence(bins, ev('read', 0, 150, 2))).toBe(-1);
  });
});

describe('evidenceWindow', () => {
  const bounds = { fromUs: 0, toUs: 10_000 };

  it('covers every event with a margin', () => {
    const w = evidenceWindow(
      [
        { t: 2000, end: 2000 },
        { t: 4000, end: 5000 },
      ],
      bounds
    )!;
    expect(w.fromUs).toBeLessThan(2000);
    expect(w.toUs).toBeGreaterThan(5000);
    expect(w.toUs - w.fromUs).toBeCloseTo(3000 * 1.16);
  });

  it('gives one instant some context, centred on it', () => {
    const w = evidenceWindow([{ t: 5000, end: 5000 }], bounds)!;
    expect(w).toEqual({ fromUs: 4800, toUs: 5200 });
  });

  it('stays inside the trace', () => {
    const w = evidenceWindow([{ t: 9990, end: 9990 }], bounds)!;
    expect(w).toEqual({ fromUs: 9600, toUs: 10_000 });
    expect(evidenceWindow([], bounds)).toBeNull();
  });
});

describe('stepEvidence', () => {
  it('starts at either end and stops at the ends', () => {
    expect(stepEvidence(3, -1, 1)).toBe(0);
    expect(stepEvidence(3, -1, -1)).toBe(2);
    expect(stepEvidence(3, 1, 1)).toBe(2);
    expect(stepEvidence(3, 2, 1)).toBe(2);
    expect(stepEvidence(3, 0, -1)).toBe(0);
    expect(stepEvidence(0, -1, 1)).toBe(-1);
  });
});

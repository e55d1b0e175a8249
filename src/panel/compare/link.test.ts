import { ReplayStore } from '../replay/store';
import { compareFrames } from './fixture';
import { CompareLink, pairOf } from './link';
import { compareFromFrames, PairRow } from './model';

const base = compareFromFrames(compareFrames()).comparison!.rows;
// a fourth pair: Key Lookup 5 only in B
const rows: PairRow[] = [...base, { ...base[2], status: 'added', nodeA: null, nodeB: 5, spanA: null }];

function store() {
  return new ReplayStore({
    playheadUs: 0,
    playing: false,
    speed: 1,
    window: { fromUs: 0, toUs: 900 },
    filterNode: null,
    selectedNode: null,
    selected: null,
    stepLane: null,
  });
}

describe('CompareLink', () => {
  it('moves both timelines together', () => {
    const a = store();
    const b = store();
    const link = new CompareLink(a, b, rows);
    const w = { fromUs: 100, toUs: 200 };
    a.set({ window: w, playheadUs: 150, speed: 4 });
    expect(b.get()).toMatchObject({ window: w, playheadUs: 150, speed: 4 });
    b.set({ playing: true, playheadUs: 160 });
    expect(a.get()).toMatchObject({ playing: true, playheadUs: 160 });
    link.dispose();
    a.set({ playheadUs: 10 });
    expect(b.get().playheadUs).toBe(160);
  });

  it('selects the partner operator and highlights the pair in both', () => {
    const a = store();
    const b = store();
    const link = new CompareLink(a, b, rows);
    a.set({ selectedNode: 2, filterNode: 2 });
    expect(b.get()).toMatchObject({ selectedNode: 2, filterNode: 2 });
    expect(pairOf(a.get().highlight ?? null)).toBe(2);
    expect(b.get().highlight).toMatchObject({ nodes: [2], span: { fromUs: 310, toUs: 870 } });
    expect(link.selected()).toBe(2);
  });

  it('selects a row of the table on both sides, and an added operator on B alone', () => {
    const a = store();
    const b = store();
    const link = new CompareLink(a, b, rows);
    link.toggle(3);
    expect(a.get().selectedNode).toBeNull();
    expect(a.get().highlight).toMatchObject({ nodes: [], span: null });
    expect(b.get()).toMatchObject({ selectedNode: 5, highlight: { nodes: [5] } });
    // the link does not undo its own selection when the timelines move on
    a.set({ playheadUs: 300 });
    expect(b.get().selectedNode).toBe(5);
    link.toggle(3);
    expect(b.get().selectedNode).toBeNull();
    expect(link.selected()).toBe(-1);
  });

  it('clears both sides', () => {
    const a = store();
    const b = store();
    const link = new CompareLink(a, b, rows);
    link.select(1);
    a.set({ filterNode: 1 });
    link.clear();
    for (const s of [a, b]) {
      expect(s.get()).toMatchObject({ filterNode: null, selectedNode: null, highlight: null });
    }
  });
});

import { ReplayStore } from '../replay/store';
import { goldenTrace } from '../testing/fixtures';
import { FocusContext, clearFinding, focusFinding, focusedFinding, stepFindingEvidence } from './focus';
import { Finding } from './model';

const trace = goldenTrace();
const bounds = { fromUs: 0, toUs: 900 };

function finding(patch: Partial<Finding>): Finding {
  return {
    rule: 'reads-concentrated',
    severity: 'warning',
    confidence: 'high',
    title: 't',
    detail: '',
    hint: '',
    reference: '',
    span: null,
    primaryNodeId: null,
    operators: [],
    evidence: [],
    evidenceTotal: 0,
    numbers: [],
    confidenceReasons: [],
    ...patch,
  };
}

// the golden trace's reads: 30 (node 1), 320 and 330 (node 2), 500 (unmatched)
const findings = [
  finding({
    operators: [{ nodeId: 2, name: 'Clustered Index Scan', object: '' }],
    primaryNodeId: 2,
    span: { startUs: 320, endUs: 330 },
    evidence: [
      { id: 'read/1', lane: 'read', index: 1, t: 320, end: 320, nodeId: 2 },
      { id: 'read/2', lane: 'read', index: 2, t: 330, end: 330, nodeId: 2 },
    ],
    evidenceTotal: 2,
  }),
  finding({ rule: 'grant-excess', operators: [{ nodeId: 0, name: 'Hash Match', object: '' }], primaryNodeId: 0 }),
];

function context(): FocusContext {
  const store = new ReplayStore({
    playheadUs: 0,
    playing: true,
    speed: 1,
    window: { ...bounds },
    filterNode: 1,
    selectedNode: null,
    selected: null,
    stepLane: null,
  });
  return { store, trace, bounds, lanesFor: () => trace.lanes };
}

describe('focusing a finding', () => {
  it('selects its operator, zooms to its evidence and steps to the first event', () => {
    const ctx = context();
    focusFinding(ctx, findings, 0);
    const s = ctx.store.get();
    expect(focusedFinding(s.highlight)).toBe(0);
    expect(s.highlight!.nodes).toEqual([2]);
    expect(s.highlight!.events.map((e) => e.startUs)).toEqual([320, 330]);
    expect(s.selectedNode).toBe(2);
    expect(s.filterNode).toBeNull();
    expect(s.playing).toBe(false);
    expect(s.window.fromUs).toBeLessThanOrEqual(320);
    expect(s.window.toUs).toBeGreaterThanOrEqual(330);
    expect(s.window.toUs - s.window.fromUs).toBeLessThan(100);
    expect(s.highlight!.current).toBe(0);
    expect(s.playheadUs).toBe(320);
    expect(s.selected).toMatchObject({ lane: 'read', index: 1, nodeId: 2, startUs: 320, detail: false });
  });

  it('steps through the evidence and stops at its ends', () => {
    const ctx = context();
    focusFinding(ctx, findings, 0);
    stepFindingEvidence(ctx, findings, 1);
    expect(ctx.store.get()).toMatchObject({ playheadUs: 330, selected: { index: 2 } });
    expect(ctx.store.get().highlight!.current).toBe(1);
    stepFindingEvidence(ctx, findings, 1);
    expect(ctx.store.get().highlight!.current).toBe(1);
    stepFindingEvidence(ctx, findings, -1);
    expect(ctx.store.get()).toMatchObject({ playheadUs: 320, selected: { index: 1 } });
  });

  it('still selects the operators of a finding with no evidence, leaving the window', () => {
    const ctx = context();
    ctx.store.set({ window: { fromUs: 100, toUs: 200 } });
    focusFinding(ctx, findings, 1);
    const s = ctx.store.get();
    expect(s.selectedNode).toBe(0);
    expect(s.highlight).toMatchObject({ nodes: [0], events: [], current: -1 });
    expect(s.window).toEqual({ fromUs: 100, toUs: 200 });
    expect(s.selected).toBeNull();
    expect(stepFindingEvidence(ctx, findings, 1)).toBe(false);
  });

  it('focuses the first finding when stepping with none focused, and clears', () => {
    const ctx = context();
    expect(stepFindingEvidence(ctx, findings, 1)).toBe(true);
    expect(focusedFinding(ctx.store.get().highlight)).toBe(0);
    clearFinding(ctx.store);
    expect(ctx.store.get().highlight).toBeNull();
    expect(stepFindingEvidence(ctx, [], 1)).toBe(false);
  });
});

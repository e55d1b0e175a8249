import { Operator } from '../model/trace';
import { goldenTrace, lane } from '../testing/fixtures';
import {
  BOX_H,
  BOX_W,
  MAX_ARROW,
  MIN_ARROW,
  abbreviateObject,
  arrowWidth,
  autoCollapse,
  clampZoom,
  collapseAtDepth,
  descendants,
  fitZoom,
  layoutPlan,
  operatorAt,
  revealNode,
  toggleCollapsed,
} from './planDiagram';

const trace = goldenTrace();

/** A plan of n operators: a left-deep chain of joins, each with a scan beside it (n odd). */
function bigPlan(n: number): { ops: Operator[]; byNode: Map<number, Operator> } {
  const base = trace.byNode.get(1)!;
  const ops: Operator[] = [];
  for (let id = 0; id < n; id++) {
    // joins at even ids: children id+1 (the next join or the last scan) and id+2 (a scan)
    const isJoin = id % 2 === 0 && id + 2 < n;
    const parentId = id === 0 ? null : id % 2 === 1 ? id - 1 : id - 2;
    ops.push({
      ...base,
      nodeId: id,
      parentId,
      depth: 0,
      order: id,
      children: isJoin ? [id + 1, id + 2] : [],
      actualRows: 10 ** (id % 7),
    });
  }
  const byNode = new Map(ops.map((o) => [o.nodeId, o]));
  for (const o of ops) {
    let d = 0;
    for (let p = o.parentId; p !== null; p = byNode.get(p)!.parentId) {
      d++;
    }
    o.depth = d;
  }
  return { ops, byNode };
}

describe('plan diagram layout', () => {
  it('puts the root at the left and children a column to the right, data flowing right to left', () => {
    const L = layoutPlan(trace.operators, trace.byNode, new Set());
    const at = new Map(L.boxes.map((b) => [b.nodeId, b]));
    expect(at.get(0)!.x).toBe(0);
    expect(at.get(1)!.x).toBeGreaterThanOrEqual(BOX_W);
    expect(at.get(2)!.x).toBe(at.get(1)!.x);
    // the parent on its first child's row, the second child below
    expect(at.get(0)!.y).toBe(at.get(1)!.y);
    expect(at.get(2)!.y).toBeGreaterThanOrEqual(at.get(1)!.y + BOX_H);
    // one arrow per child, starting at the child's left edge and ending at the parent's right edge
    expect(L.edges.map((e) => [e.from, e.to]).sort()).toEqual([
      [1, 0],
      [2, 0],
    ]);
    const e2 = L.edges.find((e) => e.from === 2)!;
    expect(e2.path.startsWith(`M${at.get(2)!.x},`)).toBe(true);
    // the arrowhead's tip touches the parent's right edge
    expect(e2.head.startsWith(`M${BOX_W},`)).toBe(true);
    expect(L.width).toBe(at.get(1)!.x + BOX_W);
  });

  it('never overlaps two boxes in a plan of 101 operators', () => {
    const { ops, byNode } = bigPlan(101);
    const L = layoutPlan(ops, byNode, new Set());
    expect(L.boxes).toHaveLength(101);
    const cells = new Set(L.boxes.map((b) => `${b.col},${b.row}`));
    expect(cells.size).toBe(101);
    for (const b of L.boxes) {
      expect(b.col).toBe(byNode.get(b.nodeId)!.depth);
      expect(b.x + BOX_W).toBeLessThanOrEqual(L.width);
      expect(b.y + BOX_H).toBeLessThanOrEqual(L.height);
    }
    expect(L.edges).toHaveLength(100);
  });

  it('hides a collapsed subtree and counts what it hides', () => {
    const { ops, byNode } = bigPlan(101);
    const collapsed = toggleCollapsed(new Set(), byNode.get(10)!);
    const L = layoutPlan(ops, byNode, collapsed);
    const hiddenBelow = descendants(byNode.get(10)!, byNode);
    expect(hiddenBelow).toBe(101 - 11);
    expect(L.boxes).toHaveLength(101 - hiddenBelow);
    expect(L.boxes.find((b) => b.nodeId === 10)!.hidden).toBe(hiddenBelow);
    expect(L.edges.every((e) => e.from <= 10)).toBe(true);
    // toggled again it opens; a leaf never collapses
    expect(toggleCollapsed(collapsed, byNode.get(10)!).size).toBe(0);
    expect(toggleCollapsed(new Set(), byNode.get(100)!).size).toBe(0);
  });

  it('collapses at a depth and reveals a selected operator by opening its ancestors', () => {
    const { ops, byNode } = bigPlan(41);
    const c = collapseAtDepth(ops, 3);
    expect([...c].every((id) => byNode.get(id)!.depth === 3 && byNode.get(id)!.children.length > 0)).toBe(true);
    expect(c.size).toBeGreaterThan(0);
    const shown = revealNode(c, 40, byNode);
    const L = layoutPlan(ops, byNode, shown);
    expect(L.boxes.some((b) => b.nodeId === 40)).toBe(true);
  });

  it('opens a big plan with the deepest cut that fits, a small one whole', () => {
    const { ops, byNode } = bigPlan(121);
    const c = autoCollapse(ops, byNode, 40);
    const shown = layoutPlan(ops, byNode, c).boxes.length;
    expect(shown).toBeLessThanOrEqual(40);
    // one level deeper would show too many
    const deeper = [...c].map((id) => byNode.get(id)!.depth)[0] + 1;
    expect(layoutPlan(ops, byNode, collapseAtDepth(ops, deeper)).boxes.length).toBeGreaterThan(40);
    expect(autoCollapse(trace.operators, trace.byNode, 40).size).toBe(0);
  });
});

describe('arrow widths', () => {
  it('grow with rows on a log scale between the bounds', () => {
    const max = 1_000_000;
    const w = [0, 1, 10, 1000, 100_000, max].map((r) => arrowWidth(r, max));
    expect(w[0]).toBe(MIN_ARROW);
    expect(w[1]).toBe(MIN_ARROW);
    for (let i = 2; i < w.length; i++) {
      expect(w[i]).toBeGreaterThan(w[i - 1]);
    }
    expect(w[w.length - 1]).toBe(MAX_ARROW);
    expect(arrowWidth(null, max)).toBe(MIN_ARROW);
  });

  it('come from the child operator in the layout', () => {
    const L = layoutPlan(trace.operators, trace.byNode, new Set());
    const scan1 = L.edges.find((e) => e.from === 1)!;
    expect(scan1.rows).toBe(trace.byNode.get(1)!.actualRows);
    expect(scan1.width).toBe(arrowWidth(scan1.rows, 250));
  });
});

describe('operator state at the playhead', () => {
  // golden trace: join 0 builds 10-300, probes 300-880; scan 1 emits 25-290; scan 2 runs 310-870
  const join = trace.byNode.get(0)!;
  const waits = lane('wait', [
    { s: 120, e: 140, node: 0 },
    { s: 500, e: 520, node: 0 },
    { s: 600, e: 610, node: 2 },
  ]);

  it('names the phase a DBA reads: waiting, building, probing, emitting, done', () => {
    expect(operatorAt(join, 5, trace.lanes.read, waits).state).toBe('waiting');
    expect(operatorAt(join, 100, trace.lanes.read, waits).state).toBe('building');
    expect(operatorAt(join, 350, trace.lanes.read, waits).state).toBe('probing');
    expect(operatorAt(trace.byNode.get(1)!, 100, trace.lanes.read, waits).state).toBe('emitting');
    expect(operatorAt(join, 890, trace.lanes.read, waits).state).toBe('done');
    expect(operatorAt({ ...join, executed: false }, 100, undefined, undefined).state).toBe('not executed');
  });

  it('counts rows, reads and waits so far', () => {
    const scan2 = trace.byNode.get(2)!;
    expect(operatorAt(scan2, 319, trace.lanes.read, waits).reads).toBe(0);
    expect(operatorAt(scan2, 900, trace.lanes.read, waits).reads).toBe(2);
    expect(operatorAt(join, 130, trace.lanes.read, waits).waits).toBe(1);
    expect(operatorAt(join, 900, trace.lanes.read, waits).waits).toBe(2);
    expect(operatorAt(join, 640, trace.lanes.read, waits).rows).toBe(6);
    expect(operatorAt(join, 900, undefined, undefined)).toMatchObject({ rows: 12, reads: 0, waits: 0 });
  });
});

describe('object names', () => {
  it('keep table and index apart when shortened, the middle cut last', () => {
    const full = '[QueryReplayDemo].[dbo].[Customers].[IX_Customers_Region]';
    expect(abbreviateObject(full, 100)).toBe('QueryReplayDemo.dbo.Customers.IX_Customers_Region');
    expect(abbreviateObject(full, 40)).toBe('dbo.Customers.IX_Customers_Region');
    expect(abbreviateObject(full, 30)).toBe('Customers.IX_Customers_Region');
    const cut = abbreviateObject(full, 20);
    expect(cut).toHaveLength(20);
    expect(cut.startsWith('Customers')).toBe(true);
    expect(cut).toContain('…');
    expect(abbreviateObject('[dbo].[Orders]', 30)).toBe('dbo.Orders');
  });
});

describe('zoom', () => {
  it('clamps and fits', () => {
    expect(clampZoom(10)).toBe(2);
    expect(clampZoom(0.01)).toBe(0.2);
    expect(clampZoom(NaN)).toBe(1);
    const { ops, byNode } = bigPlan(21);
    const L = layoutPlan(ops, byNode, new Set());
    const z = fitZoom(L, 800, 600);
    expect(z).toBeLessThan(1);
    expect(L.width * z).toBeLessThanOrEqual(800);
    expect(L.height * z).toBeLessThanOrEqual(600);
    // a plan too big to fit stops at the smallest zoom; the view scrolls
    const huge = bigPlan(401);
    expect(fitZoom(layoutPlan(huge.ops, huge.byNode, new Set()), 800, 600)).toBe(0.2);
    expect(fitZoom(layoutPlan(trace.operators, trace.byNode, new Set()), 5000, 5000)).toBe(1);
  });
});

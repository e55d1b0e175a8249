import { LaneData, Operator } from '../model/trace';
import { countBy } from './nodes';
import { readsSoFar, rowsSoFar, stateAt } from './phases';

/**
 * The plan diagram's pure logic (issue 28): the tree laid out as SSMS and
 * Plan Explorer draw it (root at the left, each child a column further right,
 * so data flows right to left into the root), arrow widths from actual rows,
 * collapsed subtrees, zoom steps, and what each operator is doing at a time.
 * The component (components/PlanDiagram.tsx) only draws what this returns.
 */

export const BOX_W = 236;
export const BOX_H = 124;
export const GAP_X = 64;
export const GAP_Y = 18;
/** Arrow widths in px: the thinnest for 0 or 1 row, the widest for the plan's largest flow. */
export const MIN_ARROW = 1.5;
export const MAX_ARROW = 14;
export const MIN_ZOOM = 0.2;
export const MAX_ZOOM = 2;

export interface DiagramBox {
  nodeId: number;
  x: number;
  y: number;
  /** Column (depth) and row (leaf slot) in the grid. */
  col: number;
  row: number;
  /** Descendants hidden under this box because it is collapsed (0 when expanded or a leaf). */
  hidden: number;
}

export interface DiagramEdge {
  /** The child that produces the rows, and the parent that takes them. */
  from: number;
  to: number;
  /** Actual rows over the arrow (the child's actual rows), null when unknown. */
  rows: number | null;
  width: number;
  /** SVG path from the child's left edge to the arrowhead at the parent's right edge. */
  path: string;
  /** The arrowhead (a closed triangle pointing at the parent), sized with the arrow. */
  head: string;
}

export interface DiagramLayout {
  boxes: DiagramBox[];
  edges: DiagramEdge[];
  width: number;
  height: number;
}

/**
 * Lays the visible tree out in columns by depth and rows by leaf order; a
 * parent sits on the row of its first child, as in SSMS, so a chain of
 * single-child operators reads as one straight line.
 */
export function layoutPlan(
  ops: Operator[],
  byNode: Map<number, Operator>,
  collapsed: ReadonlySet<number>
): DiagramLayout {
  const boxes: DiagramBox[] = [];
  const edges: DiagramEdge[] = [];
  const roots = ops.filter((o) => o.parentId === null || !byNode.has(o.parentId));
  const maxRows = ops.reduce((m, o) => Math.max(m, o.actualRows ?? 0), 0);
  let nextRow = 0;
  let maxCol = 0;
  // iterative post-order walk: bounded by the operator count, no recursion depth limit
  const place = (rootId: number) => {
    const rowOf = new Map<number, number>();
    const stack: Array<{ id: number; col: number; done: boolean }> = [{ id: rootId, col: 0, done: false }];
    const seen = new Set<number>();
    while (stack.length > 0) {
      const top = stack.pop()!;
      const op = byNode.get(top.id);
      if (!op) {
        continue;
      }
      const kids = collapsed.has(op.nodeId) ? [] : op.children.filter((c) => byNode.has(c));
      if (!top.done && kids.length > 0 && !seen.has(op.nodeId)) {
        seen.add(op.nodeId);
        stack.push({ ...top, done: true });
        for (let i = kids.length - 1; i >= 0; i--) {
          stack.push({ id: kids[i], col: top.col + 1, done: false });
        }
        continue;
      }
      const row = kids.length > 0 ? (rowOf.get(kids[0]) ?? nextRow) : nextRow++;
      rowOf.set(op.nodeId, row);
      maxCol = Math.max(maxCol, top.col);
      boxes.push({
        nodeId: op.nodeId,
        col: top.col,
        row,
        x: top.col * (BOX_W + GAP_X),
        y: row * (BOX_H + GAP_Y),
        hidden: collapsed.has(op.nodeId) ? descendants(op, byNode) : 0,
      });
    }
  };
  for (const r of roots) {
    place(r.nodeId);
  }
  const at = new Map(boxes.map((b) => [b.nodeId, b]));
  for (const b of boxes) {
    const op = byNode.get(b.nodeId)!;
    const parent = op.parentId === null ? undefined : at.get(op.parentId);
    if (!parent) {
      continue;
    }
    const width = arrowWidth(op.actualRows, maxRows);
    edges.push({ from: b.nodeId, to: parent.nodeId, rows: op.actualRows, width, ...edgePath(parent, b, width) });
  }
  boxes.sort((a, b) => a.col - b.col || a.row - b.row);
  return {
    boxes,
    edges,
    width: (maxCol + 1) * (BOX_W + GAP_X) - GAP_X,
    height: Math.max(1, nextRow) * (BOX_H + GAP_Y) - GAP_Y,
  };
}

/**
 * From the child's left edge, an elbow half-way across the gap, into an
 * arrowhead whose tip touches the parent's right edge: rows flow right to left.
 */
function edgePath(parent: DiagramBox, child: DiagramBox, width: number): { path: string; head: string } {
  const px = parent.x + BOX_W;
  const cx = child.x;
  const cy = child.y + BOX_H / 2;
  const py =
    parent.row === child.row ? cy : parent.y + BOX_H / 2 + Math.min(BOX_H / 2 - 8, 6 * (child.row - parent.row));
  const mid = px + GAP_X / 2;
  const len = Math.max(8, width * 1.2);
  const half = Math.max(4.5, width * 0.9);
  return {
    path: `M${cx},${cy} H${mid} V${py} H${px + len - 0.5}`,
    head: `M${px},${py} L${px + len},${py - half} L${px + len},${py + half} Z`,
  };
}

/** Operators under op (all depths). */
export function descendants(op: Operator, byNode: Map<number, Operator>): number {
  let n = 0;
  const stack = [...op.children];
  const seen = new Set<number>();
  while (stack.length > 0 && n <= byNode.size) {
    const id = stack.pop()!;
    const c = byNode.get(id);
    if (!c || seen.has(id)) {
      continue;
    }
    seen.add(id);
    n++;
    stack.push(...c.children);
  }
  return n;
}

/**
 * Arrow width on a log scale of rows, as SSMS sizes its arrows: a million
 * rows must look thicker than a thousand without one arrow hiding the plan.
 */
export function arrowWidth(rows: number | null, maxRows: number): number {
  if (rows === null || rows <= 1 || maxRows <= 1) {
    return MIN_ARROW;
  }
  const f = Math.log10(rows + 1) / Math.log10(Math.max(maxRows, rows) + 1);
  return Math.round((MIN_ARROW + (MAX_ARROW - MIN_ARROW) * f) * 10) / 10;
}

/** Flips one subtree open or shut; a leaf cannot be collapsed. */
export function toggleCollapsed(collapsed: ReadonlySet<number>, op: Operator): Set<number> {
  const next = new Set(collapsed);
  if (next.has(op.nodeId)) {
    next.delete(op.nodeId);
  } else if (op.children.length > 0) {
    next.add(op.nodeId);
  }
  return next;
}

/**
 * The collapse a big plan opens with: the deepest level cut that leaves at
 * most `maxVisible` boxes (nothing collapsed when the whole plan fits).
 */
export function autoCollapse(ops: Operator[], byNode: Map<number, Operator>, maxVisible: number): Set<number> {
  if (ops.length <= maxVisible) {
    return new Set();
  }
  const maxDepth = ops.reduce((m, o) => Math.max(m, o.depth), 0);
  for (let d = maxDepth; d >= 0; d--) {
    const c = collapseAtDepth(ops, d);
    if (c.size > 0 && layoutPlan(ops, byNode, c).boxes.length <= maxVisible) {
      return c;
    }
  }
  return collapseAtDepth(ops, 0);
}

/** Collapses every operator at `depth` that has children. */
export function collapseAtDepth(ops: Operator[], depth: number): Set<number> {
  return new Set(ops.filter((o) => o.depth === depth && o.children.length > 0).map((o) => o.nodeId));
}

/** The operator and its ancestors' collapsed entries removed, so a selected operator becomes visible. */
export function revealNode(collapsed: ReadonlySet<number>, nodeId: number, byNode: Map<number, Operator>): Set<number> {
  const next = new Set(collapsed);
  let op = byNode.get(nodeId);
  for (let i = 0; op && op.parentId !== null && i <= byNode.size; i++) {
    next.delete(op.parentId);
    op = byNode.get(op.parentId);
  }
  return next;
}

export function clampZoom(z: number): number {
  return Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, Number.isFinite(z) ? z : 1));
}

/** The zoom that fits the whole layout into the view (never above 1: text stays its size). */
export function fitZoom(layout: DiagramLayout, viewW: number, viewH: number): number {
  if (layout.width <= 0 || layout.height <= 0) {
    return 1;
  }
  return clampZoom(Math.min(1, (viewW - 16) / layout.width, (viewH - 16) / layout.height));
}

/** What a DBA calls the operator's state; "waiting" is before its first event. */
export type DiagramStateName = 'not executed' | 'waiting' | 'consuming' | 'building' | 'probing' | 'emitting' | 'done';

export interface OperatorNow {
  state: DiagramStateName;
  /** Rows out so far (estimated over the emitting span), null when the plan has no actual rows. */
  rows: number | null;
  /** Page reads (physical_page_read events) and waits tied to the operator so far. */
  reads: number;
  waits: number;
}

const PHASE_STATE: Record<string, DiagramStateName> = {
  consume: 'consuming',
  build: 'building',
  probe: 'probing',
  emit: 'emitting',
};

/** The operator's state and counts at `us`, from its phases and the read and wait lanes. */
export function operatorAt(
  op: Operator,
  us: number,
  reads: LaneData | undefined,
  waits: LaneData | undefined
): OperatorNow {
  const st = stateAt(op, us);
  let state: DiagramStateName;
  if (st.status === 'not-executed') {
    state = 'not executed';
  } else if (st.status === 'pending') {
    state = 'waiting';
  } else if (st.status === 'done') {
    state = 'done';
  } else {
    state = PHASE_STATE[st.phase?.kind ?? ''] ?? (st.emitting ? 'emitting' : 'consuming');
  }
  return {
    state,
    rows: rowsSoFar(op, us),
    reads: readsSoFar(op, reads, us),
    waits: waits ? countBy(waits, op.nodeId, us) : 0,
  };
}

/**
 * A long object name shortened to fit `maxChars`: brackets dropped, then the
 * database and schema, then the middle cut with "…" (the box's title keeps
 * the full name, so nothing is lost).
 */
export function abbreviateObject(full: string, maxChars: number): string {
  const plain = full.replace(/[[\]]/g, '');
  if (plain.length <= maxChars) {
    return plain;
  }
  const parts = plain.split('.');
  for (let drop = 1; drop < parts.length - 1; drop++) {
    const s = parts.slice(drop).join('.');
    if (s.length <= maxChars) {
      return s;
    }
  }
  const last = parts.length >= 2 ? parts.slice(-2).join('.') : plain;
  if (maxChars < 5) {
    return last.slice(0, Math.max(1, maxChars));
  }
  const head = Math.ceil((maxChars - 1) / 2);
  const tail = maxChars - 1 - head;
  return `${last.slice(0, head)}…${tail > 0 ? last.slice(-tail) : ''}`;
}

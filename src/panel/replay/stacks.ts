import { EventStackFrame, StackFrameRow } from '../model/trace';

/**
 * The call-stack tree of the callstacks frame (docs/frames.md §3.8: a
 * flame-graph pre-order walk) and which frames are infrastructure — the
 * categories a DBA rarely needs (Extended Events, tracing, scheduling,
 * worker management, I/O infrastructure, SQL OS, system), collapsed by
 * default.
 */
export const INFRASTRUCTURE = new Set([
  'XEventInfrastructure',
  'Tracing',
  'Scheduling',
  'WorkerManagement',
  'IoInfrastructure',
  'SqlOs',
  'System',
]);

export function isInfrastructure(f: StackFrameRow): boolean {
  return INFRASTRUCTURE.has(f.badge) || f.moduleBadge.startsWith('System');
}

export interface StackNode {
  row: StackFrameRow;
  index: number;
  children: StackNode[];
}

/** Rebuilds the tree from the pre-order rows (a row's parent is the nearest earlier row one level up). */
export function stackTree(rows: StackFrameRow[]): StackNode[] {
  const roots: StackNode[] = [];
  const path: StackNode[] = [];
  rows.forEach((row, index) => {
    const node: StackNode = { row, index, children: [] };
    path.length = Math.min(path.length, row.level);
    const parent = path[row.level - 1];
    if (parent) {
      parent.children.push(node);
    } else {
      roots.push(node);
    }
    path[row.level] = node;
  });
  return roots;
}

/** What the view shows: rows in order, where runs of infrastructure frames collapse into one line. */
export type StackLine =
  | { kind: 'frame'; node: StackNode; depth: number }
  | { kind: 'collapsed'; id: string; count: number; depth: number; labels: string[] };

/**
 * Flattens the tree for display. A chain of infrastructure frames (each the
 * only child of the previous) becomes one collapsed line unless its id is in
 * `expanded`.
 */
export function stackLines(roots: StackNode[], showInfrastructure: boolean, expanded: Set<string>): StackLine[] {
  const out: StackLine[] = [];
  const walk = (n: StackNode, depth: number) => {
    if (!showInfrastructure && isInfrastructure(n.row)) {
      const run: StackNode[] = [n];
      let cur = n;
      while (cur.children.length === 1 && isInfrastructure(cur.children[0].row)) {
        cur = cur.children[0];
        run.push(cur);
      }
      const id = `i${n.index}`;
      if (!expanded.has(id)) {
        out.push({ kind: 'collapsed', id, count: run.length, depth, labels: run.map((r) => r.row.label) });
        cur.children.forEach((c) => walk(c, depth + 1));
        return;
      }
    }
    out.push({ kind: 'frame', node: n, depth });
    n.children.forEach((c) => walk(c, depth + 1));
  };
  roots.forEach((r) => walk(r, 0));
  return out;
}

/** module!Class::Method+0x1f → { module, symbol, offset } */
export function splitFrame(label: string): { module: string; symbol: string; offset: string } {
  const bang = label.indexOf('!');
  const module = bang > 0 ? label.slice(0, bang) : '';
  const rest = bang > 0 ? label.slice(bang + 1) : label;
  const plus = rest.lastIndexOf('+0x');
  return plus > 0
    ? { module, symbol: rest.slice(0, plus), offset: rest.slice(plus + 1) }
    : { module, symbol: rest, offset: '' };
}

/** A line of the selected event's own stack: a frame, or a run of infrastructure frames collapsed into one. */
export type EventStackLine =
  { kind: 'frame'; frame: EventStackFrame } | { kind: 'collapsed'; id: string; frames: EventStackFrame[] };

/**
 * The selected event's stack, innermost frame first, as the view lists it:
 * each run of consecutive infrastructure frames (Extended Events
 * publishing, scheduling, SQL OS, system) becomes one collapsed line unless
 * infrastructure is shown or the run's id is in `expanded`.
 */
export function eventStackLines(
  frames: EventStackFrame[],
  showInfrastructure: boolean,
  expanded: Set<string>
): EventStackLine[] {
  const out: EventStackLine[] = [];
  for (let i = 0; i < frames.length;) {
    const f = frames[i];
    if (showInfrastructure || !f.infrastructure) {
      out.push({ kind: 'frame', frame: f });
      i++;
      continue;
    }
    let j = i;
    while (j < frames.length && frames[j].infrastructure) {
      j++;
    }
    const id = `e${i}`;
    if (expanded.has(id)) {
      frames.slice(i, j).forEach((frame) => out.push({ kind: 'frame', frame }));
    } else {
      out.push({ kind: 'collapsed', id, frames: frames.slice(i, j) });
    }
    i = j;
  }
  return out;
}

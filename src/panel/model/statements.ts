import { DataFrame, Field } from '@grafana/data';

/**
 * The statement tree of a batch (docs/frames.md §3.13, the `statements`
 * frame): the batch, its statements and the statements of the procedures
 * they called, read from the frames, with the band each one covers on the
 * timeline. Pure, so the picker and the boundaries are tested without a
 * browser.
 */

export interface StatementNode {
  id: number;
  parentId: number;
  kind: 'batch' | 'statement' | string;
  text: string;
  objectName: string;
  nestLevel: number;
  /** Depth in the tree: 0 the batch, 1 its statements, 2 a called procedure's… */
  depth: number;
  startUs: number;
  endUs: number;
  elapsedUs: number;
  rows: number;
  logicalReads: number;
  physicalReads: number;
  waitUs: number;
  events: number;
  executions: number;
  hasPlan: boolean;
}

export interface StatementTree {
  /** In tree order: a parent before its children, siblings in the frame's order. */
  nodes: StatementNode[];
  /** The statement the other frames draw (meta.custom.statementId); -1 when none says. */
  current: number;
}

/** At most this many nodes are read: a tree is a picker, not a table of every row. */
export const MAX_STATEMENTS = 2000;

function fieldOf(frame: DataFrame, name: string): Field | undefined {
  return frame.fields.find((f) => f.name === name);
}

function custom(frame: DataFrame | undefined): Record<string, unknown> {
  return (frame?.meta?.custom as Record<string, unknown> | undefined) ?? {};
}

/** The statements frame: by name, or by its group when Grafana renamed it. */
export function statementsFrame(series: DataFrame[]): DataFrame | undefined {
  return series.find((f) => f.name === 'statements' || custom(f).group === 'statements');
}

/** The statement the frames draw: the first meta.custom.statementId among them, -1 when none has one. */
export function currentStatement(series: DataFrame[]): number {
  for (const f of series) {
    const id = custom(f).statementId;
    if (typeof id === 'number' && Number.isFinite(id)) {
      return id;
    }
  }
  return -1;
}

/**
 * The tree of the statements frame, or null when the response has none (a
 * single statement) or it is malformed. Nodes whose parent is missing are
 * dropped with their subtree rather than shown in the wrong place.
 */
export function statementsFromFrames(series: DataFrame[]): StatementTree | null {
  const frame = statementsFrame(series);
  const idField = frame && fieldOf(frame, 'id');
  if (!frame || !idField || !fieldOf(frame, 'parentId')) {
    return null;
  }
  const n = Math.min(idField.values.length, MAX_STATEMENTS);
  const num = (name: string, i: number) => Number(fieldOf(frame, name)?.values[i] ?? 0) || 0;
  const str = (name: string, i: number) => String(fieldOf(frame, name)?.values[i] ?? '');
  const rows: StatementNode[] = [];
  for (let i = 0; i < n; i++) {
    rows.push({
      id: num('id', i),
      parentId: num('parentId', i),
      kind: str('kind', i),
      text: str('text', i),
      objectName: str('objectName', i),
      nestLevel: num('nestLevel', i),
      depth: 0,
      startUs: num('startUs', i),
      endUs: num('endUs', i),
      elapsedUs: num('elapsedUs', i),
      rows: num('rows', i),
      logicalReads: num('logicalReads', i),
      physicalReads: num('physicalReads', i),
      waitUs: num('waitUs', i),
      events: num('events', i),
      executions: num('executions', i),
      hasPlan: fieldOf(frame, 'hasPlan')?.values[i] === true,
    });
  }
  const nodes = treeOrder(rows);
  return nodes.length ? { nodes, current: currentStatement(series) } : null;
}

/** Depth-first from the roots (parentId < 0), children in the frame's order; each node once. */
function treeOrder(rows: StatementNode[]): StatementNode[] {
  const children = new Map<number, StatementNode[]>();
  for (const r of rows) {
    const list = children.get(r.parentId) ?? [];
    list.push(r);
    children.set(r.parentId, list);
  }
  const out: StatementNode[] = [];
  const seen = new Set<number>();
  const stack: Array<{ node: StatementNode; depth: number }> = rows
    .filter((r) => r.parentId < 0)
    .reverse()
    .map((node) => ({ node, depth: 0 }));
  while (stack.length && out.length < rows.length) {
    const { node, depth } = stack.pop()!;
    if (seen.has(node.id)) {
      continue;
    }
    seen.add(node.id);
    out.push({ ...node, depth });
    const kids = children.get(node.id) ?? [];
    for (let i = kids.length - 1; i >= 0; i--) {
      stack.push({ node: kids[i], depth: depth + 1 });
    }
  }
  return out;
}

/** A statement's band on the timeline: where it starts and ends, in the batch's µs. */
export interface StatementBand {
  id: number;
  depth: number;
  fromUs: number;
  toUs: number;
  label: string;
  current: boolean;
}

/**
 * The bands the timeline draws: every statement (not the batch) with a
 * start and an end, outermost first so nested procedure statements draw
 * over the EXEC that called them.
 */
export function statementBands(tree: StatementTree): StatementBand[] {
  return tree.nodes
    .filter((n) => n.kind !== 'batch' && n.endUs >= n.startUs && (n.endUs > 0 || n.startUs > 0))
    .map((n) => ({
      id: n.id,
      depth: n.depth,
      fromUs: n.startUs,
      toUs: n.endUs,
      label: statementLabel(n),
      current: n.id === tree.current,
    }))
    .sort((a, b) => a.depth - b.depth || a.fromUs - b.fromUs);
}

/** One line naming a node: the batch, or the statement's first line (with its procedure). */
export function statementLabel(n: StatementNode): string {
  if (n.kind === 'batch') {
    return 'Batch';
  }
  const text = n.text.replace(/\s+/g, ' ').trim();
  const short = text.length > 80 ? `${text.slice(0, 79)}…` : text;
  return n.objectName ? `${n.objectName}: ${short}` : short;
}

/** Whether picking the node can draw its own operators (it has a plan and is not the one shown). */
export function canPick(tree: StatementTree, n: StatementNode): boolean {
  return n.hasPlan && n.id !== tree.current;
}

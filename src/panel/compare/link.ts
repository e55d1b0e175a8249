import { Highlight, ReplayState, ReplayStore } from '../replay/store';
import { PairRow, Side, counterpart, rowOf } from './model';

/**
 * The two timelines of a comparison move as one: each side has its own
 * store (operators, events and selections are its own), and the link keeps
 * the window, playhead, playing and speed equal, and carries an operator
 * selection or filter over to its partner on the other side. Selecting a
 * pair (a row of the comparison table, or an operator in either timeline)
 * highlights it in both timelines.
 */

const SHARED: Array<keyof ReplayState> = ['window', 'playheadUs', 'playing', 'speed'];

const PREFIX = 'compare:';

export class CompareLink {
  private syncing = false;
  private readonly unsubscribe: Array<() => void>;
  /** Each store's state when the link last looked, to see what the user changed. */
  private last: Record<Side, ReplayState>;

  constructor(
    readonly a: ReplayStore,
    readonly b: ReplayStore,
    readonly rows: PairRow[]
  ) {
    this.last = { a: a.get(), b: b.get() };
    const follow = (from: Side) => () => {
      if (this.syncing) {
        return;
      }
      const s = (from === 'a' ? this.a : this.b).get();
      const prev = this.last[from];
      const patch: Partial<ReplayState> = {};
      for (const k of SHARED) {
        if (s[k] !== prev[k]) {
          (patch as Record<string, unknown>)[k] = s[k];
        }
      }
      if (s.filterNode !== prev.filterNode) {
        patch.filterNode = counterpart(this.rows, from, s.filterNode);
      }
      this.quietly(() => {
        (from === 'a' ? this.b : this.a).set(patch);
        if (s.selectedNode !== prev.selectedNode) {
          this.selectPair(s.selectedNode === null ? -1 : rowOf(this.rows, from, s.selectedNode));
        }
      });
    };
    this.unsubscribe = [a.subscribe(follow('a')), b.subscribe(follow('b'))];
  }

  /** The selected pair's row, or -1. */
  selected(): number {
    return pairOf(this.a.get().highlight ?? null);
  }

  /** Selects row i in both timelines (-1 clears); selecting the selected row again clears it. */
  toggle(i: number): void {
    this.select(i === this.selected() ? -1 : i);
  }

  select(i: number): void {
    this.quietly(() => this.selectPair(i));
  }

  /** Changes both stores without the link reacting to its own changes. */
  private quietly(fn: () => void): void {
    this.syncing = true;
    try {
      fn();
    } finally {
      this.syncing = false;
      this.last = { a: this.a.get(), b: this.b.get() };
    }
  }

  private selectPair(i: number): void {
    const row = this.rows[i];
    for (const side of ['a', 'b'] as Side[]) {
      const store = side === 'a' ? this.a : this.b;
      const node = row ? (side === 'a' ? row.nodeA : row.nodeB) : null;
      const span = row ? (side === 'a' ? row.spanA : row.spanB) : null;
      const highlight: Highlight | null = row
        ? {
            source: `${PREFIX}${i}`,
            nodes: node === null ? [] : [node],
            events: [],
            current: -1,
            span: span ? { fromUs: span.startUs, toUs: span.endUs } : null,
          }
        : null;
      store.set({ selectedNode: node, highlight });
    }
  }

  /** Clears selections, filters and the highlight on both sides. */
  clear(): void {
    this.quietly(() => {
      for (const s of [this.a, this.b]) {
        s.set({ filterNode: null, selectedNode: null, selected: null, highlight: null });
      }
    });
  }

  dispose(): void {
    this.unsubscribe.forEach((u) => u());
  }
}

/** The comparison row a highlight is about, or -1. */
export function pairOf(h: Highlight | null): number {
  return h && h.source.startsWith(PREFIX) ? Number(h.source.slice(PREFIX.length)) : -1;
}

import { LaneData, ReplayTrace, WindowUs } from '../model/trace';
import { ReplayStore } from './store';

/**
 * A read-only handle for the browser tests and the performance check: when
 * the page sets `window.__QUERYREPLAY_DEBUG__ = { panels: [] }` before the
 * panel mounts, each panel registers its store and drawing statistics there.
 * Nothing is registered otherwise, so Grafana pages are unaffected.
 */
export interface DrawStats {
  /** Base-layer redraws, and the marks/columns of the last one, per lane. */
  baseDraws: number;
  lastBaseMs: number;
  lanes: Record<string, { kind: string; drawn: number }>;
  /** Overlay (playhead) frames drawn, and ms spent in the last few. */
  overlayFrames: number;
  frameWorkMs: number[];
  /** performance.now() of the first base draw (the harness subtracts when it handed the frames over). */
  firstDrawAt: number | null;
  detailFetches: number;
  /** Where the lanes are on the timeline canvas (the last base draw's layout). */
  layout: unknown;
  detailWindows: Array<{ fromUs: number; toUs: number; binned: string[] }>;
  /** The label drawn for each operator row, by NodeId (what a person reads on the canvas). */
  labels: Record<number, string>;
}

export interface DebugPanel {
  store: ReplayStore;
  stats: DrawStats;
  trace: ReplayTrace;
  /** In the compare mode, which trace's timeline this is. */
  side?: 'a' | 'b';
}

interface DebugRoot {
  panels: DebugPanel[];
}

export function newStats(): DrawStats {
  return {
    baseDraws: 0,
    lastBaseMs: 0,
    lanes: {},
    overlayFrames: 0,
    frameWorkMs: [],
    firstDrawAt: null,
    detailFetches: 0,
    layout: null,
    detailWindows: [],
    labels: {},
  };
}

export function debugRoot(): DebugRoot | null {
  const w = globalThis as unknown as { __QUERYREPLAY_DEBUG__?: DebugRoot };
  return w.__QUERYREPLAY_DEBUG__ && Array.isArray(w.__QUERYREPLAY_DEBUG__.panels) ? w.__QUERYREPLAY_DEBUG__ : null;
}

/** Records a detail answer: its window and which of its lanes are still binned. */
export function recordDetail(stats: DrawStats, window: WindowUs, lanes: Partial<Record<string, LaneData>>): void {
  stats.detailFetches++;
  stats.detailWindows.push({
    ...window,
    binned: Object.values(lanes)
      .filter((l) => l?.binned)
      .map((l) => l!.name),
  });
}

/** Records a frame's work time, keeping the last 2,000. */
export function recordFrame(stats: DrawStats, ms: number): void {
  stats.overlayFrames++;
  stats.frameWorkMs.push(ms);
  if (stats.frameWorkMs.length > 2000) {
    stats.frameWorkMs.splice(0, stats.frameWorkMs.length - 2000);
  }
}

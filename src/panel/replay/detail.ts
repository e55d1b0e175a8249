import { DataFrame } from '@grafana/data';
import { EventLaneName } from '../model/lanes';
import { LaneData, ReplayTrace, WindowUs, lanesFromViewFrames } from '../model/trace';
import { span } from './scale';

/**
 * Zoomed-in detail: when the base frames binned a lane and the user zooms
 * into a window where finer rows would show more, the panel asks the
 * datasource for a `view` of that window (docs/frames.md §1, §4). Requests
 * are debounced and superseded, answers are cached, and drawing never waits:
 * until the detail arrives the base frames are drawn.
 */

/** Fetches the `view` frames of a window; rejects with a readable error. */
export type ViewFetcher = (window: WindowUs, maxDataPoints: number, signal: AbortSignal) => Promise<DataFrame[]>;

export interface Detail {
  window: WindowUs;
  budget: number;
  lanes: Partial<Record<EventLaneName, LaneData>>;
}

export interface DetailOptions {
  debounceMs: number;
  /** Detail entries kept (most recently used). */
  keep: number;
}

const DEFAULTS: DetailOptions = { debounceMs: 120, keep: 8 };

/** Budget per lane for a plot `widthPx` wide: two rows per pixel, within 500-20,000. */
export function budgetFor(widthPx: number): number {
  return Math.min(20_000, Math.max(500, Math.round(widthPx * 2)));
}

/**
 * Whether a window needs detail the base frames lack: some shown lane is
 * binned and its bins are coarser than two pixels of this window.
 */
export function needsDetail(trace: ReplayTrace, lanes: EventLaneName[], w: WindowUs, widthPx: number): boolean {
  const pxUs = span(w) / Math.max(widthPx, 1);
  return lanes.some((l) => {
    const lane = trace.lanes[l];
    return !!lane && lane.binned && lane.binWidthUs > 2 * pxUs;
  });
}

/** Whether a detail answers a window: it covers it and is fine enough for it. */
export function covers(d: Detail, w: WindowUs, widthPx: number): boolean {
  if (d.window.fromUs > w.fromUs || d.window.toUs < w.toUs) {
    return false;
  }
  // detail fetched for a much wider window is too coarse for this one
  return span(d.window) <= 4 * span(w) || Object.values(d.lanes).every((l) => !l || !l.binned);
}

export class DetailCache {
  private entries: Detail[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private inflight: AbortController | null = null;
  private pendingKey = '';
  private opts: DetailOptions;
  /** The last fetch's error, shown by the panel; cleared by a success. */
  error: string | null = null;
  loading = false;

  constructor(
    private readonly fetcher: ViewFetcher | null,
    private readonly onChange: (d: Detail | null) => void,
    opts?: Partial<DetailOptions>
  ) {
    this.opts = { ...DEFAULTS, ...opts };
  }

  /** The cached detail that answers a window, if any (and marks it recently used). */
  lookup(w: WindowUs, widthPx: number): Detail | null {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const d = this.entries[i];
      if (covers(d, w, widthPx)) {
        this.entries.splice(i, 1);
        this.entries.push(d);
        return d;
      }
    }
    return null;
  }

  /**
   * Asks for detail of a window (a margin of half a window on each side, so
   * small pans stay covered), after the debounce; a newer request replaces a
   * pending or running one.
   */
  request(w: WindowUs, widthPx: number, bounds: WindowUs): void {
    if (!this.fetcher || this.lookup(w, widthPx)) {
      return;
    }
    const s = span(w);
    const want = { fromUs: Math.max(bounds.fromUs, w.fromUs - s / 2), toUs: Math.min(bounds.toUs, w.toUs + s / 2) };
    const budget = budgetFor(widthPx * 2);
    const key = `${want.fromUs}:${want.toUs}:${budget}`;
    if (key === this.pendingKey) {
      return;
    }
    this.cancel();
    this.pendingKey = key;
    this.timer = setTimeout(() => this.run(want, budget), this.opts.debounceMs);
  }

  private async run(w: WindowUs, budget: number): Promise<void> {
    this.timer = null;
    const ctl = new AbortController();
    this.inflight = ctl;
    this.loading = true;
    this.onChange(null);
    try {
      const frames = await this.fetcher!(w, budget, ctl.signal);
      if (ctl.signal.aborted) {
        return;
      }
      const d: Detail = { window: w, budget, lanes: lanesFromViewFrames(frames, w) };
      this.entries.push(d);
      if (this.entries.length > this.opts.keep) {
        this.entries.shift();
      }
      this.error = null;
      this.loading = false;
      this.pendingKey = '';
      this.onChange(d);
    } catch (e) {
      if (ctl.signal.aborted) {
        return;
      }
      this.loading = false;
      this.pendingKey = '';
      this.error = e instanceof Error ? e.message : String(e);
      this.onChange(null);
    } finally {
      if (this.inflight === ctl) {
        this.inflight = null;
      }
    }
  }

  cancel(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.inflight?.abort();
    this.inflight = null;
    this.pendingKey = '';
    this.loading = false;
  }

  dispose(): void {
    this.cancel();
    this.entries = [];
  }
}

import { WindowUs } from '../model/trace';

/** Mapping between trace time (µs) and pixels, zoom and pan, ticks and time labels. */

export type TimeUnit = 'auto' | 'us' | 'ms';

/** The narrowest window one can zoom to. */
export const MIN_SPAN_US = 2;

export function span(w: WindowUs): number {
  return Math.max(w.toUs - w.fromUs, 1e-9);
}

export function xOf(w: WindowUs, widthPx: number, us: number): number {
  return ((us - w.fromUs) / span(w)) * widthPx;
}

export function usOf(w: WindowUs, widthPx: number, x: number): number {
  return w.fromUs + (x / Math.max(widthPx, 1)) * span(w);
}

/** Keeps a window inside the trace's bounds and at least MIN_SPAN_US wide, preserving its span when it can. */
export function clampWindow(w: WindowUs, bounds: WindowUs): WindowUs {
  const full = Math.max(bounds.toUs - bounds.fromUs, MIN_SPAN_US);
  let s = Math.min(Math.max(w.toUs - w.fromUs, MIN_SPAN_US), full);
  let from = w.fromUs;
  if (from < bounds.fromUs) {
    from = bounds.fromUs;
  }
  if (from + s > bounds.fromUs + full) {
    from = bounds.fromUs + full - s;
  }
  return { fromUs: from, toUs: from + s };
}

/** Zooms by `factor` (< 1 zooms in) keeping `centerUs` at the same screen position. */
export function zoomAt(w: WindowUs, factor: number, centerUs: number, bounds: WindowUs): WindowUs {
  const s = span(w) * factor;
  const frac = (centerUs - w.fromUs) / span(w);
  const from = centerUs - frac * s;
  return clampWindow({ fromUs: from, toUs: from + s }, bounds);
}

export function pan(w: WindowUs, deltaUs: number, bounds: WindowUs): WindowUs {
  return clampWindow({ fromUs: w.fromUs + deltaUs, toUs: w.toUs + deltaUs }, bounds);
}

/** A window over [a, b] (either order), clamped. */
export function windowBetween(a: number, b: number, bounds: WindowUs): WindowUs {
  return clampWindow({ fromUs: Math.min(a, b), toUs: Math.max(a, b) }, bounds);
}

/** Moves the window (same span) so that `us` is visible, with a margin. */
export function reveal(w: WindowUs, us: number, bounds: WindowUs): WindowUs {
  if (us >= w.fromUs && us <= w.toUs) {
    return w;
  }
  const s = span(w);
  return clampWindow({ fromUs: us - s * 0.1, toUs: us + s * 0.9 }, bounds);
}

/** A 1-2-5 step giving ticks at least minPx apart. */
export function tickStep(w: WindowUs, widthPx: number, minPx = 80): number {
  const raw = (span(w) * minPx) / Math.max(widthPx, 1);
  const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-6))));
  for (const m of [1, 2, 5, 10]) {
    if (m * p >= raw) {
      return m * p;
    }
  }
  return 10 * p;
}

export function ticks(w: WindowUs, widthPx: number, minPx = 80): { step: number; values: number[] } {
  const step = tickStep(w, widthPx, minPx);
  const values: number[] = [];
  for (let v = Math.ceil(w.fromUs / step) * step; v <= w.toUs && values.length < 200; v += step) {
    values.push(v);
  }
  return { step, values };
}

function decimals(stepInUnit: number): number {
  if (!stepInUnit || stepInUnit >= 1) {
    return 0;
  }
  return Math.min(6, Math.ceil(-Math.log10(stepInUnit) - 1e-9));
}

/** The unit 'auto' picks for a span: µs below 10 ms, ms below 100 s, else s. */
export function autoUnit(spanUs: number): 'µs' | 'ms' | 's' {
  if (spanUs < 10_000) {
    return 'µs';
  }
  return spanUs < 100_000_000 ? 'ms' : 's';
}

/**
 * Formats a trace time. `stepUs` (the precision that matters, e.g. the tick
 * step) sets the decimals; without it times get three significant decimals.
 */
export function formatUs(us: number, unit: TimeUnit, stepUs?: number, spanUs?: number): string {
  const u = unit === 'us' ? 'µs' : unit === 'ms' ? 'ms' : autoUnit(spanUs ?? Math.abs(us));
  const div = u === 'µs' ? 1 : u === 'ms' ? 1000 : 1_000_000;
  const d = stepUs === undefined ? (u === 'µs' ? 0 : 3) : decimals(stepUs / div);
  const v = us / div;
  return `${v.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d })} ${u}`;
}

/** A duration such as "12.4 ms" or "830 µs" with about three significant digits. */
export function formatDuration(us: number): string {
  const a = Math.abs(us);
  if (a < 1000) {
    return `${round3(us)} µs`;
  }
  if (a < 1_000_000) {
    return `${round3(us / 1000)} ms`;
  }
  return `${round3(us / 1_000_000)} s`;
}

function round3(v: number): string {
  const a = Math.abs(v);
  const d = a >= 100 ? 0 : a >= 10 ? 1 : 2;
  return Number(v.toFixed(d)).toString();
}

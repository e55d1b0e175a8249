import { WindowUs } from '../model/trace';
import { TimeUnit } from '../replay/scale';

/**
 * Time-axis labels. The unit follows the size of the times the axis shows,
 * not the width of the window: zoomed to a few µs around 110 ms the labels
 * read "110.001 ms", never "110,001 µs". The decimals follow the tick step,
 * so neighbouring ticks always read apart.
 */

export type AxisUnit = 'µs' | 'ms' | 's';

const DIV: Record<AxisUnit, number> = { µs: 1, ms: 1000, s: 1_000_000 };

/** The unit of an axis over `w`: µs while every time is under 10 ms, ms under 100 s, else s; a chosen unit wins. */
export function axisUnit(w: WindowUs, unit: TimeUnit = 'auto'): AxisUnit {
  if (unit === 'us') {
    return 'µs';
  }
  if (unit === 'ms') {
    return 'ms';
  }
  const m = Math.max(Math.abs(w.fromUs), Math.abs(w.toUs));
  if (m < 10_000) {
    return 'µs';
  }
  return m < 100_000_000 ? 'ms' : 's';
}

/** Decimals that tell ticks `stepUs` apart in `unit` (0–6). */
export function axisDecimals(stepUs: number, unit: AxisUnit): number {
  const step = stepUs / DIV[unit];
  if (!(step > 0) || step >= 1) {
    return 0;
  }
  return Math.min(6, Math.ceil(-Math.log10(step) - 1e-9));
}

/** One tick's label: "110.25 ms", "1,500 µs", "2.5 s". */
export function formatAxis(us: number, unit: AxisUnit, stepUs: number): string {
  const d = axisDecimals(stepUs, unit);
  const v = us / DIV[unit];
  const text = v.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
  return `${text === '-0' ? '0' : text} ${unit}`;
}

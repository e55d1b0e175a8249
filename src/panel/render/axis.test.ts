import { axisDecimals, axisUnit, formatAxis } from './axis';
import { ticks } from '../replay/scale';

describe('axis units', () => {
  it('switches µs / ms / s by the size of the times shown, not the zoom', () => {
    expect(axisUnit({ fromUs: 0, toUs: 900 })).toBe('µs');
    expect(axisUnit({ fromUs: 108_000, toUs: 112_000 })).toBe('ms');
    expect(axisUnit({ fromUs: 110_000, toUs: 110_010 })).toBe('ms');
    expect(axisUnit({ fromUs: 0, toUs: 250_000_000 })).toBe('s');
    expect(axisUnit({ fromUs: 108_000, toUs: 112_000 }, 'us')).toBe('µs');
  });

  it('never labels a zoomed axis in hundreds of thousands of µs', () => {
    for (const [from, to, width] of [
      [100_000, 120_000, 800],
      [110_000, 110_050, 800],
      [1_999_000, 2_001_000, 1200],
      [45_000_000, 45_000_100, 600],
    ]) {
      const w = { fromUs: from, toUs: to };
      const t = ticks(w, width, 90);
      const u = axisUnit(w);
      const labels = t.values.map((v) => formatAxis(v, u, t.step));
      for (const l of labels) {
        expect(l).not.toMatch(/\d{3},\d{3} µs/);
      }
      // neighbouring ticks read apart
      expect(new Set(labels).size).toBe(labels.length);
    }
  });

  it('formats with the decimals the step needs', () => {
    expect(formatAxis(110_000, 'ms', 1000)).toBe('110 ms');
    expect(formatAxis(110_250, 'ms', 50)).toBe('110.25 ms');
    expect(formatAxis(110_001, 'ms', 1)).toBe('110.001 ms');
    expect(formatAxis(1500, 'µs', 100)).toBe('1,500 µs');
    expect(formatAxis(2_500_000, 's', 500_000)).toBe('2.5 s');
    expect(axisDecimals(1, 's')).toBe(6);
    expect(formatAxis(-0.0001, 'ms', 1000)).toBe('0 ms');
  });
});

import { clampWindow, formatDuration, formatUs, pan, reveal, ticks, usOf, windowBetween, xOf, zoomAt } from './scale';

const bounds = { fromUs: 0, toUs: 1000 };

describe('time scale', () => {
  it('maps µs to pixels and back', () => {
    const w = { fromUs: 100, toUs: 300 };
    expect(xOf(w, 400, 200)).toBe(200);
    expect(usOf(w, 400, 200)).toBe(200);
  });

  it('zooms around the pointer, keeping it in place', () => {
    const w = zoomAt(bounds, 0.5, 250, bounds);
    expect(w.toUs - w.fromUs).toBe(500);
    expect(xOf(w, 1000, 250)).toBeCloseTo(xOf(bounds, 1000, 250));
  });

  it('never leaves the trace or goes below the minimum span', () => {
    expect(zoomAt(bounds, 4, 500, bounds)).toEqual(bounds);
    expect(pan({ fromUs: 800, toUs: 900 }, 500, bounds)).toEqual({ fromUs: 900, toUs: 1000 });
    const tiny = zoomAt({ fromUs: 10, toUs: 12 }, 0.01, 11, bounds);
    expect(tiny.toUs - tiny.fromUs).toBeGreaterThanOrEqual(2);
    expect(clampWindow({ fromUs: -50, toUs: 50 }, bounds)).toEqual({ fromUs: 0, toUs: 100 });
    expect(windowBetween(700, 300, bounds)).toEqual({ fromUs: 300, toUs: 700 });
  });

  it('reveals a time outside the window without changing its span', () => {
    expect(reveal({ fromUs: 0, toUs: 100 }, 50, bounds)).toEqual({ fromUs: 0, toUs: 100 });
    const r = reveal({ fromUs: 0, toUs: 100 }, 500, bounds);
    expect(r.toUs - r.fromUs).toBe(100);
    expect(r.fromUs).toBeLessThan(500);
    expect(r.toUs).toBeGreaterThan(500);
  });

  it('puts ticks on 1-2-5 steps at least the minimum distance apart', () => {
    const t = ticks(bounds, 1000, 80);
    expect(t.step).toBe(100);
    expect(t.values[0]).toBe(0);
    expect(ticks({ fromUs: 0, toUs: 7 }, 700, 80).step).toBe(1);
  });

  it('formats times in the chosen unit', () => {
    expect(formatUs(320, 'us')).toBe('320 µs');
    expect(formatUs(12345, 'ms', 100)).toBe('12.3 ms');
    expect(formatUs(1500, 'auto', 10, 5000)).toBe('1,500 µs');
    expect(formatUs(1500, 'auto', 100, 50_000)).toBe('1.5 ms');
    expect(formatDuration(830)).toBe('830 µs');
    expect(formatDuration(12_400)).toBe('12.4 ms');
    expect(formatDuration(2_500_000)).toBe('2.5 s');
  });
});

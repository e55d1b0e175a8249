import { SWEEP_MS, advance, clampSpeed, nextSpeed, playFrom, rate } from './clock';

const w = { fromUs: 1000, toUs: 11_000 };

describe('playback clock', () => {
  it('sweeps the visible window in SWEEP_MS at 1×', () => {
    expect(rate(w, 1) * SWEEP_MS).toBe(10_000);
    let t = w.fromUs;
    let frames = 0;
    for (let ended = false; !ended && frames < 10_000; frames++) {
      ({ playheadUs: t, ended } = advance(t, 16, w, 1));
    }
    expect(frames).toBe(Math.ceil(SWEEP_MS / 16));
    expect(t).toBe(w.toUs);
  });

  it('scales with speed between 0.25× and 20×', () => {
    expect(advance(w.fromUs, 100, w, 20).playheadUs - w.fromUs).toBe(2000);
    expect(advance(w.fromUs, 100, w, 0.25).playheadUs - w.fromUs).toBe(25);
    expect(clampSpeed(100)).toBe(20);
    expect(clampSpeed(0)).toBe(0.25);
  });

  it('moves at most 250 ms worth after a stall', () => {
    expect(advance(w.fromUs, 5000, w, 1).playheadUs - w.fromUs).toBe(250);
  });

  it('restarts from the window start when the playhead is at the end or outside', () => {
    expect(playFrom(w.toUs, w)).toBe(w.fromUs);
    expect(playFrom(0, w)).toBe(w.fromUs);
    expect(playFrom(5000, w)).toBe(5000);
  });

  it('steps through the speed ladder', () => {
    expect(nextSpeed(1, 1)).toBe(2);
    expect(nextSpeed(1, -1)).toBe(0.5);
    expect(nextSpeed(20, 1)).toBe(20);
    expect(nextSpeed(0.25, -1)).toBe(0.25);
  });
});

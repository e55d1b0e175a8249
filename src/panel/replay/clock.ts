import { WindowUs } from '../model/trace';
import { span } from './scale';

/**
 * Playback: the playhead sweeps the visible window in SWEEP_MS of wall time
 * at 1× (as the reference tool does), so a 900 µs trace and a 9 s trace both
 * play at a watchable pace, and zooming in slows the trace clock with it.
 */
export const SWEEP_MS = 10_000;
export const SPEEDS = [0.25, 0.5, 1, 2, 5, 10, 20] as const;
export const MIN_SPEED = 0.25;
export const MAX_SPEED = 20;

export function clampSpeed(s: number): number {
  return Math.min(MAX_SPEED, Math.max(MIN_SPEED, Number.isFinite(s) ? s : 1));
}

/** Trace µs per wall-clock ms for a window and speed. */
export function rate(w: WindowUs, speed: number): number {
  return (span(w) / SWEEP_MS) * clampSpeed(speed);
}

export interface Tick {
  playheadUs: number;
  /** The playhead reached the end of the window and playback stops there. */
  ended: boolean;
}

/** Advances the playhead by dtMs of wall time; a long stall (tab hidden) moves it at most 250 ms worth. */
export function advance(playheadUs: number, dtMs: number, w: WindowUs, speed: number): Tick {
  const step = rate(w, speed) * Math.min(Math.max(dtMs, 0), 250);
  const next = playheadUs + step;
  if (next >= w.toUs) {
    return { playheadUs: w.toUs, ended: true };
  }
  return { playheadUs: next, ended: false };
}

/** Where play starts: from the playhead when it is inside the window and not at its end, else the window's start. */
export function playFrom(playheadUs: number, w: WindowUs): number {
  return playheadUs >= w.fromUs && playheadUs < w.toUs ? playheadUs : w.fromUs;
}

/** The next speed up or down the SPEEDS ladder. */
export function nextSpeed(speed: number, dir: 1 | -1): number {
  const i = SPEEDS.findIndex((s) => s >= speed - 1e-9);
  const at = i < 0 ? SPEEDS.length - 1 : i;
  return SPEEDS[Math.min(SPEEDS.length - 1, Math.max(0, at + dir))];
}

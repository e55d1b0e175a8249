import React, { useCallback, useMemo } from 'react';
import { WindowUs } from '../model/trace';
import { playFrom } from '../replay/clock';
import { zoomAt } from '../replay/scale';
import { ReplayStore } from '../replay/store';

/**
 * The transport the replay and the compare view share: play/pause, zoom
 * around the playhead, reset to the whole trace, and the keys for them.
 */
export interface Transport {
  playPause: () => void;
  /** Scales the window by factor (< 1 zooms in) around the playhead, or the middle when it is off screen. */
  zoom: (factor: number) => void;
  reset: () => void;
}

/** One zoom key press scales the window by this much. */
const ZOOM_STEP = 1.5;

export function useTransport(store: ReplayStore, bounds: WindowUs): Transport {
  const playPause = useCallback(() => {
    const s = store.get();
    store.set(s.playing ? { playing: false } : { playing: true, playheadUs: playFrom(s.playheadUs, s.window) });
  }, [store]);
  const zoom = useCallback(
    (factor: number) => {
      const s = store.get();
      const inside = s.playheadUs >= s.window.fromUs && s.playheadUs <= s.window.toUs;
      const center = inside ? s.playheadUs : (s.window.fromUs + s.window.toUs) / 2;
      store.set({ window: zoomAt(s.window, factor, center, bounds) });
    },
    [store, bounds]
  );
  const reset = useCallback(() => store.set({ window: { ...bounds } }), [store, bounds]);
  return useMemo(() => ({ playPause, zoom, reset }), [playPause, zoom, reset]);
}

/** What a key does, by KeyboardEvent.key. */
export type KeyMap = Record<string, () => void>;

/** The keys both views answer: space plays or pauses, arrows step, plus and minus zoom, Home and End jump. */
export function transportKeys(store: ReplayStore, t: Transport, step: (dir: 1 | -1) => void): KeyMap {
  return {
    ' ': t.playPause,
    ArrowRight: () => step(1),
    ArrowLeft: () => step(-1),
    '+': () => t.zoom(1 / ZOOM_STEP),
    '=': () => t.zoom(1 / ZOOM_STEP),
    '-': () => t.zoom(ZOOM_STEP),
    _: () => t.zoom(ZOOM_STEP),
    Home: () => store.set({ playheadUs: store.get().window.fromUs }),
    End: () => store.set({ playheadUs: store.get().window.toUs }),
  };
}

/** Runs the key's action, unless the key is typed into a form control; a handled key goes no further. */
export function handleKey(e: React.KeyboardEvent, keys: KeyMap): void {
  const fn = keys[e.key];
  if (!fn || (e.target as HTMLElement).closest('input, textarea, select, [role="combobox"]')) {
    return;
  }
  fn();
  e.preventDefault();
  e.stopPropagation();
}

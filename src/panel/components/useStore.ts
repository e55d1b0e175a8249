import { useCallback, useSyncExternalStore } from 'react';
import { ReplayState, ReplayStore } from '../replay/store';
import { throttled } from '../replay/throttle';

/** Subscribes a component to part of the replay state; it re-renders only when that part changes. */
export function useReplay<T>(store: ReplayStore, select: (s: ReplayState) => T): T {
  return useSyncExternalStore(store.subscribe, () => select(store.get()));
}

/**
 * useReplay for a part that changes every animation frame during playback
 * (the playhead) where showing it that often buys nothing, such as an
 * aria-valuetext: React hears of changes at most once per intervalMs (the
 * first at once, the last always), and any render reads the current value.
 */
export function useThrottledReplay<T>(store: ReplayStore, select: (s: ReplayState) => T, intervalMs: number): T {
  const subscribe = useCallback(
    (onChange: () => void) => {
      const t = throttled(onChange, intervalMs);
      const unsubscribe = store.subscribe(t.call);
      return () => {
        unsubscribe();
        t.cancel();
      };
    },
    [store, intervalMs]
  );
  return useSyncExternalStore(subscribe, () => select(store.get()));
}

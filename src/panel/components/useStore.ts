import { useSyncExternalStore } from 'react';
import { ReplayState, ReplayStore } from '../replay/store';

/** Subscribes a component to part of the replay state; it re-renders only when that part changes. */
export function useReplay<T>(store: ReplayStore, select: (s: ReplayState) => T): T {
  return useSyncExternalStore(store.subscribe, () => select(store.get()));
}

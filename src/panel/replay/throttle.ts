/**
 * Calls a listener at most once per interval: the first call at once, later
 * ones folded into one trailing call at the end of the interval, so the last
 * change is never lost. For React views of values that move every animation
 * frame (the playhead) but that nobody reads sixty times a second.
 */
export function throttled(listener: () => void, intervalMs: number): { call: () => void; cancel: () => void } {
  let last = -Infinity;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const fire = () => {
    timer = null;
    last = Date.now();
    listener();
  };
  return {
    call: () => {
      if (timer !== null) {
        return;
      }
      const wait = last + intervalMs - Date.now();
      if (wait <= 0) {
        fire();
      } else {
        timer = setTimeout(fire, wait);
      }
    },
    cancel: () => {
      if (timer !== null) {
        clearTimeout(timer);
        timer = null;
      }
    },
  };
}

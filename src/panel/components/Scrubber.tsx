import React, { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { css } from '@emotion/css';
import { useStyles2 } from '@grafana/ui';
import { EventLaneName } from '../model/lanes';
import { LaneData, ReplayTrace, WindowUs } from '../model/trace';
import { Pyramid, columnsFromPyramid, columnsFromEntries } from '../replay/density';
import { TimeUnit, clampWindow, formatUs, usOf, xOf } from '../replay/scale';
import { ReplayStore } from '../replay/store';
import { Palette, withAlpha } from '../render/palette';
import { CanvasPainter } from './canvas';
import { useThrottledReplay } from './useStore';

/**
 * How often the slider's aria-valuenow and aria-valuetext follow a moving
 * playhead: during playback it moves every animation frame, and a screen
 * reader gains nothing from sixty announcements a second, so the slider
 * re-renders at most four times a second (a step or a seek shows at once;
 * the last position always shows). The canvas itself is painted every frame.
 */
export const ARIA_INTERVAL_MS = 250;

interface Props {
  trace: ReplayTrace;
  store: ReplayStore;
  width: number;
  height: number;
  lanes: EventLaneName[];
  pyramid: (lane: LaneData) => Pyramid | null;
  palette: Palette;
  unit: TimeUnit;
  bounds: WindowUs;
}

interface Paint {
  width: number;
  height: number;
  store: ReplayStore;
  palette: Palette;
  bounds: WindowUs;
  density: { total: Float32Array; max: number };
}

function paint(ctx: CanvasRenderingContext2D, p: Paint): void {
  const { width, height, palette, bounds } = p;
  const st = p.store.get();
  ctx.clearRect(0, 0, width, height);
  ctx.fillStyle = palette.laneBackgroundAlt;
  ctx.fillRect(0, 0, width, height);
  ctx.fillStyle = withAlpha(palette.lane.read, 0.8);
  const { total, max } = p.density;
  for (let x = 0; x < total.length; x++) {
    if (total[x] > 0) {
      const h = Math.max(1, (height - 2) * Math.sqrt(total[x] / max));
      ctx.fillRect(x, height - 1 - h, 1, h);
    }
  }
  const x0 = xOf(bounds, width, st.window.fromUs);
  const x1 = xOf(bounds, width, st.window.toUs);
  ctx.fillStyle = palette.dragFill;
  ctx.fillRect(x0, 0, Math.max(2, x1 - x0), height);
  ctx.strokeStyle = palette.selection;
  ctx.strokeRect(x0 + 0.5, 0.5, Math.max(2, x1 - x0 - 1), height - 1);
  const px = xOf(bounds, width, st.playheadUs);
  ctx.fillStyle = palette.playhead;
  ctx.fillRect(Math.round(px) - 1, 0, 2, height);
}

/**
 * The scrubber: the whole trace as one density strip with the visible
 * window and the playhead. Click or drag to move the playhead (the window
 * follows when it leaves it); shift-drag the window box to move the window.
 */
export function Scrubber({ trace, store, width, height, lanes, pyramid, palette, unit, bounds }: Props) {
  const ref = useRef<HTMLCanvasElement>(null);
  const styles = useStyles2(getStyles);
  const [painter] = useState(() => new CanvasPainter<Paint>(paint));
  const playheadUs = useThrottledReplay(store, (s) => s.playheadUs, ARIA_INTERVAL_MS);
  const [drag, setDrag] = useState<{ mode: 'seek' | 'move'; x0: number; w0: WindowUs } | null>(null);

  // density of every shown lane over the whole trace, once per size
  const density = useMemo(() => {
    const total = new Float32Array(Math.max(1, Math.floor(width)));
    for (const l of lanes) {
      const lane = trace.lanes[l];
      if (!lane || lane.n === 0) {
        continue;
      }
      const p = pyramid(lane);
      const c =
        (p ? columnsFromPyramid(p, bounds, total.length) : null) ??
        columnsFromEntries(lane, bounds, total.length, 0, lane.n);
      c.count.forEach((v, x) => (total[x] += v));
    }
    let max = 0;
    total.forEach((v) => (max = Math.max(max, v)));
    return { total, max };
  }, [trace, lanes, pyramid, width, bounds]);

  useLayoutEffect(() => {
    painter.update(ref.current, { width, height, store, palette, bounds, density });
  }, [painter, width, height, store, palette, bounds, density]);
  useEffect(() => store.subscribe(painter.request), [store, painter]);
  useEffect(() => () => painter.dispose(), [painter]);

  const seek = (x: number) => {
    const us = Math.min(bounds.toUs, Math.max(bounds.fromUs, usOf(bounds, width, x)));
    const w = store.get().window;
    const s = w.toUs - w.fromUs;
    const window = us < w.fromUs || us > w.toUs ? clampWindow({ fromUs: us - s / 2, toUs: us + s / 2 }, bounds) : w;
    store.set({ playheadUs: us, window });
  };

  const pos = (e: React.PointerEvent) => e.clientX - (e.currentTarget as HTMLElement).getBoundingClientRect().left;

  return (
    <canvas
      ref={ref}
      className={styles.canvas}
      data-testid="qr-scrubber"
      role="slider"
      tabIndex={-1}
      aria-label="Playhead over the whole trace"
      aria-valuemin={bounds.fromUs}
      aria-valuemax={bounds.toUs}
      aria-valuenow={Math.round(playheadUs)}
      aria-valuetext={formatUs(playheadUs, unit)}
      onPointerDown={(e) => {
        const x = pos(e);
        const w = store.get().window;
        const inside = x >= xOf(bounds, width, w.fromUs) && x <= xOf(bounds, width, w.toUs);
        (e.currentTarget as HTMLElement).setPointerCapture?.(e.pointerId);
        const mode = inside && e.shiftKey ? 'move' : 'seek';
        setDrag({ mode, x0: x, w0: w });
        if (mode === 'seek') {
          seek(x);
        }
      }}
      onPointerMove={(e) => {
        if (!drag) {
          return;
        }
        const x = pos(e);
        if (drag.mode === 'seek') {
          seek(x);
        } else {
          const dUs = ((x - drag.x0) / width) * (bounds.toUs - bounds.fromUs);
          store.set({ window: clampWindow({ fromUs: drag.w0.fromUs + dUs, toUs: drag.w0.toUs + dUs }, bounds) });
        }
      }}
      onPointerUp={() => setDrag(null)}
    />
  );
}

const getStyles = () => ({
  canvas: css({ display: 'block', cursor: 'pointer', touchAction: 'none' }),
});

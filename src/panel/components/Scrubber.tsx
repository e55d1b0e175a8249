import React, { useEffect, useMemo, useRef } from 'react';
import { css } from '@emotion/css';
import { EventLaneName } from '../model/lanes';
import { ReplayTrace, WindowUs } from '../model/trace';
import { Pyramid, columnsFromPyramid } from '../replay/density';
import { TimeUnit, clampWindow, formatUs, usOf, xOf } from '../replay/scale';
import { ReplayStore } from '../replay/store';
import { Palette, withAlpha } from '../render/palette';
import { FrameScheduler, prepareCanvas } from './canvas';

interface Props {
  trace: ReplayTrace;
  store: ReplayStore;
  width: number;
  height: number;
  lanes: EventLaneName[];
  pyramid: (lane: NonNullable<ReplayTrace['lanes'][EventLaneName]>) => Pyramid | null;
  palette: Palette;
  unit: TimeUnit;
  bounds: WindowUs;
}

/**
 * The scrubber: the whole trace as one density strip with the visible
 * window and the playhead. Click or drag to move the playhead (the window
 * follows); drag inside the window box to move the window.
 */
export function Scrubber({ trace, store, width, height, lanes, pyramid, palette, unit, bounds }: Props) {
  const ref = useRef<HTMLCanvasElement>(null);
  const drag = useRef<{ mode: 'seek' | 'move'; x0: number; w0: WindowUs } | null>(null);
  const styles = useMemo(getStyles, []);

  // density of every shown lane over the whole trace, computed once per size
  const density = useMemo(() => {
    const total = new Float32Array(Math.max(1, Math.floor(width)));
    for (const l of lanes) {
      const lane = trace.lanes[l];
      const p = lane ? pyramid(lane) : null;
      const c = p ? columnsFromPyramid(p, bounds, total.length) : null;
      if (c) {
        c.count.forEach((v, x) => (total[x] += v));
      }
    }
    let max = 0;
    total.forEach((v) => (max = Math.max(max, v)));
    return { total, max };
  }, [trace, lanes, pyramid, width, bounds]);

  const scheduler = useMemo(
    () =>
      new FrameScheduler(() => {
        const canvas = ref.current;
        if (!canvas) {
          return;
        }
        const ctx = prepareCanvas(canvas, width, height);
        if (!ctx) {
          return;
        }
        const st = store.get();
        ctx.clearRect(0, 0, width, height);
        ctx.fillStyle = palette.laneBackgroundAlt;
        ctx.fillRect(0, 0, width, height);
        ctx.fillStyle = withAlpha(palette.lane.read, 0.8);
        const { total, max } = density;
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
      }),
    [store, width, height, palette, density, bounds]
  );

  useEffect(() => {
    scheduler.request();
    const unsub = store.subscribe(() => scheduler.request());
    return () => {
      unsub();
      scheduler.cancel();
    };
  }, [store, scheduler]);

  const seek = (x: number) => {
    const us = Math.min(bounds.toUs, Math.max(bounds.fromUs, usOf(bounds, width, x)));
    const w = store.get().window;
    const s = w.toUs - w.fromUs;
    const window = us < w.fromUs || us > w.toUs ? clampWindow({ fromUs: us - s / 2, toUs: us + s / 2 }, bounds) : w;
    store.set({ playheadUs: us, window });
  };

  const pos = (e: React.PointerEvent) => e.clientX - (e.currentTarget as HTMLElement).getBoundingClientRect().left;

  const st = store.get();
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
      aria-valuenow={st.playheadUs}
      aria-valuetext={formatUs(st.playheadUs, unit)}
      onPointerDown={(e) => {
        const x = pos(e);
        const w = store.get().window;
        const inside = x >= xOf(bounds, width, w.fromUs) && x <= xOf(bounds, width, w.toUs);
        const wide = xOf(bounds, width, w.toUs) - xOf(bounds, width, w.fromUs) > 12;
        (e.currentTarget as HTMLElement).setPointerCapture?.(e.pointerId);
        drag.current = { mode: inside && wide && e.shiftKey ? 'move' : 'seek', x0: x, w0: w };
        if (drag.current.mode === 'seek') {
          seek(x);
        }
      }}
      onPointerMove={(e) => {
        const d = drag.current;
        if (!d) {
          return;
        }
        const x = pos(e);
        if (d.mode === 'seek') {
          seek(x);
        } else {
          const dUs = ((x - d.x0) / width) * (bounds.toUs - bounds.fromUs);
          store.set({ window: clampWindow({ fromUs: d.w0.fromUs + dUs, toUs: d.w0.toUs + dUs }, bounds) });
        }
      }}
      onPointerUp={() => (drag.current = null)}
    />
  );
}

const getStyles = () => ({
  canvas: css({ display: 'block', cursor: 'pointer', touchAction: 'none' }),
});

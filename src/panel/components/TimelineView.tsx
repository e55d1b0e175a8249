import React, { useEffect, useMemo, useRef, useState } from 'react';
import { css } from '@emotion/css';
import { useStyles2 } from '@grafana/ui';
import { EventLaneName, LaneName } from '../model/lanes';
import { LaneData, ReplayTrace, WindowUs } from '../model/trace';
import { Pyramid } from '../replay/density';
import { Description, describeEntry, describeOperator } from '../replay/describe';
import { hitEntry } from '../replay/hit';
import { TimeUnit, pan, usOf, windowBetween, zoomAt } from '../replay/scale';
import { ReplayStore } from '../replay/store';
import { DrawStats, recordFrame } from '../replay/debug';
import { layoutTimeline, rowAt } from '../render/layout';
import { Palette } from '../render/palette';
import { ColorBy, drawBase, drawOverlay } from '../render/timeline';
import { FrameScheduler, prepareCanvas } from './canvas';
import { Tooltip } from './Tooltip';

export interface TimelineViewProps {
  trace: ReplayTrace;
  store: ReplayStore;
  width: number;
  height: number;
  shown: LaneName[];
  colorBy: ColorBy;
  unit: TimeUnit;
  palette: Palette;
  /** The lanes to draw for a window: zoomed-in detail where it has arrived, else the base frames. */
  lanesFor: (w: WindowUs) => Partial<Record<EventLaneName, LaneData>>;
  pyramid: (lane: LaneData) => Pyramid | null;
  /** Changes when new detail arrives, so the base layer redraws. */
  detailVersion: number;
  stats: DrawStats;
  bounds: WindowUs;
}

const DRAG_MIN_PX = 4;
const WHEEL_STEP = 1.15;

interface Tip {
  x: number;
  y: number;
  d: Description;
}

/** The lanes on one time axis: a base canvas and an overlay canvas for the playhead. */
export function TimelineView(props: TimelineViewProps) {
  const { trace, store, width, height, shown, palette, stats, bounds } = props;
  const styles = useStyles2(getStyles);
  const baseRef = useRef<HTMLCanvasElement>(null);
  const overlayRef = useRef<HTMLCanvasElement>(null);
  const layout = useMemo(() => layoutTimeline(width, height, shown, trace.operators), [width, height, shown, trace]);
  const [tip, setTip] = useState<Tip | null>(null);
  const pointer = useRef<{ hover: { x: number; y: number } | null; drag: { x0: number; x1: number; pan: boolean; w0: WindowUs } | null }>({
    hover: null,
    drag: null,
  });
  const propsRef = useRef(props);
  propsRef.current = props;
  const layoutRef = useRef(layout);
  layoutRef.current = layout;

  const schedulers = useMemo(() => {
    const base = new FrameScheduler(() => {
      const canvas = baseRef.current;
      const p = propsRef.current;
      if (!canvas) {
        return;
      }
      const ctx = prepareCanvas(canvas, p.width, p.height);
      if (!ctx) {
        return;
      }
      const st = p.store.get();
      const t0 = performance.now();
      const laneStats = drawBase(ctx, {
        layout: layoutRef.current,
        window: st.window,
        trace: p.trace,
        lanes: p.lanesFor(st.window),
        pyramid: p.pyramid,
        palette: p.palette,
        colorBy: p.colorBy,
        filterNode: st.filterNode,
        selectedNode: st.selectedNode,
        unit: p.unit,
      });
      p.stats.baseDraws++;
      p.stats.lastBaseMs = performance.now() - t0;
      p.stats.lanes = laneStats;
    });
    const overlay = new FrameScheduler(() => {
      const canvas = overlayRef.current;
      const p = propsRef.current;
      if (!canvas) {
        return;
      }
      const t0 = performance.now();
      const ctx = prepareCanvas(canvas, p.width, p.height);
      if (!ctx) {
        return;
      }
      const st = p.store.get();
      drawOverlay(ctx, {
        layout: layoutRef.current,
        window: st.window,
        trace: p.trace,
        palette: p.palette,
        playheadUs: st.playheadUs,
        unit: p.unit,
        selected: st.selected,
        selectedNode: st.selectedNode,
        hover: pointer.current.hover,
        drag: pointer.current.drag && !pointer.current.drag.pan ? pointer.current.drag : null,
      });
      recordFrame(p.stats, performance.now() - t0);
    });
    return { base, overlay };
  }, []);

  // redraw the base on data, size, option and window/filter changes; the overlay on every change
  useEffect(() => {
    schedulers.base.request();
    schedulers.overlay.request();
  }, [schedulers, layout, props.detailVersion, props.colorBy, props.unit, palette, trace, props.lanesFor]);

  useEffect(() => {
    let last = store.get();
    const unsub = store.subscribe(() => {
      const s = store.get();
      if (s.window !== last.window || s.filterNode !== last.filterNode || s.selectedNode !== last.selectedNode) {
        schedulers.base.request();
      }
      schedulers.overlay.request();
      last = s;
    });
    return () => {
      unsub();
      schedulers.base.cancel();
      schedulers.overlay.cancel();
    };
  }, [store, schedulers]);

  // wheel: zoom at the pointer (pan with shift or a horizontal wheel); not passive, so the page does not scroll
  useEffect(() => {
    const el = overlayRef.current;
    if (!el) {
      return;
    }
    const onWheel = (e: WheelEvent) => {
      const L = layoutRef.current;
      const rect = el.getBoundingClientRect();
      const x = e.clientX - rect.left - L.plotX;
      const w = store.get().window;
      e.preventDefault();
      if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
        const d = e.shiftKey ? e.deltaY || e.deltaX : e.deltaX;
        store.set({ window: pan(w, (d / L.plotW) * (w.toUs - w.fromUs), bounds) });
        return;
      }
      const factor = Math.pow(WHEEL_STEP, Math.max(-5, Math.min(5, e.deltaY / 100)));
      store.set({ window: zoomAt(w, factor, usOf(w, L.plotW, x), bounds) });
    };
    el.addEventListener('wheel', onWheel, { passive: false });
    return () => el.removeEventListener('wheel', onWheel);
  }, [store, bounds]);

  const local = (e: React.PointerEvent) => {
    const rect = (e.currentTarget as HTMLElement).getBoundingClientRect();
    return { x: e.clientX - rect.left, y: e.clientY - rect.top };
  };

  const hitAt = (x: number, y: number) => {
    const L = layoutRef.current;
    const row = rowAt(L, y);
    const st = store.get();
    if (!row || x < L.plotX) {
      return row?.kind === 'plan' ? { kind: 'plan' as const, nodeId: row.nodeId } : null;
    }
    if (row.kind === 'plan') {
      return { kind: 'plan' as const, nodeId: row.nodeId };
    }
    const lanes = propsRef.current.lanesFor(st.window);
    const lane = lanes[row.name] ?? trace.lanes[row.name];
    if (!lane) {
      return null;
    }
    const i = hitEntry(lane, st.window, L.plotW, x - L.plotX, 4, st.filterNode);
    return i < 0 ? null : { kind: 'entry' as const, lane, index: i, detail: lane !== trace.lanes[row.name] };
  };

  const onPointerDown = (e: React.PointerEvent) => {
    if (e.button !== 0) {
      return;
    }
    const { x, y } = local(e);
    const L = layoutRef.current;
    (e.currentTarget as HTMLElement).setPointerCapture?.(e.pointerId);
    pointer.current.drag = { x0: x, x1: x, pan: e.shiftKey || y < L.axisH, w0: store.get().window };
  };

  const onPointerMove = (e: React.PointerEvent) => {
    const { x, y } = local(e);
    const L = layoutRef.current;
    const drag = pointer.current.drag;
    pointer.current.hover = { x, y };
    if (drag) {
      drag.x1 = x;
      if (drag.pan) {
        const dUs = ((drag.x0 - x) / L.plotW) * (drag.w0.toUs - drag.w0.fromUs);
        store.set({ window: pan(drag.w0, dUs, bounds) });
      }
      setTip(null);
    } else {
      const h = hitAt(x, y);
      if (!h) {
        setTip(null);
      } else if (h.kind === 'plan') {
        const op = trace.byNode.get(h.nodeId);
        setTip(op ? { x, y, d: describeOperator(op, props.unit) } : null);
      } else {
        setTip({ x, y, d: describeEntry(trace, h.lane, h.index, props.unit) });
      }
    }
    schedulers.overlay.request();
  };

  const onPointerUp = (e: React.PointerEvent) => {
    const drag = pointer.current.drag;
    pointer.current.drag = null;
    if (!drag) {
      return;
    }
    const { x, y } = local(e);
    const L = layoutRef.current;
    const moved = Math.abs(x - drag.x0) >= DRAG_MIN_PX;
    const w = store.get().window;
    if (drag.pan) {
      schedulers.overlay.request();
      return;
    }
    if (moved) {
      const a = usOf(w, L.plotW, drag.x0 - L.plotX);
      const b = usOf(w, L.plotW, x - L.plotX);
      store.set({ window: windowBetween(a, b, bounds) });
      schedulers.overlay.request();
      return;
    }
    click(x, y);
  };

  const click = (x: number, y: number) => {
    const L = layoutRef.current;
    const h = hitAt(x, y);
    const st = store.get();
    if (h?.kind === 'plan') {
      const next = st.filterNode === h.nodeId ? null : h.nodeId;
      store.set({ filterNode: next, selectedNode: next });
      return;
    }
    if (h?.kind === 'entry') {
      const node = h.lane.node[h.index];
      store.set({
        selected: {
          lane: h.lane.name,
          index: h.index,
          detail: h.detail,
          row: h.lane.row[h.index],
          nodeId: node < 0 ? null : node,
          startUs: h.lane.start[h.index],
          endUs: h.lane.end[h.index],
        },
        selectedNode: node < 0 ? null : node,
        playheadUs: h.lane.first[h.index],
        playing: false,
      });
      return;
    }
    if (x >= L.plotX) {
      store.set({ playheadUs: usOf(st.window, L.plotW, x - L.plotX) });
    }
  };

  const onPointerLeave = () => {
    pointer.current.hover = null;
    setTip(null);
    schedulers.overlay.request();
  };

  const onDoubleClick = () => {
    store.set({ window: { ...bounds } });
  };

  return (
    <div className={styles.wrap} style={{ width, height }} data-testid="qr-timeline">
      <canvas ref={baseRef} className={styles.canvas} data-testid="qr-timeline-base" />
      <canvas
        ref={overlayRef}
        className={styles.canvas}
        data-testid="qr-timeline-overlay"
        aria-label="Timeline: drag to zoom into a range, shift-drag or drag the axis to pan, wheel to zoom, click an operator to filter, click an event to select it"
        role="img"
        onPointerDown={onPointerDown}
        onPointerMove={onPointerMove}
        onPointerUp={onPointerUp}
        onPointerLeave={onPointerLeave}
        onDoubleClick={onDoubleClick}
      />
      {tip && <Tooltip x={tip.x} y={tip.y} width={width} height={height} description={tip.d} />}
    </div>
  );
}

const getStyles = () => ({
  wrap: css({ position: 'relative', overflow: 'hidden', flex: 'none' }),
  canvas: css({ position: 'absolute', left: 0, top: 0, touchAction: 'none', cursor: 'crosshair' }),
});

import React, { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { css } from '@emotion/css';
import { useStyles2 } from '@grafana/ui';
import { EventLaneName, LaneName } from '../model/lanes';
import { LaneData, ReplayTrace, WindowUs } from '../model/trace';
import { Pyramid } from '../replay/density';
import { Description, describeEntry, describeEscalation, describeOperator } from '../replay/describe';
import { escalationAt } from '../model/escalations';
import { hitEntry } from '../replay/hit';
import { activeSignature } from '../replay/phases';
import { TimeUnit, pan, usOf, windowBetween, xOf, zoomAt } from '../replay/scale';
import { ReplayStore } from '../replay/store';
import { DrawStats, recordFrame } from '../replay/debug';
import { TimelineLayout, layoutTimeline, rowAt } from '../render/layout';
import { Palette } from '../render/palette';
import { ColorBy, ESCALATION_MARK_PX, drawBase, drawOverlay } from '../render/timeline';
import { CanvasPainter } from './canvas';
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

/** Pointer state of the timeline, changed by the handlers and read by the overlay paint. */
class PointerState {
  hover: { x: number; y: number } | null = null;
  drag: { x0: number; x1: number; pan: boolean; w0: WindowUs } | null = null;
  setHover(h: { x: number; y: number } | null) {
    this.hover = h;
  }
  startDrag(x: number, pan: boolean, w0: WindowUs) {
    this.drag = { x0: x, x1: x, pan, w0 };
  }
  moveDrag(x: number) {
    if (this.drag) {
      this.drag.x1 = x;
    }
  }
  endDrag() {
    const d = this.drag;
    this.drag = null;
    return d;
  }
}

interface BasePaint {
  width: number;
  height: number;
  layout: TimelineLayout;
  store: ReplayStore;
  trace: ReplayTrace;
  lanesFor: (w: WindowUs) => Partial<Record<EventLaneName, LaneData>>;
  pyramid: (lane: LaneData) => Pyramid | null;
  palette: Palette;
  colorBy: ColorBy;
  unit: TimeUnit;
  stats: DrawStats;
}

function paintBase(ctx: CanvasRenderingContext2D, p: BasePaint): void {
  const st = p.store.get();
  const t0 = performance.now();
  const labels = new Map<number, string>();
  p.stats.lanes = drawBase(ctx, {
    layout: p.layout,
    window: st.window,
    trace: p.trace,
    lanes: p.lanesFor(st.window),
    pyramid: p.pyramid,
    palette: p.palette,
    colorBy: p.colorBy,
    filterNode: st.filterNode,
    selectedNode: st.selectedNode,
    unit: p.unit,
    labels,
  });
  p.stats.labels = Object.fromEntries(labels);
  const t1 = performance.now();
  p.stats.baseDraws++;
  p.stats.layout = p.layout;
  p.stats.lastBaseMs = t1 - t0;
  if (p.stats.firstDrawAt === null) {
    p.stats.firstDrawAt = t1;
  }
}

interface OverlayPaint extends BasePaint {
  pointer: PointerState;
}

function paintOverlay(ctx: CanvasRenderingContext2D, p: OverlayPaint): void {
  const st = p.store.get();
  const t0 = performance.now();
  const drag = p.pointer.drag;
  drawOverlay(ctx, {
    layout: p.layout,
    window: st.window,
    trace: p.trace,
    palette: p.palette,
    playheadUs: st.playheadUs,
    unit: p.unit,
    selected: st.selected,
    selectedNode: st.selectedNode,
    hover: p.pointer.hover,
    drag: drag && !drag.pan ? drag : null,
    highlight: st.highlight,
  });
  recordFrame(p.stats, performance.now() - t0);
}

/** The lanes on one time axis: a base canvas and an overlay canvas for the playhead. */
export function TimelineView(props: TimelineViewProps) {
  const { trace, store, width, height, shown, palette, bounds, unit } = props;
  const styles = useStyles2(getStyles);
  const baseRef = useRef<HTMLCanvasElement>(null);
  const overlayRef = useRef<HTMLCanvasElement>(null);
  const layout = useMemo(() => layoutTimeline(width, height, shown, trace.operators), [width, height, shown, trace]);
  const [tip, setTip] = useState<Tip | null>(null);
  const [pointer] = useState(() => new PointerState());
  const [base] = useState(() => new CanvasPainter<BasePaint>(paintBase));
  const [overlay] = useState(() => new CanvasPainter<OverlayPaint>(paintOverlay));

  // hand the painters the latest props after every render, and repaint
  useLayoutEffect(() => {
    const paint: BasePaint = {
      width,
      height,
      layout,
      store,
      trace,
      lanesFor: props.lanesFor,
      pyramid: props.pyramid,
      palette,
      colorBy: props.colorBy,
      unit,
      stats: props.stats,
    };
    base.update(baseRef.current, paint);
    overlay.update(overlayRef.current, { ...paint, pointer });
  }, [
    base,
    overlay,
    pointer,
    width,
    height,
    layout,
    store,
    trace,
    props.lanesFor,
    props.pyramid,
    palette,
    props.colorBy,
    unit,
    props.stats,
    props.detailVersion,
  ]);

  // the playhead and the dimmed future: moved with a transform, no canvas work
  const playheadRef = useRef<HTMLDivElement>(null);
  const futureRef = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const place = () => {
      const s = store.get();
      const x = xOf(s.window, layout.plotW, s.playheadUs);
      const clamped = Math.max(-2, Math.min(layout.plotW + 2, x));
      if (playheadRef.current) {
        playheadRef.current.style.transform = `translateX(${clamped}px)`;
        playheadRef.current.style.visibility = x < -1 || x > layout.plotW + 1 ? 'hidden' : 'visible';
      }
      if (futureRef.current) {
        futureRef.current.style.transform = `translateX(${Math.max(0, clamped)}px)`;
      }
    };
    place();
    return store.subscribe(place);
  }, [store, layout]);

  // the base repaints when the window, filter or selected operator change; the overlay when
  // what it shows changes (active operators, selection, window)
  useEffect(() => {
    let last = store.get();
    let lastActive = activeSignature(trace.operators, last.playheadUs);
    const unsub = store.subscribe(() => {
      const s = store.get();
      if (s.window !== last.window || s.filterNode !== last.filterNode || s.selectedNode !== last.selectedNode) {
        base.request();
      }
      const active = activeSignature(trace.operators, s.playheadUs);
      if (
        active !== lastActive ||
        s.window !== last.window ||
        s.selected !== last.selected ||
        s.selectedNode !== last.selectedNode ||
        s.highlight !== last.highlight
      ) {
        overlay.request();
      }
      lastActive = active;
      last = s;
    });
    return () => {
      unsub();
    };
  }, [store, base, overlay, trace]);
  useEffect(
    () => () => {
      base.dispose();
      overlay.dispose();
    },
    [base, overlay]
  );

  // wheel: zoom at the pointer (pan with shift or a horizontal wheel); not passive, so the page does not scroll
  useEffect(() => {
    const el = overlayRef.current;
    if (!el) {
      return;
    }
    const onWheel = (e: WheelEvent) => {
      const L = layout;
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
  }, [store, bounds, layout]);

  const local = (e: React.PointerEvent) => {
    const rect = (e.currentTarget as HTMLElement).getBoundingClientRect();
    return { x: e.clientX - rect.left, y: e.clientY - rect.top };
  };

  const hitAt = (x: number, y: number) => {
    const L = layout;
    const row = rowAt(L, y);
    const st = store.get();
    if (!row || x < L.plotX) {
      return row?.kind === 'plan' ? { kind: 'plan' as const, nodeId: row.nodeId } : null;
    }
    if (row.kind === 'plan') {
      return { kind: 'plan' as const, nodeId: row.nodeId };
    }
    if (row.name === 'lock' && trace.escalations.length > 0) {
      const e = escalationAt(trace.escalations, st.window, L.plotW, x - L.plotX, ESCALATION_MARK_PX / 2 + 1);
      if (e >= 0) {
        return { kind: 'escalation' as const, index: e };
      }
    }
    const lanes = props.lanesFor(st.window);
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
    const L = layout;
    (e.currentTarget as HTMLElement).setPointerCapture?.(e.pointerId);
    pointer.startDrag(x, e.shiftKey || y < L.axisH, store.get().window);
  };

  const onPointerMove = (e: React.PointerEvent) => {
    const { x, y } = local(e);
    const L = layout;
    const drag = pointer.drag;
    pointer.setHover({ x, y });
    if (drag) {
      pointer.moveDrag(x);
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
        setTip(op ? { x, y, d: describeOperator(op, unit) } : null);
      } else if (h.kind === 'escalation') {
        setTip({ x, y, d: describeEscalation(trace.escalations[h.index], unit) });
      } else {
        setTip({ x, y, d: describeEntry(trace, h.lane, h.index, unit) });
      }
    }
    overlay.request();
  };

  const onPointerUp = (e: React.PointerEvent) => {
    const drag = pointer.endDrag();
    if (!drag) {
      return;
    }
    const { x, y } = local(e);
    const L = layout;
    const moved = Math.abs(x - drag.x0) >= DRAG_MIN_PX;
    const w = store.get().window;
    if (drag.pan) {
      overlay.request();
      return;
    }
    if (moved) {
      const a = usOf(w, L.plotW, drag.x0 - L.plotX);
      const b = usOf(w, L.plotW, x - L.plotX);
      store.set({ window: windowBetween(a, b, bounds) });
      overlay.request();
      return;
    }
    click(x, y);
  };

  const click = (x: number, y: number) => {
    const L = layout;
    const h = hitAt(x, y);
    const st = store.get();
    if (h?.kind === 'plan') {
      const next = st.filterNode === h.nodeId ? null : h.nodeId;
      store.set({ filterNode: next, selectedNode: next });
      return;
    }
    if (h?.kind === 'escalation') {
      // to the moment of the escalation, with its details beside the pointer
      store.set({ playheadUs: trace.escalations[h.index].tUs, playing: false });
      setTip({ x, y, d: describeEscalation(trace.escalations[h.index], unit) });
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
    pointer.setHover(null);
    setTip(null);
    overlay.request();
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
      <div
        className={styles.plotClip}
        style={{
          left: layout.plotX,
          top: layout.axisH,
          width: layout.plotW,
          height: Math.max(0, height - layout.axisH),
        }}
        aria-hidden
      >
        <div ref={futureRef} className={styles.future} style={{ background: palette.future }} data-testid="qr-future" />
      </div>
      <div
        className={styles.playheadClip}
        style={{ left: layout.plotX - 6, width: layout.plotW + 12, height }}
        aria-hidden
      >
        <div ref={playheadRef} className={styles.playhead} data-testid="qr-playhead-line">
          <div className={styles.playheadLine} style={{ background: palette.playhead }} />
          <div className={styles.playheadHead} style={{ borderTopColor: palette.playhead }} />
        </div>
      </div>
      {tip && <Tooltip x={tip.x} y={tip.y} width={width} height={height} description={tip.d} />}
    </div>
  );
}

const getStyles = () => ({
  wrap: css({ position: 'relative', overflow: 'hidden', flex: 'none' }),
  canvas: css({ position: 'absolute', left: 0, top: 0, touchAction: 'none', cursor: 'crosshair' }),
  plotClip: css({ position: 'absolute', overflow: 'hidden', pointerEvents: 'none' }),
  future: css({ position: 'absolute', left: 0, top: 0, width: '100%', height: '100%', willChange: 'transform' }),
  playheadClip: css({ position: 'absolute', top: 0, overflow: 'hidden', pointerEvents: 'none' }),
  playhead: css({ position: 'absolute', left: 6, top: 0, width: 0, height: '100%', willChange: 'transform' }),
  playheadLine: css({ position: 'absolute', left: -1, top: 0, width: 2, height: '100%' }),
  playheadHead: css({
    position: 'absolute',
    left: -5,
    top: 0,
    width: 0,
    height: 0,
    borderLeft: '5px solid transparent',
    borderRight: '5px solid transparent',
    borderTop: '6px solid',
  }),
});

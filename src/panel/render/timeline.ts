import { EVENT_LANES, EventLaneName, LANE_DEFS } from '../model/lanes';
import { LaneData, Operator, ReplayTrace, WindowUs } from '../model/trace';
import { Columns, LaneDrawing, Pyramid, drawingFor } from '../replay/density';
import { stateAt } from '../replay/phases';
import { TimeUnit, span, ticks, xOf } from '../replay/scale';
import { axisUnit, formatAxis } from './axis';
import { phaseLook } from './legend';
import { Highlight, Selection } from '../replay/store';
import { drawHighlight } from './highlight';
import { PlanRow, TimelineLayout } from './layout';
import { Palette, withAlpha } from './palette';
import { clip, fitLabel, labelCandidates } from './labels';

/**
 * Drawing the timeline on two stacked canvases. The base layer (axis, plan
 * bars, lanes) changes only when the window, data, filter, size or theme
 * change; the overlay (active operators, hover, selection, drag) only when
 * those change. The playhead and the dimming of the future are two DOM
 * elements moved with a CSS transform, so a frame of playback costs the
 * compositor almost nothing whatever the number of events.
 */

export type ColorBy = 'operator' | 'lane';

export interface BaseScene {
  layout: TimelineLayout;
  window: WindowUs;
  trace: ReplayTrace;
  lanes: Partial<Record<EventLaneName, LaneData>>;
  pyramid: (lane: LaneData) => Pyramid | null;
  palette: Palette;
  colorBy: ColorBy;
  filterNode: number | null;
  selectedNode: number | null;
  unit: TimeUnit;
  /** Filled with the label drawn for each operator (the browser checks read what a person reads). */
  labels?: Map<number, string>;
}

export interface LaneStat {
  kind: 'marks' | 'columns' | 'empty' | 'not traced';
  drawn: number;
}

type Ctx = CanvasRenderingContext2D;

const patternCache = new Map<string, CanvasPattern | null>();

/** Diagonal stripes (consume/build), dots (probe) or vertical ticks (re-executed) in a colour, as a fill pattern. */
function pattern(ctx: Ctx, color: string, kind: 'hatch' | 'dots' | 'ticks'): CanvasPattern | string {
  const key = `${kind}:${color}`;
  if (!patternCache.has(key)) {
    let p: CanvasPattern | null = null;
    if (typeof document !== 'undefined') {
      const tile = document.createElement('canvas');
      tile.width = 6;
      tile.height = 6;
      const t = tile.getContext('2d');
      if (t) {
        t.fillStyle = withAlpha(color, 0.25);
        t.fillRect(0, 0, 6, 6);
        t.strokeStyle = color;
        t.fillStyle = color;
        if (kind === 'hatch') {
          t.lineWidth = 1.5;
          t.beginPath();
          t.moveTo(0, 6);
          t.lineTo(6, 0);
          t.moveTo(-1, 1);
          t.lineTo(1, -1);
          t.moveTo(5, 7);
          t.lineTo(7, 5);
          t.stroke();
        } else if (kind === 'ticks') {
          t.fillRect(0, 0, 2, 6);
          t.fillRect(3, 0, 1, 6);
        } else {
          t.fillRect(1, 1, 2, 2);
          t.fillRect(4, 4, 2, 2);
        }
        p = ctx.createPattern(tile, 'repeat');
      }
    }
    patternCache.set(key, p);
  }
  return patternCache.get(key) ?? withAlpha(color, kind === 'hatch' ? 0.45 : 0.7);
}

function font(p: Palette, px: number, weight = 400): string {
  return `${weight} ${px}px ${p.fontFamily}`;
}

export function drawBase(ctx: Ctx, s: BaseScene): Record<string, LaneStat> {
  const { layout: L, palette: p } = s;
  ctx.clearRect(0, 0, L.width, L.height);
  ctx.fillStyle = p.background;
  ctx.fillRect(0, 0, L.width, L.height);
  drawAxis(ctx, s);
  const stats: Record<string, LaneStat> = {};
  if (L.plan) {
    stats.plan = drawPlan(ctx, s);
  }
  L.lanes.forEach((box, i) => {
    ctx.fillStyle = i % 2 === 0 ? p.laneBackgroundAlt : p.laneBackground;
    ctx.fillRect(L.plotX, box.y, L.plotW, box.h);
    stats[box.name] = drawLane(ctx, s, box.name, box.y, box.h);
    drawLaneLabel(ctx, s, box.name, box.y, box.h);
    if (box.name === 'lock' && s.trace.escalations.length > 0) {
      stats.escalations = { kind: 'marks', drawn: drawEscalations(ctx, s, box.y, box.h) };
    }
  });
  // separators
  ctx.fillStyle = p.border;
  ctx.fillRect(L.plotX - 1, L.axisH, 1, L.height - L.axisH);
  return stats;
}

function drawAxis(ctx: Ctx, s: BaseScene): void {
  const { layout: L, palette: p, window: w } = s;
  const t = ticks(w, L.plotW, L.plotW < 400 ? 70 : 90);
  const unit = axisUnit(w, s.unit);
  ctx.font = font(p, 11);
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'left';
  for (const v of t.values) {
    const x = Math.round(L.plotX + xOf(w, L.plotW, v)) + 0.5;
    ctx.fillStyle = p.grid;
    ctx.fillRect(x, L.axisH - 4, 1, L.height - L.axisH + 4);
    ctx.fillStyle = p.textWeak;
    const label = formatAxis(v, unit, t.step);
    if (x + 3 + ctx.measureText(label).width < L.plotX + L.plotW) {
      ctx.fillText(label, x + 3, L.axisH / 2);
    }
  }
  ctx.fillStyle = p.border;
  ctx.fillRect(0, L.axisH - 1, L.width, 1);
  ctx.fillStyle = p.textWeak;
  ctx.textAlign = 'left';
  ctx.fillText(`time (${unit})`, 4, L.axisH / 2);
}

function drawLaneLabel(ctx: Ctx, s: BaseScene, name: EventLaneName, y: number, h: number): void {
  const { layout: L, palette: p } = s;
  const lane = s.trace.lanes[name];
  ctx.fillStyle = lane && !lane.traced ? p.textDisabled : p.text;
  ctx.font = font(p, Math.min(12, Math.max(9, h - 6)), 500);
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'left';
  ctx.fillStyle = lane && !lane.traced ? p.textDisabled : p.lane[name];
  ctx.fillRect(2, y + 2, 3, Math.max(2, h - 4));
  ctx.fillStyle = lane && !lane.traced ? p.textDisabled : p.text;
  const total = lane ? ` ${lane.total.toLocaleString('en-US')}` : '';
  const full = LANE_DEFS[name].label + (L.labelW > 80 ? total : '');
  ctx.fillText(
    clip(full, L.labelW - 10, (t) => ctx.measureText(t).width),
    8,
    y + h / 2
  );
}

/** Width of an escalation mark; the hit test (TimelineView) reaches as far. */
export const ESCALATION_MARK_PX = 9;

/**
 * Each lock escalation as a rule across the Lock lane with a flag on top:
 * the moment many row and page locks became one table lock, drawn over the
 * lane's bars in a colour of its own so it is seen among thousands of locks.
 */
function drawEscalations(ctx: Ctx, s: BaseScene, y: number, h: number): number {
  const { layout: L, palette: p, window: w } = s;
  const flag = Math.min(ESCALATION_MARK_PX, Math.max(4, h - 2));
  let drawn = 0;
  for (const e of s.trace.escalations) {
    if (e.tUs < w.fromUs || e.tUs > w.toUs) {
      continue;
    }
    const x = Math.round(L.plotX + xOf(w, L.plotW, e.tUs));
    ctx.fillStyle = p.escalation;
    ctx.fillRect(x - 1, y + 1, 2, h - 2);
    // the flag: a downward triangle outlined in the text colour, legible on either theme
    ctx.beginPath();
    ctx.moveTo(x - flag / 2, y + 1);
    ctx.lineTo(x + flag / 2, y + 1);
    ctx.lineTo(x, y + 1 + flag);
    ctx.closePath();
    ctx.fill();
    ctx.strokeStyle = p.text;
    ctx.lineWidth = 1;
    ctx.stroke();
    drawn++;
  }
  return drawn;
}

function drawPlan(ctx: Ctx, s: BaseScene): LaneStat {
  const { layout: L, palette: p, window: w } = s;
  const plan = L.plan!;
  let drawn = 0;
  plan.rows.forEach((row, i) => {
    const op = s.trace.byNode.get(row.nodeId);
    if (!op) {
      return;
    }
    const dim = s.filterNode !== null && s.filterNode !== op.nodeId;
    ctx.fillStyle = i % 2 === 0 ? p.laneBackgroundAlt : p.laneBackground;
    ctx.fillRect(L.plotX, row.y, L.plotW, row.h);
    ctx.globalAlpha = dim ? 0.3 : 1;
    drawn += drawOperator(ctx, s, op, row);
    ctx.globalAlpha = 1;
    if (row.h >= 8) {
      ctx.font = font(p, Math.min(11, row.h - 2), s.selectedNode === op.nodeId ? 700 : 400);
      ctx.textBaseline = 'middle';
      ctx.textAlign = 'left';
      ctx.fillStyle = !op.executed || dim ? p.textDisabled : p.text;
      const indent = Math.min(op.depth * 6, 30);
      const label = fitLabel(labelCandidates(op), L.labelW - 8 - indent, (t) => ctx.measureText(t).width);
      s.labels?.set(op.nodeId, label);
      ctx.fillText(label, 6 + indent, row.y + row.h / 2);
    }
  });
  if (plan.rows.length > 0 && plan.rows[0].h < 8) {
    ctx.font = font(p, 11, 500);
    ctx.fillStyle = p.text;
    ctx.textBaseline = 'middle';
    ctx.fillText('Plan', 8, plan.y + Math.min(plan.h / 2, 10));
  }
  ctx.fillStyle = p.border;
  ctx.fillRect(0, plan.y + plan.h - 1, L.width, 1);
  void w;
  return { kind: 'marks', drawn };
}

function drawOperator(ctx: Ctx, s: BaseScene, op: Operator, row: PlanRow): number {
  const { layout: L, palette: p, window: w } = s;
  const color = s.colorBy === 'operator' ? p.operator(op.nodeId) : p.lane.read;
  const x = (us: number) => L.plotX + xOf(w, L.plotW, us);
  const pad = row.h >= 6 ? 1 : 0;
  if (!op.executed) {
    // not executed: a dashed outline over the trace, labelled
    ctx.save();
    ctx.setLineDash([4, 3]);
    ctx.strokeStyle = p.textDisabled;
    const x0 = Math.max(L.plotX, x(s.trace.startUs));
    const x1 = Math.min(L.plotX + L.plotW, x(s.trace.endUs));
    ctx.strokeRect(x0 + 0.5, row.y + pad + 0.5, Math.max(1, x1 - x0 - 1), Math.max(1, row.h - 2 * pad - 1));
    ctx.restore();
    if (row.h >= 9) {
      ctx.fillStyle = p.textDisabled;
      ctx.font = font(p, Math.min(10, row.h - 2));
      ctx.textBaseline = 'middle';
      ctx.fillText(
        op.notExecutedReason ? `not executed: ${op.notExecutedReason}` : 'not executed',
        x0 + 4,
        row.y + row.h / 2
      );
    }
    return 1;
  }
  if (op.endUs < w.fromUs || op.startUs > w.toUs) {
    return 0;
  }
  const x0 = Math.max(L.plotX - 1, x(op.startUs));
  const x1 = Math.min(L.plotX + L.plotW + 1, x(op.endUs));
  const y = row.y + pad;
  const h = Math.max(1, row.h - 2 * pad);
  // the operator's whole span, faint
  ctx.fillStyle = withAlpha(color, 0.18);
  ctx.fillRect(x0, y, Math.max(1, x1 - x0), h);
  let drawn = 1;
  const phases = op.phases.filter((ph) => ph.thread === null);
  if (phases.length === 0 && row.threads.length === 0) {
    // no phases: emitting from first emit to end, consuming before it
    drawPhase(ctx, s, color, op.startUs, op.firstEmitUs, 'consume', y, h);
    drawPhase(ctx, s, color, op.firstEmitUs, op.endUs, 'emit', y, h);
    drawn += 2;
  }
  // with per-thread bars the phases keep the top of the row
  const phaseH = row.threads.length ? Math.max(1, row.threads[0].y - y - 1) : h;
  for (const ph of phases) {
    drawPhase(ctx, s, color, ph.startUs, ph.endUs, ph.kind, y, phaseH);
    drawn++;
  }
  for (const t of row.threads) {
    const bar = op.threads.find((b) => b.thread === t.thread);
    if (bar) {
      drawPhase(ctx, s, withAlpha(color, 0.85), bar.startUs, bar.endUs, 'emit', t.y, Math.max(1, t.h - 0.5));
      drawn++;
    }
  }
  if (s.selectedNode === op.nodeId || s.filterNode === op.nodeId) {
    ctx.strokeStyle = p.selection;
    ctx.lineWidth = 1.5;
    ctx.strokeRect(x0 + 0.5, row.y + 0.5, Math.max(1, x1 - x0 - 1), row.h - 1);
    ctx.lineWidth = 1;
  }
  return drawn;
}

/** The fill of a phase (render/legend.ts names each look): the timeline and its legend paint with it. */
export function phaseFill(ctx: Ctx, color: string, kind: string): CanvasPattern | string {
  const look = phaseLook(kind);
  return look === 'solid'
    ? color
    : pattern(ctx, color, look === 'dotted' ? 'dots' : look === 'ticks' ? 'ticks' : 'hatch');
}

function drawPhase(
  ctx: Ctx,
  s: BaseScene,
  color: string,
  fromUs: number,
  toUs: number,
  kind: string,
  y: number,
  h: number
) {
  const { layout: L, window: w } = s;
  if (toUs < w.fromUs || fromUs > w.toUs || toUs < fromUs) {
    return;
  }
  const x0 = Math.max(L.plotX - 1, L.plotX + xOf(w, L.plotW, fromUs));
  const x1 = Math.min(L.plotX + L.plotW + 1, L.plotX + xOf(w, L.plotW, toUs));
  ctx.fillStyle = phaseFill(ctx, color, kind);
  ctx.fillRect(x0, y, Math.max(1, x1 - x0), h);
}

function laneColor(s: BaseScene, name: EventLaneName, node: number): string {
  return s.colorBy === 'operator' ? s.palette.operator(node) : s.palette.lane[name];
}

function drawLane(ctx: Ctx, s: BaseScene, name: EventLaneName, y: number, h: number): LaneStat {
  const { layout: L, palette: p } = s;
  const lane = s.lanes[name] ?? s.trace.lanes[name];
  if (!lane || !lane.traced) {
    if (h >= 10) {
      ctx.fillStyle = p.textDisabled;
      ctx.font = font(p, Math.min(11, h - 4));
      ctx.textBaseline = 'middle';
      ctx.fillText(lane ? 'not traced (event group off)' : 'not in the frames', L.plotX + 6, y + h / 2);
    }
    return { kind: 'not traced', drawn: 0 };
  }
  if (lane.n === 0) {
    return { kind: 'empty', drawn: 0 };
  }
  const d = drawingFor(lane, s.window, Math.max(1, Math.floor(L.plotW)), s.filterNode, s.pyramid(lane));
  if (d.kind === 'marks') {
    return { kind: 'marks', drawn: drawMarks(ctx, s, lane, d, y, h) };
  }
  return { kind: 'columns', drawn: drawColumns(ctx, s, lane, d.columns, y, h) };
}

function drawMarks(
  ctx: Ctx,
  s: BaseScene,
  lane: LaneData,
  d: Extract<LaneDrawing, { kind: 'marks' }>,
  y: number,
  h: number
): number {
  const { layout: L, window: w } = s;
  const k = L.plotW / span(w);
  const count = d.hi - d.lo;
  const minW = count < L.plotW / 6 ? 3 : count < L.plotW / 2 ? 2 : 1;
  const interval = LANE_DEFS[lane.name].intervals;
  let maxW = 1;
  if (lane.binned) {
    for (let j = d.lo; j < d.hi; j++) {
      maxW = Math.max(maxW, lane.weight[d.only ? d.only[j] : j]);
    }
  }
  let drawn = 0;
  let last = '';
  const pad = h >= 10 ? 2 : 1;
  for (let j = d.lo; j < d.hi; j++) {
    const i = d.only ? d.only[j] : j;
    const st = lane.start[i];
    const en = lane.end[i];
    if (en < w.fromUs || st > w.toUs) {
      continue;
    }
    const color = laneColor(s, lane.name, lane.node[i]);
    if (color !== last) {
      ctx.fillStyle = color;
      last = color;
    }
    const x0 = L.plotX + Math.max(-2, (st - w.fromUs) * k);
    const x1 = L.plotX + Math.min(L.plotW + 2, (en - w.fromUs) * k);
    let bh = h - 2 * pad;
    if (lane.binned) {
      bh = Math.max(2, bh * Math.sqrt(lane.weight[i] / maxW));
    } else if (interval && x1 - x0 > minW) {
      // intervals: a thinner bar so the start tick stands out
      bh = Math.max(2, bh * 0.6);
    }
    // an ambiguous match (several candidate operators) is drawn faint
    const faint = lane.ambiguous !== null && lane.ambiguous[i] === 1;
    if (faint) {
      ctx.globalAlpha = 0.45;
    }
    ctx.fillRect(x0, y + h - pad - bh, Math.max(minW, x1 - x0), bh);
    if (interval && !lane.binned && x1 - x0 > minW) {
      ctx.fillRect(x0, y + pad, Math.min(minW, 2), h - 2 * pad);
    }
    // an open interval (no end captured) ends in an arrow instead of a stop
    if (lane.open !== null && lane.open[i] === 1 && x1 <= L.plotX + L.plotW + 1) {
      const my = y + h - pad - bh / 2;
      ctx.beginPath();
      ctx.moveTo(x1, my - 4);
      ctx.lineTo(x1 + 5, my);
      ctx.lineTo(x1, my + 4);
      ctx.closePath();
      ctx.fill();
    }
    if (faint) {
      ctx.globalAlpha = 1;
    }
    drawn++;
  }
  return drawn;
}

function drawColumns(ctx: Ctx, s: BaseScene, lane: LaneData, c: Columns, y: number, h: number): number {
  const { layout: L } = s;
  const pad = h >= 10 ? 2 : 1;
  const inner = h - 2 * pad;
  let drawn = 0;
  if (c.maxCover > 0) {
    ctx.fillStyle = withAlpha(s.palette.lane[lane.name], 0.35);
    for (let x = 0; x < c.width; x++) {
      if (c.cover[x] > 0) {
        const ch = Math.max(1, inner * 0.35 * Math.min(1, c.cover[x] / Math.max(1, c.maxCover)) + 1);
        ctx.fillRect(L.plotX + x, y + pad + inner - ch, 1, ch);
      }
    }
  }
  let last = '';
  for (let x = 0; x < c.width; x++) {
    const n = c.count[x];
    if (n <= 0) {
      continue;
    }
    const color = laneColor(s, lane.name, c.dom[x]);
    if (color !== last) {
      ctx.fillStyle = color;
      last = color;
    }
    const bh = Math.max(2, inner * Math.sqrt(n / c.maxCount));
    ctx.fillRect(L.plotX + x, y + pad + inner - bh, 1, bh);
    drawn++;
  }
  return drawn;
}

export interface OverlayScene {
  layout: TimelineLayout;
  window: WindowUs;
  trace: ReplayTrace;
  palette: Palette;
  playheadUs: number;
  unit: TimeUnit;
  selected: Selection | null;
  selectedNode: number | null;
  hover: { x: number; y: number } | null;
  drag: { x0: number; x1: number } | null;
  highlight?: Highlight | null;
}

export function drawOverlay(ctx: Ctx, s: OverlayScene): void {
  const { layout: L, palette: p, window: w } = s;
  ctx.clearRect(0, 0, L.width, L.height);
  if (L.plan) {
    drawActive(ctx, s);
  }
  if (s.highlight) {
    drawHighlight(ctx, { ...s, highlight: s.highlight });
  }
  if (s.selected) {
    const sx0 = L.plotX + xOf(w, L.plotW, s.selected.startUs);
    const sx1 = L.plotX + xOf(w, L.plotW, s.selected.endUs);
    const box = L.lanes.find((b) => b.name === s.selected!.lane);
    if (box && sx1 >= L.plotX && sx0 <= L.plotX + L.plotW) {
      ctx.strokeStyle = p.selection;
      ctx.lineWidth = 2;
      ctx.strokeRect(sx0 - 3, box.y + 0.5, Math.max(6, sx1 - sx0 + 6), box.h - 1);
      ctx.lineWidth = 1;
    }
  }
  if (s.drag) {
    const a = Math.min(s.drag.x0, s.drag.x1);
    const b = Math.max(s.drag.x0, s.drag.x1);
    ctx.fillStyle = p.dragFill;
    ctx.fillRect(a, L.axisH, b - a, L.height - L.axisH);
    ctx.strokeStyle = p.selection;
    ctx.strokeRect(a + 0.5, L.axisH + 0.5, b - a, L.height - L.axisH - 1);
  }
  if (s.hover && s.hover.x >= L.plotX && !s.drag) {
    ctx.fillStyle = p.textDisabled;
    ctx.fillRect(Math.round(s.hover.x), L.axisH, 1, L.height - L.axisH);
  }
}

/** Outlines of the operators active at the playhead: solid while emitting, dashed while consuming. */
function drawActive(ctx: Ctx, s: OverlayScene): void {
  const { layout: L, palette: p, window: w } = s;
  for (const row of L.plan!.rows) {
    const op = s.trace.byNode.get(row.nodeId);
    if (!op) {
      continue;
    }
    const st = stateAt(op, s.playheadUs);
    if (st.status !== 'active') {
      continue;
    }
    const x0 = Math.max(L.plotX, L.plotX + xOf(w, L.plotW, op.startUs));
    const x1 = Math.min(L.plotX + L.plotW, L.plotX + xOf(w, L.plotW, op.endUs));
    ctx.save();
    ctx.strokeStyle = p.operator(op.nodeId);
    ctx.lineWidth = 2;
    if (!st.emitting) {
      ctx.setLineDash([3, 2]);
    }
    ctx.strokeRect(x0 + 1, row.y + 1, Math.max(2, x1 - x0 - 2), Math.max(1, row.h - 2));
    ctx.restore();
  }
}

/** All lanes the base layer may draw, in order, for callers that iterate them. */
export const DRAWN_LANES: readonly EventLaneName[] = EVENT_LANES;

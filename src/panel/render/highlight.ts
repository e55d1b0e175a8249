import { EventLaneName } from '../model/lanes';
import { ReplayTrace, WindowUs } from '../model/trace';
import { xOf } from '../replay/scale';
import { Highlight } from '../replay/store';
import { TimelineLayout } from './layout';
import { Palette, withAlpha } from './palette';

/**
 * Drawing a highlight on the overlay canvas: the span it is about on the
 * axis, its operators' plan rows outlined, and its events marked in their
 * lanes — a strip along the top of the lane and a faint wash over it, so a
 * run of evidence reads as one bracket — with the event stepped to boxed.
 * Events closer than a pixel are merged, so 200 evidence reads cost a
 * handful of rectangles.
 */

type Ctx = CanvasRenderingContext2D;

export interface HighlightScene {
  layout: TimelineLayout;
  window: WindowUs;
  trace: ReplayTrace;
  palette: Palette;
  highlight: Highlight;
}

export function drawHighlight(ctx: Ctx, s: HighlightScene): void {
  const { layout: L, window: w, palette: p, highlight: h } = s;
  const x = (us: number) => L.plotX + xOf(w, L.plotW, us);
  const left = L.plotX;
  const right = L.plotX + L.plotW;
  ctx.save();
  if (h.span) {
    const a = Math.max(left, x(h.span.fromUs));
    const b = Math.min(right, Math.max(x(h.span.toUs), a + 2));
    if (b >= left && a <= right) {
      ctx.fillStyle = p.selection;
      ctx.fillRect(a, L.axisH - 4, Math.max(2, b - a), 3);
    }
  }
  drawNodes(ctx, s, x);
  const byLane = new Map<EventLaneName, Array<{ startUs: number; endUs: number }>>();
  for (const e of h.events) {
    const list = byLane.get(e.lane) ?? [];
    list.push(e);
    byLane.set(e.lane, list);
  }
  for (const box of L.lanes) {
    const events = byLane.get(box.name);
    if (!events) {
      continue;
    }
    for (const [a, b] of runs(events, x, left, right)) {
      ctx.fillStyle = withAlpha(p.selection, 0.16);
      ctx.fillRect(a, box.y, b - a, box.h);
      ctx.fillStyle = p.selection;
      ctx.fillRect(a, box.y, b - a, Math.min(3, box.h / 3));
    }
  }
  const cur = h.current >= 0 ? h.events[h.current] : undefined;
  const box = cur && L.lanes.find((b) => b.name === cur.lane);
  if (cur && box) {
    const a = x(cur.startUs);
    const b = Math.max(x(cur.endUs), a);
    if (b >= left - 4 && a <= right + 4) {
      ctx.strokeStyle = p.flash;
      ctx.lineWidth = 1;
      ctx.strokeRect(a - 4.5, box.y + 0.5, b - a + 9, box.h - 1);
      // a caret above the lane points at it
      ctx.fillStyle = p.selection;
      ctx.beginPath();
      ctx.moveTo(a - 5, box.y);
      ctx.lineTo(a + 5, box.y);
      ctx.lineTo(a, box.y + 6);
      ctx.closePath();
      ctx.fill();
    }
  }
  ctx.restore();
}

/** Merged pixel runs [x0, x1) of the events inside the plot (each at least 4 px wide). */
function runs(
  events: Array<{ startUs: number; endUs: number }>,
  x: (us: number) => number,
  left: number,
  right: number
): Array<[number, number]> {
  const spans = events
    .map((e): [number, number] => {
      const a = x(e.startUs);
      return [a - 2, Math.max(x(e.endUs), a) + 2];
    })
    .filter(([a, b]) => b >= left && a <= right)
    .sort((p, q) => p[0] - q[0]);
  const out: Array<[number, number]> = [];
  for (const [a0, b0] of spans) {
    const a = Math.max(left, a0);
    const b = Math.min(right, b0);
    const last = out[out.length - 1];
    if (last && a <= last[1] + 1) {
      last[1] = Math.max(last[1], b);
    } else {
      out.push([a, b]);
    }
  }
  return out;
}

/** The highlighted operators: a marker in the label gutter and a dashed outline around the bar. */
function drawNodes(ctx: Ctx, s: HighlightScene, x: (us: number) => number): void {
  const { layout: L, palette: p, highlight: h } = s;
  if (!L.plan || h.nodes.length === 0) {
    return;
  }
  for (const row of L.plan.rows) {
    if (!h.nodes.includes(row.nodeId)) {
      continue;
    }
    const op = s.trace.byNode.get(row.nodeId);
    ctx.fillStyle = p.selection;
    ctx.fillRect(0, row.y, 3, row.h);
    if (!op || !op.executed) {
      continue;
    }
    const a = Math.max(L.plotX, x(op.startUs));
    const b = Math.min(L.plotX + L.plotW, x(op.endUs));
    if (b < L.plotX || a > L.plotX + L.plotW) {
      continue;
    }
    ctx.setLineDash([4, 2]);
    ctx.strokeStyle = p.selection;
    ctx.lineWidth = 2;
    ctx.strokeRect(a + 1, row.y + 1, Math.max(2, b - a - 2), Math.max(1, row.h - 2));
    ctx.setLineDash([]);
  }
}

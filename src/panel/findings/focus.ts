import { EventLaneName } from '../model/lanes';
import { LaneData, ReplayTrace, WindowUs } from '../model/trace';
import { reveal } from '../replay/scale';
import { Highlight, ReplayStore, Selection } from '../replay/store';
import { entryOfEvidence, evidenceWindow, stepEvidence } from './evidence';
import { Finding, findingNodes } from './model';

/**
 * What selecting a finding does to the replay: select its operators, zoom
 * to its evidence, highlight the evidence events, and step through them one
 * by one (each step moves the playhead to the event and selects it, so the
 * event view shows its fields). A finding without evidence in time still
 * selects its operators. Works on the store only, so jest drives it.
 */

export interface FocusContext {
  store: ReplayStore;
  trace: ReplayTrace;
  bounds: WindowUs;
  /** The lanes drawn for a window: zoomed-in detail where it has arrived, else the base frames. */
  lanesFor: (w: WindowUs) => Partial<Record<EventLaneName, LaneData>>;
}

const PREFIX = 'finding:';

/** The index of the finding the highlight belongs to, or -1. */
export function focusedFinding(h: Highlight | null | undefined): number {
  return h && h.source.startsWith(PREFIX) ? Number(h.source.slice(PREFIX.length)) : -1;
}

/** The selection of entry i of a lane, as a click on it makes it. */
export function selectionOf(lane: LaneData, i: number, trace: ReplayTrace): Selection {
  const node = lane.node[i];
  return {
    lane: lane.name,
    index: i,
    detail: lane !== trace.lanes[lane.name],
    row: lane.row[i],
    nodeId: node < 0 ? null : node,
    startUs: lane.start[i],
    endUs: lane.end[i],
  };
}

/** Selects finding i: its operators, a window over its evidence, and its first evidence event. */
export function focusFinding(ctx: FocusContext, findings: Finding[], i: number): void {
  const f = findings[i];
  if (!f) {
    return;
  }
  const st = ctx.store.get();
  const nodes = findingNodes(f);
  const events = f.evidence.map((e) => ({ lane: e.lane, startUs: e.t, endUs: e.end }));
  const span = f.span ? { fromUs: f.span.startUs, toUs: f.span.endUs } : null;
  const highlight: Highlight = { source: `${PREFIX}${i}`, nodes, events, current: -1, span };
  const window =
    evidenceWindow(f.evidence, ctx.bounds) ??
    (span ? evidenceWindow([{ t: span.fromUs, end: span.toUs }], ctx.bounds) : null) ??
    st.window;
  ctx.store.set({
    highlight,
    window,
    playing: false,
    selected: null,
    selectedNode: nodes[0] ?? null,
    // a filter on another operator would hide the evidence
    filterNode: st.filterNode !== null && !nodes.includes(st.filterNode) ? null : st.filterNode,
    playheadUs: f.evidence.length ? f.evidence[0].t : span ? span.fromUs : st.playheadUs,
  });
  if (f.evidence.length) {
    stepFindingEvidence(ctx, findings, 1);
  }
}

/**
 * Steps to the next (1) or previous (-1) evidence event of the focused
 * finding; with none focused, focuses the first finding. Returns false when
 * there is nothing to step to.
 */
export function stepFindingEvidence(ctx: FocusContext, findings: Finding[], dir: 1 | -1): boolean {
  const st = ctx.store.get();
  const i = focusedFinding(st.highlight);
  const f = findings[i];
  if (!f || !st.highlight) {
    if (findings.length === 0) {
      return false;
    }
    focusFinding(ctx, findings, 0);
    return true;
  }
  const k = stepEvidence(f.evidence.length, st.highlight.current, dir);
  if (k < 0) {
    return false;
  }
  const ev = f.evidence[k];
  const window = reveal(st.window, ev.t, ctx.bounds);
  const lane = ctx.lanesFor(window)[ev.lane] ?? ctx.trace.lanes[ev.lane];
  const entry = entryOfEvidence(lane, ev);
  const selected = lane && entry >= 0 ? selectionOf(lane, entry, ctx.trace) : null;
  ctx.store.set({
    highlight: { ...st.highlight, current: k },
    window,
    playing: false,
    playheadUs: ev.t,
    selected,
    selectedNode: ev.nodeId ?? st.highlight.nodes[0] ?? st.selectedNode,
  });
  return true;
}

/** Clears a finding's highlight (leaves other highlights alone). */
export function clearFinding(store: ReplayStore): void {
  if (focusedFinding(store.get().highlight) >= 0) {
    store.set({ highlight: null });
  }
}

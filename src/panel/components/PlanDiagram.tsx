import React, { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { css, cx } from '@emotion/css';
import { GrafanaTheme2 } from '@grafana/data';
import { Button, ButtonGroup, useStyles2, useTheme2 } from '@grafana/ui';
import { LaneData, Operator, ReplayTrace } from '../model/trace';
import {
  BOX_H,
  BOX_W,
  DiagramEdge,
  DiagramLayout,
  DiagramStateName,
  abbreviateObject,
  autoCollapse,
  clampZoom,
  collapseAtDepth,
  fitZoom,
  layoutPlan,
  operatorAt,
  revealNode,
  toggleCollapsed,
} from '../replay/planDiagram';
import { formatDuration } from '../replay/scale';
import { ReplayStore } from '../replay/store';
import { Palette } from '../render/palette';
import { compact } from './PlanTree';
import { useReplay, useThrottledReplay } from './useStore';

interface Props {
  trace: ReplayTrace;
  store: ReplayStore;
  palette: Palette;
  /** The read and wait lanes of the current window, to count so far from. */
  reads: LaneData | undefined;
  waits: LaneData | undefined;
  width: number;
  height: number;
}

const CONTROLS_H = 30;
/** Characters of an object name that fit one line of a box at the body-small size. */
const OBJECT_CHARS = 33;
/** A plan opens with at most this many boxes; deeper subtrees start collapsed. */
const AUTO_VISIBLE = 40;
/** How often the boxes' figures follow a moving playhead. */
const FIGURES_MS = 66;

/**
 * The actual plan as the graphical tree DBAs know from SSMS and Plan
 * Explorer (root at the left, rows flowing right to left along arrows sized
 * by actual rows), animated by the playhead: each operator shows its state
 * and its rows, page reads and waits so far. Clicking an operator filters
 * the lanes to it; the selected event's operator is outlined. Wheel or the
 * buttons zoom, dragging pans, and subtrees collapse.
 */
export function PlanDiagram({ trace, store, palette, reads, waits, width, height }: Props) {
  const styles = useStyles2(getStyles);
  const filter = useReplay(store, (s) => s.filterNode);
  const selectedNode = useReplay(store, (s) => s.selected?.nodeId ?? s.selectedNode);
  const [collapsed, setCollapsed] = useState<Set<number>>(() =>
    autoCollapse(trace.operators, trace.byNode, AUTO_VISIBLE)
  );
  const layout = useMemo(() => layoutPlan(trace.operators, trace.byNode, collapsed), [trace, collapsed]);
  const viewH = Math.max(40, height - CONTROLS_H);
  // a small plan fits the view; a big one opens at a size still read without zooming
  const [zoom, setZoom] = useState(() => Math.max(0.75, fitZoom(layout, width, viewH)));
  const scrollRef = useRef<HTMLDivElement>(null);
  // the content point kept under the pointer across a wheel zoom
  const anchor = useRef<{ cx: number; cy: number; px: number; py: number } | null>(null);

  // the selected event's operator is made visible: its ancestors open (state adjusted while
  // rendering, not in an effect), then the view scrolls to it
  const [revealed, setRevealed] = useState<number | null | undefined>(null);
  if (revealed !== selectedNode) {
    setRevealed(selectedNode);
    if (selectedNode !== null && selectedNode !== undefined && trace.byNode.has(selectedNode)) {
      const next = revealNode(collapsed, selectedNode, trace.byNode);
      if (next.size !== collapsed.size) {
        setCollapsed(next);
      }
    }
  }
  useEffect(() => {
    const box = layout.boxes.find((b) => b.nodeId === selectedNode);
    const el = scrollRef.current;
    if (!box || !el) {
      return;
    }
    const x0 = box.x * zoom;
    const y0 = box.y * zoom;
    const x1 = x0 + BOX_W * zoom;
    const y1 = y0 + BOX_H * zoom;
    if (x0 < el.scrollLeft || x1 > el.scrollLeft + el.clientWidth) {
      el.scrollLeft = Math.max(0, x0 - 16);
    }
    if (y0 < el.scrollTop || y1 > el.scrollTop + el.clientHeight) {
      el.scrollTop = Math.max(0, y0 - 16);
    }
  }, [selectedNode, layout, zoom]);

  useLayoutEffect(() => {
    const a = anchor.current;
    const el = scrollRef.current;
    if (a && el) {
      el.scrollLeft = a.cx * zoom - a.px;
      el.scrollTop = a.cy * zoom - a.py;
      anchor.current = null;
    }
  }, [zoom]);

  // wheel zooms around the pointer (a native listener: React's is passive and cannot stop the page scrolling)
  useEffect(() => {
    const el = scrollRef.current;
    if (!el) {
      return;
    }
    const onWheel = (e: WheelEvent) => {
      e.preventDefault();
      const r = el.getBoundingClientRect();
      const px = e.clientX - r.left;
      const py = e.clientY - r.top;
      setZoom((z) => {
        const next = clampZoom(z * (e.deltaY < 0 ? 1.15 : 1 / 1.15));
        anchor.current = { cx: (el.scrollLeft + px) / z, cy: (el.scrollTop + py) / z, px, py };
        return next;
      });
    };
    el.addEventListener('wheel', onWheel, { passive: false });
    return () => el.removeEventListener('wheel', onWheel);
  }, []);

  const drag = useRef<{ x: number; y: number; left: number; top: number } | null>(null);

  // the first commit of the boxes, for the browser performance check (a no-op elsewhere)
  useEffect(() => {
    performance.mark?.('queryreplay:diagram-drawn');
  }, []);

  const onOperator = useCallback(
    (op: Operator) => {
      const next = store.get().filterNode === op.nodeId ? null : op.nodeId;
      store.set({ filterNode: next, selectedNode: next });
    },
    [store]
  );
  const onToggle = useCallback((op: Operator) => setCollapsed((c) => toggleCollapsed(c, op)), []);

  if (trace.operators.length === 0) {
    return <div className={styles.empty}>The frames carry no plan operators.</div>;
  }

  return (
    <div className={styles.wrap} style={{ width, height }} data-testid="qr-plan-diagram">
      <div className={styles.controls} style={{ height: CONTROLS_H }}>
        <ButtonGroup>
          <Button
            size="sm"
            variant="secondary"
            icon="minus"
            aria-label="Zoom the diagram out"
            onClick={() => setZoom((z) => clampZoom(z / 1.25))}
            data-testid="qr-diagram-zoom-out"
          />
          <Button
            size="sm"
            variant="secondary"
            icon="plus"
            aria-label="Zoom the diagram in"
            onClick={() => setZoom((z) => clampZoom(z * 1.25))}
            data-testid="qr-diagram-zoom-in"
          />
          <Button
            size="sm"
            variant="secondary"
            onClick={() => setZoom(fitZoom(layout, width, viewH))}
            data-testid="qr-diagram-fit"
            tooltip="Fit the whole plan into the view"
          >
            Fit
          </Button>
          <Button size="sm" variant="secondary" onClick={() => setZoom(1)} data-testid="qr-diagram-100">
            {Math.round(zoom * 100)}%
          </Button>
        </ButtonGroup>
        <ButtonGroup>
          <Button
            size="sm"
            variant="secondary"
            onClick={() => setCollapsed(new Set())}
            disabled={collapsed.size === 0}
            data-testid="qr-diagram-expand-all"
          >
            Expand all
          </Button>
          <Button
            size="sm"
            variant="secondary"
            onClick={() => setCollapsed(collapseAtDepth(trace.operators, 2))}
            data-testid="qr-diagram-collapse"
            tooltip="Collapse every subtree below the second level"
          >
            Collapse
          </Button>
        </ButtonGroup>
        <span className={styles.count}>
          {layout.boxes.length} of {trace.operators.length} operators
        </span>
      </div>
      <div
        ref={scrollRef}
        className={styles.scroll}
        style={{ height: viewH }}
        data-testid="qr-diagram-view"
        data-zoom={zoom}
        onPointerDown={(e) => {
          const el = scrollRef.current;
          if (el && e.target === e.currentTarget.firstChild) {
            drag.current = { x: e.clientX, y: e.clientY, left: el.scrollLeft, top: el.scrollTop };
          }
        }}
        onPointerMove={(e) => {
          const d = drag.current;
          const el = scrollRef.current;
          if (d && el && e.buttons === 1) {
            el.scrollLeft = d.left - (e.clientX - d.x);
            el.scrollTop = d.top - (e.clientY - d.y);
          }
        }}
        onPointerUp={() => (drag.current = null)}
      >
        <div className={styles.canvas} style={{ width: layout.width * zoom + 16, height: layout.height * zoom + 16 }}>
          <Plane
            trace={trace}
            store={store}
            layout={layout}
            zoom={zoom}
            reads={reads}
            waits={waits}
            palette={palette}
            filter={filter}
            selectedNode={selectedNode ?? null}
            onOperator={onOperator}
            onToggle={onToggle}
          />
        </div>
      </div>
    </div>
  );
}

interface PlaneProps {
  trace: ReplayTrace;
  store: ReplayStore;
  layout: DiagramLayout;
  zoom: number;
  reads: LaneData | undefined;
  waits: LaneData | undefined;
  palette: Palette;
  filter: number | null;
  selectedNode: number | null;
  onOperator: (op: Operator) => void;
  onToggle: (op: Operator) => void;
}

/**
 * The boxes and arrows: the only part that follows the playhead, so a frame
 * of playback re-renders this and the boxes whose figures changed, not the
 * controls around it.
 */
const Plane = memo(function Plane({
  trace,
  store,
  layout,
  zoom,
  reads,
  waits,
  palette,
  filter,
  selectedNode,
  onOperator,
  onToggle,
}: PlaneProps) {
  const styles = useStyles2(getStyles);
  // figures a DBA reads need not change sixty times a second: fifteen keeps the animation and
  // a quarter of the work per played frame (the first move and the last are shown at once)
  const t = useThrottledReplay(store, (s) => s.playheadUs, FIGURES_MS);
  const highlighted = useReplay(store, (s) => s.highlight?.nodes);
  const hl = new Set(highlighted ?? []);
  const activeEdge = (e: DiagramEdge) => {
    const s = operatorAt(trace.byNode.get(e.from)!, t, undefined, undefined).state;
    return s === 'emitting' || s === 'probing';
  };
  return (
    <div
      className={styles.plane}
      style={{ transform: `scale(${zoom})`, width: layout.width, height: layout.height }}
      data-testid="qr-diagram-plane"
      data-playhead={t}
    >
      <svg className={styles.edges} width={layout.width} height={layout.height} aria-hidden="true">
        {layout.edges.map((e) => (
          <Edge key={e.from} edge={e} active={activeEdge(e)} />
        ))}
      </svg>
      {layout.boxes.map((b) => {
        const op = trace.byNode.get(b.nodeId)!;
        const now = operatorAt(op, t, reads, waits);
        return (
          <Box
            key={b.nodeId}
            op={op}
            x={b.x}
            y={b.y}
            hidden={b.hidden}
            state={now.state}
            rows={now.rows === null ? null : compact(now.rows)}
            progress={now.rows === null || !op.actualRows ? null : Math.round((100 * now.rows) / op.actualRows)}
            reads={compact(now.reads)}
            waits={compact(now.waits)}
            color={palette.operator(op.nodeId)}
            filtered={filter === op.nodeId}
            selected={selectedNode === op.nodeId || hl.has(op.nodeId)}
            onClick={onOperator}
            onToggle={onToggle}
          />
        );
      })}
    </div>
  );
});

const Edge = memo(function Edge({ edge, active }: { edge: DiagramEdge; active: boolean }) {
  const styles = useStyles2(getStyles);
  const rows = edge.rows === null ? 'rows unknown' : `${edge.rows.toLocaleString('en-US')} actual rows`;
  return (
    <g data-testid={`qr-diagram-edge-${edge.from}`} data-width={edge.width} data-active={active ? 'true' : 'false'}>
      <title>{`${rows} from operator ${edge.from} to ${edge.to}`}</title>
      <path d={edge.path} className={cx(styles.edge, active && styles.edgeActive)} strokeWidth={edge.width} />
      <path d={edge.head} className={cx(styles.head, active && styles.headActive)} />
    </g>
  );
});

interface BoxProps {
  op: Operator;
  x: number;
  y: number;
  hidden: number;
  state: DiagramStateName;
  rows: string | null;
  progress: number | null;
  reads: string;
  waits: string;
  color: string;
  filtered: boolean;
  selected: boolean;
  onClick: (op: Operator) => void;
  onToggle: (op: Operator) => void;
}

/** One operator; memoised on what it shows, so a playhead move redraws only the boxes whose figures changed. */
const Box = memo(function Box(p: BoxProps) {
  const styles = useStyles2(getStyles);
  const theme = useTheme2();
  const { op } = p;
  const object = op.object ? abbreviateObject(op.object, OBJECT_CHARS) : '';
  const title = describeBox(op);
  const stateColor = STATE_COLOR(theme)[p.state];
  return (
    <div
      role="button"
      tabIndex={0}
      aria-pressed={p.filtered}
      className={cx(
        styles.box,
        p.state === 'not executed' && styles.notExecuted,
        ACTIVE.has(p.state) && styles.active,
        p.selected && styles.selected,
        p.filtered && styles.filtered
      )}
      style={{
        left: p.x,
        top: p.y,
        borderLeftColor: p.color,
        ...(ACTIVE.has(p.state) ? { borderColor: stateColor } : {}),
      }}
      title={title}
      data-testid={`qr-diagram-node-${op.nodeId}`}
      data-state={p.state}
      data-selected={p.selected ? 'true' : 'false'}
      onClick={() => p.onClick(op)}
      onKeyDown={(e) => {
        if (e.key === 'Enter') {
          e.stopPropagation();
          p.onClick(op);
        }
      }}
    >
      <div
        className={cx(styles.name, op.children.length > 0 && styles.nameWithToggle)}
        data-testid={`qr-diagram-name-${op.nodeId}`}
      >
        <span className={styles.weak}>{op.nodeId}</span> {op.name}
      </div>
      <div className={styles.object} data-testid={`qr-diagram-object-${op.nodeId}`}>
        {object || op.logicalOp || '\u00a0'}
      </div>
      <div className={styles.line} data-testid={`qr-diagram-rows-${op.nodeId}`}>
        <span>
          rows {p.rows === null ? '—' : `≈${p.rows}`} / {op.actualRows === null ? '—' : compact(op.actualRows)}
        </span>
        <span className={styles.weak}>est {op.estimatedRows === null ? '—' : compact(op.estimatedRows)}</span>
      </div>
      <div className={styles.line} data-testid={`qr-diagram-reads-${op.nodeId}`}>
        <span>
          logical {op.logicalReads === null ? '—' : compact(op.logicalReads)} · physical{' '}
          {op.physicalReads === null ? '—' : compact(op.physicalReads)}
        </span>
      </div>
      <div className={styles.line} data-testid={`qr-diagram-sofar-${op.nodeId}`}>
        <span title="page reads (physical_page_read events) tied to the operator so far / in all">
          pages {p.reads}/{compact(op.reads)}
        </span>
        <span className={styles.weak} title="waits tied to the operator so far / in all">
          waits {p.waits}/{compact(op.waits)}
        </span>
      </div>
      <div className={styles.line} data-testid={`qr-diagram-time-${op.nodeId}`}>
        <span>{op.executed ? formatDuration(op.durationUs) : 'never ran'}</span>
        <span
          className={styles.state}
          style={{ color: stateColor, borderColor: stateColor }}
          data-testid={`qr-diagram-state-${op.nodeId}`}
        >
          {p.state}
        </span>
      </div>
      <div className={styles.progress} aria-hidden="true">
        <div style={{ width: `${p.progress ?? 0}%`, background: p.color }} />
      </div>
      {op.children.length > 0 && (
        <button
          type="button"
          className={styles.toggle}
          onClick={(e) => {
            e.stopPropagation();
            p.onToggle(op);
          }}
          aria-label={p.hidden > 0 ? `Expand ${p.hidden} operators` : 'Collapse the subtree'}
          title={p.hidden > 0 ? `Expand ${p.hidden} operators` : 'Collapse the subtree'}
          data-testid={`qr-diagram-toggle-${op.nodeId}`}
        >
          {p.hidden > 0 ? `+${p.hidden}` : '−'}
        </button>
      )}
    </div>
  );
});

const ACTIVE = new Set<DiagramStateName>(['consuming', 'building', 'probing', 'emitting']);

const STATE_COLOR = (theme: GrafanaTheme2): Record<DiagramStateName, string> => ({
  'not executed': theme.colors.text.disabled,
  waiting: theme.colors.text.secondary,
  consuming: theme.colors.warning.text,
  building: theme.colors.warning.text,
  probing: theme.colors.info.text,
  emitting: theme.colors.success.text,
  done: theme.colors.text.secondary,
});

/** The box's hover text: every name in full and the plan's figures. */
function describeBox(op: Operator): string {
  const lines = [`${op.nodeId} ${op.name}`];
  if (op.physicalOp !== op.name) {
    lines.push(`physical: ${op.physicalOp}`);
  }
  if (op.logicalOp) {
    lines.push(`logical: ${op.logicalOp}`);
  }
  if (op.object) {
    lines.push(op.object);
  }
  const n = (v: number | null) => (v === null ? '—' : v.toLocaleString('en-US'));
  lines.push(`actual rows ${n(op.actualRows)}, estimated ${n(op.estimatedRows)}`);
  lines.push(
    `logical reads ${n(op.logicalReads)}, physical reads ${n(op.physicalReads)}, page reads traced ${n(op.reads)}`
  );
  if (op.actualElapsedMs !== null) {
    lines.push(`elapsed ${n(op.actualElapsedMs)} ms, CPU ${n(op.actualCpuMs)} ms (plan)`);
  }
  lines.push(`span ${formatDuration(op.durationUs)}, waits ${n(op.waits)} (${formatDuration(op.waitUs)})`);
  if (!op.executed) {
    lines.push(`not executed${op.notExecutedReason ? `: ${op.notExecutedReason}` : ''}`);
  }
  return lines.join('\n');
}

const getStyles = (theme: GrafanaTheme2) => ({
  wrap: css({ display: 'flex', flexDirection: 'column', overflow: 'hidden' }),
  controls: css({ display: 'flex', alignItems: 'center', gap: theme.spacing(1), flex: 'none' }),
  count: css({ color: theme.colors.text.secondary, fontSize: theme.typography.bodySmall.fontSize, marginLeft: 'auto' }),
  scroll: css({
    overflow: 'auto',
    position: 'relative',
    background: theme.colors.background.canvas,
    border: `1px solid ${theme.colors.border.weak}`,
    borderRadius: theme.shape.radius.default,
    cursor: 'grab',
  }),
  canvas: css({ position: 'relative' }),
  plane: css({ position: 'absolute', left: 8, top: 8, transformOrigin: '0 0' }),
  edges: css({ position: 'absolute', left: 0, top: 0, overflow: 'visible' }),
  edge: css({ fill: 'none', stroke: theme.colors.text.secondary, strokeOpacity: 0.55 }),
  edgeActive: css({ stroke: theme.colors.success.main, strokeOpacity: 0.9 }),
  head: css({ fill: theme.colors.text.secondary, fillOpacity: 0.8 }),
  headActive: css({ fill: theme.colors.success.main, fillOpacity: 1 }),
  box: css({
    position: 'absolute',
    width: BOX_W,
    height: BOX_H,
    boxSizing: 'border-box',
    padding: theme.spacing(0.5, 0.75, 0.5, 1),
    background: theme.colors.background.primary,
    border: `1px solid ${theme.colors.border.medium}`,
    borderLeftWidth: 4,
    borderRadius: theme.shape.radius.default,
    fontSize: theme.typography.bodySmall.fontSize,
    lineHeight: '17px',
    color: theme.colors.text.primary,
    cursor: 'pointer',
    overflow: 'hidden',
    fontVariantNumeric: 'tabular-nums',
    '&:hover': { background: theme.colors.action.hover },
    '&:focus-visible': { outline: `2px solid ${theme.colors.primary.border}` },
  }),
  active: css({ boxShadow: theme.shadows.z2, borderWidth: 2, borderLeftWidth: 4 }),
  notExecuted: css({ borderStyle: 'dashed', color: theme.colors.text.disabled, fontStyle: 'italic' }),
  selected: css({ outline: `2px solid ${theme.colors.primary.main}`, outlineOffset: 1 }),
  filtered: css({ background: theme.colors.primary.transparent }),
  name: css({
    fontWeight: theme.typography.fontWeightMedium,
    whiteSpace: 'nowrap',
    overflow: 'hidden',
    textOverflow: 'ellipsis',
  }),
  nameWithToggle: css({ paddingRight: 24 }),
  state: css({
    flex: 'none',
    fontSize: 11,
    border: '1px solid',
    borderRadius: 8,
    padding: '0 5px',
    lineHeight: '15px',
  }),
  object: css({
    color: theme.colors.text.secondary,
    whiteSpace: 'nowrap',
    overflow: 'hidden',
    textOverflow: 'ellipsis',
  }),
  line: css({
    display: 'flex',
    justifyContent: 'space-between',
    alignItems: 'center',
    gap: theme.spacing(0.5),
    whiteSpace: 'nowrap',
    overflow: 'hidden',
  }),
  weak: css({ color: theme.colors.text.secondary }),
  progress: css({
    position: 'absolute',
    left: 0,
    right: 0,
    bottom: 0,
    height: 3,
    background: theme.colors.border.weak,
    '& > div': { height: '100%' },
  }),
  toggle: css({
    position: 'absolute',
    right: 3,
    top: 3,
    minWidth: 20,
    height: 16,
    padding: '0 3px',
    fontSize: 11,
    lineHeight: '14px',
    color: theme.colors.text.primary,
    background: theme.colors.background.secondary,
    border: `1px solid ${theme.colors.border.medium}`,
    borderRadius: theme.shape.radius.default,
    cursor: 'pointer',
  }),
  empty: css({ padding: theme.spacing(1), color: theme.colors.text.secondary }),
});

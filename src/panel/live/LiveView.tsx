import React, { useMemo, useState } from 'react';
import { css } from '@emotion/css';
import { GrafanaTheme2 } from '@grafana/data';
import { Button, useStyles2 } from '@grafana/ui';
import { BOX_H, BOX_W, abbreviateObject, layoutPlan } from '../replay/planDiagram';
import { formatDuration } from '../replay/scale';
import { LiveOperator, LiveSnapshot, diagramOperators, eventsByLane, planParents, playheadUs, rowsText } from './model';

interface Props {
  snap: LiveSnapshot;
  width: number;
  height: number;
  /** Stops the trace (the cancel resource); null where it cannot be cancelled. */
  onCancel: (() => void) | null;
  /** Set while the finished replay is being opened, or why it could not be. */
  finishing: string | null;
}

const HEADER_H = 32;
const LANE_H = 18;
const LABEL_W = 64;

/**
 * The panel while a trace runs (docs/frames.md §3.14): each operator's state
 * and rows so far on the plan diagram, the events so far per lane growing at
 * the right edge, a playhead that follows "now" until the user grabs it,
 * and Cancel. The finished replay replaces it when the trace ends.
 */
export function LiveView({ snap, width, height, onCancel, finishing }: Props) {
  const styles = useStyles2(getStyles);
  const { status } = snap;
  const lanes = useMemo(() => eventsByLane(snap), [snap]);
  const lanesH = Math.min(height / 3, (lanes.length + 1) * LANE_H + 24);
  return (
    <div className={styles.root} style={{ width, height }} data-testid="qr-live" data-seq={status.seq}>
      <div className={styles.header} style={{ height: HEADER_H }}>
        <span className={styles.dot} data-running={status.running && !status.done} />
        <strong data-testid="qr-live-status">{statusText(snap, finishing)}</strong>
        <span className={styles.muted} data-testid="qr-live-events">
          {status.eventsSoFar.toLocaleString('en-US')} events so far
          {snap.mode === 'binned' ? ` (shown per ${formatDuration(snap.bucketUs)} bucket)` : ''}
        </span>
        <span className={styles.fill} />
        {onCancel && !status.done && (
          <Button size="sm" variant="destructive" icon="times" onClick={onCancel} data-testid="qr-live-cancel">
            Cancel
          </Button>
        )}
      </div>
      <LivePlan snap={snap} width={width} height={Math.max(0, height - HEADER_H - lanesH)} />
      <LiveLanes snap={snap} lanes={lanes} width={width} height={lanesH} />
    </div>
  );
}

function statusText(snap: LiveSnapshot, finishing: string | null): string {
  const { status } = snap;
  const t = formatDuration(status.elapsedMs * 1000);
  if (status.error) {
    return `Stopped after ${t}: ${status.error}`;
  }
  if (status.done) {
    return finishing ?? `Finished in ${t}`;
  }
  return status.running ? `Running — ${t}` : 'Starting the trace…';
}

/** The plan diagram with each operator's live progress. */
function LivePlan({ snap, width, height }: { snap: LiveSnapshot; width: number; height: number }) {
  const styles = useStyles2(getStyles);
  const parents = useMemo(() => planParents(snap.planXml), [snap.planXml]);
  const ops = useMemo(() => diagramOperators(snap, parents), [snap, parents]);
  const layout = useMemo(() => layoutPlan(ops, new Map(ops.map((o) => [o.nodeId, o])), new Set()), [ops]);
  const byNode = useMemo(() => new Map(snap.operators.map((o) => [o.nodeId, o])), [snap.operators]);
  const zoom = Math.min(1, width / Math.max(1, layout.width + 16), height / Math.max(1, layout.height + 16));
  if (snap.operators.length === 0) {
    return (
      <div className={styles.empty} style={{ height }} data-testid="qr-live-noplan">
        The operators appear when the query has started.
      </div>
    );
  }
  return (
    <div className={styles.plan} style={{ width, height }}>
      <svg width={layout.width * zoom + 16} height={layout.height * zoom + 16} data-testid="qr-live-plan">
        <g transform={`translate(8,8) scale(${zoom})`}>
          {layout.edges.map((e) => (
            <g key={`${e.from}-${e.to}`} className={styles.edge}>
              <path d={e.path} strokeWidth={e.width} fill="none" />
              <path d={e.head} />
            </g>
          ))}
          {layout.boxes.map((b) => {
            const o = byNode.get(b.nodeId);
            return o ? <LiveBox key={b.nodeId} op={o} x={b.x} y={b.y} /> : null;
          })}
        </g>
      </svg>
    </div>
  );
}

function LiveBox({ op, x, y }: { op: LiveOperator; x: number; y: number }) {
  const styles = useStyles2(getStyles);
  const frac = op.estimatedRows > 0 ? Math.min(1, op.rows / op.estimatedRows) : op.state === 'done' ? 1 : 0;
  return (
    <g
      transform={`translate(${x},${y})`}
      data-testid="qr-live-op"
      data-node={op.nodeId}
      data-state={op.state}
      data-rows={op.rows}
    >
      <rect width={BOX_W} height={BOX_H} rx={4} className={styles.box} data-state={op.state} />
      <text x={8} y={20} className={styles.title}>
        {op.name}
      </text>
      <text x={BOX_W - 8} y={20} textAnchor="end" className={styles.state} data-state={op.state}>
        {op.state}
      </text>
      <text x={8} y={40} className={styles.small}>
        {abbreviateObject(op.object, 34)}
      </text>
      <text x={8} y={62} className={styles.small} data-testid="qr-live-rows">
        {rowsText(op)}
      </text>
      <rect x={8} y={70} width={BOX_W - 16} height={6} className={styles.barBack} />
      <rect x={8} y={70} width={(BOX_W - 16) * frac} height={6} className={styles.bar} />
      <text x={8} y={96} className={styles.small}>
        {`${op.logicalReads.toLocaleString('en-US')} logical reads, ${op.physicalReads.toLocaleString('en-US')} physical reads`}
      </text>
      <text x={8} y={114} className={styles.small}>
        {`elapsed ${formatDuration(op.elapsedMs * 1000)}, CPU ${formatDuration(op.cpuMs * 1000)}`}
      </text>
    </g>
  );
}

/** The events so far per lane: the right edge is now, so the lanes grow there. */
function LiveLanes({
  snap,
  lanes,
  width,
  height,
}: {
  snap: LiveSnapshot;
  lanes: ReturnType<typeof eventsByLane>;
  width: number;
  height: number;
}) {
  const styles = useStyles2(getStyles);
  const [grabbed, setGrabbed] = useState<number | null>(null);
  const lastUs = snap.events.reduce((m, e) => Math.max(m, e.tUs + e.durationUs), 0);
  const spanUs = Math.max(1, snap.status.elapsedMs * 1000, lastUs);
  const plotW = Math.max(1, width - LABEL_W - 8);
  const x = (us: number) => LABEL_W + (us / spanUs) * plotW;
  const head = playheadUs(spanUs, grabbed);
  const maxCount = snap.events.reduce((m, e) => Math.max(m, e.count), 1);
  return (
    <div className={styles.lanes} style={{ width, height }}>
      <svg width={width} height={Math.max(0, height - 24)} data-testid="qr-live-lanes" data-span-us={spanUs}>
        {lanes.map((l, i) => (
          <g
            key={l.lane}
            transform={`translate(0,${i * LANE_H})`}
            data-testid="qr-live-lane"
            data-lane={l.lane}
            data-count={l.count}
          >
            <text x={4} y={13} className={styles.small}>
              {l.lane}
            </text>
            {l.rows.map((e, k) => (
              <rect
                key={k}
                x={x(e.tUs)}
                y={2}
                width={Math.max(1, x(e.tUs + e.durationUs) - x(e.tUs))}
                height={LANE_H - 4}
                className={styles.event}
                opacity={snap.mode === 'binned' ? 0.25 + (0.75 * e.count) / maxCount : 0.9}
              />
            ))}
          </g>
        ))}
        <line x1={x(head)} x2={x(head)} y1={0} y2={lanes.length * LANE_H} className={styles.playhead} />
      </svg>
      <div className={styles.controls}>
        <input
          type="range"
          min={0}
          max={spanUs}
          value={head}
          onChange={(e) => setGrabbed(Number(e.currentTarget.value))}
          className={styles.fill}
          aria-label="playhead"
          data-testid="qr-live-playhead"
          data-following={grabbed === null}
        />
        <span className={styles.muted}>{formatDuration(head)}</span>
        {grabbed !== null && (
          <Button
            size="sm"
            variant="secondary"
            fill="text"
            onClick={() => setGrabbed(null)}
            data-testid="qr-live-follow"
          >
            Follow now
          </Button>
        )}
      </div>
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  root: css({ display: 'flex', flexDirection: 'column', overflow: 'hidden' }),
  header: css({ display: 'flex', alignItems: 'center', gap: 8, padding: theme.spacing(0, 1), flex: 'none' }),
  dot: css({
    width: 8,
    height: 8,
    borderRadius: '50%',
    background: theme.colors.text.disabled,
    '&[data-running="true"]': { background: theme.colors.success.main },
  }),
  muted: css({ color: theme.colors.text.secondary, fontSize: theme.typography.bodySmall.fontSize }),
  fill: css({ flex: 1, minWidth: 0 }),
  empty: css({ display: 'flex', alignItems: 'center', justifyContent: 'center', color: theme.colors.text.secondary }),
  plan: css({ overflow: 'auto', flex: 'none' }),
  edge: css({ stroke: theme.colors.text.secondary, fill: theme.colors.text.secondary }),
  box: css({
    fill: theme.colors.background.secondary,
    stroke: theme.colors.border.medium,
    '&[data-state="running"]': { stroke: theme.colors.success.main, strokeWidth: 2 },
    '&[data-state="done"]': { stroke: theme.colors.text.secondary },
  }),
  title: css({ fill: theme.colors.text.primary, fontSize: 13, fontWeight: 500 }),
  state: css({
    fill: theme.colors.text.secondary,
    fontSize: 11,
    '&[data-state="running"]': { fill: theme.colors.success.text },
  }),
  small: css({ fill: theme.colors.text.secondary, fontSize: 11 }),
  barBack: css({ fill: theme.colors.background.canvas }),
  bar: css({ fill: theme.colors.primary.main }),
  lanes: css({ flex: 'none', display: 'flex', flexDirection: 'column' }),
  event: css({ fill: theme.colors.primary.main }),
  playhead: css({ stroke: theme.colors.warning.main, strokeWidth: 1.5 }),
  controls: css({ display: 'flex', alignItems: 'center', gap: 8, height: 24, padding: theme.spacing(0, 1) }),
});
